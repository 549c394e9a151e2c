"""Merging several queries' sources (seed 000): round-robin by rank, dedup by URL, cap and truncation.

Each case scripts what every query's provider returns (``_script``), and the expected value is
computed from what the emulator actually served (``_oracle``), so each row pins one wrong reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...emulator import Hold
from ..cases import Case
from ._base import CheckContext, check, expect_success, require
from ._oracle import expected_merge, query_match, source_tuples
from ._script import Row, row, script, scripted, value_sources
from .batch import answered, wait_held

WS = "web_search"


def _urls(*urls: str) -> list[Row]:
    return [row(u, title=f"T {u.rsplit('/', 1)[-1]}", snippet=f"about {u}", date="2026-01-02") for u in urls]


A = [f"https://a.example.test/{i}" for i in range(1, 6)]
B = [f"https://b.example.test/{i}" for i in range(1, 6)]
C = [f"https://c.example.test/{i}" for i in range(1, 6)]
SHARED = "https://shared.example.test/page"


def _scored(url: str, score: float, authority: int) -> dict[str, Any]:
    """A result carrying the Search API's assessment of it (rerank_score, authority); a Messages answer drops them."""
    (listed,) = _urls(url)
    return {**listed, "rerank_score": score, "authority": authority}


async def run_scripted(ctx: CheckContext, answers: dict[str, Sequence[Row]], cap: int) -> tuple[dict[str, Any], Any]:
    """Configure the cap, script every query's answer, search, and return (value, expected)."""
    await ctx.configure(search_max_results=cap)
    ctx.emu.log.clear()
    queries = list(answers)
    for query, rows in answers.items():
        script(ctx, query, rows)
    value = expect_success(await ctx.search(queries), f"search {queries} with searchMaxResults={cap}")
    return value, expected_merge(ctx.records(ctx.search_route), queries, cap)


ROUND_ROBIN = (
    Case("two disjoint queries", "sources concatenated query by query instead of rank by rank",
         {"answers": {"rr one": _urls(*A[:3]), "rr two": _urls(*B[:2])}}),
    Case("uneven lists, three queries", "stopping at the shortest list, or not skipping an exhausted one",
         {"answers": {"rr one": _urls(A[0]), "rr two": _urls(*B[:3]), "rr three": _urls(*C[:2])}}),
    Case("shared source at different ranks",
         "a shared source placed where it first occurs in query order, not in the round-robin order",
         {"answers": {"rr one": [*_urls(A[0]), row(SHARED, "from one")],
                      "rr two": [row(SHARED, "from two"), *_urls(B[0])]}}),
    Case("first query answers last", "sources ordered by completion time instead of query position",
         {"answers": {"rr one": _urls(*A[:2]), "rr two": _urls(*B[:2])}, "late": "rr one"}),
    # Rank 1 gives A1 (the second query's A1 is a duplicate), rank 2 gives A2 then B1.
    Case("a duplicate at the same rank", "a duplicate not using up its query's turn: that query's next source "
         "taken in its place, ahead of the first query's next rank (A1, B1, A2)",
         {"answers": {"rr one": _urls(A[0], A[1]), "rr two": _urls(A[0], B[0])}}),
    # Scores and authority rise down each list and from the first query to the second, so a sort by either, in
    # either direction, moves a source. The Messages route has no place for them: there the row is an uneven
    # round-robin like any other.
    Case("scores rising down the lists and across queries", "the merged sources re-sorted by the service's "
         "rerank_score or authority, so the second query's sources displace the first's",
         {"answers": {"rr one": [_scored(A[0], 0.1, -1), _scored(A[1], 0.2, 0)],
                      "rr two": [_scored(B[0], 0.5, 1), _scored(B[1], 0.6, 2), _scored(B[2], 0.7, 3),
                                 _scored(B[3], 0.8, 4)]}}),
)


