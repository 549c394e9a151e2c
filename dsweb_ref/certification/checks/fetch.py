"""Fetch API checks (seed 001): result mapping, the request on the wire, failures, redirects and retry waits."""

from __future__ import annotations

import asyncio
import functools
import html
import itertools
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from ...emulator import CutBody, Delay, Hold, Malformed, RateLimited, RequestRecord, Status
from ..adapter_protocol import CAP_FETCH_PACING, CAP_RETRY
from ..calibration import LATE_UNDER_LOAD, LagSampler, Load, Timed, judge_timed, patiently, round_trip
from ..cases import CARRY, Case
from ..targets import CallOutcome
from ._base import (
    CALL_TIMEOUT,
    PROVIDER_ERROR,
    CheckContext,
    CheckFailed,
    check,
    expect_error,
    expect_schema,
    expect_success,
    require,
    unless_refused,
)
from .batch import answer_probe, require_cancelled
from .outcomes import LATE_ANSWER, LATE_DEADLINE, REDIRECT_STATUSES, _leaks, _within, judge_late, redirect_fault
from .scheduling import (
    AFTER_CAP,
    ARRIVAL_BOUND,
    AT_ONCE_ATTEMPTS,
    AT_ONCE_RETRY,
    BURST_QUIET,
    CLOCK_SLACK,
    FAILED_RUNS,
    INTO_THE_WAIT,
    LOAD_CAP,
    PACED_FETCHES,
    RETRIES,
    STAGGER,
    WAIT_END_GAP,
    _gaps,
    _was_cancelled,
)
from .search import only_record, require_no_model_request, require_tools_api_headers
from .ssrf import PUBLIC, _network

WF, FAPI = "web_fetch", "fetch-api"
WS, API = "web_search", "search-api"  # the retry profile's own capabilities
PAGE = "https://docs.example.test/api/search"
COOKIE_SETTER = "https://docs.example.test/api/errors"  # fetched first in fetch.api.wire's cookie row
REFUSED = "https://paywall.example.test/reports/search-market-2026"

MAPPING = (
    Case("a corpus page", "a kind other than text, a status other than 200, the body rewritten, or a whole short "
         "page reported truncated", {"url": PAGE}),
    Case("a page with a non-ASCII path", "the requested URL replaced by a normalised one",
         {"url": "https://wiki.example.test/%E6%9D%B1%E4%BA%AC%E3%82%BF%E3%83%AF%E3%83%BC"}),
    # A spreadsheet export: its Markdown holds 100,089 commas in one JSON string, so the answer holds few values.
    Case("a page of 100,000 commas (an exported sheet)", "a bound on JSON values that counts the separators inside "
         "strings too, refusing a page whose Markdown merely holds many commas",
         {"url": "https://sheets.example.test/export.csv", "content": "# Export\n\n" + ("," * 99 + "\n") * 1011}),
    # From a hunt (S2-4): the rows compared the value only, so the API's title shown to the model as a heading in
    # the text alone was certified. A row that sets "title" serves it and judges the text too.
    Case("a page whose Markdown has no heading", "the API's title added as a '# title' heading where the "
         "Markdown has none (the body is the Markdown, not a page rebuilt from its title), in the value or in the "
         "text the model sees",
         {"url": "https://notes.example.test/changelog", "content": "Release notes for 2026-10, no heading here.\n\n"
          "- Fetch keeps the requested URL.\n- Search keeps service order.\n", "title": "Kestrel release notes"}),
    Case("a title other than the page's heading", "the API's title shown to the model above the Markdown (a "
         "'# title' line of its own, a site-suffixed title the page's heading does not match)",
         {"url": "https://notes.example.test/harbour", "content": "# Harbour notices\n\nThe quay closes at 18:00 "
          "on Sundays.\n", "title": "Harbour notices | Kestrel Quay"}),
    Case("a page whose Markdown is empty", "a 200 with empty Markdown refused as a failure (the API answers 404 "
         "when no Markdown can be extracted, so its 200 is a success: an empty page)",
         {"url": "https://blank.example.test/", "content": ""}),
    Case("a page with an indented code block and blank lines", "the Markdown's whitespace normalised (runs of "
         "spaces or blank lines folded), which turns an indented code block into a paragraph",
         {"url": "https://docs.example.test/install", "content": "# Install\n\nRun:\n\n    pip install dsweb\n"
          "    dsweb certify  --only fetch.api.mapping\n\n\n\nThen read the report.\n"}),
    # From an outside hunt of web_fetch: the URL and the Markdown are kept as they are, whatever their spelling.
    Case("a URL in its own spelling", "the requested URL normalised in the result (scheme and host lower-cased, "
         "escapes re-encoded, the fragment dropped)", {"url": "HTTPS://Docs.Example.TEST/api/search?q=a%20b#results",
                                                        "content": "# Search\n\nResults of the query.\n"}),
    Case("Markdown that opens with HTML", "Markdown sniffed as HTML when it opens with a tag (a README's centred "
         "logo), so it is labelled html or converted, the HTML inside its code block too",
         {"url": "https://code.example.test/readme", "content": '<p align="center"><img src="logo.png"></p>\n\n'
          "# Kestrel\n\nBold text is written so:\n\n```html\n<b>bold</b>\n```\n"}),
    Case("Markdown with hard line breaks", "each line's trailing spaces stripped, so Markdown's hard line breaks "
         "(two spaces at a line's end) are lost", {"url": "https://notes.example.test/address",
                                                  "content": "# Address\n\n12 Marrowgate Quay  \nLumen Bay  \n"
                                                  "Gull Island\n"}),
    # From an outside hunt: fields of the API's success body beyond the Markdown. The API supplies neither a final
    # URL nor a target status, so a body that names one (a field of its own, or a future one) changes neither.
    Case("a body that names another URL", "a url (or final_url) field of the API's answer taken for the page's "
         "final URL, where the provider keeps the requested URL",
         {"url": "https://docs.example.test/moved", "content": "# T",
          "extra": {"url": "https://elsewhere.example.test/", "final_url": "https://elsewhere.example.test/"}}),
    Case("a body that names a status", "a status_code (or status) field of the API's answer passed through as the "
         "page's status, where the provider reports HTTP 200 for a successful response",
         {"url": "https://docs.example.test/gone", "content": "# T", "extra": {"status_code": 404, "status": 404}}),
)
# Another 2xx of the Fetch API: a success reported as HTTP 200, or refused (whether the provider counts it a
# success is open); never the API's own status passed through as the page's.
OTHER_SUCCESS = (
    Case("HTTP 203 with a page", "the Fetch API's own status passed through as the page's (the API supplies no "
         "target status)", {"status": 203}),
)
# Seed 001 keeps "bounded tool output" but fixes no bound, so a page this long may be shown whole or cut;
# what the row holds is the flag's honesty and that the page's start is what is shown.
# A page longer than this may be cut by a target's own output bound in every row (a clean-room target bounding
# pages at 100,000 characters was failed by the 100,000-comma row before).
LONG = 10_000
BOUNDS = (
    Case("a page of 250,000 characters",
         "a page cut for the output bound but flagged whole (truncated false), a cut that keeps something "
         "other than the page's start, or a failure where the tool cuts its text",
         {"url": PAGE, "chars": 250_000}),
    Case("a page of 199,990 characters",
         "the cut flagged by the page's own length alone, forgetting what the text adds to it (here the "
         "reference's header takes the text past its 200,000-character bound while the page alone fits)",
         {"url": PAGE, "chars": 199_990}),
    Case("a page of 199,943 characters",
         "the bound read off by one: a text exactly at the bound cut, or flagged truncated although whole (here "
         "the reference's header brings the text to exactly its 200,000-character bound)",
         {"url": PAGE, "chars": 199_943}),
    Case("a page of 1,000,000 characters",
         "no bound at all: the Fetch API's Markdown passed to the model whole, whatever its size (any bound "
         "below the page's million characters is accepted)",
         {"url": PAGE, "chars": 1_000_000, "bounded": True}),
    # From an outside hunt (L): the rows above call web_fetch with the url alone, so a max_length argument (as
    # the MCP fetch server takes one) that lifts the bound was certified. The bound is Harness's, not the model's.
    Case("a page of 1,000,000 characters, max_length among the arguments",
         "a model-supplied max_length argument honoured as the output bound, so a model asking for 10,000,000 "
         "characters is shown the whole page",
         {"url": PAGE, "chars": 1_000_000, "bounded": True, "extra": {"max_length": 10_000_000}}, CARRY),
    # From a hunt (S2-1, S2-2): the rows above served ASCII pages only, whose characters are their UTF-8 bytes, so a
    # cut counted in bytes with the flag counted in characters (a CJK page of 119,998 characters came back as 66,652,
    # truncated false), and the flag counted in bytes with the cut in characters (the whole page flagged truncated),
    # were certified. Pages within the reference's bound in characters but over it in UTF-8 bytes (a CJK character
    # is 3 bytes, an emoji 4, and 2 UTF-16 units), and one over it in characters.
    Case("a CJK page of 119,998 characters, 303,990 bytes of UTF-8",
         "the bound counted in UTF-8 bytes for the cut or the flag but in characters for the other: a page cut at a "
         "byte budget flagged whole, or shown whole and flagged truncated",
         {"url": PAGE, "chars": 119_998, "script": "cjk"}),
    Case("an emoji page of 80,000 characters, 279,950 bytes of UTF-8",
         "the same mix-up for characters outside the Basic Multilingual Plane (4 bytes of UTF-8 each): a byte cut "
         "flagged whole, or a whole page flagged truncated",
         {"url": PAGE, "chars": 80_000, "script": "emoji"}),
    Case("a CJK page of 250,000 characters",
         "a non-ASCII page over the bound cut but flagged whole, or cut elsewhere than at its start",
         {"url": PAGE, "chars": 250_000, "script": "cjk"}),
)


