"""Every outcome of one provider request (seed 001): empty results succeed; each HTTP failure class,
an unreadable body and every redirect status fail with WEB_PROVIDER_ERROR after exactly one request
(no silent retry: the seeds give the provider 'no ... automatic retries'), never visiting a Location."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from ..._exceptions import WebError
from ...emulator import CutBody, Delay, Fault, Malformed, RateLimited, RequestRecord, Status, ToolError
from ..cases import ORDER, Case
from ..targets import CallOutcome, TargetError
from ._base import PROVIDER_ERROR, CheckContext, check, expect_error, expect_success, require
from ._fakes import FOREIGN_CREDENTIALS, HEX_SHAPED_KEY, LONG_KEY, SHORT_KEY, WRONG_KEY
from ._leaks import leak
from ._oracle import query_match
from ._script import answer_body, row, script

WS = "web_search"
QUERY = "markdown"
REDIRECT_STATUSES = (300, 301, 302, 303, 307, 308)  # every 3xx HTTP defines for redirection
# The deadline (timeout_s) the "answered past timeout_s" rows configure, and how long past it the emulator waits
# before it would answer (it stops waiting once the client has gone): half a second of each run of the row.
LATE_DEADLINE = 0.5
LATE_ANSWER = 3.0
# Every 4xx that no other row of errors.codes names (401, 402, 403, 404, 409 and 429 have rows of their own).
OTHER_4XX = (400, 405, 406, 408, 410, 411, 412, 413, 414, 415, 416, 417, 418, 421, 422, 423, 424, 425, 426, 428, 431,
             451, 499)
WRONG_SHAPE = {"search": b'{"results": {"url": "https://a.example.test/"}}', "messages": b'{"content": "prose"}'}


def _messages_result(items: object) -> bytes:
    """A Messages answer whose one web_search_tool_result holds ``items``."""
    tool = {"type": "server_tool_use", "id": "srvtoolu_shape", "name": "web_search", "input": {"query": QUERY}}
    block = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_shape", "content": items}
    return json.dumps({"type": "message", "role": "assistant", "content": [tool, block]}).encode()


# 200 answers that are no search answer at all (issue: a 200 without results became an empty search):
# seed 001's 'Empty results is successful' speaks of a results list that is empty, not of one that is
# missing, null or unreadable. Per route, the same wrong shape in that protocol's own format.
SHAPES: dict[str, dict[str, bytes]] = {
    "empty-object": {"search": b"{}", "messages": b"{}"},
    "error-envelope": {
        "search": b'{"error": {"message": "Service temporarily unavailable", "type": "server_error"}}',
        "messages": b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}',
    },
    "null-results": {"search": b'{"results": null}',
                     "messages": b'{"type": "message", "role": "assistant", "content": null}'},
    "non-objects": {"search": b'{"results": ["https://a.example.test/", 7]}',
                    "messages": _messages_result(["https://a.example.test/", 7])},
    "no-url": {"search": b'{"results": [{"title": "No URL", "snippet": "s"}]}',
               "messages": _messages_result([{"type": "web_search_result", "title": "No URL"}])},
    "url-not-text": {"search": b'{"results": [{"url": 7, "title": "Number"}]}',
                     "messages": _messages_result([{"type": "web_search_result", "url": 7, "title": "Number"}])},
    # An answer given without searching: no results list at all; in Messages, prose and no search result block.
    "no-search": {"search": b'{"answer": "Markdown is a markup language."}',
                  "messages": json.dumps({"type": "message", "role": "assistant", "content": [
                      {"type": "text", "text": "Markdown is a markup language."}]}).encode()},
    # From a hunt (Q-E5): a 200 with no body at all read as a search that found nothing. A body the provider
    # cannot read is a failure, and an empty one holds no results list to be empty.
    "empty-body": {"search": b"", "messages": b""},
}


def _paused() -> bytes:
    """A Messages answer the server paused (stop_reason pause_turn) after its server_tool_use, before any
    web_search_tool_result: the search never gave its result."""
    answer = json.loads(answer_body("messages", QUERY, []))
    answer["content"] = [block for block in answer["content"] if block["type"] == "server_tool_use"]
    answer["stop_reason"] = "pause_turn"
    return json.dumps(answer).encode()


PAUSED = _paused()
PAUSED_TOOL_USE = json.loads(PAUSED)["content"][0]["id"]


def _continues_paused(record: RequestRecord) -> bool:
    """A Messages request that continues the paused turn: an assistant message carries its server_tool_use back
    (as a client continues a pause_turn), not the first request sent again."""
    body = record.json
    messages = body.get("messages") if isinstance(body, dict) else None
    return isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") == "assistant" and PAUSED_TOOL_USE in json.dumps(m.get("content"))
        for m in messages)

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
    Case("200 with an empty object", "a 200 without results read as a search that found nothing",
         {"fault": "empty-object"}),
    Case("200 carrying an error envelope", "an error envelope in a 200 read as a search that found nothing",
         {"fault": "error-envelope"}),
    Case("results null", "null results taken for an empty list", {"fault": "null-results"}),
    Case("results holding non-objects", "items that are not objects skipped, leaving an empty search",
         {"fault": "non-objects"}),
    Case("a result without url", "a result with no url skipped, leaving an empty search", {"fault": "no-url"}),
    Case("a result whose url is not text", "a non-text url skipped or turned into text", {"fault": "url-not-text"}),
    Case("200 answered without searching", "an answer holding no search result at all (in Messages, prose "
         "only) read as a search that found nothing", {"fault": "no-search"}),
    # From a hunt (S2-6): a Messages answer the server paused (stop_reason pause_turn) holding its server_tool_use
    # but no web_search_tool_result read as a search that found nothing. The search never gave its result, so no
    # results list is there to be empty. Continuing the paused turn (as clients of the Messages API do) is open:
    # each continuation is paused too here, and the search still fails.
    Case("200 paused before its search result", "an answer the server paused (stop_reason pause_turn) after its "
         "server_tool_use, before any web_search_tool_result, read as a search that found nothing",
         {"fault": "paused", "route": "messages"}),
    Case("HTTP 503 with an answer body", "the body read as an answer before the status is looked at",
         {"fault": "503-answer"}, family=ORDER),
    Case("HTTP 404 with an answer body", "only 5xx looked at before the body is read as an answer",
         {"fault": "404-answer"}, family=ORDER),
    # From a hunt (Q-E1): the failure statuses taken from the guide's own list (400-404, 408, 429, 5xx), so any
    # other non-success status had its body read as the answer. Every non-success status is a failure.
    Case("HTTP 409 with an answer body", "only the statuses the guide names (400-404, 408, 429, 5xx) taken for "
         "failures: any other non-success status has its body read as the answer", {"fault": "409-answer"},
         family=ORDER),
    # From a hunt (Q-E8): a Search API 403 (a refused query) read as a search that found nothing. Only the opt-in
    # retry check (search.api.retry.never) saw it, so a target without retries was certified.
    Case("HTTP 403 with an answer body", "a 403 (a refused query) read as a search that found nothing, or its "
         "body read as the answer", {"fault": "403-answer"}, family=ORDER),
    # From the same hunt (Q-E8): search.api.retry.never tries the 4xx no row here names, but only on a target with
    # the opt-in retries; here every target is judged on them. Each status is its own search, failed after one request.
    Case("every other 4xx with an answer body", "a list of failure statuses that names 409 but not a 4xx such as "
         "410, 422 or 451, whose body is then read as the answer (or as a search that found nothing)",
         {"statuses": OTHER_4XX}, family=ORDER),
    Case("body cut mid-transfer", "a broken transfer retried or answered with no results", {"fault": "cut"}),
    # A JSON-escaped lone surrogate is no Unicode text: quoted into the failure, the model-visible text would
    # hold one (a model API refuses it, a UTF-8 encoder crashes). Replaced, dropped or not quoted are all right.
    Case("HTTP 500 whose message holds a lone surrogate", "the upstream message quoted with its lone surrogate, "
         "so the failure the model sees is no Unicode text", {"fault": "500-lone-surrogate", "unicode": True}),
    # From a hunt (Q-E5): a 200 with no body at all read as a search that found nothing (SHAPES["empty-body"]).
    Case("200 with an empty body", "a success with no body at all read as a search that found nothing",
         {"fault": "empty-body"}),
    # From a hunt (Q-E3): a request the provider's own deadline (timeout_s) ended turned into a search that found
    # nothing. No answer arrived, so nothing was found or searched: the search fails (which WEB_* code is open).
    Case("answered past timeout_s", "a request the provider's own deadline ended read as a search that found "
         "nothing (an empty success)", {"fault": "late", "deadline": LATE_DEADLINE}),
)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


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
        "late": Delay(LATE_ANSWER),
        # json.dumps escapes the lone surrogate as \\ud800, as a service's JSON encoder would.
        "500-lone-surrogate": Status(500, body=json.dumps({"error": {"message": "overloaded near caf\ud800 shard",
                                                                    "type": "server_error"}}).encode()),
        "paused": Malformed(body=PAUSED),
    }
    if name in SHAPES:
        return Malformed(body=SHAPES[name][route])
    if name.endswith("-answer"):  # a failure status whose body is a valid answer naming one source
        return Status(int(name[:3]), body=answer_body(route, QUERY, [row("https://status.example.test/", "S")]))
    return faults[name]


@check(
    "errors.codes",
    "Every provider failure (401, 402, 429, 5xx, unreadable body) is WEB_PROVIDER_ERROR after one request",
    seed="001",
    requires=(WS,),
    rule="Seed 001: the provider has 'no shared rate scheduler, automatic retries, or fallback'; every "
    "non-success status is a failure ('every non-success status is a retrieval failure'; not only the statuses "
    "the guide names: a 403, a 409 and every other 4xx too), as is a body "
    "the provider cannot read: a 200 that is no search answer (an empty body, {}, an error envelope, null "
    "results, results "
    "that are not objects, a result without a text url, an answer given without searching: in Messages, "
    "prose and no web_search_tool_result; an answer whose search never gave its result: in Messages, one the "
    "server paused, stop_reason pause_turn, after its server_tool_use and before any web_search_tool_result, "
    "where continuing the paused turn is open but a turn that never gives the result fails) is a failure too, "
    "since 'Empty results is "
    "successful' speaks of an empty results list, not a missing one. The status decides first: a failure "
    "status fails even when its body is a valid answer. Each becomes WEB_PROVIDER_ERROR with "
    "no value after exactly one upstream "
    "request, and the message never carries the credential. A request the provider's own deadline (timeout_s) "
    "ends brought no answer, so it is a failure too, never a search that found nothing (seed 000: a failed "
    "search fails its call); which WEB_* code it carries is open, and so is keeping to timeout_s at all (no seed "
    "sets a deadline): a target that waits gives the late answer itself. A message quoted from the upstream "
    "stays Unicode text: a lone surrogate its JSON escapes (seed 001's 'malformed responses') is replaced, "
    "dropped or not quoted, never handed to the model.",
    cases=FAILURES,
)
async def error_codes(ctx: CheckContext) -> None:
    route = ctx.search_route
    for case in FAILURES:
        if case.params.get("route", route) != route:  # a row of one protocol's answers
            continue
        statuses = case.params.get("statuses", ())
        for fault in tuple(f"{status}-answer" for status in statuses) or (case["fault"],):
            what = f"{case.name}: HTTP {fault[:3]}" if statuses else case.name
            ctx.fresh()
            if fault == "paused":  # every request paused, a continuation of the turn (its prompt not last) too
                ctx.emu.inject(route, failure_fault(fault, route), times=None)
            else:
                ctx.emu.inject(route, failure_fault(fault, route), when=query_match(route, QUERY))
            outcome = await _within(ctx, case, ctx.search, [QUERY])
            await ctx.settle()
            records = ctx.records(route)
            sent = len(records)
            if fault == "paused":
                expect_error(outcome, what, PROVIDER_ERROR)
                resent = [r for r in records[1:] if not _continues_paused(r)]
                require(sent >= 1, f"{what}: no upstream request was sent")
                require(not resent, f"{what}: {len(resent)} of {sent} upstream requests repeat the "
                        "first instead of continuing the paused turn; a failure must not be retried silently")
                continue
            if "deadline" in case.params:
                value = outcome.value if isinstance(outcome.value, dict) else {}
                judge_late(outcome, what, case, sent, bool(value.get("sources")))
                continue
            expect_error(outcome, what, PROVIDER_ERROR)
            require(sent == 1, f"{what}: {sent} upstream requests; a failure must not be retried silently")
            if case.params.get("unicode"):
                shown = f"{outcome.text or ''}{outcome.error_message}"
                require(not _LONE_SURROGATE.search(shown), f"{what}: the failure holds a lone surrogate, so it "
                        f"is no Unicode text: {shown[:160]!a}")
    key = ctx.config.api_key
    await ctx.configure(api_key=WRONG_KEY)
    outcome = await ctx.search([QUERY])
    expect_error(outcome, "a rejected credential", PROVIDER_ERROR)
    for secret in (key, WRONG_KEY):
        require(secret not in (outcome.text or ""), "the error text reveals the credential")


def judge_late(outcome: CallOutcome, what: str, case: Case, sent: int, answered: bool) -> None:
    """A row run under a deadline (timeout_s) the provider's answer comes after: a WEB_* error, any code, its request
    sent or not yet (a deadline that fired while a loaded runner was still connecting); or the late answer itself
    (``answered``), from a target that does not keep to timeout_s (no seed sets a deadline: a review found the row
    failing such a target); never a success without that answer, which is the wrong reading the row is for."""
    require(sent <= 1, f"{what}: {sent} upstream requests; a failure must not be retried silently")
    if outcome.ok:
        require(answered, f"{what}: a success without the answer the provider sent after the deadline: a request "
                "the deadline ended read as one that found nothing", catches=case.catches)
        return
    expect_error(outcome, what)


async def _within(
    ctx: CheckContext, case: Case, call: Callable[..., Awaitable[CallOutcome]], *args: Any
) -> CallOutcome:
    """``call(*args)``, under the deadline (timeout_s) ``case`` configures, if it names one; the run's own after."""
    if "deadline" not in case.params:
        return await call(*args)
    timeout = ctx.config.timeout_s
    await ctx.configure(timeout_s=case["deadline"])
    try:
        return await call(*args)
    finally:
        await ctx.configure(timeout_s=timeout)


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


