"""Hunt P, part D: wrong readings of seed 003's standalone search that dsweb certify passed, each now failing the
rows added for it: a search request naming another model than the one the search was set to use (D3); a query
past the target's own bound cut there and searched instead of refused or sent whole (D2); a 303 See Other followed
(D5); a Responses input count with its cached tokens taken out (D6); state a tool kept from one search to the next,
unseen while the reference target built a tool per search (D1); and a streamed request or answer read another way
than a plain one: redirects followed, a search call's sources dropped, one result block of two kept (D4). Each
wrong reading is made in the reference as the hunt made it and fails exactly its rows (D1: the existing rows that
search twice, now through one tool); the reference, and the readings seed 003 leaves open, pass them."""

from __future__ import annotations

import dataclasses
import json
from contextvars import ContextVar
from typing import Any

import httpx
import pytest

from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import standalone, standalone_usage
from dsweb_ref.certification.targets import TargetConfig, reference_target
from dsweb_ref.emulator.responses import responses_events
from dsweb_ref.providers import _standalone, standalone_messages, standalone_responses
from dsweb_ref.providers._standalone import Streamed
from dsweb_ref.providers.standalone_messages import MessagesStandaloneSearch
from dsweb_ref.providers.standalone_responses import ResponsesStandaloneSearch
from dsweb_ref.tools import standalone_search
from dsweb_ref.tools._result import ToolResult
from dsweb_ref.tools.standalone_search import StandaloneSearchTool

from ._readings import failing_rows, keep_rows, passes_rows, patch_reading
from .conftest import run
from .test_hunt_standalone_readings import _Following, _following

ISOLATED, REQUESTS = "standalone.request.isolated", "REQUEST_CASES"

# -- D3: the request's model ----------------------------------------------------------------------

MODEL_ROWS = ("messages", "responses")  # the plain rows judge the request's model
MODEL = '"model": self.model,'


def test_the_reference_passes_the_plain_rows_judging_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone, REQUESTS, ISOLATED, MODEL_ROWS, monkeypatch)


