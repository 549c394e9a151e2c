"""Seed 001's request rules on the evidence pipeline's own Search and Fetch API requests (seed 002).

The evidence pipeline (method ``evidence_search``) searches and fetches through the Search and Fetch APIs, so its
requests are Search and Fetch API requests like web_search's and web_fetch's: only the documented authorization
and JSON content type; a Search body of query, count, need_content false (and ori_question); count the configured
value unless the request's result bound is smaller; a Fetch body of the URL; no redirect of the API request
followed; on the account route the account token (and the API key nowhere); a failed search, or a failed page
fetch, not sent again unchanged (retries off). The web_search path is held to these by search.api.wire,
search.api.count, fetch.api.wire, search.redirect.not_followed, fetch.redirect.not_followed,
search.api.account_route, errors.codes and search.api.retry.never; this check reads the same on the pipeline's requests.

What the seeds leave open is accepted: the pipeline's own result bound (its count may be below the configured
one), how it writes its queries (seed 002 lets it drop duplicates and trim them), whether it sends ori_question
(evidence.ori_question's business), which pages it fetches and how a failed search or page shows (a WEB_* error,
the query's ``[needs_retry]``, a snippet fallback for a page that could not be fetched).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ...emulator import DEFAULT_ACCOUNT_TOKEN, Status
from ...emulator.log import RequestRecord
from ..cases import SCOPE, Case
from ..targets import CallOutcome
from ._base import CheckContext, CheckFailed, check, expect_success, require
from ._oracle import query_match
from ._script import answer_body, row, script
from .credentials import require_tools_api_request
from .evidence import REQUIRES, _evidence, serve_page
from .outcomes import REDIRECT_STATUSES, redirect_fault
from .search import require_tools_api_headers

ROUTE = "account-route"
# Two queries, each with one result whose page the Fetch API serves: the call sends two Search and two Fetch
# requests, each page holding a passage that matches its query.
PAGES = {
    "harbour pilot boarding time": ("https://pilot-office.example.org/boarding", "Harbour pilot boarding",
                                    "Harbour pilot boarding time is 06:00 at the outer anchorage, the office says."),
    "lumen bay ferry adult fare": ("https://lumen-ferries.example.com/fares", "Lumen Bay ferry fares",
                                   "The Lumen Bay ferry adult fare is twelve dollars one way, children travel free."),
}  # fmt: skip
PROMPT = "When does the harbour pilot board, and what does the Lumen Bay ferry cost an adult?"
SEARCH_KEYS = frozenset({"query", "count", "need_content"})  # always sent (search.api.wire)
OPTIONAL_KEYS = frozenset({"ori_question"})  # sent with a usable prompt: evidence.ori_question's to judge
# What a redirect answer offers: a search answer, or a page, holding a word no other text of the row has.
MARKER = "Quarrendon"
# Which requests the rule reaches is this check's question; the statuses one by one are search.redirect.not_followed's
# and fetch.redirect.not_followed's: one that changes the method and one that keeps it stand for the rest.
PIPELINE_REDIRECTS = tuple(s for s in REDIRECT_STATUSES if s in (302, 307))
REDIRECTED_QUERY = "harbour crane permit office"
REDIRECTED_PAGE = "https://crane-permits.example.net/office"
REDIRECTED_TEXT = f"The harbour crane permit office is the {MARKER} desk, open from 07:00."
FAILED_QUERY = "harbour tug booking desk"  # the query whose Search requests fail in the failed-search rows
# The failed-fetch rows: a query with one result whose every Fetch request is answered with the row's status.
FAILED_PAGE = ("harbour tug booking office", "https://tug-bookings.example.net/office", "Harbour tug booking office",
               "Harbour tug booking office hours and address.")

WIRE = (
    Case("search headers", "a second HTTP client for the pipeline's searches that adds its default headers "
         "(User-Agent, Accept, Accept-Encoding), where web_search's requests carry only the two documented ones",
         {"judge": "search-headers"}, family=SCOPE),
    Case("search body", "need_content: true sent by the pipeline to have the Search API return each page's content "
         "and skip its own fetches, or a body key of its own (localization, a page or offset)",
         {"judge": "search-body"}, family=SCOPE),
    Case("search count", "the pipeline's own result bound sent as count whatever the configured count (8 sent "
         "with count 3 configured), or the service's default 10", {"judge": "search-count", "count": 3},
         family=SCOPE),
    Case("fetch headers", "a second HTTP client for the pipeline's page fetches that adds its default headers "
         "(User-Agent, Accept), where web_fetch's requests carry only the two documented ones",
         {"judge": "fetch-headers"}, family=SCOPE),
    Case("fetch body", "the query sent along with the page's URL (so the service picks the passage), or another "
         "key of the pipeline's own (a format, need_content)", {"judge": "fetch-body"}, family=SCOPE),
    Case("search redirect", "a second HTTP client for the pipeline that follows redirects: a 3xx of one of its "
         "Search requests followed to its Location, or the 3xx body read as that query's results",
         {"judge": "search-redirect"}, family=SCOPE),
    Case("fetch redirect", "the same for its page fetches: a 3xx of a Fetch request followed to its Location, or "
         "the 3xx body read as the page", {"judge": "fetch-redirect"}, family=SCOPE),
    Case("the account route", "the pipeline's own client given the API key whatever the route (the account token "
         "honoured by web_search and web_fetch only), or given it beside the token (in x-api-key, so either works)",
         {"judge": "account"}, family=SCOPE),
    # From an outside hunt (hunt L): errors.codes and search.api.retry.never count the requests of web_search's and
    # web_fetch's failures only, so a pipeline that sent a failed search once more, unchanged, certified.
    Case("a search answered 402", "the pipeline's own retry of a failed search, retries off: a 402 (funding "
         "first, never a retry) sent again unchanged", {"judge": "failed-search", "status": 402}, family=SCOPE),
    Case("a search answered 400", "a rejected search (other 4xx need a changed request) sent again unchanged by "
         "the pipeline (a change in whitespace only is no change)", {"judge": "failed-search", "status": 400},
         family=SCOPE),
    Case("a search answered 503", "a transient failure retried by the pipeline with retries off (web_search fails "
         "fast, the pipeline waits the 5xx out and sends it again)", {"judge": "failed-search", "status": 503},
         family=SCOPE),
    # From a hunt (S3-4): the failed-search rows count Search requests only, so a pipeline that sent a failed page
    # fetch once more, unchanged (any failure, retries off: 'a page that failed to load may be transient'),
    # certified.
    Case("a page fetch answered 404", "the pipeline's own retry of a failed page fetch, retries off: a Fetch API "
         "404 (no usable page content: the same URL gives the same answer) sent again unchanged",
         {"judge": "failed-fetch", "status": 404}, family=SCOPE),
    Case("a page fetch answered 402", "a page fetch answered 402 (funding first, never a retry) sent again "
         "unchanged by the pipeline", {"judge": "failed-fetch", "status": 402}, family=SCOPE),
    Case("a page fetch answered 503", "a transient page-fetch failure retried by the pipeline with retries off "
         "(no automatic retries: it fails fast, as web_fetch does)", {"judge": "failed-fetch", "status": 503},
         family=SCOPE),
)


def _serve_pages(ctx: CheckContext) -> None:
    for query, (url, title, passage) in PAGES.items():
        script(ctx, query, [row(url, title, f"About {query}.")])
        serve_page(ctx, url, title, f"# {title}\n\nSome notes of the port office.\n\n{passage}")


def _sent(ctx: CheckContext, route: str, case: Case) -> list[RequestRecord]:
    records = ctx.records(route)
    noun = "Search" if route == "search" else "Fetch"
    require(records, f"{case.name}: the evidence call sent no {noun} API request to judge", catches=case.catches)
    return records


def _headers(case: Case, record: RequestRecord, what: str) -> None:
    """search.api.wire's and fetch.api.wire's header rule; a failure carries the row's catches note."""
    try:
        require_tools_api_headers(record, what)
    except CheckFailed as failure:
        raise CheckFailed(failure.reason, **{**failure.details, "catches": case.catches}) from None


