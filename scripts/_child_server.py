"""Run a loopback server for a benchmark in a child process, so its CPU never competes with the
measured client for this process's GIL. The child prints its port on one line, then serves until
its stdin closes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Child:
    port: int
    pid: int

    def cpu_seconds(self) -> float | None:
        """User + system CPU the child has used so far (Linux /proc; None elsewhere)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def child_server(script: str, *args: str) -> Iterator[Child]:
    """Start ``python script *args``; yield it once it has printed its port; stop it on exit."""
    child = subprocess.Popen([sys.executable, script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.strip().isdigit():
            raise SystemExit(f"server child did not start: {line!r}")
        yield Child(int(line), child.pid)
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(timeout=30)


def serve_until_stdin_closes(port: int) -> None:
    print(port, flush=True)
    sys.stdin.read()
