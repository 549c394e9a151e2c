"""A read-only hunt (R, hunter H), its second part. Seed 000: if any search of a batch fails, the tool aborts its
siblings, waits for every started search to settle, and only then answers the failure. A batch that aborted only its
siblings' requests in flight (R-H2) left a sibling waiting for a pacing slot, or in a retry wait, running: the tool
answered the failure and that sibling was sent after. Every batch and pacing row failed no query, and every cancel
row cancelled from the caller (which still reached every sibling), so it was certified. New rows of
search.api.pacing.cancel (a paced 3-query call whose first request is answered 500; since issue 18 a check of its own,
search.api.pacing.failure) and search.api.retry.cancel (a query waiting to retry its 429 when its sibling is answered
401) fail it; the reference passes them.

The wrong readings are made as the hunt made them: web_search.run_all_or_nothing replaced by one that, on the first
failure, cancels and awaits only the pending tasks not inside AccountScheduler._slot (or not inside
MonotonicClock.sleep, a retry wait too), leaving those detached; a caller's cancel still cancels every task."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import fetch, scheduling
from dsweb_ref.providers import _scheduler
from dsweb_ref.tools import web_search

from ._readings import failing_rows, passes_rows, patch_reading
from .test_breaks_end_to_end import example_adapter_module

PACING_CANCEL, RETRY_CANCEL = "search.api.pacing.cancel", "search.api.retry.cancel"
PACING_FAILURE = "search.api.pacing.failure"
(FAILED_PACED,) = (c.name for c in scheduling.PACING_FAILURE_CASES if "fails" in c.params)
(FAILED_SIBLING,) = (c.name for c in scheduling.RETRY_CANCEL_CASES if "sibling_fails" in c.params)


# The hunt's run_all_or_nothing, as the example adapter's pacing-failure-spares-slots break has it: on the first
# failure it cancels and awaits only the pending tasks not in ``spared`` (those are left running, detached); a caller's
# cancel cancels every task.
_sparing = example_adapter_module().sparing


def _spare_slot_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hunt test 9: tasks inside AccountScheduler._slot (waiting for a pacing slot) are spared."""
    queued: set[asyncio.Task[Any]] = set()
    original = _scheduler.AccountScheduler._slot

    async def slot(self: _scheduler.AccountScheduler, *args: Any, **kwargs: Any) -> object | None:
        task = asyncio.current_task()
        assert task is not None
        queued.add(task)
        try:
            return await original(self, *args, **kwargs)
        finally:
            queued.discard(task)

    monkeypatch.setattr(_scheduler.AccountScheduler, "_slot", slot)
    monkeypatch.setattr(web_search, "run_all_or_nothing", _sparing(queued))