def _what(record: RequestRecord) -> str:
    body = record.json if isinstance(record.json, dict) else {}
    about = body.get("query", body.get("url"))
    return f"the {record.route} request for {about!r}" if isinstance(about, str) else f"a {record.route} request"


async def _wire(ctx: CheckContext, case: Case) -> None:
    """One batch of two queries with the latest prompt: every Search and Fetch API request it sends."""
    configured = ctx.config.count
    if "count" in case.params:
        await ctx.configure(count=case["count"])
    try:
        await _two_query_call(ctx, case)
    finally:
        if ctx.config.count != configured:
            await ctx.configure(count=configured)
    judge = case["judge"]
    for record in _sent(ctx, judge.split("-")[0], case):
        what = f"{case.name}: {_what(record)}"
        body = record.json
        if judge in ("search-headers", "fetch-headers"):
            _headers(case, record, what)
        elif judge == "search-body":
            keys = set(body) if isinstance(body, dict) else set()
            require(isinstance(body, dict) and SEARCH_KEYS <= keys <= SEARCH_KEYS | OPTIONAL_KEYS,
                    f"{what}: body keys {sorted(keys) if isinstance(body, dict) else body!r}, expected "
                    f"{sorted(SEARCH_KEYS)} (and ori_question with a prompt)", catches=case.catches)
            require(body.get("need_content") is False, f"{what}: need_content {body.get('need_content')!r}, "
                    "expected false", catches=case.catches)
        elif judge == "search-count":
            count = body.get("count") if isinstance(body, dict) else None
            top = case["count"]
            require(type(count) is int and 1 <= count <= top, f"{what}: count {count!r} with count {top} "
                    f"configured; expected an integer from 1 to {top} (the pipeline may ask fewer)",
                    catches=case.catches)
        else:  # fetch-body
            require(isinstance(body, dict) and sorted(body) == ["url"] and isinstance(body["url"], str),
                    f"{what}: body {body!r}, expected exactly {{'url': <the page's URL>}}", catches=case.catches)


