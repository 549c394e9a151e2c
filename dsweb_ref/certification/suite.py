"""Run the checks against one target, each against a fresh embedded emulator, and build a Report.

Per check: skip it when the target lacks a required capability (never a pass), start a new
emulator (no state leaks between checks), configure the target for it, run the check under an
overall deadline, and turn the result into a :class:`~.model.CheckResult`. A check that applies
to any search protocol runs once per protocol the target declares (Search API, then Messages),
each against its own emulator, and fails if any run fails; its reason names the protocol. A
target that crashes, times out or breaks the protocol gives ``error`` results, never a hang.

Checks mostly wait (on sockets, gates and timers), so up to ``jobs`` of them run at once, each on a
lane of its own (a target instance: one adapter process per lane) with its own emulator. Phases keep
apart what must not overlap: checks marked ``alone`` run one by one, then the bulk side by side, then
the timing checks (``quiet``) side by side with one another only; for an adapter, whose implementation
computes in processes of its own, the timing checks run beside the bulk (:func:`_quiet_beside_bulk`).
The report keeps catalogue order.

One process runs on one core at a time (its interpreter lock), so the few checks that compute more
than they wait (marked ``process="own"``) each run in a worker process of their own beside all that
(:mod:`.offload`): one process for all of them would hold one core for their sum. The quiet phase does
not wait for the workers: ``quiet`` keeps CPU-bound checks off the event loop and interpreter lock the
timing checks measure with (and an in-process target runs on); a worker has neither, only another core,
and the timing verdicts are judged against the load measured in the run (:mod:`.calibration`), which
counts whatever the workers withhold. For the same reason an in-process target's timing checks go to one
worker of their own, started after hello, when other checks run here: they keep a loop and a lock of their
own and run beside the bulk instead of after it (the run's wall time becomes about its longest check).
Every other check of the bulk goes to one more worker too (:func:`_bulk_remote`), at most ``jobs`` checks at once
there: this process alone kept one core busy for seconds after every other worker had finished.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import heapq
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from .._version import __version__
from ..emulator import Emulator
from ..emulator.server import DEFAULT_API_KEY
from . import checks
from .adapter_protocol import CAP_EVIDENCE_SEARCH
from .checks import CheckContext, CheckFailed, CheckSpec, differential
from .checks._base import PROTOCOL_LABELS, SearchProtocol, Slot
from .known_failures import KnownFailures
from .model import CheckResult, Outcome, Report, TargetInfo
from .offload import Worker
from .profiles import find_profile, on_request, profile_verdicts
from .sandbox import ProxyTraps
from .targets import CallStalled, Hello, Target, TargetConfig, TargetError, frame_place, warm_reference

__all__ = [
    "CHECK_TIMEOUT", "TargetFactory", "UnknownCheckError", "default_jobs", "run_suite", "select_checks", "select_ids"
]

CHECK_TIMEOUT = 60.0  # seconds one check may take in total
_BULK_SPLIT = 16  # below this, a few side-by-side checks: a worker's start-up and imports would not pay off
Progress = Callable[[CheckResult], None]


class UnknownCheckError(ValueError):
    pass


def _selects(check_id: str, wanted: str) -> bool:
    return check_id == wanted or check_id.startswith(wanted.rstrip(".") + ".")


def _on_request(check_id: str) -> bool:
    """Whether ``check_id`` is a check of profiles run only on request (an endpoint check id never is)."""
    spec = checks.REGISTRY.get(check_id)
    return spec is not None and on_request(spec.profiles)


def select_ids(ids: Sequence[str], only: Sequence[str]) -> tuple[list[str], list[str]]:
    """The ``ids`` that equal or start with one of ``only`` (``search.merge``), in ``ids`` order, and
    the entries of ``only`` that select nothing. A check run on request (:func:`_on_request`) is chosen only by
    an entry that selects no other kind of check: its whole id, or a prefix of such checks alone."""
    flagged = {i for i in ids if _on_request(i)}
    asked = [o for o in only if all(i in flagged for i in ids if _selects(i, o))]
    chosen = [i for i in ids if any(_selects(i, o) for o in (asked if i in flagged else only))]
    unknown = [o for o in only if not any(_selects(i, o) for i in ids)]
    return chosen, unknown


def select_checks(only: Sequence[str] | None = None, profiles: Sequence[str] | None = None) -> list[CheckSpec]:
    """All checks, or those whose id equals or starts with one of ``only`` (``search.merge``); with
    ``profiles``, only the checks of those profiles (UnknownProfileError for an unknown name). A check of
    profiles run on request (:func:`~.profiles.on_request`) is chosen only by one of them named in ``profiles``
    or as :func:`select_ids` says (by its whole id, for one), never by a run that names nothing."""
    specs = checks.all_checks()  # looked up at call time, so a patched catalogue is seen and then undone
    if profiles:
        names = {find_profile(name).name for name in profiles}
        specs = [s for s in specs if names & set(s.profiles)]
    elif not only:
        specs = [s for s in specs if not on_request(s.profiles)]
    if not only:
        return specs
    chosen, unknown = select_ids([s.check.id for s in specs], only)
    if unknown:
        raise UnknownCheckError(f"unknown check ids: {', '.join(unknown)}")
    return [s for s in specs if s.check.id in chosen]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


_Run = tuple[Outcome, str, dict[str, object]]
TargetFactory = Callable[[], Target]


def default_jobs() -> int:
    """How many checks run at once by default: checks mostly wait on sockets and timers, not the CPU,
    so a few lanes per core pay off; more than eight only add start-up cost."""
    return max(1, min(8, 4 * (os.cpu_count() or 1)))


# Families (the capability a check exercises) whose first call warms an adapter process up for a second or
# more, and the most lanes that pay it: the evidence pipeline loads word segmenters and a ranker. Eight lanes
# each warming up for ten short checks spent more CPU than all of those checks together.
WARM_UP_LANES: dict[str, int] = {CAP_EVIDENCE_SEARCH: 2}


@dataclass(frozen=True, slots=True)
class _Shared:
    """What every check of one run shares: the proxy traps and the threads its blocking waits use (its
    own pool, so checks waiting on gates never starve an in-process target of the loop's default pool)."""

    proxies: ProxyTraps
    executor: ThreadPoolExecutor


class _Lanes:
    """The targets checks run on. The first is the caller's; ``factory`` makes more, up to ``limit`` open
    at once, each started with the run's environment and saying hello itself.

    A new lane costs what the first one took to start (an adapter process: its imports), so a check
    finding no idle lane first waits that long for one to free up, and only then starts another, one
    lane at a time: short checks reuse a few lanes, long waits get their own. :meth:`prewarm` starts
    lanes ahead, off the critical path, for the quiet phase. A check prefers an idle lane that already
    ran a check of its family (the capability it exercises): an adapter process warms up per family,
    and a family listed in :data:`WARM_UP_LANES` (the evidence pipeline loads word segmenters) never
    warms more lanes than listed: its checks wait for a warm one. A lane that gave an error result
    is set aside (closed at the end) when a factory can replace it, so one broken call spoils one
    check, not whichever checks share its lane later."""

    def __init__(self, first: Target, factory: TargetFactory | None, environment: dict[str, str]) -> None:
        self._first = first
        self._factory = factory
        self._in_process = (_recipe(first) or {}).get("kind") == "reference"
        self._environment = environment
        self._opened: list[Target] = []  # every lane started, in order (closed in reverse)
        self._idle: list[Target] = []
        self._live = 0
        self._changed = asyncio.Condition()
        self._warming: list[asyncio.Task[None]] = []
        self._open_cost = 0.0
        self._starting = 0  # lanes being started now
        self._grown_at = 0.0  # loop time the last lane start ended
        self._families: dict[int, set[str]] = {}  # id(lane) -> the families it ran (lanes in use only)
        self._family_gates: dict[str, asyncio.Semaphore] = {}
        self._waiting: collections.Counter[str] = collections.Counter()  # checks waiting for a lane, by family
        self.limit = 1
        self.hello: Hello | None = None

    async def first_hello(self) -> Hello:
        self._opened.append(self._first)
        self._live = 1
        started = time.monotonic()
        self._first.use_environment(self._environment)
        self.hello = await self._first.hello()
        self._open_cost = time.monotonic() - started
        self._idle.append(self._first)
        return self.hello

    async def _new(self) -> Target:
        assert self._factory is not None and self.hello is not None
        lane = self._factory()
        self._opened.append(lane)
        lane.use_environment(self._environment)
        hello = await lane.hello()
        if hello.capabilities != self.hello.capabilities:
            raise TargetError("another instance of the target declared other capabilities")
        return lane

    async def _opened_or_fewer(self) -> Target | None:
        """A new lane, or None when it could not start (the target then runs on the lanes it has)."""
        self._starting += 1
        try:
            return await self._new()
        except TargetError:
            async with self._changed:
                self._live -= 1
                if self._live == 0:
                    raise
                self.limit = self._live
            return None
        finally:
            self._starting -= 1
            self._grown_at = asyncio.get_running_loop().time()
            async with self._changed:
                self._changed.notify_all()

    def _warm_cap(self, family: str) -> int | None:
        """The most lanes ``family`` may warm up (None: any); only lanes the run makes are capped, and not
        in-process ones: those share this process's one warm-up (the segmenters load once per process)."""
        return WARM_UP_LANES.get(family) if self._factory is not None and not self._in_process else None

    @property
    def in_process(self) -> bool:
        """Whether the lanes are the reference in this process."""
        return self._in_process

    def capped(self, family: str) -> bool:
        """Whether ``family`` may warm up only a few lanes (its checks then go first for a run slot)."""
        return self._warm_cap(family) is not None

    def _warm_full(self, family: str) -> bool:
        """Whether ``family`` warms lanes up and already has as many warm lanes as it may: its checks
        then wait for one of those instead of warming another (see :data:`WARM_UP_LANES`)."""
        cap = self._warm_cap(family)
        return cap is not None and sum(family in ran for ran in self._families.values()) >= cap

    def _kept_for_others(self, lane: Target, family: str) -> bool:
        """Whether ``lane`` is a warm lane of another capped family whose checks wait for one, and not one of
        ``family``'s own: it is theirs then (else the many short checks of other families keep taking it and
        the capped family trails). A lane warm for both may go to either, so two such families never wait
        for each other."""
        ran = self._families.get(id(lane), set())
        return family not in ran and any(other != family and self._waiting[other] and self.capped(other)
                                         for other in ran)

    def _pick(self, family: str) -> Target | None:
        idle = [lane for lane in self._idle if not self._kept_for_others(lane, family)]
        warm = [lane for lane in idle if family in self._families.get(id(lane), ())]
        if not warm and (not idle or self._warm_full(family)):
            return None
        lane = warm[0] if warm else idle[0]
        self._idle.remove(lane)
        self._families.setdefault(id(lane), set()).add(family)
        return lane

    def family_gate(self, family: str) -> contextlib.AbstractAsyncContextManager[Any]:
        """Held while a check of ``family`` waits for and uses a lane: a warm-up family's checks take no
        more run slots at once than it has lanes, so they never hold slots other checks could use."""
        cap = self._warm_cap(family)
        if cap is None:
            return contextlib.nullcontext()
        return self._family_gates.setdefault(family, asyncio.Semaphore(cap))

    async def acquire(self, family: str = "") -> Target:
        loop = asyncio.get_running_loop()
        arrived = loop.time()
        async with self._changed:
            self._waiting[family] += 1
            try:
                while (lane := self._pick(family)) is None:
                    # One lane starts at a time, and only after a lane's start-up time without one freeing
                    # up: starting several at once spends the CPU the running checks need on start-ups
                    # the short checks never wait for.
                    can_grow = self._live < self.limit and not self._starting and not self._warm_full(family)
                    left = max(arrived, self._grown_at) + self._open_cost - loop.time()
                    if can_grow and left <= 0:
                        break
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), left if can_grow else None)
            finally:
                self._waiting[family] -= 1
                if not self._waiting[family] and self.capped(family):
                    self._changed.notify_all()  # the lanes kept for this family are anyone's again
            if lane is not None:
                return lane
            self._live += 1
        lane = await self._opened_or_fewer()
        if lane is None:
            return await self.acquire(family)
        self._families[id(lane)] = {family}
        return lane

    def prewarm(self, count: int) -> None:
        """Start lanes in the background until ``count`` (at most ``limit``) are open or starting."""
        while self._factory is not None and self._live < min(count, self.limit):
            self._live += 1
            self._warming.append(asyncio.ensure_future(self._warm()))

    async def _warm(self) -> None:
        with contextlib.suppress(TargetError):
            lane = await self._opened_or_fewer()
            if lane is not None:
                async with self._changed:
                    self._idle.append(lane)
                    self._changed.notify_all()  # a waiter of another family may be the one this lane suits

    async def release(self, lane: Target, *, spoiled: bool) -> None:
        async with self._changed:
            if spoiled and self._factory is not None:
                self._live -= 1
                self._families.pop(id(lane), None)  # no longer a warm lane of anything
            else:
                self._idle.append(lane)
            self._changed.notify_all()  # a waiter of another family may be the one this lane suits

    async def close(self) -> None:
        for task in self._warming:
            task.cancel()
        await asyncio.gather(*self._warming, return_exceptions=True)
        # In reverse: an in-process lane restores the environment it found, so the first one restores last.
        for lane in reversed(self._opened):
            await lane.close()


