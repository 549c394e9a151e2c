"""SSRF checks for any fetcher (seed 002), run with the adapter protocol's ``test_network``.

Seed 002 decides: every URL fetched passes host/IP validation, on every redirect too, and the
connection is bound to the public IP that passed, so a search result can never lead the tool to
localhost, a private network, or a destination whose IP changed after the first check. It fixes no
error code, so any ``WEB_*`` error (or, where an answer is still public, a success) is accepted; what
is enforced is that nothing reaches a non-public address. Every non-public address the suite hands
out is dialled to a trap listener that counts connections; one connection there fails the check.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_address
from typing import Any

import httpx

from ..cases import Case
from ..sandbox import ConnectionTrap
from ..targets import CallOutcome
from ._base import CheckContext, check, expect_error, require
from ._leaks import leak

REQUIRES = ("web_fetch", "ssrf-test-mode")
PUBLIC = "93.184.215.14"  # dialled to the page server
PUBLIC_DEAD = "93.184.215.99"  # public, but its connection is refused
PAGE_TEXT = "ssrf check page"


class _Handler(BaseHTTPRequestHandler):
    server: _Pages
    protocol_version = "HTTP/1.0"

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self.server.served.append(path)
        self.server.headers.append((path, list(self.headers.items())))
        try:
            self._answer(path)
        finally:
            self.server.finished.add(path)

    def _answer(self, path: str) -> None:
        location = self.server.redirects.get(path)
        if location is not None:
            status, target = location
            self.send_response(status)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        special = self.server.special.get(path)
        if special is not None:
            special(self)
            return
        self._send(PAGE_TEXT.encode())

    def _send(self, body: bytes, *, declared: bool = True, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(200)
        if "Content-Type" not in (headers or {}):
            self.send_header("Content-Type", "text/plain; charset=utf-8")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if declared:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()  # HTTP/1.0: without Content-Length the body ends when the connection closes
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Pages(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self) -> None:
        self.redirects: dict[str, tuple[int, str]] = {}
        self.special: dict[str, Callable[[_Handler], None]] = {}
        self.served: list[str] = []  # request paths, in arrival order
        self.headers: list[tuple[str, list[tuple[str, str]]]] = []  # each request's path and header lines, likewise
        self.finished: set[str] = set()  # paths whose handler has ended its answer
        self.stop = threading.Event()  # set when the check ends: slow handlers end at once
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A fetcher that hangs up mid-body is keeping its cap (ssrf.caps.body serves more than any cap): that is
        # the behaviour judged, not a fault. socketserver printed its traceback to the certify user's terminal.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@dataclass
class _Net:
    """The page server and the trap. The URLs the checks fetch name no port or the usual one: the test
    network dials each address's own loopback port whatever the URL says, so a fetcher that allows only
    the usual ports (a choice no seed rules out) is judged like any other."""

    pages: _Pages
    trap: ConnectionTrap

    @property
    def port(self) -> int:
        return self.pages.server_address[1]

    def config(
        self, resolve: Mapping[str, list[list[str]]], private: list[str], public: Iterable[str] = ()
    ) -> dict[str, Any]:
        """``private`` addresses are dialled to the trap; PUBLIC and ``public`` to the page server. Each
        address is listed as written and in its canonical text, so a fetcher that dials the address it
        parsed (``::ffff:a9fe:a9fe`` for ``::ffff:169.254.169.254``) reaches the trap too."""
        dial = {PUBLIC: self.port, **_both_forms(public, self.port), **_both_forms(private, self.trap.port)}
        return {"resolve": {k: v for k, v in resolve.items()}, "dial": dial}


def _both_forms(addresses: Iterable[str], port: int) -> dict[str, int]:
    return {form: port for a in addresses for form in (a, str(ip_address(a)))}


@contextmanager
def _network() -> Iterator[_Net]:
    pages, trap = _Pages(), ConnectionTrap()
    thread = threading.Thread(target=pages.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield _Net(pages, trap)
    finally:
        pages.stop.set()
        pages.shutdown()
        pages.server_close()
        trap.close()


async def _fetch_expecting_refusal(ctx: CheckContext, net: _Net, url: str, what: str, *,
                                   redirect_back: bool = False, **details: Any) -> None:
    """No connection to a non-public address, and a WEB_* error; with ``redirect_back``, a redirect handed
    back as it is (see returned_redirect) instead of the error is accepted too."""
    outcome = await ctx.fetch(url)
    require(net.trap.connections() == 0, f"{what}: a connection reached a non-public address", url=url, **details)
    if not (redirect_back and returned_redirect(outcome)):
        expect_error(outcome, what)


def returned_redirect(outcome: CallOutcome) -> bool:
    """A success that is a redirect itself (its 3xx status): a fetcher may hand back a redirect it does not
    follow (any, or only those it refuses), since no seed makes a fetcher follow redirects (see
    ssrf.caps.redirects); the trap still proves that nothing past it was dialled."""
    value = outcome.value if outcome.ok else None
    status = value.get("status_code") if isinstance(value, dict) else None
    return isinstance(status, int) and not isinstance(status, bool) and 300 <= status < 400


SPECIAL = (
    Case("loopback", "a guard that only refuses the literal 'localhost'", {"address": "127.0.0.1"}),
    Case("private-10", "a guard that checks names but not their answers", {"address": "10.0.0.7"}),
    Case("private-192", "RFC 1918 checked by one range only", {"address": "192.168.1.20"}),
    Case("cgnat", "is_private alone (100.64/10 is not 'private')", {"address": "100.64.0.9"}),
    Case("link-local", "link-local space left open", {"address": "169.254.10.10"}),
    Case("metadata", "the cloud metadata address left open", {"address": "169.254.169.254"}),
    Case("unspecified", "0.0.0.0 (dials this host) left open", {"address": "0.0.0.0"}),
    Case("benchmark", "198.18/15 left open", {"address": "198.18.0.5"}),
    Case("ipv6-loopback", "IPv6 not checked at all", {"address": "::1"}),
    # From an outside hunt: a hand list of IPv6 ranges without ::/128, which dials this host as 0.0.0.0 does.
    Case("ipv6-unspecified", "a hand list of IPv6 ranges without the unspecified address :: (dials this host, "
         "as 0.0.0.0 does)", {"address": "::"}),
    Case("ula", "fc00::/7 left open", {"address": "fd12:3456::7"}),
    Case("ipv6-link-local", "fe80::/10 left open", {"address": "fe80::7"}),
    Case("mapped-metadata", "IPv4-mapped IPv6 judged without unwrapping", {"address": "::ffff:169.254.169.254"}),
    Case("nat64-loopback", "is_global alone: NAT64 of loopback is 'global'", {"address": "64:ff9b::7f00:1"}),
    Case("6to4-private", "is_global alone: 6to4 of 10/8 is 'global'", {"address": "2002:a00:7::1"}),
    Case(
        "local-use-nat64",
        "only the well-known NAT64 prefix unwrapped: local-use 64:ff9b:1::/48 of 10/8 judged 'global'",
        {"address": "64:ff9b:1::a00:7"},
    ),
    Case("site-local", "is_global after unwrapping: the deprecated site-local fec0::/10 is 'global'",
         {"address": "fec0::7"}),
    # The far end of each range: a guard that knows the range, but too narrow.
    Case("loopback-other", "loopback read as 127.0.0.1 alone, not 127.0.0.0/8", {"address": "127.8.9.10"}),
    Case("private-10-end", "10.0.0.0/8 read as 10.0.0.0/16", {"address": "10.255.255.7"}),
    Case("private-172-end", "172.16.0.0/12 read as 172.16.0.0/16", {"address": "172.31.255.7"}),
    Case("cgnat-end", "100.64.0.0/10 read as 100.64.0.0/16", {"address": "100.127.255.7"}),
    Case("benchmark-end", "198.18.0.0/15 read as 198.18.0.0/16", {"address": "198.19.255.7"}),
    Case("private-192-end", "192.168.0.0/16 read too narrow (as /23, or /17)", {"address": "192.168.255.7"}),
    Case("link-local-end", "169.254.0.0/16 read too narrow (as /17, the metadata address refused by name)",
         {"address": "169.254.255.7"}),
    Case("unspecified-other", "0.0.0.0/8 read as 0.0.0.0 alone", {"address": "0.1.2.3"}),
    Case("ula-fc", "fc00::/7 read as fd00::/8", {"address": "fc00::7"}),
    Case("ipv6-link-local-end", "fe80::/10 read as fe80::/16", {"address": "febf::7"}),
    # IPv6 forms that carry a private IPv4 address outside the well-known ones: refused like the address
    # they carry (a translator delivers there), whatever Python's is_global says of the wrapper.
    Case("translated-private", "only ::ffff:0:0/96 unwrapped, then is_global: the IPv4-translated form "
         "::ffff:0:0:0/96 (stateless translation) of 10/8 judged 'global'", {"address": "::ffff:0:a00:7"}),
    Case("compatible-private", "the deprecated IPv4-compatible form ::/96 of 10/8 not unwrapped and judged "
         "'global' (only ::1 in it refused)", {"address": "::a00:7"}),
    # IPv4 space that is not public beyond the ranges above: a guard built from Python's is_global alone, or
    # from a hand list of exactly the ranges tested above, lets these through.
    # From an outside hunt: a file-like path probed first (a HEAD for its size) by a client that skips validation.
    Case("file-path", "a file-like URL (.pdf) probed first, a HEAD for its size, by a client that skips the "
         "address check (the probe is a fetch too)", {"address": "10.0.0.7", "path": "/annual-report.pdf"}),
    Case("oracle-metadata", "IPv4 judged by is_global (and multicast/reserved) with no metadata table: Oracle "
         "Cloud's metadata address 192.0.0.192 is 'global' on Python 3.11.7 and other releases before CPython's "
         "2024 is_global fix", {"address": "192.0.0.192"}),
    Case("ipv4-dummy", "a hand list of the ranges tested above, without 192.0.0.0/24 (the IPv4 dummy address "
         "192.0.0.8), or is_global alone on a Python before that fix", {"address": "192.0.0.8"}),
    Case("reserved-240", "a hand list of the ranges tested above, without the reserved 240.0.0.0/4",
         {"address": "240.0.0.1"}),
    Case("broadcast", "a hand list of the ranges tested above, without the broadcast address 255.255.255.255",
         {"address": "255.255.255.255"}),
    # Documentation and multicast space: never a public host. A hand list of the ranges above lets these
    # through, and Python's is_global calls 224.0.0.0/4 and ff00::/8 'global'.
    Case("documentation-1", "a hand list without the documentation range 192.0.2.0/24 (TEST-NET-1)",
         {"address": "192.0.2.5"}),
    Case("documentation-2", "a hand list without 198.51.100.0/24 (TEST-NET-2)", {"address": "198.51.100.7"}),
    Case("documentation-3", "a hand list without 203.0.113.0/24 (TEST-NET-3)", {"address": "203.0.113.7"}),
    Case("ipv6-documentation", "a hand list without the IPv6 documentation prefix 2001:db8::/32",
         {"address": "2001:db8::7"}),
    Case("multicast", "is_global alone or a hand list: the multicast 224.0.0.0/4 ('global' to Python) left open",
         {"address": "224.0.0.1"}),
    Case("ipv6-multicast", "is_global alone or a hand list: IPv6 multicast ff00::/8 left open",
         {"address": "ff02::1"}),
    # From an outside hunt: with the switch off, a page the local fetch refused asked of the Fetch API
    # instead (its base and key are configured): the service then reaches the address for the tool.
    Case("handed-on", "a URL the local fetch refused handed to the configured Fetch API instead (seed 001: "
         "with the switch off web_fetch is the local HTTP fetch, and the provider has no fallback)",
         {"address": "169.254.169.254", "path": "/latest/meta-data/", "handed_on": True}),
)
# Special-purpose addresses written as the URL's host: the literal itself must pass host/IP validation,
# not only the answers of a name.
SPECIAL_LITERALS = (
    Case("literal-private", "an IP-literal host never judged (only the answers of names checked): "
         "http://10.0.0.9/ dialled", {"address": "10.0.0.9"}),
    Case("literal-ipv6-loopback", "an IP-literal host never judged: http://[::1]/ dialled", {"address": "::1"}),
    Case("literal-ipv6-unspecified", "IP-literal hosts judged by a hand list of IPv6 ranges without ::, so "
         "http://[::]/ (this host) dialled", {"address": "::"}),
    Case("literal-cgnat", "IP-literal hosts judged by Python's is_private/is_loopback/is_link_local/"
         "is_unspecified alone (100.64/10 is none of them), or never judged", {"address": "100.64.0.9"}),
    Case("literal-nat64-loopback", "IP-literal hosts judged by Python's is_private/is_loopback/is_link_local/"
         "is_unspecified alone, without unwrapping NAT64 of loopback, or never judged",
         {"address": "64:ff9b::7f00:1"}),
)


@check(
    "ssrf.resolve.special_ranges",
    "A name resolving to, or an IP literal naming, any special-purpose address (IPv4, IPv6, embedded IPv4, "
    "metadata) is never dialled",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: a URL is fetched only after its host's address passed validation, so a search result "
    "can never lead the tool to localhost or a private network. Seed 001: with the switch off web_fetch is the "
    "local HTTP fetch with its own access policy, and the provider has no fallback, so a URL it refused is not "
    "asked of the Fetch API instead.",
    cases=(*SPECIAL, *SPECIAL_LITERALS),
)
async def special_ranges(ctx: CheckContext) -> None:
    with _network() as net:
        resolve = {f"{c.name}.ssrf.test": [[c["address"]]] for c in SPECIAL}
        private = [c["address"] for c in (*SPECIAL, *SPECIAL_LITERALS)]
        await ctx.configure(provider="messages", test_network=net.config(resolve, private))
        hosts = [(c, f"{c.name}.ssrf.test") for c in SPECIAL]
        hosts += [(c, f"[{c['address']}]" if ":" in c["address"] else c["address"]) for c in SPECIAL_LITERALS]
        for case, host in hosts:
            # A literal names the usual port: a guard that takes the netloc (port included) for the host
            # cannot parse "10.0.0.9:80" as an address, and must not get past for it.
            port = ":80" if case in SPECIAL_LITERALS else ""
            url = f"http://{host}{port}{case.params.get('path', '/')}"
            before = len(ctx.records("fetch"))
            await _fetch_expecting_refusal(ctx, net, url, f"{case.name} ({case['address']})")
            if case.params.get("handed_on"):
                sent = len(ctx.records("fetch")) - before
                require(sent == 0, f"{case.name}: the refused URL was sent to the Fetch API (requests: {sent}); with "
                        "the switch off web_fetch is the local HTTP fetch alone")


# Public addresses just outside a special range: the pages a fetcher is for. Seed 002 refuses only what
# would take the tool to localhost, a private network or a changed address; a public address refused
# is a range read too wide (or every IPv6 address read as the IPv4 in its last 32 bits).
PUBLIC_EDGES = (
    Case("after-10", "10.0.0.0/8 read one bit too wide (10.0.0.0/7)", {"address": "11.0.0.7"}),
    Case("before-127", "127.0.0.0/8 read one bit too wide (126.0.0.0/7)", {"address": "126.255.255.7"}),
    Case("before-172-16", "172.16.0.0/12 read one bit too wide (172.0.0.0/11)", {"address": "172.15.255.7"}),
    Case("after-192-168", "192.168.0.0/16 read one bit too wide (192.168.0.0/15)", {"address": "192.169.0.7"}),
    Case("before-cgnat", "100.64.0.0/10 read one bit too wide (100.0.0.0/9)", {"address": "100.63.255.7"}),
    Case("after-link-local", "169.254.0.0/16 read one bit too wide (169.254.0.0/15)", {"address": "169.255.0.7"}),
    Case("before-benchmark", "198.18.0.0/15 read one bit too wide (198.16.0.0/14)", {"address": "198.17.255.7"}),
    # The upper end, where a bound compared one too far (172.16-172.32, 100.64-100.128, ...) refuses.
    Case("after-172-16", "172.16.0.0/12 read one too far at its upper end (or as every 172.x)",
         {"address": "172.32.0.7"}),
    Case("after-cgnat", "100.64.0.0/10 read one too far at its upper end (or as every 100.x)",
         {"address": "100.128.0.7"}),
    Case("after-benchmark", "198.18.0.0/15 read one too far at its upper end (or as every 198.x)",
         {"address": "198.20.0.7"}),
    Case("after-127", "127.0.0.0/8 read one too far at its upper end (127-128)", {"address": "128.0.0.7"}),
)
# IPv6: no seed makes a fetcher use IPv6 at all, so these rows bind only a fetcher that fetched the
# control row (a public IPv6 address whose last 32 bits are public too).
IPV6_CONTROL = Case("ipv6-public", "control: a public IPv6 address", {"address": "2606:4700::6810:84e5"})
PUBLIC_IPV6 = (
    Case("ipv6-low-bits-private", "every IPv6 address also read as the IPv4 in its last 32 bits (10.0.0.7 here)",
         {"address": "2606:4700::a00:7"}),
)
PUBLIC_ROWS = (*PUBLIC_EDGES, IPV6_CONTROL, *PUBLIC_IPV6)
# A public address written as the URL's host (dotted decimal, the one spelling every parser agrees on). No
# seed says a URL may name its host by address, so refusing every literal is open (the control refused);
# a fetcher that fetched the control must read the others as the addresses they are.
LITERAL_CONTROL = Case("literal", "the control: a public literal host fetched (then every public literal "
                       "must be), or every literal refused (seed-open)", {"address": PUBLIC})
PUBLIC_LITERALS = (
    LITERAL_CONTROL,
    Case("literal-255", "an octet of 255 before the last read as out of range", {"address": "93.184.255.14"}),
)

# From an outside hunt: the DeepSeek API key sent on page fetches too (one client configuration for every
# provider). The key is the API's credential, which seed 001 sends as the documented authorization of API
# requests; a page host is no configured endpoint. So no page request carries the key in any form, nor an
# Authorization header at all: the URL names no credentials, so such a header could only carry the key, perhaps
# in a form no judge reads back (a target configured without a key is judged on the header alone).
CREDENTIALS = (
    Case("no-credential", "the configured API key sent with page fetches (an Authorization: Bearer header, or the "
         "key in another header in any encoding): the credential leaves for a page host", {"address": PUBLIC}),
)
_AUTHORIZATION = ("authorization", "proxy-authorization")


def credential_shown(headers: Iterable[tuple[str, str]], key: str) -> str | None:
    """How a page request's ``headers`` carry a credential (an authorization header, or ``key`` in any header in
    any encoding the leak judge reads), or None. Never quotes the value: the answer lands in reports."""
    for name, value in headers:
        if name.strip().lower() in _AUTHORIZATION:
            return f"an {name.strip()} header"
        shown = leak(f"{name}: {value}", key) if key else None
        if shown is not None:
            return f"{shown} in its {name.strip()} header"
    return None


@check(
    "ssrf.resolve.public_fetched",
    "A name resolving to a public address just outside a special range is fetched, not refused",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: validation keeps the tool away from localhost, private networks and addresses that change "
    "after the check, and the connection is bound to the public address that passed; a public address is a "
    "page the pipeline is there to read. Each public IPv4 neighbour of a special range must be fetched (the "
    "page served there comes back). No seed requires IPv6, so a fetcher that refuses the public IPv6 control "
    "may refuse the other IPv6 rows too (with a WEB_* error); one that fetched it must fetch them. The same "
    "holds for a public IPv4 address written as the URL's host: no seed says a URL may name its host by "
    "address, so a fetcher that refuses the literal control may refuse every literal; one that fetched it "
    "must read the others as the addresses they are. A page fetched names the URL it was fetched from "
    "(seed 002: every evidence line keeps its source URL; seed 001: the fetch result keeps the requested URL). "
    "Seed 001: 'requests send only the documented authorization', and the key is the API's: no page request "
    "carries the configured key in any header, in any encoding, nor an Authorization header (the URLs name no "
    "credentials).",
    cases=(*PUBLIC_ROWS, *PUBLIC_LITERALS, *CREDENTIALS),
)
async def public_fetched(ctx: CheckContext) -> None:
    with _network() as net:
        resolve = {f"{c.name}.ssrf.test": [[c["address"]]] for c in (*PUBLIC_ROWS, *CREDENTIALS)}
        config = net.config(resolve, [], [c["address"] for c in (*PUBLIC_ROWS, *PUBLIC_LITERALS)])
        await ctx.configure(provider="messages", test_network=config)
        host = {c.name: f"{c.name}.ssrf.test" for c in PUBLIC_ROWS} | {c.name: c["address"] for c in PUBLIC_LITERALS}
        refusable = False  # the last control was refused: so may the rows after it be (seed-open)
        for case in (*PUBLIC_ROWS, *PUBLIC_LITERALS):
            what = f"{case.name} ({case['address']})"
            url = f"http://{host[case.name]}/{case.name}"
            outcome = await ctx.fetch(url)
            require(not outcome.cancelled, f"{what}: the call reported cancelled")
            if case in (IPV6_CONTROL, LITERAL_CONTROL):
                refusable = not outcome.ok
            if not outcome.ok and refusable:
                expect_error(outcome, what)  # IPv6, or literal hosts, refused throughout
                continue
            require(outcome.ok, f"{what}: a public address was refused ({outcome.error_code}: "
                    f"{outcome.error_message[:120]})", catches=case.catches, address=case["address"])
            require(PAGE_TEXT in (outcome.text or ""), f"{what}: a success that is not the page served there")
            require(f"/{case.name}" in net.pages.served, f"{what}: the page server never saw the request")
            shown = (outcome.value or {}).get("url")
            require(isinstance(shown, str) and _same_url(shown, url), f"{what}: the result names {shown!r}, not the "
                    "URL fetched", catches=URL_KEPT)
        for case in CREDENTIALS:  # its own page, then every page request of the check
            outcome = await ctx.fetch(f"http://{case.name}.ssrf.test/{case.name}")
            require(f"/{case.name}" in net.pages.served, f"{case.name}: the page server never saw the request "
                    f"({outcome.brief()})")
            for path, headers in list(net.pages.headers):
                carried = credential_shown(headers, ctx.config.api_key)
                require(carried is None, f"{case.name}: the page request for {path} carried {carried}",
                        catches=case.catches)


# Seed 002 keeps every evidence line's source URL, and seed 001 the fetch result's requested URL: a success
# names the URL it fetched (no redirect here), up to URL normalisation.
URL_KEPT = "a success that names another URL than the one fetched (None, or the URL without its path)"


def _same_url(shown: str, fetched: str) -> bool:
    try:
        return httpx.URL(shown) == httpx.URL(fetched)
    except (httpx.InvalidURL, TypeError):
        return False

MIXED = (
    Case(
        "dead-public-then-private",
        "only the first answer validated, the next ones tried unchecked when it fails",
        {"answers": [PUBLIC_DEAD, "10.0.0.7"]},
    ),
    Case("private-first", "answers after a private one trusted", {"answers": ["10.0.0.7", PUBLIC]}),
    Case(
        "metadata-after-eight",
        "only the first few answers looked at",
        {"answers": [PUBLIC_DEAD] * 8 + ["169.254.169.254"]},
    ),
    Case(
        "ipv6-after-dead-public",
        "the first answer's address family validated: the fallback to the other family (A, then AAAA) "
        "dialled unchecked",
        {"answers": [PUBLIC_DEAD, "fd12:3456::8"]},
    ),
    Case("dead-public-only", "a refused connection to the one (public) answer surfacing without a WEB_* error code",
         {"answers": [PUBLIC_DEAD]}),
    Case("no-answers", "a lookup that answers no address at all failing without a WEB_* error code",
         {"answers": []}),
)


@check(
    "ssrf.resolve.mixed_answers",
    "A name with any non-public answer among its addresses is never dialled there",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: the connection is bound to an address that passed validation; an answer that did "
    "not pass is never connected to, whatever its position among the answers. A fetch that fails (a "
    "non-public answer refused, a public one refusing the connection, a lookup with no answer) ends with a WEB_* "
    "error.",
    cases=MIXED,
)
async def mixed_answers(ctx: CheckContext) -> None:
    with _network() as net:
        private = sorted({a for c in MIXED for a in c["answers"] if a not in (PUBLIC, PUBLIC_DEAD)})
        resolve = {f"{c.name}.ssrf.test": [list(c["answers"])] for c in MIXED}
        await ctx.configure(provider="messages", test_network=net.config(resolve, private))
        for case in MIXED:
            outcome = await ctx.fetch(f"http://{case.name}.ssrf.test/")
            require(net.trap.connections() == 0, f"{case.name}: a connection reached a non-public answer")
            require(not outcome.ok or PAGE_TEXT in (outcome.text or ""), f"{case.name}: unexpected page")
            if not outcome.ok:
                expect_error(outcome, case.name)


# Each row: the successive answers of its name's lookups (the last repeats), and how many times it is fetched.
# A later connection to a name (the next fetch) must be validated again; a connection that fails must not be
# retried by a new lookup. (A same-host redirect hop that rebinds is a row of ssrf.redirect.private.)
REBINDING = (
    Case("public-then-private", "validating one lookup and connecting by another",
         {"lookups": [[PUBLIC], ["10.0.0.7"]]}),
    Case("public-then-metadata", "the same, towards the metadata address",
         {"lookups": [[PUBLIC], ["169.254.169.254"]]}),
    Case("fetched-again", "a name that passed validation once trusted: a later connection (the next fetch) "
         "looks it up again and dials the new answer unchecked", {"lookups": [[PUBLIC], ["10.0.0.7"]], "fetches": 2}),
    Case("dead-then-private", "every validated answer refusing the connection, the name looked up again and the "
         "new answer dialled unchecked", {"lookups": [[PUBLIC_DEAD], ["10.0.0.7"]]}),
    # From an outside hunt: the validated server accepts the connection, then closes it without an answer (a
    # stale keep-alive looks the same); the retry went out through a fresh client that looked the name up again.
    Case("dropped-then-private", "a connection the validated server dropped without an answer retried by a fresh "
         "lookup whose answer is dialled unchecked", {"lookups": [[PUBLIC], ["10.0.0.7"]], "path": "/dropped"}),
)


def _lookups(cases: tuple[Case, ...]) -> tuple[dict[str, list[list[str]]], list[str]]:
    """The test network's successive answers for each row's name (``<row>.ssrf.test``), and the private ones
    among them (dialled to the trap)."""
    resolve = {f"{c.name}.ssrf.test": [list(answer) for answer in c["lookups"]] for c in cases}
    answers = {a for lookups in resolve.values() for answer in lookups for a in answer}
    return resolve, sorted(answers - {PUBLIC, PUBLIC_DEAD})


def _later(case: Case) -> str:
    """The answers of a row's name after its first lookup."""
    return ", ".join(a for answer in case["lookups"][1:] for a in answer)


