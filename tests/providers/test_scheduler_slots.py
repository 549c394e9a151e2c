"""Pacing after a cancel, and pacing measured at the wire (issue 20 items 5 and 6).

Fake clocks throughout: ordering is proven by moving time, never by waiting.

* Every slot handed back unused goes to the next caller that fits it, not only the newest (a
  cancelled call in the middle of the queue used to leave its slot empty while the next caller
  queued behind everyone: up to three slots extra at 1 QPS).
* A start counts from when the request reached the wire, not from when it was let go: a send held
  up before the wire (a slow connect) must not let the next one out less than one interval behind it.
"""

from __future__ import annotations

import asyncio
import bisect
import importlib.util
import json
import random
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from dsweb_ref._context import CallContext
from dsweb_ref._types import SearchRequest
from dsweb_ref.emulator import Emulator
from dsweb_ref.providers import _client_pool
from dsweb_ref.providers._scheduler import SchedulerRegistry, _Pacer, spacing
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.settings import Settings

from ._clock import ManualClock

STEP = spacing(5.0)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(emulator_api_key: str) -> dict[str, str]:
    return {"DEEPSEEK_API_KEY": emulator_api_key}


def _paced(emulator: Emulator, env: dict[str, str], clock: ManualClock) -> DeepSeekSearchApi:
    snapshot = Settings().updated({"deepseek_api.base_url": emulator.tools_base, "deepseek_api.pacing": True})
    provider = DeepSeekSearchApi(lambda: snapshot, environ=env)
    provider.schedulers = SchedulerRegistry(clock, random.Random(5))  # type: ignore[attr-defined]
    return provider


def _queries(emulator: Emulator) -> list[str]:
    return [r.json["query"] for r in emulator.log.for_route("search")]


# -- item 5: the unused slot goes to the next caller -----------------------------------------------


def test_a_cancelled_call_s_slot_goes_to_the_next_caller_though_a_later_one_is_waiting(
    emulator: Emulator, env: dict[str, str]
) -> None:
    """first starts at 0; b holds the slot at 1 step, c at 2 steps; b is cancelled. The next call, d,
    must wait 1 step (b's slot), not 3 (behind c, the newest, which was all that came back before)."""
    clock = ManualClock()
    provider = _paced(emulator, env, clock)

    async def scenario() -> None:
        await provider.search(SearchRequest("first"), CallContext())
        b = asyncio.create_task(provider.search(SearchRequest("b"), CallContext()))
        await clock.wait_sleeping(1)
        c = asyncio.create_task(provider.search(SearchRequest("c"), CallContext()))
        await clock.wait_sleeping(2)
        b.cancel()
        with pytest.raises(asyncio.CancelledError):
            await b
        d = asyncio.create_task(provider.search(SearchRequest("d"), CallContext()))
        await clock.wait_sleeping(2)
        assert clock.slept[-1] == pytest.approx(STEP), "the next caller queued behind the newest slot"
        clock.advance(STEP)
        await d
        clock.advance(STEP)
        await c

    asyncio.run(scenario())
    assert clock.slept == pytest.approx([STEP, 2 * STEP, STEP])
    assert _queries(emulator) == ["first", "d", "c"]


def test_every_slot_handed_back_is_free_again_for_the_next_caller_that_fits() -> None:
    pacer, interval = _Pacer(), 1.0
    held = [pacer.reserve(0.0, interval, 100.0) for _ in range(6)]
    assert held == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    for slot in (1.0, 3.0, 4.0):  # any, not only the newest
        pacer.give_back(slot)
    assert [pacer.reserve(0.5, interval, 100.0) for _ in range(4)] == [1.0, 3.0, 4.0, 6.0]
    pacer.give_back(2.0)
    assert pacer.reserve(2.5, interval, 6.5) is None  # 2.0 has passed; nothing else is free before 7.0
    assert pacer.reserve(2.5, interval, 100.0) == 7.0