# --- the credential never reaches what the model or a report sees ---------------------------------

KEY = "{key}"  # stands for the configured credential in the tables below
KEY_BODY = "{key body}"  # the configured key after its "sk-"
SECRET_ECHOES = (
    Case("401 quoting the key in error.message", "an upstream message quoted as is (the guide's 401 names the key)",
         {"status": 401, "body": {"error": {"message": f"Authentication Fails, Your api key: {KEY} is invalid",
                                            "type": "authentication_error"}}}),
    Case("400 whose error is a string holding the key", "only error.message scrubbed, not error as a string",
         {"status": 400, "body": {"error": f"rejected request signed with {KEY}"}}),
    Case("500 quoting the key in a top-level message", "only error.* scrubbed, not the top-level message",
         {"status": 500, "body": {"message": f"upstream call with {KEY} failed"}}),
    # From a hunt (Q-E2): an error body that is no JSON object (plain text, a JSON string) quoted as sent, the
    # scrubbing kept for the message read out of a JSON object. A text/plain body is sent as it stands.
    Case("401 whose text/plain body quotes the key", "only the message read out of a JSON error object scrubbed: "
         "a body that is not one (plain text) quoted as sent", {"status": 401, "body": f"Invalid API key {KEY}",
                                                                "content_type": "text/plain"}),
    Case("401 whose body is a JSON string quoting the key", "only a JSON object's error fields scrubbed: a body "
         "that is a JSON string quoted as sent", {"status": 401, "body": f"Invalid API key {KEY}"}),
    # From a hunt (Q-E7): the redirect failure naming the Location it refused, unscrubbed. Any 3xx fails; a
    # Location the upstream wrote may carry the key too.
    Case("302 whose Location quotes the key", "the refused redirect's Location named in the failure as sent",
         {"status": 302, "body": {"error": "moved"},
          "headers": {"Location": f"http://login.example.test/?api_key={KEY}"}}),
    Case("key past the first 490 characters", "the detail cut before it is scrubbed, so a piece of the key shows",
         {"status": 503, "body": {"error": {"message": "x" * 490 + KEY + " overloaded"}}}),
    Case("the key recurring through a long message", "the detail cut before it is scrubbed: a cut at any of "
         "14 of every 24 positions leaves 10 or more characters of a key that is no longer whole",
         {"status": 401, "body": {"error": {"message": " ".join([KEY] * 160)}}}),
    Case("key near the start of a 4,000-character text", "the text cut to a window that ends inside the key, "
         "then scrubbed", {"status": 502, "body": {"error": {"message": "x" * 480 + KEY + "y" * 3588}}}),
    Case("the key after 4,580 spaces", "the text cut to a window whose end splits the key, then its whitespace "
         "collapsed: the piece the scrubber cannot recognise moves to the front and shows",
         {"status": 401, "body": {"error": {"message": " " * 4580 + KEY + " rejected"}}}),
    Case("the key reversed and in hex after 4,576 spaces", "the window's split last word kept whole: the part of "
         "the key it holds is in a form looked for only over the whole key (reversed, then hex), so it shows once "
         "the spaces before it collapse", {"status": 401, "encode": ("hex-reversed", ""),
                                          "body": {"error": {"message": " " * 4576 + "{encoded} rejected"}}}),
    Case("429 whose Retry-After header is the key", "a Retry-After hint quoted without scrubbing",
         {"status": 429, "body": {"error": {"message": "slow down"}}, "headers": {"Retry-After": KEY}}),
    # An upstream may echo a part of the key (a prefix it logged, a key cut by its own limit): "part"
    # slices the key before it is put in. A 10-character piece is what the judge counts as showing it.
    Case("401 quoting the key's first 12 characters", "only the whole key scrubbed: a part of it quoted as is",
         {"status": 401, "part": (0, 12),
          "body": {"error": {"message": f"Authentication Fails, Your api key: {KEY}... is invalid"}}}),
    Case("a message quoting the key's last 12 characters", "parts of the key looked for only at its start "
         "(a prefix mask)", {"status": 401, "part": (-12, None),
                             "body": {"error": {"message": f"key ending in {KEY} rejected"}}}),
    Case("a URL quoting 12 characters from the middle of the key, percent-encoded",
         "parts of the key looked for only as written, not encoded",
         {"status": 401, "part": (5, 17), "encode": ("percent", "/v1/tools/search?key="),
          "body": {"error": {"message": "bad key: {encoded}"}}}),
    Case("a base64 dump quoting 12 characters from the middle of the key",
         "parts of the key looked for as written and percent-encoded, but base64 looked for only over the whole key",
         {"status": 401, "part": (5, 17), "encode": ("base64", "key="),
          "body": {"error": {"message": "bad request: {encoded}"}}}),
    Case("429 whose Retry-After header is the key's first 14 characters",
         "the Retry-After hint scrubbed of the whole key only, though the error text is scrubbed of its parts",
         {"status": 429, "part": (0, 14), "body": {"error": {"message": "slow down"}},
          "headers": {"Retry-After": KEY}}),
    # An upstream may echo the key encoded (a dump of the request, a URL): "in any encoding" means these too.
    # The prefixes put the key at each of the three byte offsets of a base64 group.
    *(Case(f"a base64 dump of the request, the key at byte {len(prefix) % 3} of a group",
           "the key scrubbed only as written, not base64-encoded" if not i else
           "base64 looked for at one alignment of the key only",
           {"status": 401, "encode": ("base64", prefix), "body": {"error": {"message": "bad request: {encoded}"}}})
      for i, prefix in enumerate(("token=", "apikey=", "auth="))),
    *(Case(f"a URL echoing the key {shown}", catches,
           {"status": 401, "encode": (how, "/v1/tools/search?key="),
            "body": {"error": {"message": "bad key: {encoded}"}}})
      for how, shown, catches in (
          ("percent", "percent-encoded (%XX)", "percent-encoded forms of the key not scrubbed"),
          ("percent-lower", "percent-encoded in lower case (%xx)", "only upper-case %XX forms scrubbed"),
          ("percent-twice", "percent-encoded twice (%25XX)", "one percent-decoding only"),
          ("percent-mixed", "with only its hyphens percent-encoded (%2D)",
           "a percent form looked for only whole: each character encoded, or none"),
      )),
    Case("the key upper-cased in a message", "the key looked for in its own case only",
         {"status": 401, "encode": ("upper", "api key "), "body": {"error": {"message": "invalid {encoded}"}}}),
    Case("an HTML error page quoting the key as character references", "HTML entities of the key not scrubbed",
         {"status": 401, "encode": ("entities", "key="),
          "body": {"error": {"message": "<p>invalid {encoded}</p>"}}}),
    Case("a hex dump of the request", "the key in hexadecimal not scrubbed",
         {"status": 401, "encode": ("hex", "authorization: Bearer "),
          "body": {"error": {"message": "dump {encoded}"}}}),
    Case("a hex dump in upper case", "hex looked for in lower case only",
         {"status": 401, "encode": ("hex-upper", "authorization: Bearer "),
          "body": {"error": {"message": "dump {encoded}"}}}),
    Case("a byte dump of the request as backslash-x escapes", "\\xXX escapes of the key not scrubbed",
         {"status": 401, "encode": ("x-escapes", "key="), "body": {"error": {"message": "raw {encoded}"}}}),
    Case("a C byte array of the key (0x before each byte)", "bytes written 0xHH each not taken for hex: only "
         "plain and \\x-escaped hex of the key scrubbed",
         {"status": 401, "encode": ("c-bytes", ""), "body": {"error": {"message": "key bytes {{encoded}}"}}}),
    Case("a message quoting the key as JSON unicode escapes", "JSON \\uXXXX escapes of the key not scrubbed",
         {"status": 401, "encode": ("json-escapes", "key="), "body": {"error": {"message": "invalid {encoded}"}}}),
    Case("an HTML error page quoting the key as hex character references",
         "only decimal character references (&#NN;) scrubbed, not hex ones (&#xHH;)",
         {"status": 401, "encode": ("entities-hex", "key="),
          "body": {"error": {"message": "<p>invalid {encoded}</p>"}}}),
    Case("an HTML error page quoting the key as zero-padded references without semicolons",
         "only the canonical &#NN; form scrubbed (HTML reads &#0100 as the same character)",
         {"status": 401, "encode": ("entities-loose", "key="),
          "body": {"error": {"message": "<p>invalid {encoded}</p>"}}}),
    # From the secret-echo hunt's hostile endpoint: forms a reader (or a model) reads through.
    *(Case(f"the key {shown}", catches,
           {"status": 401, "encode": (how, "key "), "body": {"error": {"message": "invalid {encoded}"}}})
      for how, shown, catches in (
          ("zero-width", "with a zero-width space between its characters",
           "invisible characters inside the key taken for a break in it: the key shown with them"),
          ("spaced", "spelled out with spaces between its characters",
           "separators between the key's characters taken for a break in it"),
          ("reversed", "written backwards", "only forward forms of the key looked for"),
          # From the seed-2 mutation draw: the two forms above at once.
          ("spaced-reversed", "spelled out backwards", "spelled-out forms looked for forward only (backwards only "
           "as written whole)"),
          ("look-alike", "with Cyrillic look-alike letters", "look-alike letters (Cyrillic е, о, а, к, у) taken "
           "for other characters: the key shown as it reads"),
          ("full-width", "in full-width letters", "compatibility forms (full-width letters) not folded to ASCII"),
          ("json-zero-width", "in a quoted JSON dump, with escaped zero-width spaces (\\u200b) between its characters",
           "JSON escapes of invisible characters read as text: the key between them taken for broken"),
          ("utf-16", "as UTF-16 text read as bytes (a NUL after each character)",
           "control characters inside the key taken for a break in it"),
          ("hex-reversed", "reversed, then in hexadecimal", "hex looked for in the key's forward order only"),
          ("base64-twice", "base64-encoded twice", "base64 decoded one level only"),
      )),
    # The key's base64 core starts at a different character of the inner text after each prefix, so the outer
    # encoding holds it at each of the three byte offsets of a group ("key " gives 0 above).
    *(Case(f"the key base64-encoded twice, its inner encoding at byte {offset} of an outer group",
           "base64 of base64 looked for at one alignment of the inner text only",
           {"status": 401, "encode": ("base64-twice", prefix), "body": {"error": {"message": "invalid {encoded}"}}})
      for offset, prefix in ((1, "auth "), (2, "token="))),
    # From the seed-2 mutation draw: matches that touch merged into one span (the last two copies here).
    Case("the key spelled out three times, the last two run together", "matches of the key that touch merged "
         "wrongly: an earlier match left unredacted, or the scrubber raising",
         {"status": 401, "encode": ("spaced", ""),
          "body": {"error": {"message": "invalid {encoded}; retried with {encoded}{encoded}"}}}),
    Case("the key with its characters alternately percent-encoded and character references",
         "each encoding looked for only over the whole key, not mixed per character",
         {"status": 401, "encode": ("percent-entities", "key="),
          "body": {"error": {"message": "<p>invalid {encoded}</p>"}}}),
    # Credential-shaped text that is not the target's key, ahead of the key: whether a target redacts such
    # text is its own caution (no seed decides it; the judge looks only for the key), but finding it must not
    # end the scrubbing.
    *(Case(f"an upstream message quoting {shown} ahead of the key",
           f"a scrubber that, once it finds {shown}, redacts credential shapes only and leaves the key",
           {"status": 401, "body": {"error": {"message": f"the request carried {text}; key {KEY} rejected"}}})
      for shown, text in FOREIGN_CREDENTIALS),
    # From the seed-5 mutation draw: a part of the key has no whole-key form to fall back on, so marks that a
    # reader reads through (a zero-width space, an accent, an enclosing keycap on each character) must be read
    # through for the parts too. Last, so the first failure a break meets before them is unchanged.
    *(Case(f"12 characters from the middle of the key {shown}", catches,
           {"status": 401, "part": (5, 17), "encode": (how, ""), "body": {"error": {"message": "bad key {encoded}"}}})
      for how, shown, catches in (
          ("zero-width", "with a zero-width space between its characters",
           "format characters (Cf) read through only in whole-key forms: a part of the key shown with them"),
          ("combining", "with a combining accent on each character",
           "combining marks (Mn) not read through: a part of the key shown with an accent on each character"),
          ("enclosing", "with an enclosing keycap mark on each character",
           "enclosing marks (Me) not read through: a part of the key shown with a keycap round each character"),
          # Found by two helpers of the seed-5/6 draws: the reference scrubbed a part spelled out only as a whole key.
          ("spaced", "spelled out with spaces between its characters",
           "spelled-out forms looked for only of the whole key: a part of it spelled out shown"),
      )),
    # From the seed-5 mutation draw: an encoding no row had, and keys of other lengths (``key``: the row configures
    # that key, then the configured one again). Last, for the same reason as the rows above.
    Case("the key as %uXXXX escapes", "%uXXXX escapes of the key (JavaScript's escape(), some gateways' logs) looked "
         "for only backslashed: the key shown that way",
         {"status": 401, "encode": ("percent-u", "key="), "body": {"error": {"message": "invalid {encoded}"}}}),
    Case("a key of six characters, base64-encoded", "base64 looked for only where it is longer than eight "
         "characters: the eight that encode a six-character key, whole, shown",
         {"status": 401, "key": "short", "encode": ("base64", "token="),
          "body": {"error": {"message": "bad request: {encoded}"}}}),
    Case("a key of 67 characters, base64-encoded twice", "base64 of base64 looked for as if base64 took four "
         "bytes of the inner text at a time: each outer form covers three quarters of the inner text, and the rest "
         "of a long key shows", {"status": 401, "key": "long", "encode": ("base64-twice", "key "),
                                 "body": {"error": {"message": "invalid {encoded}"}}}),
    # From the seed-6 mutation draw: JSON escapes inside a quoted dump (an inner message JSON-encoded with
    # ensure_ascii, then quoted), which a reader reads through. Last, like the rows above, for the same reason.
    Case("the key in full-width letters in a quoted JSON dump (each letter a \\uXXXX escape)",
         "JSON \\uXXXX escapes dropped instead of decoded before full-width letters are folded: a key written "
         "wholly in such escapes read as no text at all, so it shows",
         {"status": 401, "encode": ("json-full-width", "key "), "body": {"error": {"message": "invalid {encoded}"}}}),
    Case("the key spelled out in a quoted JSON dump, a line-break escape (\\n) in place of one of its spaces",
         "JSON line-break escapes (\\n) read through when the key is looked for but kept when its place in the "
         "text is worked out: the key found, then left as it was",
         {"status": 401, "encode": ("spaced-json-break", ""), "body": {"error": {"message": "invalid {encoded}"}}}),
    # Found by the seed-5 leftovers' helper (last, for the same reason): a scrubber that decodes \uXXXX only after
    # one backslash drops the key's t, r and n with the "\t", "\r", "\n" it then sees, so the rest matches nothing.
    Case("a message quoting the key as JSON unicode escapes escaped again",
         "only singly escaped \\uXXXX read: the key as \\\\uXXXX (a JSON dump quoted inside JSON) shown",
         {"status": 401, "encode": ("json-escapes-twice", "key="),
          "body": {"error": {"message": "invalid {encoded}"}}}),
    # From the seed-7 mutation draw (last, for the same reason): base85 read with a wrong group width still found a
    # key that ends the encoded text, so the dump goes on past the key (its line break) and the key starts at byte 3
    # of a group, where a reader that slices base85 six characters a group misses it.
    Case("a base85 dump of the key's header line, the key at byte 3 of a group",
         "base85 (RFC 1924's alphabet, as git's binary patches and Python's b85encode write it) of the key not "
         "scrubbed, or looked for a wrong number of characters a group: the key shown",
         {"status": 401, "encode": ("base85-line", "Bearer "),
          "body": {"error": {"message": "bad request: {encoded}"}}}),
    # From the seed-7 mutation draw (last, like the rows above): a part of the key written a byte or an escape at a
    # time with separators between them, as a hex dump or a log of escapes shows it. Each separator breaks the
    # per-character forms, and the compact view reads whole keys only, so the reference showed these 12 characters.
    *(Case(f"12 characters from the middle of the key {shown}", catches,
           {"status": 401, "part": (5, 17), "encode": (how, ""), "body": {"error": {"message": "dump: {encoded}"}}})
      for how, shown, catches in (
          ("hex-spaced", "in a hex dump (a space between bytes)",
           "parts of the key looked for in hex only where the bytes run together: a dump's part shown"),
          ("percent-spaced", "percent-encoded, a space between characters",
           "parts of the key looked for percent-encoded only where the escapes run together: a part shown"),
          # Found by the maintainer (the scrubber's docstring listed it as not yet covered): "0x" before each byte
          # hides the hex from a dump reader that reads bare pairs and \x escapes only.
          ("c-bytes", "as a C byte array (0x before each byte)",
           "parts of the key read in hex dumps only as bare pairs or \\x escapes: a C array's part shown"),
      )),
    # From the seed-7 mutation draw: the window's trim (scrub_prefix) read the cut as splitting a secret only when
    # it split a word, but a form of the key can hold whitespace; cut at a separator, a C array of the key (whose
    # parts no reading looks for) showed its first ten bytes once the spaces before it collapsed.
    Case("a C byte array of the key after 4,537 spaces", "the window cut back only when its end splits a word: a "
         "byte array of the key cut between two bytes shows its first ten once the spaces before it collapse",
         {"status": 401, "encode": ("c-bytes", ""), "body": {"error": {"message": " " * 4537 + "{encoded} rejected"}}}),
    # From the seed-8 mutation draw: a part of the key as UTF-16 read as bytes (a NUL after each character). The
    # NULs are controls that do not show, so a reader takes the part for the characters it holds; a scrubber that
    # took them for a break (or whitespace for invisible instead) showed these 12 characters.
    Case("12 characters from the middle of the key as UTF-16 text read as bytes (a NUL after each character)",
         "control characters inside a part of the key taken for a break in it: the part shown",
         {"status": 401, "part": (5, 17), "encode": ("utf-16", ""), "body": {"error": {"message": "dump: {encoded}"}}}),
    # From the seed-8 draw too: the key backwards in fragments of three. No fragment is a piece and no run is
    # spelled out a character at a time, so only the whole key read backwards with the spaces dropped shows it.
    Case("the key backwards in fragments of three characters, spaces between",
         "whole-key forms run together looked for forward only: the key written backwards in fragments shown",
         {"status": 401, "encode": ("fragments-reversed", ""), "body": {"error": {"message": "invalid {encoded}"}}}),
    # From a hunt (Q-E6): a transport failure's text quoted as the HTTP library wrote it, unscrubbed. httpx and h11
    # quote the bytes the server sent, so an endpoint answering a malformed status line that echoes the key showed
    # it. The row's endpoint is a bare TCP server on loopback (no emulator route): it answers "status_line", then
    # closes.
    Case("a malformed status line quoting the key", "a transport failure's text quoted unscrubbed (the HTTP "
         "library's error quotes the bytes the server sent, the key among them)",
         {"status_line": f"XTTP/1.1 401 bad key {KEY}\r\n\r\n"}),
)
ROW_KEYS = {"short": SHORT_KEY, "long": LONG_KEY}  # the keys rows configure by name
ENCODED = "{encoded}"  # where the encoded key goes in an echo body
LOOK_ALIKE = str.maketrans("eoaky", "\u0435\u043e\u0430\u043a\u0443")  # Cyrillic letters drawn as these


