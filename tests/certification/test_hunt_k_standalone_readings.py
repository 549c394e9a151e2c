"""An outside hunt (K) over seed 003: a wrong reading dsweb certify passed. The 24 000-byte bound on the encoded
result off by one (a result of 24 001 bytes let through): no row's result landed on 24 001 bytes, so ``<= limit + 1``
in encode_result's measures passed them all. The new row's summary and sources encode to exactly 24 001 bytes.
Each wrong reading is made in the reference and must fail exactly that row; the reference and readings seed 003
leaves open pass it."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import standalone
from dsweb_ref.tools import standalone_search

from ._readings import failing_rows, patch_reading
from .test_hunt_j_standalone_readings import _sources_first

BOUNDED, TABLE = "standalone.result.bounded", "BOUND_CASES"
EDGE = "result-of-24001-bytes"

WHOLE = "if len(data) <= limit:"  # the whole result measured against the bound
PREFIX = "if len(_encode(summary[:middle], kept, True)) <= limit:"  # a cut summary's result measured


def _new_row_fails(monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether the new row, run alone, fails the reference as it is now."""
    monkeypatch.setattr(standalone, TABLE, tuple(c for c in standalone.BOUND_CASES if c.name == EDGE))
    return failing_rows(standalone, TABLE, BOUNDED, monkeypatch) == {EDGE}


def test_the_new_rows_answer_encodes_to_one_byte_over_the_bound() -> None:
    sources = [{"title": t, "url": u} for u, t in standalone.EDGE_SOURCES]
    assert len(standalone_search._encode(standalone.EDGE_SUMMARY, sources, False)) == 24_001
    assert len(standalone.EDGE_SUMMARY) < standalone_search.MAX_SUMMARY_BYTES


def test_the_reference_passes_the_24001_bytes_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not _new_row_fails(monkeypatch)


def test_the_whole_result_let_through_at_24001_bytes_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the whole result kept when it is at most 24 001 bytes (an off-by-one bound)
    patch_reading(standalone_search, "encode_result", WHOLE, "if len(data) <= limit + 1:", monkeypatch)
    assert failing_rows(standalone, TABLE, BOUNDED, monkeypatch) == {EDGE}


def test_a_summary_cut_to_24001_bytes_fails_the_row_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # the whole result measured right, but the summary cut to a result of 24 001 bytes (< limit + 2): the hunt found
    # eight-long-sources already failing it; the new row does too
    patch_reading(standalone_search, "encode_result", PREFIX,
                  "if len(_encode(summary[:middle], kept, True)) < limit + 2:", monkeypatch)
    assert failing_rows(standalone, TABLE, BOUNDED, monkeypatch) == {"eight-long-sources", EDGE}


@pytest.mark.parametrize("variant", ["sources dropped first", "a stricter bound", "titles cut to 300 bytes",
                                     "spaced JSON"])
def test_readings_seed_003_leaves_open_pass_the_24001_bytes_row(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # open: which part is cut first, a bound under 24 000 bytes (cutting at < 24 000: "at most" is a ceiling),
    # a target's own title bound (the result then fits whole), and the JSON's spacing
    if variant == "sources dropped first":
        monkeypatch.setattr(standalone_search, "encode_result", _sources_first)
    elif variant == "a stricter bound":
        patch_reading(standalone_search, "encode_result", WHOLE, "if len(data) < limit:", monkeypatch)
    elif variant == "titles cut to 300 bytes":
        monkeypatch.setattr(standalone_search, "MAX_TITLE_BYTES", 300)
    else:
        patch_reading(standalone_search, "_encode", 'separators=(",", ":")', 'separators=(", ", ": ")', monkeypatch)
    assert not _new_row_fails(monkeypatch)
