"""Checks run side by side on lanes (`dsweb certify --jobs N`): each concurrent check has a target of its
own, reports and progress keep catalogue order, timing checks get a quiet phase and some checks run alone.

The checks here are stand-ins registered for one run; they prove overlap with events (a check that can
only finish once another one started), never with sleeps."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from dsweb_ref.certification import checks, suite
from dsweb_ref.certification.checks import CheckContext, CheckSpec
from dsweb_ref.certification.checks._base import Slot
from dsweb_ref.certification.model import Check, CheckResult, Outcome
from dsweb_ref.certification.targets import AdapterTarget, InProcessTarget, Target, ToolPair

from .conftest import adapter_command, dsweb_certify

Run = Callable[[CheckContext], Awaitable[None]]


def spec(check_id: str, run: Run, slot: Slot = "shared") -> CheckSpec:
    return CheckSpec(Check(check_id, check_id, "000", "web_search"), ("web_search",), "api", run, slot=slot)


class Lanes:
    """A factory of minimal in-process targets that counts what it made and the hellos they said."""

    def __init__(self) -> None:
        self.made: list[InProcessTarget] = []
        self.hellos = 0

    def __call__(self) -> Target:
        lanes = self

        class Counted(InProcessTarget):
            async def hello(self) -> Any:
                lanes.hellos += 1
                return await super().hello()

        target = Counted(lambda config: ToolPair(search=object()), name="stand-in", version="0")  # type: ignore[arg-type]
        self.made.append(target)
        return target


def run(specs: list[CheckSpec], monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> tuple[Any, list[str]]:
    """Run ``specs`` as the whole catalogue: the report and the ids in the order progress saw them."""
    monkeypatch.setattr(checks, "all_checks", lambda: list(specs))
    seen: list[str] = []
    lanes = kwargs.pop("lanes", None) or Lanes()
    report = asyncio.run(
        suite.run_suite(lanes(), lanes=lanes, progress=lambda r: seen.append(r.check.id), **kwargs)
    )
    return report, seen


def test_independent_checks_overlap_and_keep_catalogue_order_in_report_and_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "first" can only finish once "second" started: run one by one, it would time out.
    second_started = asyncio.Event()
    targets: dict[str, int] = {}

    async def first(ctx: CheckContext) -> None:
        targets["first"] = id(ctx.target)
        await second_started.wait()

    async def second(ctx: CheckContext) -> None:
        targets["second"] = id(ctx.target)
        second_started.set()

    lanes = Lanes()
    report, seen = run([spec("a.first", first), spec("a.second", second)], monkeypatch, jobs=2, lanes=lanes,
                       check_timeout=20)
    assert [r.outcome for r in report.results] == [Outcome.PASSED, Outcome.PASSED]
    assert [r.check.id for r in report.results] == ["a.first", "a.second"] == seen  # second finished first
    assert targets["first"] != targets["second"]  # a lane each
    assert len(lanes.made) == 2 and lanes.hellos == 2  # each lane said hello itself
    assert all(r.duration_s > 0 for r in report.results)


def test_jobs_1_runs_one_check_at_a_time_on_one_target(monkeypatch: pytest.MonkeyPatch) -> None:
    second_started = asyncio.Event()

    async def first(ctx: CheckContext) -> None:
        await second_started.wait()

    async def second(ctx: CheckContext) -> None:
        second_started.set()

    lanes = Lanes()
    report, _ = run([spec("a.first", first), spec("a.second", second)], monkeypatch, jobs=1, lanes=lanes,
                    check_timeout=0.3)
    assert [r.outcome for r in report.results] == [Outcome.ERROR, Outcome.PASSED]  # first waited in vain
    assert "did not finish within" in report.results[0].reason


def test_quiet_checks_run_beside_each_other_only_and_alone_checks_beside_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    running: set[str] = set()
    seen_beside: dict[str, set[str]] = {}
    quiet_started = asyncio.Event()
    other_quiet = {"q.one": asyncio.Event(), "q.two": asyncio.Event()}

    def enter(name: str) -> None:
        seen_beside[name] = set(running)
        running.add(name)

    async def shared(ctx: CheckContext) -> None:
        enter("s.shared")
        # Bounded wait for something that must not happen: a quiet check starting beside this one.
        try:
            await asyncio.wait_for(quiet_started.wait(), 0.5)
            seen_beside["s.shared"].add("a quiet check")
        except TimeoutError:
            pass
        running.discard("s.shared")

    def quiet(name: str, other: str) -> Run:
        async def body(ctx: CheckContext) -> None:
            enter(name)
            quiet_started.set()
            other_quiet[name].set()
            await other_quiet[other].wait()  # the two quiet checks overlap
            running.discard(name)

        return body

    async def alone(ctx: CheckContext) -> None:
        enter("x.alone")
        running.discard("x.alone")

    specs = [
        spec("q.one", quiet("q.one", "q.two"), "quiet"),
        spec("q.two", quiet("q.two", "q.one"), "quiet"),
        spec("s.shared", shared),
        spec("x.alone", alone, "alone"),
    ]
    report, seen = run(specs, monkeypatch, jobs=4, check_timeout=20)
    assert all(r.outcome is Outcome.PASSED for r in report.results), [r.reason for r in report.results]
    assert seen == ["q.one", "q.two", "s.shared", "x.alone"]
    assert seen_beside["s.shared"] == set() and seen_beside["x.alone"] == set()
    assert seen_beside["q.one"] | seen_beside["q.two"] <= {"q.one", "q.two"}


def test_an_adapter_s_quiet_checks_run_beside_the_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: an adapter's timing checks waiting for the whole bulk to end (their longest wait then added
    # to the run: 15.2 s against 10.9 s for the example adapter), although its implementation computes in
    # processes of its own. The shared check can only finish once the quiet one started, and vice versa.
    started = {"s.bulk": asyncio.Event(), "q.timing": asyncio.Event()}

    def waits_for(name: str, other: str) -> Run:
        async def body(ctx: CheckContext) -> None:
            started[name].set()
            await started[other].wait()

        return body

    specs = [spec("s.bulk", waits_for("s.bulk", "q.timing")),
             spec("q.timing", waits_for("q.timing", "s.bulk"), "quiet")]
    report, seen = run(specs, monkeypatch, jobs=2, check_timeout=20,
                       lanes=lambda: AdapterTarget(adapter_command()))
    assert [r.outcome for r in report.results] == [Outcome.PASSED, Outcome.PASSED], [r.reason for r in report.results]
    assert seen == ["s.bulk", "q.timing"]


def test_a_lane_that_gave_an_error_is_replaced_by_a_fresh_target(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[int] = []

    async def broken(ctx: CheckContext) -> None:
        used.append(id(ctx.target))
        raise RuntimeError("the target broke")

    async def fine(ctx: CheckContext) -> None:
        used.append(id(ctx.target))

    lanes = Lanes()
    report, _ = run([spec("a.broken", broken), spec("a.fine", fine)], monkeypatch, jobs=1, lanes=lanes)
    assert [r.outcome for r in report.results] == [Outcome.ERROR, Outcome.PASSED]
    assert used[0] != used[1] and len(lanes.made) == 2


def stuck_first_then_two_in(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Register a catalogue whose first check never ends and whose two others end at once; the event
    is set once those two results are in (and held back behind the first)."""
    never = asyncio.Event()

    async def stuck(ctx: CheckContext) -> None:
        await never.wait()

    async def quick(ctx: CheckContext) -> None:
        pass

    specs = [spec("a.stuck", stuck), spec("a.quick", quick), spec("a.late", quick)]
    monkeypatch.setattr(checks, "all_checks", lambda: list(specs))
    both_in = asyncio.Event()
    record = suite._InOrder.done
    count = [0]

    def done(self: Any, index: int, result: CheckResult) -> None:
        record(self, index, result)
        count[0] += 1
        if count[0] == 2:
            both_in.set()

    monkeypatch.setattr(suite._InOrder, "done", done)
    return both_in


