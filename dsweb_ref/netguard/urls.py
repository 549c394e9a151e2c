"""URL checks that run before any network access.

The URL is parsed with ``httpx.URL``, the parser the HTTP client itself uses, so
the host checked here is the host the client connects to. Characters that other
parsers read differently (a backslash is a path separator to browsers and part
of the userinfo to httpx; tabs and newlines are silently dropped by WHATWG
parsers) are refused outright instead of being normalised one way or another.
"""

from __future__ import annotations

import unicodedata
from ipaddress import ip_address

import httpx

from .._exceptions import WebError, WebErrorCode
from .addresses import AddressPolicy, IPAddress
from .hosts import parse_host

__all__ = ["check_url", "check_url_text", "effective_port"]

_SCHEMES = {"http": 80, "https": 443}


def check_url_text(raw: str) -> None:
    """Refuse characters that URL parsers disagree about."""
    if "\\" in raw:
        raise WebError(WebErrorCode.INVALID_URL, "invalid URL: backslashes are not allowed")
    for char in raw:
        # Cc: control characters (C0, DEL, C1); Cf: invisible format characters
        # such as zero-width and bidi controls; Z*: every kind of space.
        if char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Zs", "Zl", "Zp"):
            raise WebError(
                WebErrorCode.INVALID_URL,
                f"invalid URL: whitespace and control characters are not allowed (found U+{ord(char):04X})",
            )


def check_url(raw: object, *, max_length: int, policy: AddressPolicy) -> httpx.URL:
    """Parse and check ``raw`` without touching the network.

    Raises ``WEB_INVALID_URL`` for malformed or unsupported URLs and
    ``WEB_BLOCKED_URL`` for credentials, special host names and non-public IP
    literals. Names are not resolved here; the connection does that (and checks
    again) when it dials."""
    if not isinstance(raw, str):
        raise WebError(WebErrorCode.INVALID_URL, "URL must be a string")
    if len(raw) > max_length:
        raise WebError(WebErrorCode.INVALID_URL, f"URL exceeds the maximum length of {max_length} characters")
    check_url_text(raw)
    try:
        url = httpx.URL(raw)
    except (httpx.InvalidURL, ValueError, TypeError):  # UnicodeError is a ValueError (non-ASCII zone id)
        raise WebError(WebErrorCode.INVALID_URL, f"invalid URL: {raw}") from None
    if url.scheme not in _SCHEMES:
        shown = f"{url.scheme}:" if url.scheme else "(none)"
        raise WebError(WebErrorCode.INVALID_URL, f'unsupported URL scheme "{shown}" (only http and https are allowed)')
    if url.userinfo:
        raise WebError(WebErrorCode.BLOCKED_URL, "credentials in URLs are not allowed")
    if url.port is not None and not 1 <= url.port <= 65535:
        raise WebError(WebErrorCode.INVALID_URL, f"invalid URL port {url.port}")
    try:
        raw_host = url.raw_host.decode("ascii")
    except UnicodeError:  # httpx keeps a non-ASCII IPv6 zone id and only fails when encoding it
        raise WebError(WebErrorCode.INVALID_URL, f"invalid URL host in {raw}: non-ASCII characters") from None
    host = parse_host(raw_host)
    if not isinstance(host, str):
        reason = policy.blocked_reason(host)
        if reason is not None:
            shown = url.host if _same_ip(url.host, host) else f"{url.host} (= {host})"
            raise WebError(
                WebErrorCode.BLOCKED_URL,
                f"URL host {shown} is not a public address ({reason}); only public internet hosts can be fetched",
            )
    return url


def _same_ip(text: str, address: IPAddress) -> bool:
    try:
        return ip_address(text) == address
    except ValueError:
        return False


def effective_port(url: httpx.URL) -> int:
    return url.port if url.port is not None else _SCHEMES.get(url.scheme, 0)
