"""Named probes: small, documented request scenarios per protocol.

A probe drives the real providers (or the real tools through :func:`build_runtime`), so what
a cassette records is exactly what the reference implementation sends. Each probe declares
the HTTP statuses it expects; ``dsweb record`` keeps a cassette only when every exchange
answered one of them. Probes that need a scripted fault (429, malformed body, redirect, ...)
carry a ``fault`` and run only against the embedded emulator.

Probe ids are ``<protocol>.<name>``; the cassette lives at ``<protocol>/<name>.yaml``.
``params`` (query, URL, prompt) and ``settings`` (setting values on top of the probe settings,
e.g. the account route or ``send_original_question = false``) are stored in the cassette's
provenance so a replay sends byte-identical requests.

Credentials: a probe reads the API key from :data:`KEY_ENV` and, on the account route
(``settings={"credentials.auth": "account"}``), the account token from :data:`ACCOUNT_ENV`, both
from a private mapping. Each :class:`Exchange` notes which credential its request carried, as
placeholders only (:data:`KEY_PLACEHOLDER`, :data:`ACCOUNT_PLACEHOLDER`), never a value.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from .._context import CallContext
from .._exceptions import WebError, WebErrorCode
from .._protocols import StandaloneSearchBackend
from .._secrets import replace_literals
from .._types import FetchRequest, FetchResult, SearchRequest, SearchResult
from ..emulator import (
    Emulator,
    Fault,
    HugeSummary,
    Malformed,
    NoSources,
    ProseOnly,
    RateLimited,
    Redirect,
    Status,
    ToolError,
)
from ..providers.deepseek_fetch_api import DeepSeekFetchApi
from ..providers.deepseek_official import DeepSeekMessagesSearch
from ..providers.deepseek_search_api import DeepSeekSearchApi, map_results
from ..providers.standalone_messages import MessagesStandaloneSearch
from ..providers.standalone_responses import ResponsesStandaloneSearch
from ..runtime import build_runtime
from ..settings import Settings
from ..tools import ToolResult
from ..tools.standalone_search import StandaloneSearchTool
from ._bases import ACCOUNT_ENV, KEY_ENV, credential_environ, settings_for_bases
from .cassettes import KEY_PLACEHOLDER, REDACTED, SCRUBBED_REQUEST_HEADERS, _is_placeholder_value

__all__ = [
    "ACCOUNT_ENV",
    "ACCOUNT_PLACEHOLDER",
    "ACCOUNT_QPS_LIMIT",
    "KEY_ENV",
    "PROBES",
    "Exchange",
    "Probe",
    "ProbeContext",
    "ProbeRun",
    "RateLimiter",
    "envelope_message",
    "get_probe",
]

ACCOUNT_QPS_LIMIT = 5.0  # seed 001: Search and Fetch each have an account-wide 5 QPS limit (at launch)
ERROR_BODY_BYTES = 64 * 1024  # how much of an error response an Exchange keeps (decoded) as evidence
_BUFFER_LIMIT = 32 * 1024 * 1024 + 1  # past the providers' response cap: they still see "too large"
ACCOUNT_PLACEHOLDER = "<DEEPSEEK_ACCOUNT_TOKEN>"  # what the account token becomes in a cassette
SEARCH_MAX_RESULTS = 8  # the tool's default cap: probes send what the web_search tool sends
Outcome = SearchResult | FetchResult | ToolResult | WebError


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


class RateLimiter:
    """Spaces request starts at least ``1 / max_rps`` seconds apart. ``clock`` and ``sleep`` are
    injectable so a test can check the spacing without waiting for real."""

    def __init__(
        self,
        max_rps: float,
        *,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        if not max_rps > 0:
            raise ValueError("max_rps must be > 0")
        self.interval = 1.0 / max_rps
        self._clock = clock or _loop_time
        self._sleep = sleep or asyncio.sleep
        self._next: float | None = None
        self._lock = asyncio.Lock()
        self.starts: list[float] = []

    async def acquire(self) -> None:
        async with self._lock:
            now = self._clock()
            if self._next is not None and now < self._next:
                await self._sleep(self._next - now)
                now = self._clock()
            self.starts.append(now)
            self._next = max(now, self._next or now) + self.interval


@dataclass(frozen=True, slots=True)
class Exchange:
    method: str
    url: str
    status: int
    # An error answer's (status >= 400) decoded body, at most ERROR_BODY_BYTES: evidence such as
    # whether a 404 came from the API (error envelope) or from a server that has no such route.
    body: bytes | None = None
    # The credential headers the request carried (lower-case name, value), each value with the
    # context's key and account token replaced by their placeholders, or <REDACTED> when anything
    # else is left: which credential went out, never its value.
    credentials: tuple[tuple[str, str], ...] = ()
    # A successful Messages answer's whole decoded JSON body, as buffered (None otherwise, and for a
    # streamed answer): evidence of what the answer held beyond the sources the provider maps, e.g. a
    # thinking block although the request disabled thinking. Not cut to ERROR_BODY_BYTES: a right answer
    # (encrypted_content per result, several searches) may be larger, and a cut one no longer parses.
    # Only an answer past the buffer limit (which the provider refuses as too large anyway) is cut.
    answer: bytes | None = None


def envelope_message(body: bytes | None) -> str | None:
    """The message of an API error envelope (``{"error": {"message": ...}}``, OpenAI- and
    Anthropic-style alike), or None when ``body`` is not one (HTML, plain text, other JSON)."""
    if not body:
        return None
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    error = value.get("error") if isinstance(value, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else None


async def _buffered(response: httpx.Response, keep: int | None = ERROR_BODY_BYTES) -> tuple[httpx.Response, bytes]:
    """Read an answer so it can be kept as evidence (its decoded body, the first ``keep`` bytes; None:
    all that was buffered); the provider gets an identical response."""
    raw = bytearray()
    try:
        async for chunk in response.aiter_raw():
            raw += chunk
            if len(raw) >= _BUFFER_LIMIT:
                break
    finally:
        await response.aclose()
    content = bytes(raw)
    copy = httpx.Response(
        response.status_code, headers=response.headers, stream=httpx.ByteStream(content), extensions=response.extensions
    )
    try:
        decoded = httpx.Response(response.status_code, headers=response.headers, content=content).read()
    except httpx.DecodingError:
        decoded = content
    return copy, decoded if keep is None else decoded[:keep]


def credential_headers(headers: httpx.Headers, secrets: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The credential headers in ``headers``, values scrubbed: each of ``secrets`` (value ->
    placeholder, longest first) replaced, and anything still not a bare placeholder <REDACTED>."""
    found: list[tuple[str, str]] = []
    for name in SCRUBBED_REQUEST_HEADERS:
        for value in headers.get_list(name):
            value = replace_literals(value, secrets.items())
            found.append((name, value if _is_placeholder_value(value) else REDACTED))
    return tuple(found)


