"""Small helpers the DeepSeek providers share: credential lookup, base-URL checks, one
POST that never follows a redirect, reads a bounded body and keeps one overall deadline,
strict JSON parsing, error-detail extraction and credential scrubbing.

Endpoints, headers, status mapping and body mapping stay in each provider module
(seed 001: the Messages and Search/Fetch API providers keep their own transports),
so either side can change or be retired without the other.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Self

import httpx

from .._context import CallContext, OutgoingRequest
from .._exceptions import WebError, WebErrorCode
from .._secrets import scrub_text
from ..netguard.body import read_capped
from ..settings import CredentialSettings, Settings
from ._client_pool import ClientKey, ClientPool, new_client
from ._scheduler import scheduled, wire_hook

__all__ = [
    "CREDENTIAL_PLACEHOLDER",
    "MAX_RESPONSE_BYTES",
    "Reply",
    "SettingsBoundProvider",
    "api_status_error",
    "call_tools_api",
    "encode_json",
    "error_detail",
    "parse_json",
    "post",
    "resolve_credential",
    "retry_after",
    "scrub_prefix",
    "scrub_secrets",
    "too_many_values",
    "unprocessable",
    "usable_base_url",
]

# Far above any real Search/Fetch/Messages reply; stops a misbehaving server from exhausting memory.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
_TOKEN = re.compile(r"[\x21-\x7e]+")
# httpx adds these on its own; the providers send only the headers they list.
_HTTPX_DEFAULTS = ("accept", "accept-encoding", "connection", "user-agent")
# RFC 9110 field-name token, and a field value of printable ASCII (no CR, LF or other controls).
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HEADER_VALUE = re.compile(r"[\x20-\x7e]*")

CREDENTIAL_PLACEHOLDER = "<credential>"


def scrub_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every given secret value, raw or encoded (base64 in either alphabet with or
    without padding, %XX, hex, HTML entities, escapes, any case, reversed), every 10-character piece
    of one in the same forms, and anything credential-shaped (``sk-...`` keys, ``Bearer <token>``,
    JWTs, ...) replaced by ``<credential>``: the scrubber reports use
    (:func:`dsweb_ref._secrets.scrub_text`). Run on provider text before it can reach a message: an
    error body may echo the key it rejected, or a part of it."""
    return scrub_text(text, secrets, CREDENTIAL_PLACEHOLDER)


# A quoted provider text is cut to this window before it is scrubbed: what a message shows is far
# shorter, and scrubbing (linear, but still per character) must not scale with a 32 MiB body. The
# margin past the shown part lets a credential that starts inside it still be seen whole.
_SCRUB_MARGIN = 4096
# The most characters one byte of a secret takes in an encoded form the scrubber reads (HTML references
# padded with zeros, "&#0100;", take seven; percent-encoding twice, "%2564", five).
_ENCODED_PER_BYTE = 10


def scrub_prefix(text: str, shown: int, secrets: Iterable[str] = ()) -> str:
    """The start of ``text`` a message may quote (at most ``shown`` characters of it, cut by the
    caller), whitespace collapsed and scrubbed as :func:`scrub_secrets` does. Only the first
    ``shown`` + 4096 characters are read; a longer text ends in "..." so a cut still shows.

    When the text goes on past that cut, the window loses its last characters, as many as the longest
    encoded form of a secret could take: the cut may have split a secret, which the scrubber cannot
    recognise in part, and collapsing a long run of whitespace before it would bring that piece into
    what is shown (4,580 spaces and then the key showed 16 of its characters). A cut between two words
    may split one too: a form of a secret can hold whitespace (a C byte array of it, "0x64, 0x73, ...",
    after 4,537 spaces showed its first ten bytes when only a cut inside a word was trimmed)."""
    hidden = tuple(secrets)
    limit = shown + _SCRUB_MARGIN
    head = text[:limit]
    window = scrub_secrets(" ".join(head.split()), hidden)
    if len(text) <= limit:
        return window
    longest = max((len(s.encode()) for s in hidden), default=0)
    window = window[: max(0, len(window) - _ENCODED_PER_BYTE * longest)]
    return window + "..."



