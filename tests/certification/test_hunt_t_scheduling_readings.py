"""Read-only hunts T1 and T4 over seed 001's opt-in retries and pacing found wrong readings the suite certified; the
rows that reject them, in search.api.retry.never, search.api.pacing.shared and fetch.api.pacing.retries (once rows of
search.api.pacing.rate and fetch.api.pacing.rate) and search.api.retry.waits. Seed 001: "402 requires funding first,
and other 4xx require a changed request"; "Search and Fetch each have an account-wide 5 QPS limit, independent of
model concurrency and shared across that account's API keys". RFC 9110 counts a Retry-After's delay-seconds "after
the response is received".

- T1-2: a Fetch API deny-list of 402, 403 and 404 (every other failure status retried: 400, 409, 422 ...), passed by
  retry.never's fetch rows, which named only those three.
- T4-3: with retries on, the evidence pipeline retrying its own Search requests on any failure status (402 and 400
  included) while web_search sends each once: evidence.api_wire judged the pipeline with retries off only.
- T4-2: with pacing on, the evidence pipeline's own Search requests sent outside the account's pacer.
- T1-3: with fetch pacing and retries on, Fetch API retries sent outside the pacer (only a call's first attempt paced).
- T1-4: a Retry-After wait counted from when the failed request was sent, not from its answer: a slow 503 retried at
  once.
- T1-6: the configured pacing rate read as a whole number (every other row's rate is one), in
  search.api.pacing.fraction.

Each wrong reading is made in the reference as the hunt made it (one change to the scheduler or the evidence tool)
and fails exactly its new rows; the reference passes them; where the seeds leave a neighbour open, it passes."""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import inspect
import math
import textwrap
from typing import Any

import pytest

from dsweb_ref.certification.checks import scheduling
from dsweb_ref.providers import _scheduler
from dsweb_ref.tools.evidence_search import EvidenceSearchTool

from ._readings import failing_rows, fails_exactly, passes_rows, patch_reading
from .test_breaks_end_to_end import example_adapter_module

NEVER, RATE, FETCH_RATE, WAITS = (
    "search.api.retry.never", "search.api.pacing.rate", "fetch.api.pacing.rate", "search.api.retry.waits"
)
FETCH_RETRIED, SHARED = "fetch.api.pacing.retries", "search.api.pacing.shared"
FRACTION = "search.api.pacing.fraction"
HALF_QPS = "two one-query calls at 0.5 QPS, the second made 1.2 s after the first started"
TWO_QUERY_HALF_QPS = "a 2-query call at 0.5 QPS"
FETCH_4XX = ("fetch 400", "fetch 409", "fetch 422")
EVIDENCE_NEVER = ("evidence search 402", "evidence search 400")
# the evidence call beside a web_search call (its row alone, once a row of its own, now this one: review R3-F1)
EVIDENCE_PACED = "an evidence call of four queries beside a two-query web_search call, 3 QPS"
FETCH_RETRIES = "two fetches at once, 1 QPS, each first answered 429 with Retry-After 0"
SLOW_503 = "503 answered after 1 s, Retry-After 1 s, then success"
RETRYABLE = "not retryable(reply.status)"

IN_EVIDENCE: contextvars.ContextVar[bool] = contextvars.ContextVar("in_evidence", default=False)


def _marks_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    """The evidence tool's calls run with IN_EVIDENCE set (its searches and fetches, their tasks too)."""
    right = EvidenceSearchTool.execute

    async def execute(self: EvidenceSearchTool, *args: Any, **kwargs: Any) -> Any:
        token = IN_EVIDENCE.set(True)
        try:
            return await right(self, *args, **kwargs)
        finally:
            IN_EVIDENCE.reset(token)

    monkeypatch.setattr(EvidenceSearchTool, "execute", execute)


def _scheduled(monkeypatch: pytest.MonkeyPatch, policy_for: Any) -> None:
    """AccountScheduler.run with its policy replaced by ``policy_for(api, policy)``."""
    right = _scheduler.AccountScheduler.run

    async def run(self: _scheduler.AccountScheduler, api: str, policy: Any, *rest: Any) -> Any:
        return await right(self, api, policy_for(api, policy), *rest)

    monkeypatch.setattr(_scheduler.AccountScheduler, "run", run)