def test_a_freed_slot_that_is_partly_past_is_used_where_it_still_fits() -> None:
    pacer, interval = _Pacer(), 1.0
    assert [pacer.reserve(0.0, interval, 100.0) for _ in range(2)] == [0.0, 1.0]
    assert pacer.reserve(0.0, interval, 100.0) == 2.0
    assert pacer.reserve(0.0, interval, 100.0) == 3.0
    pacer.give_back(2.0)
    # At 2.2 the gap between 1.0 and 3.0 holds no time one interval from both: after 3.0 then.
    assert pacer.reserve(2.2, interval, 100.0) == 4.0


# -- item 6: spacing counts from the wire -----------------------------------------------------------


def test_the_next_start_waits_for_the_last_one_to_reach_the_wire() -> None:
    pacer, interval = _Pacer(), 1.0
    a, b = pacer.reserve(0.0, interval, 100.0), pacer.reserve(0.0, interval, 100.0)
    assert (a, b) == (0.0, 1.0)
    wait, first = pacer.start(0.0, interval, a)
    assert wait == 0.0 and first is not None
    wait, ticket = pacer.start(1.0, interval, b)  # b's slot is due, but a is not on the wire yet
    assert ticket is None and 0 < wait < interval
    pacer.on_wire(first, 1.5)  # a's request went out late (a slow connect)
    wait, ticket = pacer.start(1.6, interval, b)
    assert ticket is None and wait == pytest.approx(0.9), "b must go one interval after a went out"
    wait, ticket = pacer.start(2.5, interval, b)
    assert wait == 0.0 and ticket is not None


def test_a_send_that_never_reached_the_wire_counts_from_when_it_was_let_go() -> None:
    pacer, interval = _Pacer(), 1.0
    a, b = pacer.reserve(0.0, interval, 100.0), pacer.reserve(0.0, interval, 100.0)
    _, first = pacer.start(0.0, interval, a)
    assert first is not None
    pacer.ended(first)  # refused before any byte went out
    wait, ticket = pacer.start(1.0, interval, b)
    assert wait == 0.0 and ticket is not None


def _hold_first_request(monkeypatch: pytest.MonkeyPatch, held: asyncio.Event, release: asyncio.Event) -> None:
    """The first request of every pooled client created from now on waits for ``release`` before it
    goes out (a slow connect, as far as the pacer can tell)."""
    real = _client_pool.new_client

    async def hook(request: httpx.Request) -> None:
        if not held.is_set():
            held.set()
            await release.wait()

    def hooked(transport: httpx.AsyncBaseTransport | None, timeout_s: float) -> httpx.AsyncClient:
        client = real(transport, timeout_s)
        hooks: list[Callable[[httpx.Request], Awaitable[None]]] = [hook]
        client.event_hooks = {"request": hooks, "response": []}
        return client

    monkeypatch.setattr(_client_pool, "new_client", hooked)


