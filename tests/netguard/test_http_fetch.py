"""HttpFetchProvider against a real local server: redirects, limits, types, charsets, timeouts, cancellation."""

from __future__ import annotations

import asyncio
import gzip
import socket
import threading
import time
import zlib
from typing import Any

import pytest

from dsweb_ref import CallContext, FetchRequest, FetchResult, OutgoingRequest, WebError, WebErrorCode
from dsweb_ref.providers.http_fetch import HttpFetchConfig, HttpFetchProvider, redirect_refusal

from ._servers import LOOPBACK_ONLY, WAIT, FakeDNS, Handler, LocalServer, reply
from .conftest import TLS_HOST, TLSSetup

DNS = {"fetch.test": ["127.0.0.1"], TLS_HOST: ["127.0.0.1"]}


def make(dns: FakeDNS | None = None, tls: TLSSetup | None = None, **config: Any) -> HttpFetchProvider:
    config.setdefault("timeout_s", 10)
    return HttpFetchProvider(
        HttpFetchConfig(**config),
        policy=LOOPBACK_ONLY,
        resolver=dns or FakeDNS(DNS),
        tls_context=tls.client if tls else None,
    )


def get(p: HttpFetchProvider, url: str, ctx: CallContext | None = None) -> FetchResult:
    return asyncio.run(p.fetch(FetchRequest(url), ctx or CallContext()))


def fails(p: HttpFetchProvider, url: str) -> WebError:
    with pytest.raises(WebError) as info:
        get(p, url)
    return info.value


def html(h: Handler) -> None:
    reply(
        h,
        200,
        b"<html><head><title> A &amp; B </title></head><body><h1>Hi</h1></body></html>",
        content_type="text/html",
    )


# --- identity and configuration ------------------------------------------------------------


def test_identity() -> None:
    p = HttpFetchProvider()
    assert p.id == "http" and p.available() is True
    assert p.config == HttpFetchConfig()
    assert HttpFetchConfig().user_agent.startswith("dsweb_ref/")


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"max_url_length": 0}, id="url-length-zero"),
        pytest.param({"max_url_length": True}, id="url-length-bool"),
        pytest.param({"max_response_bytes": -1}, id="bytes-negative"),
        pytest.param({"max_response_bytes": 1.5}, id="bytes-float"),
        pytest.param({"max_body_chars": "100"}, id="chars-string"),
        pytest.param({"timeout_s": 0}, id="timeout-zero"),
        pytest.param({"timeout_s": float("inf")}, id="timeout-inf"),
        pytest.param({"timeout_s": float("nan")}, id="timeout-nan"),
        pytest.param({"timeout_s": 10**9}, id="timeout-huge"),
        pytest.param({"timeout_s": "30"}, id="timeout-string"),
        pytest.param({"max_redirects": -1}, id="redirects-negative"),
        pytest.param({"max_redirects": None}, id="redirects-none"),
        pytest.param({"user_agent": ""}, id="agent-empty"),
        pytest.param({"user_agent": "a\r\nX-Injected: 1"}, id="agent-crlf"),
        pytest.param({"user_agent": 7}, id="agent-int"),
    ],
)
def test_bad_config_is_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(WebError) as info:
        HttpFetchConfig(**kwargs)
    assert info.value.code == WebErrorCode.CONFIG_INVALID
    assert info.value.message.startswith("http fetch config: ")


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"config": {"timeout_s": 1}}, id="config-dict"),
        pytest.param({"policy": "strict"}, id="policy-string"),
        pytest.param({"resolver": None}, id="resolver-none"),
        pytest.param({"tls_context": True}, id="tls-bool"),
    ],
)
def test_bad_provider_arguments_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(WebError) as info:
        HttpFetchProvider(**kwargs)
    assert info.value.code == WebErrorCode.CONFIG_INVALID


def test_zero_redirects_is_a_valid_config() -> None:
    assert HttpFetchConfig(max_redirects=0).max_redirects == 0


# --- results -----------------------------------------------------------------------------


def test_html_page(server: LocalServer) -> None:
    server.routes["/page"] = html
    result = get(make(), f"http://fetch.test:{server.port}/page?x=1#frag")
    assert result == FetchResult(
        url=f"http://fetch.test:{server.port}/page?x=1#frag",
        status_code=200,
        body=result.body,
        truncated=False,
    )
    assert result.body.kind == "html" and "<h1>Hi</h1>" in result.body.content
    assert server.paths() == ["/page?x=1"]  # the fragment is never sent
    headers = server.seen[0].headers
    assert headers["user-agent"].startswith("dsweb_ref/")
    assert "cookie" not in headers and "authorization" not in headers


