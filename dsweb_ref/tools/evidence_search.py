"""The evidence ``web_search`` tool (seed 002): a deterministic code-only pipeline.

    queries -> parallel search (the seam) -> URL validation (netguard policy, no I/O)
    -> BM25 relevance ranking -> source diversity -> concurrent fetch (the seam)
    -> passage units (sentences, list items, table rows with headers, definition pairs)
    -> designator and near-miss rejection, BM25 over every unit of the call
    -> evidence lines with source URLs, or [needs_retry] saying what was tried and why

No language model is called anywhere on this path: ranking, selection and
extraction are code. Search and fetch go through ``WebService`` only; with the
``http`` fetch provider every fetch is guarded by netguard (pinned connections,
every redirect hop checked, byte caps). A result whose URL failed validation
anywhere (scheme, literal address, DNS answer, redirect hop) is dropped with its
reason: never ranked, read, cited, nor used through its snippet.

One deadline covers the whole call, split so no stage starves the next: the
searches get ``search_share`` of it, each page (fetch and parse) at most
``page_timeout_s``, the fetches end ``rank_share`` of it (at most 3 s) before the
deadline so ranking and rendering fit; parsing and ranking run in worker threads,
so cancellation and the deadline stay prompt. Work still running at its stage's
end is cancelled and its queries fall back to what is known.

Bounds: 1-4 queries of at most ``max_query_chars``; ``results_per_query`` results
per search; ``max_pages`` fetched pages (``max_concurrent_fetches`` in flight), at
most ``max_per_domain`` per registrable domain while other domains have candidates;
at most ``passages_per_page`` evidence lines per query (a second only when it scores
nearly as well as the first), each at most ``passage_chars``; the whole text at most
``max_output_chars``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import math
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

import httpx

from .._context import CallContext
from .._exceptions import WebError, WebErrorCode
from .._service import WebService
from .._types import FetchRequest, SearchRequest, SearchResult
from .._validate import is_int_at_least
from ..netguard import DEFAULT_POLICY, AddressPolicy, check_url
from ._evidence_guard import EvidenceContext, names_local, normalized_query, refuse_local, refuse_repeats
from ._evidence_passages import Choice, PageUnits, choose
from ._evidence_rank import Candidate, rank, select_pages
from ._evidence_text import clean_text, snippet_matches, topic_of
from ._evidence_units import Unit, page_units, warm_up
from ._result import ToolResult, error_result

__all__ = [
    "EvidenceContext",
    "EvidenceSearchTool",
    "EvidenceSettings",
    "append_citations",
    "parse_evidence_queries",
]

NEEDS_RETRY = "[needs_retry]"
# A fetch refused by URL validation (scheme, literal address, DNS answer, redirect hop): such a
# result is never evidence, not even through its snippet (seed 002 cites filtered links only).
_REFUSED = frozenset({WebErrorCode.INVALID_URL, WebErrorCode.BLOCKED_URL, WebErrorCode.REDIRECT_BLOCKED})
_MAX_PAGE_CHARS = 300_000  # what extraction reads of one page, whatever the fetch provider returned


@dataclass(frozen=True, slots=True)
class EvidenceSettings:
    """Bounds of one evidence call; validated at construction (``WEB_CONFIG_INVALID``)."""

    max_queries: int = 4
    max_query_chars: int = 400
    results_per_query: int = 8
    max_pages: int = 8
    max_per_domain: int = 2
    max_concurrent_fetches: int = 8  # pages in flight at once: what bounds memory (each up to the fetch cap)
    passages_per_page: int = 2
    passage_chars: int = 360
    title_chars: int = 160
    max_output_chars: int = 8000
    max_url_length: int = 2048
    deadline_s: float = 45.0  # the whole call: search, fetch, parse, rank and render
    page_timeout_s: float = 10.0  # one page, fetched and parsed: a hung page never holds the whole call
    search_share: float = 0.4  # of the deadline, for the searches: the fetch stage keeps the rest
    rank_share: float = 0.1  # of the deadline (0.25-3 s), kept back from the fetches for ranking

    def __post_init__(self) -> None:
        seconds = ("deadline_s", "page_timeout_s", "search_share", "rank_share")
        for name in (f.name for f in fields(self) if f.name not in seconds):
            if not is_int_at_least(getattr(self, name)):
                raise WebError(WebErrorCode.CONFIG_INVALID, f"evidence setting {name} must be a positive integer")
        for name in seconds:
            d = getattr(self, name)
            if isinstance(d, bool) or not isinstance(d, (int, float)) or not math.isfinite(d) or d <= 0:
                raise WebError(WebErrorCode.CONFIG_INVALID, f"evidence setting {name} must be a positive number")
        if self.search_share + self.rank_share >= 1:
            raise WebError(WebErrorCode.CONFIG_INVALID, "evidence settings search_share + rank_share must be below 1")

    def stage_ends(self, start: float) -> tuple[float, float, float]:
        """(searches end, fetches end, the call ends) for a call started at ``start`` (loop time)."""
        d = self.deadline_s
        # Ranking keeps its share, at least 0.25 s (a thread hop on a loaded machine) and at most 3 s,
        # never more than half of a very short deadline.
        reserve = min(max(self.rank_share * d, 0.25), 3.0, 0.5 * d)
        return start + self.search_share * d, start + d - reserve, start + d


def _invalid(message: str) -> WebError:
    return WebError(WebErrorCode.INVALID_ARGUMENTS, message)


def parse_evidence_queries(arguments: object, settings: EvidenceSettings) -> list[str]:
    """``query``: one string or a list of 1..max strings; duplicates (ignoring case and
    spacing) dropped keeping the first."""
    if not isinstance(arguments, dict):
        raise _invalid('invalid arguments: "arguments" must be an object')
    if "query" not in arguments:
        raise _invalid('invalid arguments: missing required property "query"')
    extra = sorted(str(k) for k in arguments if k != "query")
    if extra:
        raise _invalid(f'invalid arguments: unknown property "{extra[0][:100]}"')
    raw = arguments["query"]
    queries = [raw] if isinstance(raw, str) else raw
    if not isinstance(queries, list):
        raise _invalid('invalid arguments: "query" must be a string or an array of strings')
    if not queries:
        raise _invalid("query must hold at least one query")
    if len(queries) > settings.max_queries:
        raise _invalid(f"query must hold at most {settings.max_queries} queries")
    for i, q in enumerate(queries):
        if not isinstance(q, str):
            raise _invalid(f'invalid arguments: "query[{i}]" must be a string')
        if not q.strip():
            raise _invalid("each query must be a non-empty string")
        if len(q) > settings.max_query_chars:
            raise _invalid(f"each query must be at most {settings.max_query_chars} characters")
        if any(unicodedata.category(c) == "Cs" or (unicodedata.category(c) == "Cc" and not c.isspace()) for c in q):
            raise _invalid("each query must be printable text (no control characters or unpaired surrogates)")
    seen: dict[str, str] = {}
    for q in queries:
        seen.setdefault(normalized_query(q), q.strip())
    return list(seen.values())


@dataclass
class _Query:
    text: str
    results: int = 0
    error: str | None = None
    dropped: list[dict[str, str]] = field(default_factory=list)
    ranked: list[Candidate] = field(default_factory=list)
    fetched: int = 0
    fetch_failed: int = 0
    evidence: list[dict[str, str]] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    why: str = ""

    @functools.cached_property
    def topic(self) -> str:
        """The query without its search operators: read for every candidate, so computed once."""
        return topic_of(self.text)


T = TypeVar("T")


async def _capture(call: Awaitable[T]) -> T | WebError:
    try:
        return await call
    except WebError as error:
        return error
    except Exception as exc:  # a bug in a stage must not become a raw exception for the model
        return WebError(WebErrorCode.PROVIDER_ERROR, f"{type(exc).__name__}: {exc}", cause=exc)


def _close_unstarted(calls: Sequence[Awaitable[object]]) -> None:
    """A call whose task was cancelled before its first step never ran: close it, or Python warns at garbage
    collection that a coroutine (``to_thread``, a connection attempt) was never awaited."""
    for call in calls:
        if inspect.iscoroutine(call) and inspect.getcoroutinestate(call) == inspect.CORO_CREATED:
            call.close()


async def _settle_until(calls: Sequence[Awaitable[T]], deadline: float, what: str) -> list[T | WebError]:
    """Run ``calls`` at once; at ``deadline`` cancel the rest. Returns only when every task has
    settled (also on caller cancellation, which is re-raised)."""
    tasks = [asyncio.ensure_future(_capture(c)) for c in calls]
    if not tasks:
        return []
    loop = asyncio.get_running_loop()
    try:  # closed also when a second cancel ends a gather below early (its tasks have settled or are cancelled)
        try:
            _done, pending = await asyncio.wait(tasks, timeout=max(0.0, deadline - loop.time()))
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    finally:
        _close_unstarted(calls)
    late = WebError(WebErrorCode.FETCH_TIMEOUT, f"{what} did not finish before the call's deadline")
    return [late if task.cancelled() else task.result() for task in tasks]


class EvidenceSearchTool:
    """Model-facing ``web_search`` over the evidence pipeline. Calls the seam, never a provider."""

    name = "web_search"

    def __init__(
        self, web: WebService, settings: EvidenceSettings | None = None, *, policy: AddressPolicy = DEFAULT_POLICY
    ) -> None:
        self.web = web
        self.settings = settings or EvidenceSettings()
        self.policy = policy
        self._warm = warm_up()  # segmenters and suffix list load now, in a background thread

    @property
    def description(self) -> str:
        return (
            "Search the web for current or external facts (news, prices, events, websites). "
            f"query: one string, or a list of 1-{self.settings.max_queries} queries for different facts or angles; "
            "they run concurrently. Returns short evidence passages grouped by query, each with its source URL. "
            f"If the result says {NEEDS_RETRY}, search again with a more specific query (subject, place, time); "
            "never repeat the same query. Not for local files or the knowledge base."
        )

    @property
    def input_schema(self) -> dict[str, Any]:
        n, chars = self.settings.max_queries, self.settings.max_query_chars
        item = {"type": "string", "minLength": 1, "maxLength": chars}
        return {
            "type": "object",
            "required": ["query"],
            "additionalProperties": False,
            "properties": {
                "query": {
                    "description": f"One search query, or a list of 1-{n} queries run concurrently.",
                    "oneOf": [item, {"type": "array", "items": item, "minItems": 1, "maxItems": n}],
                }
            },
        }

    async def execute(
        self, arguments: object, ctx: CallContext | None = None, context: EvidenceContext | None = None
    ) -> ToolResult:
        """Model-visible evidence text plus the structured value; errors become ``Error: ...``."""
        try:
            value = await self.run(arguments, ctx, context)
        except WebError as error:
            return error_result(error)
        return ToolResult(text=render_evidence(value, self.settings.max_output_chars), value=value)

    async def run(
        self, arguments: object, ctx: CallContext | None = None, context: EvidenceContext | None = None
    ) -> dict[str, Any]:
        """The structured evidence, or a ``WebError`` for refused arguments or when every search failed."""
        cfg = self.settings
        queries = parse_evidence_queries(arguments, cfg)
        context = context if context is not None else EvidenceContext()
        refuse_local(queries, context.local_names)  # before any search: nothing local leaves
        refuse_repeats(queries, context)
        ctx = ctx or CallContext()
        if ctx.latest_prompt and names_local(ctx.latest_prompt, context.local_names):
            # The prompt goes with each search as ori_question (seed 001); one naming a user's file must not
            # (seed 002: no file name reaches a search engine), so it goes without one.
            ctx = dataclasses.replace(ctx, latest_prompt=None)
        searches_end, fetches_end, deadline = cfg.stage_ends(asyncio.get_running_loop().time())
        state = [_Query(q) for q in queries]

        searches = [self.web.search(SearchRequest(q, cfg.results_per_query), ctx) for q in queries]
        # A hung search ends at its share of the deadline, so the other queries' pages still get read.
        answers = await _settle_until(searches, searches_end, "the search")
        if not self._warm.done():  # the first call of a fresh process: wait for the load, off the loop
            loop = asyncio.get_running_loop()
            await asyncio.wait([asyncio.wrap_future(self._warm)], timeout=max(0.0, fetches_end - loop.time()))
        errors = [a for a in answers if isinstance(a, WebError)]
        if len(errors) == len(answers):
            raise errors[0]  # nothing to show; a different query would not help
        for index, (q, answer) in enumerate(zip(state, answers, strict=True)):
            if isinstance(answer, WebError):
                q.error = answer.message
            else:
                q.ranked = rank(q.topic, self._candidates(index, q, answer))

        pages = select_pages([q.ranked for q in state], max_pages=cfg.max_pages, max_per_domain=cfg.max_per_domain)
        slots = asyncio.Semaphore(cfg.max_concurrent_fetches)
        fetches = [self._page(c.url, ctx, slots) for c in pages]
        fetched = await _settle_until(fetches, fetches_end, "the page fetch")
        bodies = dict(zip((c.url for c in pages), fetched, strict=True))
        # Ranking passages is CPU work: off the event loop, and inside the same deadline.
        collected = await _settle_until(
            [asyncio.to_thread(self._collect, q, bodies) for q in state], deadline, "passage ranking"
        )
        for q, outcome in zip(state, collected, strict=True):
            if isinstance(outcome, WebError):
                q.why = outcome.message
            else:
                outcome(q)
        # Only a search that ran and found nothing usable makes its query a dead end; a failed
        # search (a provider error, the deadline) may be retried as it was.
        context.remember_empty(q.text for q in state if not q.evidence and q.error is None)
        context.remember_evidence(e["text"] for q in state for e in q.evidence)
        return _value(state)

    def _candidates(self, index: int, q: _Query, answer: SearchResult) -> list[Candidate]:
        cfg = self.settings
        out: list[Candidate] = []
        seen: set[str] = set()
        q.results = len(answer.sources)
        for position, source in enumerate(answer.sources):
            try:
                url = check_url(source.url, max_length=cfg.max_url_length, policy=self.policy)
            except WebError as error:
                q.dropped.append({"url": clean_text(source.url, 300), "reason": clean_text(error.message, 300)})
                continue
            canonical = str(url.copy_with(fragment=None))
            if canonical in seen:
                continue
            seen.add(canonical)
            summary = source.metadata.get("summary")
            # Provider text is untrusted: bounded before any tokenizing.
            title, snippet = (source.title or "")[:1000], (source.snippet or "")[:2000]
            text = " ".join(p for p in (title, snippet, summary[:2000] if isinstance(summary, str) else "") if p)
            out.append(Candidate(index, position, canonical, url.host, title, snippet, text[:4000]))
        return out

    async def _page(self, url: str, ctx: CallContext, slots: asyncio.Semaphore) -> list[Unit]:
        """One page's units within the per-page timeout (fetch and parse together)."""
        try:
            return await asyncio.wait_for(self._blocks(url, ctx, slots), self.settings.page_timeout_s)
        except TimeoutError:
            raise WebError(
                WebErrorCode.FETCH_TIMEOUT, f"the page was not read within {self.settings.page_timeout_s:g} s"
            ) from None

    async def _blocks(self, url: str, ctx: CallContext, slots: asyncio.Semaphore) -> list[Unit]:
        async with slots:  # the page body is dropped once its units are made, before the slot is freed
            result = await self.web.fetch(FetchRequest(url), ctx)
            if not 200 <= result.status_code <= 299:
                raise WebError(WebErrorCode.PROVIDER_ERROR, f"HTTP {result.status_code}")
            body = result.body
            if len(body.content) > _MAX_PAGE_CHARS:
                body = type(body)(body.kind, body.content[:_MAX_PAGE_CHARS])
            # Parsing and sentence segmentation are CPU work: off the event loop, so the call's
            # deadline and a caller's cancellation still act while a large page is being read.
            return await asyncio.to_thread(page_units, body)

    def _collect(self, q: _Query, bodies: Mapping[str, list[Unit] | WebError]) -> Callable[[_Query], None]:
        """Pick the query's evidence (run in a worker thread); returns what to apply to ``q`` on the
        event loop, so a ranking cut off by the deadline leaves ``q`` untouched."""
        cfg = self.settings
        pages: list[PageUnits] = []
        snippets: list[PageUnits] = []
        refused: list[dict[str, str]] = []
        fetched = failed = 0
        titles: dict[str, str] = {}
        for candidate in q.ranked:
            if candidate.url not in bodies:
                continue
            units = bodies[candidate.url]
            titles[candidate.url] = clean_text(candidate.title, cfg.title_chars)
            if isinstance(units, WebError):
                if units.code in _REFUSED:
                    refused.append({"url": clean_text(candidate.url, 300), "reason": clean_text(units.message, 300)})
                    continue
                failed += 1
            else:
                fetched += 1
                pages.append(PageUnits(candidate.url, candidate.title, units))
            if snippet_matches(candidate.title, candidate.snippet, q.topic):  # the fallback's own policy
                snippets.append(PageUnits(candidate.url, candidate.title, [Unit(candidate.snippet, "text", 0)]))
        choice = choose(q.topic, pages, max_lines=cfg.passages_per_page, size=cfg.passage_chars)
        kind = "page"
        if not choice.picks and snippets:  # the fallback of seed 002, under the same rules as passages
            fallback = choose(q.topic, snippets, max_lines=1, size=cfg.passage_chars)
            if fallback.picks:
                choice, kind = Choice(fallback.picks, choice.rejected, ""), "snippet"
        evidence = [
            {"url": p.url, "title": titles[p.url], "text": clean_text(p.text, cfg.passage_chars), "from": kind}
            for p in choice.picks
        ]

        def apply(target: _Query) -> None:
            target.dropped.extend(refused)
            target.fetched, target.fetch_failed = fetched, failed
            target.evidence, target.rejected, target.why = evidence, choice.rejected, choice.why_none

        return apply


