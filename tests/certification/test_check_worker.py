"""The check workers: each check marked ``process="own"`` runs in a process of its own beside a concurrent
run (certification/offload.py, certification/worker.py). Their results join the report in catalogue order
as if run here; a worker that dies leaves its check to run here; an interrupt ends them and their adapters;
targets that cannot be made in another process, and ``--jobs 1``, never start one; the seed reaches them."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from dsweb_ref.certification import checks, offload, suite
from dsweb_ref.certification.checks import CheckContext
from dsweb_ref.certification.checks._base import check
from dsweb_ref.certification.model import Check, CheckResult, Outcome, Report
from dsweb_ref.certification.suite import run_suite
from dsweb_ref.certification.targets import (
    AdapterStartError,
    AdapterTarget,
    InProcessTarget,
    _build_reference,
    reference_target,
    terminate_adapters,
)
from dsweb_ref.certification.worker import target_from_recipe

from ._procs import alive, gone
from .conftest import ROOT, adapter_command, dsweb_certify, json_report, reference_variant

OWN = "search.differential.failure"  # a quick check marked process="own"
OTHER_OWN = "search.differential.merge"
RACE = "search.batch.race"  # runs on any search protocol (twice)
BESIDE = ["search.merge.dedup", "search.batch.all_or_nothing"]  # quick checks that stay in the run's process


class Spy:
    """Records each worker started and the check ids its results brought."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started: list[offload.Worker] = []
        self.brought: list[str] = []
        self.events: list[str] = []  # "worker: <ids>" as each starts (a test may add its own events)
        self.jobs: list[dict[str, Any]] = []  # each job a worker was asked to run
        start, results = offload.Worker.start, offload.Worker.results
        spy = self

        async def spy_start(cls: type[offload.Worker], job: Any) -> offload.Worker | None:
            spy.events.append("worker: " + " ".join(job["ids"]))
            spy.jobs.append(dict(job))
            worker = await start.__func__(cls, job)  # type: ignore[attr-defined]
            if worker is not None:
                spy.started.append(worker)
            return worker

        async def spy_results(worker: offload.Worker) -> AsyncIterator[CheckResult]:
            async for result in results(worker):
                spy.brought.append(result.check.id)
                yield result

        monkeypatch.setattr(offload.Worker, "start", classmethod(spy_start))
        monkeypatch.setattr(offload.Worker, "results", spy_results)


def _run(only: list[str], jobs: int, progress: list[str] | None = None) -> Report:
    seen = progress if progress is not None else []
    return asyncio.run(run_suite(reference_target(), only=only, jobs=jobs, lanes=reference_target,
                                 progress=lambda r: seen.append(r.check.id)))




# --- results ----------------------------------------------------------------------------------------


def test_worker_results_land_in_catalogue_order_and_the_outcomes_equal_a_run_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    only = [OWN, *BESIDE]
    alone = _run(only, jobs=1)
    spy = Spy(monkeypatch)
    progress: list[str] = []
    beside = _run(only, jobs=2, progress=progress)
    assert len(spy.started) == 1 and spy.brought == [OWN]  # the worker ran the own check, nothing else
    catalogue = [s.check.id for s in checks.all_checks() if s.check.id in only]
    assert [r.check.id for r in beside.results] == catalogue == progress
    assert [(r.check.id, r.outcome) for r in beside.results] == [(r.check.id, r.outcome) for r in alone.results]
    assert all(r.outcome is Outcome.PASSED for r in beside.results), [r.reason for r in beside.results]
    own = next(r for r in beside.results if r.check.id == OWN)
    assert own.duration_s > 0 and "worker" not in own.details
    assert own.check is next(s.check for s in checks.all_checks() if s.check.id == OWN)
    assert gone(spy.started[0].pid)


def test_a_result_crosses_as_json_with_every_detail() -> None:
    result = CheckResult(Check("a.b", "what", "000", "web_search"), Outcome.FAILED, "why ✓",
                         {"seed": 5, "nested": {"list": [1, 2.5, None, "ü"], "flag": True}}, 1.234567891)
    again = CheckResult.from_json(json.loads(json.dumps(result.to_json())))
    assert again == result
    with pytest.raises((KeyError, ValueError, TypeError)):
        CheckResult.from_json({**result.to_json(), "outcome": "maybe"})


def test_the_seed_reaches_the_worker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spy = Spy(monkeypatch)
    path = tmp_path / "report.json"
    command = adapter_command("--break", "truncated-cap-only")
    code = dsweb_certify("--adapter", command, "--only", "search.differential.merge", BESIDE[0], "--seed", "5",
                         "--json", str(path))
    assert code == 1 and spy.brought == ["search.differential.merge"]
    merge = next(c for c in json_report(path)["checks"] if c["id"] == "search.differential.merge")
    assert merge["outcome"] == "failed" and merge["reason"].startswith("seed 5, ")
    assert merge["details"]["seed"] == 5 and merge["details"]["replay"].endswith("--seed 5")