@check(
    "ssrf.resolve.rebinding",
    "The address that passed validation is the one dialled; a later lookup's answer is never used unchecked",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: host/IP validation happens every time and the connection is bound to the public IP that "
    "passed it, so a destination whose IP changes after the first check is never reached: not by the "
    "connection that was validated, nor by a later fetch of the same name, nor by a retry after the validated "
    "address refused the connection or dropped it without an answer.",
    cases=REBINDING,
)
async def rebinding(ctx: CheckContext) -> None:
    with _network() as net:
        resolve, private = _lookups(REBINDING)
        net.pages.special["/dropped"] = lambda handler: None  # the connection closes with no answer
        await ctx.configure(provider="messages", test_network=net.config(resolve, private))
        for case in REBINDING:
            later = _later(case)
            url = f"http://{case.name}.ssrf.test{case.params.get('path', '/')}"
            for _ in range(case.params.get("fetches", 1)):
                outcome = await ctx.fetch(url)
                require(net.trap.connections() == 0, f"{case.name}: a later lookup's answer {later} was dialled",
                        url=url)
                require(not outcome.ok or PAGE_TEXT in (outcome.text or ""), f"{case.name}: unexpected page")


REDIRECT_STATUSES = (301, 302, 303, 307, 308)
REDIRECTS = (
    *(
        Case(f"{status}-{kind}", f"{status} followed unchecked ({why})", {"status": status, "kind": kind})
        for status in REDIRECT_STATUSES
        for kind, why in (("literal", "target IP not validated"), ("name", "target name's answers not validated"))
    ),
    # From an outside hunt of web_fetch: validation tied to the five usual statuses while any 3xx with a
    # Location is followed. Following these after validation, or answering them as they are, are both right.
    *(
        Case(f"{status}-literal", f"{status} with a Location followed unchecked (validation tied to 301, 302, 303, "
             "307 and 308 only)", {"status": status, "kind": "literal", "any_answer": True})
        for status in (300, 305, 306)
    ),
    # A page that names another URL to load (a Refresh header, an HTML meta refresh): loading it is a fetch too.
    Case("refresh-header", "a Refresh header (or meta refresh) followed by a client that skips validation ('not a "
         "redirect')", {"status": 200, "kind": "refresh", "any_answer": True}),
    Case(
        "second-hop",
        "only the first redirect validated: a public hop, then a hop to a private literal followed unchecked",
        {"status": 302, "kind": "second-hop"},
    ),
    Case(
        "scheme-relative",
        "only absolute Locations validated: a scheme-relative //host Location taken for a path on the same host",
        {"status": 302, "kind": "scheme-relative"},
    ),
    # Locations no parser reads as a URL, or reads with a non-ASCII zone id: refused, with a WEB_* error.
    Case("invalid-location", "a Location the client cannot parse ('http://[::1/') refused without a WEB_* error "
         "code", {"status": 302, "kind": "invalid"}),
    Case("zone-id-location", "a Location naming fe80::1 with a non-ASCII zone id crashing the fetcher (no WEB_* "
         "error) or dropped so fe80::1 is dialled", {"status": 302, "kind": "zone-id"}),
    # From a hunt (Q-F6): a Location read by two parsers, validated the RFC 3986 way (http:/10.0.0.9/ a path on
    # the same host) and followed the WHATWG way (the host 10.0.0.9), so the hop dialled a private literal the
    # validation never saw. Each Location may be refused (a WEB_* error), or followed as a path on the public
    # host (the page served there); the private literal is never dialled.
    *(
        Case(f"whatwg-{kind}", f"a Location validated as one URL and followed as another ({location!r} checked as a "
             "path on the public host, then dialled as the host 10.0.0.9, as a browser reads it)",
             {"status": 302, "kind": f"whatwg-{kind}", "location": location, "page_ok": True})
        for kind, location in (("one-slash", "http:/10.0.0.9/"), ("three-slashes", "http:///10.0.0.9/"),
                               ("slash-backslash", "/\\10.0.0.9/"))
    ),
)
# A same-origin redirect on a name whose next lookup answers privately: the hop's new connection (the server
# closes the first) must be validated again. Refusing the hop, or fetching it from the address that passed,
# are both right; dialling the new answer is not.
REBOUND_HOPS = (
    Case("same-host-rebound", "a same-origin redirect hop connected by a fresh lookup that is not checked (the "
         "origin was validated already), or a name's earlier verdict trusted for the hop's connection",
         {"status": 302, "lookups": [[PUBLIC], ["10.0.0.7"]]}),
    # From an outside hunt: the same host on another port taken for 'already validated'.
    Case("other-port-rebound", "a redirect to the same host on another port trusted as already validated: its new "
         "connection dialled by a fresh lookup that is not checked",
         {"status": 302, "lookups": [[PUBLIC], ["10.0.0.7"]], "port": 8081}),
)
# A redirect without a Location has no target: answering with the redirect itself, or refusing it, are both
# open; a refusal is a WEB_* error.
NO_LOCATION = Case("no-location", "a redirect without a Location refused without a WEB_* error code",
                   {"status": 302})