def _taken(outcome: CallOutcome, cited: bool) -> list[str]:
    """The evidence lines of a successful call that hold the redirect answer's word (or, with ``cited``, cite
    its page). The structured lines, not the text: a failure's wording may quote the upstream answer, which no
    seed decides, while evidence is what the call took as an answer."""
    if not outcome.ok or not isinstance(outcome.value, dict):
        return []
    lines = [e for g in outcome.value.get("queries", []) if isinstance(g, dict)
             for e in g.get("evidence", []) if isinstance(e, dict)]  # fmt: skip
    return [json.dumps(e, ensure_ascii=False) for e in lines
            if MARKER in str(e.get("text", "")) or (cited and e.get("url") == REDIRECTED_PAGE)]


def _failed_or_answered(outcome: CallOutcome, what: str, case: Case) -> None:
    """A redirected request is a failure: the call answers a WEB_* error, or evidence without what the 3xx
    offered (its page may still be cited through its snippet when the Fetch request was the one redirected)."""
    if not outcome.ok:
        code = str(outcome.error_code)
        require(code.startswith("WEB_"), f"{what}: failed without a WEB_* code ({code!r})", catches=case.catches)
    taken = _taken(outcome, cited=case["judge"] == "search-redirect")
    require(not taken, f"{what}: the 3xx answer was taken as evidence", evidence=taken, catches=case.catches)


async def _redirect(ctx: CheckContext, case: Case) -> None:
    route = "search" if case["judge"] == "search-redirect" else "fetch"
    for status in PIPELINE_REDIRECTS:
        ctx.fresh()
        what = f"{case.name}: HTTP {status} on the pipeline's {route.capitalize()} request"
        if route == "search":
            # The redirected query's 3xx body is a search answer whose page holds the query's fact; the other
            # query searches normally, so the call may answer with its evidence.
            _serve_pages(ctx)
            body = answer_body("search", REDIRECTED_QUERY, [row(REDIRECTED_PAGE, "Crane permits", REDIRECTED_TEXT)])
            ctx.emu.inject("search", redirect_fault(ctx, "search", status, body), times=None,
                           when=query_match("search", REDIRECTED_QUERY))
            serve_page(ctx, REDIRECTED_PAGE, "Crane permits", f"# Crane permits\n\n{REDIRECTED_TEXT}")
            queries: Any = [REDIRECTED_QUERY, *PAGES]
        else:
            # The page's Fetch request is answered with a 3xx whose body is a page holding the query's fact; its
            # snippet (a fallback for a page that could not be fetched, seed 002) does not hold the marker.
            script(ctx, REDIRECTED_QUERY, [row(REDIRECTED_PAGE, "Crane permits", "Harbour crane permit office hours.")])
            page = json.dumps({"title": "Crane permits", "content": f"# Crane permits\n\n{REDIRECTED_TEXT}"}).encode()
            ctx.emu.inject("fetch", redirect_fault(ctx, "fetch", status, page), times=None,
                           when=lambda sent: isinstance(sent, dict) and sent.get("url") == REDIRECTED_PAGE)
            queries = REDIRECTED_QUERY
        outcome = await _evidence(ctx, queries, {"id": f"wire-{case.name}-{status}", "local_names": []})
        await ctx.settle()
        hits = ctx.emu.log.trap_hits()
        require(not hits, f"{what}: its Location was requested {len(hits)} time(s)", catches=case.catches)
        _failed_or_answered(outcome, what, case)


