"""Evidence pipeline checks (seed 002) over the emulator's Search and Fetch APIs.

Seed 002 decides: the pipeline calls no language model (no classifier, no summarizer); a call runs
the searches of its 2-4 queries concurrently and never more than four, and returns the same result
however they answer (deterministic code), each query's results (its ``[needs_retry]`` too) in its own
group; every evidence line keeps its source URL; after ``[needs_retry]`` the same query (changed only in
spacing or case) must not be fired again; and web search is no fallback for local documents, whose
names or contents must never be sent to a search engine. It fixes no error code for the refusals,
so any ``WEB_*`` error is accepted there.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

import idna

from ...emulator import Hold, RequestLog, Status
from ..calibration import patiently
from ..cases import ORDER, Case
from ..scenarios import url_key
from ..targets import CallOutcome, PendingCall
from ._base import CALL_TIMEOUT, CheckContext, check, expect_error, expect_schema, expect_success, require
from ._oracle import query_match
from ._script import row, script, scripted
from .batch import HELD_BOUND, wait_held
from .search import MODEL_ROUTES, ori_accepted

REQUIRES = ("web_search", "search-api", "fetch-api", "evidence-search")  # the evidence tool is a web_search
_ANY_SOURCE = re.compile(r"\(source: (\S+)\)$")  # any scheme: what a line cites, valid or not


def serve_page(ctx: CheckContext, url: str, title: str, content: str) -> None:
    """From now on the Fetch API answers ``url`` with this page (the others still 404)."""
    answer = json.dumps({"title": title, "content": content}).encode()
    ctx.emu.inject("fetch", Status(200, body=answer), times=None,
                   when=lambda body: isinstance(body, dict) and body.get("url") == url)


def _start(
    ctx: CheckContext, query: Any, context: dict[str, Any] | None = None, prompt: str | None = None
) -> PendingCall:
    params: dict[str, Any] = {"arguments": {"query": query},
                              "context": context or {"id": "conversation-1", "local_names": []}}
    if prompt is not None:
        params["latest_prompt"] = prompt
    return ctx.target.start_call("evidence_search", params)


async def _evidence(
    ctx: CheckContext, query: Any, context: dict[str, Any] | None = None, prompt: str | None = None
) -> CallOutcome:
    return await _start(ctx, query, context, prompt).outcome(CALL_TIMEOUT)


BATCH_QUERIES = ("harbour ferry timetable", "lumen bay adult fare", "pier crane permits", "quay fish market hours",
                 "marina fuel dock prices")
BATCH = (
    Case("two-queries", "the searches of a batch run one after another", {"queries": 2}),
    Case("four-queries", "only some searches of a batch in flight at once (a pool of two), or a cap below four: "
         "a batch of four refused or cut", {"queries": 4}),
    Case("five-queries", "no cap of four queries: a call of five queries runs five searches",
         {"queries": 5, "over": True}),
    Case("grouped-text", "the model-visible text one flat list of evidence lines: a batch's results not returned "
         "separated by query (no query named or numbered above its lines)", {"text": "grouped"}),
    Case("cut-keeps-every-query", "a text over its bound cut by leaving lines out from its end: the batch's last "
         "query loses its lines and its heading, so nothing of it is returned", {"text": "cut"}),
    # From the seed-5 mutation draw: a query that found nothing, then three whose one line each is long (a URL of
    # 2,048 characters, a passage near 360), so the text is over the reference's 8,000 characters with one line a
    # query left.
    Case("cut-keeps-retry-marker", "lines left out alike from every query once each is down to one, the first "
         "query's first: the [needs_retry] line of the query that found nothing goes, so the text no longer tells "
         "the agent to search again", {"text": "retry"}),
    Case("needs-retry-per-query", "[needs_retry] said for the call, not for the query that found nothing: one marker "
         "outside every query's group (above or below them), or the marker on every query of the batch, those with "
         "evidence too (in the text, or in the value's needs_retry)", {"text": "retry-per-query"}),
    Case("completion-order", "groups, or the pages picked, in the order the searches and pages answered, or ties "
         "broken at random: the same call, answered in another order, returns another text or value",
         {"order": True}),
)
MAX_QUERIES = 4  # seed 002's cap on the queries of one call
# grouped-text: the first query has two pages (two lines), so numbered lines of a flat list are no groups; no
# digit in its URLs or passages, so a query's number stands only where the text numbers it.
_PILOT, _FERRY = "harbour pilot boarding time", "lumen bay ferry adult fare"
GROUPED_PAGES = {
    _PILOT: (("https://pilot-office.example.org/boarding",
              "Harbour pilot boarding time is at dawn, from the outer anchorage of the port."),
             ("https://anchorage-notes.example.net/pilots",
              "Harbour pilot boarding time moves to noon on public holidays, the harbour office says.")),
    _FERRY: (("https://lumen-ferries.example.com/fares",
              "The Lumen Bay ferry adult fare is twelve dollars one way, children travel free."),),
}  # fmt: skip
CUT_QUERIES = ("harbour pilot fees", "harbour berth fees", "harbour crane fees")  # with lines_cite_results' long URLs
# cut-keeps-retry-marker: long queries (their headings count too), the first answered with no result at all. Each
# stays within the Search API's 128 characters (seed 001), which a pipeline may enforce before searching (hunt U2-F1:
# queries of 138-140 failed a pipeline refusing them, as search.api.wire lets web_search do).
_SEASON = "for vessels over eighty metres entering the northern channel at night in the winter season by the breakwater"
RETRY_QUERIES = tuple(f"harbour {what} fees {_SEASON}" for what in ("tug", "pilot", "berth", "crane"))
assert all(len(q) <= 128 for q in RETRY_QUERIES)
# needs-retry-per-query: the middle query finds nothing (its search answers no result), the others a page each, so
# a marker above or below every group falls in no group or in another query's. Its words stand nowhere else.
_NOTHING = "zzqx quay permit office"
PER_QUERY_QUERIES = (_PILOT, _NOTHING, _FERRY)
NEEDS_RETRY = "[needs_retry]"
# completion-order: three queries with four results each, every page readable (twelve pages, more than a bound of
# eight reads, so a pick can differ); the call made twice, the first query's search and pages answered before the
# others' in one run and after them in the other.
ORDER_PAGES = {
    "harbour pilot boarding time": ("pilot-office", "Harbour pilot boarding time is at dawn, at the anchorage."),
    "lumen bay ferry adult fare": ("lumen-ferries", "The Lumen Bay ferry adult fare is twelve dollars one way."),
    "gull island lighthouse hours": ("gull-lighthouse", "Gull Island lighthouse hours are nine to five, daily."),
}  # fmt: skip
ORDER_RESULTS = 4


def order_urls(query: str) -> list[str]:
    """The result URLs of ``query`` in completion-order, each on a site of its own."""
    name = ORDER_PAGES[query][0]
    return [f"https://{name}-{tld}.example.org/notes" for tld in ("north", "south", "east", "west")[:ORDER_RESULTS]]


@check(
    "evidence.batch",
    "A batch of up to four queries runs its searches at once; a call never runs more than four",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: its title reads 'searches concurrently, at most 4 queries'; one tool call takes 1 query or a "
    "batch of 2-4; 'when a list of several queries is sent, the system runs the searches concurrently' "
    "(the pipeline's 'parallel search') 'and returns the results separated by query', and the call 'can still "
    "limit the number of queries to at most 4'. "
    "Every search of a batch of two to four is in flight before any is answered; a call of five queries "
    "sends at most four searches (refusing it, with any WEB_* error, is what the reference does; the seed "
    "fixes no error code). The model-visible text keeps each query's evidence lines under that query (named by "
    "its text or its number, in any layout), and every query of the batch stays in it (named, or one of its "
    "lines shown) however the text is cut, and a query whose search found nothing keeps its [needs_retry] there too: "
    "the seed fixes no bound on the text, nor which evidence lines a cut leaves out. 'If the "
    "result shows [needs_retry] the agent must make the query more specific': a query of a batch that found nothing "
    "says [needs_retry] inside its own group, and a query that found evidence does not (the value's needs_retry "
    "likewise: per query, and for the call only when no query found evidence). The pipeline is 'a deterministic "
    "code pipeline': the same call, its searches and pages answered in another order, returns the same text and "
    "value (any layout, any order of its own).",
    cases=BATCH,
)
async def batch(ctx: CheckContext) -> None:
    for case in BATCH:
        ctx.fresh()
        if case.params.get("text") == "retry-per-query":
            await _retry_per_query(ctx, case)
            continue
        if "text" in case.params:
            await _batch_text(ctx, case)
            continue
        if case.params.get("order"):
            await _completion_order(ctx, case)
            continue
        queries = list(BATCH_QUERIES[: case["queries"]])
        context = {"id": f"batch-{case.name}", "local_names": []}
        what = f"{case.name}: a {len(queries)}-query evidence call"
        if case.params.get("over"):
            outcome = await _evidence(ctx, queries, context)
            await ctx.settle()
            searched = {str(r.json.get("query")) for r in ctx.records("search") if isinstance(r.json, dict)}
            require(len(searched) <= MAX_QUERIES, f"{what} ran {len(searched)} searches", searched=sorted(searched),
                    catches=case.catches)  # fmt: skip
            if not outcome.ok:
                expect_error(outcome, what)
            continue
        gate = ctx.emu.gate(f"evidence-{case.name}")
        ctx.emu.inject(ctx.search_route, Hold(gate, timeout=30), times=len(queries))
        call = _start(ctx, queries, context)
        try:
            await wait_held(ctx, gate, len(queries), what, catches=case.catches)
        finally:
            gate.release()
        expect_success(await call.outcome(CALL_TIMEOUT), what)


def _marks(text: str, queries: Sequence[str]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(position, query index) of every place ``text`` names a query by its words (any case, any spacing),
    and, apart, by its number standing alone ("Query 2", "2.", "[2]"), each sorted. Apart, because lines
    numbered inside their group ("1.", "2." under a heading that names the query) are not group names."""
    words: list[tuple[int, int]] = []
    numbers: list[tuple[int, int]] = []
    for index, query in enumerate(queries):
        named = re.compile(r"\s+".join(map(re.escape, query.split())), re.IGNORECASE)
        number = re.compile(rf"(?<![\w.,]){index + 1}(?!\w|[.,]\d)")
        words += [(m.start(), index) for m in named.finditer(text)]
        numbers += [(m.start(), index) for m in number.finditer(text)]
    return sorted(words), sorted(numbers)


def _under(marks: Sequence[tuple[int, int]], at: int, index: int) -> bool:
    above = [i for mark, i in marks if mark < at]
    return bool(above) and above[-1] == index