@check(
    "ssrf.redirect.private",
    "A redirect (every 3xx status) to a private literal or to a name resolving privately is never followed there",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: URL, IP and redirect validation happen every time: each redirect target is checked "
    "like the first URL, and a redirect to a URL that cannot be read is refused with a WEB_* error. The "
    "connection is bound to the public IP that passed validation: a same-host hop whose name now answers "
    "privately is refused (a WEB_* error) or fetched from the address that passed, never dialled at the new "
    "answer. A Location that URL parsers read differently (http:/10.0.0.9/, http:///10.0.0.9/, /\\10.0.0.9/) "
    "is checked as the URL it is followed to: refused with a WEB_* error, or followed as a path on the public host "
    "(its page comes back), never dialled at the private host another parser finds in it. A redirect without a "
    "Location may come back as it is, or be refused with a WEB_* error. No seed "
    "makes a fetcher follow redirects, so a redirect it does not follow (any, or only the refused ones) may "
    "also come back as it is, its 3xx status with no connection past it, instead of a WEB_* error.",
    cases=(*REDIRECTS, *REBOUND_HOPS, NO_LOCATION),
)
async def redirect_private(ctx: CheckContext) -> None:
    with _network() as net:
        resolve = {"start.ssrf.test": [[PUBLIC]], "inside.ssrf.test": [["10.0.0.8"]]}
        rebound, rebound_private = _lookups(REBOUND_HOPS)
        resolve |= rebound
        private = ["10.0.0.8", "10.0.0.9", "fe80::1", *rebound_private]
        await ctx.configure(provider="messages", test_network=net.config(resolve, private))
        inside = {"literal": "http://10.0.0.9/", "name": "http://inside.ssrf.test/",
                  "second-hop": "http://10.0.0.9/", "scheme-relative": "//10.0.0.9/",
                  "invalid": "http://[::1/", "zone-id": "http://[fe80::1%25\u00e9]/"}
        for case in REDIRECTS:
            path = f"/r/{case.name}"
            if case.params.get("any_answer"):  # the 3xx (or the page) may come back as it is
                if case["kind"] == "refresh":
                    net.pages.special[path] = _refreshing("http://10.0.0.9/")
                else:
                    net.pages.redirects[path] = (case["status"], inside[case["kind"]])
                url = f"http://start.ssrf.test{path}"
                outcome = await ctx.fetch(url)
                require(net.trap.connections() == 0, f"{case.name}: a connection reached a non-public address",
                        url=url, catches=case.catches)
                if not outcome.ok:
                    expect_error(outcome, case.name)
                continue
            if case.params.get("page_ok"):  # refused, handed back, or followed to the public host's page
                net.pages.redirects[path] = (case["status"], case["location"])
                url = f"http://start.ssrf.test{path}"
                outcome = await ctx.fetch(url)
                require(net.trap.connections() == 0, f"{case.name}: a connection reached a non-public address",
                        url=url, catches=case.catches)
                if outcome.ok and not returned_redirect(outcome):
                    require(PAGE_TEXT in (outcome.text or ""), f"{case.name}: a success that is not the public "
                            f"host's page ({outcome.brief()})", catches=case.catches)
                elif not outcome.ok:
                    expect_error(outcome, case.name)
                continue
            net.pages.redirects[path] = (case["status"], inside[case["kind"]])
            if case["kind"] == "second-hop":  # first a public hop on the same host, then the private one
                net.pages.redirects[path] = (case["status"], f"/r/{case.name}/next")
                net.pages.redirects[f"{path}/next"] = (case["status"], inside[case["kind"]])
            await _fetch_expecting_refusal(ctx, net, f"http://start.ssrf.test{path}", case.name, redirect_back=True,
                                           catches=case.catches)
        for case in REBOUND_HOPS:
            path, later = f"/r/{case.name}", _later(case)
            hop = f"{path}/next"  # same origin, or the same host on another port (the test network ignores ports)
            if "port" in case.params:
                hop = f"http://{case.name}.ssrf.test:{case['port']}{hop}"
            net.pages.redirects[path] = (case["status"], hop)
            url = f"http://{case.name}.ssrf.test{path}"
            outcome = await ctx.fetch(url)
            require(net.trap.connections() == 0, f"{case.name}: the hop's new lookup answer {later} was dialled",
                    url=url, catches=case.catches)
            if returned_redirect(outcome):
                continue  # a fetcher that follows no redirect may answer with it
            if outcome.ok:
                require(PAGE_TEXT in (outcome.text or ""), f"{case.name}: a success that is not the page served")
            else:
                expect_error(outcome, case.name)
        net.pages.special["/r/no-location"] = _no_location
        outcome = await ctx.fetch("http://start.ssrf.test/r/no-location")
        require(not outcome.cancelled, "no-location: the call reported cancelled")
        if not outcome.ok:
            require((outcome.error_code or "").startswith("WEB_"),
                    f"no-location: error code {outcome.error_code!r} is not a WEB_* code", catches=NO_LOCATION.catches)


