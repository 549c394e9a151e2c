"""Issue 24, the outside hunt over seed 002's evidence pipeline: wrong pipelines certified before these rows
(literal result URLs outside public space kept, no cap of four queries, searches one at a time, the domain
share counted per query, relative Desktop/Documents paths searched). Each wrong reading is made in the
reference and must fail exactly the rows that name it."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from ipaddress import IPv4Address, IPv6Address, ip_address, ip_network
from typing import Any

import pytest

from dsweb_ref import WebError
from dsweb_ref.certification.checks import evidence, evidence_diversity
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.netguard import DEFAULT_POLICY, AddressPolicy, check_url
from dsweb_ref.netguard.addresses import METADATA_ADDRESSES, IPAddress, _embedded_v4
from dsweb_ref.tools import _evidence_guard, _evidence_rank, evidence_search
from dsweb_ref.tools._evidence_rank import Candidate, registrable_domain

from ._readings import failing_rows, patch_reading
from .conftest import run

UNSAFE = "evidence.unsafe_dropped"
BATCH = "evidence.batch"
LOCAL = "evidence.local_refused"
DIVERSITY = "evidence.diversity"
V6_ROWS = {"ipv6-loopback", "ipv6-link-local", "ipv6-unique-local"}


def test_the_reference_passes_the_checks_with_the_new_rows() -> None:
    report = run(reference_target(), only=[UNSAFE, BATCH, LOCAL, DIVERSITY])
    assert {r.check.id: r.outcome.value for r in report.results} == dict.fromkeys(
        [UNSAFE, BATCH, LOCAL, DIVERSITY], "passed"
    ), [r.reason for r in report.results]


def test_every_non_public_row_is_refused_by_the_reference_validation_and_read() -> None:
    for case in evidence.NON_PUBLIC:
        with pytest.raises(WebError):
            check_url(case["url"], max_length=2048, policy=DEFAULT_POLICY)
    assert len(evidence.NON_PUBLIC) <= evidence.RESULTS_SEEN  # one query of them, none cut


def _judged_by(
    v4: Callable[[IPv4Address], bool], v6: Callable[[IPv6Address], bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pipeline's result-URL filter with its own address rule (True: refused); an IPv6 literal that carries
    an IPv4 address is judged as that address. web_fetch keeps the reference's rule."""

    class Wrong(AddressPolicy):
        def blocked_reason(self, address: IPAddress) -> str | None:
            if isinstance(address, IPv6Address):
                embedded = _embedded_v4(address, ())
                refused = v4(embedded[1]) if embedded is not None else v6(address)
            else:
                refused = v4(address)
            return "refused" if refused else None

    right = evidence_search.check_url

    def wrong_check(raw: str, *, max_length: int, policy: AddressPolicy) -> Any:
        return right(raw, max_length=max_length, policy=Wrong())

    monkeypatch.setattr(evidence_search, "check_url", wrong_check)
    # Hunt J's wrapped literals (site-local, and IPv6 forms this unwrapping leaves out) fail a rule that judges
    # IPv6 by its own flags too: their own tests judge them (test_hunt_j_evidence_readings.py).
    monkeypatch.setattr(evidence, "WRAPPED", ())


def _in(*networks: str) -> Callable[[IPv4Address], bool]:
    nets = [ip_network(n) for n in networks]
    return lambda a: any(a in n for n in nets)


def _reference(a: IPAddress) -> bool:
    return DEFAULT_POLICY.blocked_reason(a) is not None


def _flags(a: IPAddress) -> bool:
    return a.is_private or a.is_loopback or a.is_link_local or a.is_unspecified


def test_ipv6_literals_judged_only_when_they_carry_ipv4_fail_exactly_the_ipv6_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: evidence-ipv6-literals-open ([::1] and [fe80::a9fe:a9fe] fetched and cited)
    _judged_by(_reference, lambda a: False, monkeypatch)
    assert failing_rows(evidence, "NON_PUBLIC", UNSAFE, monkeypatch) == V6_ROWS


def test_only_loopback_and_link_local_ipv6_refused_fails_exactly_the_unique_local_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: IPv6 judged by is_loopback / is_link_local (and the metadata table): fc00::/7 kept
    _judged_by(_reference, lambda a: a.is_loopback or a.is_link_local or a in METADATA_ADDRESSES, monkeypatch)
    assert failing_rows(evidence, "NON_PUBLIC", UNSAFE, monkeypatch) == {"ipv6-unique-local"}


