"""Hunt Q-F over seed 002 (every URL fetched passes host/IP validation, on every redirect too, and the
connection is bound to the public address that passed) and seed 001 (the HTTP provider keeps its own
public-address validation, connection pinning and resource limits): wrong readings dsweb certify passed.

Q-F1: the test network matched dial addresses as exact text, so a private address dialled in another
spelling (IPv6 uncompressed as Java writes it, IPv4 as ``0x7f.1``) got "no route", a WEB_* error every row
accepts, and never reached the trap. The test network now matches a dial by address value; the hunt's
readings, made in the reference exactly as the hunt made them, now reach the trap and fail.

Rows for the others, each failed exactly by the hunt's reading and passed by the reference:
Q-F3 ssrf.body.decoded stacked-gzip (a list of codings decoded once); Q-F4 ssrf.caps.redirects cross-host-chain
(hops counted per host); Q-F6 ssrf.redirect.private whatwg-* (a Location validated by one parser, followed by
another); Q-F2 ssrf.caps.body undeclared-huge (the whole body read, then cut); Q-F5 ssrf.caps.body
redirect-huge-body (a redirect's body drained uncapped by a client that follows redirects itself)."""

from __future__ import annotations

import asyncio
import inspect
import re
import textwrap
from ipaddress import ip_address
from typing import Any

import httpx
import pytest

from dsweb_ref import netguard
from dsweb_ref._context import OutgoingRequest
from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref.certification.checks import ssrf, ssrf_body, ssrf_limits
from dsweb_ref.certification.sandbox import SandboxDialer, dial_address
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.netguard import PinnedTransport, body, check_url, hosts, resolve, transport, urls
from dsweb_ref.providers import http_fetch
from dsweb_ref.providers.http_fetch import HttpFetchProvider

from ._readings import failing_rows, fails_exactly, keep_rows, patch_reading
from .conftest import run

TRAPPED = "a connection reached a non-public"


def _outcomes(checks: list[str]) -> dict[str, tuple[str, str]]:
    report = run(reference_target(), only=checks)
    return {r.check.id: (r.outcome.value, r.reason) for r in report.results}


# --- Q-F1: the test network matches a dial by address value --------------------------------------------------