def _refreshing(target: str) -> Callable[[_Handler], None]:
    """A page that asks to load ``target``: in a Refresh header and an HTML meta refresh."""
    page = f'<html><head><meta http-equiv="refresh" content="0; url={target}"></head><body>{PAGE_TEXT}</body></html>'

    def answer(handler: _Handler) -> None:
        handler._send(page.encode(), headers={"Content-Type": "text/html", "Refresh": f"0; url={target}"})

    return answer


def _no_location(handler: _Handler) -> None:
    handler.send_response(302)
    handler.send_header("Content-Length", "0")
    handler.end_headers()


# URL texts that parsers read differently, or that the reference refuses before any lookup. Seed 002
# decides only that no non-public address is reached; whether such a URL is refused (with which WEB_*
# code) or fetched from the public host it names is left open, so each row accepts either.
ODD_URLS = (
    Case("backslash-userinfo", "the guard reads the URL as a browser does (a backslash ends the host) while the "
         "client connects to the host after the '@' (10.0.0.9)", {"url": "http://{pub}:80\\@10.0.0.9:80/"}),
    Case("credentials-private", "a URL with credentials judged by its userinfo: the private host after the '@' "
         "dialled", {"url": "http://user:secret@10.0.0.9/"}),
    Case("soft-hyphen-in-literal", "invisible characters dropped after the host check: 10.0.0.\u00ad9 judged as a "
         "name, then dialled as 10.0.0.9", {"url": "http://10.0.0.\u00ad9/"}),
    # From a hunt (P-C2): a guard reading the host with urllib.parse (no UTS 46 mapping), with literals judged only
    # by that guard, let httpx (which maps these full stops to '.', as the URL Standard does) dial 127.0.0.1.
    Case("ideographic-dots", "the host read without UTS 46 mapping and taken for a name: 127\u30020\u30020\u30021 "
         "(ideographic full stops) dialled as 127.0.0.1", {"url": "http://127\u30020\u30020\u30021/"}),
    Case("fullwidth-dots", "the same with fullwidth full stops: 10\uff0e0\uff0e0\uff0e9 dialled as 10.0.0.9",
         {"url": "http://10\uff0e0\uff0e0\uff0e9/"}),
    Case("zone-id-non-ascii", "a non-ASCII IPv6 zone id that crashes the guard (no WEB_* error) or is dropped "
         "so fe80::1 is dialled", {"url": "http://[fe80::1%25\u00e9]/"}),
    Case("backslash-path", "a URL refused for its backslash without a WEB_* error code",
         {"url": "http://{pub}/a\\b"}),
    Case("credentials-public", "a URL refused for its credentials without a WEB_* error code",
         {"url": "http://user:secret@{pub}/"}),
    Case("zero-width-space", "a URL refused for an invisible format character (Cf) without a WEB_* error code",
         {"url": "http://{pub}/a\u200bb"}),
    Case("no-break-space", "a URL refused for a space character (Zs) without a WEB_* error code",
         {"url": "http://{pub}/a\u00a0b"}),
    Case("line-separator", "a URL refused for a line separator (Zl) without a WEB_* error code",
         {"url": "http://{pub}/a\u2028b"}),
    Case("paragraph-separator", "a URL refused for a paragraph separator (Zp) without a WEB_* error code",
         {"url": "http://{pub}/a\u2029b"}),
    Case("control-character", "a URL refused for a control character (Cc) without a WEB_* error code",
         {"url": "http://{pub}/a\u0001b"}),
    Case("over-long", "a URL refused for its length (10,000 characters) without a WEB_* error code",
         {"url": "http://{pub}/" + "a" * 10_000}),
    Case("port-zero", "a URL refused for port 0 without a WEB_* error code", {"url": "http://{pub}:0/"}),
    Case("port-65536", "a URL refused for a port above 65535 without a WEB_* error code",
         {"url": "http://{pub}:65536/"}),
    Case("port-not-a-number", "a URL the parser cannot read (port '8o') refused without a WEB_* error code",
         {"url": "http://{pub}:8o/"}),
    Case("ftp-scheme", "a scheme other than http(s) refused without a WEB_* error code",
         {"url": "ftp://{pub}/"}),
    # Hosts the reference refuses before any lookup. The test network resolves each the way getaddrinfo
    # would (a numeric spelling as its address) or to a private address, so a guard that lets the name
    # through must catch the answer; a refusal must still carry a WEB_* code.
    Case("localhost", "the name localhost dialled unchecked, or refused without a WEB_* error code",
         {"url": "http://localhost/", "resolve": ("localhost", "127.0.0.1")}),
    Case("hex-host", "a numeric spelling (0x7f.1 is 127.0.0.1) taken for a name and dialled unchecked, or "
         "refused without a WEB_* error code", {"url": "http://0x7f.1/", "resolve": ("0x7f.1", "127.0.0.1")}),
    Case("single-label", "a single-label name refused without a WEB_* error code (or dialled unchecked)",
         {"url": "http://intranet/", "resolve": ("intranet", "10.0.0.9")}),
    Case("numeric-last-label", "a host whose last label is numeric refused without a WEB_* error code (or "
         "dialled unchecked)", {"url": "http://pub.ssrf.9/", "resolve": ("pub.ssrf.9", "10.0.0.9")}),
    Case("invalid-label", "a host label starting with a hyphen refused without a WEB_* error code",
         {"url": "http://-pub.ssrf.test/", "resolve": ("-pub.ssrf.test", PUBLIC)}),
    Case("percent-in-host", "a percent sign in the host refused without a WEB_* error code",
         {"url": "http://pub%2Essrf.test/"}),
    Case("no-host", "a URL without a host refused without a WEB_* error code", {"url": "http://:8080/"}),
)
ODD_PRIVATE = ("10.0.0.9", "fe80::1", "127.0.0.1")