def test_an_interrupted_run_still_reports_every_finished_check_in_catalogue_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    both_in = stuck_first_then_two_in(monkeypatch)
    seen: list[str] = []

    async def interrupted() -> None:
        lanes = Lanes()
        task = asyncio.ensure_future(
            suite.run_suite(lanes(), lanes=lanes, jobs=3, progress=lambda r: seen.append(r.check.id))
        )
        await both_in.wait()
        assert seen == []  # held back: the first check of the catalogue has not finished
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    assert seen == ["a.quick", "a.late"]


class Stopped(Exception):
    """Stands in for the CLI's Interrupted."""


def test_a_progress_that_raises_once_interrupted_still_sees_every_finished_check_and_the_lanes_close(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The CLI's progress raises Interrupted for every result after a signal; the held-back results
    # must all still reach it, and the lanes must be closed, not left to the interpreter.
    both_in = stuck_first_then_two_in(monkeypatch)
    seen: list[str] = []

    def progress(result: CheckResult) -> None:
        seen.append(result.check.id)
        raise Stopped("interrupted")

    closed: list[object] = []

    class Closing(Lanes):
        def __call__(self) -> Target:
            target = super().__call__()
            real = target.close

            async def close() -> None:
                closed.append(target)
                await real()

            target.close = close  # type: ignore[method-assign]
            return target

    async def interrupted() -> None:
        lanes = Closing()
        task = asyncio.ensure_future(suite.run_suite(lanes(), lanes=lanes, jobs=3, progress=progress))
        await both_in.wait()
        task.cancel()
        with pytest.raises(Stopped):
            await task
        assert closed and len(closed) == len(lanes.made)

    asyncio.run(interrupted())
    assert seen == ["a.quick", "a.late"]


def test_default_jobs_comes_from_the_cpu_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suite.os, "cpu_count", lambda: 2)
    assert suite.default_jobs() == 8
    monkeypatch.setattr(suite.os, "cpu_count", lambda: None)
    assert suite.default_jobs() == 4


