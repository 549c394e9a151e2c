"""Pooled HTTP clients in the DeepSeek providers: reuse, and every guarantee pooling could break.

Everything crosses a real socket to the emulator; its log names the TCP connection (client port)
of every request, so "reused", "closed" and "never shared" are read from what the server saw.
Ordering comes from emulator gates, never from sleeps.
"""

from __future__ import annotations

import asyncio
import gc
import json
import ssl
import time
from collections.abc import Awaitable, Callable
from types import SimpleNamespace

import httpcore._async.http11
import httpx
import pytest
from pool_state import stray

from dsweb_ref import CallContext, FetchRequest, SearchRequest, WebError, WebErrorCode
from dsweb_ref.emulator import Emulator, Gate, Hold, Redirect, SlowBody
from dsweb_ref.emulator.fixtures import EmulatorFactory
from dsweb_ref.emulator.server import DEFAULT_API_KEY
from dsweb_ref.providers import _client_pool
from dsweb_ref.providers.deepseek_fetch_api import DeepSeekFetchApi
from dsweb_ref.providers.deepseek_official import DeepSeekMessagesSearch
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.providers.http_fetch import HttpFetchProvider
from dsweb_ref.replay._bases import credential_environ, settings_for_bases
from dsweb_ref.runtime import build_runtime
from dsweb_ref.settings import Settings

from ._loopback import Loopback, Reply

KEY_A = "dsweb-pool-key-aaaa-0001"
KEY_B = "dsweb-pool-key-bbbb-0002"
ACCOUNTS = {"KEY_A": KEY_A, "KEY_B": KEY_B}


def _settings(emu: Emulator, **overrides: object) -> Settings:
    return settings_for_bases(emu.messages_base, emu.tools_base, overrides=overrides)


def _api(emu: Emulator, key: str) -> DeepSeekSearchApi:
    snapshot = _settings(emu)
    return DeepSeekSearchApi(lambda: snapshot, environ=credential_environ(key))


def _ports(emu: Emulator, route: str = "search") -> list[int]:
    return [r.client[1] for r in emu.log.for_route(route) if r.client is not None]


async def _search(provider: DeepSeekSearchApi | DeepSeekMessagesSearch, query: str = "coffee") -> None:
    result = await provider.search(SearchRequest(query), CallContext())
    assert result.sources


async def _cancel_then_search_again(emu: Emulator, task: asyncio.Task[object], provider: DeepSeekSearchApi) -> None:
    """Cancel ``task``; its connection (the pool's only one) must close before the next search runs."""
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.to_thread(emu.log.wait_until, lambda log: log.connections_open == 0, 10.0, "closed")
    await _search(provider, "asyncio")


def test_operations_reuse_one_connection(emulator: Emulator, emulator_api_key: str) -> None:
    provider = _api(emulator, emulator_api_key)

    async def scenario() -> None:
        for query in ("coffee", "markdown", "asyncio"):
            await _search(provider, query)
        assert provider._clients.open_clients() == 1

    asyncio.run(scenario())
    ports = _ports(emulator)
    assert len(ports) == 3 and len(set(ports)) == 1
    assert emulator.log.connections_opened == 1


def test_all_three_providers_reuse_their_connection(emulator: Emulator, emulator_api_key: str) -> None:
    snapshot = _settings(emulator)
    env = credential_environ(emulator_api_key)
    messages = DeepSeekMessagesSearch(lambda: snapshot, environ=env)
    fetch = DeepSeekFetchApi(lambda: snapshot, environ=env)

    async def scenario() -> None:
        for _ in range(2):
            await _search(messages)
            await fetch.fetch(FetchRequest("https://docs.example.test/api/fetch"), CallContext())

    asyncio.run(scenario())
    for route in ("messages", "fetch"):
        ports = _ports(emulator, route)
        assert len(ports) == 2 and len(set(ports)) == 1, route
    # Seed 001: the Messages and the Search/Fetch API providers keep their own transports.
    assert set(_ports(emulator, "messages")).isdisjoint(_ports(emulator, "fetch"))


