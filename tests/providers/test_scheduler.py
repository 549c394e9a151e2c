"""The Search/Fetch API scheduler: pacing per account and API, bounded retries inside one deadline,
and cancellation while waiting. Real provider, real emulator; time is a virtual clock the test
steps (or, for the one wire-timing test, the monotonic clock the emulator's log also uses)."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from dsweb_ref._context import CallContext
from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref._types import FetchRequest, SearchRequest, SearchResult
from dsweb_ref.emulator import Emulator, Hold, RateLimited, Status
from dsweb_ref.providers._scheduler import (
    BACKOFF_FIRST_S,
    Policy,
    SchedulerRegistry,
    process_schedulers,
    retry_after_seconds,
    retryable,
    spacing,
)
from dsweb_ref.providers.deepseek_fetch_api import DeepSeekFetchApi
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.runtime import build_runtime
from dsweb_ref.settings import DeepSeekApiSettings, Settings, parse_settings

from ._clock import WALL_EPOCH, ManualClock

PAGE = "https://docs.example.test/api/search"


@pytest.fixture
def env(emulator_api_key: str) -> dict[str, str]:
    return {"DEEPSEEK_API_KEY": emulator_api_key}


def _settings(emulator: Emulator, **values: Any) -> Settings:
    return Settings().updated({"deepseek_api.base_url": emulator.tools_base, **values})


def _search_api(emulator: Emulator, env: dict[str, str], clock: ManualClock, seed: int = 7,
                **values: Any) -> DeepSeekSearchApi:
    snapshot = _settings(emulator, **values)
    provider = DeepSeekSearchApi(lambda: snapshot, environ=env)
    provider.schedulers = SchedulerRegistry(clock, random.Random(seed))  # type: ignore[attr-defined]
    return provider


def _search(provider: DeepSeekSearchApi, query: str = "search api") -> SearchResult:
    return asyncio.run(provider.search(SearchRequest(query), CallContext()))


def _error(provider: DeepSeekSearchApi) -> WebError:
    with pytest.raises(WebError) as info:
        _search(provider)
    return info.value


def _statuses(emulator: Emulator) -> list[int | None]:
    emulator.wait_until_idle(10.0)
    return [r.status for r in emulator.log.for_route("search")]


# -- off by default: seed 001's fail-fast --------------------------------------------------------

def test_scheduler_is_off_by_default_and_a_429_fails_fast(emulator: Emulator, env: dict[str, str]) -> None:
    defaults = DeepSeekApiSettings()
    assert (defaults.pacing, defaults.retries) == (False, 0)
    clock = ManualClock(auto=True)
    emulator.inject("search", RateLimited(retry_after=1))
    error = _error(_search_api(emulator, env, clock))
    assert error.code == WebErrorCode.PROVIDER_ERROR and "HTTP 429" in error.message
    assert _statuses(emulator) == [429]
    assert clock.slept == []


# -- retries ---------------------------------------------------------------------------------------

def test_429_burst_with_retry_after_waits_the_header_then_succeeds(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock(auto=True)
    emulator.inject("search", RateLimited(retry_after=2), times=2)
    result = _search(_search_api(emulator, env, clock, **{"deepseek_api.retries": 3}))
    assert result.sources
    assert _statuses(emulator) == [429, 429, 200]
    assert clock.slept == [2.0, 2.0]


def test_429_without_retry_after_backs_off_with_seeded_jitter(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock(auto=True)
    emulator.inject("search", RateLimited(retry_after=None), times=3)
    _search(_search_api(emulator, env, clock, seed=11, **{"deepseek_api.retries": 3}))
    assert _statuses(emulator) == [429, 429, 429, 200]
    expected_rand = random.Random(11)
    expected = []
    for retry in range(3):
        ceiling = BACKOFF_FIRST_S * 2**retry
        expected.append(ceiling / 2 + expected_rand.uniform(0, ceiling / 2))
    assert clock.slept == pytest.approx(expected)
    assert all(c / 2 <= w <= c for w, c in zip(clock.slept, (0.5, 1.0, 2.0), strict=True)), "exponential, jittered"


def test_retry_after_http_date_is_honoured(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock(auto=True)
    when = email.utils.formatdate(WALL_EPOCH + 3, usegmt=True)
    emulator.inject("search", RateLimited(retry_after=when))
    _search(_search_api(emulator, env, clock, **{"deepseek_api.retries": 1}))
    assert _statuses(emulator) == [429, 200]
    assert clock.slept == [3.0]


def test_retry_after_longer_than_the_cap_ends_the_retries(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock(auto=True)
    emulator.inject("search", RateLimited(retry_after=60))
    provider = _search_api(emulator, env, clock, **{"deepseek_api.retries": 3, "deepseek_api.retry_max_wait_s": 10.0})
    error = _error(provider)
    assert "HTTP 429" in error.message and "retry after 60 seconds" in error.message
    assert _statuses(emulator) == [429], "never retried earlier than the service asked"
    assert clock.slept == []


def test_a_retry_after_of_ten_digits_ends_the_retries_too(emulator: Emulator, env: dict[str, str]) -> None:
    """A longer wait asked for must never mean an earlier retry: ten digits were once read as no header,
    and the search backed off a fraction of a second and retried (outside hunt D)."""
    clock = ManualClock(auto=True)
    emulator.inject("search", RateLimited(retry_after=9_999_999_999))
    provider = _search_api(emulator, env, clock, **{"deepseek_api.retries": 3, "deepseek_api.retry_max_wait_s": 10.0})
    assert "HTTP 429" in _error(provider).message
    assert _statuses(emulator) == [429] and clock.slept == []


def test_402_is_never_retried_and_reads_as_a_funding_problem(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock(auto=True)
    emulator.inject("search", Status(402), times=None)
    error = _error(_search_api(emulator, env, clock, **{"deepseek_api.retries": 3}))
    assert "insufficient balance" in error.message and "top up" in error.message
    assert _statuses(emulator) == [402]
    assert clock.slept == []


def test_400_is_never_retried(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock(auto=True)
    emulator.inject("search", Status(400), times=None)
    error = _error(_search_api(emulator, env, clock, **{"deepseek_api.retries": 3}))
    assert "HTTP 400" in error.message
    assert _statuses(emulator) == [400]


def test_503_then_success(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock(auto=True)
    emulator.inject("search", Status(503))
    assert _search(_search_api(emulator, env, clock, **{"deepseek_api.retries": 2})).sources
    assert _statuses(emulator) == [503, 200]
    assert len(clock.slept) == 1


def test_408_is_retried(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock(auto=True)
    emulator.inject("search", Status(408))
    _search(_search_api(emulator, env, clock, **{"deepseek_api.retries": 1}))
    assert _statuses(emulator) == [408, 200]


def test_retries_are_bounded(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock(auto=True)
    emulator.inject("search", Status(503), times=None)
    error = _error(_search_api(emulator, env, clock, **{"deepseek_api.retries": 2}))
    assert "HTTP 503" in error.message
    assert _statuses(emulator) == [503, 503, 503]


def test_a_retry_never_passes_the_one_deadline(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock(auto=True)
    emulator.inject("search", RateLimited(retry_after=40), times=None)
    limits = {"deepseek_api.retries": 5, "deepseek_api.timeout_s": 90.0, "deepseek_api.retry_max_wait_s": 60.0}
    error = _error(_search_api(emulator, env, clock, **limits))
    assert "HTTP 429" in error.message
    # Attempts at t=0, 40 and 80 fit inside 90 s (the last with 10 s of real time for its request);
    # the wait after the third would end at 120, past the deadline, so the call stops there with the
    # last answer instead of sleeping.
    assert _statuses(emulator) == [429, 429, 429]
    assert clock.slept == [40.0, 40.0] and clock.now() < 90.0


def test_retryable_statuses_are_408_429_and_5xx_only() -> None:
    assert [s for s in (400, 401, 402, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504, 599) if retryable(s)] == [
        408, 429, 500, 502, 503, 504, 599,
    ]


@pytest.mark.parametrize(
    ("value", "wait"),
    [
        ("3", 3.0),
        (" 0 ", 0.0),
        (email.utils.formatdate(WALL_EPOCH + 7, usegmt=True), 7.0),
        (email.utils.formatdate(WALL_EPOCH - 7, usegmt=True), 0.0),  # a past date: retry now
        ("-1", None),
        ("1.5", None),
        ("999999999", 999999999.0),
        ("9999999999", 1e9),  # ten digits or more: at least that long, never a short backoff
        pytest.param("0" * 5000 + "7", 7.0, id="leading-zeros-past-int-limit"),  # still 7 seconds
        pytest.param("9" * 5000, 1e9, id="digits-past-int-limit"),
        ("soon", None),
        ("Mon, 99 Foo 2026 25:61:61 GMT", None),
        ("x" * 200, None),
        ("", None),
    ],
)
def test_retry_after_forms(value: str, wait: float | None) -> None:
    assert retry_after_seconds({"retry-after": value}, WALL_EPOCH) == wait


def test_policy_reads_the_per_api_rate() -> None:
    conf = DeepSeekApiSettings(pacing=True, search_qps=5.0, fetch_qps=2.0, retries=1)
    assert Policy.of(conf, "search").qps == 5.0 and Policy.of(conf, "fetch").qps == 2.0
    assert Policy.of(DeepSeekApiSettings(), "search").active is False


# -- pacing ----------------------------------------------------------------------------------------

def test_four_query_burst_never_exceeds_5_qps_counted_in_the_emulator_log(
    emulator: Emulator, env: dict[str, str]
) -> None:
    clock = ManualClock()
    provider = _search_api(emulator, env, clock, **{"deepseek_api.pacing": True})

    async def scenario() -> list[int]:
        tasks = [asyncio.create_task(provider.search(SearchRequest(f"q{i}"), CallContext())) for i in range(4)]
        seen = []
        for step in range(4):
            # Settled: every call not yet sent is parked on the clock, the rest reached the emulator.
            await clock.wait_sleeping(3 - step)
            await asyncio.to_thread(emulator.log.wait_for, step + 1, 10.0, route="search")
            seen.append(len(emulator.log.for_route("search")))
            clock.advance(step_s)
        await asyncio.gather(*tasks)
        return seen

    step_s = spacing(5.0)
    assert 0.2 < step_s <= 0.2 * 1.1, "at most the limit, at least 0.9 of it"
    assert asyncio.run(scenario()) == [1, 2, 3, 4], "one start per step of clock time, never more"
    assert clock.slept == pytest.approx([step_s, 2 * step_s, 3 * step_s])


def test_slots_that_fall_due_together_after_a_stall_still_go_one_interval_apart(
    emulator: Emulator, env: dict[str, str]
) -> None:
    """The loop stalls for a second: three reserved slots are past due at once; they must not burst."""
    clock = ManualClock()
    provider = _search_api(emulator, env, clock, **{"deepseek_api.pacing": True})
    step_s = spacing(5.0)

    async def scenario() -> list[int]:
        tasks = [asyncio.create_task(provider.search(SearchRequest(f"q{i}"), CallContext())) for i in range(4)]
        await clock.wait_sleeping(3)
        await asyncio.to_thread(emulator.log.wait_for, 1, 10.0, route="search")
        clock.advance(1.0)  # every reserved slot is due now
        seen = []
        for sent in (2, 3, 4):
            await clock.wait_sleeping(4 - sent)
            await asyncio.to_thread(emulator.log.wait_for, sent, 10.0, route="search")
            seen.append(len(emulator.log.for_route("search")))
            clock.advance(step_s)
        await asyncio.gather(*tasks)
        return seen

    assert asyncio.run(scenario()) == [2, 3, 4], "one start per interval after the stall, not three at once"


def test_a_start_pushed_past_the_deadline_by_a_stall_is_not_sent(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock()
    slow = {"deepseek_api.pacing": True, "deepseek_api.search_qps": 0.1, "deepseek_api.timeout_s": 30.0}
    provider = _search_api(emulator, env, clock, **slow)

    async def scenario() -> list[object]:
        tasks = [asyncio.create_task(provider.search(SearchRequest(f"q{i}"), CallContext())) for i in range(3)]
        await clock.wait_sleeping(2)  # slots at 10.5 and 21 s, inside the 30 s deadline
        # The first is on the wire (a start counts from there: until then the next one waits).
        await asyncio.to_thread(emulator.log.wait_for, 1, 10.0, route="search")
        # A stall: the second starts at 25 s (5 s of the deadline left for its real request), and the
        # third could only start at 35.5 s.
        clock.advance(25.0)
        return list(await asyncio.gather(*tasks, return_exceptions=True))

    first, second, third = asyncio.run(scenario())
    assert isinstance(first, SearchResult) and isinstance(second, SearchResult), (first, second)
    assert isinstance(third, WebError) and "past the operation's 30 s deadline" in third.message
    assert [r.json["query"] for r in emulator.log.for_route("search")] == ["q0", "q1"]


def test_batch_through_the_tool_is_spaced_on_the_wire(emulator: Emulator, env: dict[str, str]) -> None:
    """The monotonic clock the emulator stamps requests with: the k-th start of a four-query batch at
    5 QPS never comes before k steps after the call began (load can only make starts later)."""
    snapshot = _settings(emulator, **{"web.use_new_search_api": True, "deepseek_api.pacing": True})
    tool = build_runtime(lambda: snapshot, environ=env).search_tool()
    began = time.monotonic()
    asyncio.run(tool.run({"queries": ["a", "b", "c", "d"]}))
    starts = sorted(r.started for r in emulator.log.for_route("search"))
    assert len(starts) == 4
    step = spacing(5.0)
    early = [k for k, start in enumerate(starts) if start < began + k * step]
    assert early == [], [round(s - began, 3) for s in starts]


def test_search_and_fetch_are_paced_separately(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock()
    snapshot = _settings(emulator, **{"deepseek_api.pacing": True})
    registry = SchedulerRegistry(clock, random.Random(1))
    search, fetch = DeepSeekSearchApi(lambda: snapshot, environ=env), DeepSeekFetchApi(lambda: snapshot, environ=env)
    search.schedulers = fetch.schedulers = registry  # type: ignore[attr-defined]

    async def scenario() -> None:
        await asyncio.gather(
            search.search(SearchRequest("a"), CallContext()), fetch.fetch(FetchRequest(PAGE), CallContext())
        )

    asyncio.run(scenario())
    assert clock.slept == [], "a search does not use up the fetch rate"


def test_one_scheduler_per_account_shared_across_provider_instances(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock()
    registry = SchedulerRegistry(clock, random.Random(1))
    snapshot = _settings(emulator, **{"deepseek_api.pacing": True})
    first, second = (DeepSeekSearchApi(lambda: snapshot, environ=env) for _ in range(2))
    first.schedulers = second.schedulers = registry  # type: ignore[attr-defined]

    async def scenario() -> None:
        tasks = [
            asyncio.create_task(first.search(SearchRequest("a"), CallContext())),
            asyncio.create_task(second.search(SearchRequest("b"), CallContext())),
        ]
        await clock.wait_sleeping(1)  # the second instance's call waits for the first one's slot
        await asyncio.to_thread(emulator.log.wait_for, 1, 10.0, route="search")  # the first is on the wire
        clock.advance(spacing(5.0))
        await asyncio.gather(*tasks)

    asyncio.run(scenario())
    assert clock.slept == [pytest.approx(spacing(5.0))]
    base, key = emulator.tools_base, env["DEEPSEEK_API_KEY"]
    assert registry.for_account(base, key) is registry.for_account(base, key)
    assert registry.for_account(base, key) is not registry.for_account(base, "another-key")
    assert registry.for_account(base, key) is not registry.for_account(base + "/other", key)
    assert process_schedulers() is process_schedulers()


def test_a_slot_past_the_deadline_is_not_taken(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock()
    slow = {"deepseek_api.pacing": True, "deepseek_api.search_qps": 0.1, "deepseek_api.timeout_s": 5.0}
    provider = _search_api(emulator, env, clock, **slow)

    async def scenario() -> BaseException | SearchResult:
        await provider.search(SearchRequest("first"), CallContext())
        try:
            return await provider.search(SearchRequest("second"), CallContext())
        except WebError as error:
            return error

    outcome = asyncio.run(scenario())
    assert isinstance(outcome, WebError) and "past the operation's 5 s deadline" in outcome.message
    assert _statuses(emulator) == [200], "the second request was never sent"
    assert clock.slept == []


# -- cancellation --------------------------------------------------------------------------------

def test_cancel_while_waiting_for_a_slot_returns_at_once_and_gives_the_slot_back(
    emulator: Emulator, env: dict[str, str]
) -> None:
    clock = ManualClock()
    provider = _search_api(emulator, env, clock, **{"deepseek_api.pacing": True})

    async def scenario() -> None:
        await provider.search(SearchRequest("first"), CallContext())
        waiting = asyncio.create_task(provider.search(SearchRequest("second"), CallContext()))
        await clock.wait_sleeping(1)
        waiting.cancel()
        # The clock never moves: the call can only end because cancellation ended its wait.
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert clock.sleeping == 0
        third = asyncio.create_task(provider.search(SearchRequest("third"), CallContext()))
        await clock.wait_sleeping(1)
        clock.advance(spacing(5.0))
        await third

    asyncio.run(scenario())
    assert clock.slept == pytest.approx([spacing(5.0)] * 2), "the cancelled call's slot went to the next caller"
    assert [r.json["query"] for r in emulator.log.for_route("search")] == ["first", "third"]
    emulator.log.wait_connections_closed(10.0)


def test_cancel_during_a_retry_wait_leaves_nothing_in_flight(emulator: Emulator, env: dict[str, str]) -> None:
    clock = ManualClock()
    gate = emulator.gate("before-429")
    emulator.inject("search", Hold(gate, then=RateLimited(retry_after=5)))
    provider = _search_api(emulator, env, clock, **{"deepseek_api.retries": 3})

    async def scenario() -> None:
        task = asyncio.create_task(provider.search(SearchRequest("q"), CallContext()))
        await asyncio.to_thread(gate.wait_held, 1, 10.0)
        assert clock.sleeping == 0, "no retry wait while the first attempt is in flight"
        gate.release()
        await clock.wait_sleeping(1)  # the 429 arrived; the call now waits for its retry
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert clock.sleeping == 0

    asyncio.run(scenario())
    assert _statuses(emulator) == [429], "no retry was sent"
    assert emulator.log.in_flight == 0
    emulator.log.wait_connections_closed(10.0)
    assert clock.slept == [5.0]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("deepseek_api.search_qps", 0.0),
        ("deepseek_api.fetch_qps", -1.0),
        ("deepseek_api.search_qps", 1e9),
        ("deepseek_api.retries", -1),
        ("deepseek_api.retries", 11),
        ("deepseek_api.retry_max_wait_s", 0.0),
        ("deepseek_api.pacing", "yes"),
    ],
)
def test_scheduler_settings_are_validated(key: str, value: object) -> None:
    with pytest.raises(WebError) as info:
        Settings().updated({key: value})
    assert info.value.code == WebErrorCode.CONFIG_INVALID and key in info.value.message


def test_scheduler_settings_from_the_environment() -> None:
    conf = parse_settings(
        environ={"DSWEB_TOOLS_PACING": "on", "DSWEB_SEARCH_QPS": "2.5", "DSWEB_TOOLS_RETRIES": "3"}
    ).deepseek_api
    assert (conf.pacing, conf.search_qps, conf.fetch_qps, conf.retries) == (True, 2.5, 5.0, 3)


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.text(max_size=80) | st.from_regex(r"[A-Za-z]{3}, \d{1,5} [A-Za-z]{3} \d{1,6} \d\d:\d\d:\d\d [A-Z+0-9-]{1,5}"))
def test_retry_after_of_any_header_value_is_none_or_a_finite_wait(value: str) -> None:
    wait = retry_after_seconds({"retry-after": value}, WALL_EPOCH)
    assert wait is None or 0.0 <= wait < float("inf")


def test_a_retry_reuses_the_pooled_connection(emulator: Emulator, env: dict[str, str]) -> None:
    """Each attempt gets the operation's remaining time, but the pool key keeps the configured
    timeout: the retry goes out on the same client, over the same kept-alive connection."""
    clock = ManualClock(auto=True)
    emulator.inject("search", Status(503))
    assert _search(_search_api(emulator, env, clock, **{"deepseek_api.retries": 1})).sources
    records = emulator.log.for_route("search")
    assert [r.status for r in records] == [503, 200]
    assert len({r.client for r in records}) == 1, "one TCP connection for both attempts"
