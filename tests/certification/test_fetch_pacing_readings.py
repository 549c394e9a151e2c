"""Fetch API pacing (capability fetch-pacing, checks fetch.api.pacing.rate and .retries): a wrong reading two outside
hunts found unjudged (N-A3 first), made in the reference; it must fail the check's row, and the reference passes.

Seed 001: "Search and Fetch each have an account-wide 5 QPS limit, independent of model concurrency and shared across
that account's API keys." The protocol's ``pacing`` capability is defined for Search API requests, and every pacing
check sent Search requests only, so a pacer that never paced a Fetch API request certified. Changing what ``pacing``
means would fail adapters certified today, so ``fetch-pacing`` is a capability of its own: configure's ``pacing_qps``
paces Fetch API requests too, the same rate per API."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from dsweb_ref.certification.calibration import NOT_SHOWN
from dsweb_ref.certification.checks import scheduling
from dsweb_ref.certification.checks._base import CheckContext
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.emulator import Delay, RateLimited
from dsweb_ref.emulator.server import Emulator
from dsweb_ref.providers import _scheduler
from dsweb_ref.providers._scheduler import Policy, _Pacer
from dsweb_ref.settings import Settings

from ._readings import failing_rows, patch_reading
from .conftest import run

CHECK, TABLE = "fetch.api.pacing.rate", "FETCH_PACING_CASES"
RETRY_CHECK, RETRY_TABLE = "fetch.api.pacing.retries", "FETCH_PACING_RETRY_CASES"
# the timed rows: at once, one after another, and (hunt T1-3, a check of its own) at once with each first answered 429
AT_ONCE, ONE_BY_ONE = (c.name for c in scheduling.FETCH_PACING_CASES if "judge" not in c.params)
(RETRIED,) = (c.name for c in scheduling.FETCH_PACING_RETRY_CASES)

# The reference's one policy for both APIs, and the reading that paces Search API requests only.
PACED = "return cls(pacing=conf.pacing, qps=qps,"
SEARCH_ONLY = 'return cls(pacing=conf.pacing and api == "search", qps=qps,'


def test_the_reference_passes_the_fetch_pacing_check(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(scheduling, TABLE, CHECK, monkeypatch) == set()
    assert failing_rows(scheduling, RETRY_TABLE, RETRY_CHECK, monkeypatch) == set()


def test_a_pacer_for_search_api_requests_only_fails_the_fetch_pacing_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: N-A3, Fetch API requests never paced (every web_fetch started at once) while Search API ones are
    patch_reading(Policy, "of", PACED, SEARCH_ONLY, monkeypatch)
    paced = Settings().updated({"deepseek_api.pacing": True}).deepseek_api
    assert Policy.of(paced, "search").pacing and not Policy.of(paced, "fetch").pacing
    assert failing_rows(scheduling, TABLE, CHECK, monkeypatch) == {AT_ONCE, ONE_BY_ONE}
    assert failing_rows(scheduling, RETRY_TABLE, RETRY_CHECK, monkeypatch) == {RETRIED}
    # the Search API's pacing check sends Search requests only: it passes this reading, as it did before
    (result,) = run(reference_target(), only=["search.api.pacing.rate"]).results
    assert result.outcome.value == "passed", result.reason


def test_a_fetch_pacer_keeping_its_first_rate_fails_the_first_row_after_the_faster_wire_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (review R6-1): the Fetch API pacer's interval set on its first paced use, so a rate configured lower
    # later never applies to Fetch API requests. The retry row at 1 QPS, once last in this check, caught it; split off
    # (fetch.api.pacing.retries, whose pacer first meets 1 QPS) it did not, until the 5 QPS wire row went first.
    right = _scheduler.AccountScheduler._slot

    async def kept(self: _scheduler.AccountScheduler, api: str, qps: float, deadline: float) -> object | None:
        if api == "fetch":
            qps = self.__dict__.setdefault("first_fetch_rate", qps)
        return await right(self, api, qps, deadline)

    monkeypatch.setattr(_scheduler.AccountScheduler, "_slot", kept)
    (result,) = run(reference_target(), only=[CHECK]).results
    assert result.outcome.value == "failed" and result.reason.startswith(f"{AT_ONCE}: "), result.reason


# The reading a review found passing both pacing checks: the pacer forgets its last start whenever no slot is held, so
# it spaces only requests queued together (each slot reserved while the pacer is idle is "now").
RESERVE = "slot = max(now, self._last + interval)"
IDLE_RESET = "if not self._held:\n            self._last = -math.inf\n        " + RESERVE


def test_a_pacer_forgetting_its_last_start_while_idle_fails_exactly_the_one_by_one_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (a review): calls and fetches made one after another going out unpaced; so do retries sent once the
    # first attempts were answered (no slot held then: hunt T1-3's row)
    patch_reading(_Pacer, "reserve", RESERVE, IDLE_RESET, monkeypatch)
    assert failing_rows(scheduling, TABLE, CHECK, monkeypatch) == {ONE_BY_ONE}
    assert failing_rows(scheduling, RETRY_TABLE, RETRY_CHECK, monkeypatch) == {RETRIED}
    searches = {c.name for c in scheduling.PACING_CASES if "sequential" in c.params}
    assert failing_rows(scheduling, "PACING_CASES", "search.api.pacing.rate", monkeypatch) == searches


# catches (a review): slow answers passing the idle-forgetting pacer silently. With every Fetch API answer 0.6 s
# late (more than the 0.5 s interval), a right pacer has no call to hold back either, so the one-by-one row shows
# nothing: it is re-run and noted "not shown", never counted as met.
def test_slow_answers_leave_the_one_by_one_row_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    right_fresh = CheckContext.fresh

    def slow_fresh(self: CheckContext) -> None:
        right_fresh(self)
        self.emu.inject("fetch", Delay(0.6), times=None)

    patch_reading(_Pacer, "reserve", RESERVE, IDLE_RESET, monkeypatch)
    monkeypatch.setattr(CheckContext, "fresh", slow_fresh)
    monkeypatch.setattr(scheduling, TABLE, tuple(c for c in scheduling.FETCH_PACING_CASES if c.name == ONE_BY_ONE))
    (result,) = run(reference_target(), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason
    assert result.details[CHECK]["verdict"].startswith(f"{NOT_SHOWN}: {ONE_BY_ONE}"), result.details
    assert "no pacer had to wait" in result.details[CHECK]["verdict"]


# catches (a fresh-clone CI): a loaded runner passing the idle-forgetting pacer on the retry row. That pacer sends the
# last retry at once, and the row sees it only when its 429 came back less than an interval after its first attempt
# started. Here the second page's 429 comes back 1.1 s late (more than the 1 s interval): the run shows nothing about
# that retry, so it is re-run and noted "not shown", never counted as met.
def test_a_late_429_leaves_the_retry_row_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    right_fresh = CheckContext.fresh

    def slow_fresh(self: CheckContext) -> None:
        right_fresh(self)
        emu = self.emu

        def inject(route: Any, fault: Any, *, times: int | None = 1, when: Any = None) -> Any:
            late = isinstance(when, functools.partial) and "berth-notices" in when.args[0]
            if late and isinstance(fault, RateLimited):
                fault = Delay(1.1, then=fault)
            return Emulator.inject(emu, route, fault, times=times, when=when)

        monkeypatch.setattr(emu, "inject", inject)

    patch_reading(_Pacer, "reserve", RESERVE, IDLE_RESET, monkeypatch)
    monkeypatch.setattr(CheckContext, "fresh", slow_fresh)
    (result,) = run(reference_target(), only=[RETRY_CHECK]).results
    assert result.outcome.value == "passed", result.reason
    verdict = result.details[RETRY_CHECK]["verdict"]
    assert verdict.startswith(f"{NOT_SHOWN}: {RETRIED}"), result.details
    assert "the retry of https://berth-notices-" in verdict and "no pacer had to wait" in verdict
