"""Rows found by the mutation harness, where a key an upstream echoes went unjudged. errors.secret_echo: six
wrong scrubbers that every other row let pass, each a change of one line in the reference's scrubber
(``dsweb_ref._secrets``) or its quoting window (``scrub_prefix``), each failing exactly the rows that name
it; the judge (``checks/_leaks.py``) reads the forms they echo too (a C byte array, ``0x`` before each byte,
is hex to it). search.messages.tool_error: an in-band error code that is the body of a key of the usual
shape (sk- and hex digits) looks like a plain code, and a tool that names plain codes as they are showed it."""

from __future__ import annotations

import re

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks import outcomes
from dsweb_ref.certification.checks._fakes import HEX_SHAPED_KEY
from dsweb_ref.certification.checks._leaks import leak
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.emulator import Emulator
from dsweb_ref.emulator.server import DEFAULT_API_KEY
from dsweb_ref.providers import _deepseek_http, deepseek_official

from ._readings import failing_rows, patch_reading
from .conftest import run

CHECK = "errors.secret_echo"
PIECE_B64 = "a base64 dump quoting 12 characters from the middle of the key"
C_BYTES = "a C byte array of the key (0x before each byte)"
C_PART = "12 characters from the middle of the key as a C byte array (0x before each byte)"
CUT_HEX = "the key reversed and in hex after 4,576 spaces"
C_ARRAY_CUT = "a C byte array of the key after 4,537 spaces"  # the seed-7 draw's row (test_mutation_seed7_b_readings)
TWICE = {f"the key base64-encoded twice, its inner encoding at byte {n} of an outer group" for n in (1, 2)}
BASE85 = "a base85 dump of the key's header line, the key at byte 3 of a group"
SPELLED_BACKWARDS = "the key spelled out backwards"
FRAGMENTS = "the key backwards in fragments of three characters, spaces between"  # the seed-8 draw's (list A)
TOUCHING = "the key spelled out three times, the last two run together"
KEY = DEFAULT_API_KEY  # the key every check configures first

pytestmark = pytest.mark.usefixtures("fresh_forms")  # every test here patches how forms are built



def test_the_rows_exist_and_the_reference_passes_them(monkeypatch: pytest.MonkeyPatch) -> None:
    names = {case.name for case in outcomes.SECRET_ECHOES}
    rows = {PIECE_B64, C_BYTES, CUT_HEX, SPELLED_BACKWARDS, TOUCHING, *TWICE}
    assert rows <= names
    assert not rows & failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch)


def test_the_judge_reads_a_c_byte_array_as_hex_and_nothing_else_there() -> None:
    array = "{" + ", ".join(f"0x{b:02x}" for b in KEY.encode()) + "}"
    assert (leak(array, KEY) or "").startswith("characters 1-10 of the credential")
    assert (leak(array, KEY) or "").endswith("in hex")
    assert leak(array.replace(", ", ""), KEY) is not None  # no separator between the bytes
    assert leak(array.replace(", ", ",\n    "), KEY) is not None  # one byte a line, indented
    assert leak(array.replace(", ", " ; "), KEY) is not None
    assert leak("0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39", KEY) is None  # other bytes
    assert leak("{" + ", ".join(f"0x{b:02x}" for b in KEY.encode()[:9]) + "}", KEY) is None  # 9 characters


# (the wrong reading: one line of the reference changed, in owner.function, right text to wrong; the rows it fails)
READINGS = {
    "pieces of the key looked for raw and percent-encoded, base64 only over the whole key (the compact needles "
    "find that one), because no base64 pattern is ever built":
        (_secrets, "_any_of", "if ordered else _NEVER", "if ordered and False else _NEVER",
         {PIECE_B64, "a key of six characters, base64-encoded"}),  # a short key's base64 is too short for a needle
    "the outer encoding's core taken from its first group, which mixes in the bytes before it, so base64 of "
    "base64 is found only where the inner text starts a group":  # base85's cores come from _groups too
        (_secrets, "_groups", "first = -(-shift // size)", "first = -(+shift // size)", TWICE | {BASE85}),
    "hex of the key looked for plain, \\x-escaped and x-prefixed, but not 0x-prefixed":
        (_secrets, "_needles", """"".join(f"0x{b:02x}" for b in chunk)""",
         """"XXXX".join(f"0x{b:02x}" for b in chunk)""", {C_BYTES}),
    "the window's last word kept when the cut splits it, though the scrubber cannot recognise a part of the key "
    "in every form":
        (_deepseek_http, "scrub_prefix", "len(window) - _ENCODED_PER_BYTE", "len(window) + _ENCODED_PER_BYTE",
         {CUT_HEX, C_ARRAY_CUT}),
    # From the seed-2 draw:
    "the reversed key looked for only as written whole, its spelled-out (compact) form forward only":
        (_secrets, "_needles", "raw = [secret, secret[::-1],", "raw = [secret, secret[::+1],",
         {SPELLED_BACKWARDS, FRAGMENTS}),
    "matches that touch merged into the slot before the last, so the earlier match stays shown":
        (_secrets, "_merge", "merged[-1] = (merged[-1][0],", "merged[-2] = (merged[-1][0],", {TOUCHING}),
}