class _InOrder:
    """Collects results by catalogue index; hands each to ``progress`` in catalogue order as soon as
    every earlier one is in (with the known failures applied first)."""

    def __init__(
        self,
        results: list[CheckResult | None],
        known: KnownFailures | None,
        progress: Progress | None,
        finished: Progress | None = None,
    ) -> None:
        self._results = results
        self._known = known
        self._progress = progress
        self._finished = finished
        self._next = 0

    def done(self, index: int, result: CheckResult) -> None:
        if self._finished is not None:
            self._finished(result)
        if self._known is not None:
            result = self._known.apply([result])[0]
        self._results[index] = result
        while self._next < len(self._results) and (ready := self._results[self._next]) is not None:
            self._next += 1
            if self._progress is not None:
                self._progress(ready)

    def flush(self) -> None:
        """After an interruption: report every finished check not reported yet, still in catalogue order."""
        pending, self._next = self._results[self._next :], len(self._results)
        failure: BaseException | None = None
        for result in pending:
            if result is None or self._progress is None:
                continue
            try:  # a progress that raises (the CLI's, once interrupted) must not hide the later results
                self._progress(result)
            except BaseException as exc:
                failure = failure or exc
        if failure is not None:
            raise failure


class _Slots:
    """At most ``width`` checks at once, taken in arrival order, except that a check of a family held to a few
    warm lanes (:data:`WARM_UP_LANES`) goes before the others: on those few lanes it then runs through the whole
    phase beside the rest, instead of queueing behind every other check and trailing the phase on two lanes."""

    def __init__(self, width: int) -> None:
        self._free = width
        self._queue: list[tuple[int, int, asyncio.Future[None]]] = []  # (0 first / 1 other, arrival, waiter)
        self._arrivals = 0

    @contextlib.asynccontextmanager
    async def slot(self, *, first: bool) -> AsyncIterator[None]:
        if self._free and not self._queue:
            self._free -= 1
        else:
            self._arrivals += 1
            waiter = asyncio.get_running_loop().create_future()
            heapq.heappush(self._queue, (0 if first else 1, self._arrivals, waiter))
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():  # handed the slot as it was cancelled: pass it on
                    self._hand_on()
                raise
        try:
            yield
        finally:
            self._hand_on()

    def _hand_on(self) -> None:
        """A slot came free: to the first live waiter, or back to the pool."""
        while self._queue:
            _, _, waiter = heapq.heappop(self._queue)
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1


