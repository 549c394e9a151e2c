"""Hostile input through the real tools: mutated provider bodies, hostile encodings and headers,
and hostile model arguments (issue 14), driven by hypothesis with a fixed seed and a bounded
number of examples.

Every reply crosses a real loopback socket to the shipped DeepSeek providers, selected through
the runtime, and the model-facing tools run on top. Each example asserts that:

* nothing but a ``WebError`` escapes (``execute`` turns those into error results, so any raise fails);
* the call ends within its provider deadline plus a small margin;
* memory stays within a small multiple of the byte cap (tracemalloc, in this process; the cap is
  lowered so bombs stay cheap);
* the model-visible text (and the JSON the runtime gets) encodes as UTF-8 and is under its cap.

Deadlines against stalling servers are checked separately, through the tools, with the emulator's
SlowBody and Hold faults.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import html
import json
import time
import tracemalloc
import urllib.parse
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from providers._loopback import Loopback, Reply, running

from dsweb_ref._secrets import encoded_secret_found
from dsweb_ref.cli import main as cli_main
from dsweb_ref.emulator import Emulator, Gate, Hold, SlowBody
from dsweb_ref.providers import _deepseek_http
from dsweb_ref.runtime import Runtime, build_runtime, standalone_search_tool
from dsweb_ref.settings import Settings
from dsweb_ref.standalone_accounts import Resolution, SearchRoute
from dsweb_ref.tools import ToolResult

KEY = "hostile-test-key-123"
CAP = 256 * 1024  # byte cap while this module runs (the value cap follows it)
TIMEOUT_S = 2.0
# Past the deadline, what a loaded two-core runner (and tracemalloc) may add; a call without its deadline
# waits for the server instead (a dripping body for tens of seconds, a held one until the test ends).
MARGIN_S = 3.0
SEARCH_CAP = 4_000
FETCH_CAP = 3_000
EXAMPLES = 60
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,  # seeded: the same examples on every run
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- strategies ------------------------------------------------------------------------------

_odd_text = st.sampled_from(
    ["\ud800", "\udfff", "a\ud83d", "\x00", "\u202e", "\ufeff", "\r\n", "\\", '"', "</script>", "é", "😀", "sk-"]
)
hostile_text = st.one_of(
    st.text(max_size=40),
    st.lists(_odd_text | st.text(max_size=4), max_size=6).map("".join),
    st.integers(0, 60_000).map(lambda n: "x" * n),  # far past the per-field and total caps
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    hostile_text,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
field = st.one_of(hostile_text, json_values)


@st.composite
def search_doc(draw: st.DrawFn) -> object:
    item = {
        "url": draw(st.one_of(st.just("https://a.test/r"), field)),
        "title": draw(field),
        "snippet": draw(field),
        "date": draw(field),
        "summary": draw(field),
        "rerank_score": draw(scalars),
        "authority": draw(scalars),
    }
    return draw(st.sampled_from([{"results": [item] * draw(st.integers(0, 10))}, {"results": draw(field)}, item]))


@st.composite
def fetch_doc(draw: st.DrawFn) -> object:
    return draw(st.sampled_from([{"content": draw(field), "title": draw(field)}, draw(json_values)]))


@st.composite
def messages_doc(draw: st.DrawFn) -> object:
    result = {"type": "web_search_result", "url": draw(field), "title": draw(field), "page_age": draw(field)}
    error = {"type": "web_search_tool_result_error", "error_code": draw(field)}
    block = {"type": "web_search_tool_result", "content": draw(st.sampled_from([[result, result], error, None]))}
    text = {"type": "text", "text": draw(field), "citations": [{"url": draw(field), "cited_text": draw(field)}]}
    return {"content": draw(st.permutations([block, text, draw(json_values)]))}


DOCS = {"search": search_doc(), "fetch": fetch_doc(), "messages": messages_doc()}
PATHS = {"search": "/v1/tools/search", "fetch": "/v1/tools/fetch", "messages": "/anthropic/v1/messages"}


def _serialise(doc: object, ascii_only: bool) -> bytes:
    # ensure_ascii=False writes a lone surrogate as raw (invalid) UTF-8: that is hostile input too.
    return json.dumps(doc, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


@st.composite
def hostile_body(draw: st.DrawFn, route: str) -> bytes:
    body = _serialise(draw(DOCS[route]), draw(st.booleans()))
    mutation = draw(st.sampled_from(["none", "none", "truncate", "insert", "nest", "values", "bytes", "nan"]))
    if mutation == "truncate":
        body = body[: draw(st.integers(0, len(body)))]
    elif mutation == "insert":
        at = draw(st.integers(0, len(body)))
        body = body[:at] + draw(st.binary(max_size=8)) + body[at:]
    elif mutation == "nest":
        depth = draw(st.integers(100, 100_000))
        body = b"[" * depth + body + b"]" * depth
    elif mutation == "values":
        body = b'{"results":[' + b"{}," * draw(st.integers(1, CAP // 3)) + b"{}]}"
    elif mutation == "bytes":
        body = draw(st.binary(max_size=256))
    elif mutation == "nan":
        body = body.replace(b"0", b"NaN", 1) if b"0" in body else b'{"results":[1e999]}'
    return body


STATUSES = [200, 200, 200, 201, 204, 299, 300, 302, 400, 401, 402, 403, 404, 429, 500, 503, 599]
CODINGS = ["", "", "identity", "gzip", "GZIP", "x-gzip", "deflate", "gzip, gzip", "br", "bomb", "trailing"]


@st.composite
def hostile_reply(draw: st.DrawFn, route: str) -> Reply:
    body = draw(hostile_body(route))
    status = draw(
        st.sampled_from([200, 200, 200, 201, 204, 299, 300, 302, 400, 401, 402, 403, 404, 429, 500, 503, 599])
    )
    headers = {"Content-Type": draw(st.sampled_from(["application/json", "text/html", "", "application/json; x=\x7e"]))}
    coding = draw(
        st.sampled_from(["", "", "identity", "gzip", "GZIP", "x-gzip", "deflate", "gzip, gzip", "br", "bomb"])
    )
    if coding in ("gzip", "GZIP", "x-gzip"):
        body = gzip.compress(body)
    elif coding == "deflate":
        body = zlib.compress(body)
    elif coding == "gzip, gzip":
        body = gzip.compress(gzip.compress(body))
    elif coding == "bomb":  # 16 MiB of zeros: 64 times the cap
        coding, body = "gzip", _BOMB
    elif coding == "trailing":  # bytes after the end of the stream: 16 times the cap of them
        coding, body = "gzip", gzip.compress(body) + draw(st.sampled_from([b"", b"garbage", _TAIL]))
    if coding:
        headers["Content-Encoding"] = coding
    if draw(st.booleans()):
        headers["Retry-After"] = draw(st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=300))
    return _Shown(status, body, headers)


class _Shown(Reply):
    """A reply whose repr stays short when hypothesis prints a failing example."""

    def __repr__(self) -> str:
        return f"Reply({self.status}, {len(self.body)} bytes {self.body[:120]!r}..., {self.headers})"


_BOMB = gzip.compress(b"\0" * (16 * 1024 * 1024))
_TAIL = b"\0" * (4 * 1024 * 1024)
arguments = st.one_of(
    st.just({"queries": ["q"]}),
    st.just({"queries": ["q1", "q2", "q3"]}),
    st.fixed_dictionaries({"queries": st.lists(hostile_text | scalars, max_size=6)}),
    json_values,
)
fetch_arguments = st.one_of(
    st.just({"url": "https://a.test/page"}),
    st.fixed_dictionaries({"url": hostile_text | scalars}),
    json_values,
)

# --- harness ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def upstream() -> Iterator[Loopback]:
    with running() as server:
        yield server


@pytest.fixture(autouse=True)
def small_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_deepseek_http, "MAX_RESPONSE_BYTES", CAP)
    # The value bound scaled with the byte cap (as 200,000 values are to 32 MiB).
    monkeypatch.setattr(_deepseek_http, "MAX_JSON_VALUES", CAP // 160)


def _runtime(base: str, *, messages: bool) -> Runtime:
    snapshot = Settings().updated(
        {
            "web.search_provider": "deepseek-official" if messages else "deepseek-search-api",
            "web.fetch_provider": "deepseek-fetch-api",
            "deepseek_api.base_url": base + "/v1/tools",
            "deepseek_messages.base_url": base + "/anthropic/v1",
            "deepseek_api.timeout_s": TIMEOUT_S,
            "deepseek_messages.timeout_s": TIMEOUT_S,
            "tools.search_max_output_chars": SEARCH_CAP,
            "tools.fetch_max_output_chars": FETCH_CAP,
        }
    )
    return build_runtime(lambda: snapshot, environ={"DEEPSEEK_API_KEY": KEY})


def _measured(run: Callable[[], ToolResult]) -> tuple[ToolResult, float, int]:
    tracemalloc.start()
    start = time.monotonic()
    try:
        out = run()
        return out, time.monotonic() - start, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _check(out: ToolResult, elapsed: float, peak: int, cap: int) -> None:
    assert isinstance(out, ToolResult)
    assert elapsed < TIMEOUT_S + MARGIN_S, elapsed
    # The cap's worth of body, a copy for parsing, and slack; a bomb inflated whole is 64 times the cap.
    assert peak < 8 * CAP, peak
    out.text.encode("utf-8")  # raises on a lone surrogate
    json.dumps(out.to_json(), ensure_ascii=False, allow_nan=False).encode("utf-8")
    assert len(out.text) <= cap, len(out.text)
    if out.is_error:
        assert out.error_code is not None and out.error_code.startswith("WEB_")


# --- the properties --------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["search", "messages", "fetch"])
@FUZZ
@given(data=st.data())
def test_the_tools_survive_hostile_provider_replies(upstream: Loopback, route: str, data: st.DataObject) -> None:
    upstream.routes[PATHS[route]] = data.draw(hostile_reply(route))
    runtime = _runtime(upstream.base, messages=route == "messages")
    if route == "fetch":
        tool: Any = runtime.fetch_tool()
        args, cap = data.draw(fetch_arguments), FETCH_CAP
    else:
        tool, args, cap = runtime.search_tool(), data.draw(arguments), SEARCH_CAP
    out, elapsed, peak = _measured(lambda: asyncio.run(tool.execute(args)))
    _check(out, elapsed, peak, cap)


# --- deadlines against stalling servers, through the tools -------------------------------------


@pytest.mark.parametrize("stall", ["slow-body", "hold"])
@pytest.mark.parametrize("route", ["search", "messages", "fetch"])
def test_a_stalling_server_costs_no_more_than_the_deadline(
    route: str, stall: str, emulator: Emulator, emulator_api_key: str
) -> None:
    gate = Gate()
    emulator.inject("*", SlowBody(chunk_size=4, delay=0.2) if stall == "slow-body" else Hold(gate, timeout=30))
    timeout_s = 0.5
    snapshot = Settings().updated(
        {
            "web.search_provider": "deepseek-official" if route == "messages" else "deepseek-search-api",
            "web.fetch_provider": "deepseek-fetch-api",
            "deepseek_api.base_url": emulator.tools_base,
            "deepseek_messages.base_url": emulator.messages_base,
            "deepseek_api.timeout_s": timeout_s,
            "deepseek_messages.timeout_s": timeout_s,
        }
    )
    runtime = build_runtime(lambda: snapshot, environ={"DEEPSEEK_API_KEY": emulator_api_key})
    call: Any = (
        runtime.fetch_tool().execute({"url": "https://docs.example.test/api/fetch"})
        if route == "fetch"
        else runtime.search_tool().execute({"queries": ["a", "b"]})
    )
    start = time.monotonic()
    try:
        out = asyncio.run(call)
    finally:
        gate.release()
    assert time.monotonic() - start < timeout_s + MARGIN_S
    assert out.error_code == "WEB_PROVIDER_ERROR" and "timed out after 0.5 s" in out.text


# --- the key echoed back encoded, in every provider's error text (issue 20 item 2) --------------
# An upstream error message may quote the key it rejected, encoded. Every provider's error text, in
# every tool (and the `dsweb solo search` terminal), must show none of these forms.


def _b64(data: bytes, alphabet: str = "std", pad: bool = True) -> str:
    text = (base64.urlsafe_b64encode if alphabet == "url" else base64.b64encode)(data).decode("ascii")
    return text if pad else text.rstrip("=")


ENCODINGS: dict[str, Callable[[str], str]] = {
    "raw": lambda k: k,
    "upper": str.upper,
    "swapped-case": str.swapcase,
    "base64": lambda k: _b64(k.encode()),
    "base64-no-padding": lambda k: _b64(k.encode(), pad=False),
    "base64-url-safe": lambda k: _b64(k.encode(), "url", pad=False),
    "base64-of-bearer-header": lambda k: _b64(f"Bearer {k}".encode()),  # the key at another alignment
    "base64-of-basic-pair": lambda k: _b64(f"user:{k}".encode()),
    "percent": lambda k: "".join(f"%{b:02X}" for b in k.encode()),
    "percent-lower": lambda k: "".join(f"%{b:02x}" for b in k.encode()),
    "percent-twice": lambda k: "".join(f"%25{b:02X}" for b in k.encode()),
    "percent-reserved-only": lambda k: urllib.parse.quote(k, safe=""),
    "hex": lambda k: k.encode().hex(),
    "hex-upper": lambda k: k.encode().hex().upper(),
    "html-decimal": lambda k: "".join(f"&#{ord(c)};" for c in k),
    "html-hex": lambda k: "".join(f"&#x{ord(c):x};" for c in k),
    "html-escaped": html.escape,
    "json-unicode": lambda k: "".join(f"\\u{ord(c):04x}" for c in k),
    "reversed": lambda k: k[::-1],
}
# A key with the characters the encodings treat differently ('+', '/', '=' in base64 output, '-',
# '_', '.', '~' in percent-encoding), and no shape the generic credential rules would catch anyway.
ECHO_KEY = "hostile.Key_with~many+parts/0123=="
ECHO_ROUTES = {
    "search-api": ("/v1/tools/search", "search"),
    "messages": ("/anthropic/v1/messages", "search"),
    "fetch-api": ("/v1/tools/fetch", "fetch"),
    "standalone-messages": ("/solo/v1/messages", "standalone"),
    "standalone-responses": ("/solo/v1/responses", "standalone"),
}
ECHO_STATUSES = [400, 401, 403, 429, 500]
ECHO_WRAPPERS = [
    lambda e: {"error": {"message": f"Authentication Fails, Your api key: {e} is invalid", "type": "auth"}},
    lambda e: {"error": f"invalid key {e}"},
    lambda e: {"message": f"key={e}"},
]


def _echo_tool(base: str, route: str) -> Any:
    if route.startswith("standalone"):
        protocol = route.removeprefix("standalone-")
        url = base + ECHO_ROUTES[route][0]
        selection = Resolution("selected", route=SearchRoute("relay", protocol, url, "m", "ECHO_KEY"))  # type: ignore[arg-type]
        return standalone_search_tool(selection, environ={"ECHO_KEY": ECHO_KEY})
    snapshot = Settings().updated(
        {
            "web.search_provider": "deepseek-official" if route == "messages" else "deepseek-search-api",
            "web.fetch_provider": "deepseek-fetch-api",
            "deepseek_api.base_url": base + "/v1/tools",
            "deepseek_messages.base_url": base + "/anthropic/v1",
        }
    )
    runtime = build_runtime(lambda: snapshot, environ={"DEEPSEEK_API_KEY": ECHO_KEY})
    return runtime.fetch_tool() if route == "fetch-api" else runtime.search_tool()


def _arguments(route: str) -> dict[str, Any]:
    kind = ECHO_ROUTES[route][1]
    if kind == "fetch":
        return {"url": "https://a.test/page"}
    return {"query": "q"} if kind == "standalone" else {"queries": ["q"]}


def _assert_no_key(shown: str, encoded: str) -> None:
    assert encoded not in shown, shown
    assert not encoded_secret_found(shown, [ECHO_KEY]), shown
    # No long run of the encoded form survives either (a cut that kept most of it).
    assert not any(encoded[i : i + 12] in shown for i in range(0, max(1, len(encoded) - 12), 4)), shown


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("route", list(ECHO_ROUTES))
def test_no_provider_error_shows_the_key_in_any_encoding(upstream: Loopback, route: str, encoding: str) -> None:
    encoded = ENCODINGS[encoding](ECHO_KEY)
    n = list(ENCODINGS).index(encoding) + list(ECHO_ROUTES).index(route)
    status, wrap = ECHO_STATUSES[n % len(ECHO_STATUSES)], ECHO_WRAPPERS[n % len(ECHO_WRAPPERS)]
    upstream.routes[ECHO_ROUTES[route][0]] = Reply(status, json.dumps(wrap(encoded)).encode())
    out: ToolResult = asyncio.run(_echo_tool(upstream.base, route).execute(_arguments(route)))
    assert out.is_error and out.error_code == "WEB_PROVIDER_ERROR", out
    assert f"HTTP {status}" in out.text and "<credential>" in out.text, out.text  # the echo was there, scrubbed
    _assert_no_key(out.text, encoded)
    _assert_no_key(json.dumps(out.to_json(), ensure_ascii=False), encoded)


def test_the_messages_in_band_tool_error_shows_no_encoded_key(upstream: Loopback) -> None:
    for encoding, encode in ENCODINGS.items():
        encoded = encode(ECHO_KEY)
        body = {"content": [{"type": "web_search_tool_result", "tool_use_id": "s",
                             "content": {"type": "web_search_tool_result_error", "error_code": encoded}}]}
        upstream.routes["/anthropic/v1/messages"] = Reply(200, json.dumps(body).encode())
        out: ToolResult = asyncio.run(_echo_tool(upstream.base, "messages").execute({"queries": ["q"]}))
        assert out.is_error, (encoding, out)
        _assert_no_key(out.text, encoded)


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_dsweb_solo_search_prints_no_encoded_key(
    upstream: Loopback,
    encoding: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encoded = ENCODINGS[encoding](ECHO_KEY)
    upstream.routes["/solo/v1/messages"] = Reply(401, json.dumps(ECHO_WRAPPERS[0](encoded)).encode())
    config = tmp_path / "solo.json"
    config.write_text(json.dumps({"current": "relay", "accounts": [
        {"name": "relay", "protocol": "messages", "base_url": upstream.base + "/solo", "model": "m",
         "api_key_env": "ECHO_KEY", "web_search": True}]}))
    monkeypatch.setenv("ECHO_KEY", ECHO_KEY)
    assert cli_main(["solo", "search", "q", "--config", str(config)]) == 1
    captured = capsys.readouterr()
    assert "HTTP 401" in captured.out and "<credential>" in captured.out, captured.out
    _assert_no_key(captured.out + captured.err, encoded)
