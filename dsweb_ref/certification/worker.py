"""The check worker: ``python -m dsweb_ref.certification.worker`` runs the checks a certification run hands
it (see :mod:`.offload`) and writes each result on stdout as one JSON line the moment it finishes.

Its stdin brings one JSON line: ``ids`` (the check ids), ``seed`` (the differential seed), ``check_timeout``
and ``target`` (a recipe: :func:`target_from_recipe`), and may bring ``jobs``. It runs them side by side
(at most ``jobs`` at once when given), each with the ordinary :func:`~.suite.run_suite` on a target of its
own. SIGTERM, SIGINT or the end of its stdin (the run
stopped, or died) cancel the checks and end its adapters' process groups; the exit status is then 130. No adapter
starts after that, no result is written, and a worker whose checks have not ended 10 s later kills its adapters'
groups, writes where it hung to stderr and exits 130 itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import json
import os
import signal
import sys
import threading
from collections.abc import Mapping
from typing import Any, TextIO

from ..emulator.server import quiet_cut_notes
from .checks.differential import seeded
from .model import CheckResult
from .suite import TargetFactory, run_suite
from .targets import AdapterTarget, Target, kill_adapters, reference_target, terminate_adapters

__all__ = ["target_from_recipe"]

EXIT_STOPPED = 130
# Seconds from a stop to the worker's forced exit, if its checks have not ended by then (they end in well under a
# second: a cancel, and the adapters' groups ended). A job may give "stop_grace".
STOP_GRACE_S = 10.0


def target_from_recipe(recipe: Mapping[str, Any]) -> TargetFactory:
    """A factory of the target a ``recipe()`` describes: ``{"kind": "reference"}``, or ``{"kind":
    "adapter", "command", "env", "hello_timeout", "call_timeout"}``; ValueError for any other."""
    kind = recipe.get("kind")
    if kind == "reference":
        return reference_target
    if kind == "adapter":
        command = str(recipe["command"])
        env = {str(k): str(v) for k, v in dict(recipe["env"]).items()}
        hello, call = float(recipe["hello_timeout"]), float(recipe["call_timeout"])

        def adapter() -> Target:
            return AdapterTarget(command, env=env, inherit_env=False, hello_timeout=hello, call_timeout=call)

        return adapter
    raise ValueError(f"no target can be made from the recipe kind {kind!r}")


def _watch_stdin(loop: asyncio.AbstractEventLoop, stop: Any) -> None:
    """Call ``stop`` on the loop once stdin ends: the run closed it, or the run's process is gone."""
    fd = sys.stdin.fileno()

    def wait() -> None:
        # os.read, not sys.stdin: a daemon thread blocked inside a buffered reader holds its lock, which
        # aborts the interpreter's shutdown.
        with contextlib.suppress(OSError):
            while os.read(fd, 4096):
                pass
        try:
            loop.call_soon_threadsafe(stop)
        except RuntimeError:  # the loop already finished: nothing left to stop
            pass

    threading.Thread(target=wait, name="worker-stdin", daemon=True).start()


async def serve(job: Mapping[str, Any], out: TextIO) -> None:
    """Run ``job``'s checks, writing each result to ``out`` as it finishes."""
    factory = target_from_recipe(job["target"])
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None

    stopping: list[threading.Timer] = []

    def stop() -> None:
        terminate_adapters()  # also: no adapter starts from now on
        task.cancel()
        if not stopping:
            grace = threading.Timer(float(job.get("stop_grace", STOP_GRACE_S)), _stop_now, (loop,))
            grace.daemon = True
            stopping.append(grace)
            grace.start()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop)
    _watch_stdin(loop, stop)

    def emit(result: CheckResult) -> None:
        if stopping:  # the run went away or was stopped: a check ending now did not finish for it
            return
        out.write(json.dumps({"result": result.to_json()}) + "\n")
        out.flush()

    # All at once, each on a target of its own (an adapter process each), never one after another on
    # one: the example adapter, driven through search.batch.race, search.differential.failure and then
    # search.differential.merge on one process on a loaded machine, stopped answering a merge scenario
    # (its own bug, found here and not fixed yet); the run's lanes rarely gave them one target.
    # A job of many checks (every other check of the bulk) gives ``jobs``: at most that many at once, as in the run.
    limit = float(job["check_timeout"])
    width = asyncio.Semaphore(max(1, int(job.get("jobs") or len(job["ids"]) or 1)))

    async def one(check_id: str) -> None:
        async with width:
            await run_suite(factory(), only=[check_id], finished=emit, check_timeout=limit)

    # No warm-up here: each run_suite below loads the reference's evidence pipeline before its timing checks
    # start (suite._Here.phases), and the first to get there does so before any check of this worker has started.
    with seeded(int(job["seed"])):
        await asyncio.gather(*(one(str(check_id)) for check_id in job["ids"]))
    if stopping:  # the stop's cancel was dropped on the way (3.11's wait_for can): stopped all the same
        raise asyncio.CancelledError


def _stop_now(loop: asyncio.AbstractEventLoop) -> None:
    """The stop's last resort, from a timer thread: the checks did not end within the grace after the stop. Every
    adapter's group gets SIGKILL, where they were goes to stderr (the loop's tasks, if it still turns, and every
    thread's stack), and the process exits 130, whatever the writing meets: a run that went away leaves a stderr
    nobody reads, whose first write raises (review R5)."""
    try:
        kill_adapters()
        with contextlib.suppress(Exception):
            _where_it_hung(loop)
    finally:
        os._exit(EXIT_STOPPED)


def _where_it_hung(loop: asyncio.AbstractEventLoop) -> None:
    print("the check worker did not end within its grace after the stop; its tasks:", file=sys.stderr, flush=True)
    shown = threading.Event()

    def show_tasks() -> None:
        try:
            for task in asyncio.all_tasks(loop):
                print(f"task {task.get_name()}:\n" + "\n".join(_awaiting(task.get_coro())), file=sys.stderr)
        finally:
            shown.set()

    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
        loop.call_soon_threadsafe(show_tasks)
        shown.wait(1.0)  # a loop stuck in a blocking call never runs it: the threads' stacks below say where
    print("its threads:", file=sys.stderr, flush=True)
    faulthandler.dump_traceback(sys.stderr, all_threads=True)


def _awaiting(coro: Any) -> list[str]:
    """Where ``coro`` waits, down its chain of awaits (a task's own stack stops at its first coroutine)."""
    lines: list[str] = []
    while coro is not None and len(lines) < 40:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            break
        lines.append(f'  File "{frame.f_code.co_filename}", line {frame.f_lineno}, in {frame.f_code.co_name}')
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return lines


def main() -> int:
    quiet_cut_notes()  # else they fill the stderr tail a failed worker is reported with
    if hasattr(signal, "SIGUSR1"):  # every thread's stack to stderr: what a test sees of a worker that does not stop
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    job = json.loads(sys.stdin.buffer.readline() or b"null")
    if not isinstance(job, dict):
        print("the check worker got no job on stdin", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(job, sys.stdout))
    except asyncio.CancelledError:
        return EXIT_STOPPED
    return 0


if __name__ == "__main__":
    sys.exit(main())