def resolve_credential(creds: CredentialSettings, environ: Mapping[str, str], label: str) -> str:
    """The credential for the snapshot's route. Messages name the variable, never the value."""
    name = creds.env_name
    kind = "account token" if creds.auth == "account" else "API key"
    value = (environ.get(name) or "").strip()
    if not value:
        raise WebError(
            WebErrorCode.PROVIDER_CREDENTIAL_MISSING,
            f'{label} has no {kind}: environment variable "{name}" is unset or empty '
            f'(credentials.auth is "{creds.auth}")',
        )
    if not _TOKEN.fullmatch(value):
        raise WebError(
            WebErrorCode.PROVIDER_CREDENTIAL_MISSING,
            f'{label} cannot use the {kind} in environment variable "{name}": '
            "it contains spaces, control or non-ASCII characters",
        )
    return value


def usable_base_url(base: str) -> str | None:
    """``base`` without a trailing slash if it is an absolute http(s) URL with a host and
    nothing after the path; otherwise None (the provider is unavailable)."""
    text = base.strip() if isinstance(base, str) else ""
    if not text or any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        return None
    try:
        url = httpx.URL(text)
    except (httpx.InvalidURL, TypeError, ValueError):
        return None
    if url.scheme not in ("http", "https") or not url.host or url.userinfo or url.query or url.fragment:
        return None
    if "?" in text or "#" in text:
        return None
    return text.rstrip("/")


def encode_json(value: object) -> bytes:
    # Compact, insertion-ordered, non-ASCII kept as UTF-8: the recorded bytes are the sent bytes.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _reject_constant(name: str) -> object:
    raise ValueError(f"non-finite number {name} is not allowed")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:24]} is out of range")
    return value


