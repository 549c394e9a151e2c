"""Process liveness for the tests that prove a run leaves no process behind (check worker, adapters)."""

from __future__ import annotations

import os
import time


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def gone(pid: int, within: float = 5.0) -> bool:
    """Whether ``pid`` ended within ``within`` seconds (reaped by its parent or by init)."""
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)
