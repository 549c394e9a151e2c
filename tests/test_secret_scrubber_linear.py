"""The shared secret rules run in linear time, and provider text is cut before it is scrubbed
(issue 14 item 2: a 40 KB ``a-a-a-...`` error message blocked the loop for 16 s).

The bound is a wall clock, far above the linear cost (tens of ms per 400 KB here) and far below
the quadratic one (minutes to hours at 400 KB), so it neither flakes nor lets a regression pass.
"""

from __future__ import annotations

import json
import time

import pytest

from dsweb_ref._secrets import redact_patterns, rule_hits
from dsweb_ref.providers._deepseek_http import error_detail
from dsweb_ref.providers.deepseek_official import map_sources

SIZE = 400_000
BOUND_S = 5.0
# Each shape made one rule (or the field separator) rescan a run from every start position.
HOSTILE_UNITS = [
    "a-",  # secret-field name prefix
    "x-token-",
    "eyJ-",  # jwt segments
    "api_key=",  # key-field digit lookahead
    "password:",
    "Bearer a",
    "basic aaaaaa===",
    "github_pat_-",
]
HOSTILE_PADDED = ["token", "api_key", "token:", 'token"', "token = [ '"]  # + many spaces


def _elapsed(fn: object, *args: object) -> float:
    start = time.perf_counter()
    fn(*args)  # type: ignore[operator]
    return time.perf_counter() - start


@pytest.mark.parametrize("unit", HOSTILE_UNITS)
def test_secret_rules_stay_linear_on_repeated_hostile_units(unit: str) -> None:
    text = unit * (SIZE // len(unit))
    assert _elapsed(redact_patterns, text, "<x>") < BOUND_S
    assert _elapsed(rule_hits, text) < BOUND_S


@pytest.mark.parametrize("name", HOSTILE_PADDED)
def test_secret_rules_stay_linear_on_a_field_name_before_a_long_blank(name: str) -> None:
    text = name + " " * SIZE + "x"
    assert _elapsed(redact_patterns, text, "<x>") < BOUND_S


def test_linear_rules_still_redact_what_they_did() -> None:
    key = "sk-" + "a1B2" * 6
    jwt = "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJl"
    text = f'x-auth-token: Abc123def456ghi api_key="zz9zz9zz9zz9zz" Bearer abc.def.ghi.jk {key} {jwt}'
    out = redact_patterns(text, "<x>")
    assert out == 'x-auth-token: <x> api_key="<x>" Bearer <x> <x> <x>'
    # Prose keeps its words: no digit, or one character class only.
    prose = "Bearer authentication uses tokens; token: alllowercaseword; api_key: nodigitshere"
    assert redact_patterns(prose, "<x>") == prose


def test_error_detail_of_a_huge_hostile_message_is_fast_and_capped() -> None:
    body = json.dumps({"error": {"message": "a-" * 2_000_000}}).encode()
    start = time.perf_counter()
    detail = error_detail(body)
    assert time.perf_counter() - start < BOUND_S
    assert detail is not None and len(detail) == 500 and detail.endswith("...")


def test_error_detail_still_hides_a_key_that_straddles_the_shown_part() -> None:
    key = "sk-" + "Q9" * 20
    body = json.dumps({"error": "x" * 490 + key + " tail" + "y" * 9000}).encode()
    detail = error_detail(body, (key,))
    assert detail is not None and "Q9" not in detail and detail.endswith("...")


def test_in_band_tool_error_of_a_huge_hostile_code_is_fast_and_capped() -> None:
    data = {
        "content": [
            {
                "type": "web_search_tool_result",
                "content": {"type": "web_search_tool_result_error", "error_code": "a-" * 2_000_000},
            }
        ]
    }
    start = time.perf_counter()
    with pytest.raises(Exception) as info:
        map_sources(data, secrets=("sk-unused-unused-unused",))
    assert time.perf_counter() - start < BOUND_S
    assert str(info.value).endswith('(starts "a-a-a-a-a-a-a-a-a-a-a-a-a-a-a-a-"...)')