# Far above any real reply (the Search API returns at most 50 results of a dozen fields). A small
# body can hold millions of tiny values ("[{},{},...]": 3 bytes each, ~60 bytes each once parsed),
# so the count, not the byte cap, bounds what parsing allocates (issue 14 item 4).
MAX_JSON_VALUES = 200_000
# A string token, or a character that opens a value or separates two (outside strings). An
# unterminated string runs to the end, so no quote of a hostile body is scanned twice.
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]++|\\[\s\S]?)*+(?:"|\Z)|[\[{,]')


def _too_many_values(body: bytes, limit: int) -> bool:
    # Values <= 2 * containers + commas + 1. Counting the bytes anywhere is a cheap upper bound;
    # only when it is over the limit are strings skipped (a page of code in a string is not values).
    if body.count(b"[") + body.count(b"{") + body.count(b",") <= limit // 2:
        return False
    count = 0
    for match in _JSON_TOKEN.finditer(body):
        if match.group()[:1] != b'"':
            count += 1
            if count > limit // 2:
                return True
    return False


too_many_values = _too_many_values  # for the suite's reading of adapter lines: the same bound, the same count


def _replace_surrogates(value: object) -> object:
    """``value`` with every lone surrogate (a ``\\ud800`` escape is valid JSON, but not Unicode)
    replaced by U+FFFD in every string and key. The containers are the decoder's own, so they are mended in
    place, without recursion: a body the decoder read is never refused for its depth here."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for i, item in enumerate(node):
                node[i] = _SURROGATE.sub("\ufffd", item) if isinstance(item, str) else item
            stack.extend(item for item in node if isinstance(item, list | dict))
        elif isinstance(node, dict):
            pairs = list(node.items())
            node.clear()
            for key, item in pairs:
                node[_SURROGATE.sub("\ufffd", key)] = _SURROGATE.sub("\ufffd", item) if isinstance(item, str) else item
            stack.extend(item for item in node.values() if isinstance(item, list | dict))
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def parse_json(body: bytes, *, max_values: int | None = None) -> object:
    """Decoded strict JSON or raises ValueError (also for bad UTF-8, absurd nesting, more than
    ``max_values`` (default :data:`MAX_JSON_VALUES`) values, and the non-standard
    NaN/Infinity/-Infinity or numbers too large for a finite float: a value taken from the body
    must stay serialisable as JSON).

    A lone surrogate escape becomes U+FFFD, as an undecodable byte would: every string handed on
    is valid Unicode (it can be encoded as UTF-8), and one bad character does not cost the reply."""
    limit = MAX_JSON_VALUES if max_values is None else max_values
    if _too_many_values(body, limit):
        raise ValueError(f"JSON holds more than {limit} values")
    try:
        value = json.loads(body.decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    return _replace_surrogates(value) if _SURROGATE_ESCAPE.search(body) else value


def error_detail(body: bytes, secrets: Iterable[str] = ()) -> str | None:
    """The provider's own message from an error body: ``{"error": "..."}``, else
    ``{"error": {"message": ...}}`` and, only when that is absent or null, ``{"message": ...}``
    (null-coalescing, as upstream). Whitespace is collapsed, ``secrets`` and credential-shaped
    text are replaced by ``<credential>``, and the text is capped at 500 characters."""
    try:
        data = parse_json(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    detail: object
    if isinstance(error, str):
        detail = error
    else:
        inner = error.get("message") if isinstance(error, dict) else None
        detail = inner if inner is not None else data.get("message")
    if not isinstance(detail, str):
        return None
    text = scrub_prefix(detail, 500, secrets)
    return (text[:497] + "...") if len(text) > 500 else (text or None)


def retry_after(headers: httpx.Headers) -> str | None:
    """A readable Retry-After hint (seconds or an HTTP date), or None."""
    value = headers.get("retry-after", "").strip()
    if re.fullmatch(r"\d{1,9}", value):
        return f"retry after {int(value)} seconds"
    if value and len(value) <= 64 and re.fullmatch(r"[A-Za-z0-9 ,:+-]+", value):
        return f"retry after {value}"
    return None


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: httpx.Headers
    body: bytes


async def post(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    label: str,
    timeout_s: float,
    transport: httpx.AsyncBaseTransport | None = None,
    client: httpx.AsyncClient | None = None,
    secrets: Iterable[str] = (),
) -> Reply:
    """POST ``body`` with exactly ``headers`` (plus Host and Content-Length). A 3xx fails
    before its Location is touched; transport failures become WEB_PROVIDER_ERROR.

    ``timeout_s`` is one deadline for the whole exchange (connect, send, and reading the full
    body), not a per-read limit: a server that trickles bytes cannot stretch a call past it.
    Its expiry is WEB_PROVIDER_ERROR; a caller's own cancellation or deadline propagates
    unchanged (CancelledError, or the caller's TimeoutError). Either way the response is closed
    unread, so its connection is closed rather than returned to a pool. ``client`` is a pooled
    client (:mod:`._client_pool`); without one, a client over ``transport`` lives for this call
    only. ``secrets`` never appear in an error message."""
    hidden = tuple(secrets)
    for name, value in headers.items():
        if not _HEADER_NAME.fullmatch(name) or not _HEADER_VALUE.fullmatch(value):
            # Never show the value: it may be a credential.
            shown = name if _HEADER_NAME.fullmatch(name) else "with an invalid name"
            raise WebError(
                WebErrorCode.CONFIG_INVALID,
                f"{label} request header {shown} holds characters that cannot be sent in an HTTP header "
                "(control, line-break or non-ASCII); check the settings",
            )
    async with _client_for_call(client, transport, timeout_s) as client:
        try:
            request = client.build_request("POST", url, content=body, headers=dict(headers))
        except httpx.InvalidURL as exc:
            raise WebError(WebErrorCode.CONFIG_INVALID, f"{label} endpoint is not a usable URL", cause=exc) from exc
        except ValueError as exc:  # UnicodeEncodeError included: a header httpx cannot encode
            raise WebError(
                WebErrorCode.CONFIG_INVALID,
                f"{label} request cannot be built from the settings ({type(exc).__name__}); check the settings",
                cause=exc,
            ) from exc
        sent = {name.lower() for name in headers}
        for name in _HTTPX_DEFAULTS:
            if name not in sent:
                request.headers.pop(name, None)
        _report_wire_start(request)
        deadline = asyncio.timeout(timeout_s)
        try:
            async with deadline:
                status, reply_headers, data = await _exchange(client, request, label, hidden)
        except TimeoutError as exc:
            if not deadline.expired():
                raise  # not ours (our expiry is the only TimeoutError this block produces)
            raise WebError(
                WebErrorCode.PROVIDER_ERROR, f"{label} request timed out after {timeout_s:g} s", cause=exc
            ) from exc
    return Reply(status, reply_headers, data)


def _report_wire_start(request: httpx.Request) -> None:
    """A paced send learns when its request starts going out (httpcore's trace hook), so the pacer
    spaces what the server sees, not when each call was let go (see ``_scheduler``)."""
    on_wire = wire_hook()
    if on_wire is None:
        return

    async def trace(event: str, info: object) -> None:
        if event == "http11.send_request_headers.started":
            on_wire()

    request.extensions["trace"] = trace


@asynccontextmanager
async def _client_for_call(
    client: httpx.AsyncClient | None, transport: httpx.AsyncBaseTransport | None, timeout_s: float
) -> AsyncIterator[httpx.AsyncClient]:
    if client is not None:
        yield client
        return
    async with new_client(transport, timeout_s) as own:
        yield own


async def _exchange(
    client: httpx.AsyncClient, request: httpx.Request, label: str, hidden: tuple[str, ...]
) -> tuple[int, httpx.Headers, bytes]:
    try:
        response = await client.send(request, stream=True, follow_redirects=False)
        try:
            if 300 <= response.status_code < 400:
                raise WebError(
                    WebErrorCode.PROVIDER_ERROR,
                    f"{label} request was redirected (HTTP {response.status_code}); redirects are not followed",
                )
            data = await _read_body(response, label)
        finally:
            await response.aclose()
    except httpx.TimeoutException as exc:
        raise WebError(
            WebErrorCode.PROVIDER_ERROR, f"{label} request timed out ({type(exc).__name__})", cause=exc
        ) from exc
    except (httpx.HTTPError, OSError) as exc:
        text = scrub_prefix(f"{type(exc).__name__}: {exc}", 500, hidden)  # may quote what the server sent
        text = (text[:497] + "...") if len(text) > 500 else text
        raise WebError(WebErrorCode.PROVIDER_ERROR, f"{label} request failed: {text}", cause=exc) from exc
    return response.status_code, response.headers, data


async def _read_body(response: httpx.Response, label: str) -> bytes:
    # Raw bytes, inflated step by step with a bounded output per step (netguard's reader): the cap
    # trips before memory grows. httpx's aiter_bytes() inflated whole chunks per coding layer, so a
    # 3 KB "gzip, gzip" body grew to gigabytes before the cap was checked (issue 14 item 3).
    try:
        if response.is_stream_consumed:  # an in-process transport handed over a body it had read
            data, cut = response.content[: MAX_RESPONSE_BYTES + 1], len(response.content) > MAX_RESPONSE_BYTES
        else:
            encoding = response.headers.get("content-encoding")
            data, cut = await read_capped(response.aiter_raw(), MAX_RESPONSE_BYTES, encoding)
    except WebError as exc:  # an encoding we do not decode, or a body that does not inflate
        raise WebError(WebErrorCode.PROVIDER_ERROR, f"{label} response body cannot be read: {exc.message}") from exc
    if cut:
        raise WebError(WebErrorCode.PROVIDER_ERROR, f"{label} response exceeds {MAX_RESPONSE_BYTES} bytes")
    return data


class SettingsBoundProvider:
    """What every DeepSeek provider does the same way: hold the settings source, read the
    snapshot's base for its section, and resolve the credential from the same snapshot.

    ``settings`` is called exactly once per operation (the subclass takes the snapshot at
    entry); the credential is read from ``environ`` (default: the live ``os.environ``).

    HTTP clients are pooled per snapshot endpoint, credential and timeout (:mod:`._client_pool`);
    ``await provider.aclose()`` or ``async with provider:`` closes them, and the end of the
    event loop that opened them closes them too.
    """

    provider_id: str
    section: str  # "deepseek_messages" or "deepseek_api": whose base_url this provider uses
    label: str  # how error messages name the provider

    def __init__(
        self,
        settings: Callable[[], Settings] = Settings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._settings = settings
        self._transport = transport
        self._environ = environ
        self._clients = ClientPool(transport)

    @property
    def id(self) -> str:
        return self.provider_id

    def available(self) -> bool:
        return usable_base_url(getattr(self._settings(), self.section).base_url) is not None

    def _base(self, snapshot: Settings) -> str:
        base = usable_base_url(getattr(snapshot, self.section).base_url)
        if base is None:
            raise WebError(WebErrorCode.CONFIG_INVALID, f"{self.section}.base_url is blank or not an http(s) URL")
        return base

    def _credential(self, snapshot: Settings) -> str:
        environ = os.environ if self._environ is None else self._environ
        return resolve_credential(snapshot.credentials, environ, self.label)

    async def _post(
        self,
        base: str,
        key: str,
        timeout_s: float,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        *,
        remaining_s: float | None = None,
    ) -> Reply:
        """:func:`post` on the pooled client of this (base, key, timeout): one snapshot's values, so
        an endpoint is never paired with another snapshot's key. ``remaining_s`` (default
        ``timeout_s``) is this exchange's deadline when a retrying operation has used part of its own;
        the pool key keeps the configured timeout, so a retry reuses the same client."""
        deadline = timeout_s if remaining_s is None else remaining_s
        async with self._clients.lease(ClientKey(base, key, timeout_s)) as client:
            return await post(url, body, headers, label=self.label, timeout_s=deadline, client=client, secrets=(key,))

    async def aclose(self) -> None:
        """Close this provider's HTTP clients on the running event loop."""
        await self._clients.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def call_tools_api(
    provider: SettingsBoundProvider,
    snapshot: Settings,
    ctx: CallContext,
    route: str,
    payload: dict[str, Any],
    *,
    statuses: Mapping[int, tuple[str, str]],
    other: str = "error",
    bad_text: tuple[str, str],
) -> object:
    """One Search/Fetch API exchange: encode, record before dispatch, POST with only the documented
    headers, map a non-success status, return the parsed JSON body (or raise "unprocessable").

    ``bad_text`` is the (code, message) for a payload that cannot be encoded as UTF-8.
    """
    conf = snapshot.deepseek_api
    key = provider._credential(snapshot)
    base = provider._base(snapshot)
    url = f"{base}/{route}"
    try:
        body = encode_json(payload)
    except UnicodeEncodeError as exc:
        raise WebError(bad_text[0], bad_text[1], cause=exc) from exc
    # Recorded before dispatch; a recorder failure propagates and nothing is sent.
    ctx.record(OutgoingRequest(provider=provider.provider_id, method="POST", url=url, body=body, json=payload))
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    async def send(remaining_s: float) -> Reply:
        return await provider._post(base, key, conf.timeout_s, url, body, headers, remaining_s=remaining_s)

    # The one layer that paces and retries (off by default: one send, seed 001's fail-fast).
    reply = await scheduled(provider, conf, route, (base, key), send, provider.label)
    if not 200 <= reply.status < 300:
        raise api_status_error(
            provider.label, reply, snapshot.credentials.env_name, statuses, other=other, secrets=(key,)
        )
    try:
        return parse_json(reply.body)
    except ValueError as exc:
        raise unprocessable(provider.label, f"not JSON ({exc})") from exc


def unprocessable(label: str, why: str) -> WebError:
    return WebError(WebErrorCode.PROVIDER_ERROR, f"{label} returned an unprocessable response body: {why}")


def api_status_error(
    label: str,
    reply: Reply,
    credential_env: str,
    own: Mapping[int, tuple[str, str]],
    other: str = "error",
    *,
    secrets: Iterable[str] = (),
) -> WebError:
    """A non-success Search/Fetch API reply as a coded error that tells the status classes apart.

    ``own`` holds the statuses whose meaning differs per route (400, 403, 404, ...); the
    account-level ones (401, 402, 429, 5xx) read the same on both routes. Provider text
    (the error detail, a Retry-After hint) is scrubbed of ``secrets`` and credential-shaped text.
    """
    status = reply.status
    if status in own:
        lead, hint = own[status]
    elif status == 401:
        lead, hint = "authentication failed", f'check the credential in "{credential_env}"'
    elif status == 402:
        lead, hint = "reports insufficient balance", "top up the DeepSeek account before retrying"
    elif status == 429:
        lead, hint = "rate limit reached", retry_after(reply.headers) or "wait before retrying"
    elif status >= 500:
        lead, hint = "service error", own.get(500, ("", "retry later"))[1]
    else:
        lead, hint = other, ""
    hidden = tuple(secrets)
    detail = error_detail(reply.body, hidden)
    text = f"{label} {lead} (HTTP {status})" + (f": {detail}" if detail else "") + (f"; {hint}" if hint else "")
    return WebError(WebErrorCode.PROVIDER_ERROR, scrub_secrets(text, hidden))