async def _run_phase(
    specs: list[CheckSpec],
    chosen: list[int],
    width: int,
    pool: _Lanes,
    hello: Hello,
    limit: float,
    shared: _Shared,
    report: _InOrder,
    note: str = "",
) -> None:
    """Run ``specs[i]`` for each ``i`` in ``chosen``, at most ``width`` at once, each on a lane of its own;
    they start in catalogue order, except that a capped family's checks go first for a free slot
    (:class:`_Slots`). A ``note`` goes into each result's details (key ``worker``)."""
    gate = _Slots(width)

    async def one(index: int) -> None:
        spec = specs[index]
        result = _skipped(spec, hello)
        if result is None:
            family = spec.check.capability  # what an adapter warms up for (evidence: segmenters)
            async with pool.family_gate(family), gate.slot(first=pool.capped(family)):
                try:
                    lane = await pool.acquire(family)
                except TargetError as exc:
                    result = CheckResult(spec.check, Outcome.ERROR, f"hello failed: {exc}")
                else:
                    result = await _run_one(spec, lane, hello, limit, shared)
                    await pool.release(lane, spoiled=result.outcome is Outcome.ERROR)
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            # Python 3.11's wait_for can hand back a result that came with the cancellation (an interrupt
            # ends the adapters and cancels in one step); a check ended by the interrupt did not finish.
            raise asyncio.CancelledError
        if note:
            result = replace(result, details={**result.details, "worker": note})
        report.done(index, result)

    await asyncio.gather(*(one(i) for i in chosen))


