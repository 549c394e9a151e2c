"""What a fetched body becomes (seed 002's fetch step, over the SSRF test network): the page's text.

Seed 002 reads passages out of the pages it fetched, and seed 001 keeps local HTTP fetch as the shipped
web_fetch; neither names an encoding. HTTP does: a client lists in ``Accept-Encoding`` the content codings
it can decode (their names are case-insensitive), and a page declares its charset. So the server here
compresses a body only with a coding the request listed, and such a body must come back decoded. For
what a fetcher never asked for (x-gzip, raw deflate) and for charsets, the seeds leave the choice open:
a ``WEB_*`` refusal is accepted, but a success must carry the page's own text, never the compressed
bytes, mojibake or undecodable bytes smuggled into the text.
"""

from __future__ import annotations

import gzip
import html
import struct
import zlib
from collections.abc import Callable

from ...schemas import validate
from ..cases import Case
from ._base import CheckContext, check, expect_error, require
from ._leaks import json_unescaped
from .ssrf import PUBLIC, REQUIRES, _Handler, _network

WORDS = "decoded page text"  # ASCII words every row's page carries


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def _broken_later() -> tuple[bytes, bytes]:
    """A zlib stream in two reads: a stored block (not the last) of "decoded page zebra " and raw deflate of
    "smuggled", split where the raw deflate starts; then a block of the reserved type 3, so the stream breaks.
    The page's words all come in the first read: whether a decoder keeps the bytes of the read that breaks
    is its library's business (zlib and Go hand them over, Python's decompressobj and Node's stream do not)."""
    stored = b"decoded page zebra " + _raw_deflate(b"smuggled")
    head = b"x\x01\x00" + struct.pack("<HH", len(stored), 0xFFFF ^ len(stored))
    return head + stored[:19], stored[19:] + b"\x07"


# name, what it catches, the Content-Encoding sent, the coding the request must list for it (the body
# goes out uncompressed otherwise), the Content-Type, the page's text, its bytes before the coding, and
# whether a refusal is accepted.
ROWS = (
    Case("gzip", "Content-Encoding ignored (gzip bytes shown as text), or gzip listed but not decoded",
         {"coding": "gzip", "needs": "gzip", "type": "text/plain; charset=utf-8", "text": WORDS,
          "refusal": False}),
    Case("coding-upper-case", "content-coding names compared case-sensitively (HTTP: they are not): GZIP",
         {"coding": "GZIP", "needs": "gzip", "type": "text/plain; charset=utf-8", "text": WORDS,
          "refusal": False}),
    Case("deflate", "deflate listed but not decoded (the zlib format HTTP names deflate)",
         {"coding": "deflate", "needs": "deflate", "type": "text/plain; charset=utf-8", "text": WORDS,
          "refusal": False}),
    Case("deflate-raw", "raw deflate (no zlib header, as some servers send) shown as text",
         {"coding": "deflate", "needs": "deflate", "type": "text/plain; charset=utf-8", "text": WORDS,
          "refusal": True, "raw": True}),
    Case("x-gzip", "only the exact name 'gzip' inflated: an x-gzip body shown as text",
         {"coding": "x-gzip", "needs": "gzip", "type": "text/plain; charset=utf-8", "text": WORDS,
          "refusal": True}),
    Case("latin-1", "the declared charset ignored: ISO-8859-1 read as UTF-8 (café becomes caf\ufffd)",
         {"type": "text/plain; charset=iso-8859-1", "text": f"{WORDS}: café", "encode": "latin-1",
          "refusal": True}),
    Case("gb2312", "a multi-byte charset read as a single-byte one (or as UTF-8): 北京 lost",
         {"type": "text/plain; charset=gb2312", "text": f"{WORDS}: 北京 朱镕基", "encode": "gbk", "refusal": True,
          "also": "gb2312"}),  # browsers read the label as GBK; HTTP as GB2312, where 镕 is missing
    Case("utf-8-bom", "more than a byte-order mark dropped (the page's first character lost)",
         {"type": "text/plain; charset=iso-8859-1", "text": f"{WORDS}: café", "encode": "utf-8-sig",
          "refusal": True, "also": "cp1252"}),  # browsers let the mark win; HTTP reads the label
    Case("stray-byte", "the text after an undecodable byte lost (decoding stopped there), or the byte kept as a "
         "lone surrogate (no longer Unicode text)",
         {"type": "text/plain; charset=utf-8", "text": f"{WORDS} after", "stray_byte": "ff", "refusal": True}),
)
# Replies rather than bodies: one that is not HTTP, a status out of range, the smallest pages.
REPLY_ROWS = (
    Case("not-http", "a reply that is not HTTP (no status line) failing without a WEB_* error code",
         {"type": "text/plain; charset=utf-8", "text": WORDS, "refusal": True, "no_status_line": True}),
    Case("status-999", "a reply whose status is outside 100-599 failing without a WEB_* error code",
         {"type": "text/plain; charset=utf-8", "text": WORDS, "refusal": True, "status": 999}),
    Case("nul-status-line", "a status line of 95,000 NUL bytes (an error text quoting it runs past any output cap) "
         "failing without a WEB_* error code", {"type": "text/plain; charset=utf-8", "text": WORDS, "refusal": True,
                                                "nul_line": 95_000}),
    Case("one-byte", "a page of one byte (Content-Length: 1) taken for an empty one",
         {"type": "text/plain; charset=utf-8", "text": "Z", "refusal": False}),
    Case("empty", "an empty page (Content-Length: 0) shown with text it does not have",
         {"type": "text/plain; charset=utf-8", "text": "", "refusal": True}),
)

