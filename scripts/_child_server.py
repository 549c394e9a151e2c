"""Run a loopback server for a benchmark in a child process, so its CPU never competes with the
measured client for this process's GIL. The child prints its port on one line, then serves until
its stdin closes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def child_server(script: str, *args: str) -> Iterator[int]:
    """Start ``python script *args`` and yield the port it prints; stop it on exit."""
    child = subprocess.Popen([sys.executable, script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.strip().isdigit():
            raise SystemExit(f"server child did not start: {line!r}")
        yield int(line)
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(timeout=30)


def serve_until_stdin_closes(port: int) -> None:
    print(port, flush=True)
    sys.stdin.read()
