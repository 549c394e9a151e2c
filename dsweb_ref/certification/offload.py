"""The run's side of a check worker: each check marked ``process="own"`` runs in a Python process of its own
beside the run, so a CPU-bound check computes on another core instead of holding the run's interpreter lock;
an in-process target's timing checks run in one more, together, with a loop of their own (see
:func:`.suite._quiet_remote`), and every other one of its side-by-side checks in another
(:func:`.suite._bulk_remote`).

The run starts ``python -m dsweb_ref.certification.worker`` as it begins (the worker's imports overlap the
run's first checks), in a process group of its own, and writes it one JSON line on stdin: the check ids,
the differential seed, the check timeout and the target's *recipe* (how to make the target
there; see the targets' ``recipe()``). The worker runs those checks with the ordinary ``run_suite`` (its
own emulators, lanes and proxy traps) and writes ``{"result": <CheckResult.to_json()>}`` on stdout the
moment each check finishes. SIGTERM to its group (:func:`~.targets.terminate_adapters` sends it) or the
end of its stdin stops it, and its adapters with it.

The worker imports the check modules afresh: a test that patches a check module in the run's process
patches nothing there, so such a test runs that check with ``jobs=1`` (or alone). Under `dsweb certify`
on Linux a worker is forked instead (:mod:`.forkserver`): the same module and protocol, without a second
interpreter importing the package again.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from . import forkserver
from .forkserver import ForkedProcess
from .model import CheckResult
from .targets import KILL, track_process, untrack_process

__all__ = ["WORKER_MODULE", "Worker"]

WORKER_MODULE = "dsweb_ref.certification.worker"
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding this dsweb_ref
_LINE_LIMIT = 64 * 1024 * 1024  # one result is one line, and its details can be long


def _environment() -> dict[str, str]:
    """This process's environment, with this very dsweb_ref first on the path (the worker must run the
    same code as the run, whatever installed copy its own path would find first)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p)
    return env


class Worker:
    """One worker process running a set of checks; see the module docstring."""

    def __init__(self, proc: asyncio.subprocess.Process | ForkedProcess) -> None:
        self._proc = proc
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._stderr_reader = asyncio.ensure_future(self._read_stderr())
        self.terminated = False  # an interrupt ended it: whatever it writes afterwards did not finish in time

    @property
    def pid(self) -> int:
        return self._proc.pid

    @classmethod
    async def start(cls, job: Mapping[str, Any]) -> Worker | None:
        """A worker told to run ``job``, or None when none could be started (the checks then run here).
        Forked by the run's fork server when there is one (:mod:`.forkserver`), else a new interpreter."""
        server = forkserver.active()
        forked = await server.spawn(_LINE_LIMIT) if server is not None else None
        return await cls._started(forked or await cls._exec(), job)

    @staticmethod
    async def _exec() -> asyncio.subprocess.Process | None:
        try:
            return await asyncio.create_subprocess_exec(
                # -P: no working directory on the path, where another checkout's dsweb_ref would win.
                sys.executable, "-P", "-m", WORKER_MODULE,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env=_environment(),
                limit=_LINE_LIMIT,
                # Its own process group, like an adapter's: an interrupt ends it and what it started.
                start_new_session=sys.platform != "win32",
            )
        except OSError:
            return None

    @classmethod
    async def _started(cls, proc: asyncio.subprocess.Process | ForkedProcess | None,
                       job: Mapping[str, Any]) -> Worker | None:
        if proc is None:
            return None
        worker = cls(proc)
        track_process(worker)
        assert proc.stdin is not None
        try:
            proc.stdin.write((json.dumps(dict(job)) + "\n").encode())
            await proc.stdin.drain()
        except OSError:  # gone already; results() ends at once and the reason is in its stderr
            pass
        return worker

    async def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        while line := await self._proc.stderr.readline():
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    async def results(self) -> AsyncIterator[CheckResult]:
        """Each result as the worker writes it, until its stdout ends (it finished, died or broke the
        protocol: :meth:`why_ended` says which)."""
        assert self._proc.stdout is not None
        while True:
            try:
                line = await self._proc.stdout.readline()
            except ValueError:  # a line over the stream limit
                self._stderr.append("the worker wrote a line over the stream limit")
                self._stop_broken()
                return
            if not line:
                return
            try:
                result = CheckResult.from_json(json.loads(line)["result"])
            except (ValueError, KeyError, TypeError) as exc:
                self._stderr.append(f"the worker wrote a line that is not a result ({exc!r}): {line[:200]!r}")
                self._stop_broken()
                return
            yield result

    async def why_ended(self) -> str:
        """Its exit status and the last lines of its stderr, once it exited (within a few seconds)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._proc.wait()), 5.0)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_reader), 1.0)
        code = self._proc.returncode
        status = f"exited with status {code}" if code is not None else "stopped writing results"
        tail = [line for line in self._stderr if line.strip()][-3:]
        return f"the check worker {status}" + ("; stderr tail: " + " | ".join(tail) if tail else "")

    def _stop_broken(self) -> None:
        """It broke the protocol: its checks will run here, so it must not go on computing them beside."""
        if self._proc.returncode is None:
            self._signal(signal.SIGTERM)

    def terminate(self) -> None:
        """SIGTERM to its process group, now (callable in a signal handler); :meth:`close` reaps it."""
        self.terminated = True
        if self._proc.returncode is None:
            self._signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL to its process group, now (from any thread): :func:`~.targets.kill_adapters`."""
        if self._proc.returncode is None:
            self._signal(KILL)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(OSError):  # already gone
            if sys.platform == "win32":  # no fork server there: always a started interpreter
                assert isinstance(self._proc, asyncio.subprocess.Process)
                self._proc.kill() if sig is not signal.SIGTERM else self._proc.terminate()
            else:
                try:
                    os.killpg(self._proc.pid, sig)
                except ProcessLookupError:  # a forked worker not yet in its own session
                    os.kill(self._proc.pid, sig)

    async def close(self) -> None:
        """End it: the end of its stdin asks it to stop (it ends its adapters); SIGKILL to its group if it
        has not exited soon after (at once when terminated)."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            await asyncio.wait_for(self._proc.wait(), 1.0 if self.terminated else 5.0)
        except TimeoutError:
            self._signal(signal.SIGKILL)
            await self._proc.wait()
        untrack_process(self)
        await asyncio.wait([self._stderr_reader], timeout=0.5)
        self._stderr_reader.cancel()
        await asyncio.gather(self._stderr_reader, return_exceptions=True)
