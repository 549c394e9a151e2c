"""The ``queries`` argument (seed 000): refused before any request when it is malformed or too long;
exact duplicates dropped, keeping their first position, and nothing else treated as a duplicate."""

from __future__ import annotations

from typing import Any

from ..cases import Case
from ._base import INVALID_ARGUMENTS, CheckContext, check, expect_error, expect_success, require
from ._oracle import expected_merge, query_of, source_urls

WS = "web_search"

QUERY_CAP = (
    Case("five items, cap four", "no cap at all", {"cap": 4, "arguments": {"queries": ["a", "b", "c", "d", "e"]}}),
    Case("duplicates count", "the cap applied after dropping duplicates",
         {"cap": 4, "arguments": {"queries": ["markdown", "markdown", "coffee", "python", "rate limit"]}}),
    Case("all one string, cap two", "the cap applied after dropping duplicates (one distinct query)",
         {"cap": 2, "arguments": {"queries": ["coffee", "coffee", "coffee"]}}),
    Case("cap one", "the default cap used instead of the configured one",
         {"cap": 1, "arguments": {"queries": ["a", "b"]}}),
    Case("empty array", "an empty array answered with no results", {"cap": 4, "arguments": {"queries": []}}),
    # From an outside hunt: a cap of 0 read as "no cap". A deployment's cap is a positive integer, so the target
    # may refuse the configuration; taken, it caps every array (any WEB_* error, nothing sent).
    Case("cap zero", "searchMaxQueries 0 read as no cap at all (five queries searched)",
         {"cap": 0, "arguments": {"queries": ["a", "b", "c", "d", "e"]}, "may_refuse": True}),
)


@check(
    "search.validation.query_cap",
    "Over searchMaxQueries queries (counted before dedup), or none: WEB_INVALID_ARGUMENTS, no upstream request",
    seed="000",
    requires=(WS,),
    rule="Seed 000: 'searchMaxQueries bounds the array ... Validation rejects an oversized array before any "
    "provider call starts, then exact duplicate strings are removed' and 'Exact duplicate strings consume "
    "the input-array bound'. An empty array has no query to run: refused too. 'deployments can choose another "
    "positive integer': a cap of 0 is refused as a configuration, or, taken, refuses every array, or is read as the "
    "default four (seed 000 says what a deployment may choose, not what an invalid 0 does); never 'no cap'.",
    cases=QUERY_CAP,
)
async def query_cap(ctx: CheckContext) -> None:
    for case in QUERY_CAP:
        if case.params.get("may_refuse"):
            if not await ctx.configure_if_accepted(search_max_queries=case["cap"]):
                continue  # refused as a configuration: seed 000's cap is a positive integer
        else:
            await ctx.configure(search_max_queries=case["cap"])
        ctx.emu.log.clear()
        outcome = await _call(ctx, case["arguments"])
        code = None if case.params.get("may_refuse") else INVALID_ARGUMENTS  # no seed fixes a code for cap 0
        if case.params.get("may_refuse"):  # a cap of 0 taken refuses any array: a search means another cap, or none
            require(not outcome.ok, f"{case.name}: searchMaxQueries 0 was taken and the array searched: expected a "
                    f"refusal, got {outcome.brief()}", catches=case.catches)
        expect_error(outcome, f"{case.name} (searchMaxQueries={case['cap']})", code)
        require(not ctx.records(), f"{case.name}: {len(ctx.records())} upstream request(s) sent before rejection")


async def _call(ctx: CheckContext, arguments: Any) -> Any:
    return await ctx.search_arguments(arguments, limit=30.0)


