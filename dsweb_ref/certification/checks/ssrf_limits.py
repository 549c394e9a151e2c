"""SSRF checks of a fetcher's limits (seed 002): environment proxies, body and hop caps, the deadline.

Seed 002 decides that the connection is bound to the public IP that passed validation, and seed 001
that the HTTP fetcher keeps its own public-address validation, connection pinning and resource
limits. A proxy taken from the environment resolves and dials on the fetcher's behalf, outside its
address policy, so it must never be used. The seeds fix neither the limits' values nor whether a
page over the cap is cut or refused, nor an error code: ``configure`` hands over the values
(``fetch_max_bytes``, ``fetch_max_redirects``, ``timeout_s``) so nobody has to guess them, and each
check accepts a cut page or any ``WEB_*`` error, enforcing only that the bound holds.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import json
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..calibration import Timed, judge_timed
from ..cases import Case
from ..targets import CallOutcome
from ._base import CALL_TIMEOUT, CheckContext, check, expect_error, require
from .ssrf import PAGE_TEXT, PUBLIC, REQUIRES, _Handler, _network, _Pages, returned_redirect
from .ssrf_body import _listed

# --- environment proxies ---------------------------------------------------------------------------

PROXY_CASES = (
    Case(
        "http",
        "HTTP_PROXY / http_proxy (or ALL_PROXY) honoured for a plain-http page",
        {"scheme": "http", "path": "/", "loads": True},
    ),
    Case(
        "https",
        "HTTPS_PROXY / https_proxy (or ALL_PROXY) honoured: a CONNECT tunnel the proxy would dial",
        {"scheme": "https", "path": "/", "loads": False},
    ),
    # No seed makes a fetcher follow redirects (ssrf.caps.redirects): one that refuses the hop with a WEB_*
    # error, or answers with the redirect itself, made no request a proxy could carry, so only a hop that
    # went through the trap fails here.
    Case(
        "redirect-hop",
        "proxies ignored for the first request but honoured by a client made for a redirect hop",
        {"scheme": "http", "path": "/proxy/hop", "loads": True, "refusable": True},
    ),
)


@check(
    "ssrf.proxy.ignored",
    "Proxy variables in the environment are ignored: the fetch goes straight to the validated address",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: the connection is bound to the public IP that passed validation; a proxy from the "
    "environment would resolve and connect on the fetcher's behalf, so it is never used. The plain page "
    "loads directly; a redirect hop loads directly or, since no seed makes a fetcher follow redirects, is "
    "refused with a WEB_* error or answered with the redirect itself (its 3xx status).",
    cases=PROXY_CASES,
    # It counts connections to the run-wide proxy traps before and after each fetch: a neighbour's fetch
    # through a proxy would be counted as this check's.
    slot="alone",
)
async def proxies_ignored(ctx: CheckContext) -> None:
    traps = ctx.proxies
    require(traps is not None, "the suite started the target without its proxy traps")
    assert traps is not None
    with _network() as net:
        url = "http://proxy.ssrf.test"
        net.pages.redirects["/proxy/hop"] = (302, f"{url}/")
        await ctx.configure(provider="messages", test_network=net.config({"proxy.ssrf.test": [[PUBLIC]]}, []))
        for case in PROXY_CASES:
            before = traps.connections()
            outcome = await ctx.fetch(f"{case['scheme']}://proxy.ssrf.test{case['path']}")
            used = sorted(name for name, count in traps.connections().items() if count > before[name])
            require(not used, f"{case.name}: the fetch went through the proxy named by {', '.join(used)}", used=used)
            if case.params.get("refusable") and returned_redirect(outcome):
                continue  # the redirect handed back as it is: no request past it, none through a proxy
            if case.params.get("refusable") and outcome.error_code is not None:
                expect_error(outcome, f"{case.name}: the redirect refused")
            elif case["loads"]:
                loaded = outcome.ok and PAGE_TEXT in (outcome.text or "")
                require(loaded, f"{case.name}: the public test page was not fetched directly: {outcome.brief()}")


# --- body cap and decompression bombs -------------------------------------------------------------

BODY_CAP = 65_536  # configure fetch_max_bytes
SLACK = 4096  # what a tool may add around the body (URL, status, a cut notice)
MARKER = b"ZZ-PAST-THE-CAP"
BIG = 16 * BODY_CAP
BOMB = 16 * 1024 * 1024  # decoded size of the compressed pages


def _big(declared: bool) -> Any:
    def serve(handler: _Handler) -> None:
        handler._send(b"a" * BIG + MARKER, declared=declared)

    return serve


def _packed(encoding: str) -> bytes:
    """BOMB bytes of "a" and the marker, compressed (a few KiB)."""
    if encoding == "gzip":
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    else:
        packer = zlib.compressobj(9)  # HTTP "deflate" is zlib-wrapped
    chunk = b"a" * (1024 * 1024)
    body = b"".join(packer.compress(chunk) for _ in range(BOMB // len(chunk)))
    return body + packer.compress(MARKER) + packer.flush()


def _bomb(encoding: str) -> Any:
    def serve(handler: _Handler) -> None:
        handler._send(_packed(encoding), headers={"Content-Encoding": encoding})

    return serve


BODY_CASES = (
    Case("declared", "a Content-Length over the cap read in full", {"bytes": BIG, "content_length": True}),
    Case(
        "undeclared",
        "only a declared length checked: a body without Content-Length read to its end",
        {"bytes": BIG, "content_length": False},
    ),
    Case(
        "gzip-bomb",
        "the cap applied to compressed bytes: 16 MiB inflated from a few KiB of gzip",
        {"bytes": BOMB, "content_encoding": "gzip"},
    ),
    Case("deflate-bomb", "the same through Content-Encoding deflate", {"bytes": BOMB, "content_encoding": "deflate"}),
    # From an outside hunt: HTTP allows a list of codings (applied in order); a fetcher that decodes the outer
    # one under the cap and then inflates the inner ones whole reads the cap off the wire, not off the page.
    Case("stacked-bomb", "stacked codings (gzip, gzip) decoded with only the outer one under the cap: the inner "
         "16 MiB inflated whole", {"bytes": BOMB, "content_encoding": "gzip, gzip"}),
)


def _stacked_bomb(handler: _Handler) -> None:
    handler._send(gzip.compress(_packed("gzip")), headers={"Content-Encoding": "gzip, gzip"})


# From a hunt (Q-F2): the whole body read (and inflated), then cut to the cap: what comes back is the cap's bytes,
# so only the wire shows the fault. The page here is far more than loopback socket buffers hold (64 MiB, no
# Content-Length), so its server finishes writing it only if the fetcher read it to its end; one that stops at
# the cap and hangs up breaks the write. The server says which, and the check waits for that (bounded: a fetcher
# that keeps the connection without reading it is not reading it either).
HUGE = 64 * 1024 * 1024
HUGE_WAIT = 2.0  # seconds to wait for the server's write to end once the fetch has answered
HUGE_CASES = (
    Case("undeclared-huge", "the whole body read (and inflated) and only then cut to the cap: a 64 MiB page without "
         "Content-Length read to its end", {"bytes": HUGE}),
    # From a hunt (Q-F5): a client that follows redirects itself reads each redirect's body to its end (to reuse
    # the connection) whatever its size, under no cap. The redirect's body is no page: it may be read up to the
    # cap, never to its end; following the Location, refusing, or handing the redirect back are all open.
    Case("redirect-huge-body", "a redirect's body read to its end, uncapped (drained by a client that follows "
         "redirects itself): a 302 to a page on the same host, with a declared 64 MiB body",
         {"bytes": HUGE, "redirect": True}),
)


class _HugeWrite:
    """A page of HUGE bytes of "a" and the marker, no Content-Length; ``ended`` is set when the server's write
    ends, ``completed`` says whether it wrote all of it."""

    def __init__(self, redirect: str | None = None) -> None:
        self.redirect = redirect  # a 302 to this Location, its body declared, instead of a page
        self.ended = threading.Event()
        self.completed = False

    def serve(self, handler: _Handler) -> None:
        chunk = b"a" * (1024 * 1024)
        try:
            handler.send_response(200 if self.redirect is None else 302)
            handler.send_header("Content-Type", "text/plain; charset=utf-8")
            if self.redirect is not None:
                handler.send_header("Location", self.redirect)
                handler.send_header("Content-Length", str(HUGE + len(MARKER)))
            handler.end_headers()  # HTTP/1.0: without a length the body ends when the connection closes
            for _ in range(HUGE // len(chunk)):
                handler.wfile.write(chunk)
            handler.wfile.write(MARKER)
            handler.wfile.flush()
            self.completed = True
        except OSError:
            pass  # the fetcher hung up: it stopped reading
        finally:
            self.ended.set()


_BODY_SERVERS = {"declared": _big(True), "undeclared": _big(False), "gzip-bomb": _bomb("gzip"),
                 "deflate-bomb": _bomb("deflate"), "stacked-bomb": _stacked_bomb}
# A page of exactly the cap is within it: whole, and not marked cut. Its own tiny cap, so no tool's
# output budget cuts it first (no seed fixes one; red-teaming tried 1,000 characters).
AT_CAP = 256
LAST = b"ZZ-LAST-BYTES"
AT_CAP_CASE = Case("at-cap", "the cap read as 'fewer than': a page of exactly the cap cut, refused or marked cut",
                   {"bytes": AT_CAP, "content_length": True, "cap": AT_CAP})


# From an outside hunt: the cap read in characters of the decoded text (3 bytes each here) let a page of three
# times the cap through whole. The cap is bytes: such a page comes back cut to them (and says so) or refused.
WIDE_CHARS = "搜" * AT_CAP
NOTICE = 64  # bytes a cut notice in the content may add (far below the 512 a character-counted cap lets through)
MULTIBYTE_CASE = Case("multibyte-over-cap", f"the cap counted in characters: {AT_CAP} three-byte characters "
                      f"({3 * AT_CAP} bytes) returned whole, not marked cut",
                      {"bytes": 3 * AT_CAP, "content_length": True, "cap": AT_CAP})


UNDECLARED_CASE = Case("within-cap-undeclared", "a page without Content-Length (HTTP/1.0: the body ends when the "
                       "connection closes) under the cap refused, or its end lost",
                       {"bytes": AT_CAP, "content_length": False, "cap": AT_CAP})
# A page within the byte cap whose text is long: a fetcher (or its tool) may cut it to a character cap of
# its own (no seed fixes one), but a page cut says so and a page left whole does not. The reference's own
# character cap is 100,000: the rows sit at it and past it.
LONG_CAP = 262_144
LONG_CASES = (
    Case("text-at-char-cap", "a text of exactly a fetcher's own character cap (the reference's: 100,000) marked "
         "cut though it came back whole", {"bytes": 100_000, "content_length": True, "cap": LONG_CAP}),
    Case("text-past-char-cap", "a text cut to a fetcher's own character cap (the reference's: 100,000) but not "
         "marked cut, or the page refused though within the byte cap",
         {"bytes": 150_000, "content_length": True, "cap": LONG_CAP}),
)

# Pages whose bytes come in more than one read (the server pauses between its writes), so a fetcher's cap
# meets them piece by piece (issue 24 item 5: rows the reference's mutation run showed missing).
FIRST = b"ZZ-FIRST-BYTES"
PAUSE = 0.2  # seconds between two writes of one page
OVER_IN_PIECES = Case("over-cap-in-pieces", "a page over the cap cut to the bytes of the read that crossed it (the "
                      "reads before it lost): a cut page that is not the page's beginning",
                      {"bytes": BIG, "content_length": False, "first_read": BODY_CAP // 2})
AT_CAP_GZIP = Case("at-cap-gzip", "the cap met before a compressed page's stream ended: a gzip page of exactly the cap "
                   "refused or marked cut when its last compressed bytes (the gzip trailer) come in a later read",
                   {"bytes": AT_CAP, "content_encoding": "gzip", "cap": AT_CAP})
PIECE_CASES = (OVER_IN_PIECES, AT_CAP_GZIP)


def _in_pieces(handler: _Handler, pieces: list[bytes], headers: dict[str, str]) -> None:
    handler.send_response(200)
    for name, value in {"Content-Type": "text/plain; charset=utf-8", **headers}.items():
        handler.send_header(name, value)
    handler.end_headers()
    for n, piece in enumerate(pieces):
        if n and handler.server.stop.wait(PAUSE):
            return
        try:
            handler.wfile.write(piece)
            handler.wfile.flush()
        except OSError:
            return  # the fetcher stopped reading at its cap


def _over_in_pieces(handler: _Handler) -> None:
    first = OVER_IN_PIECES["first_read"]
    page = FIRST + b"a" * (BIG - len(FIRST) - len(MARKER)) + MARKER
    _in_pieces(handler, [page[:first], page[first:]], {})  # no Content-Length: the page ends at the close


def _at_cap_gzip(handler: _Handler) -> None:
    page = b"a" * (AT_CAP - len(LAST)) + LAST
    if not _listed(handler.headers.get("Accept-Encoding", ""), "gzip"):
        handler._send(page)  # a fetcher that did not ask for gzip gets the page as it is
        return
    packed = gzip.compress(page)
    _in_pieces(handler, [packed[:-8], packed[-8:]], {"Content-Encoding": "gzip", "Content-Length": str(len(packed))})


# From an outside hunt: the byte read past the cap (to learn the page goes on) kept, so cap + 1 bytes came back
# (the slack a cut notice gets hid it). Its last byte stands right after the cap's last, so it shows alone.
PAST_BYTE = "~"
ONE_PAST_CASE = Case("one-past-cap", f"the look-ahead byte kept: a page of {AT_CAP} + 1 bytes without "
                     "Content-Length comes back whole (its last byte past the cap) or not marked cut",
                     {"bytes": AT_CAP + 1, "content_length": False, "cap": AT_CAP})


PAST_CASES = (ONE_PAST_CASE,)


def _one_past(handler: _Handler) -> None:
    handler._send(b"a" * AT_CAP + PAST_BYTE.encode(), declared=False)


def _multibyte(handler: _Handler) -> None:
    handler._send(WIDE_CHARS.encode("utf-8"))


def _at_cap(handler: _Handler) -> None:
    handler._send(b"a" * (AT_CAP - len(LAST)) + LAST)


def _undeclared(handler: _Handler) -> None:
    handler._send(b"a" * (AT_CAP - len(LAST)) + LAST, declared=False)


def _long(size: int) -> Any:
    def serve(handler: _Handler) -> None:
        handler._send(b"a" * (size - len(LAST)) + LAST)

    return serve


@check(
    "ssrf.caps.body",
    "A page over the configured byte cap (declared, undeclared or compressed) is cut to the cap or refused",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: a fetched page is bounded (and seed 001 keeps the HTTP fetcher's resource limits); the "
    "cap (configure fetch_max_bytes) holds for the decoded body, whatever the server declares or "
    "compresses (one coding or a list of them). Cutting and refusing are both accepted; nothing past the cap "
    "may come back, and a page cut "
    "says so (truncated true: the web_fetch value schema sets it when anything was cut). A page of exactly "
    "the cap is within it: it comes back whole, not marked cut, with or without a Content-Length. The cap counts "
    "bytes, not characters: a page of three-byte characters is cut to the cap's bytes. A page within "
    "the cap whose text is long comes back (cut to a character cap of the fetcher's own, if it has one, and then "
    "marked cut; left whole, not marked cut). A page cut is cut to its first bytes, whatever reads its bytes "
    "arrive in; a compressed page of exactly the cap comes back whole however its compressed bytes are split. "
    "The cap bounds what is read, not only what is shown: a page far over it without Content-Length, or a redirect's "
    "body far over it, is not read to its end (its server never finishes writing it).",
    cases=(*BODY_CASES, *HUGE_CASES, AT_CAP_CASE, UNDECLARED_CASE, *PAST_CASES, MULTIBYTE_CASE, *LONG_CASES,
           *PIECE_CASES),
)
async def body_cap(ctx: CheckContext) -> None:
    with _network() as net:
        for name, serve in _BODY_SERVERS.items():
            net.pages.special[f"/big/{name}"] = serve
        net.pages.special["/big/at-cap"] = _at_cap
        net.pages.special["/big/within-cap-undeclared"] = _undeclared
        net.pages.special["/big/multibyte-over-cap"] = _multibyte
        net.pages.special["/big/one-past-cap"] = _one_past
        net.pages.special["/big/over-cap-in-pieces"] = _over_in_pieces
        net.pages.special["/big/at-cap-gzip"] = _at_cap_gzip
        for case in LONG_CASES:
            net.pages.special[f"/big/{case.name}"] = _long(case["bytes"])
        test_network = net.config({"caps.ssrf.test": [[PUBLIC]]}, [])
        await ctx.configure(provider="messages", test_network=test_network, fetch_max_bytes=BODY_CAP)
        for case in BODY_CASES:
            outcome = await ctx.fetch(f"http://caps.ssrf.test/big/{case.name}")
            if not outcome.ok:
                expect_error(outcome, case.name)
                continue
            text, value = outcome.text or "", json.dumps(outcome.value)
            require(MARKER.decode() not in text + value, f"{case.name}: bytes past the {BODY_CAP}-byte cap came back")
            require(
                len(text) <= BODY_CAP + SLACK and len(value) <= 2 * BODY_CAP + SLACK,
                f"{case.name}: {len(text)} characters of text for a {BODY_CAP}-byte cap",
                text_chars=len(text),
                value_chars=len(value),
            )
            if "a" * 1024 in text:  # the page's own bytes, so it was read and cut (a body left compressed is not)
                require((outcome.value or {}).get("truncated") is True,
                        f"{case.name}: the page was cut to the cap but truncated is not true")
        for case in HUGE_CASES:
            huge = _HugeWrite(f"/big/{case.name}/page" if case.params.get("redirect") else None)
            net.pages.special[f"/big/{case.name}"] = huge.serve
            outcome = await ctx.fetch(f"http://caps.ssrf.test/big/{case.name}")
            await ctx.blocking(huge.ended.wait, HUGE_WAIT)
            what = "a redirect's body" if case.params.get("redirect") else "a page without Content-Length"
            require(not huge.completed, f"{case.name}: the server wrote all {HUGE} bytes of {what}: it was read to "
                    f"its end for a {BODY_CAP}-byte cap", catches=case.catches)
            if not outcome.ok:
                expect_error(outcome, case.name)
                continue
            text = outcome.text or ""
            require(MARKER.decode() not in text and len(text) <= BODY_CAP + SLACK,
                    f"{case.name}: bytes past the {BODY_CAP}-byte cap came back", catches=case.catches)
        if OVER_IN_PIECES in PIECE_CASES:
            case = OVER_IN_PIECES
            outcome = await ctx.fetch(f"http://caps.ssrf.test/big/{case.name}")
            if not outcome.ok:
                expect_error(outcome, case.name)
            else:
                text = outcome.text or ""
                require(MARKER.decode() not in text and len(text) <= BODY_CAP + SLACK,
                        f"{case.name}: bytes past the {BODY_CAP}-byte cap came back", catches=case.catches)
                require(FIRST.decode() in text, f"{case.name}: the page came back cut, but not to its first "
                        f"{BODY_CAP} bytes (its first bytes are missing)", catches=case.catches)
                require((outcome.value or {}).get("truncated") is True,
                        f"{case.name}: the page was cut to the cap but truncated is not true", catches=case.catches)
        await ctx.configure(provider="messages", test_network=test_network, fetch_max_bytes=AT_CAP)
        within = ((AT_CAP_CASE, f"at-cap: a page of exactly the {AT_CAP}-byte cap"),
                  (UNDECLARED_CASE, f"within-cap-undeclared: a page of {AT_CAP} bytes without Content-Length"),
                  *(((AT_CAP_GZIP, f"at-cap-gzip: a gzip page of exactly the {AT_CAP}-byte cap, its trailer in a "
                     "later read"),) if AT_CAP_GZIP in PIECE_CASES else ()))
        for case, what in within:
            outcome = await ctx.fetch(f"http://caps.ssrf.test/big/{case.name}")
            text = outcome.text or ""
            if case is AT_CAP_GZIP and outcome.ok and LAST.decode() not in text and "a" * 64 not in text:
                continue  # the gzip bytes were not inflated at all: ssrf.body.decoded's to judge, not the cap's
            require(outcome.ok, f"{what} was refused ({outcome.error_code})", catches=case.catches)
            require(LAST.decode() in (outcome.text or ""), f"{what} lost its last bytes", catches=case.catches)
            require((outcome.value or {}).get("truncated") is False, f"{what} is marked cut (truncated is not false)",
                    catches=case.catches)
        for case in PAST_CASES:
            outcome = await ctx.fetch(f"http://caps.ssrf.test/big/{case.name}")
            if not outcome.ok:
                expect_error(outcome, case.name)
                continue
            content = str(((outcome.value or {}).get("body") or {}).get("content", ""))
            page = "a" * AT_CAP + PAST_BYTE
            require(page not in content and page not in (outcome.text or ""), f"{case.name}: all {AT_CAP + 1} bytes "
                    f"of the page came back for a {AT_CAP}-byte cap", catches=case.catches)
            require((outcome.value or {}).get("truncated") is True, f"{case.name}: the page was cut to the cap but "
                    "truncated is not true", catches=case.catches)
        case = MULTIBYTE_CASE
        outcome = await ctx.fetch(f"http://caps.ssrf.test/big/{case.name}")
        if outcome.ok:
            content = str(((outcome.value or {}).get("body") or {}).get("content", ""))
            # A character the cut split may show as U+FFFD, and a short cut notice may stand in the content.
            size = len(content.rstrip("\ufffd").encode("utf-8"))
            require(size <= AT_CAP + NOTICE, f"{case.name}: {size} bytes of the page came back for a {AT_CAP}-byte "
                    f"cap (its {content.count('搜')} characters counted instead)", catches=case.catches)
            require((outcome.value or {}).get("truncated") is True, f"{case.name}: the page was cut to the cap but "
                    "truncated is not true", catches=case.catches)
        await ctx.configure(provider="messages", test_network=test_network, fetch_max_bytes=LONG_CAP)
        for case in LONG_CASES:
            outcome = await ctx.fetch(f"http://caps.ssrf.test/big/{case.name}")
            what = f"{case.name}: a page of {case['bytes']} bytes within the {LONG_CAP}-byte cap"
            require(outcome.ok, f"{what} was refused ({outcome.error_code})", catches=case.catches)
            whole = LAST.decode() in (outcome.text or "")
            truncated = (outcome.value or {}).get("truncated")
            require(truncated is (not whole), f"{what} came back {'whole' if whole else 'cut'} but truncated is "
                    f"{truncated!r}", catches=case.catches)


# --- redirect hops ----------------------------------------------------------------------------------

HOP_CAP = 3  # configure fetch_max_redirects
CHAIN = 12
HOP_CASES = (
    Case("chain", f"no hop cap: a same-origin chain of {CHAIN} redirects followed to its end", {"path": "/hop/0"}),
    Case(
        "chain-307-308",
        "only 301/302/303 hops counted: a chain of 307 and 308 redirects (method kept) followed to its end",
        {"path": "/hop307/0"},
    ),
    Case(
        "loop",
        "hops counted per distinct URL: a redirect to itself never adds one (failed by the request count, "
        "or errored when the call never answers)",
        {"path": "/loop"},
    ),
    # From a hunt (Q-F4): hops counted per host, so a chain that moves to a new host at every hop was never
    # capped. The cap is the fetch's: a fetcher that refuses every cross-origin redirect passes at the first hop.
    Case("cross-host-chain", f"hops counted per host: a chain of {CHAIN} redirects, each to a new public host "
         "(hop1.ssrf.test, hop2.ssrf.test, ...), followed to its end", {"path": "/xhop/0", "hosts": "hop"}),
)
# A chain of exactly the cap is within it. No seed makes a fetcher follow a redirect at all, so the row
# binds only a fetcher that followed the control (one same-origin hop to a page); one that refused it may
# refuse the chain too (with a WEB_* error).
HOP_CONTROL = Case("one-hop", "control: one same-origin redirect to a page followed (then a chain of exactly the "
                   "cap must be), or every redirect refused (seed-open)", {"path": f"/exact/{HOP_CAP - 1}"})
AT_HOP_CAP = Case("at-cap", f"the hop cap read as 'fewer than' (or hops counted from 1, or twice): a same-origin "
                  f"chain of exactly {HOP_CAP} redirects refused", {"path": "/exact/0"})
# From an outside hunt: a cap of 0 taken for 'unset' (a falsy value replaced by the default), so redirects
# are followed although the deployment allows none.
ZERO_HOPS = Case("zero-hops", "a configured cap of 0 read as unset (the default cap applied): a redirect followed "
                 "to its page although no hop is allowed", {"path": f"/exact/{HOP_CAP - 1}"})


@check(
    "ssrf.caps.redirects",
    "At most the configured number of redirect hops is followed (a chain, a loop)",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: every redirect is validated again, and seed 001 keeps the HTTP fetcher's resource "
    "limits: at most configure fetch_max_redirects hops are followed (0: none), counted over the whole chain "
    "whatever hosts it crosses; the fetch then ends with a "
    "WEB_* error (or any answer but the page behind the last hop). A chain of exactly that many hops is "
    "within the cap: a fetcher that followed one same-origin redirect to its page must follow it to its page "
    "(no seed makes a fetcher follow redirects, so one that refused that control may refuse the chain).",
    cases=(*HOP_CASES, HOP_CONTROL, AT_HOP_CAP, ZERO_HOPS),
)
async def redirect_cap(ctx: CheckContext) -> None:
    with _network() as net:
        origin = "http://hops.ssrf.test"
        for n in range(CHAIN):
            net.pages.redirects[f"/hop/{n}"] = (302, f"{origin}/hop/{n + 1}")
            net.pages.redirects[f"/hop307/{n}"] = (307 + n % 2, f"{origin}/hop307/{n + 1}")
            net.pages.redirects[f"/xhop/{n}"] = (302, f"http://hop{n + 1}.ssrf.test/xhop/{n + 1}")
        net.pages.redirects["/loop"] = (302, f"{origin}/loop")
        for n in range(HOP_CAP):  # /exact/0 -> ... -> /exact/HOP_CAP, a page
            net.pages.redirects[f"/exact/{n}"] = (302, f"{origin}/exact/{n + 1}")
        hosts = {"hops.ssrf.test": [[PUBLIC]]} | {f"hop{n}.ssrf.test": [[PUBLIC]] for n in range(CHAIN + 1)}
        test_network = net.config(hosts, [])
        await ctx.configure(provider="messages", test_network=test_network, fetch_max_redirects=HOP_CAP)
        for case in HOP_CASES:
            net.pages.served.clear()
            start = "http://hop0.ssrf.test" if case.params.get("hosts") else origin
            outcome = await ctx.fetch(start + case["path"])
            requests = len(net.pages.served)
            require(
                requests <= HOP_CAP + 1,
                f"{case.name}: {requests} requests for a cap of {HOP_CAP} redirects (at most {HOP_CAP + 1})",
                requests=requests,
            )
            require(PAGE_TEXT not in (outcome.text or ""), f"{case.name}: the page behind the last hop came back")
            if not outcome.ok:
                expect_error(outcome, case.name)
        followed = False  # the control came back: the chain of exactly the cap must too
        for case in (HOP_CONTROL, AT_HOP_CAP):
            outcome = await ctx.fetch(origin + case["path"])
            require(not outcome.cancelled, f"{case.name}: the call reported cancelled")
            loaded = outcome.ok and PAGE_TEXT in (outcome.text or "")
            if case is HOP_CONTROL:
                followed = loaded
            if not followed:  # redirects not followed (seed-open): an answer that is not the page, or a refusal
                if not outcome.ok:
                    expect_error(outcome, case.name)
                continue
            require(loaded, f"{case.name}: a same-origin chain of {HOP_CAP} redirects (the cap) did not end at its "
                    f"page: {outcome.brief()}", catches=case.catches)
        if not await ctx.configure_if_accepted(provider="messages", test_network=test_network, fetch_max_redirects=0):
            ctx.note("ssrf.caps.redirects", {"zero-hops": "fetch_max_redirects 0 refused at configure: not judged"})
            return
        net.pages.served.clear()
        outcome = await ctx.fetch(origin + ZERO_HOPS["path"])
        requests = len(net.pages.served)
        require(requests <= 1 and PAGE_TEXT not in (outcome.text or ""), f"{ZERO_HOPS.name}: {requests} requests, "
                "and the page behind the redirect came back" if requests > 1 else f"{ZERO_HOPS.name}: the page "
                "behind the redirect came back for a cap of 0 redirects", catches=ZERO_HOPS.catches)
        if not outcome.ok:
            expect_error(outcome, ZERO_HOPS.name)


# --- one deadline -------------------------------------------------------------------------------------

DEADLINE = 1.0  # configure timeout_s
MARGIN = 1.5  # seconds an answer may take past the deadline (closing, the adapter); the load is measured apart
# How long the slow servers keep going before they end on their own. Only a wrong fetcher waits it out (a
# right one answers at the deadline, and the run then stops the servers), so it is long: an answer that
# comes only once the server ended is late whatever the load, and no plausible stall makes a right one do that.
HOLD = DEADLINE + 5.0
DRIP = 0.1  # seconds between two dripped bytes


def _silent(handler: _Handler) -> None:
    handler.server.stop.wait(HOLD)  # accepted, never answered; the connection closes after HOLD


def _drip_body(handler: _Handler) -> None:
    size = int(HOLD / DRIP)
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain; charset=utf-8")
    handler.send_header("Content-Length", str(size))
    handler.end_headers()
    _drip(handler, [b"a"] * size)


def _drip_headers(handler: _Handler) -> None:
    handler.wfile.write(b"HTTP/1.0 200 OK\r\n")
    lines = [f"X-Drip-{i}: a\r\n".encode() for i in range(int(HOLD / DRIP))]
    _drip(handler, [*lines, b"Content-Length: 0\r\n\r\n"])


HOP_WAIT = 0.6  # each hop of the slow chain answers after this long: under the deadline, never its sum
SLOW_HOPS = 8


def _slow_hop(handler: _Handler) -> None:
    if handler.server.stop.wait(HOP_WAIT):
        return
    n = int(handler.path.rsplit("/", 1)[1]) if handler.path.count("/") > 2 else 0
    if n + 1 == SLOW_HOPS:
        _ending(handler)
    handler.send_response(302)
    handler.send_header("Location", f"/slow/slow-hops/{n + 1}" if n + 1 < SLOW_HOPS else "/")
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def _ending(handler: _Handler) -> None:
    """Mark the answer ended before its last byte goes out: a fetcher may read that byte and answer
    before this thread runs again, and such an answer still came only once the server ended."""
    handler.server.finished.add(handler.path.split("?", 1)[0])


def _drip(handler: _Handler, pieces: list[bytes]) -> None:
    for n, piece in enumerate(pieces, 1):
        if handler.server.stop.wait(DRIP):
            return
        if n == len(pieces):
            _ending(handler)
        try:
            handler.wfile.write(piece)
            handler.wfile.flush()
        except OSError:
            return  # the fetcher gave up


DEADLINE_CASES = (
    Case("silent", "no deadline at all: waiting as long as the server keeps the connection", {"server_s": HOLD}),
    Case(
        "drip-body",
        "a timeout per read instead of one deadline: a byte every 0.1 s never trips it",
        {"server_s": HOLD, "every_s": DRIP},
    ),
    Case(
        "drip-headers",
        "a per-read timeout until the headers are in, the one deadline only over the body: headers "
        "dripped line by line",
        {"server_s": HOLD, "every_s": DRIP},
    ),
    Case(
        "slow-hops",
        f"a deadline per redirect hop: {SLOW_HOPS} hops of {HOP_WAIT:g} s each, every one under the deadline",
        {"hops": SLOW_HOPS, "each_s": HOP_WAIT, "answers": True},
    ),
    # From a review (R4): a fetcher that resolved and connected with no time limit and started its timeout_s once
    # connected passed every row (the test network dials loopback, where the kernel completes the handshake even
    # if the server never accepts); against a connect that hangs, a call with timeout_s 1 stayed open 134 s.
    Case(
        "slow-connect",
        "the deadline started only once connected: a connect that hangs (a listener whose accept queue is full, "
        "so the kernel drops the handshake) waited out unbounded",
        {"host": "connect.ssrf.test", "server_s": HOLD},
    ),
    # From a hunt (W1-2): every row ran under timeout_s 1, so a fetcher reading timeout_s as whole seconds with 0 as
    # "no deadline" (a duration of whole seconds, a client whose timeout 0 means none) was certified. Alone, after
    # the others, under a deadline of its own; a fetcher rounding it up answers within the margin (not judged).
    Case(
        "silent-half-second",
        "timeout_s read as whole seconds, 0 as no deadline: under 0.5 s, waiting as long as the server keeps the "
        "connection",
        {"server_s": HOLD, "timeout_s": 0.5},
    ),
)
HUNG = "93.184.215.77"  # a public address the test network dials to a listener whose connect hangs
FILL = 3  # connections that fill that listener's accept queue (backlog 0) before a fetcher's


class _HungConnect:
    """A loopback listener that never accepts, its accept queue filled by connections of its own: the kernel then
    drops a new handshake, so a connect to it hangs (SYNs resent for minutes). Where a kernel refuses the connect
    instead, or completes it, a right fetcher still ends with an error or at its deadline. :meth:`close` (HOLD
    after the row's call was sent, or when the run ends) ends it: a connect still waiting is then refused."""

    def __init__(self) -> None:
        self.ended = False
        self.port = 0
        self._sockets: list[socket.socket] = []

    def open(self) -> None:
        listener = self._socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        self.port = listener.getsockname()[1]
        for _ in range(FILL):
            queued = self._socket()
            queued.setblocking(False)
            queued.connect_ex(("127.0.0.1", self.port))  # completed into the queue, or left waiting: either fills it

    def _socket(self) -> socket.socket:
        made = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sockets.append(made)
        return made

    def close(self) -> None:
        self.ended = True  # before the close: an answer the close brings comes once the server ended
        for made in self._sockets:
            made.close()


@contextmanager
def _hung_connect() -> Iterator[_HungConnect]:
    hung = _HungConnect()
    try:
        hung.open()
        yield hung
    finally:
        hung.close()


_SLOW_SERVERS = {"silent": _silent, "drip-body": _drip_body, "drip-headers": _drip_headers, "slow-hops": _slow_hop,
                 "silent-half-second": _silent}


@check(
    "ssrf.deadline",
    "A server that never accepts, never answers or drips its answer ends the fetch with an error within the one "
    "deadline",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: the fetcher reaches only validated addresses, and seed 001's HTTP provider 'retains its own "
    "... resource limits'; a deadline is one. No seed fixes its value or shape, so the adapter protocol does: "
    "configure's timeout_s covers the whole "
    "fetch, its connects (a connect that hangs, the server never accepting), every read and every redirect hop "
    "included, and it is a number of seconds, a fraction too: 0.5 is half a second, never no deadline (a row of "
    "its own, after the others; a target may refuse a deadline that short at configure, and the row is then not "
    "judged). No seed fixes the error code, so any WEB_* error "
    "is accepted; it must come before the server ends its answer and within the deadline plus a quiet "
    f"margin of {MARGIN:g} s, counted from when the fetch's first request reached the server: no seed decides "
    "whether separate web_fetch calls run side by side, and seed 001's 'own ... resource limits' leave a fetcher "
    "free to run them one at a time (or one per host), so time a call waits before its fetch starts is not the "
    "fetch's (a call whose fetch never reached the server is timed from when it was sent). Timing is judged "
    "against this run's load (certification/calibration.py): an "
    "answer later than that, but by no more than the suite's measured loop lag and the target's no-op round "
    "trip explain, is re-run (at most 3 runs); the check fails only when every run was late beyond its "
    "measured load, and passes with a 'late under load' note when no run met the bound but the load explains it. "
    f"An answer that comes only once the server ended its answer ({HOLD:g} s, {HOLD - DEADLINE:g} s past the "
    "deadline) is the wrong reading itself, so no load excuses it: one such run is late whatever the lag.",
    cases=DEADLINE_CASES,
    slot="quiet",  # measures the answer against the deadline plus a margin
)
async def deadline(ctx: CheckContext) -> None:
    await judge_timed(ctx, "ssrf.deadline", functools.partial(_deadline_run, ctx))


async def _deadline_run(ctx: CheckContext) -> list[Timed]:
    """One run of every row at once, on servers of its own (a re-run never sees an earlier run's
    slow answers end); the answers' timings, for :func:`judge_timed`."""
    arrived: dict[str, float] = {}  # each slow path's first request: when it reached the server
    with _network() as net, _hung_connect() as hung:
        for name, serve in _SLOW_SERVERS.items():
            net.pages.special[f"/slow/{name}"] = _noting(arrived, serve)
        for n in range(1, SLOW_HOPS):
            net.pages.special[f"/slow/slow-hops/{n}"] = _slow_hop
        hosts = {"slow.ssrf.test": [[PUBLIC]]} | {c["host"]: [[HUNG]] for c in DEADLINE_CASES if "host" in c.params}
        test_network = net.config(hosts, [])
        test_network["dial"][HUNG] = hung.port
        # Hops enough for the whole slow chain: a deadline per hop then follows it to its end, and answers only
        # once the server ended, which no load excuses (a hop cap would stop it earlier, merely late).
        await ctx.configure(provider="messages", test_network=test_network, timeout_s=DEADLINE,
                            fetch_max_redirects=SLOW_HOPS + 2)
        return await _deadline_rows(ctx, net, arrived, hung)


def _noting(arrived: dict[str, float], serve: Any) -> Any:
    """``serve``, noting when its path's first request reached the server."""

    def noted(handler: _Handler) -> None:
        arrived.setdefault(handler.path.split("?", 1)[0], time.monotonic())
        serve(handler)

    return noted


async def _deadline_rows(ctx: CheckContext, net: Any, arrived: dict[str, float], hung: _HungConnect) -> list[Timed]:
    """Every row of the page server at once (each server is its own path, so a target that runs fetches side by
    side takes one deadline a run, not four), each timed from when its fetch's first request reached the server;
    then the row whose connect hangs, alone.

    From a hunt (U1-1): a fetcher that runs web_fetch calls one at a time, or one fetch per host at a time, every
    fetch ending at its own deadline, failed when each answer was timed from when its call was sent: the rows
    queued behind each other (drip-headers answered after 3.0 s), and the queue counted as fetch time. No seed
    decides whether separate calls run side by side; such a target now takes a deadline per row (about 4 s a run),
    and a fetch that outlives its deadline is late (or answers only once the server ended) however it queued.
    A fetch whose connect hangs never reaches a server, so that row is timed from when its call was sent: it
    runs once the others answered, so no call of this check is queued before it."""
    served = [case for case in DEADLINE_CASES if "host" not in case.params and "timeout_s" not in case.params]
    started = time.monotonic()
    calls = [
        ctx.target.start_call(
            "web_fetch",
            {"arguments": {"url": f"http://slow.ssrf.test/slow/{case.name}"}},
            # Read the moment the answer arrives: had the server already ended its answer?
            probe=functools.partial(_ended, net.pages, _last_path(case.name)),
        )
        for case in served
    ]
    timed: list[Timed] = []
    for case, call in zip(served, calls, strict=True):
        outcome = await call.outcome(CALL_TIMEOUT)
        # A call whose fetch never reached the server (refused, or timed out queued) is timed from when it was sent.
        took = outcome.answered_at - arrived.get(f"/slow/{case.name}", started)
        timed.append(_judged(case, outcome, took, "its request reached the server"))
    for case in DEADLINE_CASES:
        if "host" not in case.params:
            continue
        sent = time.monotonic()
        call = ctx.target.start_call("web_fetch", {"arguments": {"url": f"http://{case['host']}/slow/{case.name}"}},
                                     probe=lambda: hung.ended)
        # Only a fetcher whose connect is outside its deadline is still waiting then: refused, it answers.
        closing = asyncio.get_running_loop().call_later(HOLD, hung.close)
        try:
            outcome = await call.outcome(CALL_TIMEOUT)
        finally:
            closing.cancel()
        timed.append(_judged(case, outcome, outcome.answered_at - sent, "its call was sent"))
    for case in DEADLINE_CASES:
        if "timeout_s" not in case.params:
            continue
        if not await ctx.configure_if_accepted(timeout_s=case["timeout_s"]):
            # refused at configure: no fetch runs without the deadline it was given (review R8-3: open)
            ctx.note(case.name, f"timeout_s {case['timeout_s']:g} refused at configure: not judged")
            continue
        sent = time.monotonic()
        path = f"/slow/{case.name}"
        call = ctx.target.start_call("web_fetch", {"arguments": {"url": f"http://slow.ssrf.test{path}"}},
                                     probe=functools.partial(_ended, net.pages, path))
        outcome = await call.outcome(CALL_TIMEOUT)
        took = outcome.answered_at - arrived.get(path, sent)
        timed.append(_judged(case, outcome, took, "its request reached the server"))
    return timed


def _judged(case: Case, outcome: CallOutcome, took: float, since: str) -> Timed:
    """A row's answer, ``took`` seconds after ``since``: its timing claim (a WEB_* error, or the slow chain's
    redirect, is required of it here)."""
    deadline = case.params.get("timeout_s", DEADLINE)
    bound = deadline + MARGIN
    if outcome.at_answer is not False:  # the server's end was the fetcher's deadline: late whatever the load
        return Timed(f"{case.name}: the call answered only once the server ended ({took:.1f} s after {since}; the "
                     f"deadline is {deadline:g} s)", took, bound, case.catches, cap=0.0)
    if not (outcome.ok and case.params.get("answers")):  # a fetcher may stop at a redirect it got in time
        expect_error(outcome, case.name)
    return Timed(f"{case.name}: answered {took:.1f} s after {since}; the deadline is {deadline:g} s", took, bound,
                 case.catches)


def _last_path(name: str) -> str:
    """The path whose end means the server ended its answer (the slow chain: its last hop)."""
    return f"/slow/slow-hops/{SLOW_HOPS - 1}" if name == "slow-hops" else f"/slow/{name}"


def _ended(pages: _Pages, path: str) -> bool:
    return path in pages.finished
