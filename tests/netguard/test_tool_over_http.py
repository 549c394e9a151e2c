"""web_fetch end to end: the tool, the seam and the real HTTP provider against a local server."""

from __future__ import annotations

import asyncio

from dsweb_ref import WebErrorCode, WebService
from dsweb_ref.providers.http_fetch import HttpFetchConfig, HttpFetchProvider
from dsweb_ref.schemas import validate
from dsweb_ref.tools.web_fetch import WebFetchTool

from ._servers import LOOPBACK_ONLY, FakeDNS, LocalServer, reply


def tool_with(provider: HttpFetchProvider, **kwargs: int) -> WebFetchTool:
    web = WebService()
    web.register_fetch(provider)
    return WebFetchTool(web, **kwargs)


def test_a_page_is_fetched_converted_and_shown(server: LocalServer) -> None:
    server.routes["/doc"] = lambda h: reply(
        h, 200, "<h1>Café</h1><ul><li>one</li></ul>".encode(), content_type="text/html; charset=utf-8"
    )
    server.routes["/old"] = lambda h: reply(h, 301, headers={"Location": "/doc"})
    provider = HttpFetchProvider(
        HttpFetchConfig(timeout_s=10), policy=LOOPBACK_ONLY, resolver=FakeDNS({"fetch.test": ["127.0.0.1"]})
    )
    result = asyncio.run(tool_with(provider).execute({"url": f"http://fetch.test:{server.port}/old"}))
    assert result.text == f"Fetched http://fetch.test:{server.port}/doc (HTTP 200)\n\n# Café\n\n- one"
    assert result.value is not None and validate("web_fetch.output", result.value) == []
    assert result.value["body"]["kind"] == "text"  # converted to Markdown, which is text


def test_a_provider_byte_cut_is_flagged_in_the_tool_output(server: LocalServer) -> None:
    server.routes["/long"] = lambda h: reply(h, 200, b"z" * 5000, length=False)
    provider = HttpFetchProvider(
        HttpFetchConfig(timeout_s=10, max_response_bytes=100),
        policy=LOOPBACK_ONLY,
        resolver=FakeDNS({"fetch.test": ["127.0.0.1"]}),
    )
    result = asyncio.run(tool_with(provider).execute({"url": f"http://fetch.test:{server.port}/long"}))
    assert result.value is not None and result.value["truncated"] is True
    assert result.text.endswith(
        "z" * 100 + "\n\n(Content truncated. Fetch a more specific URL or section for the full text.)"
    )


def test_the_default_provider_refuses_the_loopback_server(server: LocalServer) -> None:
    server.routes["/"] = lambda h: reply(h, 200, b"secret")
    result = asyncio.run(tool_with(HttpFetchProvider()).execute({"url": server.url("/")}))
    assert result.error_code == WebErrorCode.BLOCKED_URL
    assert result.text.startswith("Error: URL host 127.0.0.1 is not a public address (loopback)")
    assert server.connections == 0
