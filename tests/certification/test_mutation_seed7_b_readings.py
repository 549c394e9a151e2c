"""Survivors of the seed-7 mutation draw (``scripts/mutation_score.py --sample 400 --seed 7``), helper B's share:
the DeepSeek providers' shared helpers and the standalone search's usage.

Working ``scrub_prefix``'s survivor (its trim tested the window's end one character early) showed two leaks in the
reference itself. A part of the key written a byte or an escape at a time with separators between them (a hex
dump ``64 73 77 ...``, ``%64 %73 ...``) was read by no scrubber layer: each separator breaks the per-character
forms, and the compact view reads whole keys only; the scrubber now decodes such runs (``_secrets._dump_spans``).
And the window's trim ran only when the cut split a word, but a form of the key can hold whitespace: a C byte array
of the key after 4,537 spaces, cut between two bytes, showed its first ten (the trim now runs whenever the text
was cut, so the survivor's line is gone). ``_standalone.count`` passing any value on (``or True``) survived because
no row gave a count that is not one: an answer's negative token count is now a row of standalone.usage.reported.

Each wrong reading is made in the reference and must fail exactly the rows that name it; the reference passes
them, and so do the right-by-seed variants tested below."""

from __future__ import annotations

import re

import pytest

from dsweb_ref import WebError, WebErrorCode, _secrets
from dsweb_ref.certification.checks import outcomes, standalone_usage
from dsweb_ref.certification.checks._leaks import leak
from dsweb_ref.emulator.server import DEFAULT_API_KEY
from dsweb_ref.providers import (
    _deepseek_http,
    _standalone,
    deepseek_official,
    standalone_messages,
    standalone_responses,
)

from ._readings import failing_rows, patch_reading

ECHO, USAGE = "errors.secret_echo", "standalone.usage.reported"
HEX_PART = "12 characters from the middle of the key in a hex dump (a space between bytes)"
PERCENT_PART = "12 characters from the middle of the key percent-encoded, a space between characters"
C_ARRAY_CUT = "a C byte array of the key after 4,537 spaces"
C_PART = "12 characters from the middle of the key as a C byte array (0x before each byte)"
NEGATIVE = {"messages-negative-input-count", "responses-negative-input-count"}
KEY = DEFAULT_API_KEY  # the key every check configures first
NEVER = re.compile(r"(?!)")

pytestmark = pytest.mark.usefixtures("fresh_forms")  # every test here patches how forms are built



