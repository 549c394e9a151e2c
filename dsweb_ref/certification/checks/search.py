"""Single-search checks: what goes on the wire (seed 001) and how one query is answered (seed 000)."""

from __future__ import annotations

from ...emulator import Malformed, Redirect, Status
from ._base import (
    INVALID_ARGUMENTS,
    PROVIDER_ERROR,
    CheckContext,
    check,
    expect_error,
    expect_schema,
    expect_success,
    require,
)
from ._oracle import expected_merge, source_urls

WS, MSG, API = "web_search", "messages-search", "search-api"


@check(
    "search.messages.thinking_disabled",
    "Messages search sends thinking {type: disabled} and no tool_choice",
    seed="001",
    requires=(WS, MSG),
    provider="messages",
)
async def thinking_disabled(ctx: CheckContext) -> None:
    expect_success(await ctx.search(["markdown"]), "Messages search")
    bodies = [r.json for r in ctx.records("messages")]
    require(bodies, "no Messages request reached the emulator")
    for body in bodies:
        require(isinstance(body, dict), "Messages request body is not a JSON object")
        require(
            body.get("thinking") == {"type": "disabled"},
            f"Messages body has thinking={body.get('thinking')!r}, expected {{'type': 'disabled'}}",
        )
        require("tool_choice" not in body, "Messages body carries tool_choice; it must be omitted")


# Whitespace runs, CJK and astral code points (a UTF-16 cut would land elsewhere), well over 128.
ORI_PROMPT = "  What\tdoes the\n\n Search API   send? " + "界" * 50 + " " + "😀" * 40 + "  then tail words " * 3


@check(
    "search.api.ori_question",
    "ori_question is the latest prompt collapsed, trimmed and cut to 128 code points; omitted when blank or off",
    seed="001",
    requires=(WS, API),
    provider="api",
)
async def ori_question(ctx: CheckContext) -> None:
    expected = " ".join(ORI_PROMPT.split())[:128].rstrip()
    expect_success(await ctx.search(["markdown"], ORI_PROMPT), "search with a long prompt")
    sent = [r.json.get("ori_question") for r in ctx.records("search") if isinstance(r.json, dict)]
    require(sent == [expected], "ori_question differs from the collapsed prompt cut at 128 code points",
            sent=sent, expected=expected)
    for prompt in ("  \n\t ", None):
        ctx.emu.log.clear()
        expect_success(await ctx.search(["coffee"], prompt), f"search with prompt {prompt!r}")
        bodies = [r.json for r in ctx.records("search")]
        require(bodies and all("ori_question" not in b for b in bodies),
                f"ori_question must be omitted for prompt {prompt!r}", bodies=bodies)
    await ctx.configure(send_original_question=False)
    ctx.emu.log.clear()
    expect_success(await ctx.search(["coffee"], "a real question"), "search with sendOriginalQuestion off")
    bodies = [r.json for r in ctx.records("search")]
    require(bodies and all("ori_question" not in b for b in bodies),
            "ori_question must be omitted when sendOriginalQuestion is off", bodies=bodies)


@check(
    "search.api.count",
    "Search API count is lowered to searchMaxResults; need_content is false; the query passes unchanged",
    seed="001",
    requires=(WS, API),
    provider="api",
)
async def api_count(ctx: CheckContext) -> None:
    query = 'site:docs.example.test "search api" -legacy'
    for cap in (3, 8):
        await ctx.configure(search_max_results=cap)
        ctx.emu.log.clear()
        expect_success(await ctx.search([query]), f"search with searchMaxResults={cap}")
        bodies = [r.json for r in ctx.records("search")]
        require(len(bodies) == 1, f"expected one Search API request, saw {len(bodies)}")
        body = bodies[0]
        require(body.get("count") == cap, f"count={body.get('count')!r} with searchMaxResults={cap}", body=body)
        require(body.get("need_content") is False, "need_content must be sent as false", body=body)
        require(body.get("query") == query, "the query must pass through unchanged", body=body)


@check(
    "search.single.passthrough",
    "One distinct query returns the provider's result as is; exact duplicates cause one upstream request",
    seed="000",
    requires=(WS,),
)
async def single_passthrough(ctx: CheckContext) -> None:
    for queries in (["markdown"], ["coffee", "coffee"]):
        ctx.emu.log.clear()
        value = expect_success(await ctx.search(queries), f"search {queries}")
        records = ctx.records(ctx.search_route)
        require(len(records) == 1, f"{queries}: expected exactly one upstream request, saw {len(records)}")
        expected = expected_merge(records, queries, ctx.config.search_max_results)
        got = source_urls(value)
        want = [s.url for s in expected.sources]
        require(got == want, f"{queries}: sources differ from the provider's result", got=got, expected=want)
        require("### " not in str(value.get("content") or ""), f"{queries}: a single query must not be labelled")


@check(
    "search.validation.query_cap",
    "Over searchMaxQueries queries (counted before dedup), or none: WEB_INVALID_ARGUMENTS, no upstream request",
    seed="000",
    requires=(WS,),
)
async def query_cap(ctx: CheckContext) -> None:
    await ctx.configure(search_max_queries=4)
    for queries in (["markdown", "markdown", "coffee", "python", "rate limit"], []):
        outcome = await ctx.search(queries)
        expect_error(outcome, f"search {queries}", INVALID_ARGUMENTS)
        require(not ctx.records(), f"{queries}: {len(ctx.records())} upstream request(s) were sent before rejection")


@check(
    "search.redirect.not_followed",
    "A 3xx from the provider API is WEB_PROVIDER_ERROR and its Location is never visited",
    seed="001",
    requires=(WS,),
)
async def redirect_not_followed(ctx: CheckContext) -> None:
    ctx.emu.inject(ctx.search_route, Redirect(status=302), times=None)
    outcome = await ctx.search(["markdown"])
    await ctx.settle()
    hits = ctx.emu.log.trap_hits()
    require(not hits, f"the redirect Location was visited {len(hits)} time(s)")
    expect_error(outcome, "redirected search", PROVIDER_ERROR)


@check(
    "errors.codes",
    "Provider failures (401, 500, malformed body) are WEB_PROVIDER_ERROR with no value and no credential in the text",
    seed="001",
    requires=(WS,),
)
async def error_codes(ctx: CheckContext) -> None:
    route = ctx.search_route
    for label, fault in (("HTTP 401", Status(401)), ("HTTP 500", Status(500)), ("malformed body", Malformed())):
        ctx.emu.inject(route, fault)
        outcome = await ctx.search(["markdown"])
        expect_error(outcome, label, PROVIDER_ERROR)
    key = ctx.config.api_key
    await ctx.configure(api_key="dsweb-wrong-key-0000")
    outcome = await ctx.search(["markdown"])
    expect_error(outcome, "a rejected credential", PROVIDER_ERROR)
    for secret in (key, "dsweb-wrong-key-0000"):
        require(secret not in (outcome.text or ""), "the error text reveals the credential")


@check(
    "search.value.schema",
    "Search values follow schemas/web_search.output (one query, a merged batch, a truncated merge)",
    seed="000",
    requires=(WS,),
)
async def value_schema(ctx: CheckContext) -> None:
    for cap, queries in ((8, ["markdown"]), (8, ["markdown", "coffee"]), (3, ["search api", "rate limit"])):
        await ctx.configure(search_max_results=cap)
        value = expect_success(await ctx.search(queries), f"search {queries}")
        expect_schema(value, "web_search.output", f"search {queries} with searchMaxResults={cap}")