# Blank items are strings: refusing them before any request, or searching them (the service 'enforces the
# 1-128 Unicode-character query constraint', seed 001) are both open. A refusal as invalid arguments sends
# nothing; searched, each blank item reaches the provider as it is, and the call ends as a WEB_* error or a
# result. Whitespace in every class both JavaScript's trim() and Python's str.strip() remove.
ARGUMENTS = (
    Case("blank item among valid ones", "a blank item silently dropped (its siblings searched, a success), or "
         "refused as invalid arguments after its siblings were sent",
         {"arguments": {"queries": ["markdown", "   "]}, "blank": True}),
    Case("empty string", "an empty query dropped, or the call failing (a crash coded as an error) before any "
         "request, under another code than invalid arguments", {"arguments": {"queries": [""]}, "blank": True}),
    Case("tabs and newlines", "control whitespace failing the call before it is searched (a header or log line "
         "built from it), under another code than invalid arguments",
         {"arguments": {"queries": ["\t\r\n\v\f"]}, "blank": True}),
    Case("Unicode spaces", "Unicode whitespace dropped, or refused as invalid arguments after a request",
         {"arguments": {"queries": ["markdown", "\u00a0\u2003\u3000\u2028\u2029\u202f\u205f\u1680"]},
          "blank": True}),
    Case("number item", "a non-string coerced to text", {"arguments": {"queries": ["markdown", 7]}}),
    Case("null item", "a null item skipped", {"arguments": {"queries": [None, "markdown"]}}),
    Case("nested array item", "a nested array flattened", {"arguments": {"queries": [["markdown"]]}}),
    Case("queries is a string", "a bare string wrapped into an array", {"arguments": {"queries": "markdown"}}),
    # From a hunt (U3-1): the one string row sends "markdown", eight characters, which a tool that never checks
    # that queries is an array refuses by the cap of four (counting characters): a string no longer than the cap
    # was searched character by character ("md" as "m" and "d") and an object key by key, and certified.
    Case("queries is a short string", "a string no longer than the cap iterated as its characters ('md' searched "
         "as 'm' and 'd')", {"arguments": {"queries": "md"}}),
    Case("queries is a one-character string", "a one-character string iterated as itself ('m' searched, as if "
         "['m'] were sent)", {"arguments": {"queries": "m"}}),
    Case("queries is an object", "an object iterated as its keys ('markdown' and 'coffee' searched)",
         {"arguments": {"queries": {"markdown": 1, "coffee": 2}}}),
    Case("legacy query argument", "the old single query argument still accepted", {"arguments": {"query": "markdown"}}),
    # From a hunt (U3-4): the row above sends the legacy query as a string, so a tool reading query as an alias of
    # queries (validated as the array it must be) refused it as "not an array", and was certified.
    Case("legacy query as an array", "the old query argument read as an alias of queries when queries is absent "
         "(['markdown'] searched)", {"arguments": {"query": ["markdown"]}}),
    Case("no arguments object", "a missing arguments object treated as empty", {"arguments": None}),
    # From a hunt (P-A1): the rows above send the legacy query alone, so a tool that also searched a query
    # given beside queries (the two representations merged into one array) was certified.
    Case("legacy query beside queries", "the old query argument searched too when it comes beside queries "
         "('coffee' searched with 'markdown', as if both representations were accepted)",
         {"arguments": {"queries": ["markdown"], "query": "coffee"}, "beside": "coffee"}),
)