# Pages whose labels the reference reads (issue 24 item 5: rows its mutation run showed missing). The seeds
# leave which types, charsets and codings a fetcher reads open, so each may be refused with a WEB_* error
# (``refusal``), except an HTML page (seed 002 reads its passages out of the web pages it fetched).
LABEL_ROWS = (
    Case("no-charset", "a page that declares no charset (text/plain alone) refused without a WEB_* error code, or "
         "read as another charset than its plain ASCII", {"type": "text/plain", "text": WORDS, "refusal": True}),
    Case("utf-8-text", "a page declared UTF-8 read as another charset (GBK, Latin-1): café 北京 lost",
         {"type": "text/plain; charset=utf-8", "text": f"{WORDS}: café 北京", "refusal": True}),
    Case("charset-no-space", "a charset parameter found only after '; ' (text/plain;charset=iso-8859-1 read as "
         "UTF-8): café lost", {"type": "text/plain;charset=iso-8859-1", "text": f"{WORDS}: café",
                               "encode": "latin-1", "refusal": True}),
    Case("unknown-charset", "a charset the fetcher does not read (utf-7) refused without a WEB_* error code",
         {"type": "text/plain; charset=utf-7", "text": WORDS, "refusal": True}),
    Case("unknown-coding", "a content coding the fetcher does not know refused without a WEB_* error code",
         {"type": "text/plain; charset=utf-8", "text": WORDS, "refusal": True, "label": "x-unknown"}),
    Case("corrupt-gzip", "a body that is not the gzip it is labelled (its inflating fails) refused without a "
         "WEB_* error code", {"type": "text/plain; charset=utf-8", "text": WORDS, "refusal": True, "label": "gzip"}),
    Case("image-type", "a type the fetcher does not read (image/png) refused without a WEB_* error code",
         {"type": "image/png", "text": WORDS, "refusal": True}),
    Case("html-page", "an HTML page refused (its type read as unknown, or its result malformed), or its value "
         "outside the web_fetch output schema (a body kind neither html nor text)",
         {"type": "text/html; charset=utf-8", "text": f"<p>{WORDS}</p>", "shows": WORDS, "refusal": False,
          "schema": True}),
    # From a hunt (U1-2): a text that wraps the page in an envelope and escapes it as XML (<b> shown as &lt;b&gt;,
    # &amp; as &amp;amp;) failed, the words looked for in the escaped text. No seed fixes web_fetch's text: its words
    # are judged as they are or once unescaped (each reading whole), so a page read as HTML still fails, escaped
    # or not, and so does one whose entities alone were decoded before the envelope escaped it.
    Case("plain-markup", "a text/plain page read as HTML: its markup characters taken for tags (<b> and &amp; lost)",
         {"type": "text/plain; charset=utf-8", "text": f"{WORDS}: a <b>bold</b> a&amp;b", "refusal": True}),
)
# Bodies whose bytes come in more than one read (the server pauses between its writes): a coding the fetcher
# asked for is decoded whole however the bytes are split, and a gzip body of two members (RFC 1952: a gzip
# file is a series of members; HTTP's gzip coding is that format) to the end of its last member, or refused.
PAUSE = 0.2  # seconds between two writes of one body
PIECE_ROWS = (
    Case("gzip-in-pieces", "a compressed body decoded only as far as its first read (here the 10-byte gzip header "
         "alone): the page's text lost", {"coding": "gzip", "needs": "gzip", "type": "text/plain; charset=utf-8",
                                          "text": WORDS, "refusal": False, "split": 10}),
    # A refusal is accepted: multi-member bodies are rare in HTTP and some clients' decoders stop after the first
    # member; what no fetcher may do is show the first member as if it were the whole page.
    Case("gzip-members", "a gzip body of two members (RFC 1952) read only to the end of the first: the second "
         "member's text lost without a word", {"coding": "gzip", "needs": "gzip", "type": "text/plain; charset=utf-8",
                                              "text": f"{WORDS} from two members", "refusal": True,
                                              "members": WORDS}),
    # A deflate stream that breaks in its second read (a stored block, then a reserved block type): raw deflate
    # is a fallback for a body's start only. The stored bytes that open the second read are themselves a raw
    # deflate stream of "smuggled", so a decoder that starts that read afresh shows a word the page never held.
    Case("deflate-broken-later", "a deflate body whose stream breaks in a later read decoded from that read afresh "
         "as raw deflate (the raw fallback taken mid-stream): bytes the page stores inflated into a word it does "
         "not hold", {"coding": "deflate", "needs": "deflate", "type": "text/plain; charset=utf-8",
                      "text": "decoded page zebra", "refusal": True, "pieces": _broken_later(),
                      "never": ("smuggled",)}),
    # From the seed-8 mutation draw: bytes after the end of a gzip stream that start no member (a line break, as
    # some servers append) are no part of the page, which the stream holds whole; a refusal is accepted.
    Case("gzip-trailing-bytes", "a gzip page followed by bytes that start no member (a line break) marked cut "
         "(truncated true) although its whole text came back", {"coding": "gzip", "needs": "gzip",
                                                                "type": "text/plain; charset=utf-8", "text": WORDS,
                                                                "refusal": True, "whole": True,
                                                                "pieces": (gzip.compress(WORDS.encode()) + b"\r\n",)}),
)