def encoded(how: str, text: str) -> str:
    """``text`` written the ``how`` way, as it stands inside a JSON string of the echo body."""
    return json.dumps(encoded_text(how, text))[1:-1]


def encoded_text(how: str, text: str) -> str:
    """``text`` written the ``how`` way (see SECRET_ECHOES), as the upstream's message reads once parsed."""
    data = text.encode()
    once = "".join(f"%{b:02X}" for b in data)
    forms = {
        "base64": base64.b64encode(data).decode("ascii"),
        "percent": once,
        "percent-lower": once.lower(),
        "percent-twice": once.replace("%", "%25"),
        "percent-mixed": text.replace("-", "%2D"),
        "upper": text.upper(),
        "entities": "".join(f"&#{ord(c)};" for c in text),
        "hex": data.hex(),
        "hex-upper": data.hex().upper(),
        "x-escapes": "".join(f"\\x{b:02x}" for b in data),
        "c-bytes": ", ".join(f"0x{b:02x}" for b in data),
        "json-escapes": "".join(f"\\u{ord(c):04x}" for c in text),
        "json-escapes-twice": "".join(f"\\\\u{ord(c):04x}" for c in text),
        "entities-hex": "".join(f"&#x{ord(c):x};" for c in text),
        "entities-loose": "".join(f"&#{ord(c):04d}" for c in text),
        "percent-entities": "".join(f"%{ord(c):02X}" if i % 2 else f"&#{ord(c)};" for i, c in enumerate(text)),
        "zero-width": "\u200b".join(text),
        "spaced": " ".join(text),
        "reversed": text[::-1],
        "look-alike": text.translate(LOOK_ALIKE),
        "full-width": "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text),
        "json-zero-width": "\\u200b".join(text),
        "utf-16": "\x00".join(text),
        "hex-reversed": data[::-1].hex(),
        "base85-line": base64.b85encode(data + b"\r\n").decode("ascii"),  # a header line, its line break included
        "base64-twice": base64.b64encode(base64.b64encode(data)).decode("ascii"),
        "spaced-reversed": " ".join(text)[::-1],
        "combining": "".join(c + "\u0301" for c in text),
        "enclosing": "".join(c + "\u20e3" for c in text),
        "percent-u": "".join(f"%u{ord(c):04X}" for c in text),
        "json-full-width": "".join(f"\\u{ord(c) + 0xFEE0:04x}" if "!" <= c <= "~" else c for c in text),
        "spaced-json-break": " ".join(text[: len(text) // 2]) + "\\n" + " ".join(text[len(text) // 2 :]),
        "hex-spaced": " ".join(f"{b:02x}" for b in data),
        "percent-spaced": " ".join(f"%{b:02X}" for b in data),
        "fragments-reversed": " ".join(text[::-1][i : i + 3] for i in range(0, len(text), 3)),
    }
    return forms[how]


def _leaks(outcome: CallOutcome, secret: str) -> str | None:
    """How the outcome shows ``secret`` (a 10-character piece of it, in any encoding), if it does."""
    return leak(f"{outcome.text or ''}\n{outcome.error_message}\n{json.dumps(outcome.value)}", secret)


def _echo_fault(case: Case, key: str) -> Status:
    if "part" in case.params:
        key = key[slice(*case["part"])]
    # A row naming its content type sends its body text as it stands; any other, its body as JSON.
    raw = "content_type" in case.params
    body = (case["body"] if raw else json.dumps(case["body"])).replace(KEY, key)
    if "encode" in case.params:
        how, prefix = case["encode"]
        body = body.replace(ENCODED, encoded(how, prefix + key))
    headers = {k: v.replace(KEY, key) for k, v in case.params.get("headers", {}).items()}
    return Status(case["status"], body=body.encode(), headers=headers,
                  content_type=case.params.get("content_type", "application/json"))


async def _search_a_bare_endpoint(ctx: CheckContext, answer: bytes) -> CallOutcome:
    """A search whose provider endpoint (the tools base, or the Messages base) is a bare TCP server on loopback
    that answers each request's first bytes with ``answer`` (no HTTP a client can read) and closes; the run's own
    base again after."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.read(65536)
            writer.write(answer)
            await writer.drain()
        except OSError:
            pass  # the client went away first: it has its failure already
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    field = "tools_base" if ctx.search_route == "search" else "messages_base"
    own = getattr(ctx.config, field)
    try:
        await ctx.configure(**{field: base + urlsplit(own).path})
        return await ctx.search([QUERY])
    finally:
        await ctx.configure(**{field: own})
        server.close()
        await server.wait_closed()


@check(
    "errors.secret_echo",
    "An upstream error that quotes the credential never shows it in the failure the model sees",
    seed="001",
    requires=(WS,),
    rule="Seed 001: requests carry the key only in the documented authorization header, and every "
    "non-success status is a retrieval failure; the project's rule that no secret lands in any log or "
    "report, in any encoding, then decides what the failure may show. An error body (a JSON object, a JSON "
    "string or plain text), a Retry-After, a refused redirect's Location or a malformed status line (which an "
    "HTTP library's transport error quotes) that echoes the key still fails with WEB_PROVIDER_ERROR, and "
    "neither the key (as written or in another case; "
    "percent-encoded whole, in part or twice; base64 at any alignment; hex in either case, as \\x escapes or as a "
    "C byte array (0x before each byte); HTML character references, decimal or hex, padded or without "
    "semicolons; JSON or %uXXXX escapes; encodings mixed per character; with invisible characters or spaces "
    "between its characters (also in a part of it), with a combining or enclosing mark on each character of a part, "
    "backwards (also split in fragments), in look-alike or full-width letters; with JSON-escaped zero-width spaces "
    "or UTF-16 NULs between its characters (also in a part of it); in full-width letters written as JSON escapes; "
    "spelled out across a JSON "
    "line-break escape; JSON escapes escaped again; reversed, then in hex; base64-encoded twice, at any alignment; "
    "base85 in RFC 1924's alphabet) "
    "nor any 10-character piece of it appears in the text, message or value, also for a key of six characters or of "
    "67, and when the upstream echoes only a part "
    "of the key (its start, its end, a middle part percent- or base64-encoded, or written a byte or an escape at a "
    "time with spaces between them; in the error text or the Retry-After), when a C byte array of the key follows "
    "4,537 spaces (a window a target cuts there may end between two bytes), "
    "and when other credential-shaped text comes first (a bearer token, Basic credentials, "
    "key fields, sk-/JWT/GitHub/AWS shapes). Whether and how much of the upstream message is quoted (a part "
    "shorter than 10 characters included), and whether such other credential-shaped text is redacted, stays "
    "open.",
    cases=SECRET_ECHOES,
)
async def secret_echo(ctx: CheckContext) -> None:
    route, configured = ctx.search_route, ctx.config.api_key
    for case in SECRET_ECHOES:
        ctx.fresh()
        key = ROW_KEYS.get(case.params.get("key", ""), configured)
        if key != configured:
            ctx.emu.accept_api_key(key)
            await ctx.configure(api_key=key)
        if "status_line" in case.params:
            outcome = await _search_a_bare_endpoint(ctx, case["status_line"].replace(KEY, key).encode())
        else:
            ctx.emu.inject(route, _echo_fault(case, key), when=query_match(route, QUERY))
            outcome = await ctx.search([QUERY])
        if key != configured:
            await ctx.configure(api_key=configured)
        expect_error(outcome, case.name, PROVIDER_ERROR)
        leak = _leaks(outcome, key)
        require(leak is None, f"{case.name}: the failure shows {leak}")


TOOL_ERRORS = (
    Case("max_uses_exceeded", "an in-band search error read as a search that found nothing",
         {"code": "max_uses_exceeded"}),
    Case("too_many_requests", "only max_uses_exceeded taken for a failure", {"code": "too_many_requests"}),
    Case("unavailable", "an unavailable search service answered with no results", {"code": "unavailable"}),
    Case("an unknown code", "only the documented codes taken for a failure",
         {"code": "Upstream <b>exploded</b> at 07:00"}),
    Case("a code quoting the key", "the error code quoted without scrubbing", {"code": f"invalid key {KEY}"}),
    # It configures another key, which stays configured for any row after it. Its body is a plain code
    # ([a-z0-9_]), which the emulator's own key (with hyphens) never is.
    Case("a code that is the body of a key of the usual shape",
         "a code that looks plain named as is, unscrubbed: the body of an sk- key of hex digits fits that look",
         {"code": KEY_BODY, "key": "sk- and 32 hex digits"}),
)


@check(
    "search.messages.tool_error",
    "An in-band web_search_tool_result_error fails the search with WEB_PROVIDER_ERROR after one request",
    seed="001",
    requires=(WS, "messages-search"),
    provider="messages",
    rule="Seed 001 keeps Messages search, which 'extracts sources and citation excerpts', and its provider tests "
    "cover 'malformed responses'. A web_search_tool_result whose content is a web_search_tool_result_error "
    "(any error_code) holds no sources: the search did not run, so it fails with WEB_PROVIDER_ERROR after "
    "exactly one request (not the success with no sources that 'Empty results is successful' gives a search "
    "that ran), and the failure never shows the credential, also when the code is the body of a key of the "
    "usual shape (sk- and hex digits), which looks like a plain code.",
    cases=TOOL_ERRORS,
)
async def messages_tool_error(ctx: CheckContext) -> None:
    key = ctx.config.api_key
    for case in TOOL_ERRORS:
        ctx.fresh()
        if "key" in case.params:
            key = HEX_SHAPED_KEY
            ctx.emu.accept_api_key(key)
            await ctx.configure(api_key=key)
        code = case["code"].replace(KEY, key).replace(KEY_BODY, key.removeprefix("sk-"))
        ctx.emu.inject("messages", ToolError(code), when=query_match("messages", QUERY))
        outcome = await ctx.search([QUERY])
        await ctx.settle()
        expect_error(outcome, case.name, PROVIDER_ERROR)
        records = ctx.records("messages")
        require(len(records) == 1, f"{case.name}: {len(records)} upstream requests; a failure must not be retried "
                "silently")
        require(records[0].credential == "api_key" and records[0].fault is not None, f"{case.name}: the request "
                f"never met the in-band error (its credential: {records[0].credential}); the key configured for the "
                "case must be the one sent")
        leak = _leaks(outcome, key)
        require(leak is None, f"{case.name}: the failure shows {leak}")


UNAVAILABLE = ("WEB_PROVIDER_CONFIGURED_UNAVAILABLE", "WEB_PROVIDER_UNAVAILABLE")
UNUSABLE_BASES = (
    Case("empty", "an empty base joined to /search (a relative URL) or replaced by a default", {"base": ""}),
    Case("blank", "only the empty string taken for blank", {"base": " \t "}),
    Case("no scheme", "a base without a scheme completed with https:// or inferred",
         {"base": "api.example.test/v1/tools"}),
    Case("no host", "a base with no host used as is", {"base": "http:///v1/tools"}),
    Case("space in the host", "an unparseable host sent anyway", {"base": "https://api example.test/v1/tools"}),
    Case("unclosed IPv6 literal", "a half-parsed base used", {"base": "http://[::1/v1/tools"}),
)
# The documented default base is https: such a base is usable. Pointed at the plain-HTTP emulator, the
# TLS handshake fails, so the search fails as a provider failure, never as "unavailable".
HTTPS_BASE = Case("an https base", "an https base (the scheme of the documented default) taken for unusable",
                  {"base": "the emulator's tools base with https"})
# With the switch off (provider messages) web_fetch is the local HTTP fetch, which no API base concerns. A
# loopback literal is fetched: the fetcher's own address rules may refuse it (any WEB_* error but unavailable).
SWITCH_OFF = Case("a blank base with the switch off", "a blank API base taken to leave the local HTTP fetch "
                  "unavailable too (the 'both providers' it disables are the two APIs)",
                  {"base": "", "url": "http://127.0.0.1:9/"})


async def _unavailable(ctx: CheckContext, what: str, call: CallOutcome) -> None:
    require(call.error_code in UNAVAILABLE,
            f"{what}: expected one of {', '.join(UNAVAILABLE)} (the provider is unavailable), got {call.brief()}")
    expect_error(call, what)


@check(
    "search.api.base_unavailable",
    "A blank or unparseable Search/Fetch API base leaves both providers unavailable",
    seed="001",
    requires=(WS, "search-api"),
    provider="api",
    rule="Seed 001: 'A blank or unparseable base leaves both providers unavailable', and the prefixes 'are "
    "never inferred from the hostname'. With such a tools_base a web_search (and, with fetch-api, a "
    "web_fetch) fails as unavailable (WEB_PROVIDER_CONFIGURED_UNAVAILABLE or WEB_PROVIDER_UNAVAILABLE), "
    "never with another base; refusing the configuration itself is accepted too. An https base (the "
    "documented default's scheme) is usable. With the switch off ('off restores Messages search with local "
    "HTTP fetch'), the same blank base leaves web_fetch on the local HTTP fetch: it never fails as unavailable.",
    cases=(*UNUSABLE_BASES, HTTPS_BASE, SWITCH_OFF),
)
async def base_unavailable(ctx: CheckContext) -> None:
    fetch = {"web_fetch", "fetch-api"} <= ctx.hello.capabilities
    for case in UNUSABLE_BASES:
        ctx.fresh()
        try:
            await ctx.configure(tools_base=case["base"])
        except (TargetError, WebError):  # an adapter's error answer, or the in-process target's own refusal
            continue  # the target refused the configuration: nothing can run on it
        await _unavailable(ctx, f"{case.name} base {case['base']!r}: web_search", await ctx.search([QUERY]))
        if fetch:
            await _unavailable(ctx, f"{case.name} base {case['base']!r}: web_fetch",
                               await ctx.fetch("https://docs.example.test/"))
        require(not ctx.records(), f"{case.name}: {len(ctx.records())} request(s) reached the emulator")
    ctx.fresh()
    await ctx.configure(tools_base=ctx.emu.tools_base.replace("http://", "https://", 1))
    outcome = await ctx.search([QUERY])
    expect_error(outcome, f"{HTTPS_BASE.name}: a TLS search against the plain-HTTP emulator")
    require(outcome.error_code not in UNAVAILABLE,
            f"{HTTPS_BASE.name}: {outcome.error_code}, but an https base is usable")
    if not {"web_fetch", "messages-search"} <= ctx.hello.capabilities:
        return
    ctx.fresh()
    try:
        await ctx.configure(provider="messages", tools_base=SWITCH_OFF["base"])
    except (TargetError, WebError):
        return  # the target refused the configuration: nothing can run on it
    outcome = await ctx.fetch(SWITCH_OFF["url"])
    require(outcome.error_code not in UNAVAILABLE,
            f"{SWITCH_OFF.name}: web_fetch {SWITCH_OFF['url']} failed with {outcome.error_code}, but with the switch "
            "off it is the local HTTP fetch, which the API base does not concern")