# Each script's heading and numbered line: CJK (3 bytes of UTF-8 a character), emoji (4 bytes, 2 UTF-16 units).
_SCRIPTS = {
    "ascii": ("# A long page\n", "Line {n:06d} of a long exported page, kept in order.\n"),
    "cjk": ("# 长页面\n", "第{n:06d}行：导出的长页面，内容按顺序保存，一行不少。\n"),
    "emoji": ("# 🌊 A long page\n", "{n:06d} " + "🌊🐚🦀🐙" * 10 + "\n"),
}


def long_page(chars: int, script: str = "ascii") -> str:
    """Markdown of exactly ``chars`` characters in ``script`` (a key of _SCRIPTS), every line numbered so any cut
    shows where it fell."""
    heading, line = _SCRIPTS[script]
    lines, size, n = [heading], len(heading), 0
    while size < chars:
        n += 1
        lines.append(line.format(n=n))
        size += len(lines[-1])
    return "".join(lines)[:chars]


# The run configures the target with seed 001's opt-in keys at their defaults (retries 0, no pacing) and this
# check never changes them: with retries off, one request per failed fetch is what the seed's "no ... automatic
# retries" leaves.
FAILURES = (
    Case("HTTP 403 (crawler policy)", "a refusal rendered as a page", {"url": REFUSED, "fault": None}),
    Case("HTTP 404 (no usable content)", "a 404 mapped onto a result with status 404",
         {"url": "https://docs.example.test/no-such-page", "fault": None}),
    Case("HTTP 500 (unresolvable host)", "a 5xx mapped onto a result", {"url": "https://gone.invalid/", "fault": None}),
    Case("HTTP 429", "a rate limit retried silently", {"url": PAGE, "fault": "429"}),
    Case("HTTP 401", "a rejected key rendered as a page", {"url": PAGE, "fault": "401"}),
    Case("HTTP 408", "a 408 read as the page timing out (WEB_FETCH_TIMEOUT), or retried silently",
         {"url": PAGE, "fault": 408}),
    # From an outside hunt: a refused request read as the caller's invalid URL.
    Case("HTTP 400", "a 400 read as the caller's invalid URL (WEB_INVALID_URL), a specific target diagnosis, "
         "instead of a retrieval failure", {"url": PAGE, "fault": 400}),
    Case("HTTP 502", "a gateway error retried silently", {"url": PAGE, "fault": 502}),
    Case("HTTP 503", "an unavailable service retried silently", {"url": PAGE, "fault": 503}),
    Case("HTTP 504", "a gateway timeout retried silently, or read as the page timing out (WEB_FETCH_TIMEOUT)",
         {"url": PAGE, "fault": 504}),
    Case("truncated JSON", "an unreadable success body rendered as an empty page", {"url": PAGE, "fault": "truncated"}),
    Case("no content field", "a success without Markdown rendered as an empty page",
         {"url": PAGE, "fault": b'{"title": "No content"}'}),
    Case("content that is not text", "a non-text content carried as the body or turned into text",
         {"url": PAGE, "fault": b'{"title": "T", "content": {"markdown": "# T"}}'}),
    # From a hunt (S2-3): a content of null read as an empty page (a `content ?? ""` default); 0 catches `or ""`.
    Case("content null", "a null content read as an empty page (a missing value defaulted to \"\")",
         {"url": PAGE, "fault": b'{"title": "T", "content": null}'}),
    Case("content a number", "a numeric content turned into text, or read as an empty page (a falsy value "
         "defaulted to \"\")", {"url": PAGE, "fault": b'{"title": "T", "content": 0}'}),
    Case("a JSON array", "a body of the wrong shape taken as a page", {"url": PAGE, "fault": b'["# T"]'}),
    # From a hunt (Q-E5): a 200 with no body at all read as an empty page.
    Case("200 with an empty body", "a success with no body at all rendered as an empty page",
         {"url": PAGE, "fault": b""}),
    # From a hunt (Q-E3): a Fetch API request the provider's own deadline (timeout_s) ended rendered as an empty
    # page. No answer came, so the service retrieved nothing: the fetch fails (which WEB_* code is open).
    Case("answered past timeout_s", "a Fetch API request the provider's own deadline ended rendered as an empty "
         "page (a success)", {"url": PAGE, "fault": "late", "deadline": LATE_DEADLINE}),
    # A failure status whose body still reads as a page: the status decides first.
    Case("HTTP 404 with a page body", "the body read as the page before the status is looked at",
         {"url": PAGE, "fault": 404, "page": True}),
    Case("HTTP 500 with a page body", "only 4xx looked at before the body is read as the page",
         {"url": PAGE, "fault": 500, "page": True}),
    # From a hunt (Q-E1): the failure statuses taken from the guide's own list (400-404, 408, 429, 5xx), so any
    # other non-success status had its body read as the page.
    Case("HTTP 410 with a page body", "only the statuses the guide names (400-404, 408, 429, 5xx) taken for "
         "failures: any other non-success status has its body read as the page",
         {"url": PAGE, "fault": 410, "page": True}),
    # The secret-echo rule of errors.codes and errors.secret_echo, for the Fetch API: its errors quote keys too.
    Case("HTTP 401 quoting the key", "the Fetch API's error text quoted unscrubbed, the key it echoes included",
         {"url": PAGE, "fault": "401-echo"}),
    # From an outside hunt (M): statuses whose HTTP meaning matches one of the web layer's own codes, each mapped
    # to it. Seed 001: "every non-success status is a retrieval failure rather than a specific target diagnosis".
    Case("HTTP 406, 410, 413, 414, 415, 422 and 451", "a Fetch API status read as the web layer's specific "
         "diagnosis of the page (413 as WEB_FETCH_TOO_LARGE, 406 or 415 as WEB_UNSUPPORTED_CONTENT_TYPE, 451 as "
         "WEB_BLOCKED_URL, 414 or 422 as WEB_INVALID_URL) instead of a retrieval failure",
         {"url": PAGE, "fault": (406, 410, 413, 414, 415, 422, 451)}),
)
# From an outside hunt: a Fetch API failure handed to the local HTTP fetcher, which then reads the page itself.
# Only a target with ssrf-test-mode can show it without traffic leaving loopback: the test network resolves the
# page's host to a public address dialled to a suite page server that serves the page, so a fallback finds it
# there. Without ssrf-test-mode these rows prove nothing and are passed over.
READABLE = "readable.example.test"
FALLBACK = (
    Case("HTTP 404 for a page the local fetcher could read", "a Fetch API failure retried by the local HTTP "
         "fetcher (a fallback), which reads the page itself and returns it",
         {"url": f"http://{READABLE}/harbour-notices", "fault": 404}),
    Case("HTTP 500 for a page the local fetcher could read", "the same fallback kept for the service's own errors "
         "(a 5xx taken for 'the service is down, fetch it here')",
         {"url": f"http://{READABLE}/harbour-tides", "fault": 500}),
    # From a hunt (Q-E4): only statuses were injected here, so a fallback kept for transport failures (the
    # service unreachable, or its answer cut off) was certified.
    Case("a cut Fetch API answer for a page the local fetcher could read", "the fallback kept for transport "
         "failures (a broken or unreachable Fetch API taken for 'fetch it here'), only statuses failing for good",
         {"url": f"http://{READABLE}/harbour-charts", "fault": "cut"}),
)
PAGE_ANSWER = json.dumps({"title": "T", "content": "# Cached page\n\nServed with a failure status.\n"}).encode()