def _json_messages_answer(request: httpx.Request, response: httpx.Response) -> bool:
    """A non-streamed JSON answer of ``POST …/messages`` (kept as :attr:`Exchange.answer`)."""
    kind = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return request.method == "POST" and request.url.path.endswith("/messages") and kind == "application/json"


class ProbeTransport(httpx.AsyncBaseTransport):
    """httpx's own transport (which vcrpy patches), paced and observed."""

    def __init__(
        self, limiter: RateLimiter | None, exchanges: list[Exchange], secrets: Mapping[str, str] | None = None
    ) -> None:
        self._inner = httpx.AsyncHTTPTransport(trust_env=False)
        self._limiter = limiter
        self._exchanges = exchanges
        self._secrets = dict(secrets or {})

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._limiter is not None:
            await self._limiter.acquire()
        sent = credential_headers(request.headers, self._secrets)
        response = await self._inner.handle_async_request(request)
        body = answer = None
        if response.status_code >= 400:
            response, body = await _buffered(response)
        elif 200 <= response.status_code < 300 and _json_messages_answer(request, response):
            response, answer = await _buffered(response, keep=None)
        self._exchanges.append(
            Exchange(request.method, str(request.url), response.status_code, body, sent, answer)
        )
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


@dataclass
class ProbeContext:
    """Where and how a probe runs. ``None`` bases mean the protocol is not targeted.

    ``account_token`` is offered under :data:`ACCOUNT_ENV` (used only on the account route);
    ``overrides`` are setting values applied on top of the probe settings (a probe's ``settings``).
    """

    messages_base: str | None
    tools_base: str | None
    api_key: str
    params: Mapping[str, Any] = field(default_factory=dict)
    timeout_s: float = 30.0
    limiter: RateLimiter | None = None
    exchanges: list[Exchange] = field(default_factory=list)
    account_token: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        secrets = {self.api_key: KEY_PLACEHOLDER}
        if self.account_token:
            secrets[self.account_token] = ACCOUNT_PLACEHOLDER
        self.transport = ProbeTransport(self.limiter, self.exchanges, secrets)

    @property
    def environ(self) -> Mapping[str, str]:
        return credential_environ(self.api_key, self.account_token)

    def settings(self, *, new_api: bool) -> Settings:
        return settings_for_bases(
            self.messages_base,
            self.tools_base,
            timeout_s=self.timeout_s,
            new_api=True if new_api else None,
            overrides=self.overrides,
        )


