"""Survivors of the seed-6 mutation draw (``scripts/mutation_score.py --sample 400 --seed 6``), the secrets
scrubber's share: wrong readings of a key an upstream echoes inside a quoted JSON dump that no certification row
rejected. JSON ``\\uXXXX`` escapes dropped instead of decoded before full-width letters are folded (a key written
wholly in escaped full-width letters then reads as no text), and JSON line-break escapes (``\\n``) read through
when the key is looked for but kept when its place in the text is worked out (the key found, then left as it
was). Each mutant's change is made in the reference and must fail exactly the row that names it, each row of
the table run alone (the check runs a row on the Search API and on Messages, and its reason names both); the
reference passes both rows, and so does a target that quotes no upstream text at all (the rule leaves quoting
open)."""

from __future__ import annotations

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks import outcomes
from dsweb_ref.certification.checks._leaks import leak
from dsweb_ref.emulator.server import DEFAULT_API_KEY
from dsweb_ref.providers import _deepseek_http, _standalone, deepseek_official

from ._readings import failing_rows, patch_reading

ECHO = "errors.secret_echo"
FULL_WIDTH_JSON = "the key in full-width letters in a quoted JSON dump (each letter a \\uXXXX escape)"
SPELLED_JSON_BREAK = (
    "the key spelled out in a quoted JSON dump, a line-break escape (\\n) in place of one of its spaces"
)
ROWS = (FULL_WIDTH_JSON, SPELLED_JSON_BREAK)
KEY = DEFAULT_API_KEY  # the key every check configures first

pytestmark = pytest.mark.usefixtures("fresh_forms")  # every test here patches how forms are built



def _only_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outcomes, "SECRET_ECHOES", tuple(c for c in outcomes.SECRET_ECHOES if c.name in ROWS))
    assert {c.name for c in outcomes.SECRET_ECHOES} == set(ROWS)


def test_the_judge_reads_both_forms_as_the_key() -> None:
    # The forms as the parsed upstream message reads: the judge must count each as showing the key.
    for how in ("json-full-width", "spaced-json-break"):
        assert leak(outcomes.encoded_text(how, KEY), KEY) is not None, how
    assert outcomes.encoded_text("json-full-width", "ab") == "\\uff41\\uff42"
    assert outcomes.encoded_text("spaced-json-break", "abcd") == "a b\\nc d"


def test_the_reference_passes_both_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _only_rows(monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == set()


def test_a_target_that_quotes_no_upstream_text_passes_both_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the rule: whether and how much of the upstream message is quoted stays open.
    def nothing(body: bytes, secrets: object = ()) -> None:
        return None

    for module in (_deepseek_http, deepseek_official, _standalone):
        monkeypatch.setattr(module, "error_detail", nothing)
    _only_rows(monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == set()


def test_json_escapes_dropped_in_the_folded_view_fail_the_full_width_and_escaped_again_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: _fold dropping each JSON \uXXXX escape instead of decoding it (the mutant: the replacement
    # returns None), so escaped zero-width spaces still vanish but escaped full-width letters vanish too
    patch_reading(_secrets, "_fold", "lambda m: chr(int(m[1], 16))", "lambda m: None", monkeypatch)
    # the escaped-again row (merged after this test was written) loses its escapes the same way
    twice = "a message quoting the key as JSON unicode escapes escaped again"
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == {FULL_WIDTH_JSON, twice}


def test_line_break_escapes_kept_when_mapping_the_compact_view_fail_exactly_the_spelled_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: _redact_compact keeping "\n", "\r" and "\t" escapes in the compact text it maps back (the
    # mutant: the backslash test never true), so a needle found in the compact view is not found again there
    right, wrong = 'if match[0][0] != "\\\\":', 'if match[0][0] != "XX\\\\XX":'
    patch_reading(_secrets.SecretForms, "_redact_compact", right, wrong, monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == {SPELLED_JSON_BREAK}
