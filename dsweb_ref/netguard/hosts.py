"""What a URL host means before any lookup: an IP literal, a special name, or a DNS name.

IPv4 literals are read the way ``inet_aton`` (and so ``getaddrinfo``) reads them:
``2130706433``, ``0177.0.0.1``, ``0x7f.1`` and ``127.1`` all mean 127.0.0.1. The
HTTP client keeps such hosts as names, so without this step a check on the name
would pass while the resolver dials loopback.

One rule for every numeric spelling: only the canonical dotted-decimal form
(``127.0.0.1``) is an IPv4 host, judged by the address policy (``WEB_BLOCKED_URL``
when it is not public). Every other spelling that a resolver would read as an
IPv4 address (decimal, octal, hex, short forms, leading zeros) is
``WEB_INVALID_URL`` whatever address it means, public or not: the same code
httpx already gives dotted octal, and no answer that depends on the target.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv6Address

from .._exceptions import WebError, WebErrorCode
from .addresses import IPAddress
from .metadata import METADATA_NAMES

__all__ = ["BLOCKED_NAMES", "BLOCKED_NAME_SUFFIXES", "parse_host", "parse_ipv4_literal"]

# Names that only ever mean this machine or a private network. Refused without
# a lookup: resolving them would already leak intent to the local resolver, and
# some resolvers answer them specially (e.g. mDNS for .local).
BLOCKED_NAMES = frozenset({"localhost", *METADATA_NAMES})
BLOCKED_NAME_SUFFIXES = (
    ".localhost",  # RFC 6761: always loopback
    ".local",  # mDNS, the local link
    ".localdomain",  # common alias for this host
    ".internal",  # reserved for private use (cloud-internal names live here)
    ".arpa",  # reverse-lookup zones and home.arpa home networks
)

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_DEC = re.compile(r"[1-9][0-9]*|0")
_OCT = re.compile(r"0[0-7]+")
_HEX = re.compile(r"0[xX][0-9a-fA-F]*")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")


def parse_ipv4_literal(host: str) -> IPv4Address | None:
    """``host`` as ``inet_aton`` would read it (1 to 4 parts, each decimal, octal
    or hex; the last part fills the remaining bytes), or ``None``."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        if _HEX.fullmatch(part):
            values.append(int(part[2:] or "0", 16))
        elif _OCT.fullmatch(part):
            values.append(int(part, 8))
        elif _DEC.fullmatch(part):
            values.append(int(part))
        else:
            return None
    *head, last = values
    if any(v > 0xFF for v in head) or last >= 1 << (8 * (4 - len(head))):
        return None
    number = last
    for index, value in enumerate(head):
        number |= value << (8 * (3 - index))
    return IPv4Address(number)


def parse_host(host: str) -> IPAddress | str:
    """Classify a host as the HTTP client hands it to the network (ASCII, IDNA
    applied, IPv6 with or without brackets). Returns the IP for a literal or the
    lowercased name; raises ``WebError`` for malformed hosts and special names."""
    if not host:
        raise WebError(WebErrorCode.INVALID_URL, "URL has no host")
    if "%" in host:
        raise WebError(
            WebErrorCode.INVALID_URL, f'invalid URL host "{host}": percent signs and zone ids are not allowed'
        )
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if ":" in host:
        try:
            return IPv6Address(host)
        except ValueError:
            raise WebError(WebErrorCode.INVALID_URL, f'invalid IPv6 address "{host}"') from None
    name = host.lower()
    if name.endswith("."):  # one trailing dot is the absolute form of the same name
        name = name[:-1]
    literal = parse_ipv4_literal(name)
    if literal is not None:
        if name != str(literal):
            raise WebError(
                WebErrorCode.INVALID_URL,
                f'numeric URL host "{host}" is not a dotted-decimal IPv4 address; write the address as a.b.c.d',
            )
        return literal
    labels = name.split(".")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        # Resolvers and URL parsers disagree on such hosts (some read an IPv4
        # address, some a name); refuse rather than guess.
        raise WebError(WebErrorCode.INVALID_URL, f'ambiguous numeric URL host "{host}"')
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise WebError(WebErrorCode.INVALID_URL, f'invalid URL host "{host}"')
    if name in BLOCKED_NAMES or name.endswith(BLOCKED_NAME_SUFFIXES):
        raise WebError(WebErrorCode.BLOCKED_URL, f'URL host "{host}" names a local or internal host')
    if len(labels) == 1:
        # Search domains turn a single label into an internal name (http://intranet/).
        raise WebError(
            WebErrorCode.BLOCKED_URL, f'single-label URL host "{host}" is not allowed; use a full domain name'
        )
    return name