def test_every_check_marked_to_run_alone_or_quietly_says_why() -> None:
    marked = [s for s in checks.all_checks() if s.slot != "shared"]
    assert {s.check.id for s in marked} >= {"ssrf.proxy.ignored", "search.api.retry.waits", "ssrf.deadline"}
    for s in marked:
        source = Path(s.run.__code__.co_filename).read_text(encoding="utf-8")
        decorator = source[source.index(f'    "{s.check.id}",\n') :].split("\n)\n", 1)[0].splitlines()
        at = next(i for i, line in enumerate(decorator) if line.strip().startswith("slot="))
        assert "#" in decorator[at] or decorator[at - 1].strip().startswith("#"), s.check.id  # the reason


def test_dsweb_certify_hands_the_suite_a_factory_of_adapters_and_the_jobs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from dsweb_ref.cli import certify

    got: dict[str, Any] = {}

    async def fake_run_suite(target: Target, **kwargs: Any) -> Any:
        got.update(kwargs, target=target)
        await target.close()
        raise SystemExit(0)

    monkeypatch.setattr(certify, "run_suite", fake_run_suite)
    command = adapter_command("--break", "duplicate-url")
    with pytest.raises(SystemExit):
        dsweb_certify("--adapter", command, "--adapter-env", "DSWEB_X=1", "--jobs", "3")
    assert got["jobs"] == 3
    first, lane = got["target"].inner, got["lanes"]()  # the first lane comes wrapped to keep its hello
    assert isinstance(first, AdapterTarget) and isinstance(lane, AdapterTarget) and lane is not first
    assert lane.command == first.command == command and lane._env["DSWEB_X"] == "1"