def _words(text: str) -> str:
    """``text`` with every run of whitespace one space: the words the model reads, however the text lays them out."""
    return " ".join(text.split())


@check(
    "fetch.api.mapping",
    "Fetch API success is the requested URL, HTTP 200 and the Markdown as text; a failure is WEB_PROVIDER_ERROR",
    seed="001",
    requires=(WF, FAPI),
    provider="api",
    rule="Seed 001: 'The provider keeps the requested URL, returns the Markdown body, and reports HTTP 200 for a "
    "successful response'; 'The shared fetch result and its consumers stay unchanged', so the body kind is the "
    "closed union html|text and Markdown is text, the Markdown as the API sent it (no heading added, whitespace "
    "kept; only its edges may be trimmed), and a body returned whole is not flagged truncated; 'the shared result "
    "has no title field', so the text the model sees shows the Markdown as the value holds it (its words: how the "
    "text lays out whitespace or escapes the page is open), framed as the tool frames any page (a 'Fetched <url>' "
    "line, a note), and no title of the API's that the Markdown lacks; "
    "'The API supplies neither a final redirected URL nor a target HTTP status': another 2xx of the API is a "
    "success reported as 200, or refused, never passed through as the page's status, and a url or status field "
    "in a success body changes neither the requested URL nor the 200; "
    "'every non-success status is a retrieval failure rather than a specific target diagnosis' "
    "(WEB_PROVIDER_ERROR, 408 and 504 included, never a timeout of the page, even when its body reads as a "
    "page, and a status the guide does not name, such as 410, as much as one it does; nor is a status such as "
    "413, 415 or 451 the web layer's own code for a page too large, of an "
    "unsupported type or blocked), as is a success whose body holds "
    "no Markdown text (its content missing, null, a number or an object), an empty body included (the provider "
    "tests cover 'malformed responses'), and a request the provider's own deadline (timeout_s) ended, which "
    "retrieved nothing (a reported 200 'means the service "
    "retrieved the page'; which WEB_* code it carries is open, and so is keeping to timeout_s at all: a target "
    "that waits shows the late page itself): never an empty page, and never one "
    "showing the key an error body echoes (the project's no-secret rule, as errors.secret_echo holds it for "
    "search); and 'The provider has "
    "no shared rate scheduler, automatic retries, or fallback', so with the opt-in retries off a failure is one "
    "request, 502, 503 and 504 too, and it is never handed to the local HTTP fetcher, a failed status or a "
    "broken transfer alike (with ssrf-test-mode, a page "
    "the test network serves is never asked for after the Fetch API failed it). Harness 'retains ... bounded tool "
    "output' with no bound fixed: a long page is a success showing its start, and when neither the text nor the "
    "value holds it whole, truncated is true, and when the text holds it whole, false (when only the value does, "
    "the flag is open; a CJK or emoji page too, "
    "whatever the bound counts: characters, bytes or UTF-16 units); any bound is accepted, but a text showing a "
    "page of a million characters whole has none. The bound is Harness's: a max_length argument the model adds "
    "beside url is refused as WEB_INVALID_ARGUMENTS before any request, or leaves the bound in force.",
    cases=MAPPING + OTHER_SUCCESS + BOUNDS + FAILURES + FALLBACK,
)
async def fetch_mapping(ctx: CheckContext) -> None:
    for case in MAPPING:
        url = case["url"]
        ctx.fresh()
        if "content" in case.params:  # a scripted page: the Fetch API's success body as the guide shapes it
            title = case.params.get("title", "T")
            served = {"title": title, "content": case["content"], **case.params.get("extra", {})}
            ctx.emu.inject("fetch", Malformed(body=json.dumps(served).encode()))
        outcome = await ctx.fetch(url)
        value = expect_success(outcome, f"{case.name}: fetch {url}")
        record = only_record(ctx, "fetch", case.name)
        answer = json.loads(record.response_body)
        upstream, title, text = answer["content"], answer.get("title"), outcome.text or ""
        if ("title" in case.params or "content" not in case.params) and title and title not in upstream:
            # the row's own title, or a corpus page's (which its Markdown holds as its heading, so is not judged):
            # the text may frame the body (a "Fetched <url>" line, a note), but shows no title the Markdown lacks
            require(title not in text, f"{case.name}: the text shows the API's title {title!r}, which the "
                    "Markdown does not hold (the shared result has no title field)", catches=case.catches)
        require(value.get("url") == url, f"{case.name}: url={value.get('url')!r}, expected the requested URL")
        require(value.get("status_code") == 200, f"{case.name}: status_code={value.get('status_code')!r}, expected 200")
        body = value.get("body") or {}
        kind = body.get("kind")
        require(kind == "text", f"{case.name}: body kind {kind!r}, expected text (the closed union is html|text)")
        content = str(body.get("content", ""))
        shown = f"{_words(text)}\n{_words(html.unescape(text))}"  # its layout of whitespace, or escaping, is its own
        # A long page under the target's own output bound (any bound is accepted, as for BOUNDS): the value cut and
        # flagged, or whole with the text cut (reviews: a false failure; the flag is open then). Either way the text
        # shows the page's start.
        cut = len(upstream) > LONG and content.strip() != upstream.strip() and value.get("truncated") is True
        if cut:
            require(content[:200] == upstream[:200], f"{case.name}: a cut body that does not start with the page")
        else:
            require(content.strip() == upstream.strip(), f"{case.name}: body differs from the Fetch API Markdown")
        if len(upstream) > LONG and (cut or _words(content) not in shown):
            require(_words(content[:200]) in shown, f"{case.name}: the text does not show the start of the body")
            continue
        require(_words(content) in shown, f"{case.name}: the text does not show the Markdown as the value holds it")
        require(value.get("truncated") is False,
                f"{case.name}: truncated={value.get('truncated')!r} although the whole Markdown was returned")
    for case in OTHER_SUCCESS:
        ctx.fresh()
        answer = json.dumps({"title": "T", "content": "# Notes\n\nKept as sent.\n"}).encode()
        ctx.emu.inject("fetch", Malformed(body=answer, status=case["status"]))
        outcome = await ctx.fetch(PAGE)
        if outcome.ok and outcome.value is not None:
            got = outcome.value.get("status_code")
            require(got == 200, f"{case.name}: status_code={got!r}: the API's own status passed through, where "
                    "the provider reports HTTP 200 for a successful response", catches=case.catches)
    for case in BOUNDS:
        ctx.fresh()
        page = long_page(case["chars"], case.params.get("script", "ascii"))
        answer = json.dumps({"title": "T", "content": page}, ensure_ascii=False)  # UTF-8, as the API sends it
        ctx.emu.inject("fetch", Malformed(body=answer.encode()))
        found = await fetch_with_extra(ctx, case)
        if found is None:  # the model's extra argument refused before any request
            continue
        outcome = found
        value = expect_success(outcome, f"{case.name}: fetch {case['url']}")
        content, text = str((value.get("body") or {}).get("content", "")), outcome.text or ""
        require(page[:200] in text and content[:200] == page[:200],
                f"{case.name}: the text or the value does not start with the page's start")
        whole_text, whole_value = page.strip() in text, content.strip() == page.strip()
        if whole_text:
            require(value.get("truncated") is False,
                    f"{case.name}: truncated={value.get('truncated')!r} although the text holds the whole page")
        elif not whole_value:
            require(value.get("truncated") is True,
                    f"{case.name}: truncated={value.get('truncated')!r} although the text shows "
                    f"{len(text)} and the value {len(content)} of the page's {len(page)} characters")
        if case.params.get("bounded"):
            require(len(text) < len(page), f"{case.name}: the text is {len(text):,} characters: the page was shown "
                    f"whole, with no bound on the tool's output", length=len(text), catches=case.catches)
    for case in FAILURES:
        faults = case["fault"] if isinstance(case["fault"], tuple) else (case["fault"],)
        for fault in faults:
            await _one_failure(ctx, case, fault, case.name if len(faults) == 1 else f"{case.name}: HTTP {fault}")
    if FALLBACK and "ssrf-test-mode" in ctx.hello.capabilities:
        await _no_fallback(ctx)


