"""Long-lived HTTP clients for the DeepSeek providers.

Each provider keeps one ``httpx.AsyncClient`` per event loop and per :class:`ClientKey` (endpoint
base, credential, timeout), reused across operations, so a batch does not pay for a new client,
a new TLS context and new connections on every search. The rules that keep pooling safe:

* One client per credential: two accounts never share a connection.
* A cancelled or failed exchange never hands a half-read connection back: httpcore closes a
  connection whose response was not read to the end (``post`` always closes the response).
* Per event loop: a client's connections belong to the loop that opened them. A runtime used from
  several ``asyncio.run`` calls (CLI, tests) gets a client per loop, and a loop's clients are
  closed when that loop shuts down (``asyncio.run`` finalises async generators, and each loop's
  clients hang off one), or by :meth:`ClientPool.aclose`, whichever comes first.
* At most :data:`MAX_CLIENTS` per loop: a settings change retires the least recently used client,
  which closes once its in-flight operations end.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import threading
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.cookiejar import CookieJar, DefaultCookiePolicy

import httpx

__all__ = ["MAX_CLIENTS", "ClientKey", "ClientPool", "new_client", "tls_context"]

MAX_CLIENTS = 4


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process-wide TLS context: loading the CA bundle costs ~16 ms of CPU on the event loop."""
    return httpx.create_ssl_context(trust_env=False)


class _Borrowed(httpx.AsyncBaseTransport):
    """A caller's transport, which closing our client must not close."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        return None


def new_client(transport: httpx.AsyncBaseTransport | None, timeout_s: float) -> httpx.AsyncClient:
    """A client that never follows redirects, reads proxy settings from the environment or keeps
    cookies: a reused client must carry nothing from one operation into the next (the requests
    send only the headers each provider lists)."""
    return httpx.AsyncClient(
        transport=_Borrowed(transport) if transport is not None else None,
        verify=tls_context() if transport is None else True,
        cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),  # no domain may set one
        trust_env=False,
        follow_redirects=False,
        timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
    )


@dataclass(frozen=True, slots=True)
class ClientKey:
    """What a client is bound to: one snapshot's endpoint base, credential and timeout."""

    base: str
    credential: str = field(repr=False)
    timeout_s: float


@dataclass(slots=True, eq=False)
class _Entry:
    client: httpx.AsyncClient
    users: int = 0
    retired: bool = False


class _LoopClients:
    """The clients of one event loop. ``guard`` is an async generator started on that loop, so
    the loop's shutdown (``shutdown_asyncgens``) runs its ``finally`` and closes every client."""

    def __init__(self, forget: Callable[[_LoopClients], None]) -> None:
        self.entries: OrderedDict[ClientKey, _Entry] = OrderedDict()
        self.retired: list[_Entry] = []
        self.guard = self._guard(forget)

    async def _guard(self, forget: Callable[[_LoopClients], None]) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            forget(self)
            await self.close_all()

    async def close_all(self) -> None:
        entries = [*self.entries.values(), *self.retired]
        self.entries.clear()
        self.retired.clear()
        for entry in entries:
            await entry.client.aclose()

    def take(self, key: ClientKey, transport: httpx.AsyncBaseTransport | None) -> tuple[_Entry, list[_Entry]]:
        """The entry for ``key`` (created if new), and the idle entries it pushed out, to close."""
        entry = self.entries.get(key)
        if entry is None:
            entry = self.entries[key] = _Entry(new_client(transport, key.timeout_s))
        self.entries.move_to_end(key)
        entry.users += 1
        idle: list[_Entry] = []
        while len(self.entries) > MAX_CLIENTS:
            _, old = self.entries.popitem(last=False)
            old.retired = True
            (idle if old.users == 0 else self.retired).append(old)
        return entry, idle


class ClientPool:
    """The clients of one provider. ``transport`` (tests, the emulator) is borrowed, never closed."""

    def __init__(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._transport = transport
        self._loops: dict[asyncio.AbstractEventLoop, _LoopClients] = {}
        self._lock = threading.Lock()  # the loops of several threads may share one provider

    async def _for_running_loop(self) -> _LoopClients:
        loop = asyncio.get_running_loop()
        with self._lock:
            for gone in [other for other in self._loops if other.is_closed()]:
                del self._loops[gone]  # closed without finalising its async generators
            clients = self._loops.get(loop)
            fresh = clients is None
            if clients is None:
                clients = self._loops[loop] = _LoopClients(self._forget)
        if fresh:
            await anext(clients.guard)  # registers the guard with this loop's shutdown
        return clients

    @asynccontextmanager
    async def lease(self, key: ClientKey) -> AsyncIterator[httpx.AsyncClient]:
        """The client for ``key`` on the running loop, for the length of one exchange."""
        clients = await self._for_running_loop()
        entry, idle = clients.take(key, self._transport)
        for old in idle:
            await old.client.aclose()
        try:
            yield entry.client
        finally:
            entry.users -= 1
            if entry.retired and entry.users == 0 and entry in clients.retired:
                await entry.client.aclose()
                clients.retired.remove(entry)

    def _forget(self, clients: _LoopClients) -> None:
        with self._lock:
            for loop in [loop for loop, held in self._loops.items() if held is clients]:
                del self._loops[loop]

    def open_clients(self) -> int:
        """How many clients the running loop holds (retired ones still in use included)."""
        clients = self._loops.get(asyncio.get_running_loop())
        return 0 if clients is None else len(clients.entries) + len(clients.retired)

    async def aclose(self) -> None:
        """Close the running loop's clients (and their connections). The pool stays usable: a later
        operation opens a new client."""
        clients = self._loops.get(asyncio.get_running_loop())
        if clients is not None:
            await clients.guard.aclose()
