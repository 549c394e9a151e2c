"""A read-only hunt (C) over seed 002's evidence pipeline and fetcher found wrong readings the suite certified; hunt P
added the rows that reject them. Seed 002: a URL to be fetched passes host/IP validation, so that search results
never lead the tool to localhost or a private network; the pipeline does not trust the engine's ranking alone but
picks relevant sources not crowded into one domain without need.

- P-C2: the result-URL guard read the host otherwise than the parser that fetches it. A guard reading it with
  urllib.parse (no UTS 46 mapping: 127\u30020\u30020\u30021 taken for a name, 127.0.0.%31 too) or keeping a URL
  httpx reads with no host ("nothing to judge": http:127.0.0.1/..., which the URL Standard reads as
  http://127.0.0.1/...) sent loopback, private and metadata addresses to the Fetch API (evidence.unsafe_dropped's
  SPELLED rows); the same guard in web_fetch, with literals never judged at connect time, let httpx dial 127.0.0.1
  (ssrf.url.odd_text's ideographic-dots and fullwidth-dots rows).
- P-C3: result URLs judged by a hand list of private ranges without 0.0.0.0/8 (evidence.unsafe_dropped's
  unspecified row).
- P-C1: the domain share relaxed per query instead of per call (evidence.diversity's one-site-queries row).
- P-C4: lines citing the URL the page was read at after a same-origin redirect, not the result's. A review judged
  it right (seed 002 keeps a source URL on every line, and does not say which of the two that is): evidence.html_page's
  redirect control accepts either, and fails a line citing its fact under any other URL.

Each wrong reading is made in the reference as the hunt made it and fails exactly its rows; the reference passes."""

from __future__ import annotations

from ipaddress import IPv6Address, ip_address, ip_network
from urllib.parse import urlsplit

import httpx
import pytest

from dsweb_ref import WebError
from dsweb_ref._exceptions import WebErrorCode
from dsweb_ref.certification.checks import evidence, evidence_diversity, evidence_html, ssrf
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.netguard import DEFAULT_POLICY, AddressPolicy, check_url, check_url_text, resolve, transport
from dsweb_ref.netguard.addresses import METADATA_ADDRESSES, IPAddress, _embedded_v4
from dsweb_ref.netguard.hosts import BLOCKED_NAME_SUFFIXES, BLOCKED_NAMES, parse_ipv4_literal
from dsweb_ref.providers import http_fetch
from dsweb_ref.tools import _evidence_rank, evidence_search

from ._readings import failing_rows, fails_exactly, keep_rows, passes, passes_rows, patch_reading
from .conftest import run

UNSAFE = "evidence.unsafe_dropped"
ODD = "ssrf.url.odd_text"
HTML = "evidence.html_page"
CONTROL_URL = f"http://{evidence_html.HOST}{evidence_html.CONTROL_PATH}"
DIVERSITY = "evidence.diversity"
MAPPED_ROWS = {"ideographic-dots", "fullwidth-dots", "escaped-host"}  # hosts urllib.parse leaves unmapped
HOSTLESS_ROWS = {"no-slashes", "one-slash", "three-slashes"}  # no host to httpx, one to the URL Standard
ODD_ROWS = {"ideographic-dots", "fullwidth-dots"}
UNSPECIFIED = "unspecified"
ONE_SITE = "one-site-queries"
# The pipeline handing the result URL on as the search returned it (no re-spelling by httpx): the check must know
# the URL either way.
CANONICAL = "canonical = str(url.copy_with(fragment=None))"
AS_RETURNED = "canonical = source.url.split('#')[0]"