def test_url_without_path_is_shown_with_slash(server: LocalServer) -> None:
    server.routes["/"] = lambda h: reply(h, 200, b"root")
    assert get(make(), f"http://fetch.test:{server.port}").url == f"http://fetch.test:{server.port}/"


@pytest.mark.parametrize("status", [404, 500, 300, 304, 204, 418])
def test_non_2xx_statuses_are_results(server: LocalServer, status: int) -> None:
    body = b"" if status in (204, 304) else b"status page"
    server.routes["/s"] = lambda h: reply(h, status, body)
    result = get(make(), f"http://fetch.test:{server.port}/s")
    assert result.status_code == status
    assert result.body.content == body.decode()


def test_outgoing_requests_are_recorded_before_dispatch(server: LocalServer) -> None:
    server.routes["/a"] = lambda h: reply(h, 302, headers={"Location": "/b"})
    server.routes["/b"] = lambda h: reply(h, 200, b"b")
    records: list[OutgoingRequest] = []
    get(make(), f"http://fetch.test:{server.port}/a", CallContext(record_request=records.append))
    assert [(r.provider, r.method, r.url) for r in records] == [
        ("http", "GET", f"http://fetch.test:{server.port}/a"),
        ("http", "GET", f"http://fetch.test:{server.port}/b"),
    ]

    def refuse(_request: OutgoingRequest) -> None:
        raise RuntimeError("recorder down")

    with pytest.raises(RuntimeError):
        get(make(), f"http://fetch.test:{server.port}/a", CallContext(record_request=refuse))
    assert server.paths() == ["/a", "/b"]  # nothing sent after the recorder failed


def test_request_without_a_string_url() -> None:
    with pytest.raises(WebError) as info:
        asyncio.run(HttpFetchProvider().fetch(FetchRequest(123), CallContext()))  # type: ignore[arg-type]
    assert (info.value.code, info.value.message) == (WebErrorCode.INVALID_URL, "URL must be a string")


def test_url_length_limit(server: LocalServer) -> None:
    server.routes["/"] = lambda h: reply(h, 200, b"ok")
    url = f"http://fetch.test:{server.port}/"
    assert get(make(max_url_length=len(url)), url).body.content == "ok"
    error = fails(make(max_url_length=len(url) - 1), url)
    assert error.code == WebErrorCode.INVALID_URL
    assert error.message == f"URL exceeds the maximum length of {len(url) - 1} characters"


def test_connection_refused_is_a_provider_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused
        error = fails(make(), f"http://fetch.test:{port}/")
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert error.message.startswith("web fetch failed: ConnectError")


# --- content types and charsets ----------------------------------------------------------

TYPES = [
    pytest.param("text/html; charset=utf-8", "html", id="html"),
    pytest.param("application/xhtml+xml", "html", id="xhtml"),
    pytest.param("text/plain", "text", id="plain"),
    pytest.param("text/markdown", "text", id="markdown"),
    pytest.param("text/csv", "text", id="csv"),
    pytest.param("application/json", "text", id="json"),
    pytest.param("application/problem+json", "text", id="plus-json"),
    pytest.param("application/xml", "text", id="xml"),
    pytest.param("image/svg+xml", "text", id="plus-xml"),
    pytest.param("TEXT/HTML ; Charset=UTF-8", "html", id="case-insensitive"),
]


@pytest.mark.parametrize(("content_type", "kind"), TYPES)
def test_content_types_read(server: LocalServer, content_type: str, kind: str) -> None:
    server.routes["/t"] = lambda h: reply(h, 200, b'{"a": 1}', content_type=content_type)
    result = get(make(), f"http://fetch.test:{server.port}/t")
    assert result.body.kind == kind and result.body.content == '{"a": 1}'