@pytest.mark.parametrize("catches", sorted(READINGS))
def test_each_scrubber_reading_fails_exactly_the_rows_that_name_it(
    catches: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner, function, right, wrong, rows = READINGS[catches]
    patch_reading(owner, function, right, wrong, monkeypatch, deepseek_official)  # it imports scrub_prefix
    if rows & {SPELLED_BACKWARDS, TOUCHING}:
        # The pieces' spelled-out layer (_secrets._SPELLED) also redacts these whole-key forms, so the reading of the
        # whole-key layer shows only with it off; the row of a spelled-out part, which needs that layer, fails too.
        monkeypatch.setattr(_secrets, "_SPELLED", re.compile(r"(?!)"))
        rows = rows | {SPELLED_PART}
    if rows & {C_BYTES, C_ARRAY_CUT}:
        # The dump layer (_secrets._DUMP_RUN) reads C byte arrays a part at a time, so it also redacts what these
        # whole-key and window readings leave: the reading shows only with its "0x" form unread, which the row of
        # a C array's part (needing that form) then fails too.
        both, escape = r"(?:\\|0)x", r"\\x"
        monkeypatch.setattr(_secrets, "_DUMP_ONE", re.compile(_secrets._DUMP_FORM.replace(both, escape, 1), re.I))
        monkeypatch.setattr(_secrets, "_DUMP_RUN", re.compile(_secrets._DUMP_RUN.pattern.replace(both, escape), re.I))
        rows = rows | {C_PART}
    assert failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch) == rows

SPELLED_PART = "12 characters from the middle of the key spelled out with spaces between its characters"


def test_the_reference_passes_the_spelled_part_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outcomes, "SECRET_ECHOES", tuple(c for c in outcomes.SECRET_ECHOES if c.name == SPELLED_PART))
    assert failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch) == set()


def test_spelled_out_forms_looked_for_only_of_the_whole_key_fail_exactly_the_spelled_part_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the scrubber before the pieces' spelled-out layer: a part spelled out with spaces shown
    monkeypatch.setattr(_secrets, "_SPELLED", re.compile(r"(?!)"))
    assert failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch) == {SPELLED_PART}


TOOL_ERROR = "search.messages.tool_error"
KEY_BODY_CODE = "a code that is the body of a key of the usual shape"


def test_the_hex_shaped_key_is_of_the_usual_shape_and_its_body_looks_like_a_plain_code() -> None:
    assert HEX_SHAPED_KEY.startswith("sk-") and len(HEX_SHAPED_KEY) == 35
    assert deepseek_official._ERROR_CODE.fullmatch(HEX_SHAPED_KEY.removeprefix("sk-"))


def test_the_reference_passes_the_key_body_code_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert KEY_BODY_CODE in {case.name for case in outcomes.TOOL_ERRORS}
    assert not failing_rows(outcomes, "TOOL_ERRORS", TOOL_ERROR, monkeypatch)


def test_a_plain_looking_code_named_unscrubbed_fails_exactly_the_key_body_code_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a code that fits the plain-code pattern named as is, the scrub consulted only for other codes
    patch_reading(deepseek_official, "_tool_error", "_ERROR_CODE.fullmatch(code) and scrub_secrets",
                  "_ERROR_CODE.fullmatch(code) or scrub_secrets", monkeypatch)
    assert failing_rows(outcomes, "TOOL_ERRORS", TOOL_ERROR, monkeypatch) == {KEY_BODY_CODE}


def test_the_key_body_code_row_fails_when_the_request_never_meets_the_in_band_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a key the emulator refuses gets a 401: still WEB_PROVIDER_ERROR after one request, with no leak, so
    # without the row's look at the request it would pass having tested nothing
    monkeypatch.setattr(Emulator, "accept_api_key", lambda self, key: None)
    monkeypatch.setattr(outcomes, "TOOL_ERRORS", tuple(c for c in outcomes.TOOL_ERRORS if c.name == KEY_BODY_CODE))
    (result,) = run(reference_target(), only=[TOOL_ERROR]).results
    assert result.outcome.value == "failed", result.reason
    assert "never met the in-band error (its credential: invalid)" in result.reason, result.reason