# --- no worker ------------------------------------------------------------------------------------


def test_a_target_without_a_recipe_never_starts_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch)
    variant = lambda: InProcessTarget(_build_reference, name="stand-in", version="0")  # noqa: E731 (no recipe)
    report = asyncio.run(run_suite(variant(), only=[OWN, BESIDE[0]], jobs=4, lanes=variant))
    assert spy.started == [] and [r.outcome for r in report.results] == [Outcome.PASSED] * 2


def test_jobs_1_never_starts_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch)
    assert dsweb_certify("--only", OWN, BESIDE[0], "--jobs", "1") == 0
    assert spy.started == []


def test_a_run_of_one_own_check_runs_it_here(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing would run beside the worker: it would only add its start-up.
    spy = Spy(monkeypatch)
    report = _run([OWN], jobs=4)
    assert spy.started == [] and [r.outcome for r in report.results] == [Outcome.PASSED]


def test_a_run_of_own_checks_only_keeps_one_here_and_gives_each_other_a_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `--only search.differential`: both in this process would share one core again.
    spy = Spy(monkeypatch)
    report = _run([OWN, OTHER_OWN], jobs=2)
    assert [r.outcome for r in report.results] == [Outcome.PASSED] * 2, [r.reason for r in report.results]
    assert len(spy.started) == 1 and len(spy.brought) == 1


# --- the timing checks' worker -----------------------------------------------------------------------

QUIET = ["search.api.fail_fast", "search.api.retry.never"]  # quick timing checks (slot "quiet")


def test_an_in_process_target_s_timing_checks_run_together_in_one_worker_beside_the_bulk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spy = Spy(monkeypatch)
    events = spy.events
    only = [*QUIET, *BESIDE]
    report = asyncio.run(run_suite(reference_target(), only=only, jobs=4, lanes=reference_target,
                                   finished=lambda r: events.append(r.check.id)))
    assert all(r.outcome is Outcome.PASSED for r in report.results), [r.reason for r in report.results]
    assert [r.check.id for r in report.results] == [s.check.id for s in checks.all_checks() if s.check.id in only]
    # One worker for both, started before any check of the bulk here finished: beside it, not after it.
    workers = [e for e in events if e.startswith("worker: ")]
    assert len(spy.started) == 1 and sorted(spy.brought) == sorted(QUIET)
    assert workers == ["worker: " + " ".join(i for i in only if i in QUIET)]
    assert events.index(workers[0]) < min(events.index(i) for i in BESIDE)
    assert gone(spy.started[0].pid)


def test_an_own_check_whose_worker_did_not_start_counts_as_run_here_for_the_timing_checks_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # [own check, timing checks]: the own check's worker does not start, so it runs here, beside which the
    # timing checks get their worker (judged against the workers that started, not those asked for).
    spy = Spy(monkeypatch)
    start = offload.Worker.start

    async def no_own_worker(cls: type[offload.Worker], job: Any) -> offload.Worker | None:
        return None if OWN in job["ids"] else await start.__func__(cls, job)  # type: ignore[attr-defined]

    monkeypatch.setattr(offload.Worker, "start", classmethod(no_own_worker))
    report = _run([OWN, *QUIET], jobs=4)
    assert all(r.outcome is Outcome.PASSED for r in report.results), [r.reason for r in report.results]
    assert sorted(spy.brought) == sorted(QUIET) and len(spy.started) == 1


def test_timing_checks_alone_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing CPU-bound would run beside them here: a worker would only add its start-up.
    spy = Spy(monkeypatch)
    report = _run(QUIET, jobs=4)
    assert spy.started == [] and [r.outcome for r in report.results] == [Outcome.PASSED] * 2


def test_an_adapter_s_timing_checks_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    # An adapter computes in processes of its own; a worker would start a second set of them.
    spy = Spy(monkeypatch)
    make = lambda: AdapterTarget(adapter_command())  # noqa: E731 (a process per lane)
    report = asyncio.run(run_suite(make(), only=[*QUIET, *BESIDE], jobs=4, lanes=make))
    assert spy.started == [] and all(r.outcome is Outcome.PASSED for r in report.results)


# --- a worker that does not start or dies ---------------------------------------------------------


def test_a_worker_that_cannot_start_leaves_its_checks_to_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offload.sys, "executable", str(Path("/nonexistent") / "python"))
    report = _run([OWN, BESIDE[0]], jobs=2)
    assert [r.outcome for r in report.results] == [Outcome.PASSED] * 2
    assert all("worker" not in r.details for r in report.results)  # no worker ever ran


