"""What the kernel knows about the emulator's TCP connections, read the moment an answer arrives.

The emulator learns that a client closed a connection on its own event loop, a moment after the
fact; the kernel knows at once. On loopback a client's ``close()`` has put the FIN into the
server-side socket (state ``CLOSE_WAIT``) by the time the call returns, so "the connection of this
held request is still ``ESTABLISHED`` when the answer line is read" proves the implementation
answered before closing it, with no time tolerance. The emulator runs in this process, so its
server-side sockets are in this network namespace's table (``/proc/net/tcp``, Linux).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

__all__ = ["established_peers"]

_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
_ESTABLISHED = "01"


def established_peers(server_port: int, peers: Collection[int]) -> set[int] | None:
    """Which of the client ``peers`` (ports) hold an ESTABLISHED connection to ``server_port`` on the
    server side right now; None when the kernel table cannot be read (not Linux)."""
    suffix = f":{server_port:04X}"
    wanted = set(peers)
    found: set[int] = set()
    readable = False
    for table in _TABLES:
        try:
            text = table.read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        readable = True
        for line in text.splitlines()[1:]:
            fields = line.split(None, 4)
            if len(fields) < 4 or fields[3] != _ESTABLISHED or not fields[1].endswith(suffix):
                continue
            try:
                peer = int(fields[2].rsplit(":", 1)[1], 16)
            except (IndexError, ValueError):
                continue
            if peer in wanted:
                found.add(peer)
    return found if readable else None
