"""Survivors of the seed-9 mutation draw (``scripts/mutation_score.py --sample 400 --seed 9``), list A, that a new
row now rejects: three misreadings in the scrubber (bare hex pairs of a dumped run read from nothing, the end of a
piece found in such a run taken from the wrong byte, the halves of a long key folded from nothing). Two crash the
scrub, which the other tools' service guard turns into WEB_PROVIDER_ERROR but the standalone search lets out; the
third shows the part of the key the upstream dumped. Each mutant's change is made in the reference and must fail
exactly the row that names it; the reference passes the row, and a right reading beside it passes too."""

from __future__ import annotations

import binascii

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks import standalone
from dsweb_ref.certification.checks._leaks import leak
from dsweb_ref.emulator.server import DEFAULT_API_KEY
from dsweb_ref.providers import _standalone

from ._readings import failing_rows, patch_reading
from ._readings import fails_exactly_shown as _fails_exactly
from ._readings import keep_rows as _keep

PROSE = "standalone.prose.error"
HEADER_DUMP = "http-401-hex-dump-of-the-header-line-cut-into-a-long-key"
C_ARRAY_THEN_WORD = "http-401-c-array-of-part-of-the-key-then-a-hex-word"  # a seed-10 row


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
    # The seed-10 row of a C byte array then a hex word ends its piece by this same index (a piece found at the run's
    # start: IndexError), so it catches this reading too; the table without it must fail this row alone.
    cases = standalone.PROSE_CASES
    monkeypatch.setattr(standalone, "PROSE_CASES", tuple(c for c in cases if c.name != C_ARRAY_THEN_WORD))
    _fails_exactly(standalone, "PROSE_CASES", PROSE, HEADER_DUMP, r"\[(.*?)\] the tool error shows", monkeypatch)
    monkeypatch.setattr(standalone, "PROSE_CASES", tuple(c for c in cases if c.name == C_ARRAY_THEN_WORD))
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == {C_ARRAY_THEN_WORD}


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


# -- standalone.prose.error: the key whole as \U escapes, and uuencoded (the judge now reads both) -----------------

WIDE = "http-401-quoting-the-key-as-wide-escapes"
UU = "http-401-quoting-the-key-uuencoded"


@pytest.mark.usefixtures("fresh_forms")
def test_the_reference_passes_the_wide_and_uu_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(standalone, "PROSE_CASES", (WIDE, UU), monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()


@pytest.mark.usefixtures("fresh_forms")
def test_wide_escapes_joined_with_a_filler_fails_exactly_the_wide_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant's "XXXX".join(...) for the \U form: the compact needle then holds "xxxx" between the
    # characters' escapes, matches no text, and the key written as \U escapes is shown
    right = '"".join(f"u{p:08x}" for p in ordered)'
    patch_reading(_secrets, "_needles", right, '"XXXX"' + right[2:], monkeypatch)
    _fails_exactly(standalone, "PROSE_CASES", PROSE, WIDE, r"\[(.*?)\] the tool error shows", monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_uuencode_groups_sliced_five_characters_wide_fails_exactly_the_uu_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant's _groups(..., 3, 5) for uuencode: the needle is then sliced from the wrong character and
    # runs into the last group, which the byte after the key changes, so the uuencoded key is shown
    right = "_groups(chunk, base64.b64encode, 3, 4)]"
    patch_reading(_secrets, "_needles", right, right.replace("3, 4", "3, 5"), monkeypatch)
    _fails_exactly(standalone, "PROSE_CASES", PROSE, UU, r"\[(.*?)\] the tool error shows", monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_quoting_no_upstream_words_passes_the_wide_and_uu_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the rule: the tool error quotes nothing the upstream said.
    monkeypatch.setattr(_standalone, "error_detail", lambda body, secrets=(): None)
    _keep(standalone, "PROSE_CASES", (WIDE, UU), monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()


def test_the_judge_reads_the_key_as_wide_escapes_and_uuencoded() -> None:
    # The judge's two new readings find the key, and ordinary upper-case text is no uuencoded key.
    key = DEFAULT_API_KEY
    assert leak("bad key: " + "".join(f"\\U{ord(c):08x}" for c in key), key) is not None
    line = binascii.b2a_uu(b"k " + key.encode() + b" x", backtick=True).decode("ascii").strip()
    assert leak(f"dump: begin 644 k {line} end", key) is not None
    assert leak("HTTP/1.1 401 UNAUTHORIZED: THE KEY WAS REFUSED", key) is None