async def _batch_text(ctx: CheckContext, case: Case) -> None:
    """The text of a batch returns the results separated by query (seed 002): each shown evidence line
    stands under its own query's name (grouped-text), no query vanishes from a cut text (cut), and a query
    that found nothing keeps its [needs_retry] in a cut text (retry)."""
    if case["text"] == "grouped":
        queries: Sequence[str] = tuple(GROUPED_PAGES)
        for query, pages in GROUPED_PAGES.items():
            # Titles that name no query: a flat list showing each line's title must not pass for groups.
            script(ctx, query, [row(url, "Port office notes", f"About {query}.") for url, _passage in pages])
            for url, passage in pages:
                serve_page(ctx, url, "Port office notes", f"# Port office notes\n\n{passage}")
    elif case["text"] == "retry":
        queries = RETRY_QUERIES
        script(ctx, queries[0], [])  # the search finds nothing: the query must say [needs_retry]
        for query in queries[1:]:
            _longest_result(ctx, query)
    else:
        queries = CUT_QUERIES
        for query in queries:
            _long_results(ctx, query)
    outcome = await _evidence(ctx, list(queries), {"id": f"batch-{case.name}", "local_names": []})
    value = expect_success(outcome, f"{case.name}: a {len(queries)}-query evidence call")
    text = outcome.text or ""
    if case["text"] == "retry":  # that every query stays named is the cut row's to judge
        require("[needs_retry]" in text, f"{case.name}: query 1 ({queries[0]!r}) found nothing, but the text says "
                "no [needs_retry]", catches=case.catches, text_start=text[:600])
        return
    groups = {" ".join(str(g.get("query", "")).split()).casefold(): g for g in value.get("queries", [])
              if isinstance(g, dict)}  # fmt: skip
    words, numbers = _marks(text, queries)
    placed: list[tuple[int, int, str]] = []  # (position of a shown line, its query's index, its query)
    for index, query in enumerate(queries):
        lines = [e for e in groups.get(query.casefold(), {}).get("evidence", []) if isinstance(e, dict)]
        if case["text"] == "cut":
            named = any(i == index for _at, i in words + numbers) or any(str(e.get("url")) in text for e in lines)
            require(named, f"{case.name}: query {index + 1} ({query!r}) vanished from the text: not named, none of "
                    "its lines shown", catches=case.catches, text_end=text[-300:])  # fmt: skip
            continue
        shown = [at for at in (text.find(str(e.get("text", "")).strip()[:40]) for e in lines) if at >= 0]
        require(shown, f"{case.name}: the text shows no evidence line of query {index + 1} ({query!r})",
                catches=case.catches, text=text[:2000])
        placed += [(at, index, query) for at in shown]
    # Every line stands under its own query named by its words, or every line under its own query's number.
    for marks in (words, numbers):
        if all(_under(marks, at, index) for at, index, _query in placed):
            return
    _at, index, query = next((a, i, q) for a, i, q in placed if not _under(words, a, i))
    require(False, f"{case.name}: an evidence line of query {index + 1} ({query!r}) does not stand under that "
            "query (the text names no query, or another, above it)", catches=case.catches, text=text[:2000])


def _owner(marks: Sequence[tuple[int, int]], at: int) -> int | None:
    """The index of the query whose group holds position ``at``: the last one named above it (None: above all)."""
    above = [i for mark, i in marks if mark < at]
    return above[-1] if above else None


async def _retry_per_query(ctx: CheckContext, case: Case) -> None:
    """A batch whose middle query found nothing: [needs_retry] stands in that query's group (named by its words or
    by its number, as the other rows find groups) and in no other query's group."""
    queries = PER_QUERY_QUERIES
    for query in (_PILOT, _FERRY):
        pages = GROUPED_PAGES[query]
        script(ctx, query, [row(url, "Port office notes", f"About {query}.") for url, _passage in pages])
        for url, passage in pages:
            serve_page(ctx, url, "Port office notes", f"# Port office notes\n\n{passage}")
    script(ctx, _NOTHING, [])  # the engine found nothing for it
    outcome = await _evidence(ctx, list(queries), {"id": f"batch-{case.name}", "local_names": []})
    value = expect_success(outcome, f"{case.name}: a {len(queries)}-query evidence call")
    text = outcome.text or ""
    at = [m.start() for m in re.finditer(re.escape(NEEDS_RETRY), text)]
    dead = queries.index(_NOTHING)
    layouts = []
    for marks in _marks(text, queries):
        owners = [_owner(marks, a) for a in at]
        layouts.append(owners)
        if dead in owners and not set(owners) - {dead, None}:
            break
    else:
        require(False, f"{case.name}: [needs_retry] does not stand in the group of query {dead + 1} ({_NOTHING!r}) "
                "alone, the one query that found nothing (by the queries named by words, then by number, the "
                f"markers fall in the groups of {layouts})", catches=case.catches, text=text[:2000])  # fmt: skip
    # The value's schema gives each query its needs_retry, and the call's 'when no query found usable evidence'.
    groups = {" ".join(str(g.get("query", "")).split()).casefold(): g for g in value.get("queries", [])
              if isinstance(g, dict)}  # fmt: skip
    for index, query in enumerate(queries):
        said = groups.get(query.casefold(), {}).get("needs_retry")
        require(said is (index == dead), f"{case.name}: the value's needs_retry of query {index + 1} ({query!r}) is "
                f"{said!r}", catches=case.catches)  # fmt: skip
    require(value.get("needs_retry") is False, f"{case.name}: the value's needs_retry for the call is "
            f"{value.get('needs_retry')!r}, though two of its queries found evidence", catches=case.catches)


async def _answered(ctx: CheckContext, route: str, field: str, groups: Sequence[set[str]], what: str) -> None:
    """Until the emulator has answered, for each of ``groups``, a ``route`` request whose body's ``field`` is in
    it, and holds none of them unanswered: a liveness bound. When it runs out (a target that never asks for one
    of them) the row goes on: the order is then not shown, and the runs are still compared."""

    def enough(log: RequestLog) -> bool:
        records = [r for r in log.records() if r.route == route and isinstance(r.json, dict)]
        for keys in groups:
            mine = [r for r in records if r.json.get(field) in keys]
            if not mine or not all(r.done for r in mine):
                return False
        return True

    try:
        await patiently(lambda bound: ctx.blocking(ctx.emu.log.wait_until, enough, bound, what), HELD_BOUND)
    except TimeoutError:
        ctx.note("order not shown", what)


async def _completion_order(ctx: CheckContext, case: Case) -> None:
    """The same call twice, its answers alike: in the first run the first query's search and pages are answered
    while the others' are held at gates, in the second they are held until the others' are answered. Both runs
    must return the same text and value (seed 002's pipeline is deterministic code)."""
    queries = list(ORDER_PAGES)
    route = ctx.search_route
    runs: list[tuple[str, dict[str, Any]]] = []
    for run, lead_first in enumerate((True, False), 1):
        ctx.fresh()
        searches, pages = ctx.emu.gate(f"{case.name}-searches-{run}"), ctx.emu.gate(f"{case.name}-pages-{run}")
        held = set(queries[1:]) if lead_first else {queries[0]}
        for query, (_name, passage) in ORDER_PAGES.items():
            urls = frozenset(order_urls(query))
            found = scripted(route, query, [row(url, query.title(), f"About {query}.") for url in order_urls(query)])
            body = {"title": query.title(), "content": f"# {query.title()}\n\n{passage}"}
            page = Status(200, body=json.dumps(body).encode())
            mine = functools.partial(_fetch_of, urls)
            if query in held:
                ctx.emu.inject(route, Hold(searches, timeout=30, then=found), when=query_match(route, query))
                ctx.emu.inject("fetch", Hold(pages, timeout=30, then=page), times=ORDER_RESULTS, when=mine)
            else:
                ctx.emu.inject(route, found, when=query_match(route, query))
            ctx.emu.inject("fetch", page, times=None, when=mine)
        call = _start(ctx, queries, {"id": f"{case.name}-{run}", "local_names": []})
        free = [q for q in queries if q not in held]
        try:  # the free queries' searches answered first, then their pages, each before the held ones go on
            await _answered(ctx, route, "query", [{q} for q in free], f"{case.name}: the free searches of run {run}")
            searches.release()
            await _answered(ctx, "fetch", "url", [set(order_urls(q)) for q in free],
                            f"{case.name}: the free pages of run {run}")  # fmt: skip
        finally:
            searches.release()
            pages.release()
        outcome = await call.outcome(CALL_TIMEOUT)
        value = expect_success(outcome, f"{case.name}: run {run}")
        runs.append((outcome.text or "", value))
    (text_1, value_1), (text_2, value_2) = runs
    at = next((i for i, (a, b) in enumerate(zip(text_1, text_2, strict=False)) if a != b), len(text_1))
    near = slice(max(0, at - 200), at + 300)
    require(text_1 == text_2, f"{case.name}: the same call returned another text when its first query was answered "
            f"last (from character {at} on)", catches=case.catches, first=text_1[near], second=text_2[near])
    require(value_1 == value_2, f"{case.name}: the same call returned another value when its first query was "
            "answered last", catches=case.catches, first=value_1, second=value_2)


def _fetch_of(urls: frozenset[str], body: Any) -> bool:
    return isinstance(body, dict) and body.get("url") in urls


# The prompt has whitespace runs to collapse and is longer than the API's 128-character limit.
PROMPT = "Which  harbour ferry\tleaves first on Saturday,\n\nand what does an adult ticket cost? " * 3
ORI = (
    Case("a batch of two queries", "the pipeline's searches sent without the user's prompt (the call's context "
         "dropped between the tool and its searches), or the prompt sent raw or uncut",
         {"query": ["harbour ferry timetable", "lumen bay adult fare"], "prompt": PROMPT}),
    Case("no prompt", "an empty or null ori_question sent", {"query": "harbour ferry timetable", "prompt": None}),
    Case("sendOriginalQuestion off", "the setting ignored by the evidence pipeline's searches",
         {"query": "harbour ferry timetable", "prompt": PROMPT, "off": True}),
)


@check(
    "evidence.ori_question",
    "The evidence pipeline's Search API requests carry the latest prompt as ori_question, as web_search's do",
    seed="001",
    requires=REQUIRES,
    provider="api",
    rule="Seed 001: 'Search API mode also sends up to 128 characters of the user's prompt to the search service "
    "with each query unless sendOriginalQuestion is off': the evidence pipeline (seed 002) searches through the "
    "Search API, so each of its requests carries ori_question, the latest prompt (protocol field latest_prompt) "
    "with whitespace collapsed and cut to 128 code points (as search.api.ori_question accepts it), and omits it "
    "without a prompt or with the switch off.",
    cases=ORI,
)
async def ori_question(ctx: CheckContext) -> None:
    for case in ORI:
        if case.params.get("off"):
            await ctx.configure(send_original_question=False)
        ctx.emu.log.clear()
        prompt = case["prompt"]
        outcome = await _evidence(ctx, case["query"], {"id": f"ori-{case.name}", "local_names": []}, prompt)
        expect_success(outcome, case.name)
        await ctx.settle()
        records = ctx.records("search")
        queries = case["query"] if isinstance(case["query"], list) else [case["query"]]
        require(len(records) == len(queries), f"{case.name}: {len(records)} Search API requests for "
                f"{len(queries)} queries", catches=case.catches)
        accepted = ori_accepted(prompt) if prompt is not None and not case.params.get("off") else None
        for record in records:
            sent = record.json.get("ori_question") if isinstance(record.json, dict) else None
            if accepted is None:
                require(isinstance(record.json, dict) and "ori_question" not in record.json,
                        f"{case.name}: ori_question must be omitted", sent=sent, catches=case.catches)
            else:
                require(sent in accepted, f"{case.name}: ori_question differs from the collapsed prompt cut at "
                        "128 code points", sent=sent, accepted=sorted(accepted), catches=case.catches)


NO_MODEL = (
    Case("batch", "a summarizer or classifier model called per batch", {"query": ["search api pricing", "上海天气"]}),
    Case("single", "a model called for a single query", {"query": "rate limits"}),
    Case(
        "needs-retry",
        "a model asked (on any model route, Responses included) to rewrite a query that found nothing",
        {"query": "zzqx unknowable"},
    ),
)


@check(
    "evidence.no_model_call",
    "An evidence call sends only Search and Fetch API requests: no model request (Messages or Responses)",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: the pipeline is deterministic code; there is no LLM classifier inside web_search and "
    "no model summarizer in the browse path.",
    cases=NO_MODEL,
)
async def no_model_call(ctx: CheckContext) -> None:
    for case in NO_MODEL:
        value = expect_success(await _evidence(ctx, case["query"]), f"evidence call ({case.name})")
        expect_schema(value, "evidence_search.output", f"evidence call ({case.name})")
        await ctx.settle()
        routes = sorted({str(r.route) for r in ctx.records()})
        require(not ctx.records("messages"), f"evidence call ({case.name}) sent a Messages request", routes=routes)
        models = sorted(set(routes) & set(MODEL_ROUTES))
        require(not models, f"evidence call ({case.name}) sent a model request ({', '.join(models)})", routes=routes)
        require(ctx.records("search"), f"evidence call ({case.name}) sent no Search API request", routes=routes)


