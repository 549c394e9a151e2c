"""The shipped defaults (seeds 000 and 001), seen through ``configure``'s ``"defaults": true`` (capability
shipped-defaults): every other check hands over each setting it relies on, so none sees what a target does
when a setting is not written. Here a configure gives only the bases, the key and the one setting a row
needs; the target keeps its own shipped default for the rest, and each row reads one of them off the wire.

The defaults the seeds decide: searchMaxQueries four (seed 000); the tool's limit 8 and the count setting
the service's 10 (seed 001, so 8 is sent, and 10 under a limit above it); ori_question sent unless
sendOriginalQuestion is off (seed 001: on); the new-API switch off, so Messages search is the selection
(seed 001). Timeouts, the Messages model and the other settings are left at the target's own defaults and
not judged (the seeds fix none of them for this).
"""

from __future__ import annotations

from typing import Any

from ..adapter_protocol import CAP_SHIPPED_DEFAULTS
from ..cases import Case
from ._base import INVALID_ARGUMENTS, CheckContext, check, expect_error, expect_success, require
from .search import each_record, ori_accepted

WS, MSG, API = "web_search", "messages-search", "search-api"
# What every row gives: where the emulator is and its key (a shipped base is a public address, never used).
BASES = frozenset({"messages_base", "tools_base", "api_key"})
QUERIES = ["markdown tables", "python asyncio", "rust borrow checker", "http caching", "unicode normalization"]
PROMPT = "How do markdown tables align their columns?"

QUERY_CAP = (
    Case("four queries by default", "searchMaxQueries shipped below four (three, or one query a call), so a batch "
         "of four distinct queries is refused", {"queries": 4}),
    Case("five queries refused by default", "searchMaxQueries shipped above four (eight, or no cap at all), so "
         "five queries are searched instead of refused before any request", {"queries": 5}),
)
COUNT = (
    Case("the tool's limit sent by default", "searchMaxResults shipped other than 8 (the service's 10, or the "
         "API's 50, sent as count), or the count setting sent without the tool's limit", {"given": {}, "sent": 8}),
    Case("the service's count under a larger limit", "the count setting shipped as the tool's 8 (or as the "
         "limit itself) instead of the service's 10, so a limit of 20 sends 8 (or 20)",
         {"given": {"search_max_results": 20}, "sent": 10}),
)
ORI = (
    Case("ori_question sent by default", "sendOriginalQuestion shipped off (an opt-in), so a search with a prompt "
         "sends no ori_question"),
)
SELECTION = (
    Case("Messages search with no selection written", "the new Web Search API switch shipped on (or the Search API "
         "made the default before its launch), so a deployment that wrote no selection searches through /search"),
)
CASES = QUERY_CAP + COUNT + ORI + SELECTION


async def _configure(ctx: CheckContext, **given: Any) -> None:
    """A configure of the bases, the key and ``given`` alone: every other setting at the target's default."""
    await ctx.configure(given=BASES | set(given), **given)


@check(
    "search.defaults.shipped",
    "With no setting written, searchMaxQueries is 4, count 8 (10 under a larger limit), ori_question on, Messages",
    seed="001",
    requires=(WS, API, MSG, CAP_SHIPPED_DEFAULTS),
    provider="api",
    profiles=("shipped-defaults",),
    rule="Seed 000: searchMaxQueries 'defaults to four' (four distinct queries are searched, five refused "
    "before any request). Seed 001: 'count is the configured value from 1 to 50, defaulting to the service's 10, "
    "unless the request's result bound is smaller; the tool always sends its limit, 8 by default' (count 8 is "
    "sent, and 10 under a searchMaxResults of 20 the check gives); Search API mode 'sends up to 128 characters of "
    "the user's prompt ... unless sendOriginalQuestion is off' (on by default: a search with a prompt carries "
    "ori_question); the new-API switch 'defaults off' and 'off restores Messages search', 'the shipped "
    "selection' (with no provider written, web_search goes through Messages, never /search). Each row's "
    "configure carries \"defaults\": true with the bases, the key and only the setting the row names (the "
    "Search API rows the provider); every other setting is the target's own.",
    cases=CASES,
)
async def shipped(ctx: CheckContext) -> None:
    for case in CASES:
        if case in QUERY_CAP:
            await _query_cap(ctx, case)
        elif case in COUNT:
            await _count(ctx, case)
        elif case in ORI:
            await _configure(ctx, provider="api")
            ctx.fresh()
            expect_success(await ctx.search(["markdown"], PROMPT), f"{case.name}: search")
            (record,) = each_record(ctx, "search", case.name, 1)
            got = (record.json or {}).get("ori_question")
            require(got in ori_accepted(PROMPT), f"{case.name}: ori_question={got!r} with a prompt and "
                    f"sendOriginalQuestion not written; expected {PROMPT!r}", body=record.json, catches=case.catches)
        else:
            await _configure(ctx)  # no provider: the selection a deployment that wrote none gets
            ctx.fresh()
            # Only the route is judged: the Messages model and its other settings are the target's own, and the
            # emulator refuses models it does not know, so the call's outcome is not (a review's false failure).
            await ctx.search(["markdown"])
            await ctx.settle()
            routes = [r.route for r in ctx.records()]
            require(routes and set(routes) == {"messages"}, f"{case.name}: requests to {routes}; expected Messages "
                    "requests only (the switch defaults off: Messages search is the shipped selection)",
                    catches=case.catches)


async def _query_cap(ctx: CheckContext, case: Case) -> None:
    await _configure(ctx, provider="api")
    ctx.fresh()
    queries = QUERIES[: case["queries"]]
    outcome = await ctx.search(queries)
    if case["queries"] <= 4:
        expect_success(outcome, f"{case.name}: {len(queries)} queries", case.catches)
        each_record(ctx, "search", case.name, len(queries))
        return
    expect_error(outcome, f"{case.name}: {len(queries)} queries", INVALID_ARGUMENTS)
    require(not ctx.records(), f"{case.name}: {len(ctx.records())} request(s) sent; the oversized array is refused "
            "before any provider call", catches=case.catches)


async def _count(ctx: CheckContext, case: Case) -> None:
    await _configure(ctx, provider="api", **case["given"])
    ctx.fresh()
    expect_success(await ctx.search(["markdown"]), f"{case.name}: search")
    (record,) = each_record(ctx, "search", case.name, 1)
    sent = (record.json or {}).get("count")
    written = dict(case["given"]) or "no count or limit written"
    require(sent == case["sent"], f"{case.name}: count={sent!r} with {written}; expected {case['sent']}",
            body=record.json, catches=case.catches)
