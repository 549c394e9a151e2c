"""The emulator's web stack: the Starlette app served by uvicorn over an already bound socket.

Kept apart from :mod:`.server` so that importing the emulator (its names, faults, log) costs no web
framework: :meth:`.server.Emulator.start` imports this module on the first start.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Coroutine
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .app import build_app
from .log import RequestLog
from .wire import EmulatorState

__all__ = ["KEEP_ALIVE", "Serve", "config", "serve"]

# Seconds an idle keep-alive connection stays open. uvicorn's 5 s default raced pooled clients: on a
# loaded runner a client reused a connection the server had just timed out (closed, not yet seen by
# the client), and its request met a reset (httpx ReadError) - a false failure of a correct target.
# An emulator lives for one check or test, so it never needs to reclaim idle connections itself.
KEEP_ALIVE = 3600

# serve(state, listening socket, set once serving, set to stop): runs until told to stop.
Serve = Callable[[EmulatorState, socket.socket, threading.Event, asyncio.Event], Coroutine[Any, Any, None]]


def _counting_protocol(log: RequestLog) -> type[H11Protocol]:
    """uvicorn's h11 protocol, counting TCP connections into ``log``. h11 is pinned (not "auto")
    so behaviour does not change when httptools happens to be installed."""

    class CountingH11Protocol(H11Protocol):
        _connection_id = 0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self._connection_id = log.connection_opened()
            super().connection_made(transport)

        def connection_lost(self, exc: Exception | None) -> None:
            super().connection_lost(exc)
            log.connection_closed(self._connection_id)

    return CountingH11Protocol


class _Server(uvicorn.Server):
    """A uvicorn server that reports startup and waits on an event instead of polling to exit."""

    def __init__(self, config: uvicorn.Config, started: threading.Event, exit_now: asyncio.Event) -> None:
        super().__init__(config)
        self._started_event = started
        self._exit_now = exit_now

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self._started_event.set()

    async def main_loop(self) -> None:
        await self.on_tick(0)  # fills the default headers once (none: date and server are off)
        await self._exit_now.wait()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # The same steps as uvicorn's shutdown minus its fixed 0.1 s pause, which would dominate a
        # test suite that starts a fresh emulator per test.
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        if self.server_state.tasks:
            grace = self.config.timeout_graceful_shutdown
            _, pending = await asyncio.wait(set(self.server_state.tasks), timeout=grace)
            for task in pending:
                task.cancel()
        for _ in range(3):  # let connection_lost callbacks run, so the connection counts settle
            await asyncio.sleep(0)
        for server in self.servers:
            await asyncio.wait_for(server.wait_closed(), timeout=2)


def config(state: EmulatorState) -> uvicorn.Config:
    """The uvicorn configuration ``serve`` uses for ``state``'s app."""
    return uvicorn.Config(
        build_app(state),
        http=_counting_protocol(state.log),
        ws="none",
        lifespan="off",
        log_config=None,
        proxy_headers=False,
        server_header=False,
        date_header=False,  # responses stay byte-identical across runs
        timeout_graceful_shutdown=2,
        timeout_keep_alive=KEEP_ALIVE,
    )


async def serve(state: EmulatorState, sock: socket.socket, started: threading.Event, exit_now: asyncio.Event) -> None:
    """Serve ``state``'s app on ``sock`` until ``exit_now`` is set; ``started`` is set once it serves."""
    await _Server(config(state), started, exit_now).serve(sockets=[sock])