# From a hunt (Q-F3): a list of codings (gzip, gzip) decoded once, by its last (or first) entry only, so the page
# came back as the inner coding's compressed bytes. HTTP applies the listed codings in order; a fetcher may refuse
# a stacked coding, but a success is the page decoded through every one. Judged last: a fetcher refuses it where
# it refuses a coding it does not know.
STACKED_ROWS = (
    Case("stacked-gzip", "a list of content codings (gzip, gzip) decoded once, as its last or first entry alone: "
         "the inner gzip's compressed bytes shown as the page",
         {"coding": "gzip, gzip", "needs": "gzip", "type": "text/plain; charset=utf-8", "text": WORDS,
          "refusal": True, "pieces": (gzip.compress(gzip.compress(WORDS.encode())),)}),
)


def _body(case: Case) -> bytes:
    text: str = case["text"]
    if "stray_byte" in case.params:  # the byte goes out after the page's words
        return f"{WORDS} ".encode() + bytes.fromhex(case["stray_byte"]) + text.removeprefix(WORDS).encode()
    return text.encode(case.params.get("encode", "utf-8"))


def _readings(case: Case) -> list[str]:
    """The texts a success may show: the page's own, and where HTTP and browsers differ, the page's
    bytes as the other one reads them (``also``: a codec)."""
    also = case.params.get("also")
    return [case.params.get("shows", case["text"]), *([_body(case).decode(also, "replace")] if also else [])]


