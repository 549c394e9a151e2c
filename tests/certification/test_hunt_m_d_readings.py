"""Issue 24, an outside hunt (M) over seed 001: wrong readings dsweb certify passed. A Fetch API 413, 415 or 451
mapped to the web layer's own code for the page (too large, unsupported type, blocked); thinking disabled on the
Messages path only for model names that say DeepSeek; Fetch API failures retried at once when retries are on.
Each wrong reading is made in the reference and must fail exactly the row that names it; the reference passes it.

Judged but not rowed: the Messages request recorded without thinking, or after dispatch (no protocol verb returns
a call's recorded requests, so no check can read the record)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsweb_ref import WebError, WebErrorCode
from dsweb_ref.certification.checks import fetch, search
from dsweb_ref.providers import _deepseek_http, _scheduler, deepseek_official

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import adapter_command, dsweb_certify, json_outcomes, json_report

MAPPING, THINKING, FETCH_WAITS = "fetch.api.mapping", "search.messages.thinking_disabled", "fetch.api.retry.waits"
SPECIFIC = "HTTP 406, 410, 413, 414, 415, 422 and 451"
GATEWAY = "a gateway's model name"
AT_ONCE = fetch.FETCH_RETRY[0].name  # the timed row (hunt P's wire row follows it)
WAIT = "wait = self.backoff(retry, policy.max_wait_s) if asked is None else asked"
FETCH_TABLES = ("MAPPING", "OTHER_SUCCESS", "BOUNDS", "FAILURES", "FALLBACK")
STATUS_LINE = "    status = reply.status\n"


def _only(module: object, keep: str, tables: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """``keep`` alone of ``module``'s ``tables``: the others prove nothing here."""
    for table in tables:
        if table != keep:
            monkeypatch.setattr(module, table, ())