def _value(state: Sequence[_Query]) -> dict[str, Any]:
    groups = []
    sources: dict[str, str] = {}
    for q in state:
        for line in q.evidence:
            sources.setdefault(line["url"], line["title"])
        groups.append(
            {
                "query": q.text,
                "needs_retry": not q.evidence,
                "evidence": q.evidence,
                "tried": {
                    "results": q.results,
                    "dropped": q.dropped,
                    "candidates": len(q.ranked),
                    "fetched": q.fetched,
                    "fetch_failed": q.fetch_failed,
                    "search_error": q.error,
                    "rejected": q.rejected,
                    "why": q.why,
                },
            }
        )
    return {
        "queries": groups,
        "needs_retry": all(g["needs_retry"] for g in groups),
        "sources": [{"url": u, "title": t} for u, t in sources.items()],
    }


def _tried(group: Mapping[str, Any]) -> str:
    t = group["tried"]
    if t["search_error"]:
        return f"the search failed ({clean_text(t['search_error'], 200)})"
    parts = [f"{t['results']} search results"]
    if t["dropped"]:
        parts.append(f"{len(t['dropped'])} dropped as unsafe or invalid URLs")
    parts.append(f"{t['fetched']} pages read" + (f", {t['fetch_failed']} failed to load" if t["fetch_failed"] else ""))
    rejected = t.get("rejected") or []
    if rejected:
        shown = "; ".join(f"{clean_text(r['url'], 120)} {clean_text(r['reason'], 120)}" for r in rejected[:3])
        more = f" and {len(rejected) - 3} more" if len(rejected) > 3 else ""
        parts.append(f"{len(rejected)} left out as near-misses ({shown}{more})")
    why = t.get("why") or "no passage or snippet matched the query"
    return ", ".join(parts) + f"; {clean_text(why, 200)}"


