"""scripts/adapter_minimal.py, the adapter README tells people to copy: short, built only on what a
user of dsweb_ref would import, and certified for the profiles it claims."""

from __future__ import annotations

import ast
import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from dsweb_ref.cli import main

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = ROOT / "scripts" / "adapter_minimal.py"
PUBLIC = {"dsweb_ref", "dsweb_ref.runtime", "dsweb_ref.settings", "dsweb_ref.tools",
          "dsweb_ref.certification.adapter_protocol"}
EXAMPLE = ROOT / "tests" / "fixtures" / "example_adapter.py"


def test_it_reads_in_one_sitting() -> None:
    assert len(ADAPTER.read_text(encoding="utf-8").splitlines()) <= 250


def test_it_imports_only_public_dsweb_ref_modules() -> None:
    tree = ast.parse(ADAPTER.read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    ours = {m for m in modules if m.split(".")[0] == "dsweb_ref"}
    assert ours and ours <= PUBLIC, ours - PUBLIC


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_it_certifies_for_seed_000_and_the_search_api(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    code = main(["certify", "--adapter", f"{sys.executable} {ADAPTER}", "--profile", "seed-000-web-search",
                 "--profile", "seed-001-search-api", "--json", str(report)])
    verdicts = {p["name"]: p for p in json.loads(report.read_text(encoding="utf-8"))["profiles"]}
    assert code == 0, verdicts
    assert verdicts["seed-000-web-search"]["certified"] and verdicts["seed-001-search-api"]["certified"]


@pytest.mark.parametrize("adapter", [ADAPTER, EXAMPLE], ids=["minimal", "example"])
@pytest.mark.parametrize("stdin", ["/dev/null", "a file"])
def test_it_reads_stdin_that_is_not_a_pipe_and_ends_at_its_end(adapter: Path, stdin: str, tmp_path: Path) -> None:
    # catches: watching stdin on the loop whatever it is (epoll refuses /dev/null and files: the adapter
    # then waited for ever, run by hand with its input redirected)
    lines = ['{"id": 1, "method": "hello"}', '{"id": 2, "method": "shutdown"}']
    path = Path("/dev/null") if stdin == "/dev/null" else tmp_path / "requests.jsonl"
    if stdin != "/dev/null":
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with path.open("rb") as source:
        done = subprocess.run([sys.executable, str(adapter)], stdin=source, capture_output=True, timeout=60,
                              check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == ([] if stdin == "/dev/null" else [1, 2]), answers


@pytest.mark.parametrize("adapter", [ADAPTER, EXAMPLE], ids=["minimal", "example"])
def test_a_call_cancelled_before_its_task_began_still_answers_cancelled(adapter: Path) -> None:
    # catches: a cancel read in the same go as its call (one write, so one read: the reader takes both lines
    # before the call's task has run a step) cancelling a task whose coroutine never starts, so the answer it
    # would write on cancellation is never written. A fresh-clone CI run failed the example adapter so, in
    # fetch.cancel.quiescence ("adapter did not answer request 16 within 20s").
    lines = ['{"id": 1, "method": "hello"}',
             '{"id": 2, "method": "web_search", "params": {"arguments": {"queries": ["q"]}}}',
             '{"id": 3, "method": "cancel", "params": {"id": 2}}']
    proc = subprocess.Popen([sys.executable, str(adapter)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    read: queue.Queue[bytes] = queue.Queue()
    reader = threading.Thread(target=lambda: [read.put(line) for line in iter(proc.stdout.readline, b"")],
                              daemon=True)
    reader.start()
    try:
        proc.stdin.write(("\n".join(lines) + "\n").encode())  # well under PIPE_BUF: one atomic write
        proc.stdin.flush()
        answers: dict[int, object] = {}
        while 2 not in answers or 3 not in answers:
            try:
                answer = json.loads(read.get(timeout=30))
            except queue.Empty:
                pytest.fail(f"no answer to the cancelled call within 30 s; the adapter answered {answers}")
            answers[answer["id"]] = answer
        assert answers[2] == {"id": 2, "cancelled": True}
        assert answers[3] == {"id": 3, "result": {}}
        proc.stdin.write(b'{"id": 4, "method": "shutdown"}\n')
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        reader.join(timeout=10)
        assert [json.loads(line)["id"] for line in list(read.queue)] == [4]  # and nothing more for the call
    finally:
        proc.kill()
        proc.wait()
