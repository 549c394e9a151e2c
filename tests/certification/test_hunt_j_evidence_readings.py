"""An outside hunt (J) over seed 002's evidence pipeline: wrong readings dsweb certify passed. Blocked names compared
with the host as written (harbour.localhost., with its final dot, taken for a public name); only localhost blocked
by name (the cloud metadata server's name, .internal and .local kept); result literals judged by Python's is_global
(IPv6 wrapping a loopback or private IPv4 address, and site-local, kept); the retry memory cleared once a call finds
evidence; cited URLs percent-decoded (%2F and %26 decoded: other resources). Each wrong reading is made in the
reference and must fail exactly the rows that name it; variants the seed leaves open stay certified."""

from __future__ import annotations

import inspect
import re
import textwrap
from ipaddress import ip_address
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from dsweb_ref import WebError, WebErrorCode
from dsweb_ref.certification.checks import evidence
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.netguard import DEFAULT_POLICY, AddressPolicy, check_url, hosts, resolve, urls
from dsweb_ref.netguard.addresses import METADATA_ADDRESSES, IPAddress
from dsweb_ref.tools import evidence_search

from ._readings import fails_exactly, passes, patch_reading
from .conftest import run

UNSAFE = "evidence.unsafe_dropped"
RETRY = "evidence.retry_refused"
CITES = "evidence.lines_cite_results"
ABSOLUTE_ROWS = {"localhost-absolute", "metadata-name-absolute"}
NAME_ROWS = {"metadata-name", "internal-name", "local-name"}
# From a review of these rows: names compared in the letter case written, an IPv4 address in absolute form.
CASE_ROWS = {"upper-case-localhost", "upper-case-metadata-absolute"}
V4_DOT_ROWS = {"loopback-absolute", "private-absolute"}
WRAPPED_ROWS = {c.name for c in evidence.WRAPPED}
AFTER_EVIDENCE = "after-evidence"
PERCENT_ESCAPES = "percent-escapes"
NEW_ROWS = {
    UNSAFE: (("INTERNAL_NAMES", ABSOLUTE_ROWS | NAME_ROWS | CASE_ROWS | V4_DOT_ROWS), ("WRAPPED", WRAPPED_ROWS)),
    RETRY: (("RETRIES", {AFTER_EVIDENCE}),),
    CITES: (("CITES", {PERCENT_ESCAPES}),),
}
BLOCKED_NAME_TEST = "if name in BLOCKED_NAMES or name.endswith(BLOCKED_NAME_SUFFIXES):"


def test_the_reference_passes_the_checks_with_the_new_rows() -> None:
    for check_id, tables in NEW_ROWS.items():
        for table, rows in tables:
            assert rows <= {c.name for c in getattr(evidence, table)}, (check_id, table)
    report = run(reference_target(), only=sorted(NEW_ROWS))
    assert {r.check.id: r.outcome.value for r in report.results} == dict.fromkeys(NEW_ROWS, "passed"), [
        r.reason for r in report.results
    ]


def test_every_new_unsafe_row_is_refused_by_the_reference_validation_and_read() -> None:
    for case in (*evidence.INTERNAL_NAMES, *evidence.WRAPPED):
        with pytest.raises(WebError) as refused:
            check_url(case["url"], max_length=2048, policy=DEFAULT_POLICY)
        assert refused.value.code == WebErrorCode.BLOCKED_URL, (case.name, refused.value.message)
    # Two queries for the names, one for the literals: none cut by the results a query reads.
    assert len(evidence.INTERNAL_NAMES) <= 2 * evidence.RESULTS_SEEN and len(evidence.WRAPPED) <= evidence.RESULTS_SEEN


def test_every_unsafe_row_names_a_url_of_its_own_as_the_check_compares_them() -> None:
    # the check compares fetched and cited URLs host-folded (case, final dot): two rows naming one URL that way
    # would let one row's catch pass for the other's
    rows = (*evidence.UNSAFE, *evidence.NON_PUBLIC, *evidence.INTERNAL_NAMES, *evidence.WRAPPED)
    keys = [evidence._host_folded(case["url"]) for case in rows]
    assert len(set(keys)) == len(keys)
    assert evidence._host_folded("http://Harbour.LOCALHOST./x?A#f") == "http://harbour.localhost/x?A"
    assert evidence._host_folded("http://[::1]:80/x") == "http://[::1]:80/x"


