"""The address policy, IP literal reading and host classification, without any network."""

from __future__ import annotations

import socket
from ipaddress import IPv4Address, ip_address

import pytest

from dsweb_ref import WebError, WebErrorCode
from dsweb_ref.netguard import DEFAULT_POLICY, AddressPolicy, blocked_reason, parse_host, parse_ipv4_literal

# inet_aton spellings: every one must mean what the C resolver says it means.
LITERALS = [
    pytest.param("2130706433", "127.0.0.1", id="decimal"),
    pytest.param("0177.0.0.1", "127.0.0.1", id="octal-dotted"),
    pytest.param("017700000001", "127.0.0.1", id="octal-whole"),
    pytest.param("0x7f.0.0.1", "127.0.0.1", id="hex-dotted"),
    pytest.param("0x7f000001", "127.0.0.1", id="hex-whole"),
    pytest.param("0x7f.1", "127.0.0.1", id="hex-short"),
    pytest.param("127.1", "127.0.0.1", id="short-two-parts"),
    pytest.param("127.0.1", "127.0.0.1", id="short-three-parts"),
    pytest.param("0", "0.0.0.0", id="zero"),
    pytest.param("2852039166", "169.254.169.254", id="metadata-decimal"),
    pytest.param("0251.0376.0251.0376", "169.254.169.254", id="metadata-octal"),
    pytest.param("10.0x10.1", "10.16.0.1", id="mixed-bases"),
    pytest.param("8.8.8.8", "8.8.8.8", id="canonical"),
]


@pytest.mark.parametrize(("text", "expected"), LITERALS)
def test_ipv4_literals_read_like_inet_aton(text: str, expected: str) -> None:
    assert parse_ipv4_literal(text) == IPv4Address(expected)
    # The C library agrees, so what we check is what a resolver would dial.
    assert socket.inet_aton(text) == IPv4Address(expected).packed


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("256.1.1.1", id="octet-overflow"),
        pytest.param("1.2.3.4.5", id="five-parts"),
        pytest.param("08.0.0.1", id="bad-octal-digit"),
        pytest.param("0x1g", id="bad-hex-digit"),
        pytest.param("4294967296", id="over-32-bits"),
        pytest.param("1.16777216", id="short-form-overflow"),
        pytest.param("1..1", id="empty-part"),
        pytest.param("", id="empty"),
        pytest.param("example.com", id="name"),
    ],
)
def test_non_literals_are_not_addresses(text: str) -> None:
    assert parse_ipv4_literal(text) is None