def _missing(reading: str, shown: str) -> list[str]:
    """The words of ``reading`` that ``shown`` lacks (a word holding a replacement character is left out:
    decoders differ in how many they put)."""
    return [w for w in reading.split() if "\ufffd" not in w and w not in shown]


def _forms(text: str) -> tuple[str, str]:
    """The forms a text may show a page's words in, each judged whole: as it is (with its JSON \\u escapes as their
    characters), and once HTML/XML-unescaped (a text that escapes the page inside an envelope of its own). A page
    comes back only when one form holds every one of its words."""
    return f"{text}\n{json_unescaped(text)}", html.unescape(text)


def _listed(accept: str, coding: str) -> bool:
    """Whether an Accept-Encoding value accepts ``coding``: its own entry's q-value, else that of ``*``,
    above zero (RFC 9110 12.5.3)."""
    weights: dict[str, bool] = {}
    for item in accept.split(","):
        name, *params = (part.strip() for part in item.split(";"))
        q = next((p[2:].strip() for p in params if p.lower().startswith("q=")), "1")
        weights.setdefault(name.lower(), q.rstrip("0").rstrip(".") not in ("", "0"))
    return weights.get(coding, weights.get("*", False))


def _serve(case: Case) -> Callable[[_Handler], None]:
    def serve(handler: _Handler) -> None:
        if case.params.get("no_status_line"):  # the page's words alone, then the connection closes
            handler.wfile.write(_body(case) + b"\r\n")
            return
        if "nul_line" in case.params:
            body = _body(case)  # a parser that reads the line anyway shows the page's words: the rule allows it
            handler.wfile.write(b"HTTP/1.0 200 " + b"\x00" * case["nul_line"]
                                + f"\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
            return
        if "status" in case.params:
            body = _body(case)
            head = f"HTTP/1.0 {case['status']} Odd\r\nContent-Type: {case['type']}\r\n"
            handler.wfile.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            return
        body, coding = _body(case), case.params.get("coding")
        needs = case.params.get("needs")
        pieces = [body]
        if coding is not None and needs is not None and _listed(handler.headers.get("Accept-Encoding", ""), needs):
            if "pieces" in case.params:  # the row's own bytes, one write each
                pieces = list(case["pieces"])
            elif "members" in case.params:  # the first member's 8-byte trailer comes with the second member
                first = gzip.compress(case["members"].encode())
                pieces = [first[:-8], first[-8:] + gzip.compress(body[len(case["members"]):])]
            elif needs == "gzip":
                body = gzip.compress(body)
                pieces = [body[: case["split"]], body[case["split"]:]] if "split" in case.params else [body]
            else:
                pieces = [_raw_deflate(body) if case.params.get("raw") else zlib.compress(body)]
        else:
            coding = case.params.get("label")  # not asked for: sent as it is (under its label, if the row has one)
        headers = {"Content-Type": case["type"], **({"Content-Encoding": coding} if coding else {})}
        if len(pieces) == 1:
            handler._send(pieces[0], headers=headers)
            return
        handler.send_response(200)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(sum(map(len, pieces))))
        handler.end_headers()
        for n, piece in enumerate(pieces):
            if n and handler.server.stop.wait(PAUSE):
                return
            handler.wfile.write(piece)
            handler.wfile.flush()

    return serve