def test_python_flags_without_a_metadata_table_fail_exactly_the_cgnat_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: evidence-is-private-filter (100.100.100.200, Alibaba's metadata address, fetched and cited)
    _judged_by(_flags, _flags, monkeypatch)
    oracle = set() if ip_address("192.0.0.192").is_private else {"oracle-metadata"}  # public to Python 3.11.7
    assert failing_rows(evidence, "NON_PUBLIC", UNSAFE, monkeypatch) == {"cgnat", "cgnat-metadata"} | oracle


def test_python_flags_with_the_metadata_table_fail_exactly_the_cgnat_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: is_private / is_loopback / is_link_local plus the metadata table: the rest of 100.64.0.0/10 kept
    _judged_by(
        lambda a: _flags(a) or a in METADATA_ADDRESSES, lambda a: _flags(a) or a in METADATA_ADDRESSES, monkeypatch
    )
    assert failing_rows(evidence, "NON_PUBLIC", UNSAFE, monkeypatch) == {"cgnat"}


def test_a_hand_list_with_one_metadata_address_fails_exactly_the_oracle_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a hand-written list of private IPv4 ranges and 169.254.169.254 alone: 192.0.0.192 kept
    ranges = _in("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
                 "192.168.0.0/16", "198.18.0.0/15")  # fmt: skip
    _judged_by(ranges, _reference, monkeypatch)
    assert failing_rows(evidence, "NON_PUBLIC", UNSAFE, monkeypatch) == {"oracle-metadata"}


def test_rfc1918_read_as_ten_slash_eight_fails_exactly_the_172_and_192_168_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the private ranges the older rows name (10/8, loopback, link-local) and CGNAT, nothing else
    ranges = _in("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16")
    _judged_by(lambda a: ranges(a) or a in METADATA_ADDRESSES, _reference, monkeypatch)
    assert failing_rows(evidence, "NON_PUBLIC", UNSAFE, monkeypatch) == {"rfc1918-172", "rfc1918-192-168"}


def _searches_in_pools_of(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline's searches run ``size`` at a time (the page fetches as the reference runs them)."""
    right = evidence_search._settle_until

    async def settle(calls: Sequence[Awaitable[Any]], deadline: float, what: str) -> list[Any]:
        if what != "the search":
            return await right(calls, deadline, what)
        slots = asyncio.Semaphore(size)

        async def one(call: Awaitable[Any]) -> Any:
            try:
                async with slots:
                    return await call
            finally:
                if isinstance(call, Coroutine):
                    call.close()  # cancelled while waiting for a slot: never started, closed quietly

        return await right([one(c) for c in calls], deadline, what)

    monkeypatch.setattr(evidence_search, "_settle_until", settle)


def test_searches_one_at_a_time_fail_exactly_the_concurrency_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: evidence-sequential (the evidence searches run one after another)
    _searches_in_pools_of(1, monkeypatch)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == {"two-queries", "four-queries"}


def test_searches_two_at_a_time_fail_exactly_the_four_query_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a pool of two searches
    _searches_in_pools_of(2, monkeypatch)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == {"four-queries"}


def test_no_cap_of_four_fails_exactly_the_five_query_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: evidence-no-query-cap (a 5-query call runs 5 searches)
    right = "if len(queries) > settings.max_queries:"
    patch_reading(evidence_search, "parse_evidence_queries", right, "if len(queries) > 64:", monkeypatch)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == {"five-queries"}


def test_a_cap_of_three_fails_exactly_the_four_query_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a cap below seed 002's four (a batch of four refused); the retry-marker row's batch is four too
    right = "if len(queries) > settings.max_queries:"
    patch_reading(evidence_search, "parse_evidence_queries", right, "if len(queries) > 3:", monkeypatch)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == {"four-queries", "cut-keeps-retry-marker"}


_RIGHT = _evidence_guard._LOCAL_PATH.pattern
_FOLDERS = r"\b(?:desktop|documents|downloads)[\\/]"


@pytest.mark.parametrize(
    ("wrong", "rows"),
    [
        # catches: evidence-local-no-desktop (relative Desktop/Documents paths not recognised)
        (_RIGHT.replace(_FOLDERS, "(?!)"), {"documents-relative", "desktop-backslash", "downloads-relative"}),
        # catches: Desktop/Documents paths recognised with a forward slash only
        (_RIGHT.replace(_FOLDERS, r"\b(?:desktop|documents|downloads)/"), {"desktop-backslash"}),
    ],
    ids=["folders-not-recognised", "forward-slash-only"],
)
def test_relative_desktop_and_documents_paths_missed_fail_exactly_their_rows(
    wrong: str, rows: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert wrong != _RIGHT
    monkeypatch.setattr(_evidence_guard, "_LOCAL_PATH", re.compile(wrong, _evidence_guard._LOCAL_PATH.flags))
    assert failing_rows(evidence, "LOCAL", LOCAL, monkeypatch) == rows


def _share_per_query(ranked: Sequence[Sequence[Candidate]], *, max_pages: int, max_per_domain: int) -> list[Candidate]:
    """The reference's selection with the domain share counted per query: one page per query, then round robin."""
    picked: list[Candidate] = []
    urls: set[str] = set()
    share: dict[tuple[int, str], int] = {}

    def fits(c: Candidate) -> bool:
        return c.url not in urls and share.get((c.query_index, registrable_domain(c.host)), 0) < max_per_domain

    def take(c: Candidate) -> None:
        picked.append(c)
        urls.add(c.url)
        key = (c.query_index, registrable_domain(c.host))
        share[key] = share.get(key, 0) + 1

    for queue in ranked:
        choice = next((c for c in queue if fits(c)), None)
        if choice is not None and len(picked) < max_pages:
            take(choice)
    queues = [list(q) for q in ranked]
    while len(picked) < max_pages and any(queues):
        for queue in queues:
            while queue and not fits(queue[0]):
                queue.pop(0)
            if queue and len(picked) < max_pages:
                take(queue.pop(0))
    return picked


def test_the_domain_share_counted_per_query_fails_exactly_the_shared_site_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: evidence-domain-share-per-query (all 8 pages from one site, the other sites unread); the crowded rows
    # of four queries show it too: each query takes two pages of the crowded domain
    assert evidence_search.select_pages is _evidence_rank.select_pages
    monkeypatch.setattr(evidence_search, "select_pages", _share_per_query)
    crowded = {"subdomains", "absolute-names", "letter-case", "co-uk", "github-io"}
    assert failing_rows(evidence_diversity, "DIVERSITY", DIVERSITY, monkeypatch) == {"shared-site", *crowded}