def _specific_code(status: int, code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Fetch API's ``status`` mapped to the web layer's ``code`` (the hunt's patch, one status each)."""
    wrong = (f"{STATUS_LINE}    if status == {status} and label == \"DeepSeek Fetch API\":\n"
             f"        return WebError(WebErrorCode.{code}, f\"{{label}}: HTTP {status}\")\n")
    patch_reading(_deepseek_http, "api_status_error", STATUS_LINE, wrong, monkeypatch)


def test_the_reference_passes_the_failure_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(fetch, "FAILURES", FETCH_TABLES, monkeypatch)
    assert SPECIFIC in {case.name for case in fetch.FAILURES}
    assert failing_rows(fetch, "FAILURES", MAPPING, monkeypatch) == set()


@pytest.mark.parametrize("status,code", [(413, "FETCH_TOO_LARGE"), (415, "UNSUPPORTED_CONTENT_TYPE"),
                                         (451, "BLOCKED_URL")])
def test_a_fetch_status_read_as_a_specific_diagnosis_fails_exactly_its_row(
    status: int, code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: 413 -> WEB_FETCH_TOO_LARGE, 415 -> WEB_UNSUPPORTED_CONTENT_TYPE, 451 -> WEB_BLOCKED_URL, where seed
    # 001 makes every non-success status a retrieval failure rather than a specific target diagnosis
    _specific_code(status, code, monkeypatch)
    _only(fetch, "FAILURES", FETCH_TABLES, monkeypatch)
    fails_exactly(fetch, "FAILURES", MAPPING, SPECIFIC, monkeypatch)


def test_the_reference_passes_the_thinking_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(search, "THINKING", THINKING, monkeypatch) == set()


def test_thinking_sent_only_for_deepseek_model_names_fails_exactly_the_gateway_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: thinking taken for a DeepSeek extension and left out for a gateway's claude-... model (the hunt's
    # patch, as written), where seed 001's Messages path sends it explicitly
    right = '"thinking": {"type": "disabled"},\n    }\n'
    wrong = '}\n    if "deepseek" in str(conf.model).lower():\n        payload["thinking"] = {"type": "disabled"}\n'
    patch_reading(deepseek_official.DeepSeekMessagesSearch, "search", right, wrong, monkeypatch)
    fails_exactly(search, "THINKING", THINKING, GATEWAY, monkeypatch)


def test_the_reference_passes_the_fetch_retry_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(fetch, "FETCH_RETRY", FETCH_WAITS, monkeypatch) == set()


def test_fetch_api_retries_sent_at_once_fail_exactly_the_fetch_retry_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the guide's wait kept for Search, so a Fetch API 408, 429 or 5xx is re-sent at once (the hunt's patch)
    wrong = f"wait = 0.0 if api == \"fetch\" else ({WAIT.removeprefix('wait = ')})"
    patch_reading(_scheduler.AccountScheduler, "run", WAIT, wrong, monkeypatch)
    fails_exactly(fetch, "FETCH_RETRY", FETCH_WAITS, AT_ONCE, monkeypatch)


@pytest.mark.parametrize("right,variant", [
    # Fetch API requests never retried: whether they are is open
    ("if retry >= policy.retries or", "if api == \"fetch\" or retry >= policy.retries or"),
    # a fixed 60 ms Fetch wait that reads no Retry-After: how long a wait is, and Retry-After on Fetch, are open
    (WAIT, f"wait = 0.06 if api == \"fetch\" else ({WAIT.removeprefix('wait = ')})"),
])
def test_right_by_seed_fetch_retry_variants_pass_the_fetch_retry_row(
    right: str, variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_reading(_scheduler.AccountScheduler, "run", right, variant, monkeypatch)
    assert failing_rows(fetch, "FETCH_RETRY", FETCH_WAITS, monkeypatch) == set()


def test_a_full_jitter_backoff_through_the_example_adapter_is_certified(tmp_path: Path) -> None:
    # a backoff drawn from 0 up to its ceiling on both APIs (the example adapter's variant): a wait may be very
    # short, but six of them are not all at once, and the check is judged on the second-longest
    path = tmp_path / "report.json"
    code = dsweb_certify("--adapter", adapter_command("--variant", "retry-full-jitter"), "--only", FETCH_WAITS,
                         "--json", str(path))
    assert code == 0 and json_outcomes(json_report(path)) == {FETCH_WAITS: "passed"}


# From the read-only review of hunt M's rows: a target refusing the gateway's model name at the call (no seed makes it
# accept any model name) failed the row "expected a result"; refused at configure it was already skipped.
def test_a_model_name_refused_at_the_call_passes_the_thinking_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    searched = deepseek_official.DeepSeekMessagesSearch.search

    async def refusing(self: deepseek_official.DeepSeekMessagesSearch, request: Any, ctx: Any) -> Any:
        if self._settings().deepseek_messages.model.startswith("claude"):
            raise WebError(WebErrorCode.CONFIG_INVALID, "this deployment serves DeepSeek models only")
        return await searched(self, request, ctx)

    monkeypatch.setattr(deepseek_official.DeepSeekMessagesSearch, "search", refusing)
    assert failing_rows(search, "THINKING", THINKING, monkeypatch) == set()


# From the diff review: the judge took the second-longest of all six waits together, so a target retrying 408 and 503
# at once but waiting on 429 passed. Each status is now judged on its own longest wait.
def test_one_status_retried_at_once_is_caught_and_a_stall_never_fails() -> None:
    from dsweb_ref.certification.calibration import Load

    quiet = Load(0.0, 0.0)
    row = fetch.FETCH_RETRY[0]  # the timed row, whose faults the waits come from
    mixed = [(row, "HTTP 408", [0.002, 0.003]), (row, "HTTP 429", [1.0, 1.0]), (row, "HTTP 503", [0.25, 0.25])]
    problem, _ = fetch._fetch_retry_problem(mixed, quiet)
    assert problem is not None and "HTTP 408" in problem[0] and problem[0].startswith(row.name)
    waited = [(row, "HTTP 408", [0.1, 0.2]), (row, "HTTP 429", [1.0, 1.0]), (row, "HTTP 503", [0.06, 0.3])]
    assert fetch._fetch_retry_problem(waited, quiet) == (None, "")
    # a stall lengthens a wait only: one at-once retry stalled past the bar leaves its status judged as waiting
    stalled = [(row, "HTTP 408", [0.002, 0.9]), (row, "HTTP 429", [1.0, 1.0]), (row, "HTTP 503", [0.3, 0.3])]
    assert fetch._fetch_retry_problem(stalled, quiet)[0] is None
    assert fetch._fetch_retry_problem([(row, "HTTP 408", []), (row, "HTTP 503", [])], quiet) == (None, "")  # none
