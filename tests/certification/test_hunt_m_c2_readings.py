"""Outside hunt M1 (issue 24, item 6), A6 and A10: a retried Search API request sent to another URL (an attempt counter
in the query string), or rebuilt without ori_question (a leaner second try), certified: the retry.wire rows sent no
prompt and compared no URL. The row "a retried request's URL and ori_question" repeats both; each reading fails it."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers import _deepseek_http, deepseek_search_api

from ._readings import patch_reading
from .conftest import run

WIRE = "search.api.retry.wire"
SAME = "a retried request's URL and ori_question"
SEND = "return await provider._post(base, key, conf.timeout_s, url, body, headers, remaining_s=remaining_s)"
COUNT = 'send.__dict__["n"] = send.__dict__.get("n", 0) + 1\n        '


def _wire() -> tuple[str, str]:
    (result,) = run(reference_target(), only=[WIRE]).results
    return result.outcome.value, result.reason


def test_the_reference_passes_the_retry_wire_rows() -> None:
    assert _wire()[0] == "passed"


def test_a_retry_with_an_attempt_counter_fails_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the retry sent to .../search?attempt=2
    wrong = COUNT + SEND.replace("url, body", '(url if send.__dict__["n"] == 1 else f"{url}?attempt=2"), body')
    patch_reading(_deepseek_http, "call_tools_api", SEND, wrong, monkeypatch, deepseek_search_api)
    value, reason = _wire()
    assert value == "failed" and reason.startswith(SAME), reason


def test_a_retry_without_ori_question_fails_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the retry body rebuilt without ori_question
    lean = 'encode_json({k: v for k, v in payload.items() if k != "ori_question"})'
    wrong = COUNT + SEND.replace("url, body", f'url, (body if send.__dict__["n"] == 1 else {lean})')
    patch_reading(_deepseek_http, "call_tools_api", SEND, wrong, monkeypatch, deepseek_search_api)
    value, reason = _wire()
    assert value == "failed" and reason.startswith(SAME), reason