@pytest.mark.parametrize(
    ("content_type", "status", "shown"),
    [
        pytest.param("image/png", 200, "image/png", id="png"),
        pytest.param("application/octet-stream", 200, "application/octet-stream", id="octet-stream"),
        pytest.param("application/pdf", 200, "application/pdf", id="pdf"),
        pytest.param(None, 200, "unknown", id="missing"),
        pytest.param("image/png", 404, "image/png", id="binary-404"),
    ],
)
def test_binary_and_unknown_types_are_refused(
    server: LocalServer, content_type: str | None, status: int, shown: str
) -> None:
    server.routes["/b"] = lambda h: reply(h, status, b"\x89PNG\r\n\x1a\n", content_type=content_type)
    error = fails(make(), f"http://fetch.test:{server.port}/b")
    assert (error.code, error.message) == (WebErrorCode.UNSUPPORTED_CONTENT_TYPE, f'unsupported content type "{shown}"')


@pytest.mark.parametrize(
    ("charset", "body", "expected"),
    [
        pytest.param("iso-8859-1", "café".encode("latin-1"), "café", id="latin-1"),
        pytest.param("latin1", b"\x93quoted\x94", "\u201cquoted\u201d", id="latin1-label-is-cp1252"),
        pytest.param('"Windows-1252"', b"caf\xe9", "café", id="quoted-label"),
        pytest.param("shift_jis", "日本語".encode("shift_jis"), "日本語", id="shift-jis"),
        pytest.param("utf-8", b"\xef\xbb\xbfbom", "bom", id="utf-8-bom-stripped"),
        pytest.param("iso-8859-1", b"\xef\xbb\xbfcaf\xc3\xa9", "café", id="bom-beats-label"),
        pytest.param(None, "naïve".encode(), "naïve", id="default-utf-8"),
        pytest.param("utf-8", b"bad \xff byte", "bad \ufffd byte", id="invalid-bytes-replaced"),
    ],
)
def test_charsets(server: LocalServer, charset: str | None, body: bytes, expected: str) -> None:
    content_type = "text/plain" + (f"; charset={charset}" if charset else "")
    server.routes["/c"] = lambda h: reply(h, 200, body, content_type=content_type)
    assert get(make(), f"http://fetch.test:{server.port}/c").body.content == expected


@pytest.mark.parametrize(
    "label", ["x-no-such-charset", "zlib", "base64", "rot13", "utf-7", "unicode_escape", "idna", "x-user-defined"]
)
def test_unknown_charsets_are_refused(server: LocalServer, label: str) -> None:
    server.routes["/c"] = lambda h: reply(h, 200, b"text", content_type=f"text/plain; charset={label}")
    error = fails(make(), f"http://fetch.test:{server.port}/c")
    assert (error.code, error.message) == (WebErrorCode.UNSUPPORTED_CONTENT_TYPE, f'unsupported charset "{label}"')


# --- size limits ---------------------------------------------------------------------------


def test_declared_length_over_the_cap_is_refused(server: LocalServer) -> None:
    server.routes["/big"] = lambda h: reply(h, 200, b"x" * 1001)
    error = fails(make(max_response_bytes=1000), f"http://fetch.test:{server.port}/big")
    assert (error.code, error.message) == (WebErrorCode.FETCH_TOO_LARGE, "response exceeds the maximum of 1000 bytes")


def test_body_exactly_at_the_cap_is_not_truncated(server: LocalServer) -> None:
    server.routes["/exact"] = lambda h: reply(h, 200, b"x" * 1000, length=False)
    result = get(make(max_response_bytes=1000), f"http://fetch.test:{server.port}/exact")
    assert result.body.content == "x" * 1000 and result.truncated is False


def test_streamed_body_is_cut_at_the_cap(server: LocalServer) -> None:
    server.routes["/stream"] = lambda h: reply(h, 200, b"x" * 1001, length=False)
    result = get(make(max_response_bytes=1000), f"http://fetch.test:{server.port}/stream")
    assert result.body.content == "x" * 1000 and result.truncated is True


def test_reading_stops_at_the_cap_for_an_endless_body(server: LocalServer, release: threading.Event) -> None:
    # The server would write 256 MiB; it must see the client go away long before that.
    outcome: dict[str, object] = {}
    done = threading.Event()

    def endless(h: Handler) -> None:
        reply(h, 200, b"", length=False)
        sent = 0
        try:
            while sent < 256 * 2**20 and not release.is_set():
                h.wfile.write(b"y" * 65536)
                sent += 65536
            outcome["finished"] = True
        except OSError:
            outcome["finished"] = False
        finally:
            outcome["sent"] = sent
            done.set()

    server.routes["/endless"] = endless
    result = get(make(max_response_bytes=5000), f"http://fetch.test:{server.port}/endless")
    assert result.body.content == "y" * 5000 and result.truncated is True
    assert done.wait(WAIT)
    assert outcome["finished"] is False
    assert isinstance(outcome["sent"], int) and outcome["sent"] < 64 * 2**20