def test_cancelled_pooled_request_closes_its_connection(emulator: Emulator, emulator_api_key: str) -> None:
    """A request cancelled while the emulator holds it, on a warm (reused) connection: the server sees
    the disconnect, that connection is closed rather than pooled, and the next call works."""
    provider = _api(emulator, emulator_api_key)
    gate = emulator.gate("pooled-cancel")

    async def scenario() -> None:
        await _search(provider)  # warms the pool
        emulator.inject("search", Hold(gate, timeout=60))
        task: asyncio.Task[object] = asyncio.create_task(provider.search(SearchRequest("markdown"), CallContext()))
        await asyncio.to_thread(gate.wait_held, 1, 10.0)
        await _cancel_then_search_again(emulator, task, provider)

    asyncio.run(scenario())
    warm, held, after = emulator.log.wait_for(3, route="search", done=True, timeout=10.0)
    assert held.client == warm.client, "the held request did not ride the pooled connection"
    assert held.disconnected and held.status is None
    assert after.client != held.client and after.status == 200
    assert gate.held == 0


def test_cancel_mid_body_never_pools_a_half_read_connection(emulator: Emulator, emulator_api_key: str) -> None:
    provider = _api(emulator, emulator_api_key)
    emulator.inject("search", SlowBody(chunk_size=16, delay=60))

    async def scenario() -> None:
        task: asyncio.Task[object] = asyncio.create_task(provider.search(SearchRequest("coffee"), CallContext()))
        # The answer has started (status sent, first 16 bytes on their way); its body never ends.
        await asyncio.to_thread(
            emulator.log.wait_until, lambda log: log.records() and log.records()[0].status, 10.0, "answer started"
        )
        await _cancel_then_search_again(emulator, task, provider)

    asyncio.run(scenario())
    slow, after = emulator.log.wait_for(2, route="search", done=True, timeout=10.0)
    assert slow.disconnected and slow.status == 200
    assert after.client != slow.client and after.status == 200


def test_redirect_on_a_pooled_connection_is_not_followed(emulator: Emulator, emulator_api_key: str) -> None:
    provider = _api(emulator, emulator_api_key)

    async def scenario() -> None:
        await _search(provider)
        emulator.inject("search", Redirect(307))
        with pytest.raises(WebError) as info:
            await _search(provider, "markdown")
        assert info.value.code == WebErrorCode.PROVIDER_ERROR and "redirect" in info.value.message
        await _search(provider, "asyncio")

    asyncio.run(scenario())
    assert not emulator.log.trap_hits()
    assert [r.status for r in emulator.log.for_route("search")] == [200, 307, 200]


def test_accounts_never_share_a_connection(emulator_factory: EmulatorFactory) -> None:
    """Two credentials in turn and at once: separate clients, each request carries its own key, and
    no TCP connection ever carries both keys."""
    emu = emulator_factory(api_keys=(KEY_A, KEY_B))
    snapshots = [_settings(emu, **{"credentials.api_key_env": name}) for name in ("KEY_A", "KEY_B")]
    calls: list[int] = []

    def source() -> Settings:
        calls.append(1)
        return snapshots[len(calls) % 2]

    provider = DeepSeekSearchApi(source, environ=ACCOUNTS)

    async def scenario() -> None:
        for query in ("coffee", "markdown"):
            await _search(provider, query)
        await asyncio.gather(*(_search(provider, q) for q in ("asyncio", "redirect", "coffee", "markdown")))
        assert provider._clients.open_clients() == 2

    asyncio.run(scenario())
    records = emu.log.for_route("search")
    assert len(records) == 6
    by_key: dict[str, set[int]] = {"****0001": set(), "****0002": set()}
    for record in records:
        assert record.credential == "api_key"
        shown = (record.header("authorization") or "").removeprefix("Bearer ")
        assert record.client is not None
        by_key[shown].add(record.client[1])
    assert by_key["****0001"] and by_key["****0002"]
    assert by_key["****0001"].isdisjoint(by_key["****0002"])