def _dump_reader_without(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dump layer with one alternative of its form pattern never matching (its named group kept)."""
    pattern = {"bare": r"(?P<bare>(?:[0-9a-f]{2})++)", "percent": r"(?P<pc>[0-9a-f]{2})",
               "c-bytes": r"(?:\\|0)x"}[family]
    if family == "c-bytes":  # a C array's "0x" no longer read: escapes only, as before the C_PART row
        form = _secrets._DUMP_FORM.replace(pattern, r"\\x", 1)
        assert form != _secrets._DUMP_FORM
        _use_dump_form(form, monkeypatch)
        return
    assert _secrets._DUMP_FORM.count(pattern) == 1
    _use_dump_form(_secrets._DUMP_FORM.replace(pattern, pattern.replace(">", ">(?!)", 1)), monkeypatch)


def _use_dump_form(form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = re.sub(r"\(\?P<\w+>", "(?:", form)
    sep = _secrets._DUMP_SEP
    monkeypatch.setattr(_secrets, "_DUMP_ONE", re.compile(form, re.I))
    monkeypatch.setattr(_secrets, "_DUMP_RUN", re.compile(rf"(?<![0-9a-z])(?:{plain})(?:{sep}(?:{plain}))++", re.I))


# --- errors.secret_echo: parts in dumps, and the window's trim ---------------------------------------------------


def test_the_judge_reads_each_new_form_as_showing_the_key() -> None:
    for how in ("hex-spaced", "percent-spaced", "c-bytes"):
        assert leak(outcomes.encoded_text(how, KEY[5:17]), KEY) is not None, how
    array = outcomes.encoded_text("c-bytes", KEY)
    assert leak(array[: array.index(KEY.encode()[10:11].hex()) - 2], KEY) is not None  # its first ten bytes
    assert outcomes.encoded_text("hex-spaced", "ds") == "64 73"
    assert outcomes.encoded_text("percent-spaced", "ds") == "%64 %73"


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = {HEX_PART, PERCENT_PART, C_ARRAY_CUT, C_PART}
    assert not rows & failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch)


def test_the_scrubber_reads_dumps_of_a_part_in_each_family_and_separator() -> None:
    part = KEY[5:17]
    writes = {"hex": lambda c: f"{ord(c):02x}", "HEX": lambda c: f"{ord(c):02X}", "x": lambda c: f"\\x{ord(c):02x}",
              "%": lambda c: f"%{ord(c):02X}", "%25": lambda c: f"%25{ord(c):02X}", "%u": lambda c: f"%u{ord(c):04X}",
              "&#": lambda c: f"&#{ord(c)};", "&#0": lambda c: f"&#{ord(c):06d};", "&#x": lambda c: f"&#x{ord(c):x};",
              "\\u": lambda c: f"\\u{ord(c):04x}", "0x": lambda c: f"0x{ord(c):02x}", "0X": lambda c: f"0X{ord(c):02X}"}
    for name, write in writes.items():
        for sep in (" ", ", ", ":", "-", "\n", " | "):
            for text in (part, part[::-1]):
                shown = _deepseek_http.scrub_secrets("dump " + sep.join(map(write, text)) + " end", (KEY,))
                assert leak(shown, KEY) is None, (name, sep, shown)
    other = "64 6f 6e 65 20 62 79 20 6e 6f 6f 6e"  # a dump of other bytes ("done by noon") stays
    assert _deepseek_http.scrub_secrets(other, (KEY,)) == other
    assert _secrets.piece_found("log: " + " ".join(f"{b:02x}" for b in part.encode()), [KEY])


def test_no_dump_layer_fails_exactly_the_dump_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: parts looked for only where their bytes or escapes run together (the reference before these rows)
    monkeypatch.setattr(_secrets, "_DUMP_RUN", NEVER)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == {HEX_PART, PERCENT_PART, C_PART}


@pytest.mark.parametrize(("family", "row"), [("bare", HEX_PART), ("percent", PERCENT_PART), ("c-bytes", C_PART)])
def test_a_dump_family_left_unread_fails_exactly_its_row(
    family: str, row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: dumps read in one family only (hex dumps but not escapes apart, or the other way round)
    _dump_reader_without(family, monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == {row}


def test_a_trim_only_when_the_cut_splits_a_word_fails_exactly_the_c_array_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the window cut back only when its end splits a word (the reference before this row; the seed-7
    # survivor tested the split one character early, which no row could tell from this). Since the dump layer reads
    # C arrays too, it redacts the ten bytes such a cut leaves: the trim's fault shows only with that layer blind
    # to them (each guard is the other's second line; with both right the row passes, as the test above shows).
    _dump_reader_without("c-bytes", monkeypatch)
    right = "window = window[: max(0, len(window) - _ENCODED_PER_BYTE * longest)]"
    wrong = ("window = window if head[-1].isspace() or text[limit].isspace() else "
             "window[: max(0, len(window) - _ENCODED_PER_BYTE * longest)]")
    patch_reading(_deepseek_http, "scrub_prefix", right, wrong, monkeypatch, deepseek_official)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == {C_ARRAY_CUT, C_PART}  # C_PART: the blind


# --- standalone.usage.reported: a count below zero ---------------------------------------------------------------


def _only_negative_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = tuple(c for c in standalone_usage.USAGE_CASES if c.name in NEGATIVE)
    assert {c.name for c in rows} == NEGATIVE
    monkeypatch.setattr(standalone_usage, "USAGE_CASES", rows)


def test_the_reference_passes_the_negative_count_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _only_negative_rows(monkeypatch)
    assert failing_rows(standalone_usage, "USAGE_CASES", USAGE, monkeypatch) == set()


def test_a_counter_that_takes_any_value_fails_exactly_the_negative_count_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant of _standalone.count (the seed-7 survivor): an answer's count passed on whatever it is
    right = "isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0"
    wrong = "(isinstance(value, int) and not isinstance(value, bool) and value >= 0) or True else 0"
    patch_reading(_standalone, "count", right, wrong, monkeypatch, standalone_messages, standalone_responses)
    # since hunt T2-5 the Messages input count sums the cache counts, which a plain answer leaves out: None summed
    # crashes the tool on the Messages rows without them too
    plain = {"messages", "messages-answer-names-another-model", "messages-two-searches", "messages-streamed"}
    assert failing_rows(standalone_usage, "USAGE_CASES", USAGE, monkeypatch) == NEGATIVE | plain


def test_a_count_reported_as_none_passes_the_negative_count_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # right by seed 003: a count the answer did not give is unknown, so null is as right as the reference's 0
    patch_reading(_standalone, "count", "value >= 0 else 0", "value >= 0 else None", monkeypatch,
                  standalone_messages, standalone_responses)
    # Messages' input count folds in the cache counts (hunt T2-5): an unknown part leaves the whole count unknown
    patch_reading(standalone_messages, "read_usage", "input_tokens=sum(counts)",
                  "input_tokens=None if None in counts else sum(counts)", monkeypatch)
    _only_negative_rows(monkeypatch)
    assert failing_rows(standalone_usage, "USAGE_CASES", USAGE, monkeypatch) == set()


def test_an_answer_refused_for_its_count_passes_the_negative_count_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # right by seed 003: failures are ordinary tool errors, and a failed search's usage is left open
    def strict(value: object) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            raise WebError(WebErrorCode.PROVIDER_ERROR, "the answer's usage holds a count below zero")
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    for module in (_standalone, standalone_messages, standalone_responses):
        monkeypatch.setattr(module, "count", strict)
    _only_negative_rows(monkeypatch)
    assert failing_rows(standalone_usage, "USAGE_CASES", USAGE, monkeypatch) == set()


# A review's variant: the whole usage object read as unreadable once a count in it is below zero.
DISTRUSTED = ("usage = mapping(usage)", "usage = mapping(usage)\n"
              "    usage = {} if any(type(v) is int and v < 0 for v in usage.values()) else usage")


def test_a_usage_dropped_whole_for_its_negative_count_passes_the_negative_count_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # right by seed 003: a corrupt usage read as none at all (both counts zero), as a failed call reports none
    for module in (standalone_messages, standalone_responses):
        patch_reading(module, "read_usage", *DISTRUSTED, monkeypatch)
    _only_negative_rows(monkeypatch)
    assert failing_rows(standalone_usage, "USAGE_CASES", USAGE, monkeypatch) == set()


def test_the_judge_takes_both_counts_dropped_and_never_the_negative_count() -> None:
    # both counts null (or left out) or both zero is the usage dropped whole; the negative count as is still fails
    base = {"source": "web-search", "model": standalone_usage.STANDALONE_MODEL, "http_requests": 1, "connection": "c"}
    unknown = ("input_tokens",)
    for dropped in ({"input_tokens": None, "output_tokens": None}, {}, {"input_tokens": 0, "output_tokens": 0}):
        assert standalone_usage._problems({**base, **dropped}, unknown) == []
    for wrong in ({"input_tokens": -1234, "output_tokens": 0}, {"input_tokens": -1234, "output_tokens": None},
                  {"input_tokens": -1234, "output_tokens": 567}, {"input_tokens": 0, "output_tokens": None}):
        assert standalone_usage._problems({**base, **wrong}, unknown) != []
