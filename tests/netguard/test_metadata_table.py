"""Every row of the metadata table is refused whatever ``allow`` says, raw and inside every IPv6
wrapping the address policy unwraps, and every metadata name is refused before any lookup
(issue 20 item 3: Google's fd20:ce::254 and Tencent's 169.254.0.23 were dialled under an
allow-list admitting fd00::/8 or 169.254.0.0/16)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from ipaddress import IPv4Address, IPv6Address, IPv6Network, ip_network

import pytest

from dsweb_ref import WebError, WebErrorCode
from dsweb_ref.netguard import AddressPolicy, parse_host
from dsweb_ref.netguard.addresses import NAT64_PREFIX_LENGTHS
from dsweb_ref.netguard.metadata import METADATA_ENDPOINTS, METADATA_NAMES
from dsweb_ref.netguard.resolve import vet_host

V4 = [e.address for e in METADATA_ENDPOINTS if isinstance(e.address, IPv4Address)]
V6 = [e.address for e in METADATA_ENDPOINTS if isinstance(e.address, IPv6Address)]
ALL = [e.address for e in METADATA_ENDPOINTS]
# One operator prefix per RFC 6052 length, none inside another (the policy decodes by the first match).
OPERATOR_NAT64 = {n: IPv6Network(f"{0x2A00 + n:x}:db8::/{n}") for n in sorted(NAT64_PREFIX_LENGTHS)}


def _rfc6052(prefix: IPv6Network, v4: IPv4Address) -> IPv6Address:
    """``v4`` embedded under ``prefix`` as RFC 6052 section 2.2 lays it out (bits 64..71 stay zero)."""
    packed = bytearray(prefix.network_address.packed)
    slots = [i for i in range(prefix.prefixlen // 8, 16) if i != 8][:4]
    for slot, octet in zip(slots, v4.packed, strict=True):
        packed[slot] = octet
    return IPv6Address(bytes(packed))


def _teredo(client: IPv4Address) -> IPv6Address:
    server, port = int(IPv4Address("192.0.2.45")), 0xFFFF ^ 40000
    return IPv6Address((0x20010000 << 96) | (server << 64) | (port << 32) | (~int(client) & 0xFFFFFFFF))


WRAPPINGS: dict[str, Callable[[IPv4Address], IPv6Address]] = {
    "ipv4-mapped": lambda v4: IPv6Address(f"::ffff:{v4}"),
    "ipv4-compatible": lambda v4: IPv6Address(int(v4)),
    "nat64-well-known": lambda v4: IPv6Address(f"64:ff9b::{v4}"),
    "6to4": lambda v4: IPv6Address((0x2002 << 112) | (int(v4) << 80) | 1),
    "teredo": _teredo,
    **{f"nat64-operator-/{n}": (lambda v4, p=p: _rfc6052(p, v4)) for n, p in OPERATOR_NAT64.items()},
}
# Allow-lists a deployment might write: the ranges around every row, and everything.
ALLOWS = {
    "surrounding-ranges": ("169.254.0.0/16", "100.64.0.0/10", "168.63.0.0/16", "192.0.0.0/24", "fd00::/8", "fe80::/10"),
    "everything": ("0.0.0.0/0", "::/0"),
}


def _policy(allow: tuple[str, ...]) -> AddressPolicy:
    return AddressPolicy(allow=tuple(ip_network(n) for n in allow), nat64_prefixes=tuple(OPERATOR_NAT64.values()))


@pytest.mark.parametrize("allow", list(ALLOWS))
@pytest.mark.parametrize("address", ALL, ids=str)
def test_every_metadata_endpoint_is_refused_whatever_allow_says(address: IPv4Address | IPv6Address, allow: str) -> None:
    reason = _policy(ALLOWS[allow]).blocked_reason(address)
    assert reason is not None and "metadata" in reason, reason
    assert AddressPolicy().blocked_reason(address) is not None


@pytest.mark.parametrize("wrapping", list(WRAPPINGS))
@pytest.mark.parametrize("address", V4, ids=str)
def test_every_ipv4_metadata_endpoint_is_refused_inside_every_ipv6_wrapping(
    address: IPv4Address, wrapping: str
) -> None:
    wrapped = WRAPPINGS[wrapping](address)
    for allow in ALLOWS.values():
        reason = _policy(allow).blocked_reason(wrapped)
        assert reason is not None and "metadata" in reason and str(address) in reason, (wrapped, reason)


def test_the_wrappings_are_built_right() -> None:
    """The test's own encoders agree with ipaddress where it decodes the form."""
    v4 = IPv4Address("169.254.0.23")
    assert WRAPPINGS["ipv4-mapped"](v4).ipv4_mapped == v4
    assert WRAPPINGS["6to4"](v4).sixtofour == v4
    teredo = WRAPPINGS["teredo"](v4).teredo
    assert teredo is not None and teredo[1] == v4
    assert str(WRAPPINGS["nat64-operator-/96"](v4)).endswith(":a9fe:17")


def test_a_public_address_in_the_same_wrappings_is_still_allowed() -> None:
    """The refusal is about the metadata address, not the wrapping (a false refusal check)."""
    public = IPv4Address("8.8.8.8")
    for wrapping in ("ipv4-mapped", "nat64-well-known", "6to4"):
        assert _policy(ALLOWS["everything"]).blocked_reason(WRAPPINGS[wrapping](public)) is None, wrapping


@pytest.mark.parametrize("address", ALL, ids=str)
def test_a_name_resolving_to_a_metadata_endpoint_is_refused_under_allow_everything(
    address: IPv4Address | IPv6Address,
) -> None:
    async def resolver(host: str) -> list[str]:
        return ["93.184.216.34", str(address)]  # one public answer does not launder the other

    with pytest.raises(WebError) as info:
        asyncio.run(vet_host("innocent.example", policy=_policy(ALLOWS["everything"]), resolver=resolver))
    assert info.value.code == WebErrorCode.BLOCKED_URL and "metadata" in info.value.message


@pytest.mark.parametrize("name", sorted(METADATA_NAMES))
def test_every_metadata_name_is_refused_before_any_lookup(name: str) -> None:
    for spelling in (name, name.upper(), name + "."):
        with pytest.raises(WebError) as info:
            parse_host(spelling)
        assert info.value.code == WebErrorCode.BLOCKED_URL, spelling


def test_the_table_has_the_issue_s_rows() -> None:
    named = {
        "169.254.169.254", "fd00:ec2::254", "169.254.170.2", "fd20:ce::254", "168.63.129.16",
        "100.100.100.200", "169.254.0.23", "192.0.0.192",
    }
    assert named <= {str(a) for a in ALL}
    assert {"metadata.google.internal", "metadata.goog"} <= METADATA_NAMES
