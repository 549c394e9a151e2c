"""Regressions from an outside SSRF corpus (issue 10): embedded IPv4 under an allow-list, non-ASCII
zone ids, operator NAT64 prefixes, and one error code for every numeric host spelling."""

from __future__ import annotations

import asyncio
from ipaddress import IPv6Network, ip_address

import pytest

from dsweb_ref import FetchRequest, WebError, WebErrorCode
from dsweb_ref.netguard import DEFAULT_POLICY, AddressPolicy, check_url
from dsweb_ref.providers.http_fetch import HttpFetchConfig, HttpFetchProvider
from dsweb_ref.runtime import build_runtime
from dsweb_ref.settings import parse_settings

from ._servers import LOOPBACK_ONLY, FakeDNS, LocalServer, reply

# Each wrapper range an operator might allow, with the metadata address 169.254.169.254 inside it.
WRAPPED_METADATA = [
    pytest.param("::ffff:0:0/96", "::ffff:169.254.169.254", id="ipv4-mapped"),
    pytest.param("64:ff9b::/96", "64:ff9b::a9fe:a9fe", id="nat64-well-known"),
    pytest.param("2002::/16", "2002:a9fe:a9fe::1", id="6to4"),
    pytest.param("2001::/32", "2001:0:4136:e378:8000:63bf:5601:5601", id="teredo-client"),
]


@pytest.mark.parametrize(("allowed", "address"), WRAPPED_METADATA)
def test_allowing_a_wrapper_range_never_admits_wrapped_metadata(allowed: str, address: str) -> None:
    policy = AddressPolicy.allowing(allowed)
    reason = policy.blocked_reason(ip_address(address))
    assert reason is not None and "169.254.169.254 (cloud metadata endpoint)" in reason


@pytest.mark.parametrize(("allowed", "address"), WRAPPED_METADATA)
def test_a_wrapped_metadata_answer_is_refused_at_connect_time(allowed: str, address: str) -> None:
    provider = HttpFetchProvider(
        HttpFetchConfig(timeout_s=5),
        policy=AddressPolicy.allowing(allowed),
        resolver=FakeDNS({"looks-public.example": [address]}),
    )
    with pytest.raises(WebError) as info:
        asyncio.run(provider.fetch(FetchRequest("http://looks-public.example/")))
    assert info.value.code == WebErrorCode.BLOCKED_URL
    assert "cloud metadata endpoint" in info.value.message


def test_a_wrapped_private_address_is_judged_as_the_ipv4_it_carries() -> None:
    # Allowing the mapped range admits what the IPv4 rules admit, nothing more.
    policy = AddressPolicy.allowing("::ffff:0:0/96")
    assert policy.blocked_reason(ip_address("::ffff:10.0.0.1")) == "IPv4-mapped IPv6 of 10.0.0.1 (private)"
    assert policy.blocked_reason(ip_address("::ffff:8.8.8.8")) is None
    # An allowed IPv4 network is allowed in its wrapped forms too (same host, same decision).
    loopback = AddressPolicy.allowing("127.0.0.1/32")
    assert loopback.blocked_reason(ip_address("::ffff:127.0.0.1")) is None
    assert loopback.blocked_reason(ip_address("::ffff:127.0.0.2")) is not None


def test_teredo_stays_refused_by_default_even_for_a_public_client() -> None:
    # 2001:0:4136:e378:8000:63bf:3fff:fdd2 carries client 192.0.2.45 per RFC 4380's example; a
    # public client (8.8.8.8 obfuscated = f7f7:f7f7) still does not make Teredo acceptable.
    assert DEFAULT_POLICY.blocked_reason(ip_address("2001:0:4136:e378:8000:63bf:f7f7:f7f7")) == "Teredo"


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("http://[::1%é]/", id="raw"),
        pytest.param("http://[fe80::1%25é]/", id="percent-encoded-zone"),
        pytest.param("https://[::1%Ω]:8443/x", id="greek"),
    ],
)
def test_a_non_ascii_zone_id_is_an_invalid_url(url: str) -> None:
    with pytest.raises(WebError) as info:
        check_url(url, max_length=2048, policy=DEFAULT_POLICY)
    assert info.value.code == WebErrorCode.INVALID_URL


def test_a_redirect_to_a_non_ascii_zone_id_is_an_invalid_url(server: LocalServer) -> None:
    server.routes["/hop"] = lambda h: reply(h, 302, headers={"Location": "http://[::1%é]/"})
    provider = HttpFetchProvider(
        HttpFetchConfig(timeout_s=5), policy=LOOPBACK_ONLY, resolver=FakeDNS({"fetch.test": ["127.0.0.1"]})
    )
    with pytest.raises(WebError) as info:
        asyncio.run(provider.fetch(FetchRequest(f"http://fetch.test:{server.port}/hop")))
    assert info.value.code == WebErrorCode.INVALID_URL
    assert info.value.message.startswith("redirect to an invalid URL refused")