BLOCKED = [
    pytest.param("127.0.0.1", "loopback", id="loopback"),
    pytest.param("127.255.255.254", "loopback", id="loopback-edge"),
    pytest.param("0.0.0.0", "unspecified", id="unspecified-v4"),
    pytest.param("0.1.2.3", "this network", id="this-network"),
    pytest.param("10.1.2.3", "private", id="private-10"),
    pytest.param("172.16.0.1", "private", id="private-172"),
    pytest.param("192.168.1.1", "private", id="private-192"),
    pytest.param("169.254.1.1", "link-local", id="link-local-v4"),
    pytest.param("100.64.0.1", "CGNAT", id="cgnat"),
    pytest.param("100.127.255.254", "CGNAT", id="cgnat-edge"),
    pytest.param("224.0.0.1", "multicast", id="multicast-v4"),
    pytest.param("255.255.255.255", "broadcast", id="broadcast"),
    pytest.param("240.0.0.1", "reserved", id="reserved-v4"),
    pytest.param("198.18.0.1", "benchmarking", id="benchmark"),
    pytest.param("198.19.255.255", "benchmarking", id="benchmark-edge"),
    pytest.param("192.0.2.1", "documentation", id="doc-test-net-1"),
    pytest.param("198.51.100.1", "documentation", id="doc-test-net-2"),
    pytest.param("203.0.113.1", "documentation", id="doc-test-net-3"),
    pytest.param("192.0.0.8", "IETF", id="ietf-assignments"),
    pytest.param("192.88.99.1", "6to4 relay", id="6to4-relay"),
    pytest.param("169.254.169.254", "metadata", id="metadata-aws-gcp-azure"),
    pytest.param("169.254.170.2", "metadata", id="metadata-ecs"),
    pytest.param("100.100.100.200", "metadata", id="metadata-alibaba"),
    pytest.param("168.63.129.16", "metadata", id="metadata-azure-wireserver"),
    pytest.param("fd00:ec2::254", "metadata", id="metadata-aws-v6"),
    pytest.param("::1", "loopback", id="loopback-v6"),
    pytest.param("::", "unspecified", id="unspecified-v6"),
    pytest.param("fe80::1", "link-local", id="link-local-v6"),
    pytest.param("fec0::1", "site-local", id="site-local-v6"),
    pytest.param("fc00::1", "unique local", id="ula-fc"),
    pytest.param("fd12:3456::1", "unique local", id="ula-fd"),
    pytest.param("ff02::1", "multicast", id="multicast-v6"),
    pytest.param("2001:db8::1", "documentation", id="doc-v6"),
    pytest.param("3fff::1", "documentation", id="doc-v6-new"),
    pytest.param("100::1", "discard", id="discard-v6"),
    pytest.param("4000::1", "reserved", id="reserved-v6"),
    pytest.param("::ffff:127.0.0.1", "IPv4-mapped IPv6 of 127.0.0.1", id="mapped-loopback"),
    pytest.param("::ffff:10.0.0.1", "IPv4-mapped IPv6 of 10.0.0.1", id="mapped-private"),
    pytest.param("::ffff:169.254.169.254", "metadata", id="mapped-metadata"),
    pytest.param("::127.0.0.1", "IPv4-compatible", id="compat-loopback"),
    pytest.param("::8.8.8.8", "IPv4-compatible", id="compat-any"),
    pytest.param("64:ff9b::7f00:1", "NAT64 IPv6 of 127.0.0.1", id="nat64-loopback"),
    pytest.param("64:ff9b::a9fe:a9fe", "NAT64 IPv6 of 169.254.169.254", id="nat64-metadata"),
    pytest.param("64:ff9b:1::a00:1", "local-use NAT64", id="nat64-local-use"),
    pytest.param("2002:7f00:1::1", "6to4 IPv6 of 127.0.0.1", id="6to4-loopback"),
    pytest.param("2002:c0a8:101::1", "6to4 IPv6 of 192.168.1.1", id="6to4-private"),
    pytest.param("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo", id="teredo"),
    pytest.param("2001:2::1", "IETF", id="benchmark-v6"),
]


@pytest.mark.parametrize(("text", "reason"), BLOCKED)
def test_default_policy_refuses_non_public(text: str, reason: str) -> None:
    found = DEFAULT_POLICY.blocked_reason(ip_address(text))
    assert found is not None and reason in found


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("8.8.8.8", id="public-v4"),
        pytest.param("1.1.1.1", id="public-v4-2"),
        pytest.param("100.63.255.255", id="below-cgnat"),
        pytest.param("100.128.0.0", id="above-cgnat"),
        pytest.param("198.20.0.1", id="above-benchmark"),
        pytest.param("2606:4700::1111", id="public-v6"),
        pytest.param("::ffff:8.8.8.8", id="mapped-public"),
        pytest.param("64:ff9b::808:808", id="nat64-public"),
        pytest.param("2002:808:808::1", id="6to4-public"),
    ],
)
def test_default_policy_allows_public(text: str) -> None:
    assert DEFAULT_POLICY.blocked_reason(ip_address(text)) is None


def test_default_policy_trusts_no_loopback_at_all() -> None:
    assert DEFAULT_POLICY.allow == ()
    for text in ("127.0.0.1", "::1", "::ffff:127.0.0.1", "127.0.0.2"):
        assert DEFAULT_POLICY.blocked_reason(ip_address(text)) is not None


def test_allowing_policy_opens_exactly_the_listed_network() -> None:
    policy = AddressPolicy.allowing("127.0.0.1/32")
    assert policy.blocked_reason(ip_address("127.0.0.1")) is None
    assert policy.blocked_reason(ip_address("127.0.0.2")) == "loopback"
    assert policy.blocked_reason(ip_address("::1")) == "loopback"


