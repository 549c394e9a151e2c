"""Fetch API checks (seed 001): result mapping, failures and redirects."""

from __future__ import annotations

import json

from ...emulator import Redirect
from ._base import PROVIDER_ERROR, CheckContext, check, expect_error, expect_schema, expect_success, require

WF, FAPI = "web_fetch", "fetch-api"
PAGE = "https://docs.example.test/api/search"
REFUSED = "https://paywall.example.test/reports/search-market-2026"


@check(
    "fetch.api.mapping",
    "Fetch API success maps to the requested URL, HTTP 200 and the Markdown body; a refusal is WEB_PROVIDER_ERROR",
    seed="001",
    requires=(WF, FAPI),
    provider="api",
)
async def fetch_mapping(ctx: CheckContext) -> None:
    value = expect_success(await ctx.fetch(PAGE), f"fetch {PAGE}")
    records = ctx.records("fetch")
    require(len(records) == 1, f"expected one Fetch API request, saw {len(records)}")
    require(records[0].json == {"url": PAGE}, "the Fetch API request must send the URL", body=records[0].json)
    upstream = json.loads(records[0].response_body)["content"]
    require(value.get("url") == PAGE, f"url={value.get('url')!r}, expected the requested URL")
    require(value.get("status_code") == 200, f"status_code={value.get('status_code')!r}, expected 200")
    body = value.get("body") or {}
    kind = body.get("kind")
    require(kind == "text", f"body kind {kind!r}, expected text (the shared result's closed union is html|text)")
    require(str(body.get("content", "")).strip() == upstream.strip(), "body differs from the Fetch API Markdown")
    expect_error(await ctx.fetch(REFUSED), f"fetch of a refused page {REFUSED}", PROVIDER_ERROR)


@check(
    "fetch.redirect.not_followed",
    "A 3xx from the Fetch API is WEB_PROVIDER_ERROR and its Location is never visited",
    seed="001",
    requires=(WF, FAPI),
    provider="api",
)
async def fetch_redirect(ctx: CheckContext) -> None:
    ctx.emu.inject("fetch", Redirect(status=307), times=None)
    outcome = await ctx.fetch(PAGE)
    await ctx.settle()
    require(not ctx.emu.log.trap_hits(), "the redirect Location was visited")
    expect_error(outcome, "redirected fetch", PROVIDER_ERROR)


@check(
    "fetch.value.schema",
    "Fetch values follow schemas/web_fetch.output",
    seed="001",
    requires=(WF, FAPI),
    provider="api",
)
async def fetch_value_schema(ctx: CheckContext) -> None:
    value = expect_success(await ctx.fetch(PAGE), f"fetch {PAGE}")
    expect_schema(value, "web_fetch.output", f"fetch {PAGE}")