@pytest.mark.parametrize("named", ["deepseek-v4-pro", "deepseek-flash"])
def test_a_request_naming_another_model_fails_exactly_the_plain_rows(
    named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: "model": "deepseek-v4-pro" (a fixed model, or the main conversation's; any other model the backend
    # serves) in the search request on both backends, while the usage still names the designated deepseek-v4-flash
    for backend in (MessagesStandaloneSearch, ResponsesStandaloneSearch):
        patch_reading(backend, "standalone_search", MODEL, f'"model": "{named}",', monkeypatch)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == set(MODEL_ROWS)


def test_another_model_on_one_backend_fails_its_row_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the designated model kept on Messages and a fixed one named on Responses
    patch_reading(ResponsesStandaloneSearch, "standalone_search", MODEL, '"model": "deepseek-v4-pro",', monkeypatch)
    keep_rows(standalone, REQUESTS, MODEL_ROWS, monkeypatch)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == {"responses"}


# -- D2: a query past the target's own bound ------------------------------------------------------

HUGE_ROW = "messages-query-of-20000-characters"
REFUSED = '''    if len(query.encode("utf-8")) > MAX_QUERY_BYTES:
        raise _invalid(f"query must be at most {MAX_QUERY_BYTES} bytes of UTF-8")
'''


def _cut(limit: int) -> str:
    return f'''    if len(query.encode("utf-8")) > {limit}:
        query = query.encode("utf-8")[:{limit}].decode("utf-8", "ignore")
'''


def test_the_reference_passes_the_20000_character_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # the reference refuses both queries as a tool error (its bound is 4 096 bytes) and sends no request
    assert max(len(q.encode("utf-8")) for q in standalone.HUGE_QUERIES) == 20_000
    passes_rows(standalone, REQUESTS, ISOLATED, (HUGE_ROW,), monkeypatch)


@pytest.mark.parametrize("limit", [4096, 8000])
def test_a_long_query_cut_at_the_bound_fails_exactly_the_20000_character_row(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a query longer than the bound cut to its first 4 096 (or 8 000) bytes and searched, silently
    patch_reading(standalone_search, "parse_query", REFUSED, _cut(limit), monkeypatch)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == {HUGE_ROW}


def test_a_long_query_sent_whole_passes_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a target whose bound lies past 20 000 bytes sends the query whole
    patch_reading(standalone_search, "parse_query", "> MAX_QUERY_BYTES:", "> 40_000:", monkeypatch)
    passes_rows(standalone, REQUESTS, ISOLATED, (HUGE_ROW,), monkeypatch)


# -- D5: a 303 See Other --------------------------------------------------------------------------

REDIRECTED, REDIRECTS = "standalone.redirect.not_followed", "REDIRECT_CASES"
SEE_OTHER_ROWS = {"messages-303", "responses-303"}


def test_the_reference_passes_the_303_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone, REDIRECTS, REDIRECTED, tuple(SEE_OTHER_ROWS), monkeypatch)


def test_a_303_alone_followed_fails_exactly_the_303_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a 303 See Other followed with a GET to its Location (every other 3xx refused), on either backend
    monkeypatch.setattr(_standalone, "post", _following((303,)))
    assert failing_rows(standalone, REDIRECTS, REDIRECTED, monkeypatch) == SEE_OTHER_ROWS


# -- D6: cached input tokens on Responses ---------------------------------------------------------

USAGE, USAGES = "standalone.usage.reported", "USAGE_CASES"
CACHED_ROW = "responses-cached-input"
WHOLE_INPUT = 'input_tokens=count(usage.get("input_tokens")),'
CACHED = 'count(mapping(usage.get("input_tokens_details")).get("cached_tokens"))'


def test_the_reference_passes_the_cached_input_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone_usage, USAGES, USAGE, (CACHED_ROW,), monkeypatch)


def test_cached_tokens_taken_out_of_the_input_count_fail_exactly_the_cached_input_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: input_tokens reported as input_tokens - input_tokens_details.cached_tokens (234 of 1 234), the
    # cached 1 000 lost though the request used them and they are priced
    patch_reading(standalone_responses, "read_usage", WHOLE_INPUT,
                  f'input_tokens=count(usage.get("input_tokens")) - {CACHED},', monkeypatch)
    assert failing_rows(standalone_usage, USAGES, USAGE, monkeypatch) == {CACHED_ROW}


def _apart(key: str, usage: dict[str, Any], cached: int) -> None:
    """``cached`` reported apart, as ``key`` names: a top-level key, DeepSeek's hit and miss pair, or nested."""
    if key == "prompt_cache_hit_tokens":  # a review found the miss count summed in with the hits
        usage.update(prompt_cache_hit_tokens=cached, prompt_cache_miss_tokens=usage["input_tokens"])
    elif key == "input_tokens_details.cached_tokens":  # a review found a nested count not read
        usage["input_tokens_details"] = {"cached_tokens": cached, "cache_write_tokens": 0}
    else:
        usage[key] = cached


@pytest.mark.parametrize("key", ["cached_tokens", "cache_read_input_tokens", "prompt_cache_hit_tokens",
                                 "input_tokens_details.cached_tokens"])
def test_cached_tokens_reported_apart_pass(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # open: the cached tokens reported apart under a key naming the cache (at the usage's top level or in an object
    # inside it; a miss or write count beside it is not one), the input count then without them (as reasoning_tokens
    # may stand apart from the output count)
    read, execute, told = standalone_responses.read_usage, StandaloneSearchTool.execute, {}

    def read_usage(usage: object, searches: int) -> Any:
        details = usage.get("input_tokens_details") if isinstance(usage, dict) else None
        told["cached"] = details.get("cached_tokens", 0) if isinstance(details, dict) else 0
        counted = read(usage, searches)
        return dataclasses.replace(counted, input_tokens=(counted.input_tokens or 0) - told["cached"])

    async def apart(self: StandaloneSearchTool, arguments: object, ctx: Any = None) -> ToolResult:
        told.clear()
        result = await execute(self, arguments, ctx)
        if result.value is not None and "cached" in told:
            _apart(key, result.value["usage"], told["cached"])
        return result

    monkeypatch.setattr(standalone_responses, "read_usage", read_usage)
    monkeypatch.setattr(StandaloneSearchTool, "execute", apart)
    assert failing_rows(standalone_usage, USAGES, USAGE, monkeypatch) == set()


# -- D1: state kept on the tool between searches --------------------------------------------------
# The reference target built a new standalone tool for every search, so no row ever ran two searches through one
# tool: a tool (or its backend) that kept the last search's sources, summary, cookie, in-flight queries or usage
# total on itself passed every row. It now keeps one tool per protocol for each configure, as a runtime does.

USAGE_WHOLE = "standalone.usage.reported"
EARLIER_ROW, COOKIE_ROW = "messages-no-earlier-answer", "messages-no-earlier-cookie"
PROMPT_ROWS = {"messages-prompt-independent", "responses-prompt-independent"}
CONCURRENT_ROWS = {"messages-concurrent", "responses-concurrent", "messages-concurrent-streamed"}
CURRENT: ContextVar[Any] = ContextVar("current", default=None)  # the backend whose request is under way


def test_one_tool_per_protocol_for_each_configure() -> None:
    config = TargetConfig.from_json({"messages_base": "http://127.0.0.1:9/anthropic", "tools_base":
                                     "http://127.0.0.1:9", "api_key": "sk-test"})
    tools = targets.reference_standalone_tools(config)
    assert tools("messages") is tools("messages") and tools("responses") is tools("responses")
    assert tools("messages") is not tools("responses")
    again = targets.reference_standalone_tools(config)  # a new configure: new tools, nothing carried over
    assert again("messages") is not tools("messages") and again("responses") is not tools("responses")


def test_the_check_searches_twice_through_one_tool_and_a_new_configure_builds_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[Any] = []
    build = targets.reference_standalone

    def counted(config: TargetConfig, protocol: str) -> Any:
        built.append(tool := build(config, protocol))
        return tool

    monkeypatch.setattr(targets, "reference_standalone", counted)
    keep_rows(standalone, REQUESTS, ("messages", "messages-streamed"), monkeypatch)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == set()  # each row alone: its own configure
    assert [tool.backend.stream for tool in built] == [False, True]  # two searches each, one tool each


def _remembering(monkeypatch: pytest.MonkeyPatch, carried: str) -> None:
    """Each backend keeps the sources (or summaries) it found and tells the next search about them."""
    for backend in (MessagesStandaloneSearch, ResponsesStandaloneSearch):
        search = backend.standalone_search

        async def remembering(self: Any, query: str, ctx: Any, *, max_tokens: int, timeout_s: float,
                              search: Any = search) -> Any:
            seen = self.__dict__.setdefault("_seen", [])
            told = f"(already found: {', '.join(seen[-8:])}) {query}" if seen else query
            answer = await search(self, told, ctx, max_tokens=max_tokens, timeout_s=timeout_s)
            seen.extend([s.url for s in answer.sources] if carried == "sources" else [answer.summary[:200]])
            return answer

        monkeypatch.setattr(backend, "standalone_search", remembering)


def test_earlier_sources_kept_on_the_backend_fail_the_rows_that_search_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the backend keeps the URLs its searches found and sends them with the next query ("already found")
    _remembering(monkeypatch, "sources")
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == {EARLIER_ROW, *PROMPT_ROWS}


def test_earlier_summaries_kept_on_the_backend_fail_the_rows_that_search_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the same with the earlier answers' summaries
    _remembering(monkeypatch, "summary")
    assert {EARLIER_ROW, *PROMPT_ROWS, "messages", "responses"} <= failing_rows(
        standalone, REQUESTS, ISOLATED, monkeypatch)


def test_a_cookie_jar_kept_on_the_backend_fails_the_cookie_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the backend keeps the cookie an answer set and sends it with its next search
    post, exchange = _standalone.post, _standalone.StandaloneEndpoint._exchange

    async def jar_exchange(self: Any, payload: Any, headers: dict[str, str], *rest: Any) -> Any:
        CURRENT.set(self)
        cookie = self.__dict__.get("_cookie")
        return await exchange(self, payload, {**headers, **({"cookie": cookie} if cookie else {})}, *rest)

    async def jar_post(url: str, body: bytes, headers: dict[str, str], **kwargs: Any) -> Any:
        reply = await post(url, body, headers, **kwargs)
        owner = CURRENT.get()
        if owner is not None and reply.headers.get("set-cookie"):
            owner._cookie = reply.headers["set-cookie"].split(";", 1)[0]
        return reply

    monkeypatch.setattr(_standalone.StandaloneEndpoint, "_exchange", jar_exchange)
    monkeypatch.setattr(_standalone, "post", jar_post)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == {COOKIE_ROW}


def test_queries_in_flight_kept_on_the_tool_fail_the_concurrent_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: one list of the queries in flight on the tool, each request carrying all of them
    answer = StandaloneSearchTool._answer

    async def sharing(self: StandaloneSearchTool, query: str, ctx: Any) -> Any:
        in_flight = self.__dict__.setdefault("_in_flight", [])
        in_flight.append(query)
        try:
            return await answer(self, "\n".join(in_flight), ctx)
        finally:
            in_flight.remove(query)

    monkeypatch.setattr(StandaloneSearchTool, "_answer", sharing)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == CONCURRENT_ROWS


def test_a_usage_total_kept_on_the_tool_fails_the_usage_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the tool reports the running total of its searches' usage as each search's own
    run_tool = StandaloneSearchTool.run

    async def cumulative(self: StandaloneSearchTool, arguments: object, ctx: Any = None) -> Any:
        text, usage = await run_tool(self, arguments, ctx)
        total = self.__dict__.setdefault("_total", {})
        for key in ("input_tokens", "output_tokens", "http_requests"):
            total[key] = total.get(key, 0) + (getattr(usage, key) or 0)
        return text, dataclasses.replace(usage, **total)

    monkeypatch.setattr(StandaloneSearchTool, "run", cumulative)
    (result,) = run(reference_target(), only=[USAGE_WHOLE]).results  # rows share a configure, so one tool
    assert result.outcome.value == "failed" and result.reason.startswith("[messages-answer-names-another-model]"), (
        result.reason)


# -- D4: streamed twins of the redirect and source rows -------------------------------------------

FILTERED, FILTERS = "standalone.sources.filtered", "FILTER_CASES"
STREAMED_REDIRECTS = {"messages-307-streamed", "responses-302-streamed"}
ACTION_STREAMED, TWO_STREAMED = "responses-action-sources-streamed", "messages-two-searches-streamed"


def test_a_streamed_refusal_part_is_told_as_refusal_events() -> None:
    # the emulator's retelling of a Responses answer whose message holds a refusal, then text (it KeyErrored)
    answer = json.loads(standalone._responses_body([standalone._answer([
        {"type": "refusal", "refusal": "Not this part."}, standalone._text("Zero.")])]))
    told = [(name, data.get("content_index")) for name, data in responses_events(answer)]
    assert ("response.refusal.done", 0) in told and ("response.output_text.done", 1) in told


def test_the_reference_passes_the_streamed_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone, REDIRECTS, REDIRECTED, tuple(STREAMED_REDIRECTS), monkeypatch)
    passes_rows(standalone, FILTERS, FILTERED, (ACTION_STREAMED, TWO_STREAMED), monkeypatch)


def test_a_streaming_client_that_follows_redirects_fails_exactly_the_streamed_redirect_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the client of a streamed request built with follow_redirects (every 3xx), the plain one refusing them
    post = _standalone.post

    async def following_post(url: str, body: bytes, headers: dict[str, str], **kwargs: Any) -> Any:
        if headers.get("accept") == "text/event-stream":
            kwargs["transport"] = _Following(kwargs.get("transport") or httpx.AsyncHTTPTransport(),
                                             (301, 302, 303, 307, 308))
        return await post(url, body, headers, **kwargs)

    monkeypatch.setattr(_standalone, "post", following_post)
    assert failing_rows(standalone, REDIRECTS, REDIRECTED, monkeypatch) == STREAMED_REDIRECTS


def _streamed_events_bent(monkeypatch: pytest.MonkeyPatch, module: Any, bend: Any) -> None:
    """``module.read_events`` reading each event of a stream as ``bend`` changes it (the plain answers untouched)."""
    read_events = module.read_events

    def reading(streamed: Streamed, label: str) -> Any:
        return read_events(Streamed(bend(list(streamed.events)), streamed.cut), label)

    monkeypatch.setattr(module, "read_events", reading)


def test_a_streamed_search_calls_sources_dropped_fails_exactly_the_streamed_action_sources_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a streamed Responses answer's sources read from its url_citation annotation events alone (each
    # web_search_call item's action.sources dropped), as a reader built on the output_text events keeps them
    def strip(item: Any) -> Any:
        if isinstance(item, dict) and item.get("type") == "web_search_call":
            return {**item, "action": {k: v for k, v in (item.get("action") or {}).items() if k != "sources"}}
        return item

    def bend(events: list[Any]) -> list[Any]:
        out = []
        for event in events:
            if event.get("type") == "response.output_item.done":
                event = {**event, "item": strip(event.get("item"))}
            if event.get("type") == "response.completed" and isinstance(event.get("response"), dict):
                told = event["response"]
                event = {**event, "response": {**told, "output": [strip(i) for i in told.get("output") or []]}}
            out.append(event)
        return out

    _streamed_events_bent(monkeypatch, standalone_responses, bend)
    assert failing_rows(standalone, FILTERS, FILTERED, monkeypatch) == {ACTION_STREAMED}


def test_only_the_last_streamed_result_block_kept_fails_exactly_the_streamed_two_searches_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a streamed Messages answer read with one slot per block type, so only the last web_search_tool_result
    # block's sources survive
    def is_result(event: Any) -> bool:
        block = event.get("content_block")
        return (event.get("type") == "content_block_start" and isinstance(block, dict)
                and block.get("type") == "web_search_tool_result")

    def bend(events: list[Any]) -> list[Any]:
        last = next((e for e in reversed(events) if is_result(e)), None)
        return [{**e, "content_block": {**e["content_block"], "content": []}} if is_result(e) and e is not last
                else e for e in events]

    _streamed_events_bent(monkeypatch, standalone_messages, bend)
    assert failing_rows(standalone, FILTERS, FILTERED, monkeypatch) == {TWO_STREAMED}
