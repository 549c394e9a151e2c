"""Rows for the false passes an outside hunt found under ``dsweb certify --profile ssrf`` (seed 002's SSRF
rule): private IP literals fetched directly, a name's verdict or lookup trusted on a later connection (the next
fetch, a same-host redirect hop, a retry), and IPv4 judged by is_global or by a hand list of the tested ranges.
Each wrong reading is made in the reference and fails exactly the rows that name it."""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import IPv4Address, IPv4Network, ip_address

import httpcore
import httpx
import pytest

from dsweb_ref import netguard
from dsweb_ref.certification.checks import ssrf
from dsweb_ref.netguard import addresses, resolve, transport, urls
from dsweb_ref.netguard.addresses import AddressPolicy, IPAddress
from dsweb_ref.netguard.transport import PinnedNetworkBackend
from dsweb_ref.providers import http_fetch
from dsweb_ref.providers.http_fetch import HttpFetchProvider

from ._readings import failing_rows, patch_reading

SPECIAL = "ssrf.resolve.special_ranges"
REBINDING = "ssrf.resolve.rebinding"
REDIRECT = "ssrf.redirect.private"
LITERAL_ROWS = {"literal-private", "literal-ipv6-loopback", "literal-ipv6-unspecified", "literal-cgnat",
                "literal-nat64-loopback"}
V4_ROWS = {"oracle-metadata", "ipv4-dummy", "reserved-240", "broadcast"}
FLAGS = "host.is_private or host.is_loopback or host.is_link_local or host.is_unspecified"