def test_settings_change_mid_operation_keeps_endpoint_and_key_paired(emulator_factory: EmulatorFactory) -> None:
    """Operation 1 takes snapshot A and is held at A; the settings then switch to B (another base and
    key) and operation 2 runs. A only ever sees A's key, B only B's."""
    emu_a, emu_b = emulator_factory(api_keys=(KEY_A,)), emulator_factory(api_keys=(KEY_B,))
    current = [settings_for_bases(None, emu_a.tools_base, overrides={"credentials.api_key_env": "KEY_A"})]
    provider = DeepSeekSearchApi(lambda: current[0], environ=ACCOUNTS)
    gate = emu_a.gate("mid-operation")

    async def scenario() -> None:
        await _search(provider)  # warm A's client
        emu_a.inject("search", Hold(gate, timeout=60))
        held = asyncio.create_task(_search(provider, "markdown"))
        await asyncio.to_thread(gate.wait_held, 1, 10.0)
        current[0] = settings_for_bases(None, emu_b.tools_base, overrides={"credentials.api_key_env": "KEY_B"})
        await _search(provider, "asyncio")
        gate.release()
        await held

    asyncio.run(scenario())
    assert [r.credential for r in emu_a.log.for_route("search")] == ["api_key", "api_key"]
    assert [r.credential for r in emu_b.log.for_route("search")] == ["api_key"]
    assert {r.header("authorization") for r in emu_a.log.records()} == {"Bearer ****0001"}
    assert {r.header("authorization") for r in emu_b.log.records()} == {"Bearer ****0002"}


def test_clients_follow_the_event_loop(emulator: Emulator, emulator_api_key: str) -> None:
    """A provider used from two asyncio.run calls: the first loop's shutdown closes its connection,
    and the second loop opens its own instead of touching a connection of a closed loop."""
    provider = _api(emulator, emulator_api_key)
    asyncio.run(_search(provider))
    assert provider._clients._loops == {}  # the loop's shutdown closed its clients and let go of it
    emulator.log.wait_connections_closed(10.0)
    asyncio.run(_search(provider, "markdown"))
    emulator.log.wait_connections_closed(10.0)
    first, second = emulator.log.for_route("search")
    assert first.status == second.status == 200 and first.client != second.client
    assert (emulator.log.connections_opened, emulator.log.connections_closed) == (2, 2)


def test_runtime_close_closes_pooled_connections(emulator: Emulator, emulator_api_key: str) -> None:
    snapshot = settings_for_bases(emulator.messages_base, emulator.tools_base, new_api=True)

    async def scenario() -> None:
        async with build_runtime(lambda: snapshot, environ=credential_environ(emulator_api_key)) as runtime:
            result = await runtime.search_tool().execute({"queries": ["coffee", "markdown"]})
            assert not result.is_error
            assert emulator.log.connections_open >= 1  # kept alive in the pool, not closed per call
        # Closed by the runtime, while this loop still runs.
        await asyncio.to_thread(emulator.log.wait_connections_closed, 10.0)

    asyncio.run(scenario())


def test_retired_clients_are_closed(emulator: Emulator, emulator_api_key: str) -> None:
    """More distinct snapshots than MAX_CLIENTS: the least recently used clients are closed."""
    timeouts = [10.0 + i for i in range(_client_pool.MAX_CLIENTS + 3)]
    snapshots = iter([_settings(emulator, **{"deepseek_api.timeout_s": t}) for t in timeouts])
    provider = DeepSeekSearchApi(lambda: next(snapshots), environ=credential_environ(emulator_api_key))

    async def scenario() -> None:
        for _ in timeouts:
            await _search(provider)
            assert provider._clients.open_clients() <= _client_pool.MAX_CLIENTS
        count = _client_pool.MAX_CLIENTS
        await asyncio.to_thread(emulator.log.wait_until, lambda log: log.connections_open == count, 10.0, "retired")
        await provider.aclose()
        assert provider._clients.open_clients() == 0

    asyncio.run(scenario())
    emulator.log.wait_connections_closed(10.0)