async def _one_failure(ctx: CheckContext, case: Case, fault: Any, what: str) -> None:
    """One fault of a FAILURES row (``what`` names it): WEB_PROVIDER_ERROR after one request, showing no key."""
    ctx.fresh()
    if fault == "429":
        ctx.emu.inject("fetch", RateLimited(retry_after=1))
    elif fault == "401":
        ctx.emu.inject("fetch", Status(401))
    elif fault == "401-echo":
        echo = {"error": {"message": f"Authentication Fails, Your api key: {ctx.config.api_key} is invalid",
                          "type": "authentication_error"}}
        ctx.emu.inject("fetch", Status(401, body=json.dumps(echo).encode()))
    elif fault == "truncated":
        ctx.emu.inject("fetch", Malformed(body=b'{"title": "T", "content": "# T'))
    elif fault == "late":
        ctx.emu.inject("fetch", Delay(LATE_ANSWER))
    elif isinstance(fault, int):
        ctx.emu.inject("fetch", Status(fault, body=PAGE_ANSWER if case.params.get("page") else None))
    elif isinstance(fault, bytes):
        ctx.emu.inject("fetch", Malformed(body=fault))
    outcome = await _within(ctx, case, ctx.fetch, case["url"])
    await ctx.settle()
    sent = len(ctx.records("fetch"))
    if "deadline" in case.params:
        value = outcome.value if isinstance(outcome.value, dict) else {}
        body = value.get("body")
        body = body if isinstance(body, dict) else {}
        judge_late(outcome, f"{what}: fetch {case['url']}", case, sent, bool(str(body.get("content") or "").strip()))
        return
    expect_error(outcome, f"{what}: fetch {case['url']}", PROVIDER_ERROR)
    shown = _leaks(outcome, ctx.config.api_key)
    require(shown is None, f"{what}: the failure shows {shown}", catches=case.catches)
    require(sent == 1, f"{what}: {sent} Fetch API requests; a failure must not be retried silently")


