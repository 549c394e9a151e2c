"""Deployment shapes of the Search/Fetch APIs (seed 001): the configured base is complete, so every
request goes to exactly ``{base}/search`` or ``{base}/fetch``, whatever path the base has.

The emulator serves the tools routes under several prefixes at once (``Emulator.tools_bases``): the
public ``/v1/tools`` the other checks use, and the other deployments' shapes tabled here. A client
that appends a fixed ``/v1/tools/search`` to the base's origin still reaches a working route, so the
request log's path, not the answer, tells it apart.
"""

from __future__ import annotations

from ..cases import CARRY, Case
from ._base import CheckContext, check, expect_success, require
from .search import only_record, require_tools_api_headers

WS, API = "web_search", "search-api"
QUERY = "markdown"
PAGE = "https://docs.example.test/api/search"

SHAPES = (
    Case("a gateway prefix without /v1", "a fixed /v1/tools/<route> appended to the base's origin (or /v1 "
         "inserted into a base that has none)", {"prefix": "/deepseek/tools"}),
    Case("a prefix before /v1 (the development shape)", "the base's path replaced by the public /v1/tools, "
         "or the route joined as an absolute path that drops the prefix", {"prefix": "/api/v1/tools"}),
    # From an outside hunt: a base completed or trimmed by the client. The seed's base is complete: only /search or
    # /fetch is appended, whatever the base's path is (none at all, or one that ends in a route's name).
    Case("a bare origin", "a base with no path completed with the public /v1/tools (a prefix inferred), so the "
         "request goes to /v1/tools/search instead of /search", {"prefix": ""}),
    Case("a prefix that ends in /search", "a trailing /search or /fetch stripped from the base (taken for a full "
         "endpoint entered by mistake), so the request goes to /gw/search instead of /gw/search/search",
         {"prefix": "/gw/search"}),
    Case("another deployment's request", "a base other than the public one given more than the documented "
         "request: a query string, or a header beyond authorization and content-type", {"prefix": "/deepseek/tools"},
         family=CARRY),
)


def _require_path(ctx: CheckContext, route: str, prefix: str, what: str) -> None:
    record = only_record(ctx, route, what)
    want = f"{prefix}/{route}"
    require(record.path == want and not record.query,
            f"{what}: the request went to {record.path}{'?' + record.query if record.query else ''}, expected "
            f"{want}: the configured base is complete and only /{route} is appended", path=record.path)
    require_tools_api_headers(record, what)


@check(
    "search.api.base_shapes",
    "Search/Fetch requests go to the configured base plus /search or /fetch, whatever path the base has",
    seed="001",
    requires=(WS, API),
    provider="api",
    rule="Seed 001: direct retrieval 'appends /search or /fetch' to its base; the prefixes 'are never inferred "
    "from the hostname, so another deployment enters its complete base' (the public /v1/tools and the "
    "development /api/v1/tools differ). Under a gateway prefix without /v1 and under a prefix before /v1, a "
    "web_search (and, with fetch-api, a web_fetch) succeeds with exactly one request to that base plus "
    "/search (or /fetch), with no query string and only the documented authorization and JSON content type "
    "headers: never a fixed path on the base's origin. The same holds for a bare origin (the request path is "
    "exactly /search: no prefix is inferred) and for a prefix that itself ends in /search (nothing is stripped: "
    "/gw/search/search). A trailing slash on the "
    "base is not tried (the seed does not say how one joins).",
    cases=SHAPES,
)
async def base_shapes(ctx: CheckContext) -> None:
    fetch = {"web_fetch", "fetch-api"} <= ctx.hello.capabilities
    for case in SHAPES:
        prefix = case["prefix"]
        base = ctx.emu.base_url + prefix
        require(base in ctx.emu.tools_bases, f"{case.name}: the emulator does not serve {base}")  # a suite bug
        await ctx.configure(tools_base=base)
        ctx.fresh()
        expect_success(await ctx.search([QUERY]), f"{case.name}: web_search with base {prefix}")
        _require_path(ctx, "search", prefix, f"{case.name}: web_search")
        if fetch:
            ctx.fresh()
            expect_success(await ctx.fetch(PAGE), f"{case.name}: web_fetch with base {prefix}")
            _require_path(ctx, "fetch", prefix, f"{case.name}: web_fetch")
