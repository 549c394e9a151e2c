"""Long-lived HTTP clients for the DeepSeek providers.

Each provider keeps one ``httpx.AsyncClient`` per event loop and per :class:`ClientKey` (endpoint
base, credential, timeout), reused across operations, so a batch does not pay for a new client,
a new TLS context and new connections on every search. The rules that keep pooling safe:

* One client per credential: two accounts never share a connection.
* A cancelled or failed exchange never hands a half-read connection back: httpcore closes a
  connection whose response was not read to the end (``post`` always closes the response).
* A response's close runs to its end even when the caller is cancelled during it (:func:`close_in_full`):
  httpcore's close awaits a lock, its cancel shield does not stop asyncio's own ``Task.cancel``, and a
  close cut there left the connection ACTIVE in the pool for good (issue 20 item 1).
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
import weakref
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.cookiejar import CookieJar, DefaultCookiePolicy

import httpcore
import httpx

from ._scheduler import wire_hook

__all__ = ["MAX_CLIENTS", "ClientKey", "ClientPool", "close_in_full", "new_client", "tls_context"]

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
        # What it does with the request is its own affair: for a paced send, the hand-over is the
        # start (our own network transport reports the real write instead).
        on_wire = wire_hook()
        if on_wire is not None:
            on_wire()
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        return None


async def close_in_full(close: Callable[[], Awaitable[None]]) -> None:
    """Run ``close()`` to its end in a task of its own; a cancel of the caller meanwhile is re-raised
    once the close has finished.

    httpcore marks a response closed, then awaits its connection's lock to put the connection back
    (IDLE) or close it. A batch cancelling a sibling whose answer had just been read in full landed on
    that await (anyio's shield does not stop asyncio's ``Task.cancel``): the connection stayed ACTIVE,
    its socket in CLOSE_WAIT, never reused nor closed until the client closed. In its own task the
    close cannot be cut; the caller's cancel lands on its wait for it instead."""
    closing = asyncio.ensure_future(close())
    cancelled: asyncio.CancelledError | None = None
    while True:
        try:
            await asyncio.shield(closing)
            break
        except asyncio.CancelledError as exc:
            if not closing.done():
                cancelled = exc  # ours: keep waiting for the close, raise it afterwards
                continue
            if not closing.cancelled():
                closing.exception()  # retrieved: the caller's cancel is what propagates
            raise
    if cancelled is not None:
        raise cancelled


class _ClosesInFull(httpx.AsyncByteStream):
    """A response body whose :meth:`aclose` is :func:`close_in_full`, then tells its transport."""

    def __init__(self, inner: httpx.AsyncByteStream, done: Callable[[], Awaitable[None]]) -> None:
        self._inner = inner
        self._done: Callable[[], Awaitable[None]] | None = done

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._inner:
            yield part

    async def aclose(self) -> None:
        done, self._done = self._done, None
        try:
            await close_in_full(self._inner.aclose)
        finally:
            if done is not None:
                await done()


class _Network(httpx.AsyncBaseTransport):
    """httpx's own network transport (what ``AsyncClient`` would build), with two repairs for
    cancellation, which httpcore 1.0 does not survive:

    * responses close in full (:func:`close_in_full`), so a connection goes back IDLE;
    * whenever no exchange is in flight, a connection that is neither idle nor closed belongs to no
      one (httpcore leaves one CONNECTING when a request is cancelled between being given a new
      connection and dialling it, encode/httpcore#1093; or ACTIVE after a close cut short): such a
      pool is replaced by a fresh one and closed, before the strays can fill its 100 slots.
    """

    def __init__(self) -> None:
        self.inner = self._fresh()
        self._in_flight = 0

    @staticmethod
    def _fresh() -> httpx.AsyncHTTPTransport:
        return httpx.AsyncHTTPTransport(verify=tls_context(), trust_env=False)

    def stray_connections(self) -> int:
        """Connections that are neither idle nor closed while no exchange is in flight (always 0
        after a repair); while one is in flight, 0."""
        if self._in_flight:
            return 0
        return sum(1 for c in _connections(self.inner) if not (c.is_idle() or c.is_closed()))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self._in_flight += 1
        try:
            response = await self.inner.handle_async_request(request)
        except BaseException:
            await self._ended()
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _ClosesInFull(response.stream, self._ended)
        return response

    async def _ended(self) -> None:
        self._in_flight -= 1
        if self.stray_connections():
            stale, self.inner = self.inner, self._fresh()  # later requests never see the stale pool
            await close_in_full(stale.aclose)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _connections(transport: httpx.AsyncHTTPTransport) -> list[httpcore.AsyncConnectionInterface]:
    # httpx keeps its httpcore pool private; without it there is nothing to inspect or repair.
    pool = getattr(transport, "_pool", None)
    return list(pool.connections) if isinstance(pool, httpcore.AsyncConnectionPool) else []


def new_client(transport: httpx.AsyncBaseTransport | None, timeout_s: float) -> httpx.AsyncClient:
    """A client that never follows redirects, reads proxy settings from the environment or keeps
    cookies: a reused client must carry nothing from one operation into the next (the requests
    send only the headers each provider lists). Without ``transport``, the network through
    :class:`_Network`; a given one is borrowed (closing the client leaves it open), except a
    :class:`_Network`, which belongs to the client."""
    if transport is None:
        transport = _Network()
    return httpx.AsyncClient(
        transport=transport if isinstance(transport, _Network) else _Borrowed(transport),
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
    network: _Network | None  # the client's own network transport (None: a borrowed one)
    users: int = 0
    retired: bool = False


async def _guard(
    clients: weakref.ref[_LoopClients], forget: weakref.WeakMethod[Callable[[_LoopClients], None]]
) -> AsyncGenerator[None, None]:
    """See :class:`_LoopClients`: closes the clients at the loop's shutdown while their pool lives."""
    try:
        yield
    finally:
        alive, forgetting = clients(), forget()
        if alive is not None:
            if forgetting is not None:
                forgetting(alive)
            await alive.close_all()


class _LoopClients:
    """The clients of one event loop. ``guard`` is an async generator started on that loop, so
    the loop's shutdown (``shutdown_asyncgens``) runs its ``finally`` and closes every client.

    The guard holds the clients and the pool only weakly. A pool dropped without ``aclose`` (a
    runtime replaced) is then freed at once, its plain sockets closed by their finalisers (a TLS
    connection stays with the loop, which keeps reading it, until its server closes it), and the
    guard's late ``finally`` (the loop runs it after the generator is finalised) finds nothing to close. Holding
    them strongly, it closed the dead connections afterwards, and the close removed the loop's reader of
    the descriptor number: by then the number could belong to a live connection, whose answer was never
    read (its request waited for its deadline although the server had answered)."""

    def __init__(self, forget: Callable[[_LoopClients], None]) -> None:
        self.entries: OrderedDict[ClientKey, _Entry] = OrderedDict()
        self.retired: list[_Entry] = []
        self.guard = _guard(weakref.ref(self), weakref.WeakMethod(forget))

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
            network = _Network() if transport is None else None
            entry = self.entries[key] = _Entry(new_client(transport or network, key.timeout_s), network)
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

    def stray_connections(self) -> int:
        """Connections of the running loop's clients that no exchange owns (neither idle nor closed
        while none is in flight): always 0 unless pooling broke."""
        clients = self._loops.get(asyncio.get_running_loop())
        entries = [] if clients is None else [*clients.entries.values(), *clients.retired]
        return sum(e.network.stray_connections() for e in entries if e.network is not None)

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
