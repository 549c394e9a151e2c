"""Survivors of the seed-9 mutation draw (``scripts/mutation_score.py --sample 400 --seed 9``), list A, that a new
row now rejects: three misreadings in the scrubber (bare hex pairs of a dumped run read from nothing, the end of a
piece found in such a run taken from the wrong byte, the halves of a long key folded from nothing). Two crash the
scrub, which the other tools' service guard turns into WEB_PROVIDER_ERROR but the standalone search lets out; the
third shows the part of the key the upstream dumped. Each mutant's change is made in the reference and must fail
exactly the row that names it; the reference passes the row, and a right reading beside it passes too."""

from __future__ import annotations

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks import standalone
from dsweb_ref.providers import _standalone

from ._readings import failing_rows, patch_reading
from ._readings import fails_exactly_shown as _fails_exactly
from ._readings import keep_rows as _keep

PROSE = "standalone.prose.error"
HEADER_DUMP = "http-401-hex-dump-of-the-header-line-cut-into-a-long-key"


@pytest.mark.usefixtures("fresh_forms")
def test_the_reference_passes_the_header_dump_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(standalone, "PROSE_CASES", (HEADER_DUMP,), monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()


@pytest.mark.usefixtures("fresh_forms")
def test_bare_hex_pairs_decoded_from_nothing_fails_exactly_the_header_dump_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant's bytes.fromhex(None): a run of bare hex pairs (a hex dump, a space between bytes) makes the
    # scrub raise TypeError, and the standalone search lets the crash out instead of an ordinary tool error
    right = "decoded = bytes.fromhex(bare).decode('latin-1')".replace("'", '"')
    patch_reading(_secrets, "_dump_chars", right, right.replace("(bare)", "(None)"), monkeypatch)
    _fails_exactly(standalone, "PROSE_CASES", PROSE, HEADER_DUMP, None, monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_a_piece_ended_at_the_wrong_byte_fails_exactly_the_header_dump_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant's spans[at - PIECE - 1]: a piece found 11 or more bytes into a run then ends before it
    # starts, so the redaction puts the placeholder in and repeats the text from that earlier byte on, the part of
    # the key included
    right = "spans[at + PIECE - 1][1]"
    patch_reading(_secrets, "_dump_spans", right, right.replace("+ PIECE", "- PIECE"), monkeypatch)
    _fails_exactly(standalone, "PROSE_CASES", PROSE, HEADER_DUMP, r"\[(.*?)\] the tool error shows", monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_the_halves_of_a_long_key_folded_from_nothing_fails_exactly_the_header_dump_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's _fold(None) for each half: a key whose every-other-character halves have 12 letters and
    # digits or more (the row's 67) makes every scrub raise TypeError, let out by the standalone search
    right = "[_compact(_fold(h)) for h in halves]"
    patch_reading(_secrets, "_needles", right, right.replace("_fold(h)", "_fold(None)"), monkeypatch)
    _fails_exactly(standalone, "PROSE_CASES", PROSE, HEADER_DUMP, None, monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_quoting_no_upstream_words_passes_the_header_dump_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the rule: the tool error quotes nothing the upstream said, so no part of the key.
    monkeypatch.setattr(_standalone, "error_detail", lambda body, secrets=(): None)
    _keep(standalone, "PROSE_CASES", (HEADER_DUMP,), monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()