def test_character_cap(server: LocalServer) -> None:
    server.routes["/chars"] = lambda h: reply(h, 200, "é".encode() * 20)
    result = get(make(max_body_chars=10), f"http://fetch.test:{server.port}/chars")
    assert result.body.content == "é" * 10 and result.truncated is True
    result = get(make(max_body_chars=20), f"http://fetch.test:{server.port}/chars")
    assert result.body.content == "é" * 20 and result.truncated is False


def test_a_character_split_by_the_byte_cap_is_dropped(server: LocalServer) -> None:
    server.routes["/split"] = lambda h: reply(h, 200, "é".encode() * 10, length=False)
    result = get(make(max_response_bytes=7), f"http://fetch.test:{server.port}/split")
    assert result.body.content == "é" * 3 and result.truncated is True


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        pytest.param("gzip", gzip.compress, id="gzip"),
        pytest.param("deflate", zlib.compress, id="deflate-zlib"),
        pytest.param("deflate", lambda b: zlib.compress(b)[2:-4], id="deflate-raw"),
    ],
)
def test_compressed_bodies_are_decoded(server: LocalServer, encoding: str, compress: Any) -> None:
    payload = ("compressed text " * 100).encode()
    server.routes["/z"] = lambda h: reply(h, 200, compress(payload), headers={"Content-Encoding": encoding})
    result = get(make(), f"http://fetch.test:{server.port}/z")
    assert result.body.content == payload.decode() and result.truncated is False


def test_a_compression_bomb_stops_at_the_decoded_cap(server: LocalServer) -> None:
    bomb = gzip.compress(b"\0" * (64 * 2**20))  # 64 MiB of zeros in about 64 KiB
    server.routes["/bomb"] = lambda h: reply(h, 200, bomb, headers={"Content-Encoding": "gzip"}, length=False)
    result = get(make(max_response_bytes=4096), f"http://fetch.test:{server.port}/bomb")
    assert len(result.body.content) == 4096 and result.truncated is True


def test_unsupported_or_corrupt_encodings(server: LocalServer) -> None:
    server.routes["/br"] = lambda h: reply(h, 200, b"\x0b\x02\x80", headers={"Content-Encoding": "br"})
    server.routes["/bad"] = lambda h: reply(h, 200, b"not gzip at all", headers={"Content-Encoding": "gzip"})
    error = fails(make(), f"http://fetch.test:{server.port}/br")
    assert (error.code, error.message) == (WebErrorCode.UNSUPPORTED_CONTENT_TYPE, 'unsupported content encoding "br"')
    error = fails(make(), f"http://fetch.test:{server.port}/bad")
    assert error.code == WebErrorCode.PROVIDER_ERROR and "could not decode the gzip" in error.message


# --- redirects -----------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_same_origin_redirects_are_followed(server: LocalServer, status: int) -> None:
    server.routes["/old"] = lambda h: reply(h, status, headers={"Location": "new?q=1"})
    server.routes["/new"] = lambda h: reply(h, 200, b"moved here")
    result = get(make(), f"http://fetch.test:{server.port}/old")
    assert result.url == f"http://fetch.test:{server.port}/new?q=1"
    assert result.body.content == "moved here"
    assert server.paths() == ["/old", "/new?q=1"]


def chain(server: LocalServer, hops: int) -> None:
    def hop(h: Handler) -> None:
        step = int(h.path.removeprefix("/r"))
        reply(h, 302, headers={"Location": f"/r{step + 1}"})

    for i in range(hops):
        server.routes[f"/r{i}"] = hop
    server.routes[f"/r{hops}"] = lambda h: reply(h, 200, b"end of chain")


def test_exactly_the_hop_limit_succeeds(server: LocalServer) -> None:
    chain(server, 3)
    result = get(make(max_redirects=3), f"http://fetch.test:{server.port}/r0")
    assert result.body.content == "end of chain"


def test_one_hop_over_the_limit_is_refused(server: LocalServer) -> None:
    chain(server, 3)
    error = fails(make(max_redirects=2), f"http://fetch.test:{server.port}/r0")
    assert (error.code, error.message) == (WebErrorCode.REDIRECT_BLOCKED, "exceeded the maximum of 2 redirects")
    assert server.paths() == ["/r0", "/r1", "/r2"]