def _recipe(target: Target) -> dict[str, Any] | None:
    """How another process makes ``target`` (its ``recipe()``), or None (a stand-in has no such method)."""
    make = getattr(target, "recipe", None)
    return make() if callable(make) else None


def _remote(specs: list[CheckSpec], target: Target) -> list[int]:
    """The checks that run in worker processes, one each: those marked ``process="own"``, when the target can
    be made in another process. When nothing else runs here, the first of them stays here (a worker beside
    nothing only adds its start-up)."""
    own = [i for i, s in enumerate(specs) if s.process == "own"]
    if not own or _recipe(target) is None:
        return []
    return own[1:] if len(own) == len(specs) else own


def _quiet_remote(specs: list[CheckSpec], hello: Hello, target: Target, elsewhere: set[int]) -> list[int]:
    """The timing checks (``quiet``) an in-process target runs, for one worker of their own, when a check of
    another slot runs here beside them: there they and the target have an event loop and an interpreter lock
    of their own while this process computes the bulk, instead of waiting for the bulk to end. None when
    nothing else runs here (the worker would only add its start-up), and for an adapter: it computes in
    processes of its own already, and a worker would start a second set of them, CPU the bulk needs (the
    example adapter took 10.8 s with such a worker, 9.6 s without, on the same loaded machine)."""
    if not _in_process(target):
        return []
    runs = _runs_here(specs, hello, elsewhere)
    quiet = [i for i in runs if specs[i].slot == "quiet"]
    return quiet if quiet and len(quiet) < len(runs) else []


