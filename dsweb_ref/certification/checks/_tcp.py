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

__all__ = ["established_peers", "unread_bytes"]

_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
_ESTABLISHED = "01"


def _rows(fields: int) -> tuple[bool, list[list[str]]]:
    """Whether a kernel table could be read, and each of its connections' lines split into its first ``fields``
    fields (the rest in one)."""
    rows: list[list[str]] = []
    readable = False
    for table in _TABLES:
        try:
            text = table.read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        readable = True
        rows += [line.split(None, fields) for line in text.splitlines()[1:]]
    return readable, rows


def established_peers(server_port: int, peers: Collection[int]) -> set[int] | None:
    """Which of the client ``peers`` (ports) hold an ESTABLISHED connection to ``server_port`` on the
    server side right now; None when the kernel table cannot be read (not Linux)."""
    suffix = f":{server_port:04X}"
    wanted = set(peers)
    found: set[int] = set()
    readable, rows = _rows(4)
    for fields in rows:
        if len(fields) < 4 or fields[3] != _ESTABLISHED or not fields[1].endswith(suffix):
            continue
        try:
            peer = int(fields[2].rsplit(":", 1)[1], 16)
        except (IndexError, ValueError):
            continue
        if peer in wanted:
            found.add(peer)
    return found if readable else None


def unread_bytes(server_port: int, clients: Collection[int]) -> int | None:
    """Bytes the emulator sent on the connections from the client ports ``clients`` that the client has not read
    yet (the kernel's receive queue of each client socket; a socket gone counts as read); None when the kernel table
    cannot be read (not Linux)."""
    wanted = {f":{port:04X}" for port in clients}
    server = f":{server_port:04X}"
    unread = 0
    readable, rows = _rows(5)
    for fields in rows:
        if len(fields) < 5 or not fields[2].endswith(server) or fields[1][fields[1].rfind(":"):] not in wanted:
            continue
        try:
            unread += int(fields[4].split(":")[1], 16)
        except (IndexError, ValueError):
            continue
    return unread if readable else None