@pytest.mark.parametrize(("spelling", "address"), [
    ("0:0:0:0:0:0:0:1", "::1"), ("[::1]", "::1"), ("fe80::1%eth0", "fe80::1"),
    ("0:0:0:0:0:ffff:a9fe:a9fe", "169.254.169.254"), ("::ffff:127.0.0.1", "127.0.0.1"),
    ("0x7f.1", "127.0.0.1"), ("2130706433", "127.0.0.1"), ("127.1", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"),
    ("0x7f000001", "127.0.0.1"), ("10.0.0.9", "10.0.0.9"),
])
def test_every_spelling_of_an_address_is_that_address(spelling: str, address: str) -> None:
    assert dial_address(spelling) == ip_address(address)


@pytest.mark.parametrize("name", ["ssrf.test", "127.0.0.1x", "127.1 x", "256.1", "1.2.3.256", "1.16777216", "0x100.1",
                                  ""])
def test_a_name_or_an_out_of_range_number_is_no_address(name: str) -> None:
    assert dial_address(name) is None


def test_the_dialer_routes_any_spelling_to_the_listed_port() -> None:
    dialer = SandboxDialer({"::1": 1, "127.0.0.1": 2, "93.184.215.14": 3})
    assert dialer.ports == {ip_address("::1"): 1, ip_address("127.0.0.1"): 2, ip_address("93.184.215.14"): 3}
    seen: list[tuple[str, int]] = []

    class Real:
        async def connect_tcp(self, host: str, port: int, timeout: float | None = None) -> None:  # noqa: ASYNC109
            seen.append((host, port))

    dialer._real = Real()  # type: ignore[assignment]
    for spelling in ("0:0:0:0:0:0:0:1", "0x7f.1", "2130706433", "93.184.215.14"):
        asyncio.run(dialer.connect_tcp(spelling, 80))
    assert seen == [("127.0.0.1", 1), ("127.0.0.1", 2), ("127.0.0.1", 2), ("127.0.0.1", 3)]


# The hunt's dial of IPv6 in Java's uncompressed spelling (0:0:0:0:0:0:0:1), every hex group without leading zeros.
JAVA = ("(str(address) if address.version == 4 else ':'.join(f'{int(h, 16):x}' for h in address.exploded.split(':')"
        ")), port")


def test_ipv6_answers_unchecked_and_dialled_uncompressed_reach_the_trap(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (Q-F1a): a resolver's IPv6 answers never judged, dialled as 0:0:0:0:0:0:0:1; matched as text the
    # dial got no route (a WEB_* error the rows accept), so special_ranges, mixed_answers and the rest passed
    patch_reading(transport.PinnedNetworkBackend, "connect_tcp", "str(address), port", JAVA, monkeypatch)
    patch_reading(resolve, "_check", "reason = policy.blocked_reason(address)",
                  "reason = None if (address.version == 6 and not literal) else policy.blocked_reason(address)",
                  monkeypatch)
    seen = _outcomes(["ssrf.resolve.special_ranges", "ssrf.resolve.mixed_answers"])
    for check, (value, reason) in seen.items():
        assert value == "failed" and TRAPPED in reason, (check, reason)


LITERAL = "__import__('dsweb_ref.netguard.hosts', fromlist=['x']).parse_ipv4_literal(host)"  # as inet_aton reads it


def test_numeric_hosts_taken_for_names_and_dialled_as_written_reach_the_trap(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (Q-F1b): a numeric host other than dotted decimal (0x7f.1, 2130706433, 127.1) taken for a name by the
    # URL check and dialled as written; matched as text the dial got no route, so odd_text passed
    patch_reading(hosts, "parse_host", "if name != str(literal):\n            raise WebError(",
                  "if name != str(literal):\n            return name\n            raise WebError(", monkeypatch, urls)
    patch_reading(resolve, "vet_host", "parsed = parse_host(host)",
                  f"if {LITERAL} is not None:\n        return [host]\n    parsed = parse_host(host)",
                  monkeypatch, netguard, transport)
    ((value, reason),) = _outcomes(["ssrf.url.odd_text"]).values()
    assert value == "failed" and TRAPPED in reason, reason


def test_the_reference_passes_the_checks_the_readings_fail() -> None:
    seen = _outcomes(["ssrf.resolve.special_ranges", "ssrf.resolve.mixed_answers", "ssrf.url.odd_text",
                      "ssrf.resolve.public_fetched", "ssrf.redirect.private"])
    assert {check: value for check, (value, _) in seen.items()} == dict.fromkeys(seen, "passed"), seen


# --- Q-F3: ssrf.body.decoded's stacked-gzip ------------------------------------------------------------------

DECODED = "ssrf.body.decoded"
CODING_RIGHT = 'encoding = (content_encoding or "").strip().lower()'


def test_the_reference_passes_the_stacked_gzip_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [c.name for c in ssrf_body.STACKED_ROWS] == ["stacked-gzip"]
    for table in ("ROWS", "REPLY_ROWS", "LABEL_ROWS", "PIECE_ROWS"):
        monkeypatch.setattr(ssrf_body, table, ())
    ((value, reason),) = _outcomes([DECODED]).values()
    assert value == "passed", reason


@pytest.mark.parametrize("wrong", [
    'encoding = (content_encoding or "").split(",")[-1].strip().lower()',  # the outermost coding alone
    'encoding = (content_encoding or "").split(",")[0].strip().lower()',  # the first listed alone
])
def test_a_list_of_codings_read_as_one_entry_fails_exactly_stacked_gzip(
    wrong: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches (Q-F3): Content-Encoding "gzip, gzip" decoded once, the inner gzip's bytes shown as the page
    patch_reading(body, "_inflater_for", CODING_RIGHT, wrong, monkeypatch)
    fails_exactly(ssrf_body, "STACKED_ROWS", DECODED, "stacked-gzip", monkeypatch)


def test_a_coding_found_by_substring_fails_exactly_stacked_gzip(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (Q-F3): a coding taken as gzip when its value holds the word ("gzip" in the value), inflated once
    patch_reading(body, "_inflater_for", 'if encoding in ("gzip", "x-gzip"):', 'if "gzip" in encoding:', monkeypatch)
    fails_exactly(ssrf_body, "STACKED_ROWS", DECODED, "stacked-gzip", monkeypatch)


# --- Q-F4: ssrf.caps.redirects' cross-host-chain -------------------------------------------------------------

REDIRECTS = "ssrf.caps.redirects"


def _hops_per_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hunt's reading: every cross-origin redirect followed (each hop validated), and the hops counted per host."""
    monkeypatch.setattr(http_fetch, "redirect_refusal", lambda source, target: None)
    source = textwrap.dedent(inspect.getsource(HttpFetchProvider._follow))
    for right, wrong in (("hops = 0", "hops = {}"),
                         ("url = self._next_hop(url, response, hops)\n                    hops += 1",
                          "url, prev = self._next_hop(url, response, hops.get(url.host, 0)), url.host\n"
                          "                    hops[prev] = hops.get(prev, 0) + 1")):
        assert source.count(right) == 1, right
        source = source.replace(right, wrong)
    namespace = dict(vars(http_fetch))
    exec(source, namespace)
    monkeypatch.setattr(HttpFetchProvider, "_follow", namespace["_follow"])


def test_the_reference_passes_the_cross_host_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_rows(ssrf_limits, "HOP_CASES", ("cross-host-chain",), monkeypatch)
    ((value, reason),) = _outcomes([REDIRECTS]).values()
    assert value == "passed", reason


def test_hops_counted_per_host_fail_exactly_the_cross_host_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (Q-F4): a hop count kept per host, so a chain that moves to a new host at every hop is never capped
    _hops_per_host(monkeypatch)
    fails_exactly(ssrf_limits, "HOP_CASES", REDIRECTS, "cross-host-chain", monkeypatch)


def test_cross_origin_redirects_followed_under_one_count_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: following cross-origin redirects (each hop validated) is no seed's fault, the count kept over the chain
    monkeypatch.setattr(http_fetch, "redirect_refusal", lambda source, target: None)
    ((value, reason),) = _outcomes([REDIRECTS]).values()
    assert value == "passed", reason


# --- Q-F6: ssrf.redirect.private's whatwg-* Locations --------------------------------------------------------

REDIRECT = "ssrf.redirect.private"
WHATWG = {"whatwg-one-slash", "whatwg-three-slashes", "whatwg-slash-backslash"}
RIGHT_NEXT_HOP = HttpFetchProvider._next_hop


def _whatwg_join(base: httpx.URL, location: str) -> httpx.URL:
    """A Location as a browser (WHATWG) reads it on an http(s) base: backslashes are slashes, tabs and newlines
    dropped, and the base's scheme followed by any run of slashes starts an authority (the hunt's reading)."""
    loc = re.sub(r"[\t\n\r]", "", location).replace("\\", "/")
    m = re.match(r"(?i)(https?):/*(.*)", loc)
    if m and m.group(1).lower() == base.scheme and not loc[len(m.group(1)) + 1:].startswith("/"):
        return base.join(m.group(2))  # 'http:path' is relative
    if m:
        return httpx.URL(f"{m.group(1).lower()}://{m.group(2)}")
    if loc.startswith("//"):
        return httpx.URL(f"{base.scheme}:{loc}")
    return base.join(loc)


def _mixed_next_hop(self: HttpFetchProvider, url: httpx.URL, response: httpx.Response, hops: int) -> httpx.URL:
    RIGHT_NEXT_HOP(self, url, response, hops)  # validated the RFC 3986 way
    return _whatwg_join(url, response.headers["location"])  # followed the WHATWG way


def _two_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hunt's reading: the Location validated by one parser and followed by another, and the literal host's
    check skipped at dial (the URL check judged it already)."""
    monkeypatch.setattr(HttpFetchProvider, "_next_hop", _mixed_next_hop)
    patch_reading(resolve, "vet_host", "_check(host, parsed, policy, literal=True)", "pass", monkeypatch,
                  netguard, transport)


def _redirect_rows_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ssrf, "REBOUND_HOPS", ())


def test_the_reference_passes_the_whatwg_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert WHATWG <= {c.name for c in ssrf.REDIRECTS}
    keep_rows(ssrf, "REDIRECTS", tuple(WHATWG), monkeypatch)
    _redirect_rows_only(monkeypatch)
    ((value, reason),) = _outcomes([REDIRECT]).values()
    assert value == "passed", reason


def test_a_location_validated_and_followed_by_two_parsers_fails_exactly_the_whatwg_slash_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (Q-F6): http:/10.0.0.9/ and http:///10.0.0.9/ validated as a path on the public host, then followed
    # to the host 10.0.0.9 and dialled without the literal's check
    _two_parsers(monkeypatch)
    _redirect_rows_only(monkeypatch)
    assert failing_rows(ssrf, "REDIRECTS", REDIRECT, monkeypatch) == {"whatwg-one-slash", "whatwg-three-slashes"}


def test_backslashes_let_through_to_the_two_parsers_fail_exactly_the_whatwg_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (Q-F6): the same with backslashes not refused in URL text: /\10.0.0.9/ validated as a path on the
    # public host, followed (a backslash read as a slash) to the host 10.0.0.9
    _two_parsers(monkeypatch)
    patch_reading(urls, "check_url_text", 'if "\\\\" in raw:', "if False:", monkeypatch, netguard, http_fetch)
    _redirect_rows_only(monkeypatch)
    assert failing_rows(ssrf, "REDIRECTS", REDIRECT, monkeypatch) == WHATWG


# --- Q-F2: ssrf.caps.body's undeclared-huge ------------------------------------------------------------------

CAPS = "ssrf.caps.body"
READ_RIGHT = """data, cut = await read_capped(
        response.aiter_raw(), cfg.max_response_bytes, response.headers.get("content-encoding")
    )"""
READ_WHOLE = """data, cut = await read_capped(
        response.aiter_raw(), 1 << 40, response.headers.get("content-encoding")
    )
    data, cut = data[: cfg.max_response_bytes], len(data) > cfg.max_response_bytes"""


def test_the_reference_passes_the_huge_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [c.name for c in ssrf_limits.HUGE_CASES] == ["undeclared-huge", "redirect-huge-body"]
    fails = failing_rows(ssrf_limits, "HUGE_CASES", CAPS, monkeypatch)
    assert fails == set()


def test_a_body_read_whole_then_cut_fails_exactly_the_huge_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (Q-F2): the whole body read (and inflated), then cut to the cap: the cap's bytes come back, but the
    # 64 MiB page was read to its end
    patch_reading(HttpFetchProvider, "_read", READ_RIGHT, READ_WHOLE, monkeypatch)
    fails_exactly(ssrf_limits, "HUGE_CASES", CAPS, "undeclared-huge", monkeypatch)


# --- Q-F5: ssrf.caps.body's redirect-huge-body ---------------------------------------------------------------


async def _httpx_follows(self: HttpFetchProvider, url: httpx.URL, ctx: Any) -> Any:
    """The hunt's reading: httpx follows the redirects itself (its own hop cap), a request hook validates every
    hop's URL and the pinned transport every connection; httpx drains each redirect's body, uncapped."""
    cfg = self.config
    headers = {"User-Agent": cfg.user_agent, "Accept": http_fetch.ACCEPT, "Accept-Encoding": "gzip, deflate"}

    async def hook(request: httpx.Request) -> None:
        ctx.record(OutgoingRequest(provider=self.id, method="GET", url=str(request.url), body=b""))
        check_url(str(request.url), max_length=cfg.max_url_length, policy=self.policy)

    async with httpx.AsyncClient(transport=PinnedTransport(self._backend, self._ssl()), trust_env=False,
                                 follow_redirects=True, max_redirects=cfg.max_redirects, timeout=None,
                                 headers=headers, event_hooks={"request": [hook]}) as client:
        try:
            async with client.stream("GET", url) as response:
                if response.status_code in http_fetch.REDIRECT_STATUSES:
                    raise WebError(WebErrorCode.PROVIDER_ERROR, "redirect without a usable Location")
                return await self._read(response.url, response)
        except httpx.TooManyRedirects as exc:
            raise WebError(WebErrorCode.REDIRECT_BLOCKED, str(exc)) from exc
        except (httpx.InvalidURL, UnicodeError) as exc:
            raise WebError(WebErrorCode.INVALID_URL, str(exc)) from exc
        except (httpx.HTTPError, httpx.StreamError, OSError) as exc:
            raise WebError(WebErrorCode.PROVIDER_ERROR, http_fetch._failure(url, exc), cause=exc) from exc


def test_redirect_bodies_drained_by_the_client_fail_exactly_the_redirect_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (Q-F5): redirects followed by httpx itself (every hop validated), which reads each redirect's body to
    # its end under no cap: the 302's 64 MiB body read whole
    monkeypatch.setattr(HttpFetchProvider, "_follow", _httpx_follows)
    fails_exactly(ssrf_limits, "HUGE_CASES", CAPS, "redirect-huge-body", monkeypatch)