def test_a_worker_that_dies_at_once_leaves_its_checks_to_run_here_with_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(offload, "WORKER_MODULE", "dsweb_ref.certification.no_such_worker")
    spy = Spy(monkeypatch)
    report = _run([OWN, BESIDE[0]], jobs=2)
    assert len(spy.started) == 1 and spy.brought == []
    by_id = {r.check.id: r for r in report.results}
    assert [r.outcome for r in report.results] == [Outcome.PASSED] * 2
    note = by_id[OWN].details["worker"]
    assert "exited with status 1" in note and "no_such_worker" in note and "run in the suite's process" in note
    assert "worker" not in by_id[BESIDE[0]].details


def test_a_dsweb_ref_in_the_working_directory_does_not_shadow_the_worker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # `python -m` puts the working directory first on the path: run from inside another checkout, the
    # worker would run that checkout's checks and reference, under this version's report.
    shadow = tmp_path / "dsweb_ref" / "certification"
    shadow.mkdir(parents=True)
    (tmp_path / "dsweb_ref" / "__init__.py").write_text("", encoding="utf-8")
    (shadow / "__init__.py").write_text("", encoding="utf-8")
    (shadow / "worker.py").write_text('print("SHADOW", flush=True)\nraise SystemExit(3)\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    spy = Spy(monkeypatch)
    report = _run([OWN, BESIDE[0]], jobs=2)
    assert len(spy.started) == 1 and spy.brought == [OWN]  # the real worker ran it
    assert [r.outcome for r in report.results] == [Outcome.PASSED] * 2
    assert all("worker" not in r.details for r in report.results)


def test_a_worker_that_breaks_the_protocol_is_stopped_before_its_checks_run_here(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Left running, it would compute the same checks beside the run until the run's end (then SIGKILL).
    (tmp_path / "chatty_worker.py").write_text(
        'import time\nprint("not a result", flush=True)\ntime.sleep(60)\n', encoding="utf-8"
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(offload, "WORKER_MODULE", "chatty_worker")
    spy = Spy(monkeypatch)
    report = _run([OWN, BESIDE[0]], jobs=2)
    assert [r.outcome for r in report.results] == [Outcome.PASSED] * 2
    assert "not a result" in {r.check.id: r for r in report.results}[OWN].details["worker"]
    (worker,) = spy.started
    assert worker._proc.returncode == -signal.SIGTERM  # stopped on the broken line, not killed at the end


def test_each_own_check_runs_in_a_worker_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # One worker for both held one core for the sum of their computing; a worker each gives each a core.
    spy = Spy(monkeypatch)
    report = _run([OWN, OTHER_OWN, BESIDE[0]], jobs=2)
    assert [r.outcome for r in report.results] == [Outcome.PASSED] * 3, [r.reason for r in report.results]
    assert len(spy.started) == 2 and sorted(spy.brought) == sorted([OWN, OTHER_OWN])
    assert len({w.pid for w in spy.started}) == 2 and all(gone(w.pid) for w in spy.started)


def test_a_worker_killed_before_its_result_leaves_its_check_to_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    results = offload.Worker.results
    killed: list[int] = []

    async def kill_the_first(worker: offload.Worker) -> AsyncIterator[CheckResult]:
        if not killed:  # the first worker read from dies before it sends its result; the other is left alone
            killed.append(worker.pid)
            os.killpg(worker.pid, signal.SIGKILL)
        async for result in results(worker):
            yield result

    monkeypatch.setattr(offload.Worker, "results", kill_the_first)
    report = _run([OWN, OTHER_OWN, BESIDE[0]], jobs=2)
    assert [r.outcome for r in report.results] == [Outcome.PASSED] * 3, [r.reason for r in report.results]
    noted = [r.check.id for r in report.results if "worker" in r.details]
    assert len(killed) == 1 and len(noted) == 1 and noted[0] in (OWN, OTHER_OWN)  # only the killed worker's
    note = next(r.details["worker"] for r in report.results if r.check.id == noted[0])
    assert "exited with status -9" in note


# --- interrupts -----------------------------------------------------------------------------------

HANGING_ADAPTER = ROOT / "tests" / "fixtures" / "hanging_adapter.py"  # records its pid, its child's, its parent's


def _pids(path: Path) -> list[tuple[int, int, int]]:
    if not path.exists():
        return []
    return [tuple(int(p) for p in line.split()) for line in path.read_text().splitlines() if line]  # type: ignore[misc]


def test_a_worker_that_hangs_is_ended_at_its_deadline_and_its_checks_run_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[offload.Worker] = []

    async def silent(worker: offload.Worker) -> AsyncIterator[CheckResult]:
        started.append(worker)
        await asyncio.Event().wait()  # never a result, never an end
        yield  # type: ignore[misc]  (makes this an async generator)

    monkeypatch.setattr(offload.Worker, "results", silent)
    monkeypatch.setattr(suite, "_worker_deadline", lambda remote, specs, limit, width=1: 0.5)
    report = _run([OWN, BESIDE[0]], jobs=2)
    assert [r.outcome for r in report.results] == [Outcome.PASSED] * 2
    own = next(r for r in report.results if r.check.id == OWN)
    assert own.details["worker"].startswith("the check worker did not finish within 0.5s")
    assert started and gone(started[0].pid)


def test_the_worker_deadline_allows_each_check_its_timeout_per_protocol() -> None:
    specs = {s.check.id: s for s in checks.all_checks()}
    chosen = [specs[RACE], specs[OWN]]  # any protocol (two runs) and the scripted route (one)
    assert suite._worker_deadline([0, 1], chosen, 10.0) == 2 * 10.0 + 10.0 + 60.0
    # With up to four at once (the bulk's worker): a fair share of the sum, plus the longest, plus a minute.
    assert suite._worker_deadline([0, 1], chosen, 10.0, 4) == (2 * 10.0 + 10.0) / 4 + 2 * 10.0 + 60.0


# An interrupt of `dsweb certify` ending the worker and its adapters is tested with the other interrupts, in
# tests/test_cli_certify_trust.py.


def _merge_worker_on_a_hanging_adapter(pids: Path, check_timeout: float) -> subprocess.Popen[bytes]:
    """A worker started as a run starts it, told to run search.differential.merge on the hanging adapter."""
    adapter = shlex.join([sys.executable, str(HANGING_ADAPTER), str(pids)])
    job = {"ids": ["search.differential.merge"], "seed": 0, "check_timeout": check_timeout,
           "target": AdapterTarget(adapter).recipe()}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    worker = subprocess.Popen([sys.executable, "-m", offload.WORKER_MODULE], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    assert worker.stdin is not None
    worker.stdin.write((json.dumps(job) + "\n").encode())
    worker.stdin.flush()
    return worker


def _stopped(worker: subprocess.Popen[bytes]) -> int:
    """The worker's exit status once its stdin has closed. Alone it stops in about 0.2 s (0.17 s at worst in 20
    runs beside three busy loops); the bound is a liveness one, wide because a fresh-clone CI run, its
    machine full of the suite's own processes, once overran 10 s. Overrun, the worker's stderr tells where."""
    try:
        return worker.wait(60)
    except subprocess.TimeoutExpired:
        worker.send_signal(signal.SIGUSR1)  # its threads' stacks on stderr: where it hangs
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.wait(2)
        worker.kill()
        worker.wait()
        err = worker.stderr.read() if worker.stderr is not None and not worker.stderr.closed else b""
        pytest.fail(f"the worker did not stop within 60 s of its stdin's end; its stderr: {err[-6000:]!r}")


def test_a_worker_whose_run_went_away_stops_and_ends_its_adapters(tmp_path: Path) -> None:
    # The run's process died without a word (SIGKILL): the end of the worker's stdin stops it.
    pids = tmp_path / "pids.txt"
    worker = _merge_worker_on_a_hanging_adapter(pids, 60)
    assert worker.stdin is not None
    deadline = time.monotonic() + 60
    while not _pids(pids) and time.monotonic() < deadline:
        time.sleep(0.05)  # bounded wait for its adapter to start
    assert _pids(pids)
    worker.stdin.close()
    assert _stopped(worker) == 130
    assert worker.stdout is not None and worker.stdout.read() == b""  # nothing finished
    for pid in _pids(pids)[0][:2]:
        assert gone(pid), f"process {pid} survived its worker"


def _exited(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie counts: its parent has not reaped it yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except FileNotFoundError:
        return True


def test_a_worker_stopped_while_it_closes_its_adapter_leaves_nothing_of_the_adapter_behind(tmp_path: Path) -> None:
    # The adapter exits at the end of its stdin, but the child it started keeps the pipes open, so closing
    # it waits; the run's close (end of the worker's stdin) lands in that wait. The leader being gone, a
    # SIGTERM to its group was skipped and the cancelled wait never reached the SIGKILL: the child lived on.
    pids = tmp_path / "pids.txt"
    worker = _merge_worker_on_a_hanging_adapter(pids, 3)
    assert worker.stdin is not None and worker.stdout is not None
    result = json.loads(worker.stdout.readline())["result"]  # the check timed out on the hanging adapter
    assert result["outcome"] in ("error", "failed"), result
    leader, child, _parent = _pids(pids)[0]
    deadline = time.monotonic() + 10
    while not _exited(leader) and time.monotonic() < deadline:
        time.sleep(0.02)  # bounded wait: the adapter left at the end of its stdin, its child holds the pipes
    assert _exited(leader) and alive(child)
    worker.stdin.close()
    assert _stopped(worker) == 130
    assert gone(child), "the adapter's child outlived the worker"


def _worker_with_checks(body: str, job: dict[str, Any]) -> subprocess.Popen[bytes]:
    """A worker whose ``run_suite`` is ``body`` (the source of an ``async def run_suite(*args, **kwargs)``): how
    a check behaves when the stop comes, without a real check's timing."""
    code = (
        "import asyncio, sys\n"
        "import dsweb_ref.certification.worker as worker\n"
        f"{body}\n"
        "worker.run_suite = run_suite\n"
        "sys.exit(worker.main())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.write((json.dumps({"ids": [OWN], "seed": 0, "check_timeout": 60, "target": {"kind": "reference"},
                                  **job}) + "\n").encode())
    proc.stdin.flush()
    return proc


# A check whose cancel is dropped: Python 3.11's wait_for hands back a result that came with the cancellation. It
# then finishes, and says so on stderr first (the test waits for that line, not for a time).
DROPS_THE_CANCEL = """
async def run_suite(*args, finished, **kwargs):
    print("started", file=sys.stderr, flush=True)
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        pass  # dropped
    finished(RESULT)
class RESULT:  # what emit writes of a result
    to_json = staticmethod(lambda: {"check": "finished after the stop"})
"""


def test_a_worker_whose_stop_lost_its_cancel_still_stops_and_writes_nothing() -> None:
    # catches: a stop that relies on the cancel alone; the check went on, its result written to a run that went
    # away and the worker ending 0 (CI of b024e3a: a worker that went on after its stdin's end)
    worker = _worker_with_checks(DROPS_THE_CANCEL, {})
    assert worker.stderr is not None and worker.stdin is not None
    assert worker.stderr.readline().strip() == b"started"
    worker.stdin.close()
    assert _stopped(worker) == 130
    assert worker.stdout is not None and worker.stdout.read() == b""


IGNORES_THE_CANCEL = """
async def run_suite(*args, **kwargs):
    print("started", file=sys.stderr, flush=True)
    while True:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass  # never ends
"""


def test_a_stopped_worker_whose_checks_never_end_exits_at_its_grace_and_says_where_it_was() -> None:
    # catches: a stop with no last resort: a check that never ends (whatever the bug) keeps a worker whose run is
    # gone alive, with nothing on stderr to say why
    worker = _worker_with_checks(IGNORES_THE_CANCEL, {"stop_grace": 0.5})
    assert worker.stderr is not None and worker.stdin is not None
    assert worker.stderr.readline().strip() == b"started"
    worker.stdin.close()
    assert _stopped(worker) == 130
    err = worker.stderr.read().decode()
    assert "did not end within its grace after the stop" in err
    assert ", in run_suite" in err.split("its threads:")[0]  # where it was: the check that never ended


def test_a_worker_whose_run_went_away_exits_at_its_grace_though_its_stderr_is_gone() -> None:
    # catches (review R5): the last resort writing where it hung first; with the run gone nobody reads stderr, the
    # write raised BrokenPipeError in the timer thread, and the worker never exited
    worker = _worker_with_checks(IGNORES_THE_CANCEL, {"stop_grace": 0.5})
    assert worker.stderr is not None and worker.stdin is not None
    assert worker.stderr.readline().strip() == b"started"
    worker.stderr.close()  # the run's end of the pipe: gone, as with a run that died
    worker.stdin.close()
    assert _stopped(worker) == 130


# A check that starts an adapter deaf to SIGTERM (its pid in the file named by PIDS), then never ends.
STARTS_A_DEAF_ADAPTER = """
import shlex
from dsweb_ref.certification.targets import AdapterTarget
DEAF = ("import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)")
async def run_suite(*args, **kwargs):
    target = AdapterTarget(shlex.join([sys.executable, "-c", DEAF, PIDS]))
    await target._start()
    print("started", file=sys.stderr, flush=True)
    while True:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass
"""


def test_a_stopped_worker_whose_checks_never_end_kills_an_adapter_deaf_to_sigterm(tmp_path: Path) -> None:
    # catches: a last resort that exits without ending the adapters: one that ignores the stop's SIGTERM would
    # outlive its worker
    pid_file = tmp_path / "adapter.pid"
    worker = _worker_with_checks(f"PIDS = {str(pid_file)!r}\n{STARTS_A_DEAF_ADAPTER}", {"stop_grace": 0.5})
    assert worker.stderr is not None and worker.stdin is not None
    assert worker.stderr.readline().strip() == b"started"
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)  # bounded wait for the adapter to write its pid
    adapter = int(pid_file.read_text())
    worker.stdin.close()
    assert _stopped(worker) == 130
    assert gone(adapter), "the adapter deaf to SIGTERM outlived its worker"


def test_no_adapter_starts_on_a_loop_once_its_adapters_were_terminated(tmp_path: Path) -> None:
    # catches: a check going on after a dropped stop starting a fresh lane nothing ends (the adapter hangs until
    # its check's timeout); another loop (the next run in one process) starts adapters as before
    pids = tmp_path / "pids.txt"
    command = shlex.join([sys.executable, str(HANGING_ADAPTER), str(pids)])

    async def hello_after_terminate() -> None:
        terminate_adapters()
        target = AdapterTarget(command)
        with pytest.raises(AdapterStartError, match="the run is stopping"):
            await target.hello()
        await target.close()

    asyncio.run(hello_after_terminate())
    assert not pids.exists()

    async def hello_on_another_loop() -> None:
        target = AdapterTarget(command)
        try:
            assert (await target.hello()).name == "hang"
        finally:
            await target.close()

    asyncio.run(hello_on_another_loop())
    assert len(_pids(pids)) == 1


def _warmed_after_warm_up() -> list[bool]:
    """[evidence pipeline imported, its segmenters loaded, the web codecs looked up] in a fresh process after
    targets.warm_reference()."""
    code = (
        "import sys\n"
        "from dsweb_ref.certification.targets import warm_reference\n"
        "from dsweb_ref.tools import _evidence_units as units\n"
        "from dsweb_ref.netguard import body\n"
        "warm_reference()\n"
        "print('dsweb_ref.tools.evidence_search' in sys.modules, units._WARM is not None and units._WARM.done(),\n"
        "      body._web_codecs.cache_info().currsize == 1)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return [word == "True" for word in done.stdout.split()]


def test_warming_the_reference_loads_the_evidence_pipeline_and_the_codecs() -> None:
    # catches: the first evidence row of a timing check importing and warming the pipeline (and the first page's
    # codec lookups) on the loop every timing check shares: one 0.33-0.54 s stall in all of them, each attempt then
    # met only under load and re-run
    assert _warmed_after_warm_up() == [True] * 3


def test_a_failed_warm_up_raises_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (review R5): the warm-up's stored error raised again in the timing worker, which then ran none of its
    # timing checks (they fell back to the run's own process); a failed warm-up only means the first call loads lazily
    from concurrent.futures import Future

    from dsweb_ref.certification import targets
    from dsweb_ref.tools import _evidence_units

    failed: Future[None] = Future()
    failed.set_exception(OSError("segmenter data unreadable"))
    monkeypatch.setattr(_evidence_units, "warm_up", lambda: failed)
    targets.warm_reference()  # no raise


def test_a_run_here_warms_the_reference_up_between_its_shared_and_its_timing_checks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the timing checks a run keeps in its own process (one lane, or an --only of them) paying the
    # evidence pipeline's first load inside their measured windows
    events: list[str] = []
    run_phase = suite._run_phase

    async def phase(specs: list[Any], chosen: list[int], *args: Any) -> None:
        events.append("phase " + ",".join(sorted({specs[i].slot for i in chosen})))
        await run_phase(specs, chosen, *args)

    monkeypatch.setattr(suite, "_run_phase", phase)
    monkeypatch.setattr(suite, "warm_reference", lambda: events.append("warm"))
    asyncio.run(run_suite(reference_target(), only=[BESIDE[0], "search.api.fail_fast"]))
    assert events == ["phase ", "phase shared", "warm", "phase quiet"], events
    # a timing check alone (as a check worker runs each of its own) is warmed for too; a run of no timing check is not
    events.clear()
    asyncio.run(run_suite(reference_target(), only=["search.api.fail_fast"]))
    assert events == ["phase ", "phase ", "warm", "phase quiet"], events
    events.clear()
    asyncio.run(run_suite(reference_target(), only=[BESIDE[0]]))
    assert "warm" not in events, events


# --- recipes and marks ------------------------------------------------------------------------------


def test_recipes_make_the_same_target_in_another_process() -> None:
    assert reference_target().recipe() == {"kind": "reference"}
    assert target_from_recipe({"kind": "reference"}) is reference_target
    assert reference_variant("x").recipe() is None  # tools built from objects cannot cross
    adapter = AdapterTarget("adapter --flag", env={"DSWEB_X": "1"}, hello_timeout=7.0, call_timeout=9.0)
    adapter.use_environment({"HTTP_PROXY": "http://127.0.0.1:9"})  # this run's trap, not the worker's
    recipe = adapter.recipe()
    assert "HTTP_PROXY" not in recipe["env"] and recipe["env"]["DSWEB_X"] == "1"
    again = target_from_recipe(json.loads(json.dumps(recipe)))()
    assert isinstance(again, AdapterTarget) and again.argv == ["adapter", "--flag"]
    assert again._env == recipe["env"] and (again.hello_timeout, again.call_timeout) == (7.0, 9.0)
    with pytest.raises(ValueError, match="recipe kind"):
        target_from_recipe({"kind": "mystery"})


def test_only_a_shared_check_may_run_in_a_process_of_its_own() -> None:
    async def body(ctx: CheckContext) -> None:
        pass

    with pytest.raises(ValueError, match="only a shared check"):
        check("x.quiet.own", "x", seed="000", requires=("web_search",), slot="quiet", process="own")(body)
    assert "x.quiet.own" not in checks.REGISTRY


def _decorator_lines(check_id: str, filename: str) -> Iterator[str]:
    source = Path(filename).read_text(encoding="utf-8")
    yield from source[source.index(f'    "{check_id}",\n') :].split("\n)\n", 1)[0].splitlines()


def test_every_check_marked_to_run_in_its_own_process_says_why() -> None:
    marked = [s for s in checks.all_checks() if s.process == "own"]
    # search.batch.race: beside the bulk its twenty attempts shared the in-process target's loop (6.8 s, 1.2 s alone)
    own = {"search.differential.merge", "search.differential.failure", "search.batch.race"}
    assert {s.check.id for s in marked} >= own
    for s in marked:
        lines = list(_decorator_lines(s.check.id, s.run.__code__.co_filename))
        at = next(i for i, line in enumerate(lines) if line.strip().startswith("process="))
        assert "#" in lines[at] or lines[at - 1].strip().startswith("#"), s.check.id


# --- every other check of the bulk -------------------------------------------------------------------

BULK = ["search.merge.dedup", "search.merge.round_robin", "search.single.passthrough", "fetch.value.schema"]


def test_an_in_process_target_s_bulk_sends_every_other_check_to_one_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    # Alone, this process ran every side-by-side check on one core while the other idled (issue 18).
    spy = Spy(monkeypatch)
    monkeypatch.setattr(suite, "_BULK_SPLIT", 4)
    monkeypatch.setattr(suite, "_cores", lambda: 2)  # the bulk's worker needs two cores: as CI runners have
    report = _run(BULK, jobs=4)
    assert all(r.outcome is Outcome.PASSED for r in report.results), [r.reason for r in report.results]
    assert [r.check.id for r in report.results] == [s.check.id for s in checks.all_checks() if s.check.id in BULK]
    ordered = [s.check.id for s in checks.all_checks() if s.check.id in BULK]
    # catches: the latter half handed over (the costly checks come in families: one side got them all)
    assert spy.events == ["worker: " + " ".join(ordered[1::2])] and sorted(spy.brought) == sorted(ordered[1::2])
    assert spy.jobs[0]["jobs"] == 4  # as many at once there as the run allows here


def test_the_bulk_worker_takes_neither_own_nor_timing_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch)
    monkeypatch.setattr(suite, "_BULK_SPLIT", 4)
    monkeypatch.setattr(suite, "_cores", lambda: 2)  # the bulk's worker needs two cores: as CI runners have
    report = _run([OWN, *QUIET, *BULK], jobs=4)
    assert all(r.outcome is Outcome.PASSED for r in report.results), [r.reason for r in report.results]
    ordered = [s.check.id for s in checks.all_checks() if s.check.id in BULK]
    quiet = [s.check.id for s in checks.all_checks() if s.check.id in QUIET]
    assert [(job["ids"], job["jobs"]) for job in spy.jobs] == [([OWN], None), (quiet, None), (ordered[1::2], 4)]


def test_one_core_keeps_the_bulk_here(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a bulk worker on a one-core runner, where it only contends with the run for that core
    spy = Spy(monkeypatch)
    monkeypatch.setattr(suite, "_BULK_SPLIT", 4)
    monkeypatch.setattr(suite, "_cores", lambda: 1)
    assert all(r.outcome is Outcome.PASSED for r in _run(BULK, jobs=4).results)
    assert spy.started == []


def test_dead_workers_leave_their_checks_to_run_here_one_worker_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the dead bulk worker's checks run here beside the dead timing worker's, the very mix the
    # phases keep apart (each check's start and end here, in order: no timing check overlaps a bulk one)
    monkeypatch.setattr(offload, "WORKER_MODULE", "dsweb_ref.certification.no_such_worker")
    monkeypatch.setattr(suite, "_BULK_SPLIT", 4)
    monkeypatch.setattr(suite, "_cores", lambda: 2)
    log: list[tuple[str, str]] = []
    run_one = suite._run_one

    async def logged(spec: Any, *args: Any) -> CheckResult:
        log.append(("start", spec.check.id))
        try:
            return await run_one(spec, *args)
        finally:
            log.append(("end", spec.check.id))

    monkeypatch.setattr(suite, "_run_one", logged)
    spy = Spy(monkeypatch)
    report = _run([*QUIET, *BULK], jobs=4)
    assert len(spy.started) == 2 and spy.brought == []
    assert all(r.outcome is Outcome.PASSED for r in report.results), [r.reason for r in report.results]
    moved = {*QUIET, *[s.check.id for s in checks.all_checks() if s.check.id in BULK][1::2]}
    assert all("worker" in r.details for r in report.results if r.check.id in moved)
    running: set[str] = set()
    for event, check_id in log:
        (running.add if event == "start" else running.discard)(check_id)
        assert not (running & set(QUIET) and running & (moved - set(QUIET))), log


def test_a_bulk_below_the_split_and_an_adapter_s_bulk_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch)
    monkeypatch.setattr(suite, "_BULK_SPLIT", 5)  # four checks: fewer than the split
    assert all(r.outcome is Outcome.PASSED for r in _run(BULK, jobs=4).results)
    monkeypatch.setattr(suite, "_BULK_SPLIT", 2)
    make = lambda: AdapterTarget(adapter_command())  # noqa: E731 (a process per lane)
    report = asyncio.run(run_suite(make(), only=BULK[:2], jobs=4, lanes=make))
    assert spy.started == [] and all(r.outcome is Outcome.PASSED for r in report.results)


def test_a_worker_job_with_jobs_runs_at_most_that_many_checks_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each check is held on a gate until the test lets it finish, in order: an unbounded worker starts all
    # four before the first finishes; a bound of two starts the third only after one finished.
    from dsweb_ref.certification import worker

    ids = ["a", "b", "c", "d"]

    async def main(jobs: int | None) -> list[str]:
        log: list[str] = []
        started = {i: asyncio.Event() for i in ids}
        release = {i: asyncio.Event() for i in ids}

        async def fake_run_suite(target: object, *, only: list[str], **_: object) -> None:
            (check_id,) = only
            log.append(f"start {check_id}")
            started[check_id].set()
            await release[check_id].wait()
            log.append(f"end {check_id}")

        async def drive() -> None:
            for check_id in ids:
                await started[check_id].wait()
                release[check_id].set()

        monkeypatch.setattr(worker, "run_suite", fake_run_suite)
        job = {"ids": ids, "seed": 0, "check_timeout": 5.0, "target": {"kind": "reference"}, "jobs": jobs}
        await asyncio.wait_for(asyncio.gather(worker.serve(job, io.StringIO()), drive()), 10)
        return log

    monkeypatch.setattr(worker, "_watch_stdin", lambda loop, stop: None)
    # serve() installs SIGTERM and SIGINT handlers, which the loop's close resets: keep this process's own.
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        log = asyncio.run(main(2))
        most = max(sum(1 if e.startswith("start") else -1 for e in log[: n + 1]) for n in range(len(log)))
        assert most == 2 and log[:3] == ["start a", "start b", "end a"], log
        log = asyncio.run(main(None))  # no bound given: all at once, as the own and timing checks' workers run
        assert log[:4] == ["start a", "start b", "start c", "start d"], log
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def test_a_worker_selects_exactly_the_checks_it_was_given() -> None:
    # A worker runs each of its ids with run_suite(only=[id]), which selects by prefix too ("search.merge"
    # selects every merge check): no check id may be the dotted prefix of another, or a worker given the
    # shorter would also run the longer, which the run itself runs elsewhere.
    ids = [s.check.id for s in checks.all_checks()]
    assert all(suite.select_ids(ids, [i])[0] == [i] for i in ids)


def test_a_zombie_counts_as_ended() -> None:
    # An orphan that ended stays a zombie until init reaps it (about 2 s here): it survived nothing.
    code = ("import subprocess, sys, time; c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
            " print(c.pid, flush=True); time.sleep(60)")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    os.killpg(parent.pid, signal.SIGKILL)
    parent.wait()
    assert gone(child, within=1.0)