def test_a_start_counts_from_when_the_request_reached_the_wire(
    emulator: Emulator, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """one is let go at 0 but held before the wire until 0.5 s; two's slot is due at 1 step. two must
    not go out before one has, and then not before one step after it (before: at 1 step, first)."""
    clock = ManualClock()
    provider = _paced(emulator, env, clock)

    async def scenario() -> None:
        held, release = asyncio.Event(), asyncio.Event()
        _hold_first_request(monkeypatch, held, release)
        one = asyncio.create_task(provider.search(SearchRequest("one"), CallContext()))
        two = asyncio.create_task(provider.search(SearchRequest("two"), CallContext()))
        await held.wait()
        await clock.wait_sleeping(1)  # two waits for its slot
        clock.advance(STEP)  # two's slot is due; one is still not on the wire
        await clock.wait_sleeping(1)  # so two waits again
        assert emulator.log.for_route("search") == []
        clock.advance(0.5 - STEP)
        await clock.wait_sleeping(1)
        release.set()  # one goes out at 0.5
        await one
        clock.advance(STEP - 0.01)  # 0.01 s short of one step after one went out
        await clock.wait_sleeping(1)
        assert _queries(emulator) == ["one"], "two went out less than one interval after one"
        clock.advance(0.01)
        await two

    asyncio.run(scenario())
    assert _queries(emulator) == ["one", "two"]


def test_seeded_arrivals_and_cancels_never_put_more_than_the_limit_in_a_second() -> None:
    """A bounded seeded torture of the pacer alone: arrivals, cancels, late wake-ups and late wires;
    no one-second window of wire times holds more than the limit (5/s), and a slot handed back while
    still ahead is always the next caller's."""
    rng = random.Random(2026)
    for _ in range(200):
        pacer, interval, now = _Pacer(), spacing(5.0), 0.0
        waiting: list[float] = []
        wire: list[float] = []
        for _ in range(40):
            now += rng.uniform(0.0, 0.3)
            roll = rng.random()
            if roll < 0.4:
                slot = pacer.reserve(now, interval, now + 30.0)
                assert slot is not None
                bisect.insort(waiting, slot)
            elif roll < 0.55 and waiting:
                slot = waiting.pop(rng.randrange(len(waiting)))
                pacer.give_back(slot)
                last = max(wire, default=-1.0)
                if slot > max(now, last + interval):  # still ahead: the next caller must get it (or earlier)
                    again = pacer.reserve(now, interval, now + 30.0)
                    assert again is not None and again <= slot + 1e-9
                    bisect.insort(waiting, again)
            elif waiting and waiting[0] <= now:
                late = now + rng.uniform(0.0, 0.2)  # a late wake-up
                _, ticket = pacer.start(late, interval, waiting[0])
                if ticket is not None:
                    waiting.pop(0)
                    sent = late + rng.uniform(0.0, 0.1)  # a slow connect
                    pacer.on_wire(ticket, sent)
                    wire.append(sent)
        wire.sort()
        assert all(bisect.bisect_left(wire, t + 1.0) - i <= 5 for i, t in enumerate(wire)), wire


def test_bench_scheduler_fails_on_a_window_above_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark exits 1 when the emulator saw more starts in one second than the limit."""
    spec = importlib.util.spec_from_file_location("bench_scheduler", ROOT / "scripts" / "bench_scheduler.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bunched = [0.0, 0.21, 0.42, 0.63, 0.84, 0.95, 2.0]  # six starts within one second at 5/s
    spaced = [i * STEP for i in range(10)]
    assert bench.verdict(bunched, 5.0)[1:] == (6, True)
    assert bench.verdict(spaced, 5.0)[1:] == (5, False)
    monkeypatch.setattr(bench, "verdict", lambda starts, qps: (4.9, 6, True))
    monkeypatch.setattr(bench, "own_cost", lambda calls: asyncio.sleep(0, (0.0, 0.0)))
    monkeypatch.setattr(sys, "argv", ["bench_scheduler.py", "-n", "2", "--calls", "1"])
    assert bench.main() == 1


def test_over_a_borrowed_transport_the_hand_over_is_the_start() -> None:
    """A caller's own transport (tests, an in-process emulator) reports no write: the hand-over to
    it counts as the start, so a held first request does not hold back the next one's slot."""
    clock = ManualClock()
    seen: list[str] = []
    release = asyncio.Event()

    async def handler(request: httpx.Request) -> httpx.Response:
        query = json.loads(request.content)["query"]
        seen.append(query)
        if query == "one":
            await release.wait()
        return httpx.Response(200, json={"results": []})

    snapshot = Settings().updated({"deepseek_api.base_url": "https://api.test/v1/tools", "deepseek_api.pacing": True})
    provider = DeepSeekSearchApi(
        lambda: snapshot, transport=httpx.MockTransport(handler), environ={"DEEPSEEK_API_KEY": "k-borrowed-1"}
    )
    provider.schedulers = SchedulerRegistry(clock, random.Random(5))  # type: ignore[attr-defined]

    async def scenario() -> None:
        one = asyncio.create_task(provider.search(SearchRequest("one"), CallContext()))
        two = asyncio.create_task(provider.search(SearchRequest("two"), CallContext()))
        await clock.wait_sleeping(1)
        clock.advance(STEP)
        await asyncio.wait_for(two, 10.0)  # went out while one is still held (bounded: no hang if not)
        assert seen == ["one", "two"] and not one.done()
        release.set()
        await one

    asyncio.run(scenario())
    assert clock.slept == [pytest.approx(STEP)]


# -- a start taken at or past the deadline (seed-9 mutation draw, list B) -------------------------


class _LateClock(ManualClock):
    """Every sleep wakes half a second late (a loaded event loop), time moving on at once."""

    async def sleep(self, seconds: float) -> None:
        await super().sleep(seconds + 0.5)


def test_a_start_taken_past_the_deadline_is_ended_so_later_requests_still_go_out() -> None:
    # The second call's slot (1.05 s) fits its 1.5 s deadline, but it wakes at 1.55 s: nothing is sent, and the
    # start it took must be ended, or the third call (10 s, slot free) would poll for it until its deadline.
    from dsweb_ref._exceptions import WebError
    from dsweb_ref.providers._scheduler import AccountScheduler, Policy

    clock = _LateClock(auto=True)
    scheduler = AccountScheduler(clock, random.Random(0))
    policy = Policy(pacing=True, qps=1.0)
    sent: list[float] = []

    async def send(remaining: float) -> object:
        sent.append(clock.now())
        return object()

    async def main() -> None:
        await scheduler.run("search", policy, 1.5, send, "Search")
        with pytest.raises(WebError):  # nothing sent for it, whichever way it says so
            await scheduler.run("search", policy, 1.5, send, "Search")
        await scheduler.run("search", policy, 10.0, send, "Search")

    asyncio.run(main())
    assert len(sent) == 2, sent


class _GapClock(ManualClock):
    """Time jumps to ``jump_to`` at the next clock read once set: a thread switch between two reads."""

    def __init__(self) -> None:
        super().__init__(auto=True)
        self.jump_to: float | None = None

    def now(self) -> float:
        if self.jump_to is not None:
            self.advance(self.jump_to - super().now())
            self.jump_to = None
        return super().now()


def test_a_start_whose_deadline_passes_before_the_send_is_ended_and_the_last_answer_kept() -> None:
    # The first request answers 503 (Retry-After 0) at 2.9 s of a 3 s deadline; the retry's start is taken at
    # 2.9 s, then the clock reads 3.2 s before the send: nothing is sent, the 503 is the answer, and the start is
    # ended, so a later call (slot free) still sends at once.
    from dsweb_ref.providers._scheduler import AccountScheduler, Policy

    class _Reply:
        def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
            self.status, self.headers = status, headers or {}

    clock = _GapClock()
    scheduler = AccountScheduler(clock, random.Random(0))
    policy = Policy(pacing=True, qps=5.0, retries=2)
    sent: list[float] = []
    slot = scheduler._slot

    async def slot_then_gap(api: str, qps: float, deadline: float) -> object:
        ticket = await slot(api, qps, deadline)
        if len(sent) == 1:  # the retry's start is taken; the next clock read is past the deadline
            clock.jump_to = 3.2
        return ticket

    scheduler._slot = slot_then_gap  # type: ignore[method-assign]

    async def send(remaining: float) -> _Reply:
        sent.append(clock.now())
        if len(sent) == 1:
            clock.advance(2.9 - clock.now())
            return _Reply(503, {"retry-after": "0"})
        return _Reply(200)

    async def main() -> tuple[int, int]:
        first = await scheduler.run("search", policy, 3.0, send, "Search")
        later = await scheduler.run("search", policy, 1.0, send, "Search")
        return first.status, later.status

    assert asyncio.run(main()) == (503, 200)
    assert len(sent) == 2, sent  # the retry was never sent; the later call was
