"""The local HTTP fetch provider (``http``): fetch one public URL within fixed limits.

Safety comes from ``dsweb_ref.netguard``: URLs are checked before any I/O, every
connection resolves once, refuses the host if any answer is non-public and
dials a checked answer (TLS and ``Host`` keep the original name), environment
proxies are never used, and bodies are bounded.

Redirects are followed by hand, at most ``max_redirects`` hops, each hop checked
again. Rule: a redirect is followed when it stays on the same origin (scheme,
host, port) or upgrades the same host from http to https (any port). Any other
target is refused with ``WEB_REDIRECT_BLOCKED`` naming the target, so the model
sees where it would land and can fetch it directly if it still wants it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import ssl
from dataclasses import dataclass

import httpcore
import httpx

from .._context import CallContext, OutgoingRequest
from .._exceptions import WebError, WebErrorCode
from .._types import FetchBody, FetchRequest, FetchResult
from .._validate import is_int_at_least
from .._version import __version__
from ..netguard import (
    DEFAULT_POLICY,
    AddressPolicy,
    PinnedNetworkBackend,
    PinnedTransport,
    Resolver,
    check_url,
    check_url_text,
    classify_content_type,
    decode_text,
    effective_port,
    pick_charset,
    read_capped,
    system_resolver,
)
from ..settings import MAX_TIMEOUT_S, HttpFetchSettings
from ._client_pool import tls_context

__all__ = ["HttpFetchConfig", "HttpFetchProvider", "fetch_url", "redirect_refusal"]

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ACCEPT = "text/html,application/xhtml+xml,text/*;q=0.9,application/json;q=0.8,application/xml;q=0.8"
_DEFAULTS = HttpFetchSettings()  # one set of defaults for the settings file and the provider


def _bad_config(message: str) -> WebError:
    return WebError(WebErrorCode.CONFIG_INVALID, f"http fetch config: {message}")


def _positive_int(name: str, value: object, *, allow_zero: bool = False) -> None:
    low = 0 if allow_zero else 1
    if not is_int_at_least(value, low):
        raise _bad_config(f"{name} must be a {'non-negative' if allow_zero else 'positive'} integer")


@dataclass(frozen=True, slots=True)
class HttpFetchConfig:
    """Limits of the HTTP fetch provider. Checked on construction (``WEB_CONFIG_INVALID``)."""

    max_url_length: int = _DEFAULTS.max_url_length
    max_response_bytes: int = _DEFAULTS.max_response_bytes
    max_body_chars: int = _DEFAULTS.max_body_chars
    timeout_s: float = _DEFAULTS.timeout_s
    max_redirects: int = _DEFAULTS.max_redirects
    user_agent: str = f"dsweb_ref/{__version__}"

    @classmethod
    def from_settings(cls, settings: HttpFetchSettings) -> HttpFetchConfig:
        return cls(**dataclasses.asdict(settings))

    def __post_init__(self) -> None:
        for name in ("max_url_length", "max_response_bytes", "max_body_chars"):
            _positive_int(name, getattr(self, name))
        _positive_int("max_redirects", self.max_redirects, allow_zero=True)
        timeout = self.timeout_s
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout):
            raise _bad_config("timeout_s must be a positive finite number")
        if not 0 < timeout <= MAX_TIMEOUT_S:
            raise _bad_config(f"timeout_s must be greater than 0 and at most {MAX_TIMEOUT_S:g}")
        agent = self.user_agent
        if not isinstance(agent, str) or not agent.strip() or not agent.isprintable() or not agent.isascii():
            raise _bad_config("user_agent must be a non-empty printable ASCII string")


class HttpFetchProvider:
    """Fetch provider ``http``. The defaults are strict: nothing but public
    internet addresses, system DNS, the certifi trust store."""

    id = "http"

    def __init__(
        self,
        config: HttpFetchConfig | None = None,
        *,
        policy: AddressPolicy = DEFAULT_POLICY,
        resolver: Resolver = system_resolver,
        tls_context: ssl.SSLContext | None = None,
        dialer: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        config = HttpFetchConfig() if config is None else config
        if not isinstance(config, HttpFetchConfig):
            raise _bad_config(f"expected HttpFetchConfig, got {type(config).__name__}")
        if not isinstance(policy, AddressPolicy):
            raise _bad_config(f"policy must be an AddressPolicy, got {type(policy).__name__}")
        if not callable(resolver):
            raise _bad_config("resolver must be an async callable host -> list of IP strings")
        if tls_context is not None and not isinstance(tls_context, ssl.SSLContext):
            raise _bad_config("tls_context must be an ssl.SSLContext")
        self.config = config
        self.policy = policy
        # ``dialer`` only replaces the final socket connect (tests redirect it to loopback);
        # resolving and vetting the address always stays with the pinned backend.
        self._backend = PinnedNetworkBackend(policy=policy, resolver=resolver, inner=dialer)
        self._tls_context = tls_context

    def available(self) -> bool:
        return True

    async def fetch(self, request: FetchRequest, ctx: CallContext | None = None) -> FetchResult:
        cfg = self.config
        url = check_url(getattr(request, "url", None), max_length=cfg.max_url_length, policy=self.policy)
        try:
            async with asyncio.timeout(cfg.timeout_s):
                return await self._follow(url, ctx or CallContext())
        except TimeoutError as exc:
            # Only our own deadline lands here; a caller's cancellation stays a CancelledError.
            raise WebError(WebErrorCode.FETCH_TIMEOUT, f"web fetch timed out after {cfg.timeout_s:g} seconds") from exc

    def _ssl(self) -> ssl.SSLContext:
        return self._tls_context if self._tls_context is not None else tls_context()

    async def _follow(self, url: httpx.URL, ctx: CallContext) -> FetchResult:
        headers = {"User-Agent": self.config.user_agent, "Accept": ACCEPT, "Accept-Encoding": "gzip, deflate"}
        transport = PinnedTransport(self._backend, self._ssl())
        async with httpx.AsyncClient(
            transport=transport, trust_env=False, follow_redirects=False, timeout=None, headers=headers
        ) as client:
            hops = 0
            while True:
                ctx.record(OutgoingRequest(provider=self.id, method="GET", url=str(url), body=b""))
                client.cookies.clear()  # no state carried from one hop to the next
                try:
                    response = await client.send(client.build_request("GET", url), stream=True)
                    try:
                        if response.status_code not in REDIRECT_STATUSES:
                            return await self._read(url, response)
                        url = self._next_hop(url, response, hops)
                        hops += 1
                    finally:
                        await response.aclose()
                except (httpx.TimeoutException, TimeoutError) as exc:
                    raise WebError(WebErrorCode.FETCH_TIMEOUT, "web fetch timed out", cause=exc) from exc
                except (httpx.InvalidURL, UnicodeError) as exc:
                    # httpx parses a Location itself (even when not following) before we can vet it;
                    # the request URL was already checked, so this can only be the redirect target
                    # (UnicodeError: httpx keeps a non-ASCII IPv6 zone id, then fails to encode it).
                    why = "non-ASCII characters in the host" if isinstance(exc, UnicodeError) else str(exc)
                    raise WebError(WebErrorCode.INVALID_URL, f"redirect to an invalid URL refused: {why}") from exc
                except httpx.RemoteProtocolError as exc:
                    if "location" in str(exc).lower():
                        raise WebError(
                            WebErrorCode.INVALID_URL, f"redirect to an invalid URL refused: {exc}", cause=exc
                        ) from exc
                    raise WebError(WebErrorCode.PROVIDER_ERROR, _failure(url, exc), cause=exc) from exc
                except (httpx.HTTPError, httpx.StreamError, OSError) as exc:
                    raise WebError(WebErrorCode.PROVIDER_ERROR, _failure(url, exc), cause=exc) from exc

    def _next_hop(self, url: httpx.URL, response: httpx.Response, hops: int) -> httpx.URL:
        cfg = self.config
        if hops >= cfg.max_redirects:
            raise WebError(WebErrorCode.REDIRECT_BLOCKED, f"exceeded the maximum of {cfg.max_redirects} redirects")
        location = response.headers.get("location", "")
        if not location.strip():
            raise WebError(
                WebErrorCode.PROVIDER_ERROR,
                f"redirect response (HTTP {response.status_code}) without a Location header",
            )
        try:
            check_url_text(location)
            try:
                joined = str(url.join(location))
            except (httpx.InvalidURL, ValueError) as exc:
                raise WebError(WebErrorCode.INVALID_URL, "invalid URL") from exc
            target = check_url(joined, max_length=cfg.max_url_length, policy=self.policy)
        except WebError as err:
            raise WebError(err.code, f"redirect to {_printable(location)} refused: {err.message}", cause=err) from err
        refusal = redirect_refusal(url, target)
        if refusal is not None:
            raise WebError(WebErrorCode.REDIRECT_BLOCKED, refusal)
        return target

    async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
        cfg = self.config
        status = response.status_code
        if not 100 <= status <= 599:
            raise WebError(WebErrorCode.PROVIDER_ERROR, f"invalid HTTP status {status}")
        content_type = response.headers.get("content-type")
        declared = _declared_length(response.headers.get("content-length"))
        if status in (204, 304) or declared == 0:
            return FetchResult(url=_shown(url), status_code=status, body=FetchBody("text", ""))
        kind = classify_content_type(content_type)
        charset = pick_charset(content_type)
        if declared is not None and declared > cfg.max_response_bytes:
            raise WebError(
                WebErrorCode.FETCH_TOO_LARGE, f"response exceeds the maximum of {cfg.max_response_bytes} bytes"
            )
        data, cut = await read_capped(
            response.aiter_raw(), cfg.max_response_bytes, response.headers.get("content-encoding")
        )
        text = decode_text(data, charset, complete=not cut)
        if len(text) > cfg.max_body_chars:
            text, cut = text[: cfg.max_body_chars], True
        return FetchResult(url=_shown(url), status_code=status, body=FetchBody(kind, text), truncated=cut)


def redirect_refusal(source: httpx.URL, target: httpx.URL) -> str | None:
    """Why a redirect from ``source`` to ``target`` is not followed, or ``None``."""
    same_host = source.raw_host == target.raw_host
    if same_host and source.scheme == target.scheme and effective_port(source) == effective_port(target):
        return None
    if same_host and source.scheme == "http" and target.scheme == "https":
        return None
    port = "" if target.port is None else f":{target.port}"
    host = target.raw_host.decode("ascii")
    origin = f"{target.scheme}://{f'[{host}]' if ':' in host else host}{port}"
    return (
        f"cross-origin redirect to {origin} is not followed automatically; "
        f"fetch {_shown(target)} directly if it is still wanted"
    )


async def fetch_url(url: str, *, config: HttpFetchConfig | None = None) -> FetchResult:
    """Fetch ``url`` with the default strict provider (the ``http`` provider ``dsweb fetch`` selects
    by default), without a seam or tool around it."""
    return await HttpFetchProvider(config).fetch(FetchRequest(url))


def _shown(url: httpx.URL) -> str:
    # Serialise with an explicit path ("http://a.test" becomes "http://a.test/").
    return str(url.copy_with(raw_path=url.raw_path))


def _printable(text: str, limit: int = 300) -> str:
    # A Location header is server-controlled text headed for a model and a terminal.
    shown = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text[:limit])
    return shown + ("..." if len(text) > limit else "")


def _declared_length(value: str | None) -> int | None:
    if value is None or not value.strip().isdigit():
        return None  # absent or not a number: rely on the streaming cap
    return int(value.strip())


def _failure(url: httpx.URL, exc: BaseException) -> str:
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ssl.SSLCertVerificationError):
            detail = cause.verify_message or str(cause)
            return f'web fetch failed: TLS certificate verification failed for "{url.host}": {detail}'
        cause = cause.__cause__ or cause.__context__
    return f"web fetch failed: {type(exc).__name__}: {exc}"
