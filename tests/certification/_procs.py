"""Process liveness for the tests that prove a run leaves no process behind (check worker, adapters)."""

from __future__ import annotations

import os
import time


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs. A zombie has ended: only its exit status waits for its reaper, and an orphan's
    reaper (init) may take seconds: about 2 s on this quiet machine, and a loaded fresh-clone CI run reported an
    adapter "survived its worker" after 5 s, most likely such a zombie (the orphan's state was not captured)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):  # no /proc (not Linux), or gone meanwhile
        return True if not os.path.isdir("/proc") else os.path.exists(f"/proc/{pid}")


def gone(pid: int, within: float = 5.0) -> bool:
    """Whether ``pid`` ended within ``within`` seconds (reaped by its parent or by init)."""
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)