async def fetch_with_extra(ctx: CheckContext, case: Case) -> CallOutcome | None:
    """web_fetch of ``case``'s url with its extra arguments added (a plain fetch without them); None when the
    target refused them as invalid arguments before any request (as search_with_extra for web_search)."""
    extra: dict[str, Any] = case.params.get("extra", {})
    if not extra:
        return await ctx.fetch(case["url"])
    call = ctx.target.start_call("web_fetch", {"arguments": {"url": case["url"], **extra}})
    return await unless_refused(ctx, case, await call.outcome(CALL_TIMEOUT))


async def _no_fallback(ctx: CheckContext) -> None:
    """Each FALLBACK row: the Fetch API fails a page the test network serves; nothing may ask the page server."""
    with _network() as net:
        await ctx.configure(test_network=net.config({READABLE: [[PUBLIC]]}, []))
        try:
            for case in FALLBACK:
                ctx.fresh()
                cut = case["fault"] == "cut"
                ctx.emu.inject("fetch", CutBody() if cut else Status(case["fault"]))
                outcome = await ctx.fetch(case["url"])
                await ctx.settle()
                asked = list(net.pages.served)
                answered = "cut its answer off" if cut else f"answered HTTP {case['fault']}"
                require(not asked, f"{case.name}: after the Fetch API {answered}, the page was "
                        f"fetched locally ({len(asked)} request(s) to the page's host): the provider has no fallback",
                        catches=case.catches)
                expect_error(outcome, f"{case.name}: fetch {case['url']}", PROVIDER_ERROR)
                sent = len(ctx.records("fetch"))
                require(sent == 1, f"{case.name}: {sent} Fetch API requests; a failure must not be retried silently")
        finally:
            await ctx.configure(test_network=None)


WIRE = (
    Case("a plain URL", "extra headers or body keys", {"url": PAGE}),
    Case("upper-case scheme and host", "the URL lower-cased or otherwise normalised",
         {"url": "HTTPS://Docs.Example.TEST/api/search"}),
    Case("trailing slash", "a trailing slash added or removed", {"url": "https://docs.example.test/api/search/"}),
    Case("query, escapes and fragment", "the query re-encoded or the fragment dropped",
         {"url": "https://docs.example.test/api/search?q=a%20b&lang=zh#results"}),
    Case("non-ASCII host and path", "the host IDNA-encoded or the path percent-encoded",
         {"url": "https://bücher.example.test/über"}),
    # From an outside hunt: the HTTP fetcher's address policy kept in front of the Fetch API, which the seed
    # hands the target access policy to (the service fetches; it decides what it may reach).
    Case("a private address", "the local fetcher's public-address policy applied on the Fetch API path, so a "
         "private address is refused before any request (seed 001 delegates target access policy to the service)",
         {"url": "https://10.0.0.5/admin"}),
    Case("localhost", "the same for a loopback name", {"url": "https://localhost/status"}),
    # From a hunt (P-B8): search.api.wire's cookie row tried the Search API only, so a Fetch API client that keeps
    # the cookies an answer sets (and sends them with the next fetch) was certified.
    Case("after an answer that set a cookie", "a Fetch API client that keeps cookies from one fetch to the next (a "
         "reused client sends the earlier answer's cookie back)",
         {"url": "https://docs.example.test/api/rate-limits", "cookie": True}),
)
# A Fetch API success that also sets a cookie for the emulator's host, every path.
_COOKIE_PAGE = Status(200, body=json.dumps({"title": "Cookie", "content": "# Cookie"}).encode(),
                      headers={"Set-Cookie": "session=dsweb-fetch-wire-row; Path=/"})


@check(
    "fetch.api.wire",
    "Fetch API requests carry only Authorization and Content-Type and exactly {url}, the URL unchanged",
    seed="001",
    requires=(WF, FAPI),
    provider="api",
    rule="Seed 001: 'Fetch sends a URL', and Search and Fetch 'requests send only the documented authorization "
    "and JSON content type'. The body is exactly {url: <the requested URL, unchanged>} and, beyond HTTP "
    "framing, the headers exactly Authorization: Bearer <key> and Content-Type: application/json. 'Fetch sends a "
    "URL and returns Markdown without an extra Harness summarization request': no Messages or Responses request. "
    "'Selecting DeepSeek delegates page retrieval and target access policy to that service': a private or "
    "loopback address is sent as any other URL (the HTTP provider's own address policy stays with it). The "
    "header rule holds after an answer that set a cookie too: no Cookie header is sent with the next fetch.",
    cases=WIRE,
)
async def fetch_wire(ctx: CheckContext) -> None:
    for case in WIRE:
        if case.params.get("cookie"):
            ctx.emu.inject("fetch", _COOKIE_PAGE)
            expect_success(await ctx.fetch(COOKIE_SETTER), f"{case.name}: the fetch answered with a cookie")
        ctx.emu.log.clear()
        await ctx.fetch(case["url"])  # success or failure: only the request is under test here
        record = only_record(ctx, "fetch", case.name)
        require_tools_api_headers(record, case.name)
        require(record.json == {"url": case["url"]},
                f"{case.name}: body {record.json!r}, expected exactly {{'url': {case['url']!r}}}")
        await require_no_model_request(ctx, case.name)


REDIRECTS = tuple(
    Case(f"HTTP {status}", f"HTTP {status} followed, or its body taken as a page", {"status": status})
    for status in REDIRECT_STATUSES
)


@check(
    "fetch.redirect.not_followed",
    "Every 3xx from the Fetch API is WEB_PROVIDER_ERROR and its Location is never visited",
    seed="001",
    requires=(WF, FAPI),
    provider="api",
    rule="Seed 001: 'Harness rejects redirects of the API request'. Every redirection status HTTP defines "
    "(300, 301, 302, 303, 307, 308) fails the fetch with WEB_PROVIDER_ERROR and its Location is never requested.",
    cases=REDIRECTS,
)
async def fetch_redirect(ctx: CheckContext) -> None:
    page = json.dumps({"title": "Redirected", "content": "# Redirected"}).encode()
    for case in REDIRECTS:
        ctx.emu.faults.clear()
        ctx.emu.inject("fetch", redirect_fault(ctx, "fetch", case["status"], page), times=None)
        outcome = await ctx.fetch(PAGE)
        await ctx.settle()
        require(not ctx.emu.log.trap_hits(), f"{case.name}: the redirect Location was visited")
        expect_error(outcome, f"{case.name}: redirected fetch", PROVIDER_ERROR)


@check(
    "fetch.value.schema",
    "Fetch values follow schemas/web_fetch.output",
    seed="001",
    requires=(WF, FAPI),
    provider="api",
    rule="Seed 001: 'The shared fetch result and its consumers stay unchanged': the value follows the "
    "shipped web_fetch output schema.",
    cases=(Case("a corpus page", "a value with extra or missing fields (title, a markdown kind)", {"url": PAGE}),),
)
async def fetch_value_schema(ctx: CheckContext) -> None:
    value = expect_success(await ctx.fetch(PAGE), f"fetch {PAGE}")
    expect_schema(value, "web_fetch.output", f"fetch {PAGE}")


