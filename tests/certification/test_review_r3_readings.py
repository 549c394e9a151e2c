"""A read-only review (R3) of the rows for hunts T1 and T4 found three wrong readings the suite still certified; the
rows that reject them, in search.api.retry.never, search.api.retry.waits and search.api.pacing.shared. Seed 001: "402
requires funding first, and other 4xx require a changed request"; "Search and Fetch each have an account-wide 5 QPS
limit, independent of model concurrency and shared across that account's API keys". RFC 9110 counts a Retry-After's
delay-seconds "after the response is received".

- F2: with retries on, the evidence pipeline retrying every failure status but 400 and 402 (a deny-list): a Search
  404 or 409 sent three times, a page fetch answered 404 requested again; the evidence rows named 402 and 400 only.
- F3: a 429's Retry-After counted from when the failed request was sent (every other status's from its answer): the
  slow-answer row was a 503.
- F1: the evidence pipeline pacing its Search requests with a scheduler of its own (at the configured rate, not the
  account's pacer web_search uses): the evidence row ran the evidence call alone.

Each wrong reading is made in the reference as the review's build made it in the example adapter and fails exactly
its new rows; the reference passes them; where the seeds leave a neighbour open, it passes."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dsweb_ref.certification.checks import scheduling
from dsweb_ref.providers import _scheduler

from ._readings import fails_exactly, passes_rows, patch_reading
from .test_hunt_t_scheduling_readings import IN_EVIDENCE, RETRYABLE, SENT, SLEPT, _marks_evidence, _tail

NEVER, SHARED, WAITS = "search.api.retry.never", "search.api.pacing.shared", "search.api.retry.waits"
DENIED = ("evidence search 404", "evidence search 409", "evidence page fetch 404")
NEVER_ROWS = (*DENIED, "evidence page fetch 402")
SLOW_429 = "429 answered after 1 s, Retry-After 1 s, then success"
BESIDE = "an evidence call of four queries beside a two-query web_search call, 3 QPS"


def test_the_new_rows_exist() -> None:
    assert set(NEVER_ROWS) <= {c.name for c in scheduling.NEVER_CASES}
    assert SLOW_429 in {c.name for c in scheduling.RETRY_CASES}
    assert BESIDE in {c.name for c in scheduling.PACING_SHARED_CASES}
    # the slow 429 runs in the Retry-After block (started together with the 12 s rows): no extra run time
    slow = next(c for c in scheduling.RETRY_CASES if c.name == SLOW_429)
    assert scheduling._start_order(slow) == 0


# --- F2: the pipeline's retries a deny-list of 400 and 402 ------------------------------------------------------


def test_the_reference_passes_the_new_evidence_never_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(scheduling, "NEVER_CASES", NEVER, NEVER_ROWS, monkeypatch)


def test_a_pipeline_denylist_fails_exactly_its_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the review's build B: with retries on, the pipeline's own requests retried on every failure status but
    # 400 and 402 (its Search 404 and 409, its page fetch's 404); web_search keeps the allow-list
    right = _scheduler.retryable
    _marks_evidence(monkeypatch)
    monkeypatch.setattr(_scheduler, "retryable", lambda status: (status >= 400 and status not in (400, 402))
                        if IN_EVIDENCE.get() else right(status))
    fails_exactly(scheduling, "NEVER_CASES", NEVER, set(DENIED), monkeypatch)


def test_pipeline_fetches_retried_on_any_failure_fail_the_page_fetch_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the pipeline's page fetches retried on any failure status (402 included) while its searches keep
    # the allow-list: only the page-fetch rows see it (before them, retry.never judged no pipeline Fetch request)
    _marks_evidence(monkeypatch)
    monkeypatch.setattr(_scheduler, "IN_EVIDENCE", IN_EVIDENCE, raising=False)
    patch_reading(_scheduler.AccountScheduler, "run", RETRYABLE,
                  "not (reply.status >= 400 if api == 'fetch' and IN_EVIDENCE.get() else retryable(reply.status))",
                  monkeypatch)
    fails_exactly(scheduling, "NEVER_CASES", NEVER, {"evidence page fetch 404", "evidence page fetch 402"},
                  monkeypatch)


# --- F3: a 429's wait counted from the send ----------------------------------------------------------------------


def test_the_reference_waits_from_a_slow_429s_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduling, "RETRY_SEQUENCES", ())
    passes_rows(scheduling, "RETRY_CASES", WAITS, SLOW_429, monkeypatch)


def test_a_429_wait_from_the_send_fails_exactly_the_slow_429_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the review's build F: a 429's Retry-After read as a reset time counted from the send (every other
    # status's from its answer): the 429 answered after 1 s with Retry-After 1 retried at once
    monkeypatch.setattr(scheduling, "RETRY_SEQUENCES", ())
    tail, indent = _tail()
    assert tail.startswith(SENT)
    wrong = f"sent_at = clock.now()\n{indent}{tail}".replace(
        SLEPT, "await clock.sleep(max(0.0, sent_at + wait - clock.now()) if reply.status == 429 else wait)")
    patch_reading(_scheduler.AccountScheduler, "run", tail, wrong, monkeypatch)
    fails_exactly(scheduling, "RETRY_CASES", WAITS, SLOW_429, monkeypatch)


def test_a_longer_wait_after_a_429s_answer_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: how much longer than Retry-After a target waits (no seed bounds it): 0.3 s more
    monkeypatch.setattr(scheduling, "RETRY_SEQUENCES", ())
    patch_reading(_scheduler.AccountScheduler, "run", SLEPT, "await clock.sleep(wait + 0.3)", monkeypatch)
    passes_rows(scheduling, "RETRY_CASES", WAITS, SLOW_429, monkeypatch)


# --- F1: the pipeline's searches paced by a scheduler of its own -------------------------------------------------


def test_the_reference_paces_the_evidence_call_beside_web_search(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(scheduling, "PACING_SHARED_CASES", SHARED, BESIDE, monkeypatch)


def _own_pacer(monkeypatch: pytest.MonkeyPatch, apis: tuple[str, ...]) -> None:
    """The review's build A: the evidence tool's ``apis`` requests run through a scheduler of its own (paced and
    retried at the configured settings, but not the account's pacer web_search uses)."""
    _marks_evidence(monkeypatch)
    right = _scheduler.AccountScheduler.run
    own: dict[int, _scheduler.AccountScheduler] = {}

    async def run(self: _scheduler.AccountScheduler, api: str, *rest: Any) -> Any:
        if IN_EVIDENCE.get() and api in apis and self not in own.values():
            mine = own.setdefault(id(self), _scheduler.AccountScheduler(self._clock, random.Random()))
            return await right(mine, api, *rest)
        return await right(self, api, *rest)

    monkeypatch.setattr(_scheduler.AccountScheduler, "run", run)


def test_a_pipeline_pacer_of_its_own_fails_exactly_the_beside_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the pipeline's four searches paced at 3 QPS by its own scheduler, web_search's two by the account's:
    # alone each keeps the rate, together they exceed it
    _own_pacer(monkeypatch, ("search", "fetch"))
    fails_exactly(scheduling, "PACING_SHARED_CASES", SHARED, BESIDE, monkeypatch)


def test_a_pipeline_fetch_pacer_of_its_own_passes_the_beside_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open here: the pipeline's Fetch requests under pacing are unjudged (the row's queries find nothing, so it
    # fetches no page): its page fetches through a pacer of their own pass
    _own_pacer(monkeypatch, ("fetch",))
    passes_rows(scheduling, "PACING_SHARED_CASES", SHARED, BESIDE, monkeypatch)