def test_every_range_python_calls_non_global_is_already_in_the_tables() -> None:
    """The trailing is_global / is_multicast / is_reserved tests of the address rule are a net for a
    future Python whose special-purpose lists grow: on the running one they never decide, because every
    range ipaddress calls non-global (or multicast, reserved) lies inside a row of the tables, which are
    read first. (scripts/mutation/equivalent.txt judges their mutants program-equivalent on this basis.)"""
    import ipaddress

    from dsweb_ref.netguard.addresses import _GLOBAL_UNICAST, _V4_BLOCKED, _V6_BLOCKED

    v4 = ipaddress._IPv4Constants  # type: ignore[attr-defined]
    non_global_v4 = [*v4._private_networks, v4._public_network, v4._multicast_network, v4._reserved_network]
    for net in non_global_v4:  # is_global is "not in 100.64/10 (_public_network) and not is_private"
        assert any(net.subnet_of(row) for row, _ in _V4_BLOCKED), net
    v6 = ipaddress._IPv6Constants  # type: ignore[attr-defined]
    for net in v6._private_networks:  # IPv6 is_global is "not is_private"
        if net.overlaps(_GLOBAL_UNICAST):  # only 2000::/3 reaches the is_global test
            assert any(net.subnet_of(row) for row, _ in _V6_BLOCKED), net


def test_metadata_stays_refused_even_when_its_range_is_allowed() -> None:
    policy = AddressPolicy.allowing("169.254.0.0/16", "fd00::/8")
    assert policy.blocked_reason(ip_address("169.254.1.1")) is None
    assert policy.blocked_reason(ip_address("169.254.169.254")) == "cloud metadata endpoint"
    assert policy.blocked_reason(ip_address("fd00:ec2::254")) == "cloud metadata endpoint"
    assert blocked_reason(ip_address("169.254.169.254")) == "cloud metadata endpoint"


@pytest.mark.parametrize(
    "host",
    [
        pytest.param("localhost", id="localhost"),
        pytest.param("LOCALHOST.", id="localhost-upper-absolute"),
        pytest.param("foo.localhost", id="sub-localhost"),
        pytest.param("printer.local", id="mdns-local"),
        pytest.param("box.localdomain", id="localdomain"),
        pytest.param("metadata.google.internal", id="gcp-metadata-name"),
        pytest.param("api.railway.internal", id="internal-suffix"),
        pytest.param("metadata.goog", id="gcp-metadata-short"),
        pytest.param("nas.home.arpa", id="home-arpa"),
        pytest.param("1.0.0.127.in-addr.arpa", id="reverse-zone"),
        pytest.param("intranet", id="single-label"),
    ],
)
def test_special_names_refused_without_lookup(host: str) -> None:
    with pytest.raises(WebError) as info:
        parse_host(host)
    assert info.value.code == WebErrorCode.BLOCKED_URL


@pytest.mark.parametrize(
    "host",
    [
        pytest.param("", id="empty"),
        pytest.param("a..b", id="empty-label"),
        pytest.param("-a.test", id="leading-hyphen"),
        pytest.param("1.2.3.4.5", id="numeric-five-parts"),
        pytest.param("example.0x10", id="numeric-last-label"),
        pytest.param("%31%32%37.0.0.1", id="percent-encoded"),
        pytest.param("fe80::1%25eth0", id="zone-id"),
        pytest.param("[::1", id="broken-bracket"),
        pytest.param("a" * 64 + ".test", id="label-too-long"),
    ],
)
def test_malformed_hosts_are_invalid(host: str) -> None:
    with pytest.raises(WebError) as info:
        parse_host(host)
    assert info.value.code == WebErrorCode.INVALID_URL


def test_bare_hex_prefix_reads_as_zero_like_browsers() -> None:
    # glibc refuses "0x" while WHATWG URL parsers read 0.0.0.0; take the reading that blocks.
    assert parse_ipv4_literal("0x") == IPv4Address("0.0.0.0")
    assert parse_ipv4_literal("0x.0x.0x.0x") == IPv4Address("0.0.0.0")


def test_hosts_classify() -> None:
    assert parse_host("Example.COM.") == "example.com"
    assert parse_host("xn--bcher-kva.example") == "xn--bcher-kva.example"
    assert parse_host("[::1]") == ip_address("::1")
    assert parse_host("127.0.0.1.") == ip_address("127.0.0.1")