def test_one_tls_context_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading the CA bundle is the costly part of a client; it happens once per process."""
    made: list[int] = []
    original: Callable[..., ssl.SSLContext] = ssl.create_default_context

    def counting(*args: object, **kwargs: object) -> ssl.SSLContext:
        made.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl, "create_default_context", counting)
    _client_pool.tls_context.cache_clear()
    try:
        providers = [DeepSeekSearchApi(Settings, environ={}) for _ in range(3)]

        async def scenario() -> None:
            for provider in providers:
                async with provider._clients.lease(_client_pool.ClientKey("https://a.test", "k", 5.0)):
                    pass
                await provider.aclose()

        asyncio.run(scenario())
    finally:
        _client_pool.tls_context.cache_clear()
    assert len(made) == 1


def test_a_reused_client_never_keeps_cookies(loopback: Loopback) -> None:
    """Seed 001: requests carry only the documented headers. A pooled client must not turn a
    Set-Cookie from one answer into a Cookie header on the next request."""
    body = json.dumps({"results": []}).encode()
    loopback.routes["/v1/tools/search"] = Reply(200, body, {"Set-Cookie": "session=abc123; Path=/"})
    snapshot = Settings().updated({"deepseek_api.base_url": loopback.url("/v1/tools")})
    provider = DeepSeekSearchApi(lambda: snapshot, environ={"DEEPSEEK_API_KEY": KEY_A})

    async def scenario() -> None:
        for query in ("coffee", "markdown"):
            await provider.search(SearchRequest(query), CallContext())

    asyncio.run(scenario())
    assert len(loopback.seen) == 2
    for seen in loopback.seen:
        assert seen.header_names == {"host", "content-length", "authorization", "content-type"}


# --- cancellation must not strand a connection (issue 20 item 1) --------------------------------
# httpcore 1.0 strands a connection in two places when asyncio cancels the request's task; each test
# puts the cancel exactly there, by ordering (httpx's trace hook, the loop's queue), not by chance.


def _hook_requests(monkeypatch: pytest.MonkeyPatch, hook: Callable[[httpx.Request], Awaitable[None]]) -> None:
    """Every pooled client created from now on calls ``hook`` on each request, in the request's task."""
    real = _client_pool.new_client

    def hooked(transport: httpx.AsyncBaseTransport | None, timeout_s: float) -> httpx.AsyncClient:
        client = real(transport, timeout_s)
        client.event_hooks = {"request": [hook], "response": []}
        return client

    monkeypatch.setattr(_client_pool, "new_client", hooked)