def _as_returned(raw: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if raw:
        patch_reading(evidence_search.EvidenceSearchTool, "_candidates", CANONICAL, AS_RETURNED, monkeypatch)


# --- P-C2: the host read otherwise than the parser that fetches it ------------------------------------------------


def urllib_guard(raw: object, *, max_length: int, policy: AddressPolicy) -> httpx.URL:
    """The hunt's guard: the host as urllib.parse reads it (no UTS 46 mapping, escapes kept), judged as an address,
    a numeric spelling or a blocked name; anything else taken for a public name. The client is still httpx."""
    if not isinstance(raw, str):
        raise WebError(WebErrorCode.INVALID_URL, "URL must be a string")
    if len(raw) > max_length:
        raise WebError(WebErrorCode.INVALID_URL, "too long")
    check_url_text(raw)
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 (urllib reads the port only when asked: a bad one raises here)
        url = httpx.URL(raw)
    except Exception:
        raise WebError(WebErrorCode.INVALID_URL, "invalid URL") from None
    if parts.scheme not in ("http", "https"):
        raise WebError(WebErrorCode.INVALID_URL, "scheme")
    if parts.username is not None or parts.password is not None:
        raise WebError(WebErrorCode.BLOCKED_URL, "credentials")
    name = (parts.hostname or "").rstrip(".")
    if not name:
        raise WebError(WebErrorCode.INVALID_URL, "no host")
    try:
        address: IPAddress | None = ip_address(name.split("%")[0])
    except ValueError:
        address = parse_ipv4_literal(name)
    if address is None:
        if name in BLOCKED_NAMES or name.endswith(BLOCKED_NAME_SUFFIXES):
            raise WebError(WebErrorCode.BLOCKED_URL, "local name")
        return url
    if policy.blocked_reason(address) is not None:
        raise WebError(WebErrorCode.BLOCKED_URL, "not public")
    return url


def keeps_hostless(raw: object, *, max_length: int, policy: AddressPolicy) -> httpx.URL:
    """The hunt's guard: the reference's, but an http(s) URL httpx reads with no host kept ('nothing to judge')."""
    try:
        return check_url(raw, max_length=max_length, policy=policy)
    except WebError:
        try:
            url = httpx.URL(str(raw))
            hostless = not url.raw_host
        except Exception:
            raise WebError(WebErrorCode.INVALID_URL, "invalid URL") from None
        if url.scheme in ("http", "https") and hostless:
            return url
        raise


def test_the_reference_refuses_every_new_row_and_passes_the_checks() -> None:
    for case in (*evidence.SPELLED, *(c for c in evidence.UNSAFE if c.name == UNSPECIFIED)):
        with pytest.raises(WebError):
            check_url(case["url"], max_length=2048, policy=DEFAULT_POLICY)
    for case in ssrf.ODD_URLS:
        if case.name in ODD_ROWS:
            with pytest.raises(WebError) as refused:
                check_url(case["url"], max_length=2048, policy=DEFAULT_POLICY)
            assert refused.value.code == WebErrorCode.BLOCKED_URL, refused.value.message
    report = run(reference_target(), only=[UNSAFE, ODD, DIVERSITY])
    assert {r.check.id: r.outcome.value for r in report.results} == dict.fromkeys([UNSAFE, ODD, DIVERSITY], "passed"), [
        r.reason for r in report.results
    ]


def test_the_spelled_rows_fit_their_query_and_each_names_a_url_of_its_own() -> None:
    # one query of them (the reference reads RESULTS_SEEN results a query), and the unsafe rows with the safe control
    # in their two queries
    assert len(evidence.SPELLED) <= evidence.RESULTS_SEEN
    assert len(evidence.UNSAFE) + 1 <= 2 * evidence.RESULTS_SEEN
    rows = (*evidence.UNSAFE, *evidence.NON_PUBLIC, *evidence.INTERNAL_NAMES, *evidence.WRAPPED, *evidence.SPELLED)
    keys = [evidence._host_folded(case["url"]) for case in rows]
    assert len(set(keys)) == len(keys)


def test_urls_are_compared_as_the_url_standard_reads_them() -> None:
    # the check keys a fetched or cited URL as a browser's or a Fetch API's parser reads it: a pipeline that
    # re-spells a result URL (httpx serialises http:///169.254.169.254/x as http:/169.254.169.254/x) still names it
    folded = evidence._host_folded
    assert folded("http://127\u30020\u30020\u30021/a") == folded("http://127.0.0.1/a") == "http://127.0.0.1/a"
    assert folded("http://169\uff0e254\uff0e169\uff0e254/b") == "http://169.254.169.254/b"
    assert folded("http://127.0.0.%31/c") == folded("HTTP:127.0.0.1/c") == "http://127.0.0.1/c"
    assert folded("http:/10.0.0.5/d") == "http://10.0.0.5/d"
    assert folded("http:///169.254.169.254/e") == folded(str(httpx.URL("http:///169.254.169.254/e")))
    assert folded("https://B\u00fccher.example./f?%7e=1#x") == "https://xn--bcher-kva.example/f?~=1"
    assert folded("http://[::1]:80/x") == "http://[::1]:80/x" and folded("file:///etc/x") == "file:///etc/x"
    assert folded("javascript:alert('x')") == "javascript:alert('x')"


@pytest.mark.parametrize("raw", [False, True], ids=["re-spelled", "as-returned"])
def test_a_urllib_guard_fails_exactly_the_mapped_rows(raw: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the host judged as urllib.parse reads it, no UTS 46 mapping and its escapes kept: 127。0。0。1,
    # 169．254．169．254 and 127.0.0.%31 taken for names, sent to the Fetch API (httpx and the URL Standard read
    # loopback and the metadata address) and cited
    monkeypatch.setattr(evidence_search, "check_url", urllib_guard)
    _as_returned(raw, monkeypatch)
    fails_exactly(evidence, "SPELLED", UNSAFE, MAPPED_ROWS, monkeypatch)


@pytest.mark.parametrize("raw", [False, True], ids=["re-spelled", "as-returned"])
def test_hostless_urls_kept_fail_exactly_the_slash_rows(raw: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a result URL httpx reads with no host kept ("nothing to judge"): http:127.0.0.1/..., http:/10.0.0.5/...
    # and http:///169.254.169.254/... sent to the Fetch API, whose URL Standard parser reads each host
    monkeypatch.setattr(evidence_search, "check_url", keeps_hostless)
    _as_returned(raw, monkeypatch)
    fails_exactly(evidence, "SPELLED", UNSAFE, HOSTLESS_ROWS, monkeypatch)


def test_a_url_with_no_host_to_any_parser_may_be_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a malformed URL that names no host to the URL Standard either (http://:8080/harbour-fees) kept and
    # handed on: seed 002 fixes no URL syntax, and such a URL leads nowhere
    monkeypatch.setattr(evidence_search, "check_url", keeps_hostless)
    assert keeps_hostless("http://:8080/harbour-fees", max_length=2048, policy=DEFAULT_POLICY).raw_host == b""
    monkeypatch.setattr(evidence, "SPELLED", ())
    passes(UNSAFE)


def test_a_urllib_guard_in_web_fetch_fails_exactly_the_full_stop_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: web_fetch's guard reading the host with urllib.parse and literals never judged when dialled: httpx
    # maps the full stops (as the URL Standard does) and connects to 127.0.0.1 and 10.0.0.9
    monkeypatch.setattr(http_fetch, "check_url", urllib_guard)
    patch_reading(resolve, "vet_host", "_check(host, parsed, policy, literal=True)", "pass", monkeypatch, transport)
    assert failing_rows(ssrf, "ODD_URLS", ODD, monkeypatch) == ODD_ROWS


def test_a_urllib_guard_checked_again_when_dialled_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a guard that reads the host otherwise, behind a connection that judges the address it dials (the
    # reference's): nothing non-public is reached, and the seed fixes no URL syntax
    monkeypatch.setattr(http_fetch, "check_url", urllib_guard)
    keep_rows(ssrf, "ODD_URLS", tuple(sorted(ODD_ROWS)), monkeypatch)
    passes(ODD)


# --- P-C3: a hand list of private ranges without 0.0.0.0/8 --------------------------------------------------------

TYPICAL = ("10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
           "192.168.0.0/16")  # fmt: skip


class HandList(AddressPolicy):
    """The hunt's policy: IPv4 (also carried in IPv6) judged by TYPICAL and the metadata table; IPv6 otherwise as
    the reference judges it."""

    nets = tuple(ip_network(n) for n in TYPICAL)

    def blocked_reason(self, address: IPAddress) -> str | None:
        if isinstance(address, IPv6Address):
            embedded = _embedded_v4(address, ())
            if embedded is None:
                return DEFAULT_POLICY.blocked_reason(address)
            address = embedded[1]
        return "refused" if any(address in n for n in self.nets) or address in METADATA_ADDRESSES else None


def test_a_hand_list_without_the_unspecified_range_fails_exactly_the_unspecified_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: result URLs judged by a hand list of private IPv4 ranges that leaves out 0.0.0.0/8: 0.0.0.0 (a
    # connection to it reaches this machine's services) sent to the Fetch API and cited
    right = evidence_search.check_url

    def wrong(raw: object, *, max_length: int, policy: AddressPolicy) -> httpx.URL:
        return right(raw, max_length=max_length, policy=HandList())

    monkeypatch.setattr(evidence_search, "check_url", wrong)
    fails_exactly(evidence, "UNSAFE", UNSAFE, UNSPECIFIED, monkeypatch)


# --- P-C1: the domain share relaxed per query --------------------------------------------------------------------

PER_CALL = """                while queue and not fits(queue[0], relaxed):
                    queue.pop(0)"""
PER_QUERY = """                if queue and not any(fits(c, False) for c in queue):
                    while queue and not fits(queue[0], True):
                        queue.pop(0)
                    if queue and len(picked) < max_pages:
                        take(queue.pop(0))
                    continue
                while queue and not fits(queue[0], relaxed):
                    queue.pop(0)"""


def test_the_share_relaxed_per_query_fails_exactly_the_one_site_queries_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a query with no result off the crowded site has the share waived for it (per query, not per call):
    # the two one-site queries take six of the eight pages while cranes2.org ... cranes7.org go unread
    patch_reading(_evidence_rank, "select_pages", PER_CALL, PER_QUERY, monkeypatch, evidence_search)
    fails_exactly(evidence_diversity, "DIVERSITY", DIVERSITY, ONE_SITE, monkeypatch)


def test_the_reference_reads_the_floors_and_the_other_sites(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: the two one-site queries keep a page each (their floors), the rest of the bound goes to other sites
    passes_rows(evidence_diversity, "DIVERSITY", DIVERSITY, (ONE_SITE,), monkeypatch)


# --- P-C4: lines citing the URL a redirect led to ----------------------------------------------------------------

FINAL: dict[str, str] = {}  # the URL each page fetch ended at, by the URL fetched
HERE = f"__import__({__name__!r}, fromlist=['FINAL'])"  # this module, from the patched code


def _cites_final_urls(monkeypatch: pytest.MonkeyPatch, suffix: str = "") -> None:
    """The hunt's pipeline: each page's lines cite the URL its fetch ended at (after a redirect), not the result's;
    with ``suffix``, that URL with ``suffix`` appended (a URL neither the search nor the fetch gave)."""
    FINAL.clear()
    owner = evidence_search.EvidenceSearchTool
    patch_reading(owner, "_blocks", "body = result.body",
                  f"body = result.body\n        {HERE}.FINAL[url] = result.url", monkeypatch)
    patch_reading(owner, "_collect", "pages.append(PageUnits(candidate.url, candidate.title, units))",
                  f"_final = {HERE}.FINAL.get(candidate.url, candidate.url)\n"
                  f"            _final = _final + {suffix!r} if _final != candidate.url else _final\n"
                  "            titles[_final] = titles[candidate.url]\n"
                  "            pages.append(PageUnits(_final, candidate.title, units))", monkeypatch)  # fmt: skip


def test_lines_citing_the_final_url_pass_the_redirect_control(monkeypatch: pytest.MonkeyPatch) -> None:
    # open (the hunt's reading; a review judged it right): the lines of a page read through a same-origin redirect
    # the target followed and validated cite the URL it was read at. Seed 002 keeps a source URL on every line and
    # does not say whether that is the result's or the page's
    _cites_final_urls(monkeypatch)
    (result,) = run(reference_target(), only=[HTML]).results
    assert result.outcome.value == "passed", result.reason
    moved = {url: final for url, final in FINAL.items() if final != url}
    assert moved == {CONTROL_URL: f"{CONTROL_URL}-page"}  # the control's is the only page read after a redirect


def test_lines_citing_neither_url_fail_the_redirect_control(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the control's fact cited under a URL that is neither the result's nor the page's it was read at
    _cites_final_urls(monkeypatch, suffix="-copy")
    (result,) = run(reference_target(), only=[HTML]).results
    assert result.outcome.value == "failed" and result.reason.startswith(f"{evidence_html.CONTROL}: "), result.reason
    assert f"{CONTROL_URL}-page-copy" in result.reason
    # no redirect row, no control: every row of the check passes the reading
    for table in ("REFUSED", "BESIDE_REFUSED", "NUMERIC_REFUSED"):
        monkeypatch.setattr(evidence_html, table, tuple(c for c in getattr(evidence_html, table)
                                                        if "redirect" not in c.params))  # fmt: skip
    passes(HTML)


def test_the_reference_cites_the_result_url_of_a_redirected_page() -> None:
    # open: the control's redirect followed (its fact shown), the line citing the result's URL
    (result,) = run(reference_target(), only=[HTML]).results
    assert result.outcome.value == "passed", result.reason
    assert result.details.get("redirects") == evidence_html.FOLLOWED, result.details