# Seed 001 keeps the Harness's cancellation for both new providers; seed 000's cancel rule (the call answers
# only once its upstream request is closed) is search.cancel.quiescence's for web_search.
FETCH_CANCEL = (
    Case("a Fetch API request held by the server", "a cancel answered at once while the Fetch request runs on "
         "(shielded from it), or a cancel swallowed and the page returned once the server answers", {}),
    # From a hunt (R-H2, F3): Fetch API waits deaf to a cancel (the Search API's honoured it), waited out and then
    # the cancel re-raised: no request in flight to leave open, nothing sent, so the row above passed them.
    Case("cancel 0.3 s into a 2 s Retry-After wait on a Fetch API 429",
         "a Fetch API retry wait shielded from the cancel: waited out, then the call answers cancelled (or sends the "
         "retry after answering)", {"retry_after": 2, "needs": CAP_RETRY}),
    Case("cancel the last of four fetches at once at 2 QPS while it waits for its pacing slot",
         "a Fetch API slot wait shielded from the cancel: waited out (its slot kept), then the call answers "
         "cancelled (or sends its request after answering)", {"qps": 2.0, "needs": CAP_FETCH_PACING}),
)
CANCEL_BOUND = 10.0  # seconds a cancelled web_fetch may take to answer (a liveness bound, see patiently)


@check(
    "fetch.cancel.quiescence",
    "Cancelling an in-flight web_fetch answers cancelled, after its Fetch API request is closed",
    seed="001",
    requires=(WF, FAPI, "cancel"),
    provider="api",
    rule="Seed 001: the Harness 'retains cancellation' for the new providers, and seed 000 fixes what a cancel "
    "is (caller cancellation propagates to the provider; the call answers after quiescence): a web_fetch "
    "cancelled while its Fetch API request is in flight answers cancelled (or WEB_ABORTED) with no value, and "
    "only once that request is closed. A cancel ignored until the page arrives is not a cancel. Seed 001 asks for "
    "cancellation-aware scheduling, and a wait is no more deaf to a cancel than a request: with retries on "
    "(capability retry), a fetch cancelled 0.3 s into a 2 s Retry-After wait on a Fetch API 429 answers cancelled "
    f"before the wait's end (judged by order when the cancel went out {WAIT_END_GAP:g} s or more before it, no load "
    "excusing it), and no retry is stamped after that answer; with fetch pacing on (capability fetch-pacing, 2 QPS), "
    "the last of four fetches started at once, cancelled while it waits for its slot, answers cancelled before its "
    "siblings' last request starts and its own request is never stamped after that answer. The request claims are "
    "judged as search.api.pacing.cancel's (the run's measured load excuses at most 0.2 s of a request stamped after "
    "the answer); a run that shows no wait cancelled is re-run: the cancel came too late; the call answered before "
    "it (whether the Fetch API is retried at all is open, and so is a cap of the target's own ending the retries); "
    "or its retry, or the fetch whose slot came, was sent before the cancel reached it (whether a Fetch API "
    "Retry-After is read is open): the answer it then gives is right. Each run fetches URLs of its own. "
    "A target lacking a row's capability skips that row.",
    cases=FETCH_CANCEL,
)
async def fetch_cancel(ctx: CheckContext) -> None:
    runs = itertools.count()
    for case in FETCH_CANCEL:
        if "needs" in case.params:
            if case["needs"] in ctx.hello.capabilities:
                if "retry_after" in case.params:
                    await ctx.configure_opt_in(retries=RETRIES)
                    await judge_timed(ctx, "fetch.cancel.quiescence",
                                      functools.partial(_fetch_wait_cancel_run, ctx, case, runs))
                else:
                    await ctx.configure_opt_in(pacing_qps=case["qps"])
                    await judge_timed(ctx, "fetch.cancel.quiescence",
                                      functools.partial(_fetch_slot_cancel_run, ctx, case, runs))
                await ctx.configure_opt_in()
            continue
        gate = ctx.emu.gate("fetch cancel")
        ctx.fresh()
        ctx.emu.inject("fetch", Hold(gate, timeout=30))
        call = ctx.target.start_call("web_fetch", {"arguments": {"url": PAGE}}, answer_probe(ctx))
        await require_cancelled(ctx, call, gate, 1, case.name, limit=CANCEL_BOUND, noun="fetches",
                                catches=case.catches)


async def _fetch_quiet(ctx: CheckContext, quiet: float) -> None:
    """Return once no Fetch API request has come for ``quiet`` seconds and the emulator is idle: a re-run keeps
    apart from a wrong target's late requests of the run before."""
    seen = len(ctx.records("fetch"))
    while True:
        try:
            await ctx.blocking(functools.partial(ctx.emu.log.wait_for, seen + 1, quiet, route="fetch"))
        except TimeoutError:
            break
        seen = len(ctx.records("fetch"))
    await ctx.settle()


def _sent_after(ctx: CheckContext, url: str, answered_at: float, what: str, catches: str) -> Timed:
    """The claim that no Fetch API request for ``url`` was stamped after the cancelled call answered (as
    scheduling's: the emulator's stamp may trail a request a moment; the load excuses at most AFTER_CAP)."""
    late = [r.started - answered_at for r in ctx.records("fetch")
            if _url_match(url)(r.json) and r.started > answered_at]
    return Timed(f"{what}: {sum(1 for t in late if t > CLOCK_SLACK)} request(s) for {url} sent after the call "
                 "answered cancelled", max(late, default=0.0), CLOCK_SLACK, catches, cap=AFTER_CAP)


async def _fetch_wait_cancel_run(ctx: CheckContext, case: Case, runs: Iterator[int]) -> list[Timed]:
    """A fetch answered 429 (Retry-After), cancelled :data:`INTO_THE_WAIT` into the wait: it answers cancelled
    before the wait's end, and no retry is stamped after that answer."""
    n = next(runs)
    if n:
        await _fetch_quiet(ctx, BURST_QUIET)
    ctx.fresh()
    url = f"{PAGE}?cancel-wait={n}"
    ctx.emu.inject("fetch", RateLimited(retry_after=case["retry_after"]), when=_url_match(url))
    call = ctx.target.start_call("web_fetch", {"arguments": {"url": url}})
    (first, *_) = await ctx.blocking(lambda: ctx.emu.log.wait_for(1, 10.0, route="fetch", done=True))
    await asyncio.sleep(INTO_THE_WAIT)  # the one deliberate pause, as in search.api.retry.cancel
    cancelled_at = time.monotonic()
    await call.cancel()
    outcome = await call.outcome(CALL_TIMEOUT)
    # Whether the Fetch API is retried at all is open, and so is whether its Retry-After is read: a target that
    # never retries it (or whose own cap ends the retries) answered before the cancel went out, and one backing off
    # on its own may have sent its retry before the cancel reached it (a review found both failed): either run shows
    # no wait cancelled. A call that answered after the cancel, sending nothing more, answers cancelled.
    own = [r for r in ctx.records("fetch") if _url_match(url)(r.json)]
    retried_first = [r for r in own[1:] if r.started < cancelled_at]
    answered_first = outcome.answered_at <= cancelled_at
    retried_before_answer = any(r.started < outcome.answered_at for r in own[1:])
    require(_was_cancelled(outcome) or answered_first or retried_before_answer,
            f"{case.name}: the call answered {outcome.brief()} instead of cancelled", catches=case.catches)
    wait_end = first.started + case["retry_after"]
    await asyncio.sleep(max(0.0, wait_end + 0.3 - time.monotonic()))  # past the moment a retry would be sent
    sent = _sent_after(ctx, url, outcome.answered_at, case.name, case.catches)
    ended = Timed(f"{case.name}: the cancelled call answered only once the Retry-After wait had ended "
                  f"({outcome.answered_at - cancelled_at:.2f} s after the cancel)",
                  outcome.answered_at - cancelled_at, wait_end - CLOCK_SLACK - cancelled_at, case.catches, cap=0.0,
                  shown=cancelled_at <= wait_end - WAIT_END_GAP and not retried_first and not answered_first)
    await ctx.settle()
    return [ended, sent]


