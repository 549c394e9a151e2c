"""Every outcome of one provider request (seed 001): empty results succeed; each HTTP failure class,
an unreadable body and every redirect status fail with WEB_PROVIDER_ERROR after exactly one request
(no silent retry: the seeds give the provider 'no ... automatic retries'), never visiting a Location."""

from __future__ import annotations

from ...emulator import CutBody, Fault, Malformed, RateLimited, Status
from ..cases import Case
from ._base import PROVIDER_ERROR, CheckContext, check, expect_error, expect_success, require
from ._oracle import query_match
from ._script import answer_body, row, script

WS = "web_search"
QUERY = "markdown"
REDIRECT_STATUSES = (300, 301, 302, 303, 307, 308)  # every 3xx HTTP defines for redirection
WRONG_SHAPE = {"search": b'{"results": {"url": "https://a.example.test/"}}', "messages": b'{"content": "prose"}'}

FAILURES = (
    Case("HTTP 401", "a rejected credential reported as anything but the provider's failure", {"fault": "401"}),
    Case("HTTP 402", "insufficient balance treated as empty results", {"fault": "402"}),
    Case("HTTP 429 with Retry-After seconds", "a rate limit retried silently after Retry-After", {"fault": "429s"}),
    Case("HTTP 429 with a Retry-After date", "the date form of Retry-After honoured by retrying", {"fault": "429d"}),
    Case("HTTP 429 without Retry-After", "a rate limit retried with a default back-off", {"fault": "429"}),
    Case("HTTP 500", "a server error retried", {"fault": "500"}),
    Case("HTTP 502", "only 500 and 503 treated as server errors", {"fault": "502"}),
    Case("HTTP 503", "an overload retried", {"fault": "503"}),
    Case("HTTP 504", "a gateway timeout retried", {"fault": "504"}),
    Case("truncated JSON", "an unreadable body answered with no results", {"fault": "truncated"}),
    Case("HTML instead of JSON", "a non-JSON success body answered with no results", {"fault": "html"}),
    Case("JSON of the wrong shape", "a wrong-shaped body answered with no results", {"fault": "shape"}),
    Case("body cut mid-transfer", "a broken transfer retried or answered with no results", {"fault": "cut"}),
)


def failure_fault(name: str, route: str) -> Fault:
    faults: dict[str, Fault] = {
        "401": Status(401),
        "402": Status(402),
        "429s": RateLimited(retry_after=1),
        "429d": RateLimited(retry_after="Wed, 21 Oct 2026 07:28:00 GMT"),
        "429": RateLimited(retry_after=None),
        "500": Status(500),
        "502": Status(502, content_type="text/html", body=b"<html><body>Bad Gateway</body></html>"),
        "503": Status(503),
        "504": Status(504),
        "truncated": Malformed(),
        "html": Malformed(body=b"<html><body>not json</body></html>", content_type="text/html"),
        "shape": Malformed(body=WRONG_SHAPE[route]),
        "cut": CutBody(),
    }
    return faults[name]


@check(
    "errors.codes",
    "Every provider failure (401, 402, 429, 5xx, unreadable body) is WEB_PROVIDER_ERROR after one request",
    seed="001",
    requires=(WS,),
    rule="Seed 001: the provider has 'no shared rate scheduler, automatic retries, or fallback'; every "
    "non-success status is a failure ('every non-success status is a retrieval failure'), as is a body "
    "the provider cannot read. Each becomes WEB_PROVIDER_ERROR with no value after exactly one upstream "
    "request, and the message never carries the credential.",
    cases=FAILURES,
)
async def error_codes(ctx: CheckContext) -> None:
    route = ctx.search_route
    for case in FAILURES:
        ctx.fresh()
        ctx.emu.inject(route, failure_fault(case["fault"], route), when=query_match(route, QUERY))
        outcome = await ctx.search([QUERY])
        await ctx.settle()
        expect_error(outcome, case.name, PROVIDER_ERROR)
        sent = len(ctx.records(route))
        require(sent == 1, f"{case.name}: {sent} upstream requests; a failure must not be retried silently")
    key = ctx.config.api_key
    await ctx.configure(api_key="dsweb-wrong-key-0000")
    outcome = await ctx.search([QUERY])
    expect_error(outcome, "a rejected credential", PROVIDER_ERROR)
    for secret in (key, "dsweb-wrong-key-0000"):
        require(secret not in (outcome.text or ""), "the error text reveals the credential")


REDIRECTS = tuple(
    Case(f"HTTP {status}", f"HTTP {status} followed, or its body taken as an answer", {"status": status})
    for status in REDIRECT_STATUSES
)


def redirect_fault(ctx: CheckContext, route: str, status: int, body: bytes) -> Fault:
    """A redirect whose body is a valid answer, so a client that takes it as a success is caught too."""
    return Status(status, body=body, headers={"Location": ctx.emu.trap_url(f"{route}-{status}")})


@check(
    "search.redirect.not_followed",
    "Every 3xx from the search provider API is WEB_PROVIDER_ERROR and its Location is never visited",
    seed="001",
    requires=(WS,),
    rule="Seed 001: 'Harness rejects redirects of the API request'. Every redirection status HTTP defines "
    "(300, 301, 302, 303, 307, 308) fails the search with WEB_PROVIDER_ERROR, its body is not read as an "
    "answer, and its Location is never requested.",
    cases=REDIRECTS,
)
async def redirect_not_followed(ctx: CheckContext) -> None:
    route = ctx.search_route
    body = answer_body(route, QUERY, [row("https://redirected.example.test/", "Redirected")])
    for case in REDIRECTS:
        ctx.emu.faults.clear()
        ctx.emu.inject(route, redirect_fault(ctx, route, case["status"], body), times=None)
        outcome = await ctx.search([QUERY])
        await ctx.settle()
        hits = ctx.emu.log.trap_hits()
        require(not hits, f"{case.name}: the redirect Location was visited {len(hits)} time(s)")
        expect_error(outcome, f"{case.name}: redirected search", PROVIDER_ERROR)


EMPTY = (
    Case("nothing found", "empty results reported as an error", {"answers": {"empty one": []}}),
    Case("a batch where nothing is found", "an all-empty batch reported as an error",
         {"answers": {"empty one": [], "empty two": []}}),
    Case("a batch where one query finds nothing", "an empty query failing the batch",
         {"answers": {"empty one": [], "found two": [row("https://found.example.test/", "Found")]}}),
)


@check(
    "search.outcome.empty",
    "Empty results are a success: no sources, not truncated, no error",
    seed="001",
    requires=(WS,),
    rule="Seed 001: 'Empty results is successful.' A search whose provider finds nothing answers a value with "
    "no sources and truncated false (and, in a batch, does not fail its siblings).",
    cases=EMPTY,
)
async def empty_results(ctx: CheckContext) -> None:
    for case in EMPTY:
        answers = case["answers"]
        ctx.emu.faults.clear()
        for query, rows in answers.items():
            script(ctx, query, rows)
        value = expect_success(await ctx.search(list(answers)), case.name)
        found = sum(len(rows) for rows in answers.values())
        sources = value.get("sources")
        require(isinstance(sources, list) and len(sources) == found,
                f"{case.name}: sources {sources!r}, expected {found}")
        require(value.get("truncated") is False, f"{case.name}: truncated={value.get('truncated')!r}")
