"""Hostile bodies from a DeepSeek endpoint stay within memory and text bounds (issue 14 items 3-5).

Bodies cross a real loopback socket. Memory is measured in this process with tracemalloc; the
byte cap is lowered for the decompression case so the bomb (and the test) stay small, while the
code path is the one every reply takes.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import sys
import time
import tracemalloc
import zlib
from collections.abc import Callable
from typing import Any

import pytest

from dsweb_ref import CallContext, FetchRequest, SearchRequest, SearchResult, Source, WebError, WebErrorCode, WebService
from dsweb_ref.providers import _deepseek_http
from dsweb_ref.providers._deepseek_http import parse_json
from dsweb_ref.providers.deepseek_fetch_api import DeepSeekFetchApi
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.settings import Settings
from dsweb_ref.tools import WebFetchTool, WebSearchTool

from ._helpers import ENV, KEY
from ._loopback import Loopback, Reply

SMALL_CAP = 1024 * 1024


def _settings(base: str) -> Callable[[], Settings]:
    snapshot = Settings().updated({"deepseek_api.base_url": base, "deepseek_api.timeout_s": 10.0})
    return lambda: snapshot


def _search(loopback: Loopback, body: bytes, headers: dict[str, str] | None = None) -> SearchResult:
    loopback.routes["/search"] = Reply(200, body, {"Content-Type": "application/json", **(headers or {})})
    provider = DeepSeekSearchApi(_settings(loopback.base), environ=ENV)
    return asyncio.run(provider.search(SearchRequest("q"), CallContext()))


def _peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        try:
            out: Any = fn()
        except (WebError, ValueError) as exc:
            out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _zeros_gzip(size: int) -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"\0" * (1024 * 1024)
    return b"".join(squeeze.compress(chunk) for _ in range(size // len(chunk))) + squeeze.flush()


def test_a_gzip_bomb_trips_the_cap_before_memory_grows(loopback: Loopback, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_deepseek_http, "MAX_RESPONSE_BYTES", SMALL_CAP)
    bomb = _zeros_gzip(64 * SMALL_CAP)  # ~64 KB on the wire, 64 MiB inflated
    error, peak = _peak(lambda: _search(loopback, bomb, {"Content-Encoding": "GZIP"}))
    assert isinstance(error, WebError) and error.code == WebErrorCode.PROVIDER_ERROR
    assert error.message == f"DeepSeek Search API response exceeds {SMALL_CAP} bytes"
    # Inflating whole chunks (httpx's aiter_bytes) peaked at tens of MiB here.
    assert peak < 4 * SMALL_CAP, peak


def test_stacked_codings_are_refused_without_inflating(loopback: Loopback) -> None:
    bomb = gzip.compress(_zeros_gzip(64 * SMALL_CAP))  # "gzip, gzip": ~2 KB that grew to 64 MiB per layer
    error, peak = _peak(lambda: _search(loopback, bomb, {"Content-Encoding": "gzip, gzip"}))
    assert isinstance(error, WebError) and error.code == WebErrorCode.PROVIDER_ERROR
    assert error.message == (
        'DeepSeek Search API response body cannot be read: unsupported content encoding "gzip, gzip"'
    )
    assert peak < SMALL_CAP, peak


def test_a_small_gzip_reply_is_still_read(loopback: Loopback) -> None:
    body = gzip.compress(json.dumps({"results": [{"url": "https://a.test/", "title": "A"}]}).encode())
    out = _search(loopback, body, {"Content-Encoding": "gzip"})
    assert [(s.url, s.title) for s in out.sources] == [("https://a.test/", "A")]


def test_many_tiny_values_are_refused_before_they_are_allocated() -> None:
    body = b'{"results":[' + b"{}," * (31 * 1024 * 1024 // 3) + b"{}]}"  # under the 32 MiB cap
    error, peak = _peak(lambda: parse_json(body))
    assert isinstance(error, ValueError)
    assert str(error) == f"JSON holds more than {_deepseek_http.MAX_JSON_VALUES} values"
    assert peak < 1024 * 1024, peak  # parsing it cost 750-900 MB


def test_the_value_bound_reaches_the_caller_as_an_unprocessable_body(loopback: Loopback) -> None:
    body = b'{"results":[' + b"0," * _deepseek_http.MAX_JSON_VALUES + b"0]}"
    with pytest.raises(WebError) as info:
        _search(loopback, body)
    assert info.value.message == (
        "DeepSeek Search API returned an unprocessable response body: "
        f"not JSON (JSON holds more than {_deepseek_http.MAX_JSON_VALUES} values)"
    )


def test_brackets_inside_strings_are_not_counted_as_values() -> None:
    text = "{[,]}" * _deepseek_http.MAX_JSON_VALUES  # a page of code in one Markdown string
    assert parse_json(json.dumps({"content": text}).encode()) == {"content": text}


def test_a_lone_surrogate_escape_becomes_a_replacement_character() -> None:
    body = b'{"a":"x\\ud800y","\\udfff":["\\uDBFF"],"pair":"\\ud83d\\ude00"}'
    assert parse_json(body) == {"a": "x\ufffdy", "\ufffd": ["\ufffd"], "pair": "\U0001f600"}


def test_a_lone_surrogate_deep_in_a_body_is_replaced_like_any_other() -> None:
    # catches: a recursive surrogate walk, which ran from a deeper stack than the decoder: a body the decoder
    # read (600 levels) raised RecursionError out of every provider (a traceback in `dsweb solo search`), or,
    # guarded, was refused only because it held a surrogate
    value = parse_json(("[" * 600 + '"\\ud800"' + "]" * 600).encode())
    for _ in range(600):
        assert isinstance(value, list) and len(value) == 1
        value = value[0]
    assert value == "\ufffd"


def test_surrogates_in_provider_strings_never_reach_model_visible_text(loopback: Loopback) -> None:
    item = {"url": "https://a.test/\\ud800", "title": "T\\udc00", "snippet": "S\\ud800", "date": "\\ud800"}
    body = ('{"results":[' + json.dumps(item).replace("\\\\", "\\") + "]}").encode()
    loopback.routes["/search"] = Reply(200, body, {"Content-Type": "application/json"})
    web = WebService()
    web.register_search(DeepSeekSearchApi(_settings(loopback.base), environ=ENV))
    out = asyncio.run(WebSearchTool(web).execute({"queries": ["q"]}))
    assert not out.is_error
    out.text.encode("utf-8")  # raises on a lone surrogate
    json.dumps(out.to_json(), ensure_ascii=False).encode("utf-8")
    assert "T\ufffd" in out.text and "https://a.test/\ufffd" in out.text


def test_the_seam_refuses_a_provider_string_that_is_not_unicode() -> None:
    class Lone:
        id = "lone"

        def available(self) -> bool:
            return True

        async def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult:
            return SearchResult(sources=(Source("https://a.test/", title="\ud800"),))

    web = WebService()
    web.register_search(Lone())
    with pytest.raises(WebError) as info:
        asyncio.run(web.search(SearchRequest("q")))
    assert info.value.code == WebErrorCode.PROVIDER_ERROR
    assert info.value.message == (
        'web provider "lone" returned a malformed result: sources[0].title must be a string (valid Unicode) or None'
    )


def _cli(loopback: Loopback, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSWEB_")}
    env.update({"DSWEB_TOOLS_BASE_URL": loopback.base, "DEEPSEEK_API_KEY": KEY, "PYTHONIOENCODING": "utf-8"})
    return subprocess.run(
        [sys.executable, "-m", "dsweb_ref", *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_dsweb_search_and_fetch_print_a_lone_surrogate_without_a_traceback(loopback: Loopback, as_json: bool) -> None:
    """Issue 14 item 5, end to end: the CLI died with UnicodeEncodeError on ``\\ud800``."""
    loopback.routes["/search"] = Reply(200, b'{"results":[{"url":"https://a.test/","title":"T\\ud800"}]}')
    loopback.routes["/fetch"] = Reply(200, b'{"content":"# Page \\ud800"}')
    flags = ["--json"] if as_json else []
    search = _cli(loopback, "search", "--new-api", *flags, "coffee")
    fetch = _cli(loopback, "fetch", "--new-api", *flags, "https://example.com/")
    for done in (search, fetch):
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == 0, done.stderr
        assert "\ufffd" in done.stdout


def test_fetch_tool_text_stays_encodable(loopback: Loopback) -> None:
    loopback.routes["/fetch"] = Reply(200, b'{"content":"\\ud800 body"}')
    web = WebService()
    web.register_fetch(DeepSeekFetchApi(_settings(loopback.base), environ=ENV))
    out = asyncio.run(WebFetchTool(web).execute({"url": "https://example.com/"}))
    assert not out.is_error and out.text.encode("utf-8")
    assert asyncio.run(web.fetch(FetchRequest("https://example.com/"))).body.content == "\ufffd body"


def test_counting_values_stays_linear_on_unterminated_escaped_strings() -> None:
    """Every quote of ``"\\",\\",...`` once opened a string that ran to the end and failed."""
    body = b'"' + b'\\",' * 2_000_000  # 6 MB, far more commas than the value bound
    start = time.perf_counter()
    with pytest.raises(ValueError):
        parse_json(body)
    assert time.perf_counter() - start < 5.0
