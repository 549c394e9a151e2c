"""What the DeepSeek providers' connection pools hold, read from httpcore itself (tests only).

Read independently of the pool's own bookkeeping (``ClientPool.stray_connections``), so a test
built on it also fails on code that has no such bookkeeping: a connection is *stray* when it is
neither idle nor closed (ACTIVE, CONNECTING) while no request of the test is in flight.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpcore


def _pool_of(transport: Any) -> httpcore.AsyncConnectionPool | None:
    while transport is not None and not isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        transport = getattr(transport, "inner", None) or getattr(transport, "_inner", None)
    return None if transport is None else transport._pool


def connection_states(provider: Any) -> list[str]:
    """``repr`` of every pooled connection of ``provider``'s clients on the running loop."""
    clients = provider._clients._loops.get(asyncio.get_running_loop())
    if clients is None:
        return []
    states: list[str] = []
    for entry in [*clients.entries.values(), *clients.retired]:
        pool = _pool_of(entry.client._transport)
        states += [repr(c) for c in (pool.connections if pool is not None else [])]
    return states


def stray(provider: Any) -> list[str]:
    """The connections of ``provider`` that are neither idle nor closed (call when nothing is in flight)."""
    return [s for s in connection_states(provider) if "IDLE" not in s and "CLOSED" not in s]
