"""The default (strict) provider refuses every bypass category before opening a socket.

``no_network`` replaces socket connect and getaddrinfo with recorders, so a case
passes only if the refusal happened before any lookup or connection attempt.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from dsweb_ref import FetchRequest, WebError, WebErrorCode
from dsweb_ref.providers.http_fetch import HttpFetchConfig, HttpFetchProvider, fetch_url

from ._servers import FakeDNS, LocalServer

BLOCKED = WebErrorCode.BLOCKED_URL
INVALID = WebErrorCode.INVALID_URL


class NetworkAttempts:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[NetworkAttempts]:
    attempts = NetworkAttempts()

    def connect(self: socket.socket, address: Any) -> None:
        attempts.calls.append(("connect", address))
        raise OSError("network disabled in this test")

    def connect_ex(self: socket.socket, address: Any) -> int:
        attempts.calls.append(("connect_ex", address))
        return 111

    def getaddrinfo(*args: Any, **kwargs: Any) -> Any:
        attempts.calls.append(("getaddrinfo", args[0] if args else kwargs.get("host")))
        raise socket.gaierror(socket.EAI_NONAME, "network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield attempts


BYPASSES = [
    # the list for `dsweb fetch`
    pytest.param("http://127.0.0.1/", BLOCKED, id="loopback-v4"),
    pytest.param("http://localhost/", BLOCKED, id="localhost"),
    pytest.param("http://[::1]/", BLOCKED, id="loopback-v6"),
    pytest.param("http://2130706433/", INVALID, id="decimal"),
    pytest.param("http://0x7f.0.0.1/", INVALID, id="hex-dotted"),
    pytest.param("http://127.1/", INVALID, id="short-form"),
    pytest.param("http://[::ffff:127.0.0.1]/", BLOCKED, id="mapped-v6"),
    pytest.param("http://foo.localhost/", BLOCKED, id="sub-localhost"),
    pytest.param("http://0/", INVALID, id="zero"),
    # alternative IPv4 encodings
    # One code for every non-canonical numeric spelling (README "Numeric hosts"): httpx itself
    # rejects dotted quads with leading zeros, and netguard refuses every other spelling the same way.
    pytest.param("http://0177.0.0.1/", INVALID, id="octal-dotted"),
    pytest.param("http://0251.0376.0251.0376/", INVALID, id="metadata-octal-dotted"),
    pytest.param("http://017700000001/", INVALID, id="octal-whole"),
    pytest.param("http://0x7f000001/", INVALID, id="hex-whole"),
    pytest.param("http://0x7f.1/", INVALID, id="hex-short"),
    pytest.param("http://127.0.1/", INVALID, id="short-three-parts"),
    pytest.param("http://0.0.0.0/", BLOCKED, id="unspecified-v4"),
    pytest.param("http://2852039166/latest/meta-data/", INVALID, id="metadata-decimal"),
    pytest.param("http://127.0.0.1.:8080/", BLOCKED, id="absolute-literal"),
    # Unicode look-alikes (IDNA folds ideographic full stops to dots)
    pytest.param("http://127。0。0。1/", BLOCKED, id="fullwidth-dots"),
    pytest.param("http://ｌｏｃａｌｈｏｓｔ/", INVALID, id="fullwidth-letters"),
    # userinfo / authority confusion
    pytest.param("http://evil.com@127.0.0.1/", BLOCKED, id="userinfo-before-ip"),
    pytest.param("http://user:pass@example.com/", BLOCKED, id="credentials"),
    pytest.param("http://127.0.0.1%00@evil.com/", BLOCKED, id="nul-in-userinfo"),
    pytest.param("http://127.0.0.1#@evil.com/", BLOCKED, id="fragment-at"),
    # parser differentials and invisible characters
    pytest.param("http://127.0.0.1\\@evil.com/", INVALID, id="backslash"),
    pytest.param("http://example.com\\.localhost/", INVALID, id="backslash-host"),
    pytest.param("http://exa\tmple.com/", INVALID, id="tab"),
    pytest.param("http://example.com/\n", INVALID, id="newline"),
    pytest.param(" http://127.0.0.1/", INVALID, id="leading-space"),
    pytest.param("http://127.0.0.1\x00.evil.com/", INVALID, id="nul"),
    pytest.param("http://local\u200bhost/", INVALID, id="zero-width-space"),
    pytest.param("http://\u202e1.0.0.721/", INVALID, id="bidi-override"),
    pytest.param("http://%31%32%37.0.0.1/", INVALID, id="percent-encoded-host"),
    pytest.param("http://1.2.3.4.5/", INVALID, id="ambiguous-numeric"),
    pytest.param("http://256.0.0.1/", INVALID, id="octet-overflow"),
    # localhost name variants and internal suffixes
    pytest.param("http://LOCALHOST./", BLOCKED, id="localhost-upper-absolute"),
    pytest.param("http://localhost:8080/", BLOCKED, id="localhost-port"),
    pytest.param("http://printer.local/", BLOCKED, id="mdns"),
    pytest.param("http://metadata.google.internal/computeMetadata/v1/", BLOCKED, id="metadata-name"),
    pytest.param("http://api.svc.cluster.internal/", BLOCKED, id="internal-suffix"),
    pytest.param("http://router.home.arpa/", BLOCKED, id="home-arpa"),
    pytest.param("http://intranet/", BLOCKED, id="single-label"),
    # IPv6 loopback, unspecified and private ranges
    pytest.param("http://[::]/", BLOCKED, id="unspecified-v6"),
    pytest.param("http://[0:0:0:0:0:0:0:1]/", BLOCKED, id="loopback-v6-long"),
    pytest.param("http://[fe80::1]/", BLOCKED, id="link-local-v6"),
    pytest.param("http://[fe80::1%25eth0]/", INVALID, id="zone-id"),
    pytest.param("http://[fd12:3456::1]/", BLOCKED, id="ula"),
    pytest.param("http://[ff02::1]/", BLOCKED, id="multicast-v6"),
    # IPv4 embedded in IPv6
    pytest.param("http://[::ffff:7f00:1]/", BLOCKED, id="mapped-hex"),
    pytest.param("http://[::ffff:169.254.169.254]/", BLOCKED, id="mapped-metadata"),
    pytest.param("http://[::127.0.0.1]/", BLOCKED, id="compat"),
    pytest.param("http://[64:ff9b::7f00:1]/", BLOCKED, id="nat64"),
    pytest.param("http://[64:ff9b:1::a00:1]/", BLOCKED, id="nat64-local-use"),
    pytest.param("http://[2002:7f00:1::1]/", BLOCKED, id="6to4"),
    pytest.param("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", BLOCKED, id="teredo"),
    # special-purpose and boundary ranges
    pytest.param("http://10.0.0.1/", BLOCKED, id="private-10"),
    pytest.param("http://172.31.255.255/", BLOCKED, id="private-172-edge"),
    pytest.param("http://192.168.0.1/", BLOCKED, id="private-192"),
    pytest.param("http://100.64.0.1/", BLOCKED, id="cgnat"),
    pytest.param("http://127.255.255.254/", BLOCKED, id="loopback-edge"),
    pytest.param("http://169.254.0.1/", BLOCKED, id="link-local-v4"),
    pytest.param("http://224.0.0.1/", BLOCKED, id="multicast-v4"),
    pytest.param("http://255.255.255.255/", BLOCKED, id="broadcast"),
    pytest.param("http://240.0.0.1/", BLOCKED, id="reserved"),
    pytest.param("http://198.18.0.1/", BLOCKED, id="benchmark"),
    pytest.param("http://192.0.2.1/", BLOCKED, id="documentation"),
    pytest.param("http://203.0.113.9/", BLOCKED, id="documentation-3"),
    # cloud metadata endpoints
    pytest.param("http://169.254.169.254/latest/meta-data/", BLOCKED, id="metadata-aws"),
    pytest.param("http://100.100.100.200/", BLOCKED, id="metadata-alibaba"),
    pytest.param("http://[fd00:ec2::254]/", BLOCKED, id="metadata-aws-v6"),
    pytest.param("http://168.63.129.16/", BLOCKED, id="metadata-azure"),
    # non-HTTP schemes and missing hosts
    pytest.param("file:///etc/passwd", INVALID, id="file"),
    pytest.param("gopher://127.0.0.1:25/", INVALID, id="gopher"),
    pytest.param("ftp://example.com/", INVALID, id="ftp"),
    pytest.param("javascript:alert(1)", INVALID, id="javascript"),
    pytest.param("//127.0.0.1/", INVALID, id="scheme-relative"),
    pytest.param("http:///etc/passwd", INVALID, id="no-host"),
    pytest.param("http:example.com", INVALID, id="no-authority"),
    pytest.param("http://example.com:0/", INVALID, id="port-zero"),
    pytest.param("http://example.com:99999/", INVALID, id="port-overflow"),
    pytest.param("http://example.com/" + "a" * 2048, INVALID, id="too-long"),
]


@pytest.mark.parametrize(("url", "code"), BYPASSES)
def test_default_provider_refuses_before_any_network(url: str, code: str, no_network: NetworkAttempts) -> None:
    with pytest.raises(WebError) as info:
        asyncio.run(HttpFetchProvider().fetch(FetchRequest(url)))
    assert info.value.code == code, info.value.message
    assert no_network.calls == []


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://localhost/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://foo.localhost/",
    ],
)
def test_fetch_url_refuses_loopback_disguises(url: str, no_network: NetworkAttempts) -> None:
    with pytest.raises(WebError) as info:
        asyncio.run(fetch_url(url))
    assert info.value.code == BLOCKED
    assert no_network.calls == []


# Public-looking names whose DNS answers are not public (default policy, simulated DNS).
DNS_BYPASSES = [
    pytest.param(["127.0.0.1"], id="nip-io-style-loopback"),
    pytest.param(["192.168.1.250"], id="sslip-style-private"),
    pytest.param(["93.184.215.14", "10.0.0.1"], id="mixed-public-and-private"),
    pytest.param(["93.184.215.14"] * 8 + ["169.254.169.254"], id="metadata-after-eight-public"),
    pytest.param(["2606:4700::1111", "::ffff:127.0.0.1"], id="mapped-loopback-answer"),
    pytest.param(["64:ff9b::a9fe:a9fe"], id="nat64-metadata-answer"),
    pytest.param(["fe80::1%eth0"], id="scoped-link-local-answer"),
    pytest.param(["not-an-address"], id="unparseable-answer"),
]


@pytest.mark.parametrize("answers", DNS_BYPASSES)
def test_default_policy_checks_every_dns_answer(answers: list[str], no_network: NetworkAttempts) -> None:
    dns = FakeDNS({"looks-public.example": answers})
    provider = HttpFetchProvider(resolver=dns)
    with pytest.raises(WebError) as info:
        asyncio.run(provider.fetch(FetchRequest("http://looks-public.example/")))
    assert info.value.code == BLOCKED
    assert dns.calls == ["looks-public.example"]
    assert no_network.calls == []


def test_default_provider_refuses_a_live_loopback_server(server: LocalServer) -> None:
    server.routes["/"] = lambda h: None
    for url, code in (
        (server.url("/"), BLOCKED),
        (f"http://2130706433:{server.port}/", INVALID),
        (f"http://[::ffff:127.0.0.1]:{server.port}/", BLOCKED),
    ):
        with pytest.raises(WebError) as info:
            asyncio.run(fetch_url(url, config=HttpFetchConfig(timeout_s=5)))
        assert info.value.code == code
    # A name that resolves to loopback is refused at connect time, before dialling.
    dns = FakeDNS({"fetch.test": ["127.0.0.1"]})
    with pytest.raises(WebError) as info:
        asyncio.run(HttpFetchProvider(resolver=dns).fetch(FetchRequest(f"http://fetch.test:{server.port}/")))
    assert info.value.code == BLOCKED
    assert server.connections == 0 and server.seen == []


def test_network_recorder_sees_real_attempts(no_network: NetworkAttempts) -> None:
    # Control for the tests above: an allowed host does reach the (disabled) network.
    with pytest.raises(WebError) as info:
        asyncio.run(HttpFetchProvider().fetch(FetchRequest("http://public.example/")))
    assert info.value.code == WebErrorCode.PROVIDER_ERROR
    assert ("getaddrinfo", "public.example") in no_network.calls
    dns = FakeDNS({"public.example": ["93.184.215.14"]})
    with pytest.raises(WebError):
        asyncio.run(HttpFetchProvider(resolver=dns).fetch(FetchRequest("http://public.example/")))
    assert ("connect", ("93.184.215.14", 80)) in no_network.calls