async def _two_query_call(ctx: CheckContext, case: Case) -> None:
    """The batch of two queries with the latest prompt, afresh, every request it sends settled."""
    ctx.fresh()
    _serve_pages(ctx)
    outcome = await _evidence(ctx, list(PAGES), {"id": f"wire-{case.name}", "local_names": []}, PROMPT)
    expect_success(outcome, f"{case.name}: a two-query evidence call", case.catches)
    await ctx.settle()


async def _account(ctx: CheckContext, case: Case) -> None:
    ctx.emu.accept_account_token(DEFAULT_ACCOUNT_TOKEN)
    await ctx.configure(auth="account", account_token=DEFAULT_ACCOUNT_TOKEN)
    try:
        await _two_query_call(ctx, case)
        for route in ("search", "fetch"):
            for record in _sent(ctx, route, case):
                # search.api.account_route's rule: the whole request read, not only what Authorization carries.
                require_tools_api_request(record, "account_token", f"{case.name}: {_what(record)}", case.catches)
    finally:
        await ctx.configure(auth="api_key", account_token="")


def _plain(query: str) -> str:
    """A query as the seeds tell queries apart: seed 002 lets the pipeline trim its queries, and says a retry that
    changes only whitespace is no good retry (the same query fired again)."""
    return " ".join(query.split())


def _request_key(body: dict[str, Any], whole: bool) -> str:
    """How two Search requests are told apart: by the query alone, or (``whole``) by the whole body, query plain."""
    if not whole:
        return _plain(body["query"])
    return json.dumps({**body, "query": _plain(body["query"])}, sort_keys=True, default=str)


async def _failed_search(ctx: CheckContext, case: Case, retries: bool = False) -> None:
    """A batch of two queries, one whose every Search request is answered ``status``: each query is sent once; after
    a 4xx other than 402 each distinct request is sent once (the same query may follow in a changed request).
    ``retries``: the target was configured with retries on (search.api.retry.never's evidence rows: a 402 or another
    4xx all the same)."""
    ctx.fresh()
    _serve_pages(ctx)
    ctx.emu.inject("search", Status(case["status"]), times=None, when=query_match("search", FAILED_QUERY))
    queries = [FAILED_QUERY, next(iter(PAGES))]
    await _evidence(ctx, queries, {"id": f"wire-{case.name}", "local_names": []})
    await ctx.settle()
    bodies = [r.json for r in ctx.records("search")
              if isinstance(r.json, dict) and isinstance(r.json.get("query"), str)]
    sent = [_plain(b["query"]) for b in bodies]
    # Seed 001: 'other 4xx require a changed request', so after a 400 only the unchanged request is barred; a 402
    # needs funding first and a 503 is left to retries (off here), so neither query is sent again at all.
    for query in queries:
        # Seed 001's 'other 4xx require a changed request' (a 400, 404 or 409): only the unchanged request is barred;
        # the other query was never answered at all.
        whole = 400 <= case["status"] < 500 and case["status"] != 402 and query == FAILED_QUERY
        mine = [_request_key(b, whole) for b in bodies if _plain(b["query"]) == _plain(query)]
        times = max((mine.count(k) for k in mine), default=0)
        # The other query may go unsent: seed 001's tool fails the batch if one query fails.
        least = 1 if query == FAILED_QUERY else 0
        again = "the same request" if whole else "the same query"
        setting = "on" if retries else "off"
        require(least <= len(mine) and times <= 1, f"{case.name}: {times} Search API requests for "
                f"{query!r}{' with one body' if whole else ''}, expected "
                f"{'exactly one' if least else 'at most one'} (retries {setting}; never {again} again)",
                sent=sent, catches=case.catches)