def test_zero_redirects_allows_direct_responses_only(server: LocalServer) -> None:
    chain(server, 1)
    assert get(make(max_redirects=0), f"http://fetch.test:{server.port}/r1").body.content == "end of chain"
    assert fails(make(max_redirects=0), f"http://fetch.test:{server.port}/r0").code == WebErrorCode.REDIRECT_BLOCKED


def test_default_hop_limit_is_five(server: LocalServer) -> None:
    chain(server, 6)
    error = fails(make(), f"http://fetch.test:{server.port}/r0")
    assert error.message == "exceeded the maximum of 5 redirects"


def test_redirect_without_location(server: LocalServer) -> None:
    server.routes["/nowhere"] = lambda h: reply(h, 302)
    error = fails(make(), f"http://fetch.test:{server.port}/nowhere")
    assert (error.code, error.message) == (
        WebErrorCode.PROVIDER_ERROR,
        "redirect response (HTTP 302) without a Location header",
    )


def test_cross_origin_redirect_is_refused(server: LocalServer, other_server: LocalServer) -> None:
    other_server.routes["/"] = lambda h: reply(h, 200, b"other")
    server.routes["/go"] = lambda h: reply(h, 302, headers={"Location": other_server.url("/landing?a=b")})
    error = fails(make(), server.url("/go"))
    assert error.code == WebErrorCode.REDIRECT_BLOCKED
    assert error.message == (
        f"cross-origin redirect to http://127.0.0.1:{other_server.port} is not followed automatically; "
        f"fetch http://127.0.0.1:{other_server.port}/landing?a=b directly if it is still wanted"
    )
    assert other_server.connections == 0


def test_same_host_upgrade_to_https_is_followed(server: LocalServer, tls_server: LocalServer, tls: TLSSetup) -> None:
    server.routes["/"] = lambda h: reply(h, 301, headers={"Location": f"https://{TLS_HOST}:{tls_server.port}/"})
    tls_server.routes["/"] = lambda h: reply(h, 200, b"upgraded")
    result = get(make(tls=tls), f"http://{TLS_HOST}:{server.port}/")
    assert result.url == f"https://{TLS_HOST}:{tls_server.port}/" and result.body.content == "upgraded"
    assert tls_server.sni == [TLS_HOST]


def test_downgrade_to_http_is_refused(server: LocalServer, tls_server: LocalServer, tls: TLSSetup) -> None:
    tls_server.routes["/"] = lambda h: reply(h, 301, headers={"Location": f"http://{TLS_HOST}:{server.port}/"})
    error = fails(make(tls=tls), f"https://{TLS_HOST}:{tls_server.port}/")
    assert error.code == WebErrorCode.REDIRECT_BLOCKED
    assert server.connections == 0


@pytest.mark.parametrize(
    ("location", "code"),
    [
        pytest.param("ftp://fetch.test/file", WebErrorCode.INVALID_URL, id="ftp"),
        pytest.param("http://user:pw@fetch.test/", WebErrorCode.BLOCKED_URL, id="credentials"),
        pytest.param("/a\\b", WebErrorCode.INVALID_URL, id="backslash"),
        pytest.param("http://localhost/", WebErrorCode.BLOCKED_URL, id="localhost"),
        pytest.param("http://[::1]/", WebErrorCode.BLOCKED_URL, id="loopback-v6"),
        pytest.param("http://169.254.169.254/", WebErrorCode.BLOCKED_URL, id="metadata"),
    ],
)
def test_each_redirect_target_is_checked_again(server: LocalServer, location: str, code: str) -> None:
    server.routes["/go"] = lambda h: reply(h, 302, headers={"Location": location})
    error = fails(make(), f"http://fetch.test:{server.port}/go")
    assert error.code == code
    assert error.message.startswith(f"redirect to {location} refused: ")


def test_a_location_with_control_characters_is_refused(server: LocalServer) -> None:
    # httpx parses Location itself, even when not following, and rejects this one first.
    server.routes["/go"] = lambda h: reply(h, 302, headers={"Location": "/a\tb"})
    error = fails(make(), f"http://fetch.test:{server.port}/go")
    assert error.code == WebErrorCode.INVALID_URL
    assert error.message.startswith("redirect to an invalid URL refused")
    assert server.paths() == ["/go"]