@dataclass(frozen=True)
class ProbeRun:
    outcomes: tuple[Outcome, ...]
    exchanges: tuple[Exchange, ...]


Runner = Callable[[ProbeContext], Awaitable[list[Outcome]]]


@dataclass(frozen=True)
class Probe:
    id: str
    description: str
    route: str  # "search" | "fetch" | "messages": which base it needs
    expect_status: frozenset[int]
    runner: Runner
    params: Mapping[str, Any] = field(default_factory=dict)
    fault: Callable[[Emulator], Fault] | None = None  # emulator-only probes
    settings: Mapping[str, Any] = field(default_factory=dict)  # setting values on top of the probe settings

    @property
    def auth(self) -> str:
        """The credential route: "api_key", or "account" (the account token is the credential)."""
        return str(self.settings.get("credentials.auth", "api_key"))

    @property
    def protocol(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.id.split(".", 1)[1]

    @property
    def cassette(self) -> str:
        return f"{self.protocol}/{self.name}.yaml"

    @property
    def needs_emulator(self) -> bool:
        return self.fault is not None

    def base(self, messages_base: str | None, tools_base: str | None) -> str | None:
        return messages_base if self.route == "messages" else tools_base

    async def run(self, ctx: ProbeContext) -> ProbeRun:
        """Run against ``ctx``; WebErrors are outcomes, anything else propagates."""
        try:
            outcomes = await self.runner(ctx)
        finally:
            await ctx.transport.aclose()
        return ProbeRun(tuple(outcomes), tuple(ctx.exchanges))


async def _guard(call: Awaitable[Any]) -> Outcome:
    try:
        result: Outcome = await call
    except WebError as error:
        return error
    return result


def _search_api(query_param: str = "query") -> Runner:
    async def run(ctx: ProbeContext) -> list[Outcome]:
        provider = DeepSeekSearchApi(lambda: ctx.settings(new_api=True), transport=ctx.transport, environ=ctx.environ)
        request = SearchRequest(ctx.params[query_param], int(ctx.params.get("max_results", SEARCH_MAX_RESULTS)))
        call = CallContext(latest_prompt=ctx.params.get("prompt"))
        return [await _guard(provider.search(request, call))]

    return run


async def _search_api_batch(ctx: ProbeContext) -> list[Outcome]:
    runtime = build_runtime(lambda: ctx.settings(new_api=True), transport=ctx.transport, environ=ctx.environ)
    queries = list(ctx.params["queries"])
    return [await runtime.search_tool().execute({"queries": queries}, CallContext(latest_prompt=ctx.params["prompt"]))]


async def _fetch_api(ctx: ProbeContext) -> list[Outcome]:
    provider = DeepSeekFetchApi(lambda: ctx.settings(new_api=True), transport=ctx.transport, environ=ctx.environ)
    return [await _guard(provider.fetch(FetchRequest(ctx.params["url"]), CallContext()))]


def _search_raw(payload: Mapping[str, Any], *, authorized: bool = True) -> Runner:
    """POST ``payload`` to ``{tools}/search`` as it stands, with the documented headers (the
    Authorization header only when ``authorized``): a request the reference provider never builds
    (it cuts ori_question to 128 code points, omits a blank one and always sends its credential),
    to see whether the service rejects it. The JSON is encoded as the provider encodes it."""

    async def run(ctx: ProbeContext) -> list[Outcome]:
        headers = {"Content-Type": "application/json"}
        if authorized:
            headers["Authorization"] = f"Bearer {ctx.api_key}"
        body = json.dumps(dict(payload), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        async with httpx.AsyncClient(transport=ctx.transport, timeout=ctx.timeout_s, follow_redirects=False) as client:
            request = client.build_request("POST", f"{ctx.tools_base}/search", content=body, headers=headers)
            for name in ("accept", "accept-encoding", "connection", "user-agent"):  # as the provider sends
                request.headers.pop(name, None)
            response = await client.send(request)
        if response.status_code != 200:
            message = envelope_message(response.content) or response.text[:200]
            return [WebError(WebErrorCode.PROVIDER_ERROR, f"HTTP {response.status_code}: {message}")]
        try:
            return [SearchResult(sources=map_results(json.loads(response.content)))]
        except (ValueError, RecursionError) as exc:
            return [WebError(WebErrorCode.PROVIDER_ERROR, f"unprocessable search answer: {exc}")]
        except WebError as error:
            return [error]

    return run


async def _messages(ctx: ProbeContext) -> list[Outcome]:
    provider = DeepSeekMessagesSearch(lambda: ctx.settings(new_api=False), transport=ctx.transport, environ=ctx.environ)
    request = SearchRequest(ctx.params["query"], SEARCH_MAX_RESULTS)
    return [await _guard(provider.search(request, CallContext(latest_prompt=ctx.params.get("prompt"))))]


def _responses_url(messages_base: str) -> str:
    """DeepSeek's layout (and the emulator's): Responses at ``/v1/responses`` on the Messages host."""
    return str(httpx.URL(messages_base).copy_with(raw_path=b"/v1/responses"))


async def _standalone_messages(ctx: ProbeContext) -> list[Outcome]:
    """Seed 003: the standalone tool over Messages; a tool error becomes the WebError it reports."""
    url = (ctx.messages_base or "") + "/messages"
    model = str(ctx.params["model"])
    return await _standalone(ctx, MessagesStandaloneSearch(url, model, KEY_ENV, transport=ctx.transport,
                                                           environ=ctx.environ))


async def _standalone_responses(ctx: ProbeContext) -> list[Outcome]:
    """Seed 003: the standalone tool over Responses, at ``/v1/responses`` on the Messages host."""
    url = _responses_url(ctx.messages_base or "")
    model = str(ctx.params["model"])
    return await _standalone(ctx, ResponsesStandaloneSearch(url, model, KEY_ENV, transport=ctx.transport,
                                                            environ=ctx.environ))


async def _standalone(ctx: ProbeContext, backend: StandaloneSearchBackend) -> list[Outcome]:
    result = await StandaloneSearchTool(backend, timeout_s=ctx.timeout_s).execute({"query": ctx.params["query"]})
    if result.error_code is not None:
        return [WebError(result.error_code, result.text.removeprefix("Error: "))]
    return [result]


def _bad_key(runner: Runner) -> Runner:
    async def run(ctx: ProbeContext) -> list[Outcome]:
        # A syntactically plausible key no service issues (not credential-shaped: no sk- prefix).
        wrong = replace(ctx, api_key="dsweb-probe-invalid-key")  # the same exchanges list
        try:
            return await runner(wrong)
        finally:
            await wrong.transport.aclose()

    return run


_OK = frozenset({200})
_ACCOUNT: Mapping[str, Any] = {"credentials.auth": "account"}
_RETRY: Mapping[str, Any] = {"deepseek_api.retries": 2}
_LONG_PROMPT = "  東京タワーの高さは？\n\n  What is the height of Tokyo Tower,   and when was it built?  " + (
    "もっと詳しく教えてください。" * 12
)

_ASTRAL = "\U00020000"  # CJK Extension B: one code point, 4 UTF-8 bytes, 2 UTF-16 units
_WIDE_QUERY = "東京" * 32 + _ASTRAL * 64  # 128 code points; 448 UTF-8 bytes; 192 UTF-16 units

_STANDALONE_PARAMS: Mapping[str, Any] = {"query": "search api rate limits", "model": "deepseek-v4-flash"}
_MEMORY = "From memory: https://guess.example.test/"

# Seed 003's probes, one row each: id (protocol.name), what it shows, the statuses it expects, the
# emulator fault it needs. Every one asks the same question of the same model; the order is the
# recording order (a fault's trap numbering follows it).
_STANDALONE: tuple[tuple[str, str, frozenset[int], Callable[[Emulator], Fault] | None], ...] = (
    ("standalone-messages.search",
     "one standalone request (query + web_search_20250305, max_tokens 8192) -> bounded JSON with sources",
     _OK, None),
    ("standalone-messages.prose-only",
     "prose without a completed native search is a tool error (emulator fault)",
     _OK, lambda emu: ProseOnly(_MEMORY)),
    ("standalone-messages.no-sources",
     "a completed search without structured sources gives sources [] (emulator fault)",
     _OK, lambda emu: NoSources()),
    ("standalone-messages.huge-summary",
     "a 60 000-character answer is cut to the 24 000-byte result with truncated set (emulator fault)",
     _OK, lambda emu: HugeSummary(60_000)),
    ("standalone-messages.redirect",
     "a 307 from the search backend is an error and is not followed (emulator fault)",
     frozenset({307}), lambda emu: Redirect(307)),
    ("standalone-responses.search",
     "one stateless Responses request (query + web_search, max_output_tokens 8192) -> sources from url_citation",
     _OK, None),
    ("standalone-responses.prose-only",
     "a message without a completed web_search_call is a tool error (emulator fault)",
     _OK, lambda emu: ProseOnly(_MEMORY)),
    ("standalone-responses.no-sources",
     "a completed web_search_call without sources or citations gives sources [] (emulator fault)",
     _OK, lambda emu: NoSources()),
    ("standalone-responses.failed-search",
     "a failed web_search_call is a tool error (emulator fault)",
     _OK, lambda emu: ToolError("unavailable")),
)


def _standalone_probe(
    probe_id: str, description: str, status: frozenset[int], fault: Callable[[Emulator], Fault] | None
) -> Probe:
    runner = _standalone_responses if probe_id.startswith("standalone-responses.") else _standalone_messages
    return Probe(probe_id, description, "messages", status, runner, _STANDALONE_PARAMS, fault=fault)


# A validation rejection of the Search API: 400, or 422 ("invalid parameters"); seed 001 says only
# that such values are rejected, so ``dsweb record`` keeps either as the probe's expected answer.
_VALIDATION = frozenset({400, 422})


PROBES: tuple[Probe, ...] = (
    # --- Search API ---------------------------------------------------------------------------
    Probe(
        "search-api.basic",
        "one query, default cap 8: results mapped in service order with metadata kept",
        "search",
        _OK,
        _search_api(),
        {"query": "search api rate limits", "prompt": "How do the search API limits work?"},
    ),
    Probe(
        "search-api.operators",
        "site:, lang:, after:, -term and an exact phrase pass through unchanged",
        "search",
        _OK,
        _search_api(),
        {"query": 'site:docs.example.test lang:en after:2026-01-01 "search api" -legacy', "prompt": "operators"},
    ),
    Probe(
        "search-api.ori-question-none",
        "no latest prompt: ori_question is omitted",
        "search",
        _OK,
        _search_api(),
        {"query": "httpx timeouts"},
    ),
    Probe(
        "search-api.ori-question-collapsed",
        "a prompt with runs of whitespace and newlines is sent collapsed",
        "search",
        _OK,
        _search_api(),
        {"query": "asyncio cancellation", "prompt": "  How does\n\n asyncio    cancellation\twork?  "},
    ),
    Probe(
        "search-api.ori-question-cut",
        "a long non-ASCII prompt is collapsed and cut to 128 code points",
        "search",
        _OK,
        _search_api(),
        {"query": "東京タワー", "prompt": _LONG_PROMPT},
    ),
    Probe(
        "search-api.count-lowered",
        "a result bound of 3 lowers count below the configured 10",
        "search",
        _OK,
        _search_api(),
        {"query": "search api", "max_results": 3, "prompt": "search api"},
    ),
    Probe(
        "search-api.empty",
        "a query that matches nothing: HTTP 200 with results [] is a success",
        "search",
        _OK,
        _search_api(),
        {"query": "the and of", "prompt": "nothing"},
    ),
    Probe(
        "search-api.too-long",
        "a 129-character query is rejected with HTTP 400 or 422, not truncated",
        "search",
        _VALIDATION,
        _search_api(),
        {"query": "q" * 129, "prompt": "too long"},
    ),
    Probe(
        "search-api.auth-invalid",
        "a wrong API key is rejected with HTTP 401",
        "search",
        frozenset({401}),
        _bad_key(_search_api()),
        {"query": "search api", "prompt": "auth"},
    ),
    Probe(
        "search-api.batch",
        "two queries through web_search start concurrently; each gets its own answer",
        "search",
        _OK,
        _search_api_batch,
        {"queries": ["rust async runtimes", "coffee brewing ratios"], "prompt": "two topics"},
    ),
    Probe(
        "search-api.rate-limited",
        "HTTP 429 with Retry-After: 7 (emulator fault)",
        "search",
        frozenset({429}),
        _search_api(),
        {"query": "rate limits", "prompt": "rate"},
        fault=lambda emu: RateLimited(retry_after=7),
    ),
    Probe(
        "search-api.malformed",
        "HTTP 200 with a truncated JSON body (emulator fault)",
        "search",
        _OK,
        _search_api(),
        {"query": "malformed", "prompt": "malformed"},
        fault=lambda emu: Malformed(),
    ),
    Probe(
        "search-api.redirect",
        "HTTP 302 to another URL: refused, never followed (emulator fault)",
        "search",
        frozenset({302}),
        _search_api(),
        {"query": "redirect", "prompt": "redirect"},
        fault=lambda emu: Redirect(location=emu.trap_url("search-redirect")),
    ),
    Probe(
        "search-api.server-error",
        "HTTP 503 with the platform error envelope (emulator fault)",
        "search",
        frozenset({503}),
        _search_api(),
        {"query": "overloaded", "prompt": "overloaded"},
        fault=lambda emu: Status(503, "Server overloaded, please try again later"),
    ),
    Probe(
        "search-api.insufficient-balance",
        "HTTP 402 Insufficient Balance in the OpenAI-style error envelope (emulator fault)",
        "search",
        frozenset({402}),
        _search_api(),
        {"query": "balance", "prompt": "balance"},
        fault=lambda emu: Status(402),
    ),
    Probe(
        "search-api.account-token",
        "credentials.auth = account: the account token, not the API key, is the Bearer credential",
        "search",
        _OK,
        _search_api(),
        {"query": "search api rate limits", "prompt": "account route"},
        settings=_ACCOUNT,
    ),
    Probe(
        "search-api.ori-question-off",
        "send_original_question = false: ori_question is omitted although there is a prompt",
        "search",
        _OK,
        _search_api(),
        {"query": "httpx timeouts", "prompt": "How do httpx timeouts work?"},
        settings={"deepseek_api.send_original_question": False},
    ),
    # Retry sequences (deepseek_api.retries on): what the one retrying layer sends and waits.
    Probe(
        "search-api.retry-after-then-success",
        "retries on: HTTP 429 with Retry-After: 1, a 1 s wait, then the retry succeeds (emulator fault)",
        "search",
        frozenset({429, 200}),
        _search_api(),
        {"query": "rate limits", "prompt": "rate"},
        fault=lambda emu: RateLimited(retry_after=1),
        settings=_RETRY,
    ),
    Probe(
        "search-api.backoff-then-success",
        "retries on: HTTP 429 without Retry-After, a jittered backoff, then the retry succeeds (emulator fault)",
        "search",
        frozenset({429, 200}),
        _search_api(),
        {"query": "rate limits", "prompt": "rate"},
        fault=lambda emu: RateLimited(retry_after=None),
        settings=_RETRY,
    ),
    Probe(
        "search-api.server-error-then-success",
        "retries on: HTTP 503, a jittered backoff, then the retry succeeds (emulator fault)",
        "search",
        frozenset({503, 200}),
        _search_api(),
        {"query": "overloaded", "prompt": "overloaded"},
        fault=lambda emu: Status(503, "Server overloaded, please try again later"),
        settings=_RETRY,
    ),
    Probe(
        "search-api.insufficient-balance-not-retried",
        "retries on: HTTP 402 is still answered after one request (funding first, never retried; emulator fault)",
        "search",
        frozenset({402}),
        _search_api(),
        {"query": "balance", "prompt": "balance"},
        fault=lambda emu: Status(402),
        settings=_RETRY,
    ),
    # --- Fetch API ----------------------------------------------------------------------------
    Probe(
        "fetch-api.success",
        "a fetchable page: Markdown body and title, requested URL kept, HTTP 200 reported",
        "fetch",
        _OK,
        _fetch_api,
        {"url": "https://docs.example.test/api/fetch"},
    ),
    Probe(
        "fetch-api.bad-url",
        "a non-http(s) URL is rejected with HTTP 400",
        "fetch",
        frozenset({400}),
        _fetch_api,
        {"url": "ftp://files.example.test/notes.txt"},
    ),
    Probe(
        "fetch-api.forbidden",
        "a page refused by the site's crawler policy: HTTP 403",
        "fetch",
        frozenset({403}),
        _fetch_api,
        {"url": "https://paywall.example.test/reports/search-market-2026"},
    ),
    Probe(
        "fetch-api.not-found",
        "a page with no usable content: HTTP 404 failed to fetch URL",
        "fetch",
        frozenset({404}),
        _fetch_api,
        {"url": "https://docs.example.test/no/such/page"},
    ),
    Probe(
        "fetch-api.server-error",
        "an unresolvable host: HTTP 500",
        "fetch",
        frozenset({500}),
        _fetch_api,
        {"url": "https://unknown-host.invalid/"},
    ),
    Probe(
        "fetch-api.auth-invalid",
        "a wrong API key is rejected with HTTP 401",
        "fetch",
        frozenset({401}),
        _bad_key(_fetch_api),
        {"url": "https://docs.example.test/api/fetch"},
    ),
    Probe(
        "fetch-api.rate-limited",
        "HTTP 429 with Retry-After: 3 (emulator fault)",
        "fetch",
        frozenset({429}),
        _fetch_api,
        {"url": "https://docs.example.test/api/fetch"},
        fault=lambda emu: RateLimited(retry_after=3),
    ),
    Probe(
        "fetch-api.redirect",
        "HTTP 302 to another URL: refused, never followed (emulator fault)",
        "fetch",
        frozenset({302}),
        _fetch_api,
        {"url": "https://docs.example.test/api/fetch"},
        fault=lambda emu: Redirect(location=emu.trap_url("fetch-redirect")),
    ),
    Probe(
        "fetch-api.wrong-shape",
        "HTTP 200 with JSON whose content is a number, not Markdown text (emulator fault)",
        "fetch",
        _OK,
        _fetch_api,
        {"url": "https://docs.example.test/api/fetch"},
        fault=lambda emu: Malformed(body=b'{"title":"Fetch API reference","content":42}'),
    ),
    Probe(
        "fetch-api.insufficient-balance",
        "HTTP 402 Insufficient Balance in the OpenAI-style error envelope (emulator fault)",
        "fetch",
        frozenset({402}),
        _fetch_api,
        {"url": "https://docs.example.test/api/fetch"},
        fault=lambda emu: Status(402),
    ),
    Probe(
        "fetch-api.retry-after-then-success",
        "retries on: HTTP 429 with Retry-After: 1, a 1 s wait, then the retry fetches the page (emulator fault)",
        "fetch",
        frozenset({429, 200}),
        _fetch_api,
        {"url": "https://docs.example.test/api/fetch"},
        fault=lambda emu: RateLimited(retry_after=1),
        settings=_RETRY,
    ),
    # --- Messages -----------------------------------------------------------------------------
    Probe(
        "messages.search",
        "web_search server tool: web_search_tool_result sources, citation snippets, thinking disabled",
        "messages",
        _OK,
        _messages,
        {"query": "search api rate limits"},
    ),
    Probe(
        "messages.prose-only",
        "an answer without web_search_tool_result blocks fails strictly (emulator fault)",
        "messages",
        _OK,
        _messages,
        {"query": "prose only"},
        fault=lambda emu: ProseOnly("Search results are not available, but here is what I know."),
    ),
    Probe(
        "messages.tool-error",
        "an in-band web_search_tool_result_error (max_uses_exceeded) (emulator fault)",
        "messages",
        _OK,
        _messages,
        {"query": "tool error"},
        fault=lambda emu: ToolError("max_uses_exceeded"),
    ),
    Probe(
        "messages.http-error",
        "HTTP 500 with the OpenAI-style error envelope (emulator fault)",
        "messages",
        frozenset({500}),
        _messages,
        {"query": "server error"},
        fault=lambda emu: Status(500, "Internal server error"),
    ),
    Probe(
        "messages.redirect",
        "HTTP 307 to another URL: refused, never followed (emulator fault)",
        "messages",
        frozenset({307}),
        _messages,
        {"query": "redirect"},
        fault=lambda emu: Redirect(status=307, location=emu.trap_url("messages-redirect")),
    ),
    Probe(
        "messages.auth-invalid",
        "a wrong API key is rejected with HTTP 401",
        "messages",
        frozenset({401}),
        _bad_key(_messages),
        {"query": "search api"},
    ),
    Probe(
        "messages.malformed",
        "HTTP 200 with a truncated, non-JSON body (emulator fault)",
        "messages",
        _OK,
        _messages,
        {"query": "malformed"},
        fault=lambda emu: Malformed(body=b'{"id":"msg_dsweb_malformed","type":"message","content":[{"type":"text",'),
    ),
    Probe(
        "messages.wrong-shape",
        "HTTP 200 with JSON whose content is a string, not a block list (emulator fault)",
        "messages",
        _OK,
        _messages,
        {"query": "wrong shape"},
        fault=lambda emu: Malformed(
            body=b'{"id":"msg_dsweb_wrong_shape","type":"message","role":"assistant","content":"no blocks here"}'
        ),
    ),
    Probe(
        "messages.account-token",
        "credentials.auth = account: the account token, not the API key, is the Bearer and x-api-key credential",
        "messages",
        _OK,
        _messages,
        {"query": "search api rate limits"},
        settings=_ACCOUNT,
    ),
    *(_standalone_probe(*row) for row in _STANDALONE),
    # --- Search API: the service's own limits (last, so the emulator's trap numbering above stays put)
    # Probes of the service's own limits (seed 001): the query is 1-128 Unicode characters (code
    # points, not UTF-8 bytes or UTF-16 units); ori_question is limited to 128 characters, in a unit
    # the seed leaves open (no probe sends one past 128 UTF-16 units); blank or longer values are
    # rejected, count runs from 1 to 50, and every request needs the key.
    Probe(
        "search-api.query-characters",
        "a 128-character query of CJK and astral-plane characters (448 UTF-8 bytes, 192 UTF-16 units) is accepted",
        "search",
        _OK,
        _search_api(),
        {"query": _WIDE_QUERY, "prompt": "characters"},
    ),
    Probe(
        "search-api.query-empty",
        "an empty query is rejected with HTTP 400 or 422",
        "search",
        _VALIDATION,
        _search_api(),
        {"query": "", "prompt": "empty query"},
    ),
    Probe(
        "search-api.ori-question-too-long",
        "a 129-character ori_question (sent raw; the provider never sends one) is rejected with HTTP 400 or 422",
        "search",
        _VALIDATION,
        _search_raw({"query": "search api", "count": 8, "need_content": False, "ori_question": "é" * 129}),
    ),
    Probe(
        "search-api.ori-question-blank",
        "a blank ori_question (sent raw; the provider omits it) is rejected with HTTP 400 or 422",
        "search",
        _VALIDATION,
        _search_raw({"query": "search api", "count": 8, "need_content": False, "ori_question": "   "}),
    ),
    Probe(
        "search-api.count-max",
        "count = 50 (the configured maximum, with a result bound of 50) is accepted",
        "search",
        _OK,
        _search_api(),
        {"query": "search api", "max_results": 50, "prompt": "search api"},
        settings={"deepseek_api.count": 50},
    ),
    Probe(
        "search-api.auth-missing",
        "a request without any Authorization header (sent raw) is rejected with HTTP 401 or 403",
        "search",
        frozenset({401, 403}),
        _search_raw({"query": "search api", "count": 8, "need_content": False}, authorized=False),
    ),
)

_BY_ID = {probe.id: probe for probe in PROBES}


def get_probe(probe_id: str) -> Probe:
    try:
        return _BY_ID[probe_id]
    except KeyError:
        raise KeyError(f"unknown probe {probe_id!r}; known: {', '.join(_BY_ID)}") from None