async def _fetch_slot_cancel_run(ctx: CheckContext, case: Case, runs: Iterator[int]) -> list[Timed]:
    """Four fetches started at once at ``qps``; once the first request arrived, the last call is cancelled while
    it waits for its slot: it answers cancelled before its siblings' last request starts, and its own request is
    never stamped after that answer."""
    n = next(runs)
    if n:
        await _fetch_quiet(ctx, 1.05 / case["qps"] + 0.3)
    ctx.fresh()
    urls = [f"{url}?cancel-slot={n}" for url in PACED_FETCHES]
    calls = [ctx.target.start_call("web_fetch", {"arguments": {"url": url}}) for url in urls]
    await ctx.blocking(lambda: ctx.emu.log.wait_for(1, 10.0, route="fetch"))
    cancelled_at = time.monotonic()
    await calls[-1].cancel()
    outcome = await calls[-1].outcome(CALL_TIMEOUT)
    for call in calls[:-1]:
        await call.outcome(CALL_TIMEOUT)  # answered, whatever they answer: the cancelled call is judged
    last_sibling = max((r.started for r in ctx.records("fetch")
                        if isinstance(r.json, dict) and r.json.get("url") in urls[:-1]), default=cancelled_at)
    await asyncio.sleep(max(0.0, last_sibling + 1.05 / case["qps"] + 0.3 - time.monotonic()))
    own = [r for r in ctx.records("fetch") if _url_match(urls[-1])(r.json)]
    waiting = sum(1 for r in ctx.records("fetch") if r.started > cancelled_at) >= 2 and not any(
        r.started <= cancelled_at for r in own)  # its slot still ahead of two siblings' when the cancel went out
    # Its own request stamped before its answer: the cancel reached it only after its slot came (a pacer may send
    # two at once, in any order), so the answer it gave is right; ended still judges when it came.
    if not _was_cancelled(outcome) and not any(r.started <= outcome.answered_at for r in own):
        require(not waiting, f"{case.name}: the call answered {outcome.brief()} instead of cancelled",
                catches=case.catches)
    ended = Timed(f"{case.name}: the cancelled call answered {outcome.answered_at - last_sibling:.2f} s after its "
                  "siblings' last request started (only once its slot came)", outcome.answered_at - cancelled_at,
                  last_sibling - cancelled_at, case.catches, cap=AFTER_CAP, shown=waiting)
    sent = _sent_after(ctx, urls[-1], outcome.answered_at, case.name, case.catches)
    await ctx.settle()
    return [ended, sent]


# The most of the measured load that lowers the at-once bar: the emulator stamps an answer's end after sending it,
# so a loaded machine can make a wait look shorter; an at-once retry measures a few ms, under even the lowered bar.
FETCH_LOAD_SLACK = 0.02
# From an outside hunt (M): retries are judged on the Search API only, so a target whose opt-in retries re-sent a
# failed Fetch API request at once (its waits kept for Search) was certified. Seed 001's guide covers both APIs
# ("Search and Fetch each have an account-wide 5 QPS limit") and "recommends waiting before retrying 408, 429,
# and 5xx". Whether the Fetch API is retried at all is open, and so is how long a wait is, and whether a Retry-After
# is read on it (the protocol names it for Search requests only): these calls send none.
FETCH_RETRY = (
    Case("Fetch API 408, 429 and 503 every time: a wait before each retry", "a Fetch API failure retried at once "
         "(the guide's wait kept for Search requests, the Fetch API's limits taken for per-target ones)",
         {"faults": (Status(408), RateLimited(retry_after=None), Status(503))}),
    # From a hunt (P-B3): the row above judges when a retry is sent, never what it is, so a retried Fetch API
    # request carrying a header of its own (X-Retry-Attempt) or sent to another URL (an attempt counter in the query
    # string) was certified. This row's requests are judged on the wire (its waits are the row above's business).
    Case("Fetch API 502 every time: each retry the first request again", "a retried Fetch API request that carries "
         "a header of its own (an attempt counter), goes to another URL (an attempt counter in the query string) or "
         "has another body than {url} (extra keys, or the page's URL changed: a cache-busting parameter)",
         {"faults": (Status(502),), "judge": "wire"}),
)


