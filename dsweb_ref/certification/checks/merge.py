"""Merging several queries' sources (seed 000): round-robin by rank, dedup by URL, cap and truncation.

Expected values come from the emulator's own per-query answers (see ``_oracle``), so each check
states the rule it pins rather than a corpus snapshot.
"""

from __future__ import annotations

from ._base import CheckContext, check, expect_success, require
from ._oracle import expected_merge, observed, source_urls

WS = "web_search"


@check(
    "search.merge.round_robin",
    "Sources merge round-robin by rank across queries, in query order",
    seed="000",
    requires=(WS,),
)
async def round_robin(ctx: CheckContext) -> None:
    queries = ["markdown", "coffee"]  # disjoint results, each with 2+ sources
    value = expect_success(await ctx.search(queries), f"search {queries}")
    expected = expected_merge(ctx.records(ctx.search_route), queries, ctx.config.search_max_results)
    got, want = source_urls(value), [s.url for s in expected.sources]
    require(got == want, "sources are not merged round-robin by rank", got=got, expected=want)


@check(
    "search.merge.dedup",
    "A URL returned by several queries appears once in the merged sources",
    seed="000",
    requires=(WS,),
)
async def dedup(ctx: CheckContext) -> None:
    queries = ["search api", "deepseek search"]  # heavily overlapping results
    await ctx.configure(search_max_results=20)  # room for every unique source: the cap is not under test here
    value = expect_success(await ctx.search(queries), f"search {queries}")
    records = ctx.records(ctx.search_route)
    answers = observed(records, queries)
    urls = [s.url for r in answers.values() for s in r.sources]
    require(len(urls) > len(set(urls)), "the emulator answers did not overlap; the check cannot judge dedup")
    got = source_urls(value)
    dups = sorted({str(u) for u in got if got.count(u) > 1})
    require(not dups, f"duplicate URLs in the merged sources: {dups}")
    # Order is search.merge.round_robin's business; here only the set must match the merge.
    want = [s.url for s in expected_merge(records, queries, ctx.config.search_max_results).sources]
    require(set(got) == set(want), "deduplicated sources differ from the expected merge", got=got, expected=want)


@check(
    "search.merge.truncation",
    "Merged sources are capped at searchMaxResults; truncated is set only when a source was dropped",
    seed="000",
    requires=(WS,),
)
async def truncation(ctx: CheckContext) -> None:
    # (cap, queries, expected truncated): over the cap, and filling the cap exactly.
    for cap, queries in ((3, ["search api", "rate limit"]), (5, ["markdown", "coffee"]), (4, ["markdown", "coffee"])):
        await ctx.configure(search_max_results=cap)
        ctx.emu.log.clear()
        value = expect_success(await ctx.search(queries), f"search {queries} with searchMaxResults={cap}")
        expected = expected_merge(ctx.records(ctx.search_route), queries, cap)
        got = source_urls(value)
        require(len(got) == len(expected.sources), f"cap {cap}: {len(got)} sources, expected {len(expected.sources)}")
        require(
            value.get("truncated") is expected.truncated,
            f"cap {cap}, {queries}: truncated={value.get('truncated')!r}, expected {expected.truncated}",
        )
