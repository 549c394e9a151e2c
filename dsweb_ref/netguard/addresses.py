"""Which IP addresses a fetch may connect to.

Everything that is not plainly public internet space is refused: loopback,
private, link-local, CGNAT, unspecified, multicast, broadcast, reserved,
benchmarking and documentation ranges, cloud metadata addresses, and IPv6
forms that carry an IPv4 address (mapped, NAT64, 6to4) when that IPv4 address
is not public. Python's ``ipaddress`` flags alone are not enough: ``is_private``
misses CGNAT and ``is_global`` is true for NAT64 and 6to4 wrappers of loopback.

An IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64
under the well-known prefix or an operator's RFC 6052 prefix, 6to4, Teredo) is judged as
the IPv4 address it reaches, before any allow-list, so allowing a wrapper range
never lets a wrapped metadata or private address through.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_network
from typing import TypeAlias

from .metadata import METADATA_ENDPOINTS

__all__ = [
    "DEFAULT_POLICY",
    "METADATA_ADDRESSES",
    "NAT64_PREFIX_LENGTHS",
    "AddressPolicy",
    "IPAddress",
    "IPNetwork",
    "blocked_reason",
]

IPAddress: TypeAlias = IPv4Address | IPv6Address
IPNetwork: TypeAlias = IPv4Network | IPv6Network

# Instance metadata and platform endpoints (the maintained table in .metadata). Refused even when
# a policy allows the surrounding range, because reaching them leaks cloud credentials.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(e.address for e in METADATA_ENDPOINTS)

_V4_BLOCKED: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(net), why)
    for net, why in (
        ("0.0.0.0/8", "unspecified or 'this network'"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared address space (CGNAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
    )
)

_V6_BLOCKED: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(net), why)
    for net, why in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("::/96", "IPv4-compatible (deprecated)"),
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("100::/64", "discard-only"),
        ("2001::/32", "Teredo"),
        ("2001::/23", "IETF protocol assignments"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("fc00::/7", "unique local (private)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    )
)

_GLOBAL_UNICAST = IPv6Network("2000::/3")
_MAPPED = IPv6Network("::ffff:0:0/96")
_COMPATIBLE = IPv6Network("::/96")  # deprecated IPv4-compatible form (RFC 4291 2.5.5.1); :: and ::1 excepted
_NAT64 = IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR = IPv6Network("2002::/16")
_TEREDO = IPv6Network("2001::/32")
# RFC 6052 section 2.2: the prefix lengths an operator may choose for IPv4-embedded IPv6.
NAT64_PREFIX_LENGTHS = frozenset({32, 40, 48, 56, 64, 96})


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """The address rule a fetch obeys. The default allows nothing beyond public space;
    ``allow`` lists extra networks to accept (tests use ``127.0.0.1/32`` for a loopback
    server). Metadata addresses stay refused whatever ``allow`` says, and so does any
    IPv6 form that carries one (see the module docstring).

    ``nat64_prefixes`` names the operator's NAT64/DNS64 prefixes (RFC 6052: /32, /40,
    /48, /56, /64 or /96) besides the well-known ``64:ff9b::/96``; an address under one
    is judged as the IPv4 address it translates to, so on a DNS64 host a name whose A
    record is private cannot pass as a global-looking AAAA."""

    allow: tuple[IPNetwork, ...] = ()
    nat64_prefixes: tuple[IPv6Network, ...] = ()

    def __post_init__(self) -> None:
        for prefix in self.nat64_prefixes:
            if not isinstance(prefix, IPv6Network) or prefix.prefixlen not in NAT64_PREFIX_LENGTHS:
                raise ValueError(
                    f"NAT64 prefix {prefix} must be an IPv6 network of length 32, 40, 48, 56, 64 or 96 (RFC 6052)"
                )

    @classmethod
    def allowing(cls, *networks: str) -> AddressPolicy:
        return cls(allow=tuple(ip_network(n) for n in networks))

    @classmethod
    def parse_nat64_prefixes(cls, text: str) -> tuple[IPv6Network, ...]:
        """Comma-separated prefixes (the settings form) as networks; ``ValueError`` when malformed."""
        prefixes = tuple(IPv6Network(part.strip()) for part in text.split(",") if part.strip())
        cls(nat64_prefixes=prefixes)  # validates the lengths
        return prefixes

    def blocked_reason(self, address: IPAddress) -> str | None:
        """Why ``address`` may not be dialled, or ``None`` when it may."""
        if address in METADATA_ADDRESSES:
            return "cloud metadata endpoint"
        if isinstance(address, IPv6Address):
            embedded = _embedded_v4(address, self.nat64_prefixes)
            if embedded is not None:
                form, v4 = embedded
                inner = self.blocked_reason(v4)
                if inner is not None:
                    return f"{form} of {v4} ({inner})"
                if address not in _TEREDO and address not in _COMPATIBLE:
                    return None
        if any(address.version == net.version and address in net for net in self.allow):
            return None
        return blocked_reason(address)


DEFAULT_POLICY = AddressPolicy()


def blocked_reason(address: IPAddress) -> str | None:
    """The strict rule with no exceptions: a reason for every non-public address."""
    if address in METADATA_ADDRESSES:
        return "cloud metadata endpoint"
    if isinstance(address, IPv4Address):
        return _v4_reason(address)
    embedded = _embedded_v4(address, ())
    if embedded is not None:
        form, v4 = embedded
        inner = blocked_reason(v4)
        if inner is not None:
            return f"{form} of {v4} ({inner})"
        if address not in _TEREDO and address not in _COMPATIBLE:
            return None
    for net, why in _V6_BLOCKED:
        if address in net:
            return why
    if address not in _GLOBAL_UNICAST:
        return "reserved"
    if not address.is_global:
        return "not globally reachable"
    return None


def _v4_reason(address: IPv4Address) -> str | None:
    for net, why in _V4_BLOCKED:
        if address in net:
            return why
    if not address.is_global or address.is_multicast or address.is_reserved:
        return "not globally reachable"
    return None


def _embedded_v4(address: IPv6Address, nat64: tuple[IPv6Network, ...]) -> tuple[str, IPv4Address] | None:
    # The IPv4 address such an IPv6 address reaches (directly or via a translator).
    if address in _MAPPED:
        mapped = address.ipv4_mapped
        assert mapped is not None
        return "IPv4-mapped IPv6", mapped
    if address in _COMPATIBLE and int(address) > 1:
        return "IPv4-compatible IPv6", IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _NAT64:
        return "NAT64 IPv6", IPv4Address(int(address) & 0xFFFFFFFF)
    for prefix in nat64:
        if address in prefix:
            return f"NAT64 IPv6 under {prefix}", _rfc6052_v4(address, prefix.prefixlen)
    if address in _SIX_TO_FOUR:
        six = address.sixtofour
        assert six is not None
        return "6to4 IPv6", six
    if address in _TEREDO:
        teredo = address.teredo
        assert teredo is not None
        return "Teredo IPv6", teredo[1]  # the client the relay delivers to
    return None


def _rfc6052_v4(address: IPv6Address, length: int) -> IPv4Address:
    # RFC 6052 section 2.2: the 32 IPv4 bits follow the prefix, skipping bits 64..71 (the "u" octet).
    packed = address.packed
    start = length // 8
    octets = [packed[i] for i in range(start, 16) if i != 8][:4]
    return IPv4Address(bytes(octets))
