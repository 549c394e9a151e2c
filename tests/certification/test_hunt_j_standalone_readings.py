"""An outside hunt (J) over seed 003: a wrong reading dsweb certify passed. The 24 000-byte bound on the encoded
result measured in characters of the JSON text: every row before passed it, since the summary's own byte bound
kept a CJK summary far inside it and the long sources were ASCII. With a 12 000-byte CJK summary and eight Thai
titles the result is some 9 700 characters and 28 100 bytes. The wrong reading is made in the reference and must
fail exactly the row that names it; the reference and readings seed 003 leaves open pass it."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import standalone
from dsweb_ref.tools import standalone_search

from ._readings import failing_rows, patch_reading

BOUNDED, TABLE = "standalone.result.bounded", "BOUND_CASES"
THAI_TITLES = "cjk-summary-thai-titles"

# encode_result's three measures of the encoded result against the limit, as the reference has them (one text:
# patch_reading patches a function once)
RIGHT = '''if len(data) <= limit:
        return data.decode("utf-8")
    kept = list(sources)
    while kept and len(_encode("", kept, True)) > limit:
        kept.pop()
    low, high = 0, len(summary)  # the longest prefix length that fits lies in [low, high)
    while low < high:
        middle = (low + high + 1) // 2
        if len(_encode(summary[:middle], kept, True)) <= limit:'''
CHARACTERS = (RIGHT.replace("len(data)", 'len(data.decode("utf-8"))')
              .replace("len(_encode(\"\", kept, True))", 'len(_encode("", kept, True).decode("utf-8"))')
              .replace("len(_encode(summary[:middle], kept, True))",
                       'len(_encode(summary[:middle], kept, True).decode("utf-8"))'))


def _new_row_fails(monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether the new row, run alone, fails the reference as it is now."""
    monkeypatch.setattr(standalone, TABLE, tuple(c for c in standalone.BOUND_CASES if c.name == THAI_TITLES))
    return failing_rows(standalone, TABLE, BOUNDED, monkeypatch) == {THAI_TITLES}


def test_the_reference_passes_the_thai_titles_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert THAI_TITLES in {c.name for c in standalone.BOUND_CASES}
    assert not _new_row_fails(monkeypatch)


def test_the_bound_counted_in_characters_fails_exactly_the_thai_titles_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: len(data.decode("utf-8")) <= limit wherever encode_result measures the encoded result (the hunt's
    # patch): the 28 100 bytes go out as they are, being 9 700 characters
    assert CHARACTERS.count(".decode(\"utf-8\"))") == 3
    patch_reading(standalone_search, "encode_result", RIGHT, CHARACTERS, monkeypatch)
    assert failing_rows(standalone, TABLE, BOUNDED, monkeypatch) == {THAI_TITLES}


REFERENCE_ENCODE = standalone_search.encode_result


def _sources_first(summary: str, sources: list[dict[str, str]], truncated: bool = False,
                   limit: int = standalone_search.MAX_RESULT_BYTES) -> str:
    """Sources dropped from the end while the summary is whole and the result over the bound, then the summary cut."""
    kept = list(sources)
    while kept and len(standalone_search._encode(summary, kept, True)) > limit:
        kept.pop()
    cut = truncated or len(kept) < len(sources)
    return REFERENCE_ENCODE(summary, kept, cut, limit)


@pytest.mark.parametrize("variant", ["sources dropped first", "titles cut to 300 bytes", "no summary bound"])
def test_readings_seed_003_leaves_open_pass_the_thai_titles_row(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # open: which part is cut first (sources from the end, then the summary), a target's own title bound, and
    # the summary's own bound (none at all: only the 24 000-byte result bound cuts it)
    if variant == "sources dropped first":
        monkeypatch.setattr(standalone_search, "encode_result", _sources_first)
    elif variant == "titles cut to 300 bytes":
        monkeypatch.setattr(standalone_search, "MAX_TITLE_BYTES", 300)
    else:
        monkeypatch.setattr(standalone_search, "MAX_SUMMARY_BYTES", 10**9)
    assert not _new_row_fails(monkeypatch)