def _regions(text: str, items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each evidence item (passage, URL) the text shows, with the stretch of text that is its own: from
    the end of the previous item's passage to the start of the next one (a URL may stand before or
    after its passage, on the same line or the next). Items the text does not show are left out."""
    found: list[tuple[int, int, str]] = []
    at = 0
    for passage, url in items:
        key = passage.strip()[:40]
        where = text.find(key, at) if key else -1
        if where >= 0:
            found.append((where, where + len(key), url))
            at = where + len(key)
    return [
        (text[(found[i - 1][1] if i else 0) : (found[i + 1][0] if i + 1 < len(found) else len(text))], url)
        for i, (_start, _end, url) in enumerate(found)
    ]


_URL = re.compile(r"https?://[^\s<>\"'()\[\]]+")
# Long result URLs (within the reference's 2,048): three queries with two cited pages each pass the reference's
# 8,000-character text, so lines must be left out whole, never cut inside a passage's URL; with four queries, even
# one line each does.
_LONG_PATH = "records/" + "harbour-dues-archive-" * 90
# snippet-fallback: one result whose page the Fetch API fails (HTTP 404); its title and snippet name the query.
SNIPPET_FALLBACK = ("https://pilot-notice.example.com/fees", "Brackenholt pilot fees",
                    "Brackenholt pilot fees are 420 EUR per boarding.")
# lines-from-two-pages: (query, ((url, title, snippet, page passage, the fact only that passage holds), ...)). The
# titles alike, the first result's snippet nearer the query (an engine's order and a ranking of results put it
# first), the second page's passage nearer it (so a pipeline whose best line comes from it shows it first).
TWO_PAGES = (
    ("harbour pilot boarding time", (
        ("https://pilot-office.example.org/boarding", "Port office notes", "Harbour pilot boarding time at the port.",
         "Harbour pilot boarding time is at dawn, from the outer anchorage of the port.", "dawn"),
        ("https://anchorage-notes.example.net/pilots", "Port office notes", "Notes of the port office.",
         "Harbour pilot boarding time moves to noon on public holidays, the harbour office says.", "noon"))),
    ("เวลาเปิด ตลาดน้ำคลองแดน", (
        ("https://klongdan-market.example.co.th/info", "ข่าวท้องถิ่น", "เวลาเปิด ตลาดน้ำคลองแดน",
         "เวลาเปิด ตลาดน้ำคลองแดน วันเสาร์ 07:00 น. ที่ท่าน้ำหน้าวัด", "07:00"),
        ("https://travel-notes.example.co.th/klongdan", "ข่าวท้องถิ่น", "บันทึกการเดินทาง",
         "เวลาเปิด ตลาดน้ำคลองแดน วันอาทิตย์ 08:30 น. ตลาดน้ำคลองแดนประกาศ", "08:30"))),
)  # fmt: skip
CITES = (
    Case("batch", "evidence lines shown without their source URL, or sources listed that gave no evidence",
         {"queries": ("search api pricing", "rate limits retry-after")}),
    Case("long-urls", "a text over its bound cut at a character count, inside an evidence line's URL, instead of "
         "leaving whole lines out: the last line shown cites a URL no search returned",
         {"queries": ("harbour pilot fees", "harbour berth fees", "harbour crane fees"), "long": True}),
    # From an outside hunt: four queries whose one line each is still over the bound together.
    Case("long-urls-four-queries", "lines left out only down to one a query, then the text cut at a character "
         "count: with four queries one line each is still too long, and the last line shown cites a URL cut short",
         {"queries": ("harbour pilot fees", "harbour berth fees", "harbour crane fees", "harbour tug fees"),
          "long": True}),
    # From the seed-5 mutation draw: results that give the ranking no words at all. Reading their pages or saying
    # [needs_retry] are both the target's choice (seed 002 ranks by relevance and fixes no floor); crashing is not.
    Case("bare-results", "relevance scores left unset when no result of a query has a word to score (no title, no "
         "snippet): the ranking raises and the call fails or crashes instead of answering",
         {"queries": ("harbour pilot boarding time",), "bare": ("https://harbour-office.example.org/boarding",)}),
    Case("query-string", "the result URL 'canonicalised' without its query string: a line cites .../notice for the "
         "result .../notice?id=4471, another resource, which no search returned",
         {"queries": ("harbour pilot notice", "harbour tug notice"),
          "exact": ("https://harbour.example.com/notice?id=4471", "https://tug-desk.example.net/notice?id=4472")}),
    Case("path-case", "the result URL 'canonicalised' (path lower-cased, trailing slash dropped): a line cites "
         ".../notices/pilot-fees for the result .../Notices/Pilot-Fees/, another resource",
         {"queries": ("harbour pilot fees notice", "harbour tug fees notice"),
          "exact": ("https://harbour.example.com/Notices/Pilot-Fees/", "https://tug-desk.example.net/Tug/Fees/")}),
    # From an outside hunt: tracking parameters are part of the URL the search returned.
    Case("tracking-parameters", "tracking parameters (utm_*, gclid) stripped from the cited URL: a line cites "
         "another string than the result's URL as returned",
         {"queries": ("harbour pilot bulletin", "harbour tug bulletin"),
          "exact": ("https://harbour.example.com/bulletin?id=7&utm_source=feed&utm_medium=rss",
                    "https://tug-desk.example.net/bulletin?gclid=Cj0KCQ&id=8")}),
    # From an outside hunt (J): escapes of reserved characters name other resources (RFC 3986 2.2, 6.2.2.2).
    Case("percent-escapes", "cited URLs percent-decoded ('readable'): a line cites .../pilot/2026?id=a&b (another "
         "path, two parameters) for the result .../pilot%2F2026?id=a%26b",
         {"queries": ("harbour pilot circular", "harbour tug circular"),
          "exact": ("https://harbour.example.com/circulars/pilot%2F2026?id=a%26b",
                    "https://tug-desk.example.net/%7Etugs/circular%2fq3?ref=tug%26pilot")}),
    # From an outside hunt: a URL printed once for a run of lines from one page ("same source" after it).
    Case("two-lines-one-page", "a page's second evidence line shown without its URL (the URL printed once for a run "
         "of lines from the same page)", {"queries": ("harbour pilot fees per tonne",), "two_lines": True}),
    # From an outside hunt (M2): seed 002 lets a result's search snippet stand in when its page cannot be read
    # ('search snippet is still a fallback, by policy'); a line it gives is an evidence line like any other. Using
    # the fallback is open: a [needs_retry] instead (no line at all) passes.
    Case("snippet-fallback", "a snippet-fallback line shown without its source URL (marked as a snippet instead), "
         "or left out of the value's sources, so code attaches no link for it",
         {"queries": ("brackenholt pilot fees",), "fallback": SNIPPET_FALLBACK}),
    # From the same hunt: the URL of a line shown through a display cut below the reference's URL bound (2,048).
    Case("longest-url", "an evidence line's URL shown through a display cut of 2,000 characters: a result URL of "
         "2,048 is cited cut short, another URL", {"queries": ("harbour pilot fees",), "long": True, "longest": True}),
    # From a hunt (S3-1): every line checked only for citing some URL the search returned, so a pipeline citing
    # each line of a query under the query's first line's URL, or pairing its lines with its pages by position
    # (best line with the first page read), certified. Two results of one query, each page a fact of its own: the
    # page that holds a line's fact is the one it cites.
    Case("lines-from-two-pages", "the lines of a query cited under another result's URL of that query: every line "
         "under the URL of the query's first line, or the lines (best first) paired by position with the pages "
         "read (in the pipeline's page order), so a fact is cited under the page that does not hold it",
         {"queries": (TWO_PAGES[0][0],), "pages": TWO_PAGES[0][1]}),
    Case("thai-lines-from-two-pages", "the same in Thai: the Sunday opening time (08:30) cited under the page "
         "that gives the Saturday one (07:00), or the reverse", {"queries": (TWO_PAGES[1][0],),
                                                                  "pages": TWO_PAGES[1][1]}),
)
# two-lines-one-page: one page answering its query in two places far apart, so it may give two evidence lines
# (how many lines a page gives is open: with one, the row judges nothing more than the others).
TWO_LINES_URL = "https://harbour-dues.example.org/pilot-fees"
TWO_LINES_PAGE = "\n\n".join([
    "# Harbour pilot fees",
    "Harbour pilot fees per tonne are 40 baht for vessels under 80 metres.",
    *(f"Note {i}: the museum garden hosts a flower show with music, crafts and food stalls." for i in range(30)),
    "Harbour pilot fees per tonne are 55 baht for vessels over 80 metres.",
])


def _longest_result(ctx: CheckContext, query: str) -> None:
    """One result for ``query`` whose URL is 2,048 characters long (the reference's bound), its page a paragraph of
    some 360 characters that answers it."""
    topic = "-".join(query.split()[:3])
    head = f"https://{topic}.example.org/records/"
    url = head + ("harbour-dues-archive-" * 100)[: 2048 - len(head)]
    page = (f"# {query.title()}\n\n{query.capitalize()} are fifty baht per tonne, payable at the port office before "
            "boarding, with a surcharge of ten per cent for vessels arriving without notice, a refund for bookings "
            "cancelled six hours ahead, and no charge for lifeboats or pilot launches.")
    script(ctx, query, [row(url, query.title(), f"About {query}.")])
    serve_page(ctx, url, query.title(), page)


def _long_results(ctx: CheckContext, query: str) -> None:
    """Two results for ``query`` with long URLs, each page holding a paragraph that answers it."""
    topic = query.replace(" ", "-")
    rows = []
    for i in range(2):
        url = f"https://{topic}-{i}.example.org/{_LONG_PATH}{i}"
        rows.append(row(url, f"{query.title()} {i}", f"About {query}."))
        page = f"# {query.title()}\n\n{query.capitalize()} are set by the port office, notice {i + 1}."
        serve_page(ctx, url, f"{query.title()} {i}", page)
    script(ctx, query, rows)


_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def resource_key(url: str) -> str:
    """``url`` keyed as RFC 3986 6.2.2.1-6.2.2.2 normalise it without changing the resource it names: scheme and
    host in lower case, escapes of unreserved characters decoded (%7E is ~) and the others' hex digits in upper
    case (%2f is %2F); the fragment, never sent to the server, dropped. An escaped reserved character (%2F, %26)
    stays escaped: decoding it names another resource. (Dot segments are not removed.)"""

    def escape(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in _UNRESERVED else match.group(0).upper()

    return _ESCAPE.sub(escape, url_key(url.partition("#")[0]))


@check(
    "evidence.lines_cite_results",
    "Every evidence line shown carries the URL of the search result it came from",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: every evidence line keeps its source URL, so code (not the model) can attach the "
    "filtered source links to the answer: the value's sources are exactly the URLs that gave evidence, each the "
    "result's URL as the search returned it (its query string too, and its escaped reserved characters such as "
    "%2F and %26 kept escaped: decoded, the URL names another resource). Only what RFC 3986 6.2.2 calls the same "
    "URL may differ: scheme and host case, escapes' hex case, escaped unreserved characters decoded, and the "
    "fragment. The line's layout is left open: the URL may stand before or after the passage, on its line or the "
    "next. 'Every evidence line keeps its source URL': the URL of the result whose page (or snippet) gave that "
    "line, so a query whose lines come from two pages cites each fact under the page that holds it, never under "
    "another result of the query.",
    cases=CITES,
)
async def lines_cite_results(ctx: CheckContext) -> None:
    for case in CITES:
        ctx.fresh()
        if case.params.get("longest"):
            _longest_result(ctx, case["queries"][0])
        elif case.params.get("long"):
            for query in case["queries"]:
                _long_results(ctx, query)
        if "fallback" in case.params:
            url, title, snippet = case["fallback"]
            script(ctx, case["queries"][0], [row(url, title, snippet)])
            # 404, the guide's "no usable page content": the page's own failure, which older rows already hold does
            # not fail the call (a 5xx, a service failure, may: a review found the row failing such a target)
            ctx.emu.inject("fetch", Status(404, body=b'{"error": "no usable page content"}'), times=None,
                           when=lambda body, url=url: isinstance(body, dict) and body.get("url") == url)
        if case.params.get("two_lines"):
            query = case["queries"][0]
            snippet = "Harbour pilot fees per tonne, by vessel length."  # a snippet-only pipeline still cites it
            script(ctx, query, [row(TWO_LINES_URL, "Harbour pilot fees", snippet)])
            serve_page(ctx, TWO_LINES_URL, "Harbour pilot fees", TWO_LINES_PAGE)
        for query, url in zip(case["queries"], case.params.get("bare", ()), strict=False):
            script(ctx, query, [row(url, "", "")])  # a title and a snippet, both empty
            serve_page(ctx, url, "", f"# Notices\n\n{query.capitalize()} is 06:00 at the outer anchorage.")
        for query, url in zip(case["queries"], case.params.get("exact", ()), strict=False):
            script(ctx, query, [row(url, query.title(), f"{query.capitalize()} of the port office.")])
            page = f"# {query.title()}\n\n{query.capitalize()}: boarding moves to berth 4."
            serve_page(ctx, url, query.title(), page)
        if "pages" in case.params:
            pages = case["pages"]
            script(ctx, case["queries"][0], [row(url, title, snippet) for url, title, snippet, _p, _f in pages])
            for url, title, _snippet, passage, _fact in pages:
                serve_page(ctx, url, title, f"# {title}\n\n{passage}")
        value = await _cites(ctx, case)
        if "pages" in case.params:
            _facts_cite_their_pages(value, case)
        for query, url in zip(case["queries"], case.params.get("exact", ()), strict=False):
            group = next((g for g in value.get("queries", []) if isinstance(g, dict) and g.get("query") == query), {})
            cited = [e.get("url") for e in group.get("evidence", []) if isinstance(e, dict)]
            require(resource_key(url) in {resource_key(c) for c in cited if isinstance(c, str)},
                    f"{case.name}: query {query!r} does not cite its result {url} as returned",
                    catches=case.catches, cited=cited)  # fmt: skip


def _facts_cite_their_pages(value: dict[str, Any], case: Case) -> None:
    """Each evidence line holding one page's fact cites that page (and holds no other page's fact): a line keeps the
    URL of the page its passage came from, not another result's of the same query. How many lines a query gets is
    open (with one, only that line is judged)."""
    pages = case["pages"]
    for line in (e for g in value.get("queries", []) if isinstance(g, dict) for e in g.get("evidence", [])
                 if isinstance(e, dict)):  # fmt: skip
        text, cited = str(line.get("text", "")), str(line.get("url"))
        for url, _title, _snippet, _passage, fact in pages:
            if fact in text:
                require(resource_key(cited) == resource_key(url), f"{case.name}: the line holding {fact!r} cites "
                        f"{cited}, but that fact is on {url}", catches=case.catches, line=text[:300])


async def _cites(ctx: CheckContext, case: Case) -> dict[str, Any]:
    outcome = await _evidence(ctx, list(case["queries"]), {"id": f"cites-{case.name}", "local_names": []})
    value = expect_success(outcome, f"evidence batch ({case.name})")
    await ctx.settle()
    returned = {
        str(r.get("url"))
        for record in ctx.records("search")
        for r in json.loads(record.response_body or "{}").get("results", [])
    }
    items = [
        (str(e.get("text", "")), str(e.get("url")))
        for g in value.get("queries", [])
        for e in g.get("evidence", [])
        if isinstance(e, dict)
    ]
    returned = {resource_key(url) for url in returned}  # compared as RFC 3986 6.2.2 compares URLs
    for _passage, url in items:
        require(resource_key(url) in returned, f"{case.name}: value cites {url!r}, which no search returned",
                catches=case.catches)
    # The value's sources are the links code appends to the answer: exactly those that gave evidence.
    listed = {str(s.get("url")) for s in value.get("sources", []) if isinstance(s, dict)}
    gave = {url for _passage, url in items}
    require(not listed - gave, f"{case.name}: the value's sources list {sorted(listed - gave)[:3]}, which gave no "
            "evidence", catches=case.catches)
    require(not gave - listed, f"{case.name}: the value's sources leave out {sorted(gave - listed)[:3]}, which gave "
            "evidence", catches=case.catches)
    text = outcome.text or ""
    regions = _regions(text, items)
    # A long row may show no line at all: a target's own URL limit (refusing these URLs) or a text bound too small
    # for one of them is open; what it judges is that no line is cut inside its URL. A bare row may too (its results
    # offer no relevance to rank by, so leaving them unread is open).
    # A fallback row may too: using the snippet when the page cannot be read is the target's policy.
    require(regions or case.params.get("long") or case.params.get("bare") or "fallback" in case.params,
            f"{case.name}: the evidence text shows none of the value's evidence passages", text=text[:2000])
    for region, url in regions:
        require(url in region, f"{case.name}: an evidence line carries no source URL (expected {url[:120]}): "
                f"{region.strip()[:200]!r}", catches=case.catches)
    # Every line its own URL: a URL shown fewer times than the lines it gave (one URL over a run of lines).
    for url in {u for _region, u in regions}:
        shown = sum(1 for _region, u in regions if u == url)
        require(text.count(url) >= shown, f"{case.name}: {shown} evidence lines from {url[:120]} but the URL is "
                f"shown {text.count(url)} time(s): not every line carries it", catches=case.catches)
    for shown in _URL.findall(text):
        require(resource_key(shown.rstrip(".,;:")) in returned, f"{case.name}: the text cites {shown[:200]}, which "
                "no search returned", catches=case.catches)
    return value


LOCAL = (
    Case("file-url", "file: URLs sent to the search engine",
         {"query": "file:///home/somchai/notes.txt", "leak": "notes"}),
    Case("windows-path", "drive paths sent", {"query": r"C:\Users\somchai\Desktop\budget.xlsx", "leak": "budget"}),
    Case("home-path", "~/ paths sent", {"query": "summary of ~/Documents/plan.md", "leak": "plan.md"}),
    Case("posix-path", "absolute POSIX paths sent (only ~/ and drive letters looked for)",
         {"query": "/home/somchai/budget-2026.xlsx totals", "leak": "budget-2026"}),
    Case("macos-path", "absolute POSIX paths taken for local only under /home/: a macOS home folder path (/Users/...) "
         "sent", {"query": "/Users/somchai/budget-2026.xlsx totals", "leak": "budget-2026"}),
    Case("drive-forward-slash", "drive paths written with / sent (only C:\\ looked for)",
         {"query": "C:/Users/somchai/diary.txt", "leak": "diary"}),
    Case("unc-path", "UNC share paths sent", {"query": r"\\fileserver\finance\payroll 2026.xlsx", "leak": "payroll"}),
    Case("documents-relative", "only absolute, home (~/) and drive paths taken for local: a file of the user's "
         "Documents folder, written relative to it, sent",
         {"query": "Documents/budget-2026.xlsx totals", "leak": "budget-2026"}),
    Case("desktop-backslash", "Desktop/Documents paths recognised with / only, or not at all: a Windows-style "
         "Desktop\\ path sent", {"query": "Desktop\\notes.txt", "leak": "notes.txt"}),
    # Found by an outside hunt (local paths as /home/, /Users/, ~/ and Desktop/Documents only): each sent.
    Case("root-home", "home folders taken for /home/ and /Users/ only: root's home folder (/root/...) sent",
         {"query": "/root/salary-2026.xlsx totals", "leak": "salary-2026"}),
    Case("home-backslash", "the home folder recognised as ~/ only: a Windows-style ~\\ path sent",
         {"query": "~\\notes-kept.txt", "leak": "notes-kept"}),
    Case("dot-relative", "./ paths (a file in the working folder) sent", {"query": "./minutes-q3.docx summary",
                                                                        "leak": "minutes-q3"}),
    Case("downloads-relative", "user folders taken for Desktop/Documents only: a Downloads/ file sent",
         {"query": "Downloads/payslip-march.pdf", "leak": "payslip-march"}),
    Case("file-url-upper", "file: matched case-sensitively: FILE: sent",
         {"query": "FILE:///srv/reports/cv.pdf", "leak": "cv.pdf"}),
    Case("marked-name", "names the caller marked local sent",
         {"query": "Q3 board minutes decisions", "leak": "minutes"}),
    Case("zero-width-name", "a zero-width space (U+200B, Thai's word separator) inside a marked name hiding it",
         {"query": "Q3\u200bBoard Minutes agenda", "leak": "minutes"}),
    # From an outside hunt (the third session of 2026-12-05): each sent.
    Case("home-path-after-a-word", "the query normalised (its spaces taken out) before the path rules run: a ~/ "
         "path after a word, outside Documents, sent", {"query": "summary of ~/plans-2026.txt", "leak": "plans-2026"}),
    Case("full-width-name", "marked names compared without compatibility normalisation (NFKC): the name with "
         "full-width characters sent", {"query": "\uff31\uff13 Board Minutes decisions", "leak": "minutes"}),
    Case("glued-name", "a marked name matched as a run of separate words only: the same name written as one file "
         "name sent", {"query": "Q3BoardMinutes.pdf decisions", "leak": "q3boardminutes"}),
    Case("unrelated", "control: the marked names matched the wrong way round, or any marked name refusing every "
         "query: a query naming nothing local refused", {"query": "harbour ferry timetable", "control": True}),
    Case("path-without-marked-names", "paths looked for only in a conversation whose caller marked local names: "
         "a path sent where none are marked", {"query": "/home/somchai/budget-2026.xlsx totals",
                                              "leak": "budget-2026", "names": []}),
    # From an outside hunt: the user's prompt goes with each search as ori_question (seed 001), so a prompt
    # naming a local file sends its name beside a harmless query.
    Case("prompt-names-file", "only the queries checked for local names: the user's prompt, which names a file of "
         "theirs, sent as ori_question beside a harmless query",
         {"query": "gold price today", "prompt": "Compare ~/Documents/budget-2026.xlsx with today's gold price",
          "leak": "budget-2026"}),
    Case("prompt-marked-name", "the prompt checked for paths only: a name the caller marked local sent in it",
         {"query": "harbour news today", "prompt": "Summarise the Q3 Board Minutes and today's harbour news",
          "leak": "minutes"}),
    Case("prompt-without-marked-names", "the prompt checked only where the caller marked local names: its path sent "
         "where none are marked", {"query": "gold price today", "names": [], "leak": "budget-2026",
                                   "prompt": "Compare ~/Documents/budget-2026.xlsx with today's gold price"}),
    Case("prompt-padded", "the prompt checked on its first 128 characters as written, before the whitespace collapse "
         "that decides what is sent: a path after a run of spaces sent", {
             "query": "silver price today", "leak": "budget-2026",  # a query new to the conversation (no repeat)
             "prompt": "Compare" + " " * 130 + "~/Documents/budget-2026.xlsx with today's silver price"}),
    # From an outside hunt (M2): one spelling per family of local paths was tried; each of these was sent.
    Case("parent-relative", "relative paths taken for local only as ./ (a single dot): a ../ path (a file beside "
         "the working folder) sent", {"query": "Q3 totals ../Reports/q3-budget.xlsx", "leak": "q3-budget"}),
    Case("other-drive", "drive paths recognised for C: only: a file on drive D: sent",
         {"query": r"D:\Projects\budget-2026.xlsx totals", "leak": "budget-2026"}),
    Case("external-drive", "absolute POSIX paths taken for local only under home folders: a file on a macOS "
         "external drive (/Volumes/...) sent", {"query": "totals /Volumes/Backup/budget-2026.xlsx",
                                                "leak": "budget-2026"}),
    Case("mounted-drive", "absolute POSIX paths taken for local only under home folders: a file on a Linux mounted "
         "drive (/media/...) sent", {"query": "notes /media/somchai/USB/field-notes.txt", "leak": "field-notes"}),
    # From the same hunt: spellings the reference itself sent (its path rule widened with these rows).
    Case("named-home", "the home folder recognised as ~/ only: a named user's home (~somchai/...) sent",
         {"query": "~somchai/budget-2026.xlsx totals", "leak": "budget-2026"}),
    Case("home-variable", "home folders recognised only as written out: the shell's $HOME/ sent",
         {"query": "$HOME/notes/budget-2026.txt", "leak": "budget-2026"}),
    Case("profile-variable", "home folders recognised only as written out: Windows' %USERPROFILE%\\ sent",
         {"query": r"%USERPROFILE%\salary-2026.xlsx totals", "leak": "salary-2026"}),
    Case("unc-forward-slash", "UNC share paths recognised with backslashes only: //server/share/... sent",
         {"query": "//fileserver/finance/payroll 2026.xlsx", "leak": "payroll"}),
    Case("smb-url", "only file: URLs taken for local: a network share's smb:// URL (the user's file on their NAS) sent",
         {"query": "smb://nas/finance/payroll-2026.xlsx", "leak": "payroll-2026"}),
)


@check(
    "evidence.local_refused",
    "A query with a local path, a file: URL or a caller-marked local name never reaches a search engine",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: web_search is not a fallback for the knowledge base or Desktop/Documents; user file "
    "names and contents are never sent to a search engine to 'try instead' (a path into the user's home "
    "folder is one, /home/ on Linux as /Users/ on macOS). Refusing the whole batch "
    "(any WEB_* error) or answering its other queries are both accepted. The user's prompt, which seed 001 "
    "sends beside each query as ori_question, is text sent to the search engine too: one naming a local file "
    "or a marked name never goes (the search may go without it, or the call be refused). Paths are local whether or "
    "not the caller marked any names, and a marked name is the same name in full-width characters or written "
    "as one word. A path names a user's file in whatever spelling the user's system writes it: relative (./, ../, "
    "Documents/), a home folder (~/, ~name/, $HOME/, %USERPROFILE%\\), any drive letter, a mounted or external "
    "drive (/mnt/, /media/, /Volumes/), or a network share (\\\\server\\, //server/, smb://).",
    cases=LOCAL,
)
async def local_refused(ctx: CheckContext) -> None:
    for case in LOCAL:
        # A conversation keeps what its first call marked local: a row with other names is another conversation.
        names = case.params.get("names")
        context = ({"id": "conversation-local", "local_names": ["Q3 Board Minutes"]} if names is None
                   else {"id": f"conversation-{case.name}", "local_names": names})
        ctx.fresh()
        if case.params.get("control"):
            outcome = await _evidence(ctx, case["query"], context)
            await ctx.settle()
            sent = [str(r.json.get("query", "")) for r in ctx.records("search") if isinstance(r.json, dict)]
            require(outcome.error_code is None and case["query"] in sent,
                    f"{case.name}: {case['query']!r} names nothing local but was refused or not searched",
                    catches=case.catches, answer=outcome.brief())
            continue
        if "prompt" in case.params:  # a harmless query; no request may carry the prompt's local name
            outcome = await _evidence(ctx, case["query"], context, case["prompt"])
            await ctx.settle()
            bodies = [json.dumps(r.json, ensure_ascii=False) for r in ctx.records("search") if r.json is not None]
            leaked = [b for b in bodies if case["leak"] in b.casefold()]
            require(not leaked, f"{case.name}: {len(leaked)} search request(s) carried the prompt's local name "
                    f"{case['leak']!r}", catches=case.catches)
            if not outcome.ok:
                expect_error(outcome, case.name)
            continue
        outcome = await _evidence(ctx, ["rate limits", case["query"]], context)
        await ctx.settle()
        sent = [str(r.json.get("query", "")) for r in ctx.records("search") if isinstance(r.json, dict)]
        leaked = [q for q in sent if case["leak"] in q.casefold()]
        shown = " | ".join(leaked)[:200]
        require(not leaked, f"{case.name}: a search was sent carrying the local query: {shown!r}", catches=case.catches)
        if not outcome.ok:
            expect_error(outcome, case.name)


# results-without-passage: a result whose title, snippet and page say nothing of the query it answers.
UNRELATED = ("https://harbour-office.example.org/notices", "Harbour office notices", "Notices of the harbour office.",
             "# Harbour office notices\n\nThe harbour office opens at nine and closes at five on weekdays.")
RETRIES = (
    Case("same", "the very same query fired again", {"again": "zzqx unknowable"}),
    Case("case", "a change of case taken for a new query", {"again": "ZZQX Unknowable"}),
    Case("spacing", "a change of spacing taken for a new query", {"again": "  zzqx   unknowable "}),
    Case(
        "earlier",
        "only the last attempt remembered: a query that found nothing two attempts ago fired again",
        {"again": "zzqx unknowable", "between": "qqzx unfindable"},
    ),
    Case(
        "in-a-batch",
        "only a one-query call checked: the same query fired again inside a list",
        {"again": ["harbour ferry times", "Zzqx Unknowable"]},
    ),
    Case(
        "zero-width",
        "queries compared without removing format characters: a zero-width space (U+200B, a Thai word "
        "separator), a BOM or a soft hyphen taken for a change",
        {"again": "<U+FEFF>zzqx<U+200B> unkno<U+00AD>wable"},  # <U+XXXX>: that character, written visibly here
    ),
    # From an outside hunt: compared without compatibility normalisation (NFKC), full-width letters differ.
    Case("full-width", "queries compared without compatibility normalisation (NFKC): the same query in full-width "
         "letters taken for a new one", {"again": "ｚｚｑｘ ｕｎｋｎｏｗａｂｌｅ"}),
    Case(
        "less-specific",
        "a less specific retry (its words all in the query that found nothing) taken for a new query",
        {"again": "unknowable"},
    ),
    Case(
        "invented-fact",
        "a retry that only adds a number found neither in the user's question nor in earlier evidence "
        "taken for a better query",
        {"again": "zzqx unknowable 2031", "question": "What is zzqx unknowable?"},
    ),
    Case("reordered", "only fewer words taken for no retry: the same words in another order taken for a new query",
         {"again": "unknowable zzqx"}),
    Case("joined", "queries compared word by word: a removed space (a change of whitespace only) taken for a new "
         "query", {"again": "zzqxunknowable"}),
    Case(
        "zero-width-reordered",
        "a zero-width space (U+200B, Thai's word separator) taken for part of a word: the same words, reordered "
        "and separated by one, taken for a new query",
        {"again": "unknowable<U+200B>zzqx"},
    ),
    Case(
        "plain-word",
        "every added word taken for an invented fact: a retry that adds a plain word (the subject written out, "
        "as the seed asks) refused",
        {"again": "zzqx unknowable harbour", "question": "What is zzqx unknowable?", "accept": True},
    ),
    Case(
        "question-fact",
        "every added detail refused, also one the user's question states: the retry the seed asks for "
        "(subject, place or time added) made impossible",
        {"again": "zzqx unknowable 2026", "question": "What was zzqx unknowable in 2026?", "accept": True},
    ),
    Case("reordered-second", "only the first attempt's words remembered: the second attempt's words, reordered, "
         "taken for a new query", {"again": "unfindable qqzx", "between": "qqzx unfindable"}),
    # From an outside hunt: a retry memory of the last few dead ends only ("not again right away").
    Case("after-six-others", "only the last few queries that found nothing remembered (a window): the first fired "
         "again after six other queries of the conversation found nothing",
         {"again": "zzqx unknowable", "between": ["qqzx unfindable", "vvqz nowhere", "wwxy absent", "yyqz missing",
                                                  "xxkv unseen", "kkqj unheard"]}),
    Case(
        "question-name",
        "a name the user's question gives taken for an invented fact, or names compared without the question's words",
        {"again": "zzqx unknowable Bangkok", "question": "Is zzqx unknowable sold in Bangkok?", "accept": True},
    ),
    Case(
        "thai-fact",
        "a zero-width space (Thai's word separator) in the user's question removed instead of read as a space: a "
        "year the question states right after a Thai word taken for an invented fact",
        {"again": "zzqx unknowable 2031", "question": "zzqx unknowable ช่วงปลาย<U+200B>2031 เป็นอย่างไร",
         "accept": True},
    ),
    Case(
        "name-in-thai-run",
        "a name the question gives only standing alone: a Latin name written inside a run of Thai (no spaces, as "
        "Thai is written) taken for an invented fact",
        {"again": "zzqx unknowable Bangkok", "question": "zzqx unknowable ขายที่Bangkokไหม", "accept": True},
    ),
    Case(
        "grouped-number",
        "a number written with a thousands separator matched piece by piece (12 and 031) instead of whole: an "
        "invented 12,031 taken for plain words",
        {"again": "zzqx unknowable 12,031", "question": "What is zzqx unknowable?"},
    ),
    # From an outside hunt: a fact counted as known when it stands inside a longer number of the question.
    Case(
        "fact-inside-a-number",
        "an added fact taken for known when the question holds it only inside another number (2031 in catalogue "
        "120315): an invented year accepted",
        {"again": "zzqx unknowable 2031", "question": "What is zzqx unknowable, catalogue 120315?"},
    ),
    Case(
        "invented-after-other",
        "the retry measured against the longest earlier attempt instead of the one it extends: an invented number "
        "added to one attempt passed because another, unrelated attempt was longer",
        {"again": "zzqx unknowable 2031", "question": "What is zzqx unknowable?",
         "between": "qqzx unfindable vvqz wwxy"},
    ),
    # From an outside hunt: the conversation's earlier queries counted as its evidence.
    Case("failed-query-fact", "an earlier query that found nothing taken for evidence: a retry adding the number "
         "that query asked about (no call found it) accepted",
         {"again": "zzqx unknowable 2031", "question": "What is zzqx unknowable?", "between": "qqzx 2031"}),
    Case(
        "question-fact-with-evidence",
        "the question and earlier evidence run together: a year the question ends with (no punctuation after it) "
        "not found once the conversation has evidence",
        {"again": "zzqx unknowable 2026", "question": "What was zzqx unknowable in 2026",
         "evidence": "zzqx harbour dues", "accept": True},
    ),
    Case(
        "evidence-fact",
        "earlier evidence forgotten, or its words run together: a retry adding a number an earlier call of the "
        "conversation found as evidence refused as invented",
        {"again": "zzqx unknowable 2031", "question": "What is zzqx unknowable?", "evidence": "zzqx harbour dues",
         "accept": True},
    ),
    Case(
        "batch-needs-retry",
        "only a call that found nothing at all remembered: a query that said [needs_retry] inside a batch whose "
        "other query found evidence fired again",
        {"again": "zzqx unknowable", "first": ["harbour pilot roster", "zzqx unknowable"]},
    ),
    # From an outside hunt (J): the retry memory cleared by progress ("the agent has moved on").
    Case("after-evidence", "the retry memory cleared once a call finds evidence: the query that said [needs_retry] "
         "fired again after a call in between (another query) found evidence",
         {"again": "zzqx unknowable", "found_between": "harbour pilot roster"}),
    # From a hunt (S3-2): every row's dead end was a search that found nothing at all, so a retry memory of
    # zero-result searches only (a query whose results were read and gave no usable passage says [needs_retry] but
    # is not remembered) certified. Here the first search returns a result whose page and snippet hold nothing of
    # the query.
    Case("results-without-passage", "only a search that returned no result remembered as a dead end: the query "
         "whose results gave no usable passage (its [needs_retry] said) fired again unchanged",
         {"again": "zzqx unknowable", "results": (UNRELATED,)}),
    Case(
        "tab-inside",
        "only the ordinary space (U+0020) ignored when queries are compared: a tab put inside a word (a change of "
        "whitespace only) taken for a new query",
        {"again": "zz<U+0009>qx unknowable"},
    ),
    # From a hunt (T4-1): every row's first call was a dead end, so a pipeline refusing EVERY earlier query of the
    # conversation when asked again (each query of a call added to the repeats it refuses, or remembered as an
    # attempt that found nothing) certified. Here the first call finds evidence.
    Case("found-again", "every earlier query of the conversation refused, also one that found evidence: a query "
         "asked again (data that changes over time: news, prices) refused or left unsearched",
         {"first_found": "harbour pilot roster", "again": "harbour pilot roster", "accept": True}),
    Case("found-less-specific", "the dead-end rules applied to queries that found evidence: a less specific query "
         "(all its words in one that found evidence) refused as no retry",
         {"first_found": "harbour pilot roster", "again": "pilot roster", "accept": True}),
)
_SPACE = re.compile(r"\s+")


def _spelled(query: Any) -> Any:
    """``query`` with each ``<U+XXXX>`` marker replaced by that character (a list: each query)."""
    if isinstance(query, list):
        return [_spelled(q) for q in query]
    return re.sub(r"<U\+([0-9A-F]{4})>", lambda m: chr(int(m.group(1), 16)), query)


def _same(a: str, b: str) -> bool:
    return _SPACE.sub("", a).casefold() == _SPACE.sub("", b).casefold()


DUES_URL = "https://harbour-dues.example.org/zzqx"
DUES_FACT = "Zzqx harbour dues rise to 40 baht per tonne in 2031, the port authority says."
# batch-needs-retry: the batch's other query finds this (so the call as a whole found evidence); after-evidence:
# the call between the two asks finds it.
ROSTER_URL = "https://pilot-roster.example.org/week"
ROSTER_FACT = "The harbour pilot roster for this week lists four pilots on the night watch."


async def _found(ctx: CheckContext, query: str, context: dict[str, Any], what: str) -> None:
    """An earlier call of the conversation that finds evidence: one result whose page states DUES_FACT."""
    script(ctx, query, [row(DUES_URL, "Zzqx harbour dues", DUES_FACT)])  # a snippet fallback shows it too
    serve_page(ctx, DUES_URL, "Harbour dues",
               "\n\n".join(["# Harbour dues", DUES_FACT, "Contact the harbour office for exemptions."]))
    value = expect_success(await _evidence(ctx, query, context), f"{what}: the earlier call")
    lines = " ".join(str(e.get("text", "")) for g in value.get("queries", []) for e in g.get("evidence", [])
                     if isinstance(e, dict))
    require("2031" in lines, f"{what}: the earlier call's evidence does not show its page's fact", evidence=lines[:500])


def _roster(ctx: CheckContext, query: str) -> None:
    """``query`` finds one result, whose page states ROSTER_FACT."""
    script(ctx, query, [row(ROSTER_URL, query.title(), f"{query.capitalize()}.")])
    serve_page(ctx, ROSTER_URL, query.title(), f"# {query.title()}\n\n{ROSTER_FACT}")


async def _roster_found(
    ctx: CheckContext, query: str, context: dict[str, Any], what: str, which: str = "the call in between"
) -> None:
    """A call of the conversation (``which``) that finds evidence (ROSTER_FACT's page) for ``query``."""
    _roster(ctx, query)
    value = expect_success(await _evidence(ctx, query, context), f"{what}: {which}")
    lines = [e for g in value.get("queries", []) if isinstance(g, dict) for e in g.get("evidence", [])]
    require(lines, f"{what}: {which} ({query!r}) found no evidence", text=str(value)[:500])


def _refused(outcome: CallOutcome, what: str, catches: str) -> None:
    """A repeated dead end refused: a WEB_* tool error, or an answer that says [needs_retry] again and holds no
    evidence. Seed 002 forbids firing the query again ("ห้ามยิง query เดิมซ้ำ", checked apart on the wire); how the
    tool says no is open (from a hunt, T3-1: a third party's tool answered the repeat [needs_retry], unsearched).

    From a review (R1-F2): a [needs_retry] answer with no structured evidence whose model-visible text showed the
    conversation's earlier evidence lines, URLs and all, passed as a refusal. Seed 002 keeps a source URL on every
    evidence line, and no query of this check holds a URL, so a refusal answered as a result holds no "://" in its
    text at all: any URL in it, whichever page and however spelled or laid out, shows a source. An error's message
    is not read so: it carries no evidence, and may name a help page."""
    if outcome.error_code is not None or outcome.cancelled:
        expect_error(outcome, what)
        return
    shown = re.findall(r"[\w+.-]*://[^\s)\]>\"']*", outcome.text or "")
    require(not shown, f"{what}: the refusal's text shows {len(shown)} source URL(s) ({shown[:1]}), evidence lines "
            "the agent reads as found", catches=catches, text=(outcome.text or "")[:300])
    value = expect_success(outcome, what, catches)
    expect_schema(value, "evidence_search.output", what)
    lines = [e for g in value["queries"] if isinstance(g, dict) for e in g.get("evidence", [])]
    require(not lines and value["needs_retry"] is True and "[needs_retry]" in (outcome.text or ""),
            f"{what}: expected a refusal (a WEB_* error, or [needs_retry] again with no evidence), got a result",
            catches=catches, text=(outcome.text or "")[:300])  # fmt: skip


def _lines(outcome: CallOutcome) -> list[Any]:
    """The evidence lines of an answer's value (none for an error)."""
    groups = (outcome.value or {}).get("queries", []) if outcome.ok else []
    return [e for g in groups if isinstance(g, dict) for e in g.get("evidence", [])]


def _came_back(outcome: CallOutcome, searched: bool) -> str:
    """What a call that should have been answered came back as, for a message."""
    if not outcome.ok:
        return outcome.brief()
    return f"{'searched' if searched else 'not searched'}, with {len(_lines(outcome))} evidence line(s)"


async def _dead_end(ctx: CheckContext, case: Case, context: dict[str, Any]) -> None:
    """The case's first call: its query (``first``, or zzqx unknowable) says [needs_retry]."""
    asked = case.params.get("first", "zzqx unknowable")
    if "results" in case.params:  # the first search finds results (once), none with a usable passage
        script(ctx, asked, [row(url, title, snippet) for url, title, snippet, _page in case["results"]])
        for url, title, _snippet, page in case["results"]:
            serve_page(ctx, url, title, page)
    if isinstance(asked, list):  # a batch whose other query finds evidence: one result, its page answering
        _roster(ctx, asked[0])
    first = await _evidence(ctx, asked, context)
    require("[needs_retry]" in (first.text or ""), f"{case.name}: no [needs_retry] for a query that found nothing")


@check(
    "evidence.retry_refused",
    "After [needs_retry], the same query (ignoring case and spacing) is refused in the same conversation",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: after [needs_retry] the agent must make the query more specific (subject, place, time); "
    "firing the same query again (also one that said [needs_retry] inside a batch whose other queries found "
    "evidence, and after a later call found evidence: progress elsewhere does not make it new), or changing only "
    "whitespace (any whitespace character, a tab as well as a space; invisible separators included), is not a "
    "retry, nor is a less specific one or the same words in another order (whatever made the query say "
    "[needs_retry]: a search that found nothing, or results that gave no usable passage), and "
    "adding facts that had no evidence before is no good retry. Adding the subject, place or time the user's "
    "question gives, a plain word, or a fact earlier evidence of the conversation showed is the retry the seed "
    "asks for. How the tool refuses a repeat is open: a WEB_* error, or an answer that says [needs_retry] again "
    "and holds no evidence, as long as the engine is not asked again; its text shows no evidence line either "
    "(\"ผลลัพธ์ทุก evidence line รักษา source URL ไว้\": no URL, as no query of the check holds one). The memory is "
    "the conversation's: the same query is searched in another conversation. The refusal is scoped to a query that "
    "said [needs_retry] (\"ถ้าผลขึ้น [needs_retry] agent ต้องปรับ query ให้เจาะจงขึ้น … ห้ามยิง query เดิมซ้ำ\"): a query "
    "that found evidence may be asked again (web_search serves \"ข้อมูลที่เปลี่ยนตามเวลา เช่นข่าวล่าสุด ราคา\", "
    "data that changes over time), and one with fewer of its words is no retry of a dead end: both are searched "
    "again, or answered with the evidence the tool kept (nothing asks a found query to be searched again).",
    cases=RETRIES,
)
async def retry_refused(ctx: CheckContext) -> None:
    for case in RETRIES:
        context: dict[str, Any] = {"id": f"conversation-{case.name}", "local_names": []}
        if "question" in case.params:
            context["question"] = _spelled(case["question"])
        if "evidence" in case.params:
            await _found(ctx, case["evidence"], context, case.name)
        if "first_found" in case.params:  # the first call finds evidence: asking again is no retry of a dead end
            await _roster_found(ctx, case["first_found"], context, case.name, "the first call")
        else:
            await _dead_end(ctx, case, context)
        between = case.params.get("between", [])
        for other in [between] if isinstance(between, str) else between:  # other dead ends, one call each
            other_first = await _evidence(ctx, other, context)
            require("[needs_retry]" in (other_first.text or ""), f"{case.name}: no [needs_retry] for {other!r}")
        if "found_between" in case.params:  # a call in between finds evidence: no reason to forget the dead end
            await _roster_found(ctx, case["found_between"], context, case.name)
        if "first_found" in case.params:  # the engine answers it with evidence again (a fact of the day)
            _roster(ctx, case["again"])
        await ctx.settle()
        searches = len(ctx.records("search"))
        again = await _evidence(ctx, _spelled(case["again"]), context)
        await ctx.settle()
        later = [str(r.json.get("query", "")) for r in ctx.records("search")[searches:] if isinstance(r.json, dict)]
        if case.params.get("accept"):
            asked = any(_same(q, case["again"]) for q in later)
            # From a review (R1-F1): a tool answering a query that found evidence again from the evidence it kept
            # (no search) failed found-again. Seed 002 forbids repeating a dead end only; nothing asks that a query
            # that found evidence be searched again, so its evidence answered again is no refusal either.
            require(again.ok and (asked or ("first_found" in case.params and bool(_lines(again)))),
                    f"{case.name}: the retry {case['again']!r} came back {_came_back(again, asked)}",
                    catches=case.catches, text=(again.text or "")[:300])  # fmt: skip
            continue
        repeated = [q for q in later if _same(q, "zzqx unknowable")]
        require(not repeated, f"{case.name}: the repeated query was searched again", catches=case.catches)
        if isinstance(case["again"], str):  # a batch may answer its new queries (seed 002 forbids only the repeat)
            searched = (later or [""])[0]
            require(not later, f"{case.name}: the dead end was searched again as {searched!r}, which is no real retry",
                    catches=case.catches)
            _refused(again, f"{case.name}: repeated query {case['again']!r}", case.catches)
        # From a review (R1-F3): a refusal may be a [needs_retry] answer, so a retry memory shared by every
        # conversation answered this with no error and passed. The other conversation's query must reach the engine.
        await ctx.settle()
        searches = len(ctx.records("search"))
        other = await _evidence(ctx, "zzqx unknowable", {"id": f"other-{case.name}", "local_names": []})
        await ctx.settle()
        sent = [str(r.json.get("query", "")) for r in ctx.records("search")[searches:] if isinstance(r.json, dict)]
        fresh = any(_same(q, "zzqx unknowable") for q in sent)
        require(other.ok and fresh, f"{case.name}: another conversation's first 'zzqx unknowable' came back "
                f"{_came_back(other, fresh)}: the retry memory was shared across conversations",
                text=(other.text or "")[:300])  # fmt: skip


UNSAFE = (
    Case("loopback", "search results cited or fetched without URL validation", {"url": "http://127.0.0.1/harbour-fees"}),
    Case("private", "RFC 1918 literals left in the candidates", {"url": "http://10.0.0.5/harbour-fees"}),
    Case("metadata", "the cloud metadata address left in", {"url": "http://169.254.169.254/latest/meta-data/"}),
    Case("mapped-metadata", "IPv6 literals not unwrapped", {"url": "http://[::ffff:169.254.169.254]/harbour"}),
    Case("localhost", "the name localhost taken for a public host", {"url": "http://localhost:8080/harbour-fees"}),
    Case("numeric-host", "numeric host spellings (2130706433 is 127.0.0.1) taken for names",
         {"url": "http://2130706433/harbour-fees"}),
    Case("hex-host", "hex host spellings (0x7f.1 is 127.0.0.1) taken for names, or the guard crashing on them",
         {"url": "http://0x7f.1/harbour-fees"}),
    Case("octal-host", "octal host spellings (0177.1 is 127.0.0.1) taken for names, or the guard crashing on them",
         {"url": "http://0177.1/harbour-fees"}),
    Case("localhost-subdomain", "names under .localhost (always loopback) taken for public names",
         {"url": "http://harbour.localhost/fees"}),
    Case("file-scheme", "schemes other than http(s) kept", {"url": "file:///etc/harbour-fees"}),
    Case("javascript-scheme", "javascript: results kept", {"url": "javascript:alert('harbour-fees')"}),
    # From a hunt (P-C3): a guard with a hand list of non-public IPv4 ranges that leaves out 0.0.0.0/8 sent
    # 0.0.0.0 to the Fetch API; a connection to 0.0.0.0 reaches this machine's own services (Linux, macOS).
    Case("unspecified", "non-public IPv4 judged by a hand list of private ranges without 0.0.0.0/8: the "
         "unspecified address 0.0.0.0 (a connection to it reaches this machine) kept",
         {"url": "http://0.0.0.0/harbour-fees"}),
)
# Literal addresses outside public space that a guard reading Python's address flags, or judging IPv4 only,
# takes for public (a table of its own, in a query of its own: UNSAFE fills the two queries it is spread over).
NON_PUBLIC = (
    Case("ipv6-loopback", "IPv6 literals judged only when they carry an IPv4 address: [::1] (localhost) kept",
         {"url": "http://[::1]/harbour-fees"}),
    Case("ipv6-link-local", "the same: link-local [fe80::a9fe:a9fe] (the IPv6 spelling of 169.254.169.254) kept",
         {"url": "http://[fe80::a9fe:a9fe]/latest/meta-data/"}),
    Case("ipv6-unique-local", "only loopback and link-local IPv6 (and the metadata table) refused: a unique "
         "local address (fc00::/7) kept", {"url": "http://[fd12:3456:789a::5]/harbour-fees"}),
    Case("cgnat", "literals judged by Python's is_private, is_loopback and is_link_local, with or without the "
         "cloud metadata table: the shared address space 100.64.0.0/10 (CGNAT) kept",
         {"url": "http://100.64.0.9/harbour-fees"}),
    Case("cgnat-metadata", "the same flags and no metadata table: Alibaba Cloud's metadata address "
         "100.100.100.200 (in CGNAT) kept", {"url": "http://100.100.100.200/latest/meta-data/"}),
    Case("oracle-metadata", "a hand list of private ranges with 169.254.169.254 as the only metadata address: "
         "192.0.0.0/24 (Oracle Cloud's metadata address 192.0.0.192, which Python 3.11 calls global) kept",
         {"url": "http://192.0.0.192/latest/meta-data/"}),
    Case("rfc1918-172", "RFC 1918 read as 10.0.0.0/8 only: 172.16.0.0/12 kept", {"url": "http://172.20.0.5/harbour"}),
    Case("rfc1918-192-168", "RFC 1918 read as 10.0.0.0/8 only: 192.168.0.0/16 kept",
         {"url": "http://192.168.1.20/harbour-fees"}),
)
# From an outside hunt (J): names that can only mean this machine or a private network, refused by name (the
# pipeline hands result URLs to the Fetch API, so no lookup of its own judges them): the metadata server's name
# (169.254.169.254 on the cloud's own network), .internal (set aside for private use: never a public name) and
# .local (mDNS: the local link), each also in its absolute form (one final dot: the same name).
INTERNAL_NAMES = (
    Case("localhost-absolute", "blocked names compared with the host as written, its final dot kept: "
         "harbour.localhost. (the absolute form of a .localhost name, loopback) taken for a public name",
         {"url": "http://harbour.localhost./dues"}),
    Case("metadata-name-absolute", "blocked names compared with the host as written (its final dot kept), or the "
         "metadata name not blocked at all: metadata.google.internal. (the cloud metadata server) kept",
         {"url": "http://metadata.google.internal./computeMetadata/v1/instance/"}),
    Case("metadata-name", "only localhost blocked by name: metadata.google.internal, the name of the cloud metadata "
         "server (169.254.169.254 on the cloud's private network), kept",
         {"url": "http://metadata.google.internal/computeMetadata/v1/"}),
    Case("internal-name", "only localhost blocked by name: a .internal host (the top-level name set aside for "
         "private networks, never a public name) kept", {"url": "http://billing.corp.internal/harbour-fees"}),
    Case("local-name", "only localhost blocked by name: a .local host (mDNS, a name on the local link only) kept",
         {"url": "http://printer.local/harbour-fees"}),
    # From a review of hunt J's rows: names compared as written (letter case kept, as a Go url.Hostname() gives
    # them), and an IPv4 address in absolute form read as a name.
    Case("upper-case-localhost", "blocked names compared with the host as written, its letter case kept: "
         "Harbour.LOCALHOST (a .localhost name, loopback) taken for a public name",
         {"url": "http://Harbour.LOCALHOST/berths"}),
    Case("upper-case-metadata-absolute", "blocked names compared as written, letter case and final dot kept: "
         "Metadata.Google.Internal. (the cloud metadata server) kept",
         {"url": "http://Metadata.Google.Internal./computeMetadata/v1/project/"}),
    Case("loopback-absolute", "an IPv4 address with a final dot taken for a name (no address check, and its "
         "numeric last label excused by the dot): 127.0.0.1. (URL parsers read loopback) kept",
         {"url": "http://127.0.0.1./harbour-dues"}),
    Case("private-absolute", "the same: 10.0.0.5. (a private address in absolute form) kept",
         {"url": "http://10.0.0.5./harbour-dues"}),
)
# From an outside hunt (J): IPv6 literals that carry a loopback or private IPv4 address (a translator or relay
# delivers to it), and site-local fec0::/10 (IPv6's old private-network space), all 'global' to Python 3.11's
# is_global: each judged as the IPv4 address it carries, or refused as private.
WRAPPED = (
    Case("nat64-loopback", "literals judged by Python's is_global (and the metadata table): NAT64 of loopback "
         "[64:ff9b::7f00:1] is 'global', kept", {"url": "http://[64:ff9b::7f00:1]/harbour-fees"}),
    Case("local-use-nat64", "the same: local-use NAT64 (64:ff9b:1::/48) of 10.0.0.7 kept",
         {"url": "http://[64:ff9b:1::a00:7]/harbour-fees"}),
    Case("6to4-private", "the same: 6to4 of 10.0.0.7 [2002:a00:7::1] kept", {"url": "http://[2002:a00:7::1]/harbour"}),
    Case("translated-private", "the same: the IPv4-translated form ::ffff:0:0:0/96 of 10.0.0.7 kept",
         {"url": "http://[::ffff:0:a00:7]/harbour-fees"}),
    Case("compatible-private", "the same: the IPv4-compatible form ::/96 of 10.0.0.7 [::a00:7] kept",
         {"url": "http://[::a00:7]/harbour-fees"}),
    Case("site-local", "the same: site-local [fec0::7] (fec0::/10, IPv6's former private-network space) kept",
         {"url": "http://[fec0::7]/harbour-fees"}),
)
# From a hunt (P-C2): result URLs a guard reads otherwise than the parser that fetches them. httpx and the URL
# Standard (a browser's, a Fetch API's parser) map the ideographic and fullwidth full stops to '.', the URL
# Standard decodes escapes in a host and reads any run of slashes after http: as the start of the host, so each
# of these names a loopback, private or metadata address; a guard reading the host with urllib.parse (no UTS 46
# mapping), or keeping a URL httpx reads with no host ("nothing to judge"), sent them to the Fetch API. Each has a
# path of its own (a URL the pipeline re-spells is not mistaken for another row's).
SPELLED = (
    Case("ideographic-dots", "the host read without UTS 46 mapping (urllib.parse): 127\u30020\u30020\u30021 "
         "(ideographic full stops, 127.0.0.1 to httpx and the URL Standard) taken for a name and kept",
         {"url": "http://127\u30020\u30020\u30021/harbour-tolls"}),
    Case("fullwidth-dots", "the same: 169\uff0e254\uff0e169\uff0e254 (fullwidth full stops: the cloud metadata "
         "address) kept", {"url": "http://169\uff0e254\uff0e169\uff0e254/latest/user-data/"}),
    Case("escaped-host", "the host judged with its escapes undecoded: 127.0.0.%31 (127.0.0.1 to the URL Standard) "
         "kept", {"url": "http://127.0.0.%31/harbour-berths"}),
    Case("no-slashes", "a URL with no host as httpx reads it kept ('nothing to judge'): http:127.0.0.1/... is "
         "http://127.0.0.1/... to the URL Standard", {"url": "http:127.0.0.1/harbour-pilots"}),
    Case("one-slash", "the same: http:/10.0.0.5/... (a private address to the URL Standard) kept",
         {"url": "http:/10.0.0.5/harbour-moorings"}),
    Case("three-slashes", "the same: http:///169.254.169.254/... (the cloud metadata address to the URL Standard) "
         "kept", {"url": "http:///169.254.169.254/latest/meta-data/iam/"}),
)
# Search results whose URL a guard may refuse or keep (seed 002 fixes no URL syntax), but whose
# validation must not raise: one hostile result is dropped or kept, never the end of the whole call. (Kept, a URL
# naming a non-public host to the parser that fetches it is still never fetched or cited: SPELLED judges that.)
MALFORMED = tuple(
    Case(name, f"the guard raises on {what} instead of dropping or keeping that one result: the call fails",
         {"url": url})
    for name, what, url in (
        ("no-host", "a URL without a host", "http://:8080/harbour-fees"),
        ("percent-host", "a percent sign in the host", "http://harbour%2Eauthority.example.com/fees"),
        ("numeric-last-label", "a host whose last label is numeric", "http://harbour.example.123/fees"),
        ("empty-hex-part", "a host with an empty hex part (0x)", "http://0x.1/harbour-fees"),
        ("invalid-label", "a host label starting with a hyphen", "http://-harbour.example.com/fees"),
        ("single-label", "a single-label host", "http://intranet/harbour-fees"),
        ("over-long", "a URL longer than the guard allows", "https://harbour.example.com/" + "a" * 3000),
        ("bad-port", "a port that is not a number", "http://harbour.example.com:8o/fees"),
        ("port-zero", "port 0", "http://harbour.example.com:0/fees"),
        ("credentials", "credentials in the URL", "http://user:pw@harbour.example.com/fees"),
        ("zone-id-non-ascii", "a non-ASCII IPv6 zone id", "http://[fe80::1%25\u00e9]/harbour-fees"),
        ("backslash", "a backslash", "http://harbour.example.com/a\\b"),
        ("line-separator", "a line separator (U+2028)", "http://harbour.example.com/a\u2028b"),
        ("absolute-name", "a host in absolute form (a trailing dot)", "https://harbour.example.com./fees"),
    )
)
ONLY_UNSAFE = Case(
    "only-unsafe",
    "[needs_retry] said only when a search returned nothing, not when every result was dropped",
    {"query": "harbour mooring deposits", "urls": tuple(f"http://10.0.0.{i}/deposits" for i in range(3))},
)
# Seed 002's pipeline validates the URLs before it ranks and picks pages: a query's unsafe results, however well
# they match, never take the page slots its safe results need (a table of its own, run in a call of its own).
VALIDATE_FIRST = (
    Case(
        "validated-before-picked",
        "results validated only after the pages are picked: a query's unsafe results, which match best, take its "
        "page slots and are then dropped, so its safe results are never read and it keeps no source",
        {"query": "harbour pilot fees", "other": "harbour tug fees",
         "unsafe": tuple(f"http://10.0.0.{i}/harbour-pilot-fees" for i in range(1, 5)),
         "safe": tuple(f"https://pilots{i}-fees.com/fees" for i in range(4))},
        family=ORDER,
    ),
)
SAFE_RESULT = "https://harbour-authority.example.com/fees"
SAFE_ROW = Case("safe", "control: a public result", {"url": SAFE_RESULT})
RESULTS_SEEN = 8  # results per query the reference reads


def _spread(ctx: CheckContext, topics: tuple[str, ...], rows: Sequence[Case]) -> list[str]:
    """Script one query per topic, answering the next RESULTS_SEEN of ``rows``; the queries asked."""
    queries = [f"harbour {topic} fees" for topic in topics]
    for index, asked in enumerate(queries):
        words = f"{asked} {asked}"  # the unsafe rows match the query better than the safe one
        chunk = rows[index * RESULTS_SEEN:(index + 1) * RESULTS_SEEN]
        script(ctx, asked, [row(c["url"], f"{words} {c.name}", f"All about {words} ({c.name}).") for c in chunk])
    return queries


@check(
    "evidence.unsafe_dropped",
    "A search result whose URL fails validation is neither fetched nor cited, not even by its snippet",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: every URL passes host/IP validation before it is fetched and connections go to validated "
    "public IPs only, so a search result never leads the tool to localhost or a private network (IPv4 or "
    "IPv6 literals alike; the shared CGNAT space and cloud metadata addresses are no public IPs either, and an IPv6 "
    "literal carrying a loopback or private IPv4 address (NAT64, 6to4, IPv4-translated or -compatible) is that "
    "address; site-local fec0::/10 is private too). Names that only ever mean this machine or a private network are "
    "refused as well, in their absolute form (a final dot) too: localhost and .localhost, the cloud metadata server's "
    "name (metadata.google.internal), .internal (set aside for private use) and .local (the local link's mDNS); code "
    "attaches only the filtered source links, so a result that failed validation is no evidence either (its "
    "snippet is no fallback), and a query left with no evidence says [needs_retry]. Validation filters the "
    "results: a malformed URL (no seed fixes URL syntax) may be dropped or kept, but it never ends the whole call. "
    "Validation comes before ranking and source selection ('URL/IP/redirect validation -> code-only relevance "
    "ranking -> source diversity selection -> fetch selected pages'), so a query whose unsafe results match best "
    "still keeps a source among its safe ones (a batch keeps at least one source per query when fitting). The "
    "unspecified address 0.0.0.0 (a connection to it reaches this machine) is no public IP either. The host "
    "validated is the host the URL names to the parser that fetches it: httpx and the URL Standard (a browser's, a "
    "Fetch API's parser) map ideographic and fullwidth full stops to '.', and the URL Standard decodes escapes in a "
    "host and reads any run of slashes after http: as the start of the host, so a URL naming a non-public address "
    "that way (127\u30020\u30020\u30021, 127.0.0.%31, http:127.0.0.1/...) is neither fetched nor cited, however the "
    "guard's own parser reads it (a name; or no host at all, and then it passed no host validation: a malformed "
    "URL is kept only if it names no such host).",
    cases=(*UNSAFE, *NON_PUBLIC, *INTERNAL_NAMES, *WRAPPED, *SPELLED, *MALFORMED, ONLY_UNSAFE, *VALIDATE_FIRST),
)
async def unsafe_dropped(ctx: CheckContext) -> None:
    # The reference reads 8 results per query, so the rows are spread over queries of 8 (a tool reading
    # fewer leaves some unseen, which fails nothing); the malformed ones, and the internal names with the wrapped
    # literals, in calls of their own.
    queries = _spread(ctx, ("mooring", "pilot"), [*UNSAFE, SAFE_ROW])
    queries += _spread(ctx, ("dock",), NON_PUBLIC)  # four queries in all with ``only``: seed 002's cap
    only = ONLY_UNSAFE["query"]  # every result unsafe: no evidence, so the text must say [needs_retry]
    script(ctx, only, [row(url, f"{only} {i}", f"All about {only}.") for i, url in enumerate(ONLY_UNSAFE["urls"])])
    malformed = _spread(ctx, ("berth", "crane"), MALFORMED)
    expect_success(await _evidence(ctx, malformed, {"id": "malformed", "local_names": []}), "malformed results")
    # The internal names, wrapped literals and spelled hosts in a call of their own (the main one has seed 002's
    # four queries).
    named = _spread(ctx, ("quay", "wharf"), INTERNAL_NAMES) + _spread(ctx, ("slip",), WRAPPED)
    named += _spread(ctx, ("jetty",), SPELLED)
    named_outcome = await _evidence(ctx, named, {"id": "unsafe-named", "local_names": []})
    named_value = expect_success(named_outcome, "internal names and wrapped literals")
    outcome = await _evidence(ctx, [*queries, only], {"id": "unsafe", "local_names": []})
    value = expect_success(outcome, "evidence call")
    # The adapter protocol's evidence_search value follows the shipped schema, its dropped results too.
    expect_schema(value, "evidence_search.output", "evidence call with dropped results")
    await ctx.settle()
    fetched = {r.json.get("url") for r in ctx.records("fetch") if isinstance(r.json, dict)}
    cited = _cited(outcome, value) | _cited(named_outcome, named_value)
    # compared as one host: a fetch of the name without its final dot, or in other letter case, or spelled as the
    # URL Standard reads it (see _as_fetched), reaches it as well (each row's URL is one of its own that way: a test
    # keeps them apart)
    fetched_keys = {_host_folded(u) for u in fetched if isinstance(u, str)}
    cited_keys = {_host_folded(u) for u in cited if isinstance(u, str)}
    for case in (*UNSAFE, *NON_PUBLIC, *INTERNAL_NAMES, *WRAPPED, *SPELLED):
        url = case["url"]
        require(_host_folded(url) not in fetched_keys, f"{case.name}: {url} was sent to the Fetch API",
                catches=case.catches)
        require(_host_folded(url) not in cited_keys, f"{case.name}: {url} is cited as evidence", catches=case.catches)
    for url in ONLY_UNSAFE["urls"]:
        require(url not in fetched | cited, f"only-unsafe: {url} was fetched or cited")
    require("[needs_retry]" in (outcome.text or ""), "only-unsafe: a query whose every result was unsafe got no "
            "[needs_retry]", catches=ONLY_UNSAFE.catches, text=(outcome.text or "")[:2000])
    for case in VALIDATE_FIRST:
        ctx.fresh()
        await _validated_first(ctx, case)


def _as_fetched(url: str) -> str:
    """An http(s) ``url`` spelled as the URL Standard reads it (the parser of a browser, of a Fetch API): any run of
    slashes (or backslashes) after the scheme starts the authority, and the host is percent-decoded and mapped by
    UTS 46 (letter case folded; ideographic and fullwidth full stops are '.'), its non-ASCII labels in their
    punycode (xn--) form. Any other URL as it is."""
    scheme, colon, rest = url.partition(":")
    if not colon or scheme.lower() not in ("http", "https"):
        return url
    rest = rest.lstrip("/\\")
    cut = min((i for i in map(rest.find, "/\\?#") if i >= 0), default=len(rest))
    user, at, host = rest[:cut].rpartition("@")
    port = ""
    if not host.startswith("["):  # an IPv6 literal as it is (no escape or mapping belongs in one)
        host, colon, port = host.partition(":")
        port = colon + port
        host = unquote(host, errors="replace")
        try:
            host = idna.uts46_remap(host, std3_rules=False, transitional=False)
        except idna.IDNAError:
            host = host.lower()
        host = ".".join(_ascii_label(label) for label in host.split("."))
    return f"{scheme}://{user}{at}{host}{port}{rest[cut:]}"


def _ascii_label(label: str) -> str:
    if label.isascii():
        return label
    try:
        return "xn--" + label.encode("punycode").decode("ascii")
    except UnicodeError:
        return label


def _host_folded(url: str) -> str:
    """``url`` as :func:`resource_key` spells it, read as the URL Standard reads it (:func:`_as_fetched`), its
    host's final dot dropped (the absolute form of one name)."""
    key = resource_key(_as_fetched(url))
    scheme, sep, rest = key.partition("://")
    cut = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    user, at, host = rest[:cut].rpartition("@")
    name, colon, port = host.rpartition(":") if not host.endswith("]") and ":" in host else (host, "", "")
    return f"{scheme}{sep}{user}{at}{name.removesuffix('.')}{colon}{port}{rest[cut:]}" if sep else key


def _cited(outcome: CallOutcome, value: dict[str, Any]) -> set[Any]:
    """Every URL an evidence call cites: its evidence lines', its sources' and those its text shows."""
    cited = {e.get("url") for g in value.get("queries", []) for e in g.get("evidence", []) if isinstance(e, dict)}
    cited |= {s.get("url") for s in value.get("sources", []) if isinstance(s, dict)}
    cited |= {m.group(1) for m in map(_ANY_SOURCE.search, (outcome.text or "").splitlines()) if m is not None}
    return cited


async def _validated_first(ctx: CheckContext, case: Case) -> None:
    """A batch of two: the first query's unsafe results match it better than its safe ones (which have pages);
    the second query's eight safe results compete for the same page bound."""
    query, other = case["query"], case["other"]
    words = f"{query} {query}".title()
    unsafe = [row(url, words, f"{words}.") for url in case["unsafe"]]
    safe = [row(url, query.title(), f"{query.title()}, as the port office sets them.") for url in case["safe"]]
    script(ctx, query, unsafe + safe)
    script(ctx, other, [row(f"https://tugs{i}-fees.com/fees", other.title(), f"{other.title()} of the port.")
                        for i in range(RESULTS_SEEN)])  # fmt: skip
    for url in case["safe"]:
        serve_page(ctx, url, query.title(), f"# {query.title()}\n\n{query.capitalize()} are 450 dollars per transit.")
    outcome = await _evidence(ctx, [query, other], {"id": case.name, "local_names": []})
    value = expect_success(outcome, case.name)
    group = next((g for g in value.get("queries", []) if isinstance(g, dict) and g.get("query") == query), {})
    cited = [str(e.get("url")) for e in group.get("evidence", []) if isinstance(e, dict)]
    require(set(cited) & set(case["safe"]), f"{case.name}: query {query!r} cites none of its {len(case['safe'])} "
            "safe results (its unsafe results, which match it better, must be dropped before pages are picked)",
            catches=case.catches, cited=cited, text=(outcome.text or "")[:1000])  # fmt: skip