@check(
    "search.validation.arguments",
    "A missing or non-array queries, a non-string item, or the legacy query argument is refused before any request",
    seed="000",
    requires=(WS,),
    rule="Seed 000: 'web_search accepts one required queries string array' (accepting both query and queries was "
    "rejected), validated 'before any provider call starts'. A missing array or a non-string item is "
    "WEB_INVALID_ARGUMENTS with no upstream request; so is a queries that is not an array (a string of any length, "
    "an object), never iterated into searches. 'Accept both query and queries. Rejected: two optional fields make "
    "the model choose between equivalent representations': the legacy query alone, a string or an array, is no alias "
    "of queries, refused as WEB_INVALID_ARGUMENTS with no upstream request. A blank item (empty after removing "
    "whitespace of any Unicode class) is a string: refusing it as WEB_INVALID_ARGUMENTS before any request, or "
    "searching it as any query (seed 001: the service 'enforces the 1–128 Unicode-character query constraint'), are "
    "both open. Searched, the blank item reaches the provider as it is (seed 000 drops only exact duplicates) and "
    "the call ends as that search gives: a result or a WEB_* error. The queries array is the one representation of a "
    "search, so a legacy query given beside it is refused as WEB_INVALID_ARGUMENTS before any request, or ignored: "
    "never searched.",
    cases=ARGUMENTS,
)
async def arguments(ctx: CheckContext) -> None:
    for case in ARGUMENTS:
        ctx.emu.log.clear()
        outcome = await _call(ctx, case["arguments"])
        if case.params.get("blank") and outcome.error_code != INVALID_ARGUMENTS:
            # Not refused, so searched: each blank item reaches the provider as it is (seed 000 drops only
            # exact duplicates), and the call ends as that search gives, a result or a coded failure.
            await ctx.settle()
            items = [q for q in case["arguments"]["queries"] if isinstance(q, str)]
            searched = {query_of(r, items) for r in ctx.records()}
            unsent = [q for q in items if not q.strip() and q not in searched]
            require(not unsent, f"{case.name}: neither refused as {INVALID_ARGUMENTS} nor searched: {unsent!r} never "
                    f"reached the provider ({outcome.brief()})", catches=case.catches)
            if not outcome.ok:
                expect_error(outcome, case.name)
            continue
        beside = case.params.get("beside")
        if beside is not None and outcome.error_code != INVALID_ARGUMENTS:
            # Not refused, so the extra argument was ignored: only the queries array is searched.
            await ctx.settle()
            items = [*case["arguments"]["queries"], beside]
            sent = sorted(str(q) for r in ctx.records() for q in [query_of(r, items)] if q is not None)
            require(beside not in sent, f"{case.name}: neither refused as {INVALID_ARGUMENTS} nor ignored: the "
                    f"query {beside!r} given beside queries was searched", searched=sent, catches=case.catches)
            continue
        expect_error(outcome, case.name, INVALID_ARGUMENTS)
        require(not ctx.records(), f"{case.name}: {len(ctx.records())} upstream request(s) sent before rejection")


DEDUP = (
    Case("exact duplicates", "exact duplicates searched twice", {"queries": ["coffee", "markdown", "coffee"],
                                                                 "searched": ["coffee", "markdown"]}),
    Case("differ by case", "queries case-folded before dedup", {"queries": ["Coffee", "coffee"],
                                                                 "searched": ["Coffee", "coffee"]}),
    Case("differ by surrounding whitespace", "queries trimmed before dedup",
         {"queries": ["coffee", " coffee "], "searched": ["coffee", " coffee "]}),
    Case("duplicate after another query", "the last position kept instead of the first",
         {"queries": ["markdown", "coffee", "markdown"], "searched": ["markdown", "coffee"], "ordered": True}),
    Case("differ by Unicode normalisation", "queries NFC-normalised before dedup (precomposed and decomposed é "
         "taken for one search)", {"queries": ["caf\u00e9", "cafe\u0301"], "searched": ["caf\u00e9", "cafe\u0301"]}),
)


@check(
    "search.validation.dedup",
    "Exact duplicate queries run once, in first-seen order; queries differing by case or spaces are distinct",
    seed="000",
    requires=(WS,),
    rule="Seed 000: 'exact duplicate strings are removed while preserving their first position'. Only equal "
    "strings are duplicates: no case folding, no trimming, no Unicode normalisation. Each distinct query is "
    "searched exactly once and unchanged (the searches run concurrently, so the order they reach the "
    "provider is open), and the answers are labelled and merged in first-seen order: the first merged source "
    "is the first-seen query's top result (how the rest interleave is search.merge.round_robin's business).",
    cases=DEDUP,
)
async def query_dedup(ctx: CheckContext) -> None:
    for case in DEDUP:
        ctx.emu.log.clear()
        value = expect_success(await ctx.search(case["queries"]), f"{case.name}: search {case['queries']}")
        records = ctx.records(ctx.search_route)
        searched = sorted(str(query_of(r, case["searched"])) for r in records)
        want = sorted(case["searched"])
        require(searched == want, f"{case.name}: upstream searches {searched}, expected one each of {want}")
        if case.params.get("ordered"):
            # Only the first source: it is the first-seen query's top result under any merge that keeps query
            # order (round-robin or not, which is search.merge.round_robin's business), and the other query's
            # when the last position is kept.
            expected = expected_merge(records, case["queries"], ctx.config.search_max_results)
            got, merged = source_urls(value)[:1], [s.url for s in expected.sources][:1]
            require(got == merged, f"{case.name}: the first source is not the first-seen query's top result",
                    got=got, expected=merged)