def test_jobs_must_be_a_positive_whole_number(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("0", "-2", "many"):
        with pytest.raises(SystemExit) as exit_:
            dsweb_certify("--jobs", bad)
        assert exit_.value.code == 2
    assert "--jobs" in capsys.readouterr().err


def test_durations_prints_the_slowest_checks_slowest_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert dsweb_certify("--only", "search.validation", "--durations", "2", "--jobs", "2") == 0
    out = capsys.readouterr().out
    block = out[out.index("slowest checks (2):") :].splitlines()[1:3]
    times = [float(line.split("s")[0]) for line in block]
    assert len(block) == 2 and times == sorted(times, reverse=True)
    assert all(line.split()[-1].startswith("search.validation.") for line in block)


async def opened(factory: Lanes, limit: int) -> Any:
    """A run's lanes whose first lane said hello, allowed ``limit`` open at once."""
    pool = suite._Lanes(factory(), factory, {})
    await pool.first_hello()
    pool.limit = limit
    return pool


def test_a_check_prefers_an_idle_lane_that_already_ran_its_family() -> None:
    async def scenario() -> tuple[Target, Target, Target]:
        factory = Lanes()
        pool = await opened(factory, limit=2)
        lane_a = await pool.acquire("family_a")
        lane_b = await pool.acquire("family_b")
        await pool.release(lane_b, spoiled=False)  # first in the idle list
        await pool.release(lane_a, spoiled=False)
        again = await pool.acquire("family_a")
        await pool.close()
        return lane_a, lane_b, again

    lane_a, lane_b, again = asyncio.run(scenario())
    assert lane_a is not lane_b and again is lane_a


def test_a_check_whose_result_races_the_cancellation_is_not_reported_as_finished(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An interrupt ends the adapters and cancels the run in one step; the check then sees its adapter
    # gone at the same moment as the cancellation, and Python 3.11's wait_for hands back that error as
    # if the check had finished. Such a result was caused by the interrupt, so it is not a finished check.
    from dsweb_ref.certification.targets import TargetError

    loop_future: list[asyncio.Future[None]] = []
    waiting = asyncio.Event()

    async def quick(ctx: CheckContext) -> None:
        pass

    async def racing(ctx: CheckContext) -> None:
        fut = asyncio.get_running_loop().create_future()
        loop_future.append(fut)
        waiting.set()
        await fut

    specs = [spec("a.first", quick, slot="alone"), spec("a.racing", racing, slot="alone")]
    monkeypatch.setattr(checks, "all_checks", lambda: list(specs))
    seen: list[str] = []

    async def interrupted() -> None:
        lanes = Lanes()
        task = asyncio.ensure_future(
            suite.run_suite(lanes(), lanes=lanes, jobs=2, progress=lambda r: seen.append(r.check.id))
        )
        await waiting.wait()
        loop_future[0].set_exception(TargetError("the adapter exited"))  # what terminating the adapters does
        task.cancel()  # in the same step, as the signal handler does
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    assert seen == ["a.first"]


class GatedLanes(Lanes):
    """Lanes whose hello (after the first one's) waits for ``opening`` to be set; ``started`` counts them."""

    def __init__(self) -> None:
        super().__init__()
        self.opening = asyncio.Event()
        self.started = 0

    def __call__(self) -> Target:
        target = super().__call__()
        if len(self.made) > 1:
            said = target.hello
            lanes = self

            async def hello() -> Any:
                lanes.started += 1
                await lanes.opening.wait()
                return await said()

            target.hello = hello  # type: ignore[method-assign]
        return target


async def settle() -> None:
    """Let every task that can run, run (a ready waiter acts within a few loop turns)."""
    for _ in range(50):
        await asyncio.sleep(0)


def test_lanes_start_one_at_a_time() -> None:
    """Eight lanes starting at once spent on adapter start-ups the CPU the running checks needed."""

    async def scenario() -> tuple[int, int, int]:
        factory = GatedLanes()
        pool = await opened(factory, limit=4)
        first = await pool.acquire("a")
        waiting = [asyncio.ensure_future(pool.acquire("a")) for _ in range(3)]
        await settle()
        while_one_starts = factory.started
        factory.opening.set()
        lanes = [first, *await asyncio.gather(*waiting)]
        made = len(factory.made)
        distinct = len({id(lane) for lane in lanes})
        await pool.close()
        return while_one_starts, made, distinct

    while_one_starts, made, distinct = asyncio.run(scenario())
    assert while_one_starts == 1  # the two other waiters did not start lanes of their own meanwhile
    assert made == 4 and distinct == 4  # once it was up, the others were started (the limit is 4)


def test_a_warm_up_family_waits_for_its_warm_lanes_instead_of_warming_a_third(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(suite, "WARM_UP_LANES", {"heavy": 2})

    async def scenario() -> tuple[set[int], int, int, int]:
        factory = Lanes()
        pool = await opened(factory, limit=4)
        lanes = [await pool.acquire("light") for _ in range(4)]  # four lanes, none warm
        for lane in lanes:
            await pool.release(lane, spoiled=False)
        warm = [await pool.acquire("heavy"), await pool.acquire("heavy")]  # both busy from here
        third = asyncio.ensure_future(pool.acquire("heavy"))
        await settle()
        waited = not third.done()  # two cold lanes are idle, yet it waits for a warm one
        await pool.release(warm[1], spoiled=False)
        got = await third
        await pool.release(warm[0], spoiled=False)
        await pool.release(got, spoiled=False)
        await pool.close()
        return {id(w) for w in warm}, id(got), int(waited), len(factory.made)

    warm, got, waited, made = asyncio.run(scenario())
    assert waited and got in warm and made == 4


def test_a_warm_lane_is_kept_for_its_family_while_one_of_its_checks_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The many short checks of other families took the evidence family's warm lanes as they came free, so its
    checks waited for the end of the phase and trailed it on two lanes (a second of the run's wall time)."""
    monkeypatch.setattr(suite, "WARM_UP_LANES", {"heavy": 1})

    async def scenario() -> tuple[bool, bool, bool]:
        factory = Lanes()
        pool = await opened(factory, limit=2)
        warm = await pool.acquire("heavy")
        busy = await pool.acquire("light")  # both lanes in use from here
        light = asyncio.ensure_future(pool.acquire("light"))  # waits first
        await settle()
        heavy = asyncio.ensure_future(pool.acquire("heavy"))
        await settle()
        await pool.release(warm, spoiled=False)
        await settle()
        heavy_got_it = heavy.done() and heavy.result() is warm
        light_still_waits = not light.done()
        await pool.release(busy, spoiled=False)
        light_got_the_other = (await light) is busy
        await pool.release(heavy.result(), spoiled=False)
        await pool.release(busy, spoiled=False)
        await pool.close()
        return heavy_got_it, light_still_waits, light_got_the_other

    assert asyncio.run(scenario()) == (True, True, True)


def test_two_capped_families_sharing_a_warm_lane_never_wait_for_each_other(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lane warm for two capped families, each with a check waiting: were it kept for the other family in
    both directions, neither could take it (and neither may warm another lane): both would wait for ever."""
    monkeypatch.setattr(suite, "WARM_UP_LANES", {"a": 1, "b": 1})

    async def scenario() -> tuple[bool, bool]:
        factory = Lanes()
        pool = await opened(factory, limit=1)
        lane = await pool.acquire("a")
        await pool.release(lane, spoiled=False)
        lane = await pool.acquire("b")  # the one lane is now warm for both
        waiting = [asyncio.ensure_future(pool.acquire(f)) for f in ("a", "b")]
        await settle()
        await pool.release(lane, spoiled=False)
        await settle()
        taken = [task for task in waiting if task.done()]  # one family takes it at once, the other waits
        one_at_once = len(taken) == 1 and taken[0].result() is lane
        await pool.release(lane, spoiled=False)
        both = await asyncio.wait_for(asyncio.gather(*waiting), 5)  # the deadlock: never both
        await pool.release(lane, spoiled=False)
        await pool.close()
        return one_at_once, all(got is lane for got in both)

    assert asyncio.run(scenario()) == (True, True)


def test_a_queued_check_of_a_warm_up_family_takes_the_next_run_slot_first() -> None:
    """Run slots go in arrival order, except to a check of a family held to a few warm lanes: queued behind
    sixty short checks it would start only near the end of the phase."""

    async def scenario() -> list[str]:
        slots = suite._Slots(1)
        got: list[str] = []
        release = asyncio.Event()

        async def take(name: str, first: bool) -> None:
            async with slots.slot(first=first):
                got.append(name)
                await release.wait()

        holder = asyncio.ensure_future(take("holder", False))
        await settle()
        waiters = [asyncio.ensure_future(take(n, f)) for n, f in (("light 1", False), ("light 2", False),
                                                                    ("heavy", True))]
        await settle()
        release.set()
        await asyncio.gather(holder, *waiters)
        return got

    assert asyncio.run(scenario()) == ["holder", "heavy", "light 1", "light 2"]


def test_a_run_slot_handed_to_a_cancelled_check_passes_on() -> None:
    """A waiter cancelled in the step its slot was handed to it passes the slot on; else the run has one
    slot fewer from then on (with one slot, it hangs)."""

    async def scenario() -> tuple[bool, bool]:
        slots = suite._Slots(1)
        inside = asyncio.Event()
        leave = asyncio.Event()
        doomed: list[asyncio.Task[None]] = []

        async def hold() -> None:
            async with slots.slot(first=False):
                inside.set()
                await leave.wait()
            doomed[0].cancel()  # the same step that handed it the slot: it never ran with it

        async def wait_only() -> None:
            async with slots.slot(first=False):
                pass

        holder = asyncio.ensure_future(hold())
        await inside.wait()
        doomed.append(asyncio.ensure_future(wait_only()))
        await settle()
        after = asyncio.ensure_future(wait_only())
        await settle()
        leave.set()
        await holder
        with contextlib.suppress(asyncio.CancelledError):
            await doomed[0]
        await asyncio.wait_for(after, 5)
        third = asyncio.ensure_future(wait_only())
        await asyncio.wait_for(third, 5)  # the slot came back to the pool: no slot was lost
        return doomed[0].cancelled(), third.done()

    assert asyncio.run(scenario()) == (True, True)


def test_in_process_lanes_are_not_held_to_a_few_warm_ones() -> None:
    """The segmenters load once per process, so in-process lanes share one warm-up: capping the evidence
    family at two of them only made its checks trail the run. Adapter processes stay capped."""
    from dsweb_ref.certification.adapter_protocol import CAP_EVIDENCE_SEARCH
    from dsweb_ref.certification.targets import reference_target

    in_process = suite._Lanes(reference_target(), reference_target, {})
    stand_in = Lanes()
    other = suite._Lanes(stand_in(), stand_in, {})
    assert not in_process.capped(CAP_EVIDENCE_SEARCH)
    assert other.capped(CAP_EVIDENCE_SEARCH) and not other.capped("web_search")


def test_a_warm_up_family_holds_no_more_run_slots_than_its_lanes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Queued checks of a warm-up family wait outside the run's slots, so other checks still start: here
    every heavy check can only finish once the light one (last in the catalogue) has run; were the heavy
    ones to hold all three slots, none would finish."""
    monkeypatch.setattr(suite, "WARM_UP_LANES", {"heavy": 2})
    light_ran = asyncio.Event()
    used: list[int] = []

    async def heavy(ctx: CheckContext) -> None:
        used.append(id(ctx.target))
        await light_ran.wait()

    async def light(ctx: CheckContext) -> None:
        light_ran.set()

    def heavy_spec(check_id: str, run: Run) -> CheckSpec:
        return CheckSpec(Check(check_id, check_id, "000", "heavy"), ("web_search",), "api", run)

    specs = [*(heavy_spec(f"a.h{n}", heavy) for n in range(1, 6)), spec("b.light", light)]
    report, _ = run(specs, monkeypatch, jobs=3, check_timeout=5)
    assert {r.check.id: r.outcome for r in report.results} == dict.fromkeys([s.check.id for s in specs],
                                                                              Outcome.PASSED)
    assert len(set(used)) <= 2  # five heavy checks, two warm lanes