@check(
    "ssrf.body.decoded",
    "A fetched page comes back as its text: codings the fetcher asked for are decoded, and a success never "
    "carries compressed bytes, mojibake or undecodable bytes",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: passages are read out of the fetched pages (and seed 001 keeps local HTTP fetch as the "
    "shipped web_fetch). HTTP decides the rest: a body compressed with a coding the request's Accept-Encoding "
    "listed (names are case-insensitive) must come back decoded; a list of codings (gzip, gzip: applied in the order "
    "listed) may be refused, and a success is the page decoded through every one of them. No seed makes a "
    "fetcher ask for any coding or read any charset, so for a coding it did not ask for and for every charset a "
    "WEB_* refusal is accepted; a "
    "success must show the page's own text (where HTTP and browsers read a page differently, a byte-order mark "
    "or the gb2312 label, either reading; JSON \\u escapes in the text count as their characters; no seed fixes "
    "web_fetch's text, so the page's words may be shown as they are or HTML/XML-escaped, as in an envelope, each "
    "reading judged whole: a text/plain page read as HTML, its <b> taken for a tag or its &amp; decoded, fails "
    "either way). A reply that "
    "is not HTTP (no status line), or whose status is outside 100-599, may be refused (a WEB_* error) or read as the "
    "page it carries; a one-byte page comes back; an empty page may be refused, and comes back empty if it comes back. "
    "A type, charset or coding a fetcher does not read (or a page that declares no charset) may be refused with a "
    "WEB_* error. An HTML page comes back "
    "(seed 002 reads passages out of fetched web pages), its value following the web_fetch output schema (seed 001: "
    "the shared fetch result stays unchanged). A coding the fetcher asked "
    "for comes back decoded whatever reads its bytes arrive in, a gzip body of two members (RFC 1952) to its end; "
    "a deflate stream that breaks in a later read may be refused, and a success shows the page's own words, "
    "never words that read holds only as compressed bytes (decoded afresh as raw deflate). Bytes after the end of "
    "a gzip stream that start no member are no part of the page: it may be refused, and a success that shows its "
    "whole text does not mark it cut (truncated false: the web_fetch value schema sets it when anything was cut).",
    cases=(*ROWS, *REPLY_ROWS, *LABEL_ROWS, *PIECE_ROWS, *STACKED_ROWS),
)
async def decoded(ctx: CheckContext) -> None:
    with _network() as net:
        for case in (*ROWS, *REPLY_ROWS, *LABEL_ROWS, *PIECE_ROWS, *STACKED_ROWS):
            net.pages.special[f"/body/{case.name}"] = _serve(case)
        await ctx.configure(provider="messages", test_network=net.config({"body.ssrf.test": [[PUBLIC]]}, []))
        for case in (*ROWS, *REPLY_ROWS, *LABEL_ROWS, *PIECE_ROWS, *STACKED_ROWS):
            outcome = await ctx.fetch(f"http://body.ssrf.test/body/{case.name}")
            if not outcome.ok and case["refusal"]:
                expect_error(outcome, case.name)
                continue
            require(outcome.ok, f"{case.name}: the page was refused ({outcome.error_code}: "
                    f"{outcome.error_message[:120]})", catches=case.catches)
            text = outcome.text or ""
            forms = _forms(text)
            shown = "\n".join(forms)
            missing = min((_missing(reading, form) for reading in _readings(case) for form in forms), key=len)
            require(not missing, f"{case.name}: the page's text did not come back (missing {missing[:3]}; got "
                    f"{text[:80]!r})", catches=case.catches)
            if case.params.get("whole"):  # every word of the page came back: nothing was cut
                require((outcome.value or {}).get("truncated") is False, f"{case.name}: the whole page came back "
                        f"marked cut (truncated {(outcome.value or {}).get('truncated')!r})", catches=case.catches)
            invented = [word for word in case.params.get("never", ()) if word in shown]
            require(not invented, f"{case.name}: the text shows {invented}, which the page holds only as "
                    f"compressed bytes (got {text[:80]!r})", catches=case.catches)
            if not case["text"]:  # an empty page: nothing but the fetcher's own header may come back
                content = ((outcome.value or {}).get("body") or {}).get("content")
                require(isinstance(content, str) and not content.strip(),
                        f"{case.name}: an empty page came back with the content {content!r}", catches=case.catches)
            if case.params.get("schema"):
                problems = validate("web_fetch.output", outcome.value)
                require(not problems, f"{case.name}: the value does not follow web_fetch.output: "
                        f"{'; '.join(problems[:2])}", catches=case.catches)
            lone = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
            require(lone is None, f"{case.name}: the text carries the lone surrogate U+{ord(lone or ' '):04X}, "
                    "which is not Unicode text", catches=case.catches)