# RFC 6052 section 2.4 examples: 192.0.2.33 embedded under each prefix length. 192.0.2.33 is
# documentation space (refused), which is exactly what the translator would reach.
RFC6052 = [
    pytest.param("2001:db8::/32", "2001:db8:c000:221::", id="len-32"),
    pytest.param("2001:db8:100::/40", "2001:db8:1c0:2:21::", id="len-40"),
    pytest.param("2001:db8:122::/48", "2001:db8:122:c000:2:2100::", id="len-48"),
    pytest.param("2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::", id="len-56"),
    pytest.param("2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100:0", id="len-64"),
    pytest.param("2001:db8:122:344::/96", "2001:db8:122:344::192.0.2.33", id="len-96"),
]


@pytest.mark.parametrize(("prefix", "address"), RFC6052)
def test_operator_nat64_prefixes_unwrap_per_rfc6052(prefix: str, address: str) -> None:
    policy = AddressPolicy(nat64_prefixes=(IPv6Network(prefix),), allow=(IPv6Network(prefix),))
    reason = policy.blocked_reason(ip_address(address))
    assert reason == f"NAT64 IPv6 under {prefix} of 192.0.2.33 (documentation)"


def test_an_operator_nat64_answer_for_a_private_a_record_is_refused() -> None:
    # A DNS64 host synthesises a global-looking AAAA for a name whose A record is 10.1.2.3.
    prefix = "2600:1f00:64::/96"
    synthesised = "2600:1f00:64::a01:203"
    assert DEFAULT_POLICY.blocked_reason(ip_address(synthesised)) is None  # the defect without the setting
    policy = AddressPolicy(nat64_prefixes=(IPv6Network(prefix),))
    assert policy.blocked_reason(ip_address(synthesised)) == f"NAT64 IPv6 under {prefix} of 10.1.2.3 (private)"
    assert policy.blocked_reason(ip_address("2600:1f00:64::808:808")) is None  # a public A record still works


@pytest.mark.parametrize("prefix", ["2001:db8::/33", "2001:db8::/128", "10.0.0.0/8"])
def test_nat64_prefixes_of_other_lengths_are_refused(prefix: str) -> None:
    with pytest.raises(ValueError):
        AddressPolicy.parse_nat64_prefixes(prefix)
    with pytest.raises(WebError) as info:
        parse_settings({"netguard": {"nat64_prefixes": prefix}})
    assert info.value.code == WebErrorCode.CONFIG_INVALID


def test_the_runtime_applies_the_configured_nat64_prefix() -> None:
    settings = parse_settings(environ={"DSWEB_NAT64_PREFIXES": "2600:1f00:64::/96, 2001:db8:122::/48"})
    assert AddressPolicy.parse_nat64_prefixes(settings.netguard.nat64_prefixes) == (
        IPv6Network("2600:1f00:64::/96"),
        IPv6Network("2001:db8:122::/48"),
    )
    runtime = build_runtime(lambda: settings)
    with pytest.raises(WebError) as info:
        asyncio.run(runtime.web.fetch(FetchRequest("http://[2600:1f00:64::a9fe:a9fe]/")))
    assert info.value.code == WebErrorCode.BLOCKED_URL
    assert "cloud metadata endpoint" in info.value.message


NUMERIC_SPELLINGS = [
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://017700000001/",
    "http://0x7f000001/",
    "http://0x7f.0.0.1/",
    "http://127.1/",
    "http://0/",
    "http://134744072/",  # 8.8.8.8: public, still refused the same way
    "http://010.8.8.8/",
    "http://0x8.8.8.8/",
]


@pytest.mark.parametrize("url", NUMERIC_SPELLINGS)
def test_every_non_canonical_numeric_host_gets_one_code(url: str) -> None:
    with pytest.raises(WebError) as info:
        check_url(url, max_length=2048, policy=DEFAULT_POLICY)
    assert info.value.code == WebErrorCode.INVALID_URL


def test_canonical_literals_are_judged_by_the_policy() -> None:
    with pytest.raises(WebError) as info:
        check_url("http://127.0.0.1/", max_length=2048, policy=DEFAULT_POLICY)
    assert info.value.code == WebErrorCode.BLOCKED_URL
    assert str(check_url("http://8.8.8.8/", max_length=2048, policy=DEFAULT_POLICY)) == "http://8.8.8.8/"
