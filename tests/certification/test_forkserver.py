"""The fork server (certification/forkserver.py): `dsweb certify` forks its check workers from a copy of its
own process instead of starting interpreters that import the package again; a forked worker's pipes and exit
status reach the run like a started one's; the server ends with the run; a process with threads never forks."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from dsweb_ref.certification import offload
from dsweb_ref.certification.forkserver import ForkServer, forking

from ._procs import gone
from .conftest import ROOT

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the fork server is Linux-only")

# Loaded by every interpreter that starts with this folder on its path; the fork hooks it registers are
# inherited by every process forked from one, so the log holds each start and each fork.
_SITECUSTOMIZE = """
import os, sys
_LOG = os.environ["DSWEB_TEST_PROCESS_LOG"]
def _note(what):
    with open(_LOG, "a", encoding="utf-8") as f:
        f.write(f"{what} {os.getpid()} {os.getppid()}\\n")
if " ".join(sys.argv).find("example_adapter") < 0:
    _note("start")
    os.register_at_fork(after_in_child=lambda: _note("fork"))
"""


def _certify(tmp_path: Path, *args: str) -> tuple[int, list[list[str]], dict[str, str]]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    log = tmp_path / "processes.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
           "DSWEB_TEST_PROCESS_LOG": str(log)}
    done = subprocess.run(
        [sys.executable, "-m", "dsweb_ref", "certify", *args, "--json", str(tmp_path / "r.json")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    lines = [line.split() for line in log.read_text().splitlines()]
    return done.returncode, lines, {c["id"]: c["outcome"] for c in report["checks"]}


def test_certify_forks_its_check_worker_instead_of_starting_an_interpreter(tmp_path: Path) -> None:
    code, lines, got = _certify(tmp_path, "--only", "search.differential.failure", "search.merge.dedup",
                                "--jobs", "2")
    assert code == 0 and got == {"search.differential.failure": "passed", "search.merge.dedup": "passed"}
    starts = [line for line in lines if line[0] == "start"]
    forks = [line for line in lines if line[0] == "fork"]
    assert len(starts) == 1, lines  # the run itself; without the server the worker is a second start
    run_pid = starts[0][1]
    (server,) = [f for f in forks if f[2] == run_pid]
    (worker,) = [f for f in forks if f[2] == server[1]]  # the worker is the server's child
    assert gone(int(server[1])) and gone(int(worker[1]))  # both ended with the run


def test_jobs_1_forks_nothing(tmp_path: Path) -> None:
    code, lines, got = _certify(tmp_path, "--only", "search.merge.dedup", "--jobs", "1")
    assert code == 0 and got == {"search.merge.dedup": "passed"}
    assert [line[0] for line in lines] == ["start"]


_SERVER_SCRIPT = textwrap.dedent("""
    import asyncio, json, sys
    from dsweb_ref.certification.forkserver import forking

    async def one(server, job):
        proc = await server.spawn(1 << 20)
        if job is not None:
            proc.stdin.write(job)
        proc.stdin.close()
        out = await proc.stdout.read()
        err = await proc.stderr.read()
        return {"pid": proc.pid, "code": await proc.wait(), "out": out.decode(), "err": err.decode()}

    async def main(server):
        first = await one(server, None)  # no job on stdin: the worker says so and exits 2
        second = await one(server, b'{"ids": [], "seed": 0, "check_timeout": 5, "target": {"kind": "reference"}}\\n')
        return [first, second]

    with forking() as server:
        assert server is not None
        results = asyncio.run(main(server))
        server_pid = server.pid
    print(json.dumps({"server": server_pid, "workers": results}))
""")


def test_a_forked_worker_s_streams_and_exit_status_reach_the_run_and_the_server_ends_with_it() -> None:
    done = subprocess.run([sys.executable, "-c", _SERVER_SCRIPT], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    first, second = data["workers"]
    assert first["code"] == 2 and "the check worker got no job on stdin" in first["err"]
    assert second["code"] == 0 and second["out"] == "" and first["pid"] != second["pid"]
    assert gone(data["server"], within=1.0)


def test_a_process_with_threads_gets_no_fork_server() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        with forking() as server:
            assert server is None
    finally:
        stop.set()
        thread.join()


def test_an_exit_reported_together_with_its_pid_reaches_the_worker() -> None:
    # A worker that dies at once is reaped before the run has read its pid: the server's two lines arrive
    # in one read, and the exit must not be dropped for want of a waiter (the run would wait forever).
    async def main() -> tuple[int, int | None, int]:
        ours, theirs = socket.socketpair()
        server = ForkServer(-1, ours)  # its side of the socket played here, in order

        async def play_server() -> None:
            loop = asyncio.get_running_loop()
            _, fds, _, _ = await loop.run_in_executor(None, socket.recv_fds, theirs, 16, 3)
            for fd in fds:
                os.close(fd)
            theirs.sendall(b"pid 4242\nexit 4242 7\n")

        played = asyncio.ensure_future(play_server())
        proc = await server.spawn(1 << 20)
        await played
        assert proc is not None
        known = proc.returncode
        await proc.stdout.read(), await proc.stderr.read()  # the pipes' far ends are closed: EOF
        proc.stdin.close()
        code = await asyncio.wait_for(proc.wait(), 10)
        ours.close(), theirs.close()
        return proc.pid, known, code

    assert asyncio.run(main()) == (4242, 7, 7)


def test_a_signal_reaches_a_worker_not_yet_in_a_session_of_its_own() -> None:
    # A forked worker calls setsid first thing; an interrupt just before that finds no group of its pid,
    # and must still end the worker itself.
    async def main() -> int:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import time; time.sleep(60)",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # in this test's process group, not a session of its own
        worker = offload.Worker(proc)
        worker.terminate()
        code = await asyncio.wait_for(proc.wait(), 30)
        await worker.close()
        return code

    assert asyncio.run(main()) == -signal.SIGTERM