async def _failed_fetch(ctx: CheckContext, case: Case, retries: bool = False) -> None:
    """A batch of two queries, each with one result; every Fetch request for the first one's page is answered
    ``status``: with retries off each page's Fetch request is sent at most once, the failed page's too (which pages
    a pipeline fetches is its own: a page never asked for is not judged). ``retries``: the target was configured
    with retries on (search.api.retry.never's evidence page-fetch rows: a 404 or 402 is sent at most once all the
    same)."""
    ctx.fresh()
    _serve_pages(ctx)
    query, url, title, snippet = FAILED_PAGE
    script(ctx, query, [row(url, title, snippet)])
    ctx.emu.inject("fetch", Status(case["status"]), times=None,
                   when=lambda body: isinstance(body, dict) and body.get("url") == url)
    await _evidence(ctx, [query, next(iter(PAGES))], {"id": f"wire-{case.name}", "local_names": []})
    await ctx.settle()
    fetched = [str(r.json.get("url")) for r in ctx.records("fetch") if isinstance(r.json, dict)]
    # Which pages a pipeline fetches is its own (a final read: the rule says so, the row had required this one); a
    # page never asked for is never asked for twice, so the row judges nothing then.
    # Seed 001: no automatic retries (retries off, evidence.api_wire); a 402 needs funding first and a 404 (another
    # 4xx) a changed request, so no retry setting would send either again unchanged (retries on, retry.never).
    again = sorted({u for u in fetched if fetched.count(u) > 1})
    setting = "on" if retries else "off"
    require(not again, f"{case.name}: {fetched.count(again[0]) if again else 0} Fetch API requests for "
            f"{again[0] if again else ''}, expected at most one (retries {setting}; never the same request again)",
            sent=fetched, catches=case.catches)


RUN: Mapping[str, Callable[[CheckContext, Case], Awaitable[None]]] = {
    "search-redirect": _redirect, "fetch-redirect": _redirect, "account": _account, "failed-search": _failed_search,
    "failed-fetch": _failed_fetch,
}


@check(
    "evidence.api_wire",
    "The evidence pipeline's Search and Fetch API requests keep web_search's and web_fetch's wire rules",
    seed="001",
    requires=REQUIRES,
    provider="api",
    rule="Seed 001: 'requests send only the documented authorization and JSON content type'; 'Direct Search "
    "sends query, count, need_content: false, and ori_question', count 'the configured value ... unless "
    "the request's result bound is smaller'; 'Fetch sends a URL'; 'Harness rejects redirects of the API "
    "request'; 'A Session on the DeepSeek account route sends its account token instead'. The evidence "
    "pipeline (seed 002) searches and fetches through these APIs ('parallel search', 'fetch selected "
    "pages': a call whose results match its queries sends both), so every one of its requests keeps them:"
    " beyond HTTP framing exactly Authorization: Bearer <key> and Content-Type: application/json; a "
    "Search body of query, count and need_content false (ori_question with a prompt, "
    "evidence.ori_question's to judge), count an integer no larger than the configured count (the "
    "pipeline's own result bound may be smaller); a Fetch body of exactly {url}. A 3xx (a 302 and a 307) "
    "of a pipeline Search or Fetch request is a failure: its Location is never requested and its body is "
    "no answer, so the call answers a WEB_* error, or without what the 3xx offered (the query's "
    "[needs_retry], the page's snippet as seed 002's fallback). With account-route and auth 'account', "
    "every pipeline request carries the account token as Authorization: Bearer, beside Content-Type alone, and "
    "the API key appears nowhere in it (the row is skipped without account-route). 'The provider has no shared "
    "rate scheduler, automatic retries, or fallback'; '402 requires funding first, and other 4xx require a changed "
    "request'; seed 002: a retry changes the query, never the same query again: with retries off, a query whose "
    "Search request is answered 402 or 503 is sent exactly once (compared with whitespace "
    "ignored; a changed query may follow, and the batch's other query may go unsent), and a Search request answered "
    "400 is never sent again unchanged (the query compared with whitespace ignored, every other body key as sent: the "
    "same query in a changed request, a smaller count say, may follow). The same holds for the pipeline's page "
    "fetches ('Fetch sends a URL': the request is its URL): with retries off, a page whose Fetch request is "
    "answered 404, 402 or 503 is requested at most once (with retries on, search.api.retry.never judges its page "
    "fetches answered 404 and 402: whether Fetch API requests are retried at all is open, but never a 402 or "
    "another 4xx). The "
    "pipeline's result bound, how it writes its queries and which pages it fetches are its own.",
    cases=WIRE,
)
async def api_wire(ctx: CheckContext) -> None:
    for case in WIRE:
        if case["judge"] == "account" and ROUTE not in ctx.hello.capabilities:
            continue
        await RUN.get(case["judge"], _wire)(ctx, case)