@check(
    "ssrf.url.odd_text",
    "A URL that parsers read differently (backslash, credentials, invisible or space characters, full stops other "
    "than '.', odd ports, zone ids, great length) never reaches a non-public address; a refusal is a WEB_* error",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: every URL fetched passes host/IP validation, so the host validated must be the host "
    "connected to, however the URL's text is read (httpx and the URL Standard read ideographic and fullwidth full "
    "stops as '.'). The seed fixes no URL syntax, length, port range or error "
    "code: fetching the public host such a URL names, or refusing it with any WEB_* error, are both accepted.",
    cases=ODD_URLS,
)
async def odd_text(ctx: CheckContext) -> None:
    with _network() as net:
        resolve = {"pub.ssrf.test": [[PUBLIC]]}
        resolve |= {c["resolve"][0]: [[c["resolve"][1]]] for c in ODD_URLS if "resolve" in c.params}
        config = net.config(resolve, list(ODD_PRIVATE))
        await ctx.configure(provider="messages", test_network=config)
        for case in ODD_URLS:
            url = case["url"].format(pub="pub.ssrf.test")
            outcome = await ctx.fetch(url)
            shown = f"{case.name} ({url[:80]!r})"
            require(net.trap.connections() == 0, f"{shown}: a connection reached a non-public address", url=url)
            require(not outcome.cancelled, f"{shown}: the call reported cancelled")
            if outcome.ok:
                require(PAGE_TEXT in (outcome.text or ""), f"{shown}: a success that is not the public page")
            else:
                require((outcome.error_code or "").startswith("WEB_"),
                        f"{shown}: error code {outcome.error_code!r} is not a WEB_* code", catches=case.catches)
