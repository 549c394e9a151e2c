"""Connection pinning against real local servers: the checked address is the dialled
address, TLS keeps the original hostname, and nothing goes around the guard."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import httpcore
import pytest

from dsweb_ref import FetchRequest, WebError, WebErrorCode
from dsweb_ref.netguard import DEFAULT_POLICY, AddressPolicy, PinnedNetworkBackend
from dsweb_ref.providers.http_fetch import HttpFetchConfig, HttpFetchProvider

from ._servers import LOOPBACK_ONLY, FakeDNS, Listener, LocalServer, reply
from .conftest import TLS_HOST, TLSSetup

CONFIG = HttpFetchConfig(timeout_s=10)


def provider(dns: FakeDNS, **kwargs: object) -> HttpFetchProvider:
    return HttpFetchProvider(CONFIG, policy=LOOPBACK_ONLY, resolver=dns, **kwargs)  # type: ignore[arg-type]


def fetch(p: HttpFetchProvider, url: str) -> object:
    return asyncio.run(p.fetch(FetchRequest(url)))


def test_dials_the_checked_address_and_keeps_the_hostname(server: LocalServer) -> None:
    server.routes["/"] = lambda h: reply(h, 200, b"hello")
    dns = FakeDNS({"fetch.test": ["127.0.0.1"]})
    result = asyncio.run(provider(dns).fetch(FetchRequest(f"http://fetch.test:{server.port}/")))
    assert result.body.content == "hello"
    assert result.url == f"http://fetch.test:{server.port}/"
    assert server.seen[0].headers["host"] == f"fetch.test:{server.port}"
    assert dns.calls == ["fetch.test"]  # one lookup for one connection


def test_tls_sni_and_certificate_use_the_original_hostname(tls_server: LocalServer, tls: TLSSetup) -> None:
    tls_server.routes["/"] = lambda h: reply(h, 200, b"secure")
    dns = FakeDNS({TLS_HOST: ["127.0.0.1"]})
    result = asyncio.run(
        provider(dns, tls_context=tls.client).fetch(FetchRequest(f"https://{TLS_HOST}:{tls_server.port}/"))
    )
    assert result.status_code == 200 and result.body.content == "secure"
    assert tls_server.sni == [TLS_HOST]  # not the pinned IP
    assert tls_server.seen[0].headers["host"] == f"{TLS_HOST}:{tls_server.port}"


def test_tls_certificate_for_another_name_fails_verification(tls_server: LocalServer, tls: TLSSetup) -> None:
    tls_server.routes["/"] = lambda h: reply(h, 200, b"secure")
    dns = FakeDNS({"other.test": ["127.0.0.1"]})
    with pytest.raises(WebError) as info:
        fetch(provider(dns, tls_context=tls.client), f"https://other.test:{tls_server.port}/")
    assert info.value.code == WebErrorCode.PROVIDER_ERROR
    assert 'TLS certificate verification failed for "other.test"' in info.value.message
    assert tls_server.sni == ["other.test"]
    assert tls_server.seen == []


def test_tls_verification_is_on_by_default(tls_server: LocalServer) -> None:
    # Without the test CA in the trust store, the test certificate must be refused.
    tls_server.routes["/"] = lambda h: reply(h, 200, b"secure")
    dns = FakeDNS({TLS_HOST: ["127.0.0.1"]})
    with pytest.raises(WebError) as info:
        fetch(provider(dns), f"https://{TLS_HOST}:{tls_server.port}/")
    assert "TLS certificate verification failed" in info.value.message
    assert tls_server.seen == []


def test_rebinding_between_lookups_is_refused_with_no_private_connection(server: LocalServer) -> None:
    # First lookup "public" (for the test policy), every later one private. HTTP/1.0
    # closes the first connection, so the same-origin redirect needs a new
    # connection, hence a new lookup, which must be checked again.
    server.routes["/start"] = lambda h: reply(h, 302, headers={"Location": "/next"})
    server.routes["/next"] = lambda h: reply(h, 200, b"should not be reached")
    dns = FakeDNS({"rebind.test": lambda n: ["127.0.0.1"] if n == 1 else ["127.0.0.2"]})
    with Listener("127.0.0.2", server.port) as private:
        with pytest.raises(WebError) as info:
            fetch(provider(dns), f"http://rebind.test:{server.port}/start")
        assert info.value.code == WebErrorCode.BLOCKED_URL
        assert "127.0.0.2" in info.value.message
        assert private.connections() == 0
    assert server.paths() == ["/start"]
    assert dns.calls == ["rebind.test", "rebind.test"]


def test_the_address_checked_is_the_address_dialled(server: LocalServer) -> None:
    # A resolver that would answer private on any second lookup: a guard that
    # checked one answer and then let the connection resolve again would dial it.
    server.routes["/"] = lambda h: reply(h, 200, b"pinned")
    dns = FakeDNS({"rebind.test": lambda n: ["127.0.0.1"] if n == 1 else ["127.0.0.2"]})
    with Listener("127.0.0.2", server.port) as private:
        result = asyncio.run(provider(dns).fetch(FetchRequest(f"http://rebind.test:{server.port}/")))
        assert private.connections() == 0
    assert result.body.content == "pinned"
    assert dns.calls == ["rebind.test"]
    assert server.connections == 1


def test_one_private_answer_refuses_the_host(server: LocalServer) -> None:
    dns = FakeDNS({"mixed.test": ["127.0.0.1", "127.0.0.2"]})
    with pytest.raises(WebError) as info:
        fetch(provider(dns), f"http://mixed.test:{server.port}/")
    assert info.value.code == WebErrorCode.BLOCKED_URL
    assert server.connections == 0


def test_falls_back_to_the_next_checked_answer_without_a_new_lookup(server: LocalServer) -> None:
    # Nothing listens on 127.0.0.2 at this port, so the first dial is refused.
    server.routes["/"] = lambda h: reply(h, 200, b"second answer")
    policy = AddressPolicy.allowing("127.0.0.1/32", "127.0.0.2/32")
    dns = FakeDNS({"two.test": ["127.0.0.2", "127.0.0.1"]})
    p = HttpFetchProvider(CONFIG, policy=policy, resolver=dns)
    result = asyncio.run(p.fetch(FetchRequest(f"http://two.test:{server.port}/")))
    assert result.body.content == "second answer"
    assert dns.calls == ["two.test"]


def test_redirect_to_a_private_address_is_refused_at_that_hop(server: LocalServer) -> None:
    with Listener("127.0.0.2") as private:
        server.routes["/go"] = lambda h: reply(h, 302, headers={"Location": f"http://127.0.0.2:{private.port}/admin"})
        with pytest.raises(WebError) as info:
            fetch(provider(FakeDNS({})), server.url("/go"))
        assert info.value.code == WebErrorCode.BLOCKED_URL
        assert info.value.message.startswith(f"redirect to http://127.0.0.2:{private.port}/admin refused")
        assert private.connections() == 0
    assert server.paths() == ["/go"]


def test_redirect_to_an_internal_name_is_refused_without_lookup(server: LocalServer) -> None:
    server.routes["/go"] = lambda h: reply(h, 302, headers={"Location": "http://metadata.google.internal/"})
    dns = FakeDNS({"fetch.test": ["127.0.0.1"]})
    with pytest.raises(WebError) as info:
        fetch(provider(dns), f"http://fetch.test:{server.port}/go")
    assert info.value.code == WebErrorCode.BLOCKED_URL
    assert dns.calls == ["fetch.test"]


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_environment_proxies_are_ignored(
    scheme: str,
    server: LocalServer,
    tls_server: LocalServer,
    tls: TLSSetup,
    listener: Listener,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = server if scheme == "http" else tls_server
    target.routes["/"] = lambda h: reply(h, 200, b"direct")
    proxy = f"http://127.0.0.1:{listener.port}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, proxy)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    dns = FakeDNS({TLS_HOST: ["127.0.0.1"]})
    result = asyncio.run(
        provider(dns, tls_context=tls.client).fetch(FetchRequest(f"{scheme}://{TLS_HOST}:{target.port}/"))
    )
    assert result.body.content == "direct"
    assert listener.connections() == 0
    assert target.paths() == ["/"]  # origin-form request line, not a proxy's absolute URL


def test_dns_failure_fails_closed(server: LocalServer) -> None:
    with pytest.raises(WebError) as info:
        fetch(provider(FakeDNS({})), f"http://missing.test:{server.port}/")
    assert info.value.code == WebErrorCode.PROVIDER_ERROR
    assert info.value.message.startswith('could not resolve host "missing.test"')
    with pytest.raises(WebError) as info:
        fetch(provider(FakeDNS({"empty.test": []})), f"http://empty.test:{server.port}/")
    assert info.value.message == 'could not resolve host "empty.test": no addresses'
    assert server.connections == 0


def test_a_hanging_resolver_is_bounded_by_the_deadline() -> None:
    entered = asyncio.Event()

    async def hanging(host: str) -> list[str]:
        entered.set()
        await asyncio.Event().wait()  # never answers
        return []

    p = HttpFetchProvider(HttpFetchConfig(timeout_s=0.2), policy=LOOPBACK_ONLY, resolver=hanging)
    with pytest.raises(WebError) as info:
        fetch(p, "http://slow-dns.test/")
    assert info.value.code == WebErrorCode.FETCH_TIMEOUT
    assert entered.is_set()


def test_unix_sockets_are_refused() -> None:
    backend = PinnedNetworkBackend()
    with pytest.raises(WebError) as info:
        asyncio.run(backend.connect_unix_socket("/var/run/docker.sock"))
    assert info.value.code == WebErrorCode.BLOCKED_URL


class LoopbackDialer(httpcore.AsyncNetworkBackend):
    """Records the vetted address each connection was meant for, then connects to the local
    test server instead, so a test can use the strict default policy with "public" DNS
    answers while no packet ever leaves loopback."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.dialled: list[str] = []
        self._real = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore backend interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.dialled.append(host)
        return await self._real.connect_tcp("127.0.0.1", self.port, timeout=timeout)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AssertionError("never used")

    async def sleep(self, seconds: float) -> None:
        await self._real.sleep(seconds)


def test_default_policy_refuses_rebinding_to_a_private_address(server: LocalServer) -> None:
    # The strict default policy, no test allowances: the name first resolves to a public
    # address, then (for the redirect's new connection) to a private one.
    server.routes["/start"] = lambda h: reply(h, 302, headers={"Location": "/next"})
    server.routes["/next"] = lambda h: reply(h, 200, b"should not be reached")
    dns = FakeDNS({"rebind.example": lambda n: ["93.184.215.14"] if n == 1 else ["10.0.0.7"]})
    dialer = LoopbackDialer(server.port)
    strict = HttpFetchProvider(CONFIG, resolver=dns, dialer=dialer)
    assert strict.policy is DEFAULT_POLICY
    with pytest.raises(WebError) as info:
        fetch(strict, f"http://rebind.example:{server.port}/start")
    assert info.value.code == WebErrorCode.BLOCKED_URL
    assert "10.0.0.7" in info.value.message
    assert dialer.dialled == ["93.184.215.14"]  # the private answer was never dialled
    assert server.paths() == ["/start"]
    assert dns.calls == ["rebind.example", "rebind.example"]