def test_blocked_names_compared_as_written_fail_exactly_the_absolute_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the host as written (final dot kept) compared with the blocked names: harbour.localhost. and
    # metadata.google.internal. handed to the Fetch API and cited
    wrong = "if host.lower() in BLOCKED_NAMES or host.lower().endswith(BLOCKED_NAME_SUFFIXES):"
    patch_reading(hosts, "parse_host", BLOCKED_NAME_TEST, wrong, monkeypatch, urls, resolve)
    fails_exactly(evidence, "INTERNAL_NAMES", UNSAFE, ABSOLUTE_ROWS | {"upper-case-metadata-absolute"}, monkeypatch)


def test_only_localhost_blocked_by_name_fails_exactly_the_metadata_internal_and_local_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: metadata.google.internal, .internal and .local names kept (the metadata name in its absolute form
    # too: its row names both readings)
    wrong = 'if name == "localhost" or name.endswith(".localhost"):'
    patch_reading(hosts, "parse_host", BLOCKED_NAME_TEST, wrong, monkeypatch, urls, resolve)
    fails_exactly(evidence, "INTERNAL_NAMES", UNSAFE,
                  NAME_ROWS | {"metadata-name-absolute", "upper-case-metadata-absolute"}, monkeypatch)


def _parse_host_reading(replacements: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``parse_host`` with each of ``replacements`` made (a reading that changes two of its lines)."""
    source = textwrap.dedent(inspect.getsource(hosts.parse_host))
    for right, wrong in replacements.items():
        assert source.count(right) == 1, right
        source = source.replace(right, wrong)
    namespace: dict[str, Any] = dict(vars(hosts))
    exec(source, namespace)
    for module in (hosts, urls, resolve):
        monkeypatch.setattr(module, "parse_host", namespace["parse_host"])


def test_names_compared_in_the_letter_case_written_fail_exactly_the_upper_case_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the host as the URL spells it (a Go url.Hostname() keeps the case) compared with the blocked names:
    # Harbour.LOCALHOST and Metadata.Google.Internal. kept (the review's reading: labels of either case valid, the
    # host not lower-cased, and check_url handing over the host as written, not httpx's lower-cased one)
    monkeypatch.setattr(hosts, "_LABEL", re.compile(hosts._LABEL.pattern, re.IGNORECASE))
    _parse_host_reading({"name = host.lower()": "name = host"}, monkeypatch)
    written = (
        '    written = raw.split("//", 1)[-1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]\n'
        '    if not written.startswith("[") and written.rsplit(":", 1)[0].lower() == raw_host.lower():\n'
        '        raw_host = written.rsplit(":", 1)[0]\n'
        "    host = parse_host(raw_host)"
    )
    patch_reading(urls, "check_url", "    host = parse_host(raw_host)", written, monkeypatch, evidence_search)
    fails_exactly(evidence, "INTERNAL_NAMES", UNSAFE, CASE_ROWS, monkeypatch)


def test_an_ipv4_address_in_absolute_form_taken_for_a_name_fails_exactly_its_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: 127.0.0.1. and 10.0.0.5. read as names (the address looked for before the final dot is dropped, and
    # the numeric last label excused by the dot): WHATWG URL parsers read them as the addresses
    literal = "    literal = parse_ipv4_literal(name)\n"
    numeric = "if _NUMERIC_LABEL.fullmatch(labels[-1])"
    _parse_host_reading({
        '    if name.endswith("."):  # one trailing dot is the absolute form of the same name\n'
        "        name = name[:-1]\n" + literal: literal + '    if name.endswith("."):\n        name = name[:-1]\n',
        numeric + ":": numeric + ' and not host.endswith("."):',
    }, monkeypatch)
    fails_exactly(evidence, "INTERNAL_NAMES", UNSAFE, V4_DOT_ROWS, monkeypatch)


class _GlobalOnly(AddressPolicy):
    """The hunt's policy: a literal is public when Python calls it global and it is no metadata address."""

    def blocked_reason(self, address: IPAddress) -> str | None:
        return None if address.is_global and address not in METADATA_ADDRESSES else "not a global address"


def test_literals_judged_by_is_global_fail_exactly_the_wrapped_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: result URLs checked with an is_global policy (plus the metadata table): NAT64, 6to4,
    # IPv4-translated and -compatible forms of loopback or 10.0.0.7, and site-local fec0::/10, are 'global'
    right = evidence_search.check_url

    def global_only(raw: str, *, max_length: int, policy: AddressPolicy) -> httpx.URL:
        return right(raw, max_length=max_length, policy=_GlobalOnly())

    monkeypatch.setattr(evidence_search, "check_url", global_only)
    # Python 3.12.4 and later call 6to4 and local-use NAT64 not global: the rows this policy keeps are the ones
    # the running Python calls global (on 3.11 every one of them)
    kept = {c.name for c in evidence.WRAPPED if ip_address(urlsplit(c["url"]).hostname or "").is_global}
    assert {"nat64-loopback", "compatible-private", "site-local"} <= kept
    fails_exactly(evidence, "WRAPPED", UNSAFE, kept, monkeypatch)


def test_a_pipeline_refusing_more_stays_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed-open: a guard stricter than the reference (every IPv6 literal and every absolute-form name refused)
    keeps the tool out of localhost and private networks too."""
    right = evidence_search.check_url

    def stricter(raw: str, *, max_length: int, policy: AddressPolicy) -> httpx.URL:
        url = right(raw, max_length=max_length, policy=policy)
        if ":" in url.host or url.host.endswith("."):
            raise WebError(WebErrorCode.BLOCKED_URL, "IPv6 literals and absolute names are not fetched")
        return url

    monkeypatch.setattr(evidence_search, "check_url", stricter)
    passes(UNSAFE)


def test_names_no_row_decides_may_be_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed-open: no row decides .localdomain or .arpa names, so a guard that keeps them stays certified."""
    monkeypatch.setattr(hosts, "BLOCKED_NAME_SUFFIXES", (".localhost", ".local", ".internal"))
    passes(UNSAFE)


def test_retry_memory_cleared_by_evidence_fails_exactly_the_after_evidence_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: any call that finds evidence clears the dead ends ("the agent has moved on"): zzqx unknowable
    # searched again after harbour pilot roster found evidence
    right = "context.remember_empty(q.text for q in state"
    wrong = ("if any(q.evidence for q in state):\n        context.exhausted.clear()\n        context.attempts.clear()"
             f"\n    {right}")  # fmt: skip
    patch_reading(evidence_search.EvidenceSearchTool, "run", right, wrong, monkeypatch)
    fails_exactly(evidence, "RETRIES", RETRY, AFTER_EVIDENCE, monkeypatch)


CANDIDATE = "out.append(Candidate(index, position, canonical,"


def test_cited_urls_percent_decoded_fail_exactly_the_percent_escapes_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: canonical = urllib.parse.unquote(canonical): ?id=a%26b cited (and fetched) as ?id=a&b, /a%2Fb as /a/b
    wrong = 'out.append(Candidate(index, position, __import__("urllib.parse").parse.unquote(canonical),'
    patch_reading(evidence_search.EvidenceSearchTool, "_candidates", CANDIDATE, wrong, monkeypatch)
    fails_exactly(evidence, "CITES", CITES, PERCENT_ESCAPES, monkeypatch)


_UNRESERVED = evidence._UNRESERVED


def _rfc3986(url: str) -> str:
    """RFC 3986 6.2.2.1-2: escapes of unreserved characters decoded, the others' hex digits in upper case."""

    def escape(match: re.Match[str]) -> str:
        char = chr(int(match.group(0)[1:], 16))
        return char if char in _UNRESERVED else match.group(0).upper()

    return re.sub(r"%[0-9a-fA-F]{2}", escape, url)


def test_urls_normalised_as_rfc_3986_allows_pass_the_citation_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed-open: %7E cited as ~ and %2f as %2F (the same URL by RFC 3986 6.2.2) is still the result's URL."""
    assert _rfc3986("https://h.example/%7Ea%2fb?x=%41%26") == "https://h.example/~a%2Fb?x=A%26"
    row = next(c for c in evidence.CITES if c.name == PERCENT_ESCAPES)
    assert any(_rfc3986(url) != url for url in row["exact"])  # the variant changes what the row cites
    monkeypatch.setattr(evidence_search, "_rfc3986", _rfc3986, raising=False)
    wrong = "out.append(Candidate(index, position, _rfc3986(canonical),"
    patch_reading(evidence_search.EvidenceSearchTool, "_candidates", CANDIDATE, wrong, monkeypatch)
    passes(CITES)


def test_the_citation_key_keeps_reserved_escapes() -> None:
    key = evidence.resource_key
    spelled = "HTTPS://Harbour.Example.com/%7etugs/a%2fb?id=a%26b#top"
    assert key(spelled) == "https://harbour.example.com/~tugs/a%2Fb?id=a%26b"
    assert key("https://harbour.example.com/a%2Fb") != key("https://harbour.example.com/a/b")
    assert key("https://harbour.example.com/?id=a%26b") != key("https://harbour.example.com/?id=a&b")