def _bulk_remote(specs: list[CheckSpec], hello: Hello, target: Target, elsewhere: set[int]) -> list[int]:
    """Every other side-by-side check (``shared``) an in-process target runs here, for one more worker, when
    at least :data:`_BULK_SPLIT` of them are left: this process runs each of them under one interpreter lock,
    so alone it kept one core busy for seconds after every worker had finished while the other core idled.
    Alternate ones, not the latter half: the catalogue keeps a family's checks together and the costly ones
    come in families (seed 002's pipeline), so the latter half gave the worker a second more CPU than this
    process, which then waited with a core idle (median 7.2 s against 6.75 s over ten runs each). Not for an
    adapter, for the reason :func:`_quiet_remote` gives, nor on one core, where it would only contend."""
    if not _in_process(target) or _cores() < 2:
        return []
    bulk = [i for i in _runs_here(specs, hello, elsewhere) if specs[i].slot == "shared"]
    return bulk[1::2] if len(bulk) >= _BULK_SPLIT else []


def _quiet_beside_bulk(target: Target) -> bool:
    """Whether the timing checks (``quiet``) run beside the bulk instead of after it: for an adapter. Its
    implementation computes in processes of its own, so the bulk here only adds lag to this process's stamps,
    which the timing verdicts are judged against (:mod:`.calibration`, with what the load may excuse capped
    per claim); after the bulk they added their longest wait to the run (15.2 s against 10.9 s for the
    example adapter). Not for an in-process target, which runs on this loop and under this lock: its timing
    checks go to a worker of their own (:func:`_quiet_remote`)."""
    return _kind(target) == "adapter"


def _in_process(target: Target) -> bool:
    """Whether ``target`` is the reference in this process (a recipe of kind ``reference``)."""
    return _kind(target) == "reference"


def _kind(target: Target) -> str | None:
    """The kind of ``target``'s recipe (``reference``, ``adapter``), None when another process cannot start it."""
    return (_recipe(target) or {}).get("kind")


def _runs_here(specs: list[CheckSpec], hello: Hello, elsewhere: set[int]) -> list[int]:
    """The checks this process would run: neither skipped nor in a worker."""
    return [i for i, s in enumerate(specs) if _skipped(s, hello) is None and i not in elsewhere]


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def _worker_deadline(remote: list[int], specs: list[CheckSpec], limit: float, width: int = 1) -> float:
    """Seconds a worker may take for ``remote``, each check's runs (one per search protocol) each within
    ``limit``, plus a minute to start: one after another, or with at least ``width`` at once (the bulk's
    worker runs ``jobs``, the others all) as long as a fair share of their sum and the longest one."""
    costs = [specs[i].limit(limit) * (2 if specs[i].provider == "any" else 1) for i in remote]
    if width <= 1:
        return sum(costs) + 60.0
    return sum(costs) / width + max(costs, default=0.0) + 60.0


def _job(
    specs: list[CheckSpec], remote: list[int], target: Target, limit: float, jobs: int | None = None
) -> dict[str, Any]:
    """A worker's job; ``jobs``: how many of its checks may run at once (None: all)."""
    return {"ids": [specs[i].check.id for i in remote], "seed": differential.current_seed(),
            "check_timeout": limit, "target": _recipe(target), "jobs": jobs}


