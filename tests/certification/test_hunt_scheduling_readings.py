"""Outside hunt D (seed 001's opt-in retries and pacing): wrong readings `dsweb certify` still certified. A
501 not retried; one status (408, 429 or 5xx) retried at once while the others wait; a retry after a
Retry-After sent outside the pacer; a retry's slot wait or its request not reached by a cancel; empty
results or a 3xx retried. Each wrong reading is made in the reference and must fail exactly its row."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from dsweb_ref.certification.adapter_protocol import CAPABILITIES
from dsweb_ref.certification.checks import scheduling
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.targets import TargetConfig
from dsweb_ref.providers import _deepseek_http, _scheduler
from dsweb_ref.settings import Settings

from ._readings import failing_rows, patch_reading
from .conftest import outcomes, reference_variant, run

WAITS, NEVER, RETRY_CANCEL = "search.api.retry.waits", "search.api.retry.never", "search.api.retry.cancel"
RATE, PACING_CANCEL = "search.api.pacing.rate", "search.api.pacing.cancel"
PACING_RETRIES, LOWERED = "search.api.pacing.retries", "search.api.pacing.lowered"
EVERY_5XX = "501, then success"
REGISTERED_5XX = "599, then success"
UNREADABLE = "503 with an unreadable Retry-After every time: a wait before each retry"
AT_ONCE_408 = "408 every time: a wait before each retry"
AT_ONCE_429 = "429 without Retry-After every time: a wait before each retry"
AT_ONCE_5XX = "502 every time: a wait before each retry"
PACED_AFTER_RETRY_AFTER = "a 2-query call at 2 QPS, the first answered 429 with Retry-After 0"
SLOT_CANCEL = "cancel a paced retry waiting for its slot at 1 QPS (429, Retry-After 0)"
IN_FLIGHT = "cancel while the retry is in flight (429, Retry-After 0, the retry held unanswered)"
EMPTY, REDIRECT = "empty results", "307 redirect"

NEW_ROWS = {
    ("RETRY_CASES", WAITS): {EVERY_5XX, AT_ONCE_408, AT_ONCE_429, AT_ONCE_5XX},
    ("PACING_RETRY_CASES", PACING_RETRIES): {PACED_AFTER_RETRY_AFTER},
    ("PACING_CANCEL_CASES", PACING_CANCEL): {SLOT_CANCEL},
    ("RETRY_CANCEL_CASES", RETRY_CANCEL): {IN_FLIGHT},
    ("NEVER_CASES", NEVER): {EMPTY, REDIRECT},
}
SLOT_CALL = "ticket = await self._slot(api, policy.qps, deadline) if policy.pacing else None"
BACKOFF = "wait = self.backoff(retry, policy.max_wait_s) if asked is None else asked"


@pytest.mark.parametrize(("table", "check"), sorted(NEW_ROWS))
def test_the_reference_passes_the_new_rows(table: str, check: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = NEW_ROWS[table, check]
    monkeypatch.setattr(scheduling, table, tuple(c for c in getattr(scheduling, table) if c.name in rows))
    assert len(getattr(scheduling, table)) == len(rows)
    assert failing_rows(scheduling, table, check, monkeypatch) == set()


def test_retrying_only_the_usual_5xx_fails_exactly_the_501_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a urllib3-style force-list (500, 502, 503, 504) instead of every 5xx
    patch_reading(_scheduler, "retryable", "or 500 <= status <= 599", "or status in (500, 502, 503, 504)", monkeypatch)
    assert failing_rows(scheduling, "RETRY_CASES", WAITS, monkeypatch) == {EVERY_5XX, REGISTERED_5XX}


def test_retrying_only_the_registered_5xx_fails_exactly_the_599_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: only the statuses HTTP registers (500-508, 510, 511) taken for the class (an outside hunt)
    patch_reading(_scheduler, "retryable", "or 500 <= status <= 599",
                  "or 500 <= status <= 511 and status != 509", monkeypatch)  # fmt: skip
    assert failing_rows(scheduling, "RETRY_CASES", WAITS, monkeypatch) == {REGISTERED_5XX}


@pytest.mark.parametrize(
    ("at_once", "row"),
    [
        ("reply.status == 408", AT_ONCE_408),  # catches: a 408 retried at once, 429 and 5xx backing off
        ("reply.status == 429", AT_ONCE_429),  # catches: a 429 without Retry-After retried at once
        ("reply.status >= 500", AT_ONCE_5XX),  # catches: 5xx retried at once, 408 and 429 backing off
    ],
)
def test_one_status_retried_at_once_fails_exactly_its_row(
    at_once: str, row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: one status of the guide's list retried at once (the second-longest of all waits hid it)
    wrong = f"wait = (0.0 if {at_once} else self.backoff(retry, policy.max_wait_s)) if asked is None else asked"
    patch_reading(_scheduler.AccountScheduler, "run", BACKOFF, wrong, monkeypatch)
    # (the 503s of RETRY_SEQUENCES, run after this table, name no wait either: test_hunt_m_c_readings)
    monkeypatch.setattr(scheduling, "RETRY_SEQUENCES", ())
    also = {UNREADABLE} if row == AT_ONCE_5XX else set()  # that row's 503 names no wait either
    assert failing_rows(scheduling, "RETRY_CASES", WAITS, monkeypatch) == {row, *also}


def test_a_retry_after_a_retry_after_sent_unpaced_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: "the server named the time": a retry after a Retry-After skips the pacer (and is not counted)
    unpaced = SLOT_CALL.replace("if policy.pacing else None", "if policy.pacing and not (retry and asked is not None) "
                                "else object()")
    patch_reading(_scheduler.AccountScheduler, "run", SLOT_CALL, unpaced, monkeypatch)
    # (outside hunt M1's lowered-rate row retries after a Retry-After of 1 s: caught there too)
    (lowered,) = (c.name for c in scheduling.PACING_LOWERED_CASES)
    assert failing_rows(scheduling, "PACING_RETRY_CASES", PACING_RETRIES, monkeypatch) == {PACED_AFTER_RETRY_AFTER}
    assert failing_rows(scheduling, "PACING_LOWERED_CASES", LOWERED, monkeypatch) == {lowered}
    assert failing_rows(scheduling, "PACING_CASES", RATE, monkeypatch) == set()


async def _stubborn_slot(self: _scheduler.AccountScheduler, api: str, qps: float, deadline: float) -> object | None:
    """A slot wait that runs to its slot before a cancel is honoured (the slot it got is then left unused)."""
    wait = asyncio.ensure_future(_scheduler.AccountScheduler._slot(self, api, qps, deadline))
    try:
        return await asyncio.shield(wait)
    except asyncio.CancelledError:
        ticket = await wait
        if ticket is not None:
            self._pacer(api).ended(ticket)
        raise


def test_a_retrys_slot_wait_deaf_to_a_cancel_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: first attempts' slot waits and the Retry-After wait cancellable, a retry's slot wait not
    monkeypatch.setattr(_scheduler.AccountScheduler, "_stubborn_slot", _stubborn_slot, raising=False)
    stubborn = SLOT_CALL.replace("await self._slot(", "await (self._stubborn_slot if retry else self._slot)(")
    patch_reading(_scheduler.AccountScheduler, "run", SLOT_CALL, stubborn, monkeypatch)
    assert failing_rows(scheduling, "PACING_CANCEL_CASES", PACING_CANCEL, monkeypatch) == {SLOT_CANCEL}


def test_a_retry_request_shielded_from_a_cancel_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a cancel that reaches the first attempt only: the retry's request is left to finish
    send = "reply = await self._send(send, remaining, api, ticket)"
    shielded = ("reply = await (asyncio.shield(asyncio.ensure_future(self._send(send, remaining, api, ticket))) "
                "if retry else self._send(send, remaining, api, ticket))")
    patch_reading(_scheduler.AccountScheduler, "run", send, shielded, monkeypatch)
    assert failing_rows(scheduling, "RETRY_CANCEL_CASES", RETRY_CANCEL, monkeypatch) == {IN_FLIGHT}


def test_empty_results_retried_fail_exactly_the_empty_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: an empty answer taken for a transient failure and retried
    right = "not retryable(reply.status)"
    wrong = "not (retryable(reply.status) or reply.body == b'{\"results\": []}')"
    patch_reading(_scheduler.AccountScheduler, "run", right, wrong, monkeypatch)
    assert failing_rows(scheduling, "NEVER_CASES", NEVER, monkeypatch) == {EMPTY}


def test_a_redirect_retried_fails_exactly_the_redirect_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a 3xx handed to the retry loop as a transient status (never followed, but retried)
    patch_reading(_deepseek_http, "_exchange", "if 300 <= response.status_code < 400:", "if False:", monkeypatch)
    patch_reading(_scheduler, "retryable", "return status in (408, 429)",
                  "return 300 <= status < 400 or status in (408, 429)", monkeypatch)
    assert failing_rows(scheduling, "NEVER_CASES", NEVER, monkeypatch) == {REDIRECT}


def test_a_target_that_paces_but_never_retries_passes_the_pacing_checks() -> None:
    """The paced-retry rows configure retries; the pacing checks require only pacing, so a target that
    paces but never retries (it does not declare retry and ignores the key) is not held to them."""
    def never_retries(config: TargetConfig, settings: Settings) -> Settings:
        return replace(settings, deepseek_api=replace(settings.deepseek_api, retries=0))

    # nor evidence-search: the variant builds no evidence tool (test_hunt_t_scheduling_readings runs that row)
    caps = tuple(c for c in CAPABILITIES if c not in ("retry", "evidence-search"))
    only = [RATE, PACING_RETRIES, PACING_CANCEL]
    report = run(reference_variant("no-retries", tweak=never_retries, capabilities=caps), only=only)
    assert outcomes(report) == {RATE: Outcome.PASSED, PACING_RETRIES: Outcome.SKIPPED, PACING_CANCEL: Outcome.PASSED}, \
        report.results


FETCH_NEVER = {"fetch 404", "fetch 403", "fetch 402", "fetch 400", "fetch 409", "fetch 422"}  # the last three: T1-2


def test_the_fetch_api_rows_pass_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduling, "NEVER_CASES", tuple(c for c in scheduling.NEVER_CASES if c.name in FETCH_NEVER))
    assert failing_rows(scheduling, "NEVER_CASES", NEVER, monkeypatch) == set()


def test_retrying_the_fetch_apis_other_4xx_fails_exactly_the_fetch_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: every Fetch API failure taken for a transient one (an outside hunt: its 403 and 404 retried)
    patch_reading(_scheduler.AccountScheduler, "run", "if retry >= policy.retries or not retryable(reply.status):",
                  'if retry >= policy.retries or not (retryable(reply.status) or api == "fetch"):', monkeypatch)
    # the evidence pipeline's page fetches are Fetch API requests too (review R3-F2's rows)
    pages = {c.name for c in scheduling.NEVER_CASES if c.params.get("page")}
    assert failing_rows(scheduling, "NEVER_CASES", NEVER, monkeypatch) == FETCH_NEVER | pages