@check(
    "fetch.api.retry.waits",
    "With retries on, a Fetch API request answered 408, 429 or 5xx is never retried at once",
    seed="001",
    # The retry profile's own requirements (as search.api.retry.never's Fetch rows): a retry target without
    # web_fetch keeps its certification, and its Fetch API is simply not judged.
    requires=(WS, API, CAP_RETRY),
    provider="api",
    rule="Seed 001: the guide that covers both APIs ('Search and Fetch each have an account-wide 5 QPS limit') "
    "'recommends waiting before retrying 408, 429, and 5xx'. For a target that also serves web_fetch through the "
    "Fetch API: whether it retries the Fetch API at all is open (a target that never does passes), and so are the "
    "length of a wait and whether a Retry-After is read on it; a retry sent at once is not waiting. As "
    "search.api.retry.waits judges it: the seed sets no least wait, so the project draws the line at 40 ms (a "
    "retry within 40 ms of the failure's answer, less this run's measured load, at most 20 ms, counts as at once; "
    "a target waiting less than 40 ms on purpose fails), judged on the second-longest of the run's waits (one "
    "at-once retry a busy machine stalled does not pass for a wait); a run whose waits fall within its measured "
    "load of that bar is re-run, and the check fails only when two runs show retries at once (after five runs "
    "without either, it passes with a load note). Seed 001's 'requests send only the documented authorization and "
    "JSON content type' holds for a retry too: every Fetch API request, the first and each retry, carries exactly "
    "Authorization: Bearer <key> and Content-Type: application/json (beyond HTTP framing) and the body {url}, and "
    "a retry goes to the first attempt's path and query string.",
    cases=FETCH_RETRY,
    slot="quiet",  # measures the waits between attempts
)
async def fetch_retry_waits(ctx: CheckContext) -> None:
    if not {WF, FAPI} <= ctx.hello.capabilities:
        ctx.note("fetch.api.retry.waits", "not judged: the target declares no web_fetch through the Fetch API")
        return
    await ctx.configure_opt_in(retries=RETRIES)
    history: list[dict[str, Any]] = []
    first: tuple[str, str] | None = None
    for _ in range(AT_ONCE_ATTEMPTS):
        before = await round_trip(ctx)
        async with LagSampler() as lag:
            waits = await _fetch_retry_run(ctx)
        load = Load(lag.worst, max(before, await round_trip(ctx)))
        problem, doubt = _fetch_retry_problem(waits, load)
        if not problem and not doubt:
            if history:
                ctx.note("fetch.api.retry.waits", {"attempts": [*history, {"met": True, **load.to_json()}]})
            return
        if problem:
            first = first or problem
            history.append({"reason": problem[0], **load.to_json()})
        else:
            history.append({"inconclusive": doubt, **load.to_json()})
        failed = sum("reason" in h for h in history)
        if first is not None and failed >= FAILED_RUNS:
            raise CheckFailed(f"{first[0]} (in {failed} of {len(history)} runs, the others inconclusive under load)"
                              if failed < len(history) else f"{first[0]} (in all {failed} runs)",
                              catches=first[1], attempts=history)
    ctx.note("fetch.api.retry.waits", {"verdict": f"{LATE_UNDER_LOAD}: {first[0] if first else doubt}",
                                       "attempts": history})


async def _fetch_retry_run(ctx: CheckContext) -> list[tuple[Case, str, list[float]]]:
    """One run: each row's faults, each on a URL of its own and answered every time, its calls started one by
    one (each :data:`STAGGER` s after the previous one's first request arrived, so no single busy moment of the
    target holds back every at-once retry). Per fault of a timed row (its row and status), the seconds from each
    answered failure to the next request; a wire row's requests are judged here (:func:`_same_fetch_request`)."""
    ctx.fresh()
    urls: list[str] = []
    statuses: list[str] = []
    rows: list[Case] = []
    for case in FETCH_RETRY:
        for fault in case["faults"]:
            url = f"{PAGE}?attempt-probe={len(urls)}"
            ctx.emu.inject("fetch", fault, times=None, when=_url_match(url))
            urls.append(url)
            rows.append(case)
            statuses.append(f"HTTP {429 if isinstance(fault, RateLimited) else getattr(fault, 'status', '?')}")
    calls = []
    for n, url in enumerate(urls):
        calls.append(ctx.target.start_call("web_fetch", {"arguments": {"url": url}}))
        if n + 1 < len(urls):
            if not await _fetch_arrived(ctx, url):
                break  # no request at all: the outcome below says so
            await asyncio.sleep(STAGGER)
    outcomes = [await call.outcome(CALL_TIMEOUT) for call in calls]
    await ctx.settle()
    waits: list[tuple[Case, str, list[float]]] = []
    for url, case, status, outcome in zip(urls, rows, statuses, outcomes, strict=False):
        expect_error(outcome, f"{case.name}: fetch {url}", PROVIDER_ERROR)
        sent = [r for r in ctx.records("fetch") if _url_match(url)(r.json)]
        require(sent, f"{case.name}: no Fetch API request for {url} reached the emulator")
        if case.params.get("judge") == "wire":
            _same_fetch_request(case, url, sent)
        else:
            waits.append((case, status, _gaps(sent)))
    # A retry whose body names another URL (a cache-busting parameter added) matches no call's URL, so the
    # judging above never sees it: every request must be for a URL a call asked for.
    strays = [r.json for r in ctx.records("fetch") if not any(_url_match(url)(r.json) for url in urls)]
    wire = next((case for case in FETCH_RETRY if case.params.get("judge") == "wire"), None)
    if wire is not None:
        require(not strays, f"{wire.name}: {len(strays)} Fetch API request(s) for a URL no call asked for, "
                f"e.g. the body {str(strays[:1])[1:-1][:200]}", catches=wire.catches)
    return waits


def _same_fetch_request(case: Case, url: str, sent: list[RequestRecord]) -> None:
    """Every request for ``url`` (the first attempt and each retry) carries exactly the two documented headers
    and the body {url}, and each retry goes to the first attempt's path and query string."""
    first = sent[0]
    for i, record in enumerate(sent):
        what = f"{case.name}: request {i + 1} for {url}"
        require_tools_api_headers(record, what)
        require(record.json == {"url": url}, f"{what}: body {record.json!r}, expected exactly {{'url': {url!r}}}",
                catches=case.catches)
        require((record.path, record.query) == (first.path, first.query), f"{what}: sent to {record.path}?"
                f"{record.query}, the first attempt to {first.path}?{first.query}", catches=case.catches)


def _url_match(url: str) -> Callable[[Any], bool]:
    """An emulator fault predicate selecting the Fetch API requests for ``url``."""
    return lambda body: isinstance(body, dict) and body.get("url") == url


async def _fetch_arrived(ctx: CheckContext, url: str) -> bool:
    """Whether the first Fetch API request for ``url`` reached the emulator within a liveness bound."""
    def seen(log: Any) -> bool:
        return any(r.route == "fetch" and _url_match(url)(r.json) for r in log.records())

    try:
        await patiently(lambda bound: ctx.blocking(ctx.emu.log.wait_until, seen, bound, url), ARRIVAL_BOUND)
    except TimeoutError:
        return False
    return True


def _fetch_retry_problem(
    waits: list[tuple[Case, str, list[float]]], load: Load
) -> tuple[tuple[str, str] | None, str]:
    """(reason, catches) when one status's retries came at once, and why the run proved nothing ("" when it did).
    Each status is judged on its own longest wait, so a target waiting on one status but not on another is seen
    (a diff review found one retrying 408 and 503 at once passing a judge of all six waits together), and a load
    stall, which only ever lengthens a wait, cannot fail a target. No retry at all proves the rule (the Fetch API
    need not be retried)."""
    doubt = ""
    for case, status, gaps in waits:
        if not gaps:
            continue
        judged = max(gaps)
        which = f"the longest of its {len(gaps)} waits" if len(gaps) > 1 else "its one wait"
        if judged < AT_ONCE_RETRY - min(load.allowance, FETCH_LOAD_SLACK):
            return (f"{case.name}: every Fetch API retry of {status} came at once ({which} {judged * 1000:.1f} ms "
                    "after the failure's answer)", case.catches), ""
        if judged < AT_ONCE_RETRY + min(load.allowance, LOAD_CAP):
            doubt = doubt or (f"{case.name}: {status}: {which} ({judged * 1000:.1f} ms) is within this run's load "
                              "of an at-once retry")
    return None, doubt