@dataclass(frozen=True, slots=True)
class _Here:
    """The checks this process runs, in their phases, and beside them what the workers run."""

    specs: list[CheckSpec]
    pool: _Lanes
    hello: Hello
    limit: float
    shared: _Shared
    report: _InOrder
    beside_bulk: bool = False

    async def phases(self, indices: list[int]) -> None:
        async def phase(slot: Slot) -> None:
            chosen = [i for i in indices if self.specs[i].slot == slot]
            width = 1 if slot == "alone" else self.pool.limit
            await _run_phase(self.specs, chosen, width, self.pool, self.hello, self.limit, self.shared, self.report)

        await phase("alone")
        if self.beside_bulk:  # an adapter: the timing checks beside the bulk (see _quiet_beside_bulk)
            await _together(phase("shared"), phase("quiet"))
        else:
            await phase("shared")
            if self.pool.in_process and any(self.specs[i].slot == "quiet" for i in indices):
                warm_reference()  # before the timing checks, not in their windows (usually warm by now already)
            await phase("quiet")

    async def beside(self, workers: list[tuple[Worker, list[int]]]) -> None:
        """The other checks here while each worker runs its checks; the quiet phase does not wait for the
        workers: they hold other cores, not this process's interpreter lock (see the module docstring)."""
        here_done = asyncio.Event()
        fallback = asyncio.Lock()
        run = asyncio.current_task()
        elsewhere = {i for _, remote in workers for i in remote}

        async def local() -> None:
            await self.phases([i for i in range(len(self.specs)) if i not in elsewhere])
            here_done.set()

        async def collect(worker: Worker, remote: list[int]) -> None:
            wanted = {self.specs[i].check.id: i for i in remote}
            bound = _worker_deadline(remote, self.specs, self.limit, self.pool.limit)
            try:
                async with asyncio.timeout(bound):
                    async for result in worker.results():
                        index = wanted.pop(result.check.id, None)
                        if worker.terminated or (run is not None and run.cancelling()):
                            raise asyncio.CancelledError  # it came with the interrupt: it did not finish before
                        if index is not None:
                            self.report.done(index, replace(result, check=self.specs[index].check))
                        if not wanted:
                            break  # every result is in: its shutdown is close()'s affair, not the run's
                    why = ""
            except TimeoutError:  # a hung worker must not hang the run
                worker.terminate()
                why = f"the check worker did not finish within {bound:g}s"
            if wanted:
                why = why or await worker.why_ended()
                await here_done.wait()  # run here as a phase of their own: nothing CPU-bound beside the quiet
                left = sorted(wanted.values())
                note = f"{why}; run in the suite's process instead"
                async with fallback:  # one dead worker's checks at a time: never the bulk's beside the quiet
                    await _run_phase(self.specs, left, self.pool.limit, self.pool, self.hello, self.limit,
                                     self.shared, self.report, note)

        await _together(local(), *(collect(worker, remote) for worker, remote in workers))


async def _together(*steps: Coroutine[Any, Any, None]) -> None:
    """Run ``steps`` side by side; when one fails (or the caller is cancelled), the others are cancelled
    and awaited before the error goes on."""
    tasks = [asyncio.ensure_future(step) for step in steps]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def within(step: Awaitable[None], limit: float) -> None:
    """``step`` under ``limit`` seconds, as ``asyncio.wait_for``, its error retrieved even when it ends in one
    while being cancelled (an interrupt: its adapter was ended first). Python 3.11's wait_for drops such an error,
    and the loop then prints "Task exception was never retrieved" with its traceback at exit (CI of 3d82b60: an
    interrupted certify's one-line stderr)."""
    task = asyncio.ensure_future(step)
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
    await asyncio.wait_for(task, limit)