@check(
    "search.merge.round_robin",
    "Sources merge round-robin by rank across queries, in query order",
    seed="000",
    requires=(WS,),
    rule="Seed 000: the tool 'takes one source at each rank from every query before advancing to the next "
    "rank, then caps the combined list'; results are placed by query position, and every field of a source "
    "(title, snippet, date) travels with it. Seed 001: the provider 'preserves service order', and rerank_score "
    "and authority 'describe service assessments': a score a Search API result carries is no rank, and never "
    "re-orders the merge.",
    cases=ROUND_ROBIN,
)
async def round_robin(ctx: CheckContext) -> None:
    for case in ROUND_ROBIN:
        answers: dict[str, Sequence[Row]] = case["answers"]
        late = case.params.get("late")
        if late is None:
            value, expected = await run_scripted(ctx, answers, 8)
        else:
            value, expected = await _late_first(ctx, answers, late)
        got, want = value_sources(value), source_tuples(expected)
        require(got == want, f"{case.name}: sources are not merged round-robin by rank", got=got, expected=want)


async def _late_first(ctx: CheckContext, answers: dict[str, Sequence[Row]], late: str) -> tuple[dict[str, Any], Any]:
    """``late`` answers only after every other query was answered."""
    route = ctx.search_route
    await ctx.configure(search_max_results=8)
    ctx.emu.log.clear()
    gate = ctx.emu.gate("late")
    ctx.emu.inject(route, Hold(gate, timeout=30, then=scripted(route, late, answers[late])),
                   when=query_match(route, late))
    for query, rows in answers.items():
        if query != late:
            script(ctx, query, rows)
    queries = list(answers)
    call = ctx.start_search(queries)
    try:
        await wait_held(ctx, gate, 1, "late query")
        others = len(queries) - 1
        await answered(ctx, others, "other answers sent")  # all served before the late one is released
    finally:
        gate.release()
    value = expect_success(await call.outcome(30.0), f"search {queries}")
    return value, expected_merge(ctx.records(route), queries, 8)


DEDUP = (
    Case("shared URL, first occurrence's fields win", "the later duplicate's title/snippet/date kept",
         {"answers": {"dd one": [row(SHARED, "from one", "snippet one", "2026-01-01"), *_urls(A[0])],
                      "dd two": [*_urls(B[0]), row(SHARED, "from two", "snippet two", "2026-02-02")]}}),
    Case("URLs differing by case or trailing slash", "URLs normalised (case-folded, slash stripped) before dedup",
         {"answers": {"dd one": _urls("https://x.example.test/Page"),
                      "dd two": _urls("https://x.example.test/page", "https://x.example.test/Page/")}}),
    Case("URLs differing only by their #fragment", "fragments dropped before dedup, as URL normalisers do",
         {"answers": {"dd one": _urls("https://x.example.test/doc#intro"),
                      "dd two": _urls("https://x.example.test/doc", "https://x.example.test/doc#usage")}}),
    Case("duplicate inside one query's list", "dedup across queries only, not within one result",
         {"answers": {"dd one": [*_urls(A[0], A[1]), *_urls(A[0])], "dd two": _urls(B[0])}}),
    Case("first occurrence without snippet or date", "duplicates merged field by field: what the first "
         "occurrence lacks filled from a later one",
         {"answers": {"dd one": [row(SHARED, "from one"), *_urls(A[0])],
                      "dd two": [*_urls(B[0]), row(SHARED, "from two", "snippet two", "2026-02-02")]}}),
    Case("URLs differing only by scheme (http, https)", "http:// and https:// taken for one URL (the scheme "
         "left out of the dedup key)",
         {"answers": {"dd one": _urls("http://x.example.test/p"), "dd two": _urls("https://x.example.test/p", B[0])}}),
    Case("URLs differing only by a leading www.", "a host with and without a leading 'www.' taken for one URL",
         {"answers": {"dd one": _urls("https://www.x.example.test/p"),
                      "dd two": _urls("https://x.example.test/p", B[0])}}),
)