LEFT_OUT = "(its evidence lines were left out to keep the result short)"


def render_evidence(value: Mapping[str, Any], max_chars: int) -> str:
    """The model-visible text: evidence lines grouped by query, each ending with its source URL.
    Lines beyond ``max_chars`` are left out whole, from the longest groups first (then, if one line a
    query is still too long, the longest of those lines first); a cut is said."""
    groups: Sequence[Mapping[str, Any]] = value["queries"]
    heads: list[str] = []
    bodies: list[list[str]] = []
    for number, group in enumerate(groups, 1):
        heads.append(f"Query {number}: {clean_text(group['query'], 200)}")
        if group["needs_retry"]:
            bodies.append(
                [
                    f"{NEEDS_RETRY} No usable evidence. Tried: {_tried(group)}. "
                    "Search again with a more specific query (add the subject, place or time); "
                    "do not repeat this query."
                ]
            )
        else:
            bodies.append([f'- "{e["text"]}" (source: {e["url"]})' for e in group["evidence"]])
    note = "\n(Some evidence lines were left out to keep the result short.)"
    cut = False
    while len(_join(heads, bodies) + note) > max_chars and any(len(b) > 1 for b in bodies):
        longest = max(range(len(bodies)), key=lambda i: (len(bodies[i]), -i))
        bodies[longest].pop()
        cut = True
    # One line a query can still be too long (URLs of up to 2,048 characters): a query's last line goes
    # whole, the longest first (the later query's on a tie), since a cut inside a line would leave it
    # without its URL.
    while len(_join(heads, bodies) + note) > max_chars:
        shown = [i for i, body in enumerate(bodies) if body and body != [LEFT_OUT] and not groups[i]["needs_retry"]]
        if not shown:
            break
        longest = max(shown, key=lambda i: (len(bodies[i][0]), i))
        bodies[longest] = [LEFT_OUT]
        cut = True
    text = _join(heads, bodies) + (note if cut else "")
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def _join(heads: Sequence[str], bodies: Sequence[Sequence[str]]) -> str:
    return "\n\n".join("\n".join([h, *b]) for h, b in zip(heads, bodies, strict=True))


def append_citations(answer: str, evidence: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> str:
    """``answer`` with a "Sources" list appended by code, so a small model never has to
    reproduce URLs (seed 002). ``evidence``: one or more evidence values (``ToolResult.value``).
    Only URLs that produced evidence are listed (they passed validation to be there), each once,
    and each is checked again as an http(s) URL before it is shown."""
    values = [evidence] if isinstance(evidence, Mapping) else list(evidence)
    links: dict[str, str] = {}
    for value in values:
        for source in value.get("sources", ()):
            url, title = source.get("url"), source.get("title") or ""
            if not isinstance(url, str) or url in links:
                continue
            try:
                parsed = httpx.URL(url)
            except (httpx.InvalidURL, ValueError, TypeError):
                continue
            if parsed.scheme in ("http", "https") and parsed.host and not parsed.userinfo:
                links[url] = clean_text(str(title), 160).replace("[", "(").replace("]", ")")
    if not links:
        return answer
    # Parentheses would end the Markdown link target early; their percent forms mean the same URL.
    lines = [f"- [{title or url}]({url.replace('(', '%28').replace(')', '%29')})" for url, title in links.items()]
    return answer.rstrip() + "\n\nSources:\n" + "\n".join(lines)