def test_the_new_rows_exist() -> None:
    names = {c.name for c in scheduling.NEVER_CASES}
    assert set(FETCH_4XX) | set(EVIDENCE_NEVER) <= names
    assert EVIDENCE_PACED in {c.name for c in scheduling.PACING_SHARED_CASES}
    assert FETCH_RETRIES in {c.name for c in scheduling.FETCH_PACING_RETRY_CASES}
    assert SLOW_503 in {c.name for c in scheduling.RETRY_CASES}
    assert HALF_QPS in {c.name for c in scheduling.PACING_FRACTION_CASES}


# --- T1-2: a Fetch API deny-list of 402, 403 and 404 -------------------------------------------------------------


def test_the_reference_passes_the_fetch_4xx_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(scheduling, "NEVER_CASES", NEVER, FETCH_4XX, monkeypatch)


def test_a_fetch_denylist_fails_exactly_the_fetch_4xx_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: Fetch API retries decided by a deny-list of the statuses the guide names for Fetch (402 funding, 403
    # crawler policy, 404 no usable content): 400, 409 and 422 retried after a wait; Search keeps the allow-list
    denylist = "not ((reply.status >= 400 and reply.status not in (402, 403, 404)) if api == 'fetch' " \
        "else retryable(reply.status))"
    patch_reading(_scheduler.AccountScheduler, "run", RETRYABLE, denylist, monkeypatch)
    fails_exactly(scheduling, "NEVER_CASES", NEVER, set(FETCH_4XX), monkeypatch)


def test_fetch_api_requests_never_retried_pass_the_fetch_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: whether Fetch API requests are retried at all (the check's rule): a target that never retries them
    patch_reading(_scheduler.AccountScheduler, "run", RETRYABLE,
                  "not (False if api == 'fetch' else retryable(reply.status))", monkeypatch)
    passes_rows(scheduling, "NEVER_CASES", NEVER, tuple(c.name for c in scheduling.NEVER_CASES if "fetch" in c.params),
                monkeypatch)


# --- T4-3: the evidence pipeline retrying any failure with retries on --------------------------------------------


def test_the_reference_passes_the_evidence_never_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(scheduling, "NEVER_CASES", NEVER, EVIDENCE_NEVER, monkeypatch)


def test_evidence_retries_on_any_failure_fail_exactly_the_evidence_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: with retries on, the pipeline's own requests retried on any failure status (hunt T4's
    # evidence-retries-any-failure): its 402 and 400 sent three times, web_search's once
    right = _scheduler.retryable
    _marks_evidence(monkeypatch)
    monkeypatch.setattr(_scheduler, "retryable", lambda status: status >= 400 if IN_EVIDENCE.get() else right(status))
    # review R3-F2's rows (a Search 404 and 409, page fetches answered 404 and 402) see it too
    also = {c.name for c in scheduling.NEVER_CASES if c.params.get("evidence")}
    fails_exactly(scheduling, "NEVER_CASES", NEVER, set(EVIDENCE_NEVER) | also, monkeypatch)


def test_a_pipeline_that_never_retries_passes_the_evidence_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: whether the pipeline's own requests are retried with retries on (a 503 say) is not judged here: one that
    # never retries them sends each failed query and page once (review R3-F2's rows too)
    _marks_evidence(monkeypatch)
    _scheduled(monkeypatch, lambda api, policy: dataclasses.replace(policy, retries=0) if IN_EVIDENCE.get()
               else policy)
    evidence_rows = {c.name for c in scheduling.NEVER_CASES if c.params.get("evidence")}
    assert set(EVIDENCE_NEVER) < evidence_rows
    passes_rows(scheduling, "NEVER_CASES", NEVER, evidence_rows, monkeypatch)


# --- T4-2: the evidence pipeline's searches outside the pacer ----------------------------------------------------


def test_the_reference_paces_the_evidence_call(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(scheduling, "PACING_SHARED_CASES", SHARED, EVIDENCE_PACED, monkeypatch)


def test_unpaced_evidence_searches_fail_exactly_the_evidence_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the pipeline's own Search API requests skipping the account's pacer (hunt T4's evidence-unpaced):
    # its four searches start together while web_search's are paced
    _marks_evidence(monkeypatch)
    _scheduled(monkeypatch, lambda api, policy: dataclasses.replace(policy, pacing=False)
               if IN_EVIDENCE.get() and api == "search" else policy)
    fails_exactly(scheduling, "PACING_SHARED_CASES", SHARED, EVIDENCE_PACED, monkeypatch)


def test_unpaced_evidence_fetches_pass_the_evidence_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open here: the pipeline's Fetch requests under pacing are unjudged (adapter protocol); the row's queries find
    # nothing, so it fetches no page and judges Search requests only
    _marks_evidence(monkeypatch)
    _scheduled(monkeypatch, lambda api, policy: dataclasses.replace(policy, pacing=False)
               if IN_EVIDENCE.get() and api == "fetch" else policy)
    passes_rows(scheduling, "PACING_SHARED_CASES", SHARED, EVIDENCE_PACED, monkeypatch)


# --- T1-3: Fetch API retries outside the pacer -------------------------------------------------------------------


# The hunt's policy is the example adapter's pacing-retries-unpaced one (pacing holds for an operation's first attempt
# only), applied on Fetch only.
FirstPaced = example_adapter_module().FirstPaced


def _counting_fetches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The Fetch API requests each judged window of fetch.api.pacing.retries counted."""
    counted: list[int] = []
    right = scheduling._window_claims

    async def claims(ctx: Any, case: Any, route: str) -> Any:
        out = await right(ctx, case, route)
        counted.append(len(ctx.records(route)))
        return out

    monkeypatch.setattr(scheduling, "_window_claims", claims)
    return counted


def test_the_reference_paces_its_fetch_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _counting_fetches(monkeypatch)
    passes_rows(scheduling, "FETCH_PACING_RETRY_CASES", FETCH_RETRIED, FETCH_RETRIES, monkeypatch)
    assert counted and all(n == 4 for n in counted), counted  # both fetches retried: the row showed its retries


def test_unpaced_fetch_retries_fail_exactly_the_retry_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the pacer taken once per web_fetch operation (hunt T1's fetch-retries-unpaced): a retry due at once
    # (Retry-After 0) sent beside its first attempt
    _scheduled(monkeypatch, lambda api, policy: FirstPaced(policy) if api == "fetch" else policy)
    fails_exactly(scheduling, "FETCH_PACING_RETRY_CASES", FETCH_RETRIED, FETCH_RETRIES, monkeypatch)
    assert failing_rows(scheduling, "FETCH_PACING_CASES", FETCH_RATE, monkeypatch) == set()  # no retry there


def test_fetch_api_requests_never_retried_pass_the_retry_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a target that does not retry Fetch API requests answers each fetch with the 429, one request each
    counted = _counting_fetches(monkeypatch)
    patch_reading(_scheduler.AccountScheduler, "run", RETRYABLE,
                  "not (False if api == 'fetch' else retryable(reply.status))", monkeypatch)
    passes_rows(scheduling, "FETCH_PACING_RETRY_CASES", FETCH_RETRIED, FETCH_RETRIES, monkeypatch)
    assert counted and all(n == 2 for n in counted), counted


# --- T1-4: the Retry-After wait counted from the send ------------------------------------------------------------

SENT = "reply = await self._send(send, remaining, api, ticket)"
SLEPT = "await clock.sleep(wait)"


def _tail() -> tuple[str, str]:
    """AccountScheduler.run's text from its send to its sleep (one span, for one patch), and its indent."""
    source = textwrap.dedent(inspect.getsource(_scheduler.AccountScheduler.run))
    start, end = source.index(SENT), source.index(SLEPT) + len(SLEPT)
    line = source[: start].rsplit("\n", 1)[-1]
    return source[start:end], line


def test_the_reference_waits_from_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduling, "RETRY_SEQUENCES", ())
    passes_rows(scheduling, "RETRY_CASES", WAITS, SLOW_503, monkeypatch)


def test_a_wait_from_the_send_fails_exactly_the_slow_503_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the wait counted from when the failed attempt was sent (hunt T1's wait-from-send): the 503 answered
    # after 1 s with Retry-After 1 retried at once
    monkeypatch.setattr(scheduling, "RETRY_SEQUENCES", ())
    tail, indent = _tail()
    wrong = f"sent_at = clock.now()\n{indent}{tail}".replace(
        SLEPT, "await clock.sleep(max(0.0, sent_at + wait - clock.now()))")
    patch_reading(_scheduler.AccountScheduler, "run", tail, wrong, monkeypatch)
    # review R3-F3's slow 429 row sees it too
    slow_429 = "429 answered after 1 s, Retry-After 1 s, then success"
    fails_exactly(scheduling, "RETRY_CASES", WAITS, {SLOW_503, slow_429}, monkeypatch)


def test_a_longer_wait_after_the_answer_passes_the_slow_503_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: how much longer than Retry-After a target waits (no seed bounds it): 0.3 s more
    monkeypatch.setattr(scheduling, "RETRY_SEQUENCES", ())
    patch_reading(_scheduler.AccountScheduler, "run", SLEPT, "await clock.sleep(wait + 0.3)", monkeypatch)
    passes_rows(scheduling, "RETRY_CASES", WAITS, SLOW_503, monkeypatch)


# --- T1-6: a pacing rate under one request a second read as a whole number ---------------------------------------


def _slot_at(monkeypatch: pytest.MonkeyPatch, rate: Any) -> None:
    """AccountScheduler._slot paced at ``rate(qps)`` instead of the configured rate."""
    right = _scheduler.AccountScheduler._slot

    async def slot(self: _scheduler.AccountScheduler, api: str, qps: float, deadline: float) -> object | None:
        return await right(self, api, rate(qps), deadline)

    monkeypatch.setattr(_scheduler.AccountScheduler, "_slot", slot)


def test_the_reference_spaces_a_fractional_rate_by_its_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(scheduling, "PACING_FRACTION_CASES", FRACTION, (TWO_QUERY_HALF_QPS, HALF_QPS), monkeypatch)


@pytest.mark.parametrize("reading", ["int, at least 1", "rounded up"])
def test_a_rate_read_as_a_whole_number_fails_the_fraction_row(reading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: 0.5 QPS paced at 1 QPS (int() with a floor of one request a second, or math.ceil): starts 1 s apart
    whole = {"int, at least 1": lambda qps: float(max(1, int(qps))), "rounded up": lambda qps: float(math.ceil(qps))}
    _slot_at(monkeypatch, whole[reading])
    fails_exactly(scheduling, "PACING_FRACTION_CASES", FRACTION, {TWO_QUERY_HALF_QPS, HALF_QPS}, monkeypatch)


def test_a_rate_cut_to_zero_as_no_pacing_fails_the_fraction_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: int(0.5) == 0 read as "no pacing": both queries start at once
    _scheduled(monkeypatch, lambda api, policy: dataclasses.replace(policy, pacing=False)
               if int(policy.qps) == 0 else policy)
    fails_exactly(scheduling, "PACING_FRACTION_CASES", FRACTION, {TWO_QUERY_HALF_QPS, HALF_QPS}, monkeypatch)


def test_a_limiter_of_whole_requests_fails_the_fraction_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a limiter whose capacity is the rate (a bucket of 0.5 requests a second): no request ever gets a slot,
    # so the call fails for want of one
    right = _scheduler._Pacer.reserve

    def reserve(self: Any, now: float, interval: float, latest: float) -> float | None:
        return None if 1.0 / interval < 1 else right(self, now, interval, latest)

    monkeypatch.setattr(_scheduler._Pacer, "reserve", reserve)
    fails_exactly(scheduling, "PACING_FRACTION_CASES", FRACTION, {TWO_QUERY_HALF_QPS, HALF_QPS}, monkeypatch)


def test_a_pacer_keeping_a_second_of_history_fails_the_fraction_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (review R7-2): a pacer that forgets a start once it is a second old (right at every whole rate, where no
    # interval is longer): the second call, made 1.2 s after the first start, goes out at once
    right_reserve, right_start = _scheduler._Pacer.reserve, _scheduler._Pacer.start

    def forget(pacer: Any, now: float) -> None:
        if now - pacer._last >= 1.0:
            pacer._last = -math.inf

    def reserve(self: Any, now: float, interval: float, latest: float) -> float | None:
        forget(self, now)
        return right_reserve(self, now, interval, latest)

    def start(self: Any, now: float, interval: float, slot: float) -> Any:
        forget(self, now)
        return right_start(self, now, interval, slot)

    monkeypatch.setattr(_scheduler._Pacer, "reserve", reserve)
    monkeypatch.setattr(_scheduler._Pacer, "start", start)
    fails_exactly(scheduling, "PACING_FRACTION_CASES", FRACTION, HALF_QPS, monkeypatch)
    # right at every whole rate: the rows of search.api.pacing.rate's timed table pass it
    assert failing_rows(scheduling, "PACING_CASES", RATE, monkeypatch) == set()


FETCH_FRACTION = "fetch.api.pacing.fraction"
FETCH_TOGETHER = "two fetches at once at 0.5 QPS"
FETCH_HALF_QPS = "two fetches one after another at 0.5 QPS, the second made 1.2 s after the first started"


def test_the_reference_spaces_fetches_at_a_fractional_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(scheduling, "FETCH_FRACTION_CASES", FETCH_FRACTION, (FETCH_TOGETHER, FETCH_HALF_QPS), monkeypatch)


def test_a_fetch_pacer_reading_a_whole_rate_fails_the_fetch_fraction_row_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (review R7-3): a Fetch API pacer of its own reading the rate as a whole number; Search's is right (the
    # example adapter's fetch-pacing-whole-rate)
    monkeypatch.setattr(_scheduler.AccountScheduler, "_slot", example_adapter_module().slot_at_whole_rate("fetch"))
    fails_exactly(scheduling, "FETCH_FRACTION_CASES", FETCH_FRACTION, {FETCH_TOGETHER, FETCH_HALF_QPS}, monkeypatch)
    assert failing_rows(scheduling, "PACING_FRACTION_CASES", FRACTION, monkeypatch) == set()


def test_a_start_recorded_at_its_answer_fails_the_2_query_fraction_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (review R8-2): under one request a second, a pacer that waits for the last start + 1 / rate but records a
    # start only once its request is answered: requests queued together go out at once; calls one after another are
    # spaced, so the idle row alone passed it
    right_slot, right_send = _scheduler.AccountScheduler._slot, _scheduler.AccountScheduler._send
    answered: dict[str, float] = {}

    async def slot(self: _scheduler.AccountScheduler, api: str, qps: float, deadline: float) -> object | None:
        if qps >= 1:
            return await right_slot(self, api, qps, deadline)
        wait = answered.get(api, -math.inf) + 1.0 / qps - self._clock.now()
        if wait > 0:
            await asyncio.sleep(wait)
        return ("late record", api)

    async def send(self: _scheduler.AccountScheduler, fn: Any, remaining: float, api: str, ticket: Any) -> Any:
        if not (isinstance(ticket, tuple) and ticket[0] == "late record"):
            return await right_send(self, fn, remaining, api, ticket)
        try:
            return await fn(remaining)
        finally:
            answered[api] = self._clock.now()

    monkeypatch.setattr(_scheduler.AccountScheduler, "_slot", slot)
    monkeypatch.setattr(_scheduler.AccountScheduler, "_send", send)
    fails_exactly(scheduling, "PACING_FRACTION_CASES", FRACTION, TWO_QUERY_HALF_QPS, monkeypatch)


def test_a_full_bucket_of_the_whole_rate_fails_in_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (review R8-1): a token bucket holding the whole rate, full at the start (a burst of the rate, then a
    # refill). A re-run right after a caught run met the refill alone and passed; every re-run now rests first.
    adapter = example_adapter_module()
    monkeypatch.setattr(_scheduler.AccountScheduler, "_slot", adapter.bucket_slot)
    monkeypatch.setattr(_scheduler.AccountScheduler, "_send", adapter.bucket_send)
    burst = "two 2-query calls at once, 3 QPS"
    assert burst in failing_rows(scheduling, "PACING_CASES", RATE, monkeypatch)


def test_a_slower_pacer_passes_the_fraction_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: how much slower than the rate a target paces (the rate is a most): 0.5 QPS paced at 0.4, 2.5 s apart
    _slot_at(monkeypatch, lambda qps: qps * 0.8)
    passes_rows(scheduling, "PACING_FRACTION_CASES", FRACTION, (TWO_QUERY_HALF_QPS, HALF_QPS), monkeypatch)