async def _run_protocol(
    spec: CheckSpec, target: Target, hello: Hello, provider: SearchProtocol, limit: float, shared: _Shared
) -> _Run:
    """One run of ``spec`` over one search protocol, against a fresh emulator."""
    limit = spec.limit(limit)
    emu = Emulator(api_keys=(DEFAULT_API_KEY,))
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(shared.executor, emu.start)
    except Exception as exc:
        return Outcome.ERROR, f"could not start the emulator: {exc!r}", {}
    try:
        config = TargetConfig(
            messages_base=emu.messages_base, tools_base=emu.tools_base, api_key=DEFAULT_API_KEY, provider=provider,
            openai_base=emu.openai_base,
        )
        await target.configure(config)
        context = CheckContext(emu, target, hello, config, shared.proxies, shared.executor)
        await within(spec.run(context), limit)
    except CheckFailed as exc:
        return Outcome.FAILED, exc.reason, dict(exc.details)
    except CallStalled as exc:  # whose wait it was: the emulator's account tells a hung server from a hung client
        return Outcome.ERROR, f"target error: {exc}; {emulator_account(emu)}", {}
    except TargetError as exc:
        return Outcome.ERROR, f"target error: {exc}", {}
    except TimeoutError:
        return Outcome.ERROR, f"check did not finish within {limit:g}s; {emulator_account(emu)}", {}
    except Exception as exc:  # a bug in a check or a target must not stop the suite
        return Outcome.ERROR, f"check raised {exc!r}", {}
    finally:
        emu.faults.release_gates()
        await loop.run_in_executor(shared.executor, emu.stop)
    return Outcome.PASSED, "", dict(context.notes)  # e.g. a timing claim met only "late under load"


def emulator_account(emu: Emulator) -> str:
    """The emulator's side of a call that did not answer: its unanswered requests (route, age, whether an
    answer was started), its open connections, and where its server thread is."""
    frames = emu.server_frames()
    ours = [f for f in frames if "/emulator/" in f.f_code.co_filename.replace("\\", "/")]
    shown = [*ours[-1:], *(f for f in frames[-1:] if f not in ours[-1:])]  # the innermost may be the emulator's
    where = " > ".join(frame_place(f) for f in shown) or "not running"
    seen = emu.log.glance()
    if seen is None:
        return f"the emulator: its request log stayed locked, its thread at {where}"
    waiting, connections = seen
    now = time.monotonic()
    said = [f"{r.route or r.path} {now - r.started:.1f}s {'answering' if r.status is not None else 'unanswered'}"
            for r in waiting[:4]]
    return (f"the emulator: {len(waiting)} request(s) in progress{(' (' + ', '.join(said) + ')') if said else ''}, "
            f"{connections} connection(s) open, its thread at {where}")


def _combine(runs: list[tuple[SearchProtocol, _Run]]) -> _Run:
    """One verdict for a check run over several search protocols: failed if any run failed, else
    error if any errored; the reason names each protocol that did not pass."""
    outcomes = {run[0] for _, run in runs}
    outcome = next((o for o in (Outcome.FAILED, Outcome.ERROR) if o in outcomes), Outcome.PASSED)
    reason = "; ".join(f"[{PROTOCOL_LABELS[p]}] {r}" for p, (o, r, _) in runs if o is not Outcome.PASSED)
    details: dict[str, object] = {"protocols": {p: o.value for p, (o, _, _) in runs}}
    details.update({p: d for p, (_, _, d) in runs if d})
    return outcome, reason, details


def _skipped(spec: CheckSpec, hello: Hello) -> CheckResult | None:
    missing = spec.missing(hello.capabilities)
    if not missing:
        return None
    return CheckResult(spec.check, Outcome.SKIPPED, f"target does not declare: {', '.join(missing)}", {}, 0.0)


async def _run_one(spec: CheckSpec, target: Target, hello: Hello, limit: float, shared: _Shared) -> CheckResult:
    started = time.monotonic()
    protocols = spec.providers_for(hello.capabilities)
    runs = [(p, await _run_protocol(spec, target, hello, p, limit, shared)) for p in protocols]
    outcome, reason, details = runs[0][1] if len(runs) == 1 else _combine(runs)
    if spec.provider == "any" and len(runs) == 1:
        details = {"protocols": {runs[0][0]: outcome.value}, **details}
    return CheckResult(spec.check, outcome, reason, details, time.monotonic() - started)