def _special_rows(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    return failing_rows(ssrf, "SPECIAL", SPECIAL, monkeypatch)


def _literal_rows(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    return failing_rows(ssrf, "SPECIAL_LITERALS", SPECIAL, monkeypatch)


def _rebinding_rows(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    return failing_rows(ssrf, "REBINDING", REBINDING, monkeypatch)


def _hop_rows(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    return failing_rows(ssrf, "REBOUND_HOPS", REDIRECT, monkeypatch)


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _literal_rows(monkeypatch) == set()
    assert _rebinding_rows(monkeypatch) == set()
    assert _hop_rows(monkeypatch) == set()
    monkeypatch.setattr(ssrf, "SPECIAL", tuple(c for c in ssrf.SPECIAL if c.name in V4_ROWS))
    assert _special_rows(monkeypatch) == set()


# --- ssrf.resolve.special_ranges: IP literals ---------------------------------------------------------------


def _judge_literals(check_url_text: str, vet_host_text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both places the reference judges a literal host (the URL check, the dial) read the same wrong way."""
    patch_reading(urls, "check_url", "reason = policy.blocked_reason(host)", check_url_text, monkeypatch,
                  netguard, http_fetch)
    patch_reading(resolve, "vet_host", "_check(host, parsed, policy, literal=True)", vet_host_text, monkeypatch,
                  netguard, transport)


def test_literals_never_judged_fail_every_literal_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: IP-literal hosts never judged, only the answers of names (hunt mode literal-trusted)
    _judge_literals("reason = None", "pass", monkeypatch)
    assert _literal_rows(monkeypatch) == LITERAL_ROWS


def test_literals_judged_by_python_flags_fail_the_cgnat_and_nat64_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: literals judged by is_private/is_loopback/is_link_local/is_unspecified alone (literal-is-private)
    _judge_literals(f"reason = policy.blocked_reason(host) if {FLAGS} else None",
                    f"if {FLAGS.replace('host.', 'parsed.')}:\n            _check(host, parsed, policy, literal=True)",
                    monkeypatch)
    assert _literal_rows(monkeypatch) == {"literal-cgnat", "literal-nat64-loopback"}


# --- ssrf.resolve.special_ranges: IPv4 beyond the tested ranges ---------------------------------------------


@pytest.mark.skipif(not ip_address("192.0.0.192").is_global, reason="this Python's is_global refuses 192.0.0.0/24")
def test_ipv4_judged_by_is_global_without_metadata_fails_the_192_0_0_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: IPv4 judged by `not is_global or multicast or reserved`, no range or metadata table; IPv6 as the
    # reference, unwrapped to the same IPv4 rule (v4-is-global-no-metadata)
    reference = AddressPolicy.blocked_reason

    def blocked_reason(self: AddressPolicy, address: IPAddress) -> str | None:
        if isinstance(address, IPv4Address):
            return "not global" if not address.is_global or address.is_multicast or address.is_reserved else None
        return reference(self, address)

    monkeypatch.setattr(AddressPolicy, "blocked_reason", blocked_reason)
    assert _special_rows(monkeypatch) == {"oracle-metadata", "ipv4-dummy"}


def test_a_hand_list_of_the_tested_ranges_fails_the_rows_outside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a hand-written IPv4 list of exactly the tested ranges, plus the metadata table
    # (metadata-table-only-v4-ranges-rfc1918): 192.0.0.0/24, 240.0.0.0/4, 255.255.255.255, the documentation
    # ranges and multicast left open
    tested = {"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
              "192.168.0.0/16", "198.18.0.0/15"}
    monkeypatch.setattr(addresses, "_V4_BLOCKED", tuple(
        (net, why) for net, why in addresses._V4_BLOCKED if net in {IPv4Network(n) for n in tested}))
    patch_reading(addresses, "_v4_reason", "if not address.is_global or address.is_multicast or address.is_reserved:",
                  "if False:", monkeypatch)
    assert _special_rows(monkeypatch) == {"ipv4-dummy", "reserved-240", "broadcast", "documentation-1",
                                          "documentation-2", "documentation-3", "multicast"}


# --- ssrf.resolve.rebinding, ssrf.redirect.private: later connections and retries ------------------------------


async def _dial_a_fresh_lookup(
    backend: PinnedNetworkBackend, host: str, port: int, timeout: float | None  # noqa: ASYNC109
) -> httpcore.AsyncNetworkStream:
    """The wrong step every reading below shares: look ``host`` up again and dial the first answer unchecked."""
    answers = await backend.resolver(host)
    return await backend._inner.connect_tcp(answers[0], port, timeout=timeout)


def test_a_verdict_remembered_for_a_name_fails_the_later_connection_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a name that passed once trusted; a later connection looks it up again and dials unchecked
    # (host-verdict-cached): the next fetch and a same-host redirect hop are both later connections
    checked = PinnedNetworkBackend.connect_tcp
    passed: set[str] = set()

    async def connect_tcp(
        self: PinnedNetworkBackend, host: str, port: int, timeout: float | None = None,  # noqa: ASYNC109
        local_address: str | None = None, socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        if host in passed:
            return await _dial_a_fresh_lookup(self, host, port, timeout)
        stream = await checked(self, host, port, timeout, local_address, socket_options)
        passed.add(host)
        return stream

    monkeypatch.setattr(PinnedNetworkBackend, "connect_tcp", connect_tcp)
    assert _rebinding_rows(monkeypatch) == {"fetched-again"}
    passed.clear()
    assert _hop_rows(monkeypatch) == {"same-host-rebound"}


def test_an_unpinned_redirect_hop_fails_the_same_host_rebound_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a same-origin redirect hop connected by a fresh, unchecked lookup (redirect-hop-unpinned)
    checked, next_hop = PinnedNetworkBackend.connect_tcp, HttpFetchProvider._next_hop
    hops: set[str] = set()  # hosts a redirect hop is about to connect to

    def _next_hop(self: HttpFetchProvider, url: httpx.URL, response: httpx.Response, count: int) -> httpx.URL:
        target = next_hop(self, url, response, count)  # the Location still checked, the same-origin rule kept
        hops.add(target.host)
        return target

    async def connect_tcp(
        self: PinnedNetworkBackend, host: str, port: int, timeout: float | None = None,  # noqa: ASYNC109
        local_address: str | None = None, socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        if host in hops:
            hops.discard(host)
            return await _dial_a_fresh_lookup(self, host, port, timeout)
        return await checked(self, host, port, timeout, local_address, socket_options)

    monkeypatch.setattr(HttpFetchProvider, "_next_hop", _next_hop)
    monkeypatch.setattr(PinnedNetworkBackend, "connect_tcp", connect_tcp)
    assert _rebinding_rows(monkeypatch) == set()
    assert _hop_rows(monkeypatch) == {"same-host-rebound"}


def test_a_retry_by_a_fresh_lookup_fails_the_dead_then_private_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: every validated answer refusing the connection, a second lookup dialled unchecked (retry-fresh-lookup)
    checked = PinnedNetworkBackend.connect_tcp

    async def connect_tcp(
        self: PinnedNetworkBackend, host: str, port: int, timeout: float | None = None,  # noqa: ASYNC109
        local_address: str | None = None, socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            return await checked(self, host, port, timeout, local_address, socket_options)
        except (httpcore.ConnectError, httpcore.ConnectTimeout):
            return await _dial_a_fresh_lookup(self, host, port, timeout)

    monkeypatch.setattr(PinnedNetworkBackend, "connect_tcp", connect_tcp)
    assert _rebinding_rows(monkeypatch) == {"dead-then-private"}
    assert _hop_rows(monkeypatch) == set()