def test_a_cancel_during_the_close_of_a_full_answer_leaves_the_connection_idle(
    emulator: Emulator, emulator_api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch cancels a sibling whose 200 answer has been read in full, just as the response
    closes (httpcore then awaits the connection's lock). The connection goes back IDLE and the next
    search rides it; before the fix it stayed ACTIVE (socket in CLOSE_WAIT) until the client closed."""
    armed: list[asyncio.Task[object]] = []

    async def trace(name: str, info: object) -> None:
        if name == "http11.response_closed.started" and armed:
            armed.pop().cancel()  # what run_all_or_nothing does to a sibling

    async def hook(request: httpx.Request) -> None:
        request.extensions["trace"] = trace

    _hook_requests(monkeypatch, hook)
    provider = _api(emulator, emulator_api_key)

    async def scenario() -> None:
        await _search(provider)  # warms the pool: one IDLE connection
        task: asyncio.Task[object] = asyncio.create_task(provider.search(SearchRequest("markdown"), CallContext()))
        armed.append(task)
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not armed, "the cancel never reached the close"
        assert stray(provider) == [], "a connection stayed ACTIVE after its answer was read"
        await _search(provider, "asyncio")
        assert stray(provider) == []

    asyncio.run(scenario())
    warm, cancelled, after = emulator.log.wait_for(3, route="search", done=True, timeout=10.0)
    assert cancelled.status == 200 and not cancelled.disconnected  # the answer had arrived in full
    assert warm.client == cancelled.client == after.client  # kept warm, not thrown away


def test_a_cancel_between_getting_a_new_connection_and_dialling_it_strands_nothing(
    emulator: Emulator, emulator_api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpcore gives a request a new (CONNECTING) connection, then closes the pool's expired ones
    before dialling; a cancel landing on that close left the new connection in the pool for good,
    never used nor reaped (encode/httpcore#1093), until 100 of them filled the pool. The pooled
    connection is made to look expired (httpcore's clock, moved an hour on) and the cancel is queued
    by the request hook, so it runs at that close."""
    armed: list[bool] = []

    async def hook(request: httpx.Request) -> None:
        searching = asyncio.current_task()
        if armed and searching is not None:
            armed.clear()
            asyncio.get_running_loop().call_soon(searching.cancel)

    _hook_requests(monkeypatch, hook)
    provider = _api(emulator, emulator_api_key)

    async def scenario() -> None:
        await _search(provider)  # one IDLE connection, which the cancelled request will find expired
        monkeypatch.setattr(httpcore._async.http11, "time", SimpleNamespace(monotonic=lambda: time.monotonic() + 3600))
        armed.append(True)
        task: asyncio.Task[object] = asyncio.create_task(provider.search(SearchRequest("markdown"), CallContext()))
        with pytest.raises(asyncio.CancelledError):
            await task
        monkeypatch.setattr(httpcore._async.http11, "time", time)
        assert not armed and stray(provider) == [], "a CONNECTING connection was left in the pool"
        await _search(provider, "asyncio")
        assert stray(provider) == [] and provider._clients.stray_connections() == 0

    asyncio.run(scenario())
    assert [r.status for r in emulator.log.for_route("search")] == [200, 200]  # the cancelled one never went out


class _GatedClient:
    """A pool entry's client whose close waits for ``gate``, then records that it was closed."""

    def __init__(self, gate: asyncio.Event | None, closed: list[str], name: str) -> None:
        self.gate, self.closed, self.name = gate, closed, name

    async def aclose(self) -> None:
        if self.gate is not None:
            await self.gate.wait()
        self.closed.append(self.name)


def _socket_fd(pool: _client_pool.ClientPool) -> int:
    (clients,) = pool._loops.values()
    entry = next(e for e in clients.entries.values() if e.network is not None)
    (connection,) = _client_pool._connections(entry.network.inner)
    transport = connection._connection._network_stream._stream._transport  # type: ignore[attr-defined]
    return int(transport.get_extra_info("socket").fileno())


def test_a_dropped_pool_never_closes_its_dead_connections_later(emulator: Emulator) -> None:
    """A pool dropped without aclose (certify's configure replaces a runtime so): the collector closes its
    sockets, freeing their descriptor numbers. The guard's close, run later on the loop, used to close the
    dead connections again, and that close removed the loop's reader of the number, which a new connection
    had taken meanwhile: the new request waited for its deadline although the server had answered
    (a CI run's "did not answer within 20s" in search.text.snippets). Ordered by gates and a trace event."""
    url = emulator.tools_base + "/search"
    headers = {"authorization": f"Bearer {DEFAULT_API_KEY}"}
    key = _client_pool.ClientKey(url, "key", 3.0)
    held = Gate("new request")
    emulator.inject("search", Hold(held, timeout=30), times=None, when=lambda body: body.get("query") == "new")

    async def scenario() -> tuple[int, int, list[str], int | str]:
        old = _client_pool.ClientPool()
        async with old.lease(key) as client:
            assert (await client.post(url, json={"query": "old"}, headers=headers)).status_code == 200
        dead_fd = _socket_fd(old)
        (clients,) = old._loops.values()
        gate, closed = asyncio.Event(), []
        # Before the real client: the guard's close waits at the gate; after it, a close is recorded.
        for name, where_first in (("first", True), ("last", False)):
            fake = _client_pool._Entry(_GatedClient(gate if where_first else None, closed, name), None)  # type: ignore[arg-type]
            clients.entries[_client_pool.ClientKey(name, "key", 1.0)] = fake
            clients.entries.move_to_end(_client_pool.ClientKey(name, "key", 1.0), last=not where_first)
        del old, clients, client, fake
        gc.collect()
        await asyncio.sleep(0)  # the finaliser's close task (the guard's aclose) is created on this loop now
        guard_closes = [t for t in asyncio.all_tasks() if type(t.get_coro()).__name__ == "async_generator_athrow"]
        assert len(guard_closes) == 1

        reading = asyncio.Event()

        async def trace(event: str, info: object) -> None:
            if event == "http11.receive_response_headers.started":
                reading.set()

        new = _client_pool.ClientPool()

        async def call() -> int:
            async with new.lease(key) as client:
                response = await client.post(url, json={"query": "new"}, headers=headers, extensions={"trace": trace})
                return response.status_code

        task = asyncio.ensure_future(call())
        await reading.wait()
        await asyncio.to_thread(held.wait_held, 1)
        new_fd = _socket_fd(new)
        gate.set()  # the dropped pool's close, if it still makes one, runs now, while the new one reads
        await asyncio.gather(*guard_closes)
        held.release()
        try:
            status: int | str = await task
        except httpx.HTTPError as exc:
            status = type(exc).__name__
        await new.aclose()
        return dead_fd, new_fd, closed, status

    gc.disable()
    try:
        dead_fd, new_fd, closed, status = asyncio.run(scenario())
    finally:
        gc.enable()
    assert new_fd == dead_fd  # the scenario itself: the new connection took the dead one's number
    assert status == 200  # before: ReadTimeout, the answer unread
    assert closed == []  # the dead pool's clients were left to their finalisers


def test_the_strict_fetcher_shares_the_process_tls_context() -> None:
    # One CA-bundle load per process: the strict HTTP fetcher takes the providers' context unless given its own.
    assert HttpFetchProvider()._ssl() is _client_pool.tls_context()