@pytest.mark.parametrize(
    "location",
    ["data:text/html,hi", "javascript:alert(1)", "mailto:a@b.test", "http:host/x", "http://[::1", "file:///etc/passwd"],
)
def test_a_redirect_to_a_non_http_or_unparseable_target_is_an_invalid_url(server: LocalServer, location: str) -> None:
    server.routes["/go"] = lambda h: reply(h, 302, headers={"Location": location})
    error = fails(make(), f"http://fetch.test:{server.port}/go")
    assert error.code in (WebErrorCode.INVALID_URL, WebErrorCode.BLOCKED_URL)
    assert "redirect to" in error.message
    assert server.paths() == ["/go"]


def test_redirect_rule() -> None:
    import httpx

    def refused(a: str, b: str) -> bool:
        return redirect_refusal(httpx.URL(a), httpx.URL(b)) is not None

    assert not refused("http://a.test/x", "http://a.test/y")
    assert not refused("http://a.test/x", "http://a.test:80/y")
    assert not refused("http://a.test/", "https://a.test/")
    assert not refused("http://a.test:8080/", "https://a.test:8443/")
    assert refused("https://a.test/", "http://a.test/")
    assert refused("http://a.test/", "http://a.test:8080/")
    assert refused("http://a.test/", "http://www.a.test/")
    assert refused("http://a.test/", "https://b.test/")


# --- deadlines and cancellation ------------------------------------------------------------


def stall(received: threading.Event, release: threading.Event, *, after_headers: bool = False) -> Any:
    def handler(h: Handler) -> None:
        if after_headers:
            h.send_response(200)
            h.send_header("Content-Type", "text/plain")
            h.send_header("Content-Length", "100")
            h.end_headers()
            h.wfile.write(b"partial")
            h.wfile.flush()
        received.set()
        release.wait(WAIT)

    return handler


@pytest.mark.parametrize("after_headers", [False, True], ids=["before-headers", "mid-body"])
def test_a_stalled_server_times_out(server: LocalServer, release: threading.Event, after_headers: bool) -> None:
    received = threading.Event()
    server.routes["/stall"] = stall(received, release, after_headers=after_headers)
    started = time.monotonic()
    error = fails(make(timeout_s=0.2), f"http://fetch.test:{server.port}/stall")
    assert (error.code, error.message) == (WebErrorCode.FETCH_TIMEOUT, "web fetch timed out after 0.2 seconds")
    assert received.is_set()  # the request really was in flight
    assert time.monotonic() - started < WAIT / 2


def test_one_deadline_covers_every_hop(server: LocalServer, release: threading.Event) -> None:
    # Each hop alone fits in the deadline; together they do not.
    second = threading.Event()

    # A deadline is time by nature; the margins are wide (one hop alone leaves 0.8 s spare)
    # so a loaded machine cannot turn the first hop alone into a timeout.
    def slow_redirect(h: Handler) -> None:
        release.wait(1.2)
        reply(h, 302, headers={"Location": "/second"})

    def slow_page(h: Handler) -> None:
        second.set()
        release.wait(1.2)
        reply(h, 200, b"too late")

    server.routes["/first"] = slow_redirect
    server.routes["/second"] = slow_page
    error = fails(make(timeout_s=2.0), f"http://fetch.test:{server.port}/first")
    assert error.code == WebErrorCode.FETCH_TIMEOUT
    assert second.is_set()


def test_a_callers_deadline_is_not_reported_as_ours(server: LocalServer, release: threading.Event) -> None:
    received = threading.Event()
    server.routes["/stall"] = stall(received, release)

    async def main() -> None:
        async with asyncio.timeout(0.2):
            await make(timeout_s=30).fetch(FetchRequest(f"http://fetch.test:{server.port}/stall"), CallContext())

    with pytest.raises(TimeoutError):
        asyncio.run(main())
    assert received.is_set()


def test_cancellation_propagates_and_closes_the_connection(server: LocalServer, release: threading.Event) -> None:
    received = threading.Event()
    closed = threading.Event()

    def wait_for_close(h: Handler) -> None:
        received.set()
        h.connection.settimeout(WAIT)
        try:
            if h.connection.recv(1) == b"":
                closed.set()
        except OSError:
            closed.set()

    server.routes["/hang"] = wait_for_close

    async def main() -> None:
        task = asyncio.create_task(make().fetch(FetchRequest(f"http://fetch.test:{server.port}/hang"), CallContext()))
        assert await asyncio.to_thread(received.wait, WAIT)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    assert closed.wait(WAIT)