@check(
    "search.merge.dedup",
    "A URL returned by several queries appears once, with its first occurrence's fields; URLs are compared exactly",
    seed="000",
    requires=(WS,),
    rule="Seed 000: the tool 'deduplicates sources by URL' over the merged list: the exact URL string is the "
    "key (no case folding of the path, no trailing-slash normalisation, no fragment dropped; http and https, or "
    "a host with and without 'www.', are two URLs; a scheme and host compared without letter case is open, as "
    "RFC 3986 makes them one URL), the first occurrence in merge "
    "order is kept with its own fields, and duplicates inside one query's list go too.",
    cases=DEDUP,
)
async def dedup(ctx: CheckContext) -> None:
    for case in DEDUP:
        value, expected = await run_scripted(ctx, case["answers"], 20)
        got = value_sources(value)
        urls = [s[0] for s in got]
        dups = sorted({str(u) for u in urls if urls.count(u) > 1})
        require(not dups, f"{case.name}: duplicate URLs in the merged sources: {dups}")
        # Order is search.merge.round_robin's business; here the set of sources and their fields.
        want = source_tuples(expected)
        require(sorted(map(repr, got)) == sorted(map(repr, want)),
                f"{case.name}: deduplicated sources differ from the expected merge", got=got, expected=want)


TRUNCATION = (
    Case("cap drops sources", "no cap, or truncated not set when a source is dropped",
         {"cap": 3, "answers": {"tr one": _urls(*A[:3]), "tr two": _urls(*B[:2])}}),
    Case("cap filled exactly", "truncated set when the cap is merely reached",
         {"cap": 4, "answers": {"tr one": _urls(*A[:2]), "tr two": _urls(*B[:2])}}),
    Case("exact fill with duplicates", "duplicates counted against the cap (or as dropped sources)",
         {"cap": 2, "answers": {"tr one": _urls(A[0], SHARED), "tr two": _urls(A[0], SHARED)}}),
    Case("shared sources and a cap that drops", "a shared source taking two slots",
         {"cap": 3, "answers": {"tr one": _urls(SHARED, *A[:2]), "tr two": _urls(SHARED, *B[:2])}}),
    Case("one query over the cap, nothing dropped by the merge",
         "truncated taken from the merge alone, ignoring a per-query truncation",
         {"cap": 3, "answers": {"tr one": _urls(*A[:4]), "tr two": []}}),
    Case("single query over the cap", "a single query's result passed through without the cap",
         {"cap": 2, "answers": {"tr one": _urls(*A[:3])}}),
    Case("single query at the cap", "truncated set for a single result that just fits",
         {"cap": 3, "answers": {"tr one": _urls(*A[:3])}}),
)


@check(
    "search.merge.truncation",
    "Sources are capped at searchMaxResults; truncated is set exactly when a source was dropped or a query truncated",
    seed="000",
    requires=(WS,),
    rule="Seed 000: the combined list is capped to searchMaxResults ('searchMaxResults bounds only the combined "
    "sources returned to the caller'), duplicates never take a slot, and the result is truncated when the "
    "cap dropped a unique source or any query's own result was truncated; filling the cap exactly is not "
    "truncation. Every search request carries the cap, so one query returning more is cut and truncated.",
    cases=TRUNCATION,
)
async def truncation(ctx: CheckContext) -> None:
    for case in TRUNCATION:
        cap = case["cap"]
        value, expected = await run_scripted(ctx, case["answers"], cap)
        got = value_sources(value)
        what = f"{case.name} (searchMaxResults={cap})"
        require(len(got) == len(expected.sources), f"{what}: {len(got)} sources, expected {len(expected.sources)}",
                got=got, expected=source_tuples(expected))
        require(value.get("truncated") is expected.truncated,
                f"{what}: truncated={value.get('truncated')!r}, expected {expected.truncated}")
