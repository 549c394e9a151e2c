"""Survivors of the seed-10 mutation draw (``scripts/mutation_score.py --sample 400 --seed 10``), list A, that a
new row now rejects: four misreadings in the scrubber's mapping from a view it reads back to the text (a dumped run
compared in the case it was written, a folded-view match mapped one character past its end, a dumped piece redacted
short of its last byte, a compact-view match redacted short of its last character). Each mutant's change is made in
the reference and must fail exactly the row that names it; the reference passes the rows."""

from __future__ import annotations

from types import ModuleType

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks import standalone

from ._readings import failing_rows, patch_reading
from ._readings import fails_exactly_shown as _fails_exactly
from ._readings import keep_rows as _keep

PROSE = "standalone.prose.error"
SHOWN = r"\[(.*?)\] the tool error shows"
MIXED_DUMP = "http-401-dumping-part-of-a-mixed-case-key-escape-by-escape"
ZERO_WIDTH_END = "http-401-ending-with-the-key-in-zero-width-spaces"
DUMP_THEN_WORD = "http-401-c-array-of-part-of-the-key-then-a-hex-word"
SPELLED_THEN_BACK = "http-401-spelling-out-the-key-then-percent-u-escapes-backwards"


@pytest.mark.usefixtures("fresh_forms")
def test_the_reference_passes_the_seed10_prose_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(standalone, "PROSE_CASES", (MIXED_DUMP, ZERO_WIDTH_END, DUMP_THEN_WORD, SPELLED_THEN_BACK), monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()


# One row per mutant: (where, function, the right text, the mutant's text, the row it must fail alone, how the reason
# names that row: SHOWN, or None where the mutant crashes the tool and the check's error names no row).
READINGS: dict[str, tuple[object, str, str, str, str, str | None]] = {
    # catches: the mutant's `len(c.lower()) == 1 and False`: a dumped run's characters are no longer lowered, so a
    # part of a key with upper-case letters (the pieces are looked for in lower case) is never found, and shown
    "dumped-run-kept-in-its-own-case": (
        _secrets, "_dump_chars", "chars += [c.lower() if len(c.lower()) == 1 else c for c in decoded]",
        "chars += [c.lower() if len(c.lower()) == 1 and False else c for c in decoded]", MIXED_DUMP, SHOWN,
    ),
    # catches: the mutant's ends[b + 1]: a match in the folded view that ends the text (or one character before its
    # end) is mapped back past the last character, IndexError, which the standalone search lets out (the folded
    # view's mapping: the spelled runs' mapping reads the same words, without the line after it)
    "folded-match-mapped-past-its-end": (
        _secrets.SecretForms, "redact", "ends[b - 1]) for a, b in spans], placeholder)\n        folded = _fold(text)",
        "ends[b + 1]) for a, b in spans], placeholder)\n        folded = _fold(text)", ZERO_WIDTH_END, None,
    ),
    # catches: the mutant's spans[at + PIECE - 2]: the redaction of a piece found in a dumped run stops a byte
    # short, and that byte with the 9 characters the hex word after it writes shows 10 characters of the key
    "dumped-piece-short-of-its-last-byte": (
        _secrets, "_dump_spans", "spans[at + PIECE - 1][1]", "spans[at + PIECE - 2][1]", DUMP_THEN_WORD, SHOWN,
    ),
    # catches: the mutant's where[at + len(needle) - 2]: the whole key found in the compact view (spelled out) is
    # redacted to its last character but one, and that last character with the 9 %u escapes after it (which no
    # per-character form of the scrubber reads) shows 10 characters of the key, backwards
    "compact-match-short-of-its-last-character": (
        _secrets.SecretForms, "_redact_compact", "ends[where[at + len(needle) - 1]]",
        "ends[where[at + len(needle) - 2]]", SPELLED_THEN_BACK, SHOWN,
    ),
}


@pytest.mark.usefixtures("fresh_forms")
@pytest.mark.parametrize("reading", sorted(READINGS))
def test_each_scrubber_reading_fails_exactly_the_row_it_names(reading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    owner, function, right, wrong, row, shown = READINGS[reading]
    assert isinstance(owner, (ModuleType, type))
    patch_reading(owner, function, right, wrong, monkeypatch)
    _fails_exactly(standalone, "PROSE_CASES", PROSE, row, shown, monkeypatch)