async def run_suite(
    target: Target,
    *,
    only: Sequence[str] | None = None,
    known_failures: KnownFailures | None = None,
    progress: Progress | None = None,
    check_timeout: float = CHECK_TIMEOUT,
    kind: str = "implementation",
    profiles: Sequence[str] | None = None,
    jobs: int = 1,
    lanes: TargetFactory | None = None,
    finished: Progress | None = None,
) -> Report:
    """Run the selected checks; closes ``target`` (and every lane) at the end. The report carries a
    verdict for every profile (see :mod:`.profiles`); ``profiles`` restricts the run to their checks.

    Up to ``jobs`` checks run at once, each on a lane of its own: ``target`` is the first lane, and
    ``lanes`` makes a further target whenever one more is needed (each says hello itself; without
    ``lanes`` the run is sequential). Checks run in three phases (see :data:`~.checks.CheckSpec.slot`):
    ``alone`` ones one by one, then ``shared`` ones side by side, then ``quiet`` ones side by side with
    one another only (for an adapter, ``shared`` and ``quiet`` side by side: :func:`_quiet_beside_bulk`).
    The report lists the checks in catalogue order, and ``progress`` is called once
    per finished check in catalogue order too, as soon as every earlier check has finished, so what
    it prints does not depend on timing; if the run is cancelled, it is still called (in catalogue
    order) for each check that had finished. ``finished`` is called with each result the moment its check
    finishes, in any order (known failures not applied).

    A concurrent run (``jobs`` >= 2 and ``lanes``) hands each check marked ``process="own"`` to a worker
    process of its own (:mod:`.offload`) when ``target`` has a ``recipe()`` and some other check runs here
    beside them; their results join the report as they arrive. A check whose worker does not start runs
    here with the others; should a worker die, the checks it did not finish run here after the others (one
    dead worker's at a time), their details noting why (key ``worker``). With an in-process target (a
    ``recipe()`` of kind ``reference``), the timing checks (``quiet``) it runs go to one more worker, together,
    when other checks run here (:func:`_quiet_remote`), and on two cores or more every other one of its
    side-by-side checks to another, at most ``jobs`` at once there (:func:`_bulk_remote`)."""
    specs = select_checks(only, profiles)
    started_at = _now()
    results: list[CheckResult | None] = [None] * len(specs)
    hello: Hello | None = None
    hello_error = ""
    # Every proxy variable points at a trap from the target's start (see certification/sandbox.py).
    proxies = ProxyTraps()
    pool = _Lanes(target, lanes, proxies.environment())
    shared = _Shared(proxies, ThreadPoolExecutor(max_workers=4 * max(1, jobs) + 4, thread_name_prefix="certify"))
    report = _InOrder(results, known_failures, progress, finished)
    remote = _remote(specs, target) if lanes is not None and jobs >= 2 else []
    workers: list[tuple[Worker, list[int]]] = []
    try:
        # One worker per such check (each its own core, not one core for all of them), started first, so
        # their imports overlap this process's hello and first checks. A check whose worker does not start
        # runs here.
        for i in remote:
            worker = await Worker.start(_job(specs, [i], target, check_timeout))
            if worker is not None:
                workers.append((worker, [i]))
        try:
            hello = await pool.first_hello()
        except TargetError as exc:
            hello_error = f"hello failed: {exc}"
        if hello is None:
            for i, spec in enumerate(specs):
                report.done(i, CheckResult(spec.check, Outcome.ERROR, hello_error))
        else:
            pool.limit = max(1, jobs) if lanes is not None else 1
            elsewhere = {i for _, ids in workers for i in ids}

            async def hand(ids: list[int], width: int | None = None) -> None:
                """One worker for ``ids`` (none when empty); they run here when it does not start."""
                worker = await Worker.start(_job(specs, ids, target, check_timeout, width)) if ids else None
                if worker is not None:
                    workers.append((worker, ids))
                    elsewhere.update(ids)

            if lanes is not None and jobs >= 2:  # the bulk's half is chosen after the timing checks left
                await hand(_quiet_remote(specs, hello, target, elsewhere))
                await hand(_bulk_remote(specs, hello, target, elsewhere), jobs)
            pool.prewarm(sum(1 for i in _runs_here(specs, hello, elsewhere) if specs[i].slot == "quiet"))
            here = _Here(specs, pool, hello, check_timeout, shared, report, _quiet_beside_bulk(target))
            if not workers:
                await here.phases(list(range(len(specs))))
            else:
                await here.beside(workers)
    finally:
        try:
            report.flush()
        finally:  # lanes, traps and threads are released however the reporting ended
            await asyncio.gather(pool.close(), *(worker.close() for worker, _ in workers))
            proxies.close()
            shared.executor.shutdown(wait=False, cancel_futures=True)
    done = [r for r in results if r is not None]
    info = TargetInfo(
        kind=kind,
        description=target.describe(),
        name=hello.name if hello else "",
        version=hello.version if hello else "",
        capabilities=tuple(sorted(hello.capabilities)) if hello else (),
    )
    verdicts = profile_verdicts(checks.profile_members(info.capabilities), done, info.capabilities)
    return Report(__version__, info, tuple(done), started_at, _now(), verdicts)