def _spare_every_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hunt test 10: tasks inside MonotonicClock.sleep (a slot wait or a retry wait) are spared."""
    waiting: set[asyncio.Task[Any]] = set()

    async def sleep(self: _scheduler.MonotonicClock, seconds: float) -> None:
        task = asyncio.current_task()
        assert task is not None
        waiting.add(task)
        try:
            await asyncio.sleep(seconds)
        finally:
            waiting.discard(task)

    monkeypatch.setattr(_scheduler.MonotonicClock, "sleep", sleep)
    monkeypatch.setattr(web_search, "run_all_or_nothing", _sparing(waiting))


@pytest.mark.parametrize(("table", "check", "row"), [("PACING_FAILURE_CASES", PACING_FAILURE, FAILED_PACED),
                                                     ("RETRY_CANCEL_CASES", RETRY_CANCEL, FAILED_SIBLING)])
def test_the_reference_passes_the_failed_batch_rows(
    table: str, check: str, row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    passes_rows(scheduling, table, check, (row,), monkeypatch)


def test_a_failure_sparing_slot_waits_fails_exactly_the_paced_failure_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: R-H2 (hunt test 9), a failing batch aborts its siblings' requests in flight only: siblings waiting
    # for a pacing slot are left running and sent at their slots, after the call answered the failure
    _spare_slot_waits(monkeypatch)
    assert failing_rows(scheduling, "PACING_FAILURE_CASES", PACING_FAILURE, monkeypatch) == {FAILED_PACED}
    assert failing_rows(scheduling, "PACING_CANCEL_CASES", PACING_CANCEL, monkeypatch) == set()


def test_a_failure_sparing_every_wait_fails_exactly_the_failure_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: R-H2 (hunt test 10), as above, and a sibling in its Retry-After wait spared too: its retry is sent
    # after the call answered the failure
    _spare_every_wait(monkeypatch)
    assert failing_rows(scheduling, "PACING_FAILURE_CASES", PACING_FAILURE, monkeypatch) == {FAILED_PACED}
    assert failing_rows(scheduling, "RETRY_CANCEL_CASES", RETRY_CANCEL, monkeypatch) == {FAILED_SIBLING}


# F3 (R-H2's Fetch part): Fetch API waits deaf to a cancel, waited out and then the cancel re-raised.
FETCH_CANCEL = "fetch.cancel.quiescence"
(FETCH_WAIT,) = (c.name for c in fetch.FETCH_CANCEL if "retry_after" in c.params)
(FETCH_SLOT,) = (c.name for c in fetch.FETCH_CANCEL if "qps" in c.params)
# The hunt's wrong waits (its tests 7 and 8): for the Fetch API, the sleep shielded, waited out after a cancel.
DEAF_RETRY_WAIT = ("if api == 'fetch':\n"
                   "            t = asyncio.ensure_future(clock.sleep(wait))\n"
                   "            try:\n"
                   "                await asyncio.shield(t)\n"
                   "            except asyncio.CancelledError:\n"
                   "                await t\n"
                   "                raise\n"
                   "        else:\n"
                   "            await clock.sleep(wait)")
_I = " " * 16
DEAF_SLOT_WAIT = ("if api == 'fetch':\n"
                  + _I + "    t = asyncio.ensure_future(self._clock.sleep(wait))\n"
                  + _I + "    try:\n"
                  + _I + "        await asyncio.shield(t)\n"
                  + _I + "    except asyncio.CancelledError:\n"
                  + _I + "        await t\n"
                  + _I + "        raise\n"
                  + _I + "else:\n"
                  + _I + "    await self._clock.sleep(wait)")


def test_the_reference_passes_the_fetch_wait_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(fetch, "FETCH_CANCEL", FETCH_CANCEL, (FETCH_WAIT, FETCH_SLOT), monkeypatch)


def test_a_fetch_retry_wait_deaf_to_a_cancel_fails_exactly_the_retry_wait_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: R-H2 (hunt test 7), the Fetch API's retry wait shielded: a cancel answered only once it ended
    patch_reading(_scheduler.AccountScheduler, "run", "await clock.sleep(wait)", DEAF_RETRY_WAIT, monkeypatch)
    assert failing_rows(fetch, "FETCH_CANCEL", FETCH_CANCEL, monkeypatch) == {FETCH_WAIT}


def test_a_fetch_slot_wait_deaf_to_a_cancel_fails_exactly_the_slot_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: R-H2 (hunt test 8), the Fetch API's pacing slot wait shielded: a cancel answered only once the slot
    # came (the slot kept till then)
    patch_reading(_scheduler.AccountScheduler, "_slot", "await self._clock.sleep(wait)", DEAF_SLOT_WAIT, monkeypatch)
    assert failing_rows(fetch, "FETCH_CANCEL", FETCH_CANCEL, monkeypatch) == {FETCH_SLOT}


def _fetch_policy(monkeypatch: pytest.MonkeyPatch, **changes: Any) -> None:
    """The Fetch API's retry policy changed as ``changes`` say (the Search API's kept)."""
    of = _scheduler.Policy.of.__func__  # type: ignore[attr-defined]

    def fetch_only(cls: type[_scheduler.Policy], conf: Any, api: str) -> _scheduler.Policy:
        policy = of(cls, conf, api)
        return dataclasses.replace(policy, **changes) if api == "fetch" else policy

    monkeypatch.setattr(_scheduler.Policy, "of", classmethod(fetch_only))


@pytest.mark.parametrize("changes", [{"retries": 0}, {"max_wait_s": 1.5}], ids=["never-retried", "own-cap"])
def test_a_fetch_api_never_retried_or_capped_below_the_wait_passes_the_retry_wait_row(
    changes: dict[str, float], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # open (a review found both failed): whether the Fetch API is retried at all is open, and so is a cap of the
    # target's own ending the retries when a Retry-After is longer: the call answers the 429 before the cancel
    _fetch_policy(monkeypatch, **changes)
    passes_rows(fetch, "FETCH_CANCEL", FETCH_CANCEL, (FETCH_WAIT,), monkeypatch)


def test_a_fetch_retry_sent_before_the_cancel_reached_it_passes_the_retry_wait_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # open (a review found it failed): a Fetch API Retry-After not read (open), the target's own wait ending just as
    # the cancel is sent, and the cancel read 30 ms later (an adapter on a loaded runner): its retry went out before
    # the cancel reached it, so it answers the retried fetch
    monkeypatch.setattr(_scheduler, "retry_after_seconds", lambda headers, wall_now: None)
    monkeypatch.setattr(_scheduler.AccountScheduler, "backoff", lambda self, retry, cap: 0.32)
    cancel = targets._TaskCall.cancel

    async def late_cancel(self: Any) -> None:
        await asyncio.sleep(0.03)
        await cancel(self)

    monkeypatch.setattr(targets._TaskCall, "cancel", late_cancel)
    passes_rows(fetch, "FETCH_CANCEL", FETCH_CANCEL, (FETCH_WAIT,), monkeypatch)
