"""Seed 003: the standalone model-backed web_search and its account selection.

Only what seed 003 decides is enforced: one model request per search with only the query and the
native search tool (no system prompt or ``instructions``, no second message or content part, the
tool version the backend documents: ``web_search_20250305`` on Messages, ``web_search`` on
Responses), the 8192-token output budget, searches in flight at once sharing nothing (each request
its own query, each result its own answer), at most eight distinct HTTP(S) sources, a source keeps a
title the answer gave its URL, an encoded result of at most 24 000 bytes whose summary carries a
short answer's text whole and which holds summary, sources and the optional truncated flag only (seed 003 lists
them after a colon, and reports usage apart: read as the result's whole list of keys), prose without a
completed native search (or a failed response or search call) is a tool error, a completed search
without structured sources gives no sources, no redirects, no reasoning or encrypted content in
the result, and the selection rules (broker and extension models bring no search credential;
connection-access limits apply).
Left open (accepted either way): the wording around the query inside its one user message (as long as the
conversation changes none of it), which
eight sources are kept, which of several titles a URL gets, the summary's own bound, the words
around the answer in the summary and which of several text blocks make it up, request fields that
carry no content (``include``, ``tool_choice``, ``thinking``, ``max_uses``, ``store``), streaming or not,
whether two searches run at once, what the summary's text says beside the answer (usage written into it is not
told apart from other words). Usage is certified apart (capability ``standalone-usage``, :mod:`.standalone_usage`).

Rows marked ``stream`` configure ``standalone_stream``: the emulator tells their answer as server-sent
events to a target that asks for a stream and as the same JSON to one that does not, so a target
answering plainly passes them as it passes their plain twins, and one that streams must read the same
answer (the seed decides the answer's content, not its transport); a stream that ends before its final
event, is cut off, or reports an ``error`` event completed nothing and is a tool error.
"""

from __future__ import annotations

import asyncio
import binascii
import gzip
import json
import re
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from ..._exceptions import WebErrorCode
from ...emulator import (
    AsAnswer,
    CutBody,
    Delay,
    Fault,
    Gate,
    Hold,
    HugeSummary,
    Malformed,
    ProseOnly,
    Redirect,
    SlowBody,
    Status,
)
from ...emulator.faults import RouteName
from ...emulator.responses import responses_events
from ...emulator.streaming import Event, messages_events, render_sse
from ..calibration import LAG_FACTOR, LATE_UNDER_LOAD, NOT_SHOWN, LagSampler, patiently
from ..cases import Case
from ..scenarios import url_key
from ..targets import STANDALONE_MODEL, CallOutcome
from ._base import CALL_TIMEOUT, CheckContext, CheckFailed, check, expect_error, lone_surrogates, require
from ._fakes import CREDENTIAL_SHAPES, LONG_KEY, MIXED_CASE_KEY
from ._leaks import leak
from .outcomes import encoded_text

__all__ = ["RESOLUTION_CASES", "resolution_observed"]

SA, SR = "standalone-search", "standalone-resolve"
KEY = "<configured key>"  # where a case's body quotes the configured key (put in when the case runs)
MAX_RESULT_BYTES = 24_000
ROUTES = {"messages": "messages", "responses": "responses"}


async def _search(ctx: CheckContext, query: str, protocol: str = "messages", prompt: str | None = None,
                  extra: dict[str, Any] | None = None) -> CallOutcome:
    """One standalone search of ``query``; ``extra``: arguments the model wrote beside it."""
    params: dict[str, Any] = {"arguments": {"query": query, **(extra or {})}, "protocol": protocol}
    if prompt is not None:  # the conversation's latest human prompt, which the search must not carry
        params["latest_prompt"] = prompt
    call = ctx.target.start_call("standalone_search", params)
    return await call.outcome(CALL_TIMEOUT)


async def _faulted(ctx: CheckContext, protocol: str, fault: Fault, *, times: int | None = 1) -> CallOutcome:
    """One standalone search of "search api" whose model request meets ``fault`` (its first ``times`` requests;
    None: every request, a retry's too)."""
    route: RouteName = "responses" if protocol == "responses" else "messages"
    return await ctx.under_fault(route, fault, lambda: _search(ctx, "search api", protocol), times=times)


async def _streaming(ctx: CheckContext, case: Case) -> None:
    """Configure ``standalone_stream`` as ``case`` asks (its ``stream`` param; off by default). Seed 003
    leaves streaming open, so a target may ignore the key and answer plainly: a streamed row's answer is
    the plain one's (the emulator tells it as events only to a request that asks, ``AsAnswer``), and it
    must be read the same, with the same outcome."""
    stream = bool(case.params.get("stream"))
    if ctx.config.standalone_stream != stream:
        await ctx.configure(standalone_stream=stream)


def _visible(outcome: CallOutcome, what: str) -> dict[str, Any]:
    """The model-visible JSON of a successful call, checked for the seed's shape."""
    require(outcome.ok and outcome.text is not None, f"{what}: expected a result, got {outcome.brief()}")
    text = outcome.text or ""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the decoder's depth
        raise CheckFailed(f"{what}: the model-visible text is not JSON: {text[:120]!r}") from None
    require(isinstance(value, dict) and isinstance(value.get("summary"), str), f"{what}: no string summary")
    sources = value.get("sources")
    require(isinstance(sources, list) and all(isinstance(s, dict) for s in sources), f"{what}: sources not a list")
    require(value.get("truncated", False) in (True, False), f"{what}: truncated is not a boolean")
    return dict(value)


def _messages_body(content: Any) -> bytes:
    return json.dumps(
        {"id": "msg_cert", "type": "message", "role": "assistant", "model": "deepseek-v4-flash", "content": content,
         "stop_reason": "end_turn", "stop_sequence": None,
         "usage": {"input_tokens": 10, "output_tokens": 10,
                   "server_tool_use": {"web_search_requests": 1, "web_fetch_requests": 0}}}
    ).encode()


def _responses_body(output: Any, **fields: Any) -> bytes:
    """A Responses answer holding ``output`` (a list of items, or anything a hostile answer holds);
    ``fields`` replace top-level fields (``status``, ``error``)."""
    return json.dumps(
        {"id": "resp_cert", "object": "response", "created_at": 0, "status": "completed", "model": "deepseek-v4-flash",
         "output": output, "parallel_tool_calls": False, "tool_choice": "auto", "tools": [{"type": "web_search"}],
         # Every field the official SDK requires under strict validation, so an SDK-built target can read it.
         "usage": {"input_tokens": 10, "output_tokens": 10, "total_tokens": 20,
                   "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                   "output_tokens_details": {"reasoning_tokens": 0}}, **fields}
    ).encode()


def _search_call(status: str = "completed", urls: tuple[str, ...] = ()) -> dict[str, Any]:
    """A web_search_call item; ``urls`` become its ``action.sources``."""
    action: dict[str, Any] = {"type": "search", "query": "q"}
    if urls:
        action["sources"] = [{"type": "url", "url": u} for u in urls]
    return {"id": f"ws_cert_{status}", "type": "web_search_call", "status": status, "action": action}


def _answer(content: Any) -> dict[str, Any]:
    """An assistant message item holding ``content`` (a list of parts, or anything a hostile answer holds)."""
    return {"id": "msg_cert", "type": "message", "role": "assistant", "status": "completed", "content": content}


def _text(text: Any, annotations: Any = ()) -> dict[str, Any]:
    """An output_text part."""
    return {"type": "output_text", "text": text, "annotations": list(annotations) if isinstance(annotations, tuple)
            else annotations}


def _result_block(content: Any) -> dict[str, Any]:
    """A web_search_tool_result holding ``content`` (a result list, or anything a hostile answer holds)."""
    return {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_cert", "content": content}


def _error_block(code: str) -> dict[str, Any]:
    """A web_search_tool_result reporting that the search failed in band (Messages)."""
    return _result_block({"type": "web_search_tool_result_error", "error_code": code})


def _item(url: str, title: str = "t") -> dict[str, Any]:
    return {"type": "web_search_result", "url": url, "title": title, "encrypted_content": "RU5D", "page_age": None}


def _own_stream(protocol: str, body: bytes, bend: Any) -> AsAnswer:
    """``body`` (a complete answer) as JSON to a plain request, and to a streamed one its events as the
    emulator tells them, changed by ``bend`` (events -> events): a stream no upstream sends as such."""
    answer = json.loads(body)
    events = responses_events(answer) if protocol == "responses" else messages_events(answer)
    return AsAnswer(body, stream=render_sse(bend(events)))


def _before_the_end(*extra: Event) -> Any:
    """A Messages stream with ``extra`` events told before its message_delta and message_stop."""
    return lambda events: [*events[:-2], *extra, *events[-2:]]


def _delta(index: Any, delta: dict[str, Any]) -> Event:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}


def _text_in_the_start(events: list[Event]) -> list[Event]:
    """A Messages stream whose text blocks carry their whole text in content_block_start, with no deltas."""
    texts: dict[Any, str] = {}
    for _, data in events:
        if data["type"] == "content_block_delta" and data["delta"]["type"] == "text_delta":
            texts[data["index"]] = texts.get(data["index"], "") + data["delta"]["text"]
    told: list[Event] = []
    for name, data in events:
        if data["type"] == "content_block_start" and data["index"] in texts:
            data = {**data, "content_block": {**data["content_block"], "text": texts[data["index"]]}}
        elif data["type"] == "content_block_delta" and data["delta"]["type"] == "text_delta":
            continue
        told.append((name, data))
    return told


def _final_without_output(events: list[Event]) -> list[Event]:
    """A Responses stream whose final event lists no output (the items came in output_item.done events)."""
    name, data = events[-1]
    return [*events[:-1], (name, {**data, "response": {**data["response"], "output": []}})]


def _odd_output_index(events: list[Event]) -> list[Event]:
    """A Responses stream whose final event lists no output, with one more response.output_item.done before it
    whose output_index is a string ("2"), beside the integer-indexed ones."""
    stray = ("response.output_item.done", {"type": "response.output_item.done", "output_index": "2",
                                           "item": _answer([_text("Odd.")])})
    told = _final_without_output(events)
    return [(name, {**data, "sequence_number": n}) for n, (name, data) in enumerate([*told[:-1], stray, told[-1]])]


# -- the request ----------------------------------------------------------------------------------

_CONTEXT = ("for a customer in Lisbon who already uses the standard plan, who asked in Portuguese about invoices "
            "issued before the 2026 price change, and who needs the answer for a board meeting on Friday ")
LONG_QUERIES = ((f"first standalone topic {_CONTEXT}" * 2).strip(), (f"second standalone topic {_CONTEXT}" * 2).strip())
# about 1 700 characters each, under the 4 096 bytes the reference takes (a target's own bound is open)
LONGER_QUERIES = ((f"first standalone topic {_CONTEXT}" * 8).strip(),
                  (f"second standalone topic {_CONTEXT}" * 8).strip())
# about 3 400 characters each, still under the reference's 4 096 bytes
LONGEST_QUERIES = ((f"first standalone topic {_CONTEXT}" * 16).strip(),
                   (f"second standalone topic {_CONTEXT}" * 16).strip())
# 4 089 bytes each (ASCII), ending in the words a cut loses first
BOUND_QUERIES = tuple(f"{topic} standalone topic {_CONTEXT * 22}"[:4070].rstrip() + " ENDS IN BANGKOK NOW"
                      for topic in ("first", "later"))  # topics of one length: both queries of one byte count
# 20 000 characters each (ASCII): far past the reference's 4 096 bytes, which it refuses as a tool error
HUGE_QUERIES = tuple(f"{topic} standalone topic {_CONTEXT * 105}"[:19980].rstrip() + " ENDS IN BANGKOK NOW"
                     for topic in ("first", "later"))
# The first search's own answer in the earlier-answer row: nothing of it (the source's host, its title, the
# summary) may ride along in the second search's request, whatever wording a target puts around the query.
_EARLIER_SOURCE = ("https://kumquat-ledger.example.test/invoices", "Kumquat ledger invoice archive")
_EARLIER_SUMMARY = "The kumquat ledger lists every invoice issued before the price change."
EARLIER_PIECES = {"its source's URL": "kumquat-ledger.example.test", "its source's title": _EARLIER_SOURCE[1],
                  "its summary": _EARLIER_SUMMARY}
# The conversation's latest human prompt (protocol field latest_prompt): its marker must reach no request.
_PROMPT_MARKER = "quokka-7781"
_PROMPT = f"Compare ~/budget.xlsx with what the web says about gold, account {_PROMPT_MARKER}."
# Search filters a model may write beside the query (the native tools' own fields), each value a marker that no
# request may carry: allowed_domains, blocked_domains and user_location (Messages), filters (Responses).
FILTER_MARKERS = {"allowed_domains": "allowed-only.example.test", "blocked_domains": "blocked-only.example.test",
                  "user_location": "Reykjavik", "filters": "filtered-only.example.test"}
MODEL_FILTERS: dict[str, Any] = {
    "allowed_domains": [FILTER_MARKERS["allowed_domains"]], "blocked_domains": [FILTER_MARKERS["blocked_domains"]],
    "user_location": {"type": "approximate", "city": FILTER_MARKERS["user_location"], "country": "IS"},
    "filters": {"allowed_domains": [FILTER_MARKERS["filters"]]}}
# One query searched under each of these latest prompts (none, Thai, English: the user's language is conversation).
SAME_QUERY = "Koh Chang ferry fare 2026"
PROMPTS = (None, "ค่าเรือไปเกาะช้างปีนี้เท่าไหร่ครับ", "How much is the ferry to Koh Chang this year?")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def todays_dates(now: datetime | None = None) -> list[str]:
    """Today's date (UTC, and a day either side for a target in another time zone) as a request's text may write
    it: ISO, with slashes, in Chinese, and in English with the month's name (whole or cut to three letters)."""
    now = now or datetime.now(UTC)
    written: list[str] = []
    for day in (now.date() + timedelta(days=shift) for shift in (-1, 0, 1)):
        y, m, d, month = day.year, day.month, day.day, _MONTHS[day.month - 1]
        written += [f"{y}-{m:02}-{d:02}", f"{y}/{m:02}/{d:02}", f"{y}/{m}/{d}", f"{y}年{m}月{d}日",
                    f"{m:02}/{d:02}/{y}", f"{d:02}/{m:02}/{y}"]
        for name in (month, month[:3]):
            written += [f"{name} {d}, {y}", f"{d} {name} {y}"]
    return written


# "designated" rows: from a hunt (P-D3), seed 003's "手动指定时，搜索只使用所选连接和模型" - an assigned search uses
# only the chosen connection and model (and its usage is that model's); a request naming another model passed every
# row, since none read the request's model.
# "dated" rows: from an outside hunt (L), seed 003's "搜索请求只携带查询，因此应将必要背景写入查询" - background the
# search needs is the caller's to write into the query; a date the tool adds itself is background the query lacks.
REQUEST_CASES = (
    Case("messages", "extra messages, history or client tools, a system instruction, a second content part, "
         "another web_search tool version, a budget other than 8192, or a body sent without the key or a JSON "
         "Content-Type on Messages; from an outside hunt, the tool's user_location (the caller's place, not in the "
         "query) or an MCP server (mcp_servers) beside it, or today's date added beside the query ('Today is "
         "2026-10-16.'); from a hunt (P-D3), the request naming another model than the one the search was set to "
         "use (a fixed deepseek-v4-pro, say) while its usage names the designated one",
         {"protocol": "messages", "dated": True, "designated": True}),
    Case("responses", "the same on Responses (instructions, a second input item or part, another tool type such "
         "as web_search_preview, max_output_tokens, previous_response_id, a server-side conversation or a stored "
         "prompt, no key or JSON Content-Type); from an outside hunt, the tool's user_location, a text.format "
         "schema whose descriptions instruct the model, or today's date beside the query; from a hunt (P-D3), "
         "another model than the designated one", {"protocol": "responses", "dated": True, "designated": True}),
    # seed 003: "搜索请求只携带查询，因此应将必要背景写入查询" - the query carries the context, so it goes whole;
    # whether a target refuses a query longer than its own bound (a tool error, no request) is open.
    Case("messages-long-query", "the query cut to a short limit (the Search API's 128 characters carried over, "
         "or 256), losing the context the caller wrote into it",
         {"protocol": "messages", "queries": LONG_QUERIES}),
    Case("messages-query-of-1700-characters", "the query cut silently at a longer limit (1 000 characters), still "
         "losing the context the caller wrote into it", {"protocol": "messages", "queries": LONGER_QUERIES}),
    Case("messages-query-of-3400-characters", "the query cut silently at a still longer limit (2 000 "
         "characters)", {"protocol": "messages", "queries": LONGEST_QUERIES}),
    # From an outside hunt: a cut at 3 600 characters. The reference takes 4 096 bytes; a query just under that
    # leaves no silent cut below it unseen.
    Case("messages-query-of-4089-bytes", "the query cut silently anywhere below the reference's 4 096 bytes "
         "(3 600 characters): its last words lost", {"protocol": "messages", "queries": BOUND_QUERIES}),
    # From a hunt (P-D2): a query past the reference's 4 096 bytes cut there (or at 8 000) and sent, where the
    # reference refuses it; every row above holds queries under that bound, so no row saw what a target does
    # with a longer one. Refused as a tool error with no request sent, or sent whole: both are right.
    Case("messages-query-of-20000-characters", "a query longer than the target's own bound cut silently to that "
         "bound (4 096 bytes, or 8 000) and searched, instead of refused as a tool error or sent whole",
         {"protocol": "messages", "queries": HUGE_QUERIES}),
    # seed 003: "搜索服务不会读取对话、附件、工作区或其他搜索的历史" - an earlier search's answer is such history
    Case("messages-no-earlier-answer", "carrying an earlier search's answer into the next search's request (its "
         "source URLs as 'already found', its titles or its summary)",
         {"protocol": "messages", "earlier": AsAnswer(_messages_body(
             [_result_block([_item(*_EARLIER_SOURCE)]), {"type": "text", "text": _EARLIER_SUMMARY}]))}),
    # From an outside hunt: seed 001's ori_question habit carried over, the user's prompt sent as background.
    Case("messages-no-prompt", "the conversation's latest human prompt carried along with the query (seed 001's "
         "ori_question habit: 'the user asked: ...'), so the search reads the conversation",
         {"protocol": "messages", "prompt": _PROMPT}),
    Case("messages-no-earlier-cookie", "one client kept for every search, so a cookie an earlier search's answer "
         "set rides along with the next search (another search's state)",
         {"protocol": "messages", "cookie": True, "earlier": Status(200, body=_messages_body(
             [_result_block([_item("https://c.example.test/")]), {"type": "text", "text": "Cookie answer."}]),
             headers={"Set-Cookie": "session=earlier-search; Path=/"})}),
    # seed 003: "并发搜索使用独立的 provider 实例" (concurrent searches use separate provider instances); with
    # "不会读取...其他搜索的历史", two searches in flight at once share nothing: the second is answered first.
    Case("messages-concurrent", "provider state shared by searches in flight at once: one message list both "
         "queries join (a request carrying the other search's query), or one answer holder or source list (a "
         "search answered with the other's summary or sources, which landed first)",
         {"protocol": "messages", "concurrent": True}),
    Case("responses-concurrent", "the same on Responses", {"protocol": "responses", "concurrent": True}),
    Case("messages-concurrent-streamed", "the same on streamed answers, or one text buffer both streams fill (a "
         "search's summary holding the other's text)", {"protocol": "messages", "concurrent": True, "stream": True}),
    # Streaming is open, but a streamed request is one search request too (from an outside hunt: the budget
    # halved on the streaming path, where no row looked).
    Case("messages-streamed", "the same on a streamed Messages request (another budget, tools or history where the "
         "target streams)", {"protocol": "messages", "stream": True}),
    Case("responses-streamed", "the same on a streamed Responses request", {"protocol": "responses", "stream": True}),
    # From an outside hunt (L): seed 003's request holds "only the query and the backend's native search tool", so
    # search filters the model wrote beside the query (the native tool's own field names) are refused or left out.
    Case("messages-search-filters-among-the-arguments", "a model-supplied allowed_domains, blocked_domains, "
         "user_location or filters argument forwarded into the request (onto the native tool, or into the query's "
         "text as site: terms) instead of refused or left out", {"protocol": "messages", "extra": MODEL_FILTERS}),
    Case("responses-search-filters-among-the-arguments", "the same on Responses (the tool's filters.allowed_domains "
         "or user_location)", {"protocol": "responses", "extra": MODEL_FILTERS}),
    # From an outside hunt (M2): seed 003's "搜索请求只携带查询……搜索服务不会读取对话" - the request carries only the
    # query and the search reads no conversation, so whatever fixed words a target puts round the query, the
    # conversation's latest prompt changes none of them (the marker row above sees only the prompt's own text).
    Case("messages-prompt-independent", "text beside the query derived from the conversation: the same query "
         "searched with no latest prompt, a Thai one and an English one sends different user text (a reply-language "
         "note taken from the prompt, '(answer in Thai)')", {"protocol": "messages", "prompts": PROMPTS}),
    Case("responses-prompt-independent", "the same on Responses", {"protocol": "responses", "prompts": PROMPTS}),
)
# Responses request fields that would bring a search what seed 003 keeps from it: the history of a server-side
# conversation (which every search naming it shares), or a stored prompt's own instructions and messages.
HISTORY_FIELDS = {"conversation": "a conversation's history is read; each search is stateless",
                  "prompt": "a stored prompt adds instructions; the request carries only the query"}
# The native search tool each backend documents (README "Upstream wire facts"): seed 003 sends the
# backend's native tool, so another version is a tool this backend is not known to serve natively.
NATIVE_TOOL = {"messages": {"type": "web_search_20250305", "name": "web_search"}, "responses": {"type": "web_search"}}


def _one_text(content: Any) -> bool:
    """A message content that is one piece of text: a string, or a list of exactly one text part."""
    if isinstance(content, str):
        return True
    return (isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict)
            and content[0].get("type") in ("text", "input_text"))


def _tool_problem(protocol: str, tools: Any) -> str | None:
    if not (isinstance(tools, list) and len(tools) == 1 and isinstance(tools[0], dict)):
        return f"tools must be exactly the native web_search tool, got {tools!r}"[:200]
    native = NATIVE_TOOL[protocol]
    if any(tools[0].get(k) != v for k, v in native.items()):
        return f"the tool must be the backend's native {native!r}, got {tools[0]!r}"[:200]
    place = tools[0].get("user_location")
    if isinstance(place, dict) and any(place.get(k) for k in PLACE_FIELDS):  # from an outside hunt: the caller's place
        return "the search tool carries user_location (background the search needs goes into the query)"
    return None


# What makes a user_location tell a place (an empty or type-only one tells none).
PLACE_FIELDS = ("city", "region", "country", "timezone")
# Messages fields that hand the search model tools of another kind (seed 003: no local tools for it).
TOOL_FIELDS = ("mcp_servers",)


def _request_problems(protocol: str, body: Any, query: str) -> list[str]:
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    problems: list[str] = []
    tool = _tool_problem(protocol, body.get("tools"))
    if tool is not None:
        problems.append(tool)
    if protocol == "messages":
        messages, budget = body.get("messages"), body.get("max_tokens")
        if not (isinstance(messages, list) and len(messages) == 1 and messages[0].get("role") == "user"):
            problems.append("messages must be exactly one user message")
        elif query not in json.dumps(messages[0], ensure_ascii=False):
            problems.append("the user message does not carry the query")
        elif not _one_text(messages[0].get("content")):
            problems.append("the user message carries more than one piece of text (only the query goes)")
        if body.get("system") not in (None, "", []):
            problems.append("a system instruction is sent (the request carries only the query and the tool)")
        problems += [f"{field} is set (the search model gets no tools but the native search)" for field in TOOL_FIELDS
                     if body.get(field) not in (None, [], {})]
        if budget != 8192:
            problems.append(f"max_tokens is {budget!r}, expected 8192")
    else:
        items, budget = body.get("input"), body.get("max_output_tokens")
        one = isinstance(items, str) or (isinstance(items, list) and len(items) == 1)
        if not one or query not in json.dumps(items, ensure_ascii=False):
            problems.append("input must be one user input carrying the query")
        elif isinstance(items, list) and not (isinstance(items[0], dict) and _one_text(items[0].get("content"))):
            problems.append("the user input carries more than one piece of text (only the query goes)")
        if body.get("instructions") not in (None, ""):
            problems.append("instructions are sent (the request carries only the query and the tool)")
        text = body.get("text")
        shape = text.get("format") if isinstance(text, dict) else None
        if shape not in (None, {"type": "text"}):  # from an outside hunt: instructions in a schema's descriptions
            problems.append("text.format asks for a structured answer (a schema is an instruction besides the query)")
        if budget != 8192:
            problems.append(f"max_output_tokens is {budget!r}, expected 8192")
        if body.get("previous_response_id") is not None:
            problems.append("previous_response_id is set (each search is stateless)")
        # seed 003: the search reads no conversation and no other search's history, and carries no instruction
        # but the query; store is left open (storing an answer makes no later search read it)
        for field, what in HISTORY_FIELDS.items():
            if body.get(field) not in (None, "", {}):
                problems.append(f"{field} is set ({what})")
    return problems


@check(
    "standalone.request.isolated",
    "each search is one model request with only the query and the native search tool, budget 8192",
    seed="003",
    requires=(SA,),
    provider="messages",
    rule="Seed 003: every search sends a separate model request containing only the query and the search "
    "backend's native search tool (so no system prompt or instructions, no other message or content part, and "
    "the tool version the backend documents) and reads no conversation or other searches' history (so no "
    "previous_response_id, server-side conversation or stored prompt, nothing of the conversation's latest human "
    "prompt (the text round the query is the same whatever that prompt says, or with none), nothing of an "
    "earlier search's answer: its sources or summary, and no date the tool adds itself; "
    "storing the answer is open); search filters the model wrote beside the query (allowed_domains, "
    "blocked_domains, user_location, filters) are refused as a tool error or left out, never sent; "
    "concurrent searches use separate provider instances, so two searches in flight at once share nothing (each "
    "request carries its own query alone, each result none of the other's answer: its text or sources; whether a "
    "target runs two searches at once is open); "
    "the query carries the needed context, so it goes whole (a target may refuse one longer than its own bound "
    "as a tool error, never cut it silently); the output budget is 8192 tokens; the search tool "
    "carries no user_location (the caller's place is background, which goes into the query), and no other tools "
    "ride along (Messages mcp_servers) nor an answer schema (Responses text.format other than plain text); an "
    "assigned search uses only the chosen connection and model, so the request names the model the search was set "
    "to use (deepseek-v4-flash here, as the adapter protocol sets it; never any other); the "
    "search uses the account's own endpoint and credentials (so the request presents "
    "the configured key, as Authorization: Bearer or x-api-key, with the JSON Content-Type the backend's API "
    "takes; other headers are free).",
    cases=REQUEST_CASES,
)
async def request_isolated(ctx: CheckContext) -> None:
    for case in REQUEST_CASES:
        await _streaming(ctx, case)
        if case.params.get("concurrent"):
            await _concurrent(ctx, case)
            continue
        if "prompts" in case.params:
            await _prompt_independent(ctx, case)
            continue
        protocol = case["protocol"]
        queries: tuple[str, str] = case.params.get("queries", ("first standalone topic", "second standalone topic"))
        ctx.emu.log.clear()
        earlier: Fault | None = case.params.get("earlier")
        if earlier is not None:  # the first search's answer (the request after it must carry none of it)
            ctx.emu.inject("responses" if protocol == "responses" else "messages", earlier, times=1)
        extra: dict[str, Any] | None = case.params.get("extra")
        outcomes = [await _search(ctx, query, protocol, case.params.get("prompt"), extra) for query in queries]
        if extra is not None:  # refused, or searched as the query alone: never a filter of the model's sent
            told = [json.dumps(r.json, ensure_ascii=False) for r in ctx.records(ROUTES[protocol])]
            carried = [key for key, marker in FILTER_MARKERS.items() if any(marker in body for body in told)]
            require(not carried, f"[{case.name}] the search request carries the model's {', '.join(carried)} "
                    "(the request holds only the query and the native search tool)", catches=case.catches)
            if not all(outcome.ok for outcome in outcomes):
                for outcome in outcomes:
                    if not outcome.ok:
                        expect_error(outcome, f"[{case.name}] a search with filters among its arguments")
                continue
        if "queries" in case.params and not any(o.ok for o in outcomes) and not ctx.records(ROUTES[protocol]):
            for outcome in outcomes:  # refused as longer than the target's own bound: open, as a tool error
                expect_error(outcome, f"[{case.name}] a query of {len(queries[0])} characters refused")
            continue
        for outcome in outcomes:
            _visible(outcome, f"[{case.name}] search")
        records = ctx.records(ROUTES[protocol])
        bodies = [r.json for r in records]
        require(len(bodies) == 2, f"[{case.name}] expected one request per search, saw {len(bodies)}")
        for record in records:
            require(record.credential == "api_key",
                    f"[{case.name}] the configured key was not presented (saw {record.credential})")
            kind = (record.header("content-type") or "").split(";", 1)[0].strip().lower()
            require(kind == "application/json",
                    f"[{case.name}] Content-Type {record.header('content-type')!r}, expected application/json")
        for body, query in zip(bodies, queries, strict=True):
            problems = _request_problems(protocol, body, query)
            require(not problems, f"[{case.name}] {'; '.join(problems)}", body=body, catches=case.catches)
        require(queries[0] not in json.dumps(bodies[1], ensure_ascii=False),
                f"[{case.name}] the second search carries the first one's query")
        if case.params.get("designated"):
            named = [body.get("model") for body in bodies]
            require(all(model == STANDALONE_MODEL for model in named), f"[{case.name}] the search requests name the "
                    f"model {named!r}, expected {STANDALONE_MODEL!r} (the model the search was set to use)",
                    body=bodies[0], catches=case.catches)
        if case.params.get("cookie"):
            sent = records[1].header("cookie")
            require(sent is None, f"[{case.name}] the second search sent Cookie {sent!r}, set by the first one's "
                    "answer", catches=case.catches)
        if case.params.get("prompt"):
            carried = [body for body in bodies if _PROMPT_MARKER in json.dumps(body, ensure_ascii=False)]
            require(not carried, f"[{case.name}] {len(carried)} of the searches carry the conversation's latest "
                    f"prompt ({_PROMPT_MARKER!r}); the request carries only the query",
                    body=carried[0] if carried else None, catches=case.catches)
        if case.params.get("dated"):  # the user's text but the query (json.dumps leaves a date as written)
            for body, query in zip(bodies, queries, strict=True):
                said = json.dumps(body.get("messages" if protocol == "messages" else "input"), ensure_ascii=False)
                outside = said.replace(query, "")
                dated = [d for d in todays_dates() if re.search(rf"(?<!\d){re.escape(d)}(?!\d)", outside, re.I)]
                require(not dated, f"[{case.name}] the search request carries today's date {dated[:1]!r} beside "
                        "the query (background goes into the query)", body=body, catches=case.catches)
        if earlier is not None:
            second = json.dumps(bodies[1], ensure_ascii=False)
            carried = [what for what, piece in EARLIER_PIECES.items() if piece in second]
            require(not carried, f"[{case.name}] the second search carries the first one's answer "
                    f"({', '.join(carried)})", body=bodies[1], catches=case.catches)


async def _prompt_independent(ctx: CheckContext, case: Case) -> None:
    """One query searched under each of the case's latest prompts: the user text the same in each (whatever fixed
    wording a target puts round the query; the other rows judge the rest of the request, and other fields are not
    compared here)."""
    protocol, prompts = case["protocol"], case["prompts"]
    ctx.emu.log.clear()
    for prompt in prompts:
        _visible(await _search(ctx, SAME_QUERY, protocol, prompt), f"[{case.name}] search")
    bodies = [r.json for r in ctx.records(ROUTES[protocol])]
    require(len(bodies) == len(prompts), f"[{case.name}] expected one request per search, saw {len(bodies)}")
    field = "messages" if protocol == "messages" else "input"
    said = [json.dumps(body.get(field) if isinstance(body, dict) else body, ensure_ascii=False, sort_keys=True)
            for body in bodies]
    for prompt, text in zip(prompts[1:], said[1:], strict=True):
        require(text == said[0], f"[{case.name}] the same query searched with the latest prompt {prompt!r} sends "
                f"other text than with none ({text[:300]!r} against {said[0][:300]!r}); the request carries only "
                "the query, whatever the conversation says", catches=case.catches)


# Two searches started together: their queries and the answers each is scripted to get (its text, its sources).
CONCURRENT = (("concurrent search alpha: gold closing price", "Gold closed at 2,431 USD on Tuesday.",
               ("https://gold.example.test/close", "https://metals.example.test/gold")),
              ("concurrent search beta: silver closing price", "Silver closed at 28.90 USD on Wednesday.",
               ("https://silver.example.test/close", "https://metals.example.test/silver")))
IN_FLIGHT_BOUND = 5.0  # seconds for both searches to reach the emulator (a liveness bound, see patiently)


def _concurrent_answer(protocol: str, text: str, urls: tuple[str, ...]) -> AsAnswer:
    if protocol == "responses":
        return AsAnswer(_responses_body([_search_call(urls=urls), _answer([_text(text)])]))
    return AsAnswer(_messages_body([_result_block([_item(u, f"Title of {u}") for u in urls]),
                                    {"type": "text", "text": text}]))


async def _in_flight(ctx: CheckContext, gates: list[Gate]) -> bool:
    """Whether a request is parked at each of ``gates`` at once (within a liveness bound)."""
    try:
        for gate in gates:
            async def parked(bound: float, gate: Gate = gate) -> None:
                await ctx.blocking(gate.wait_held, 1, bound)

            await patiently(parked, IN_FLIGHT_BOUND)
    except TimeoutError:
        return False
    return True


async def _concurrent(ctx: CheckContext, case: Case) -> None:
    """Two searches started together, each answer held until both are in flight; the second is answered first.
    A target that runs searches one at a time (whether they run at once is its own) is checked one after the
    other: its answers are released as its requests come."""
    protocol = case["protocol"]
    route: RouteName = "responses" if protocol == "responses" else "messages"
    ctx.fresh()
    gates = [ctx.emu.gate(f"{case.name} {n}") for n in ("first", "second")]
    for gate, (query, text, urls) in zip(gates, CONCURRENT, strict=True):
        ctx.emu.inject(route, Hold(gate, timeout=30, then=_concurrent_answer(protocol, text, urls)),
                       when=lambda body, query=query: query in json.dumps(body, ensure_ascii=False))
    calls = [ctx.target.start_call("standalone_search", {"arguments": {"query": query}, "protocol": protocol})
             for query, _, _ in CONCURRENT]
    outcomes = [asyncio.ensure_future(call.outcome(CALL_TIMEOUT)) for call in calls]
    try:
        together = await _in_flight(ctx, gates)
        ctx.note(f"{case.name}: in flight at once", together)
        gates[1].release()
        if together:  # the second's answer lands before the first is released, if the target lets it
            await asyncio.wait({outcomes[1]}, timeout=IN_FLIGHT_BOUND)
        gates[0].release()
        done = [await outcome for outcome in outcomes]
    finally:
        for gate in gates:
            gate.release()
    queries = [query for query, _, _ in CONCURRENT]
    bodies = [json.dumps(r.json, ensure_ascii=False) for r in ctx.records(route)]
    require(len(bodies) == 2, f"[{case.name}] expected one request per search, saw {len(bodies)}")
    for body in bodies:
        carried = [query for query in queries if query in body]
        require(len(carried) == 1, f"[{case.name}] a search request carries {len(carried)} of the two concurrent "
                "queries (each carries only its own)", body=body, catches=case.catches)
    # Nothing of the other's answer, and something of its own (whether the summary carries all of the answer and
    # which sources are kept are result.bounded's and sources.filtered's business).
    for outcome, (query, text, urls), (_, other, others) in zip(done, CONCURRENT, CONCURRENT[::-1], strict=True):
        value = _visible(outcome, f"[{case.name}] search {query!r}")
        summary = " ".join(str(value["summary"]).split())
        got = {_url_key(s.get("url")) for s in value["sources"]}
        shown = f"summary {value['summary'][:160]!r}, sources {sorted(map(str, got))!r}"
        theirs = [what for what, hit in (("text", other in summary), ("sources", got & {_url_key(u) for u in others}))
                  if hit]
        require(not theirs, f"[{case.name}] the search {query!r} was answered with the other search's "
                f"{' and '.join(theirs)}: {shown}", catches=case.catches)
        require(text in summary or bool(got & {_url_key(u) for u in urls}), f"[{case.name}] the search {query!r} "
                f"was answered with neither its own text nor its own sources: {shown}", catches=case.catches)


# -- the result bound -----------------------------------------------------------------------------

# 2 024 characters each: long, yet under the 2 048 the reference keeps (a target's own URL limit is open)
LONG_URLS = [f"https://l{i}.example.test/" + "p" * 2_000 for i in range(8)]
THAI_URLS = [f"https://th{i}.example.test/news/gold-price" for i in range(8)]
THAI_TITLE = ("ราคาทองคำวันนี้" * 44)[:650]  # 650 characters of 3 UTF-8 bytes: under the 2 048 the reference keeps
EDGE_SOURCES = [(f"https://edge{i}.example.test/report", f"Title {i} " + "t" * 1_450) for i in range(8)]
LONG_SOURCES = [(u, f"Title {i} " + "t" * 2_000) for i, u in enumerate(LONG_URLS)]  # 32 000 bytes on their own


def _edge_summary() -> str:
    """The ASCII summary that makes EDGE_SOURCES' compact JSON result exactly one byte over the bound."""
    sources = [{"title": t, "url": u} for u, t in EDGE_SOURCES]
    empty = json.dumps({"summary": "", "sources": sources}, ensure_ascii=False, separators=(",", ":"))
    return "x" * (MAX_RESULT_BYTES + 1 - len(empty.encode("utf-8")))


EDGE_SUMMARY = _edge_summary()  # 11 871 bytes: under the reference's own 12 000-byte summary bound
# Seed 003: the main conversation receives "summary, sources (title and URL) and an optional truncated flag", the
# summary being the search model's generated answer ("生成的总结"). A short answer needs no cut, so its text
# reaches the summary whole (the words a target puts around it are open).
ANSWER_TEXT = "Gold closed at 2,431 USD on Tuesday."
RESULT_FIELDS = ("summary", "sources", "truncated")  # seed 003: the JSON the main model receives, its keys all
FIELDS_CATCHES = ("other keys beside summary, sources and truncated in the JSON the main model reads (the search's "
                  "usage, query, model or reasoning shown to it), on any path: plain, cut or streamed")
ANSWERED = {"messages": _messages_body([_result_block([_item("https://a.example.test/")]),
                                        {"type": "text", "text": ANSWER_TEXT}]),
            "responses": _responses_body([_search_call(urls=("https://a.example.test/",)),
                                          _answer([_text(ANSWER_TEXT)])])}
DUPLICATED = ("https://dup.example.test/gold", "https://other.example.test/gold")
LONG_TITLE_URL = "https://long-title.example.test/gold"
LONG_TITLE = ("Gold price archive, every closing price since 1970 " * 100)[:5_000].rstrip()
GRIN = "\U0001F600"  # an astral character: two UTF-16 units, four UTF-8 bytes
BOUND_CASES = (
    Case("huge-messages-summary", "no bound on the encoded result (Messages answer of 60 000 characters)",
         {"protocol": "messages", "fault": HugeSummary(60_000)}),
    Case("huge-responses-summary", "the same over Responses (200 000 characters)",
         {"protocol": "responses", "fault": HugeSummary(200_000)}),
    Case("nul-heavy-summary", "measuring raw characters instead of encoded bytes (\\u0000 escapes x6)",
         {"protocol": "messages", "fault": Malformed(body=_messages_body(
             [_result_block([_item("https://a.example.test/")]), {"type": "text", "text": "\x00" * 20_000}]))}),
    Case("cjk-summary", "counting characters of the JSON text instead of its UTF-8 bytes (12 000 CJK characters "
         "are 36 000 bytes)", {"protocol": "messages", "fault": Malformed(body=_messages_body(
             [_result_block([_item("https://a.example.test/")]), {"type": "text", "text": "搜" * 12_000}]))}),
    Case("cjk-cut-inside-a-character", "cutting the summary's bytes inside a character (a U+FFFD left at the cut), "
         "or failing on it (one ASCII letter first puts every 3-byte character off the grid of a byte limit)",
         {"protocol": "messages", "fault": Malformed(body=_messages_body(
             [_result_block([_item("https://a.example.test/")]), {"type": "text", "text": "a" + "搜" * 12_000}]))}),
    # From a hunt (W2-1): every cut row was ASCII, CJK or NUL, so a summary cut in UTF-16 units (JavaScript's slice)
    # to fit the byte bound was certified: an emoji at the cut split, its lone half escaped into the JSON (\ud83d).
    # A character is one: cut before it or after it, never inside.
    # From a review (R9-1): one prefix split only some cuts (a byte bound splits when (bound - prefix) % 4 == 3 or so,
    # a bound in units when it is even), so a cut keeping room for an ellipsis passed: one row per prefix length.
    *(Case(f"astral-cut-inside-a-pair-after-{len(prefix)}", "cutting the summary in UTF-16 units: an astral character "
           "(an emoji) at the cut split, half a surrogate pair left in the JSON the model reads (one prefix length of "
           "four, so any bound splits one of them)",
           {"protocol": "messages", "fault": Malformed(body=_messages_body(
               [_result_block([_item("https://a.example.test/")]), {"type": "text", "text": prefix + GRIN * 6_000}]))})
      for prefix in ("", "a", "ab", "abc")),
    # Nothing needs cutting here: truncated must not claim a cut (it may be left out).
    Case("summary-of-12000-bytes", "setting truncated on a summary shown whole at a bound's edge (a cut at < "
         "instead of <= 12 000 bytes)", {"protocol": "messages", "text": "x" * 12_000}),
    # From an audit: a summary left empty with truncated set (or a placeholder) passed every row above.
    Case("messages-answer-in-the-summary", "a summary that does not carry the search model's answer: left empty "
         "(truncated set to excuse it) or a placeholder such as 'see the sources'",
         {"protocol": "messages", "fault": AsAnswer(ANSWERED["messages"]), "answer": ANSWER_TEXT}),
    Case("responses-answer-in-the-summary", "the same on Responses, or the summary read from the top-level "
         "output_text, a field only the SDKs compute (a Responses answer on the wire has none: an empty summary)",
         {"protocol": "responses", "fault": AsAnswer(ANSWERED["responses"]), "answer": ANSWER_TEXT}),
    Case("messages-answer-in-the-summary-streamed", "the same on a streamed answer, or its text deltas not read "
         "(the summary left empty)",
         {"protocol": "messages", "fault": AsAnswer(ANSWERED["messages"]), "answer": ANSWER_TEXT, "stream": True}),
    Case("responses-answer-in-the-summary-streamed", "the same on a streamed Responses answer (the summary read "
         "from output_text, or from an event that carries no text)",
         {"protocol": "responses", "fault": AsAnswer(ANSWERED["responses"]), "answer": ANSWER_TEXT, "stream": True}),
    # From an outside hunt (O-B3): the search's usage added to the JSON the main model reads. Seed 003 names what that
    # JSON holds ("summary、sources（标题和 URL）以及可选的 truncated 标记") and reports usage apart ("单独…上报").
    Case("messages-result-holds-its-fields-only", FIELDS_CATCHES,
         {"protocol": "messages", "fault": AsAnswer(ANSWERED["messages"]), "fields": True}),
    Case("responses-result-holds-its-fields-only", "the same on Responses",
         {"protocol": "responses", "fault": AsAnswer(ANSWERED["responses"]), "fields": True}),
    # seed 003: "编码后的结果最多 24000 字节" - the whole encoded result, its sources included
    Case("eight-long-sources", "bounding the summary alone and never measuring the sources (eight sources whose "
         "URLs and titles are 2 000 characters each are 32 000 bytes on their own)",
         {"protocol": "messages", "fault": Malformed(body=_messages_body(
             [_result_block([_item(u, f"Title {i} " + "t" * 2_000) for i, u in enumerate(LONG_URLS)]),
              {"type": "text", "text": "s" * 30_000}]))}),  # a summary any bound must cut: truncated is due
    # From an outside hunt: sources dropped to fit, the short summary whole, and no truncated flag. A target
    # whose own URL limit refuses these 2 024-character URLs drops them as sources, not as a cut: the row then
    # holds only for a target that keeps such a URL when it fits (asked first, alone).
    # From a review (R2 F4): every title cut to 100 bytes to fit, all eight sources and the summary kept, unflagged,
    # passed (only fewer sources were judged). Eight sources kept fit only cut: a cut the result flags.
    Case("eight-long-sources-short-summary", "truncated set only when the summary is cut, so sources dropped, or "
         "their titles cut, to fit the bound go unflagged (the eight sources alone are 32 000 bytes; the summary "
         "is 16)",
         {"protocol": "messages", "fault": Malformed(body=_messages_body(
             [_result_block([_item(u, t) for u, t in LONG_SOURCES]),
              {"type": "text", "text": "A short summary."}])), "if_kept": LONG_URLS[0]}),
    # From an outside hunt: the bound counted in characters passed the rows above, since the summary's own byte bound
    # (12 000 bytes in the reference) kept a CJK summary inside it and the long sources are ASCII. Here eight Thai
    # titles (1 950 bytes, 650 characters each) join a summary any bound must cut (36 000 bytes): with a full
    # 12 000-byte summary the JSON is about 9 700 characters but 28 100 bytes. Seed 003 bounds the encoded result
    # in bytes ("24000 字节"); whether sources are dropped or the summary cut further is open, and truncated is due.
    Case("cjk-summary-thai-titles", "counting the encoded result's characters instead of its UTF-8 bytes once the "
         "summary is cut to its own bound (a 12 000-byte CJK summary and eight 3-byte-per-character Thai titles are "
         "under 24 000 characters, over 24 000 bytes)",
         {"protocol": "messages", "fault": Malformed(body=_messages_body(
             [_result_block([_item(u, THAI_TITLE) for u in THAI_URLS]),
              {"type": "text", "text": "搜" * 12_000}]))}),
    # From an outside hunt (K): a bound off by one (<= 24 001) passed every row above, none of whose results
    # lands on 24 001 bytes. Seed 003: "编码后的结果最多 24000 字节" (the encoded result is at most 24 000 bytes).
    # Here the whole summary and sources encode (compact, as the reference does) to exactly 24 001 bytes; only the
    # size is required: how a target gets under it (summary, titles or sources cut) and its truncated are left to
    # the rows above.
    Case("result-of-24001-bytes", "the bound off by one (a result of 24 001 bytes let through: <= 24 001, or < "
         "24 002, where seed 003 says at most 24 000)",
         {"protocol": "messages", "size_only": True, "fault": Malformed(body=_messages_body(
             [_result_block([_item(u, t) for u, t in EDGE_SOURCES]),
              {"type": "text", "text": EDGE_SUMMARY}]))}),
    # From a hunt (T2-3): truncated set whenever the backend's list was shortened passed; here only an exact
    # duplicate of a source is dropped (seed 003 keeps "八个不重复的 HTTP(S) 来源", eight distinct sources) and the
    # short answer is whole: nothing was cut, so the flag is absent or false.
    Case("duplicate-source-short-answer", "truncated set when only an exact duplicate source was dropped (fewer "
         "sources than the backend listed taken for a cut), the short answer whole",
         {"protocol": "messages", "answer": ANSWER_TEXT, "fault": AsAnswer(_messages_body(
             [_result_block([_item(DUPLICATED[0]), _item(DUPLICATED[0]), _item(DUPLICATED[1])]),
              {"type": "text", "text": ANSWER_TEXT}]))}),
    # From a hunt (T2-4): source titles cut to a fixed length with no flag passed (the reference cut at 2 048 bytes
    # unflagged). Seed 003 sets no title bound: a title of 5 000 characters in a small result may be kept whole
    # (unflagged, nothing lost) or cut by a target's own bound, which is a cut the result flags.
    # From a review (R2 F3): the source dropped for its long title, unflagged, passed. Seed 003 keeps up to eight
    # distinct HTTP(S) sources ("最多保留八个不重复的 HTTP(S) 来源"): this one dropped is lost, a cut the result flags.
    Case("long-title-small-result", "a source's title cut to a fixed length (2 048 bytes, 200, ...), or the source "
         "dropped for its long title, without setting truncated, the rest of the result small",
         {"protocol": "messages", "long_title": LONG_TITLE, "fault": AsAnswer(_messages_body(
             [_result_block([_item(LONG_TITLE_URL, LONG_TITLE)]), {"type": "text", "text": ANSWER_TEXT}]))}),
    # The same answers asked for as a stream (configure standalone_stream; a target may answer plainly).
    Case("huge-messages-summary-streamed", "losing a streamed answer's text deltas (a text block read from its "
         "content_block_start alone), so the huge summary is never cut",
         {"protocol": "messages", "fault": HugeSummary(60_000), "stream": True}),
    Case("huge-responses-summary-streamed", "reading a streamed Responses answer from another event than its final "
         "one (response.completed), so the stream never completes or the answer is lost",
         {"protocol": "responses", "fault": HugeSummary(200_000), "stream": True}),
    Case("huge-summary-in-the-block-start-streamed", "reading a streamed text block from its deltas alone, so the "
         "text its content_block_start already carried (here all of it) is lost",
         {"protocol": "messages", "stream": True, "fault": _own_stream("messages", _messages_body(
             [_result_block([_item("https://a.example.test/")]), {"type": "text", "text": "x" * 60_000}]),
             _text_in_the_start)}),
    Case("summary-of-11900-bytes-streamed", "joining a streamed text block's deltas with something between them, "
         "so a summary the answer holds whole (11 900 bytes) grows past the bound and is shown cut",
         {"protocol": "messages", "text": "x" * 11_900, "stream": True}),
)


async def _keeps_url(ctx: CheckContext, url: str) -> bool:
    """Whether the target keeps ``url`` as a source when it is the only one and the result fits."""
    answer = _messages_body([_result_block([_item(url, "Title")]), {"type": "text", "text": "Short."}])
    sources = _visible(await _faulted(ctx, "messages", Malformed(body=answer)), "[a long URL alone]")["sources"]
    return any(isinstance(s, dict) and s.get("url") == url for s in sources)


def _whole_fault(text: str) -> Fault:
    """A completed search with one result whose answer text is ``text`` (streamed when asked)."""
    return AsAnswer(_messages_body([_result_block([_item("https://a.example.test/")]), {"type": "text", "text": text}]))


@check(
    "standalone.result.bounded",
    "the model-visible JSON is at most 24 000 encoded bytes, valid, with truncated set when cut and the answer's "
    "text in its summary when not",
    seed="003",
    requires=(SA,),
    provider="messages",
    rule="Seed 003: the encoded result is at most 24 000 bytes, so the generic tool-output limit never cuts the "
    "JSON; a cut result carries the optional truncated flag (sources dropped to fit are a cut too, where the "
    "target keeps each of them alone, and so is a title cut by a target's own bound: seed 003 sets none, so a "
    "long title is kept whole or its cut flagged, as is its source dropped or every title cut to keep all "
    "eight sources), and a result that lost nothing does not claim a cut (the "
    "summary's own bound is open; an exact duplicate source dropped is no loss: seed 003 keeps distinct sources). "
    "A cut never splits a character: neither its UTF-8 bytes (a U+FFFD left) nor an astral character's surrogate "
    "pair (half of it escaped into the JSON). "
    "The summary is the search model's generated answer: a short answer, needing no cut, reaches "
    "the summary whole and unflagged, whatever words a target puts around it (which of several text blocks make "
    "up the summary is open; streamed or not, the same answer). The JSON holds summary, sources and the optional "
    "truncated flag, nothing beside them: the search's usage is reported apart, never shown to the main model.",
    cases=BOUND_CASES,
)
async def result_bounded(ctx: CheckContext) -> None:
    for case in BOUND_CASES:
        await _streaming(ctx, case)
        text = case.params.get("text")
        outcome = await _faulted(ctx, case["protocol"], case["fault"] if text is None else _whole_fault(text))
        value = _visible(outcome, f"[{case.name}]")
        size = len((outcome.text or "").encode("utf-8"))
        require(size <= MAX_RESULT_BYTES, f"[{case.name}] the result is {size} encoded bytes, over 24000")
        # From an outside hunt: bytes cut inside a character and decoded with replacement (no answer here has one)
        require("\ufffd" not in str(value.get("summary", "")), f"[{case.name}] the summary holds U+FFFD: a character "
                "was cut inside its bytes and replaced", catches=case.catches)
        lone = lone_surrogates(value)
        require(not lone, f"[{case.name}] the result holds lone surrogate(s) {lone}: a character was cut inside its "
                "surrogate pair", catches=case.catches)
        # Every row, cut or not, streamed or not: a key added on one path alone is still a key (a review's reading).
        extra = sorted(str(key) for key in value if key not in RESULT_FIELDS)
        require(not extra, f"[{case.name}] the result carries {extra} beside summary, sources and truncated",
                keys=extra, catches=FIELDS_CATCHES)
        if case.params.get("fields"):
            continue
        long_title = case.params.get("long_title")
        if long_title is not None:  # kept whole and unflagged, or cut and flagged, or dropped and flagged
            given = [s.get("title") for s in value["sources"] if _url_key(s.get("url")) == _url_key(LONG_TITLE_URL)]
            whole = given == [long_title]
            shown = "dropped" if not given else "whole" if whole else f"shown as {str(given)[:80]}"
            require(whole != (value.get("truncated") is True), f"[{case.name}] the source whose title is "
                    f"{len(long_title)} characters is {shown} and truncated is {value.get('truncated')!r}",
                    catches=case.catches)
            continue
        answer = case.params.get("answer")
        if answer is not None:  # compared with whitespace collapsed: any words around the answer are open
            said, shown = " ".join(answer.split()), " ".join(str(value["summary"]).split())
            require(said in shown and value.get("truncated") is not True, f"[{case.name}] the summary "
                    f"{value['summary'][:120]!r} (truncated {value.get('truncated')!r}) does not carry the answer's "
                    f"text {answer!r} whole", catches=case.catches)
            continue
        if case.params.get("size_only"):
            continue
        kept_alone = case.params.get("if_kept")
        if kept_alone is not None:
            if len(value["sources"]) < len(LONG_URLS) and await _keeps_url(ctx, kept_alone):
                require(value.get("truncated") is True, f"[{case.name}] {len(value['sources'])} of 8 sources kept "
                        "(each alone is kept) but truncated is not true", catches=case.catches)
            elif len(value["sources"]) >= len(LONG_URLS):  # all kept: their 32 000 bytes fit only cut (a review's)
                titles = {_url_key(u): t for u, t in LONG_SOURCES}
                changed = [s for s in value["sources"]  # a title cut, or a source under a URL the answer never gave
                           if _url_key(s.get("url")) not in titles or titles[_url_key(s.get("url"))] != s.get("title")]
                require(not changed or value.get("truncated") is True, f"[{case.name}] all 8 sources kept, "
                        f"{len(changed)} of them not as the answer gave them (the first: {str(changed[:1])[:100]}), "
                        "but truncated is not true", catches=case.catches)
            continue
        if text is None:
            require(value.get("truncated") is True, f"[{case.name}] the result had to be cut but truncated is not "
                    "true", catches=case.catches)
            continue
        # Judged by the answer's text (whitespace collapsed), not by length: words a target puts around the answer
        # are open, so a summary at its own bound may hold a cut answer (a review's variant). A cut answer still
        # shows its start; a summary that holds neither the answer nor its start was not cut, it was mangled.
        said, shown = " ".join(text.split()), " ".join(str(value["summary"]).split())
        cut = said not in shown and said[: max(1, min(len(said), len(shown)) // 2)] in shown
        lost = cut or len(value["sources"]) < 1
        require(value.get("truncated") is not True or lost,
                f"[{case.name}] truncated is true, but the source is whole and the summary holds the answer whole, "
                "or not even its start (mangled, not cut)", catches=case.catches)


# -- prose without a native search ----------------------------------------------------------------

# A completed search and its answer: what a failed response still holds in the rows that fail it.
_SEARCHED = [_search_call(urls=("https://a.example.test/",)), _answer([_text("Partial answer.")])]
# A complete answer (a search with a result, then text) whose stream the failure rows spoil near its end
# (and, in the answer-body rows, the body of a reply whose HTTP status says the request failed).
_STRING_INDEXED: Event = ("content_block_start", {"type": "content_block_start", "index": "2",
                                                   "content_block": {"type": "text", "text": "Odd."}})
_STREAMED = {"messages": _messages_body([_result_block([_item("https://a.example.test/")]),
                                         {"type": "text", "text": "Partial answer."}]),
             "responses": _responses_body(_SEARCHED)}
DISGUISES = ("zero-width", "utf-16", "json-zero-width", "full-width", "look-alike", "spaced", "reversed")
class _KeyPartDump:
    """An upstream message that writes ``key[start:stop]`` an escape at a time with a space between escapes, as a log
    dumps it: percent-encoded (``%64 %73``), then as decimal character references (``&#100; &#115;``). Formatted
    by :func:`_prose_fault` like a case's message string (``format(key=...)``), which can only quote characters."""

    def __init__(self, lead: str, start: int, stop: int) -> None:
        self.lead, self.start, self.stop = lead, start, stop

    def format(self, *, key: str) -> str:
        part = key[self.start : self.stop]
        return self.lead + encoded_text("percent-spaced", part) + " | " + " ".join(f"&#{ord(c)};" for c in part)


class _HexDumpedHeader:
    """An upstream message that dumps ``header`` and the key's first ``stop`` characters in hex a byte at a time, a
    space between bytes (``41 75 74 ...``), as a log of the request cut at its own limit shows it; formatted like
    :class:`_KeyPartDump`."""

    def __init__(self, lead: str, header: str, stop: int) -> None:
        self.lead, self.header, self.stop = lead, header, stop

    def format(self, *, key: str) -> str:
        return self.lead + " ".join(f"{b:02x}" for b in (self.header + key[: self.stop]).encode())


class _KeyWritten:
    """An upstream message that quotes the key whole in a form errors.secret_echo's table does not write: ``wide``,
    a ``\\UXXXXXXXX`` escape per character (C, Python); ``uu``, a uuencoded dump (backticks for zero, as
    ``binascii.b2a_uu`` writes it) of ``k `` + the key + `` x``, which puts the key two bytes into a group and a byte
    after it; formatted like :class:`_KeyPartDump`."""

    def __init__(self, lead: str, form: str) -> None:
        self.lead, self.form = lead, form

    def format(self, *, key: str) -> str:
        if self.form == "wide":
            return self.lead + "".join(f"\\U{ord(c):08x}" for c in key)
        data = b"k " + key.encode() + b" x"  # one uuencoded line holds 45 bytes: the key's must fit in one
        return self.lead + "begin 644 k " + binascii.b2a_uu(data, backtick=True).decode("ascii").strip() + " end"


class _EscapeDump:
    """An upstream message that writes ``key[start:stop]`` or, with ``more``, the key's first ``stop`` characters
    a byte at a time with a separator between bytes: ``\\x64 \\x73 ...`` (``escape``), or ``0x64, 0x73, ...``, a C
    byte array, followed by the next ``more`` characters as one ``\\x``-led hex word (``0x6c\\x61746f...``), as a
    log that switches form mid-key shows it; formatted like :class:`_KeyPartDump`."""

    def __init__(self, lead: str, start: int, stop: int, more: int = 0) -> None:
        self.lead, self.start, self.stop, self.more = lead, start, stop, more

    def format(self, *, key: str) -> str:
        if not self.more:
            return self.lead + " ".join(f"\\x{b:02x}" for b in key[self.start : self.stop].encode())
        dumped = encoded_text("c-bytes", key[self.start : self.stop])
        return self.lead + dumped + "\\x" + key[self.stop : self.stop + self.more].encode().hex() + " rejected"


class _SpelledThenBackwards:
    """An upstream message that spells the key out (a space between characters), then writes the ``back`` characters
    before its last one, backwards, as ``%uXXXX`` escapes (``... 0 0 0 1%u0030%u0030...``): the 10 characters from
    the last one on, read backwards, span the two; formatted like :class:`_KeyPartDump`."""

    def __init__(self, lead: str, back: int) -> None:
        self.lead, self.back = lead, back

    def format(self, *, key: str) -> str:
        backwards = "".join(f"%u{ord(c):04x}" for c in key[-2 : -2 - self.back : -1])
        return self.lead + encoded_text("spaced", key) + backwards


# The keys a row of PROSE_CASES configures by name (as errors.secret_echo's rows).
PROSE_ROW_KEYS = {"long": LONG_KEY, "mixed": MIXED_CASE_KEY}


PROSE_CASES = (
    Case("messages-prose", "accepting a Messages answer without any web_search_tool_result",
         {"protocol": "messages"}),
    Case("responses-prose", "accepting a Responses answer without a completed web_search_call",
         {"protocol": "responses"}),
    Case("responses-search-in-progress", "counting a web_search_call that did not complete (in progress) as a search",
         {"protocol": "responses", "body": _responses_body([
             {"id": "ws_cert", "type": "web_search_call", "status": "in_progress",
              "action": {"type": "search", "query": "q"}},
             {"id": "msg_cert", "type": "message", "role": "assistant", "status": "completed",
              "content": [{"type": "output_text", "text": "From memory.", "annotations": []}]}])}),
    Case("http-500", "answering a failed search request with a success whose summary reports the failure",
         {"protocol": "messages", "fault": Status(500)}),
    Case("responses-http-429", "the same over Responses (a rate-limited search request)",
         {"protocol": "responses", "fault": Status(429)}),
    # seed 003: "失败通过普通工具错误返回" - an error status is a failure, whatever its body reads as
    Case("http-500-with-an-answer-body", "taking a failed search request's body for the answer when it reads as "
         "one (a completed search and its text), the HTTP status ignored",
         {"protocol": "messages", "fault": Status(500, body=_STREAMED["messages"])}),
    Case("http-400-with-an-answer-body", "the same for a refused request (4xx) whose body reads as an answer",
         {"protocol": "messages", "fault": Status(400, body=_STREAMED["messages"])}),
    # From a mutation survivor: the streamed twin, the status ignored once the body is an event stream.
    Case("http-500-with-an-answer-stream", "reading a streamed request's event stream as the answer whatever its "
         "HTTP status (a 500 whose body is a complete answer told as events)",
         {"protocol": "messages", "stream": True, "fault": Status(
             500, body=render_sse(messages_events(json.loads(_STREAMED["messages"]))),
             content_type="text/event-stream")}),
    Case("started-not-completed", "counting a server_tool_use (a started search) as a completed one",
         {"protocol": "messages", "body": _messages_body(
             [{"type": "server_tool_use", "id": "srvtoolu_cert", "name": "web_search", "input": {"query": "q"}},
              {"type": "text", "text": "From memory: https://guess.example.test/"}])}),
    Case("in-band-search-error", "taking a web_search_tool_result_error (the search failed in band) for a "
         "completed search, or crashing on it", {"protocol": "messages", "body": _messages_body(
             [_error_block("unavailable"), {"type": "text", "text": "From memory: https://guess.example.test/"}])}),
    Case("in-band-error-quoting-the-key", "quoting an in-band error_code unscrubbed in the tool error (this one "
         "quotes the key)", {"protocol": "messages", "secret": True, "body": _messages_body(
             [_error_block(f"invalid key {KEY}"), {"type": "text", "text": "From memory."}])}),
    Case("http-401-quoting-the-key", "quoting an upstream error body unscrubbed in the tool error (this one quotes "
         "the key)", {"protocol": "messages", "secret": True, "status": 401}),
    Case("responses-http-401-quoting-the-key", "the same over Responses",
         {"protocol": "responses", "secret": True, "status": 401}),
    Case("http-401-quoting-credential-shapes", "crashing on, or quoting the key from, an upstream error that also "
         "holds other credential-shaped text (Bearer and Basic credentials, key fields, sk-/JWT/GitHub/AWS shapes, "
         "and prose such as 'Bearer authentication')", {"protocol": "messages", "secret": True, "status": 401,
                                                         "message": CREDENTIAL_SHAPES}),
    # From the seed-2 mutation draw: errors.secret_echo's 4,580-spaces row on the path with no service guard (a
    # trim of the window's split last word that raised was turned into WEB_PROVIDER_ERROR there, not here).
    Case("http-401-quoting-the-key-after-4580-spaces", "crashing on, or quoting the key from, an upstream error "
         "longer than the window the scrubber reads, whose cut splits the key",
         {"protocol": "messages", "secret": True, "status": 401, "message": " " * 4580 + "{key} rejected"}),
    # The scrubber's folded and compact views, reached from the standalone path too (from the mutation run of
    # _secrets.py: a scrubber that raises on such text crashed this tool, which has no service guard around it).
    Case("http-401-quoting-the-key-in-disguise", "crashing on, or quoting the key from, an upstream error that "
         "writes it with invisible characters (zero-width spaces, NULs, JSON escapes of them), in full-width or "
         "look-alike letters, spelled out or backwards", {"protocol": "messages", "secret": True, "status": 401,
                                                          "forms": DISGUISES}),
    Case("client-tool-call", "crashing when the search model calls a client tool it was never given (no search "
         "completed)", {"protocol": "messages", "body": _messages_body(
             [{"type": "tool_use", "id": "toolu_cert", "name": "read_file", "input": {"path": "notes.txt"}}])}),
    Case("content-not-a-list", "crashing on an answer whose content is not a list (no completed search)",
         {"protocol": "messages", "body": _messages_body("From memory.")}),
    Case("block-not-an-object", "crashing on a content block that is not an object",
         {"protocol": "messages", "body": _messages_body(["From memory."])}),
    # From the seed-3 mutation draw: the endpoint's own refusal of a body that is JSON but not an object crashed.
    Case("answer-not-an-object", "crashing on a success answer that is JSON but not an object (a list)",
         {"protocol": "messages", "body": b'["From memory."]'}),
    Case("text-not-a-string", "crashing on a text block whose text is not a string",
         {"protocol": "messages", "body": _messages_body([{"type": "text", "text": 42}])}),
    Case("result-neither-list-nor-error", "crashing on a web_search_tool_result holding neither a result list "
         "nor an error (no completed search)", {"protocol": "messages", "body": _messages_body(
             [_result_block("none"), {"type": "text", "text": "From memory."}])}),
    Case("responses-search-failed", "taking a failed web_search_call for a completed search, or crashing on it",
         {"protocol": "responses", "body": _responses_body(
             [_search_call("failed"), _answer([_text("The web search failed.")])])}),
    Case("responses-failed-status", "taking a response whose status is failed (no error object given) for an "
         "answer, because its output holds a completed search", {"protocol": "responses", "body": _responses_body(
             _SEARCHED, status="failed")}),
    Case("responses-error-object", "ignoring the error object of a response that gives no status, because its "
         "output holds a completed search", {"protocol": "responses", "body": _responses_body(
             _SEARCHED, status=None, error={"code": "server_error", "message": "The response failed."})}),
    Case("responses-output-not-a-list", "crashing on a Responses answer whose output is not a list (null)",
         {"protocol": "responses", "body": _responses_body(None)}),
    Case("responses-item-not-an-object", "crashing on an output item that is not an object",
         {"protocol": "responses", "body": _responses_body(["From memory."])}),
    Case("responses-content-not-a-list", "crashing on a message item whose content is not a list",
         {"protocol": "responses", "body": _responses_body([_answer(None)])}),
    Case("responses-text-not-a-string", "crashing on an output_text part whose text is not a string",
         {"protocol": "responses", "body": _responses_body([_answer([_text(42)])])}),
    Case("responses-annotations-not-a-list", "crashing on an output_text part whose annotations are not a list",
         {"protocol": "responses", "body": _responses_body([_answer([_text("From memory.", None)])])}),
    # Arguments the model may send; whether one is refused or searched is open, a crash is not.
    # Streamed answers that fail near their end (configure standalone_stream; asked plainly, the same answer
    # fails as a plain one does: the JSON cut, or HTTP 500 for the error event).
    Case("messages-stream-ended-early", "taking a stream that ended cleanly before message_stop for a complete "
         "answer", {"protocol": "messages", "stream": True, "fault": AsAnswer(_STREAMED["messages"], "early", 1)}),
    Case("messages-stream-cut", "keeping what a stream cut off mid-body (before message_stop) had said as the "
         "answer", {"protocol": "messages", "stream": True, "fault": AsAnswer(_STREAMED["messages"], "cut", 2)}),
    Case("messages-stream-error-event", "ignoring an error event because the stream still ran to message_stop",
         {"protocol": "messages", "stream": True, "fault": AsAnswer(_STREAMED["messages"], "error", 2)}),
    Case("responses-stream-ended-early", "taking a stream that ended cleanly before response.completed for a "
         "complete answer (read from the items its response.output_item.done events carried)",
         {"protocol": "responses", "stream": True, "fault": AsAnswer(_STREAMED["responses"], "early", 1)}),
    Case("responses-stream-cut", "keeping the items a stream cut off inside its response.completed event had "
         "delivered as the answer",
         {"protocol": "responses", "stream": True, "fault": AsAnswer(_STREAMED["responses"], "cut", 1)}),
    Case("responses-stream-error-event", "ignoring an error event because response.completed followed it",
         {"protocol": "responses", "stream": True, "fault": AsAnswer(_STREAMED["responses"], "error", 1)}),
    Case("responses-failed-status-streamed", "reading a streamed answer from its response.output_item.done items "
         "alone, so the response.failed event that ended it (status failed) is not seen",
         {"protocol": "responses", "stream": True, "fault": AsAnswer(_responses_body(_SEARCHED, status="failed"))}),
    Case("messages-stream-answered-plainly-and-cut", "failing with no WEB_* code when the upstream answers a "
         "streamed request with plain JSON and the connection breaks mid-body",
         {"protocol": "messages", "stream": True,
          "fault": AsAnswer(_STREAMED["messages"], "cut", ignores_stream=True)}),
    # From a mutation survivor: the standalone tool has no seam turning a crash into WEB_PROVIDER_ERROR.
    # From a hunt (T2-1): a network failure answered as an empty success ({"summary": "", "sources": []}, "nothing
    # found") passed, this row taking a result or a tool error. An answer cut off mid-body completed no search, and
    # seed 003 returns failures as ordinary tool errors ("失败通过普通工具错误返回"): a tool error, not a result.
    # From a review (R2 F1): a target retrying the cut request once failed, the retry given a whole answer; every
    # request of the row is cut now (as every other row's failure meets each request), so a retry fails as well.
    Case("messages-body-cut", "crashing when the connection breaks mid-body on a plain request (a transport "
         "error let out raw), or answering it as a success that found nothing",
         {"protocol": "messages", "fault": CutBody()}),
    Case("messages-connection-refused", "answering a search request whose connection is refused (nothing listens "
         "at the account's address) as a success that found nothing, or crashing on it",
         {"protocol": "messages", "refused": True}),
    # Two survivors of the seed-4 draw, crashes the other tools' service guard hides: an upstream error exactly as
    # long as the window the scrubber reads (the reference's 500 shown + 4,096 characters), and a gzip answer
    # followed by bytes that are no further gzip member (reading or refusing it is open, a crash is not).
    Case("http-401-message-as-long-as-the-scrub-window", "crashing on an upstream error of 4,596 characters with no "
         "space at its end (a bound compared one off: the character after the window read)",
         {"protocol": "messages", "status": 401, "message": "x" * 4596}),
    Case("gzip-answer-with-trailing-bytes", "crashing on a gzip-encoded answer followed by bytes that are no "
         "further gzip member", {"protocol": "messages", "answered": True, "fault": Status(
             200, body=gzip.compress(_STREAMED["messages"]) + b"\r\n", headers={"Content-Encoding": "gzip"})}),
    # Hostile streams around a complete answer: reading or refusing what is odd in them is open, a crash is not.
    Case("messages-stream-index-not-an-integer", "crashing on a content block whose index is not an integer "
         "(a string beside the integer ones)", {"protocol": "messages", "stream": True, "answered": True,
                                                "fault": _own_stream("messages", _STREAMED["messages"], _before_the_end(
                                                    _STRING_INDEXED))}),
    Case("messages-stream-delta-before-its-block", "crashing on a text delta for a block that never started",
         {"protocol": "messages", "stream": True, "answered": True, "fault": _own_stream(
             "messages", _STREAMED["messages"], _before_the_end(_delta(7, {"type": "text_delta", "text": "Stray."})))}),
    Case("messages-stream-text-delta-not-a-string", "crashing on a text delta whose text is not a string",
         {"protocol": "messages", "stream": True, "answered": True, "fault": _own_stream(
             "messages", _STREAMED["messages"], _before_the_end(_delta(1, {"type": "text_delta", "text": 42})))}),
    Case("responses-stream-final-without-output", "crashing on a final event that lists no output (the items came "
         "in response.output_item.done events; reading them or refusing the answer is open)",
         {"protocol": "responses", "stream": True, "answered": True,
          "fault": _own_stream("responses", _STREAMED["responses"], _final_without_output)}),
    Case("responses-stream-output-index-not-an-integer", "crashing on a response.output_item.done whose "
         "output_index is not an integer (a string beside the integer ones; the final event lists no output, so "
         "the items are read from these events, or the answer refused)",
         {"protocol": "responses", "stream": True, "answered": True,
          "fault": _own_stream("responses", _STREAMED["responses"], _odd_output_index)}),
    Case("arguments-without-a-query", "crashing on a call without a query (or failing it with no WEB_* code)",
         {"protocol": "messages", "arguments": {}, "answered": True}),
    Case("arguments-with-another-property", "crashing on a call with a property beside the query (or failing it "
         "with no WEB_* code)", {"protocol": "messages", "arguments": {"query": "search api", "page": 2},
                                 "answered": True}),
    # From the seed-6 mutation draw: an account whose URL no HTTP request can go to (an ftp: base, on loopback so
    # that nothing could leave the machine) cannot be searched; that failure is a tool error like any other.
    Case("responses-unusable-url", "crashing on a search whose account URL is not an http(s) URL (an ftp: Responses "
         "base) instead of failing it as a tool error", {"protocol": "responses", "base": "ftp://127.0.0.1:9/v1"}),
    # From the seed-7 mutation draw, crashes the other tools' service guard hides: an upstream error that spells out
    # a part of the key (no whole-key form covers it: the scrubber's own spelled-out reading of parts). A gzip answer
    # of two members was a row too, until the official-SDK adapter did not answer it within the call's 20 s (not a
    # crash: its client's handling of the second member, left undiagnosed), a way the seeds do not forbid.
    Case("http-401-spelling-out-part-of-the-key", "crashing on, or quoting from, an upstream error that spells out 12 "
         "characters from the middle of the key (a space between each two)",
         {"protocol": "messages", "secret": True, "status": 401,
          "message": "bad key: " + " ".join(f"{{key[{i}]}}" for i in range(5, 17))}),
    # From the seed-8 mutation draw: a JSON body that is one string holding an escaped lone surrogate (valid JSON,
    # not Unicode) is mended before the error's detail is looked for; a mender that raised on a bare string crashed
    # this tool (the other tools' service guard turns that crash into WEB_PROVIDER_ERROR).
    Case("http-500-body-a-string-with-a-lone-surrogate", "crashing on a failed search request (HTTP 500) whose body "
         "is a JSON string (no error object) holding an escaped lone surrogate",
         {"protocol": "messages", "fault": Status(500, body=b'"\\ud800 Internal error."')}),
    # From the seed-8 mutation draw, a crash of the same kind: a part of the key written an escape at a time (a
    # percent escape or a decimal character reference per character, spaces between), which the scrubber reads by
    # decoding the run; a misread escape group there raised, and only the standalone search let it out.
    Case("http-401-dumping-part-of-the-key-escape-by-escape", "crashing on, or quoting from, an upstream error that "
         "writes 12 characters from the middle of the key as percent escapes, then as decimal character references, "
         "a space between each two", {"protocol": "messages", "secret": True, "status": 401,
                                      "message": _KeyPartDump("bad key: ", 5, 17)}),
    # From the seed-9 mutation draw: a hex dump (a space between bytes) of the request's header line, cut by the
    # upstream's own limit 12 characters into a key of 67 (a key long enough that its every-other-character halves
    # are looked for too). The scrubber decodes the run byte by byte, so a misread of bare hex pairs raised (only this
    # tool lets that out), and the piece found 22 bytes into the run must be redacted from its own start to its end.
    Case("http-401-hex-dump-of-the-header-line-cut-into-a-long-key", "crashing on, or quoting from, an upstream "
         "error that dumps the Authorization header line in hex a byte at a time (a space between bytes), cut 12 "
         "characters into a key of 67: the part of the key after the header's 22 bytes shown",
         {"protocol": "messages", "secret": True, "status": 401, "key": "long",
          "message": _HexDumpedHeader("dump: ", "Authorization: Bearer ", 12)}),
    # From the seed-9 mutation draw: the key written whole in two forms the scrubber looks for (its compact view's
    # needles) that only this row writes; a needle built wrong for either showed the key.
    Case("http-401-quoting-the-key-as-wide-escapes", "quoting an upstream error that writes the key as \\U escapes "
         "(eight hex digits a character, as C and Python write a code point): the key shown",
         {"protocol": "messages", "secret": True, "status": 401, "message": _KeyWritten("bad key: ", "wide")}),
    Case("http-401-quoting-the-key-uuencoded", "quoting an upstream error that uuencodes a request line holding "
         "the key (two bytes into a 3-byte group, a space after it): the key shown",
         {"protocol": "messages", "secret": True, "status": 401, "message": _KeyWritten("dump: ", "uu")}),
    # From the seed-10 mutation draw: four ways the scrubber's mapping back from a view it reads to the text went
    # wrong unseen. A part of a key with upper-case letters written an escape at a time is found only when the run
    # it decodes is compared in lower case; a match that ends the text in the folded view (the key with zero-width
    # spaces between its characters, the error's last words) is mapped back to the text without reading past its
    # end; a piece found in a dumped run, and the whole key found in the compact view, are redacted to their last
    # character, which what follows in a form read only after them would extend to 10.
    Case("http-401-dumping-part-of-a-mixed-case-key-escape-by-escape", "quoting from an upstream error that writes "
         "12 characters of a key with upper-case letters as \\x escapes, a space between each two: the part shown",
         {"protocol": "messages", "secret": True, "status": 401, "key": "mixed",
          "message": _EscapeDump("bad key: ", 2, 14)}),
    Case("http-401-ending-with-the-key-in-zero-width-spaces", "crashing on, or quoting the key from, an upstream "
         "error whose last words are the key written with a zero-width space between each two characters",
         {"protocol": "messages", "secret": True, "status": 401, "forms": ("zero-width",)}),
    Case("http-401-c-array-of-part-of-the-key-then-a-hex-word", "quoting from an upstream error that writes the "
         "key's first 10 characters as a C byte array (0x64, 0x73, ...), then the next 9 as one \\x-led hex word: "
         "the array redacted short of its last byte, which with the word shows 10 characters",
         {"protocol": "messages", "secret": True, "status": 401, "message": _EscapeDump("dump: ", 0, 10, 9)}),
    Case("http-401-spelling-out-the-key-then-percent-u-escapes-backwards", "quoting from an upstream error that "
         "spells the key out, then writes the 9 characters before its last backwards as %u escapes: the spelled key "
         "redacted short of its last character, which with the escapes shows 10 characters read backwards",
         {"protocol": "messages", "secret": True, "status": 401, "message": _SpelledThenBackwards("bad key: ", 9)}),
)


def _prose_fault(case: Case, key: str) -> Fault:
    """The case's fault, with the configured key wherever the case quotes it."""
    status = case.params.get("status")
    if status is not None:
        message = case.params.get("message", "bad request: {key}").format(key=key)
        if "forms" in case.params:  # the key written each of these ways (as errors.secret_echo writes it)
            message = "invalid key: " + " | ".join(encoded_text(how, key) for how in case["forms"])
        echo = {"type": "error", "error": {"type": "authentication_error", "message": message}}
        return Status(status, body=json.dumps(echo).encode())
    answer = case.params.get("body")
    if answer is not None:
        return Malformed(body=answer.replace(KEY.encode(), key.encode()))
    return case.params.get("fault") or ProseOnly("From memory: https://guess.example.test/")


async def _refused(ctx: CheckContext, protocol: str) -> CallOutcome:
    """One search of "search api" whose account's base names a loopback port nothing listens on (a socket bound
    there and never listening, held for the call: a connection to it is refused)."""
    field = "openai_base" if protocol == "responses" else "messages_base"
    kept = getattr(ctx.config, field)
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        port = bound.getsockname()[1]
        await ctx.configure(**{field: urlsplit(kept)._replace(netloc=f"127.0.0.1:{port}").geturl()})
        ctx.fresh()
        try:
            return await _search(ctx, "search api", protocol)
        finally:
            await ctx.configure(**{field: kept})


@check(
    "standalone.prose.error",
    "an answer without a completed native search, or a failed search request, is a tool error",
    seed="003",
    requires=(SA,),
    provider="messages",
    rule="Seed 003: if the backend returns only an ordinary answer without completing native search results, "
    "a tool error is reported; failures are returned as ordinary tool errors (an HTTP error status, whatever its "
    "body holds; a search that failed in band "
    "completed nothing, and a malformed answer is no completed search either; nor is a request whose connection is "
    "refused or an answer cut off mid-body: never a result that found nothing), and, by the project's rule that "
    "no secret lands in any log or report, a tool error never shows the credential, whatever the upstream "
    "quoted. Whether and how much of the upstream's error is quoted stays open. A call without a query or with "
    "another property may be refused or searched, but is answered as a result or an ordinary tool error; so is a "
    "search whose account URL is not an http(s) URL (or its configuration is refused). "
    "Streaming is open: a streamed answer that ends before its final event, is cut off or reports an error "
    "event is no completed answer either. Retrying a failed request (a transport failure, an HTTP 429 or 5xx) is "
    "open too, as within the deadline: each row's failure meets every request of its search, a retry's too, so "
    "the search still failed.",
    cases=PROSE_CASES,
)
async def prose_error(ctx: CheckContext) -> None:
    # Every fault meets every request of its row's search (times=None): a target that retries a failed request
    # (a review's reading: seed 003 forbids no retry that ends in an answer) meets the same failure again. The
    # refused row's port refuses every connection anyway.
    key = ctx.config.api_key
    for case in PROSE_CASES:
        await _streaming(ctx, case)
        if case.params.get("refused"):
            expect_error(await _refused(ctx, case["protocol"]), f"[{case.name}]")
            continue
        if "base" in case.params:  # refusing the configuration is right too: nothing can run on it
            kept = ctx.config.openai_base
            if await ctx.configure_if_accepted(openai_base=case["base"]):
                ctx.fresh()
                try:
                    outcome = await _search(ctx, "search api", case["protocol"])
                finally:
                    await ctx.configure(openai_base=kept)
                expect_error(outcome, f"[{case.name}]")
            continue
        if case.params.get("answered"):  # a result or a WEB_* tool error, never a crash
            if "fault" in case.params:
                outcome = await _faulted(ctx, case["protocol"], case["fault"], times=None)
            else:
                call = ctx.target.start_call("standalone_search", {"arguments": case["arguments"],
                                                                   "protocol": case["protocol"]})
                outcome = await call.outcome(CALL_TIMEOUT)
            if not outcome.ok:
                expect_error(outcome, f"[{case.name}]")
            continue
        row_key = PROSE_ROW_KEYS.get(case.params.get("key", ""), key)  # a row may configure a key of its own
        if row_key != key:
            ctx.emu.accept_api_key(row_key)
            await ctx.configure(api_key=row_key)
        try:
            outcome = await _faulted(ctx, case["protocol"], _prose_fault(case, row_key), times=None)
        finally:
            if row_key != key:
                await ctx.configure(api_key=key)
        expect_error(outcome, f"[{case.name}]")
        if case.params.get("secret"):
            shown = leak(f"{outcome.text or ''}\n{outcome.error_message}\n{json.dumps(outcome.value)}", row_key)
            require(shown is None, f"[{case.name}] the tool error shows {shown}", catches=case.catches)


# -- no structured sources ------------------------------------------------------------------------

PROSE_URLS = "See https://prose.example.test/a and [docs](http://md.example.test/b)."
# A search model's text shaped like the tool's own result: text, whatever its shape, is no structured source.
JSON_TEXT = json.dumps({"summary": "Gold is up.", "sources": [{"title": "Gold", "url": "https://shaped.example.test/"}]})
NO_SOURCE_CASES = (
    Case("messages-empty-results", "harvesting URLs from the summary when the result list is empty",
         {"protocol": "messages", "body": _messages_body([_result_block([]), {"type": "text", "text": PROSE_URLS}])}),
    Case("responses-no-sources", "the same for a completed web_search_call without sources or citations",
         {"protocol": "responses", "body": _responses_body([
             {"id": "ws_cert", "type": "web_search_call", "status": "completed",
              "action": {"type": "search", "query": "q"}},
             {"id": "msg_cert", "type": "message", "role": "assistant", "status": "completed",
              "content": [{"type": "output_text", "text": PROSE_URLS, "annotations": []}]}])}),
    # From an outside hunt: the answer text parsed as the result when it is JSON of the result's shape.
    Case("messages-json-shaped-text", "the search model's text taken for the result when it is JSON shaped like "
         "one ({summary, sources}): its sources are made up by the model, not structured results",
         {"protocol": "messages", "body": _messages_body([_result_block([]), {"type": "text", "text": JSON_TEXT}])}),
)


@check(
    "standalone.sources.structured_only",
    "a completed search without structured sources gives sources: [] (never URLs from the summary)",
    seed="003",
    requires=(SA,),
    provider="messages",
    rule="Seed 003: if a backend completed the search but gave no structured sources, sources is empty; "
    "sources are never guessed or made up from the generated summary.",
    cases=NO_SOURCE_CASES,
)
async def structured_only(ctx: CheckContext) -> None:
    for case in NO_SOURCE_CASES:
        value = _visible(await _faulted(ctx, case["protocol"], Malformed(body=case["body"])), f"[{case.name}]")
        require(value["sources"] == [], f"[{case.name}] sources {value['sources']!r}, expected []",
                catches=case.catches)


# -- the source filter ----------------------------------------------------------------------------

VALID = [f"https://s{i}.example.test/page" for i in range(9)]
FILTER_CASES = (
    Case("nine-valid", "no cap at eight", {"urls": VALID, "keep": 8}),
    Case("duplicates", "no dedupe by URL", {"urls": [VALID[0]] * 3 + [VALID[1]], "keep": 2}),
    Case("other-schemes", "keeping javascript:, ftp: or data: URLs",
         {"urls": ["javascript:alert(1)", "ftp://f.example.test/", "data:text/plain,x", VALID[2]], "keep": 1}),
    Case("three-valid-uncited", "keeping only the results the summary cites or mentions (these are sources too)",
         {"urls": VALID[:3], "keep": 3}),
    Case("responses-action-sources", "reading a Responses search's sources only from url_citation annotations, "
         "not from the web_search_call's own sources", {"urls": VALID[3:6], "keep": 3, "protocol": "responses"}),
    # Failing the whole search over it with a WEB_* tool error is a reading too (seed 003: failures are ordinary
    # tool errors; the official SDKs' strict parsing refuses such an answer): what is enforced is that a search
    # that succeeds keeps the others.
    Case("a-result-not-an-object", "losing the other results' sources over a result list entry that is not an "
         "object (it is no structured result; the others still are), or a failure that is no WEB_* tool error",
         {"urls": VALID[6:8], "keep": 2, "junk": True}),
    Case("no-host", "keeping a URL without a host (\"https://\" is no HTTP(S) URL under any parser)",
         {"urls": ["https://", VALID[3]], "keep": 1}),
    Case("plain-http", "keeping only https: sources (http: ones are HTTP(S) sources too)",
         {"urls": ["http://h0.example.test/page", VALID[0]], "keep": 2}),
    Case("responses-call-after-an-unfinished-one", "stopping at a web_search_call that did not complete, so the "
         "completed call after it (and its sources) is lost", {"urls": VALID[:2], "keep": 2, "protocol": "responses",
                                                               "pending": True}),
    # seed 003: "最多保留八个不重复的 HTTP(S) 来源" - the scheme is http or https, not a name starting with "http"
    Case("http-look-alike-schemes", "testing for HTTP(S) by the prefix \"http\", so httpx:, http+unix: or "
         "https-evil: URLs are kept", {"urls": ["httpx://x.example.test/page", "http+unix://u.example.test/page",
                                                "https-evil://e.example.test/page", VALID[4]], "keep": 1}),
    # the eight are counted among distinct HTTP(S) sources, not among the backend's raw entries
    Case("eight-copies-then-five-distinct", "cutting the backend's list to its first eight entries before the "
         "dedupe and scheme filter, so eight copies of one URL leave one source of six",
         {"urls": [VALID[0]] * 8 + VALID[1:6], "keep": 6}),
    # a search model may search more than once in one answer: every completed search's results are sources
    Case("messages-two-searches", "reading only the first web_search_tool_result of an answer whose model searched "
         "twice, so the second search's sources are lost", {"urls": VALID[:4], "keep": 4, "searches": 2}),
    Case("responses-two-searches", "reading only the first completed web_search_call of an answer whose model "
         "searched twice, so the second call's sources are lost",
         {"urls": VALID[4:8], "keep": 4, "protocol": "responses", "searches": 2}),
    # From an outside hunt: distinct sources are distinct URLs, not distinct sites.
    Case("same-site-pages", "sources deduplicated by host ('eight distinct sites'), so three pages of one site "
         "leave one source", {"urls": [f"https://s0.example.test/page-{i}" for i in range(3)], "keep": 3}),

    # both https, so the https-only reading (plain-http's) does not also fail here
    Case("upper-case-schemes", "the scheme compared case-sensitively ('starts with https://'), so HTTPS: and Https: "
         "sources are dropped (schemes are case-insensitive)",
         {"urls": ["HTTPS://S0.example.test/page", "Https://s1.example.test/page"], "keep": 2}),
    # From an outside hunt (seed 003): the eight are counted after every filter, over the whole answer.
    Case("eight-other-schemes-then-three", "the cap of eight applied before the scheme filter, so eight ftp: and "
         "javascript: entries leave none of the three HTTP(S) sources after them",
         {"urls": [f"ftp://f{i}.example.test/" for i in range(4)] + [f"javascript:void({i})" for i in range(4)]
          + VALID[:3], "keep": 3}),
    Case("query-string-pages", "URLs deduplicated without their query string, so item?id=1, 2 and 3 (three pages) "
         "leave one source", {"urls": [f"https://s0.example.test/item?id={i}" for i in (1, 2, 3)], "keep": 3}),
    # From an outside hunt (L): a URL's path is case-sensitive (RFC 3986 6.2.2.1: only the scheme and host are not),
    # so /Page and /page are two pages, two of seed 003's "不重复的 HTTP(S) 来源" (non-duplicate sources).
    Case("path-case-pages", "sources deduplicated on the whole URL lower-cased, so /Page and /page (two pages: a "
         "path's letter case is part of it) leave one source",
         {"urls": ["https://s0.example.test/Page", "https://s0.example.test/page"], "keep": 2}),
    Case("messages-two-searches-of-sixteen", "the cap of eight applied per search, so two searches of eight "
         "distinct results each keep sixteen",
         {"urls": [f"https://m{i}.example.test/page" for i in range(16)], "keep": 8, "searches": 2}),
    Case("messages-two-searches-one-url", "duplicates removed within each search only, so a URL both searches "
         "found is listed twice", {"urls": [VALID[0], VALID[1], VALID[0], VALID[2]], "keep": 3, "searches": 2}),
    Case("untitled-results", "a source whose result has an empty title written as its URL alone (no title key; "
         "seed 003's source is a title and a URL, an empty title included)",
         {"urls": VALID[:2], "keep": 2, "untitled": True}),
    # From a hunt (P-D4): no row of this table was told as a stream, so a streamed answer read another way (a
    # Responses call's sources dropped, only a Messages answer's last result block kept) passed; these twins of two
    # rows above are told as events to a target that asks for a stream (as the same JSON to one that does not).
    Case("responses-action-sources-streamed", "the same as responses-action-sources on a streamed answer (the "
         "sources read from the url_citation annotation events alone, the web_search_call items' own dropped)",
         {"urls": VALID[3:6], "keep": 3, "protocol": "responses", "stream": True}),
    Case("messages-two-searches-streamed", "the same as messages-two-searches on a streamed answer (one slot per "
         "block type, so only the last web_search_tool_result block's sources kept)",
         {"urls": VALID[:4], "keep": 4, "searches": 2, "stream": True}),
)


UNTITLED = next(c.catches for c in FILTER_CASES if c.name == "untitled-results")


def _filter_body(protocol: str, urls: list[str], junk: bool = False, pending: bool = False, searches: int = 1,
                 untitled: bool = False) -> bytes:
    """A completed search whose structured results are ``urls``, with a summary citing none of them; with
    ``junk``, a result list entry that is not an object comes first (Messages); with ``pending``, a
    web_search_call still in progress comes before the completed one (Responses). With ``searches`` above
    one, the model searched that many times in the answer, ``urls`` shared out among the searches in order."""
    if searches > 1:
        return _searched_many(protocol, urls, searches)
    if protocol == "messages":
        # an untitled result has an empty title (the official SDK's strict types require the field)
        items: list[Any] = [_item(u, "" if untitled else "t") for u in urls]
        return _messages_body([_result_block(["not a result", *items] if junk else items),
                               {"type": "text", "text": "Summary."}])
    calls = [_search_call("in_progress")] if pending else []
    return _responses_body([*calls, _search_call(urls=tuple(urls)), _answer([_text("Summary.")])])


def _searched_many(protocol: str, urls: list[str], searches: int) -> bytes:
    """An answer whose model searched ``searches`` times, each search with its share of ``urls`` and some text
    after it (Messages), or each a completed web_search_call before the one message (Responses)."""
    size = -(-len(urls) // searches)
    shares = [urls[i:i + size] for i in range(0, len(urls), size)]
    if protocol == "messages":
        blocks: list[Any] = []
        for n, share in enumerate(shares):
            use = f"srvtoolu_cert_{n}"
            blocks += [{"type": "server_tool_use", "id": use, "name": "web_search", "input": {"query": f"q{n}"}},
                       {**_result_block([_item(u) for u in share]), "tool_use_id": use},
                       {"type": "text", "text": f"Found {n}."}]
        return _messages_body(blocks)
    calls = [{**_search_call(urls=tuple(share)), "id": f"ws_cert_{n}"} for n, share in enumerate(shares)]
    return _responses_body([*calls, _answer([_text("Summary.")])])


def _url_key(url: object) -> object:
    """``url`` with its scheme and host in lower case (:func:`url_key`); anything else as it is."""
    return url_key(url) if isinstance(url, str) else url


@check(
    "standalone.sources.filtered",
    "at most eight distinct HTTP(S) sources, all from the search's structured results",
    seed="003",
    requires=(SA,),
    provider="messages",
    rule="Seed 003: at most eight distinct HTTP(S) sources are kept: the structured results of every search the "
    "answer completed pass but for that cap, duplicates and other schemes (which eight is open; a scheme is "
    "matched without regard to case, as URL schemes are, and a URL whose scheme and host are written in lower "
    "case is the same source, but one whose path differs only in letter case is another). A source is 'title and "
    "URL' (标题和 URL): no other key, and both always (a result without a title gives an empty one). An answer "
    "with a result entry that is not an object may fail as an ordinary tool error instead; a search that succeeds "
    "keeps the others. A streamed answer keeps the same sources as the plain one (streaming is open, the sources "
    "are not).",
    cases=FILTER_CASES,
)
async def sources_filtered(ctx: CheckContext) -> None:
    for case in FILTER_CASES:
        await _streaming(ctx, case)
        urls: list[str] = case["urls"]
        protocol = case.params.get("protocol", "messages")
        body = _filter_body(protocol, urls, bool(case.params.get("junk")), bool(case.params.get("pending")),
                            int(case.params.get("searches", 1)), bool(case.params.get("untitled")))
        # a streamed row's answer: as events to a target that asks for a stream, else the same JSON
        fault: Fault = AsAnswer(body=body) if case.params.get("stream") else Malformed(body=body)
        outcome = await _faulted(ctx, protocol, fault)
        if case.params.get("junk") and not outcome.ok:
            expect_error(outcome, f"[{case.name}]")  # the whole search refused: a tool error
            continue
        value = _visible(outcome, f"[{case.name}]")
        # A URL's scheme and host are case-insensitive (RFC 3986): writing them in lower case is no other
        # source (a clean-room target that did so was failed before), so URLs are compared that way.
        got = [_url_key(s.get("url")) for s in value["sources"]]
        urls = [str(_url_key(u)) for u in urls]
        extra = sorted({key for s in value["sources"] for key in s} - {"title", "url"})
        require(not extra, f"[{case.name}] sources carry {extra}; a source is its title and URL", keys=extra)
        # Messages results always carry a title (an empty one too); a Responses source may have none to keep.
        untitled = [s.get("url") for s in value["sources"] if protocol == "messages" and "title" not in s]
        require(not untitled, f"[{case.name}] sources without a title {untitled[:3]!r}; a source is its title and URL "
                "(an empty title when the result had none)", catches=UNTITLED)
        require(len(got) <= 8, f"[{case.name}] {len(got)} sources, at most 8 allowed")
        require(len(set(got)) == len(got), f"[{case.name}] duplicate source URLs {got!r}")
        require(all(isinstance(u, str) and u.lower().startswith(("http://", "https://")) for u in got),
                f"[{case.name}] a non-HTTP(S) source was kept: {got!r}")
        require(set(got) <= set(urls), f"[{case.name}] a source not in the search results: {got!r}")
        require(len(got) == case["keep"], f"[{case.name}] {len(got)} sources kept of {case['keep']} distinct "
                f"HTTP(S) results (up to eight are kept)", catches=case.catches)


# -- titles ----------------------------------------------------------------------------------------

TITLED = [f"https://t{i}.example.test/page" for i in range(3)]
TITLE_CASES = (
    Case("responses-cited-title", "keeping the untitled web_search_call source and dropping the title its "
         "url_citation carried for the same URL (the exact-URL dedupe keeps the first entry)",
         {"protocol": "responses", "titles": {TITLED[1]: "Cited page one", TITLED[2]: "Cited page two"},
          "body": _responses_body([
              {"id": "ws_cert", "type": "web_search_call", "status": "completed",
               "action": {"type": "search", "query": "q", "sources": [{"type": "url", "url": u} for u in TITLED]}},
              {"id": "msg_cert", "type": "message", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "One and two.", "annotations": [
                   {"type": "url_citation", "url": TITLED[1], "title": "Cited page one", "start_index": 0,
                    "end_index": 3},
                   {"type": "url_citation", "url": TITLED[2], "title": "Cited page two", "start_index": 8,
                    "end_index": 11}]}]}])}),
    Case("messages-result-title", "dropping the titles of Messages search results",
         {"protocol": "messages", "titles": {TITLED[0]: "Result zero", TITLED[1]: "Result one"},
          "body": _messages_body([_result_block([_item(TITLED[0], "Result zero"), _item(TITLED[1], "Result one")]),
                                  {"type": "text", "text": "Summary."}])}),
    Case("responses-title-after-a-refusal-part", "stopping at a message part that is not output_text (a refusal), "
         "so the title a later part's url_citation gave is lost",
         {"protocol": "responses", "titles": {TITLED[0]: "Cited after a refusal"}, "body": _responses_body([
             _search_call(urls=(TITLED[0],)),
             _answer([{"type": "refusal", "refusal": "Part of this I will not answer."},
                      _text("Zero.", [{"type": "url_citation", "url": TITLED[0], "title": "Cited after a refusal",
                                       "start_index": 0, "end_index": 4}])])])}),
    # As in standalone.sources.filtered's a-result-not-an-object row, failing the whole search with a WEB_* tool
    # error is a reading too (the official SDKs' strict parsing refuses a title that is not a string).
    Case("responses-citation-title-not-a-string", "taking a url_citation's title that is not a string as the URL's "
         "title, so the title another citation gave the same URL is lost (or a failure that is no WEB_* tool error)",
         {"protocol": "responses", "titles": {TITLED[1]: "Cited page one"}, "junk": True, "body": _responses_body([
             _search_call(urls=(TITLED[1],)),
             _answer([_text("One.", [
                 {"type": "url_citation", "url": TITLED[1], "title": 42, "start_index": 0, "end_index": 3},
                 {"type": "url_citation", "url": TITLED[1], "title": "Cited page one", "start_index": 0,
                  "end_index": 3}])])])}),
)


@check(
    "standalone.sources.titled",
    "a source whose title the answer carried keeps that title",
    seed="003",
    requires=(SA,),
    provider="messages",
    rule="Seed 003: sources are title and URL; a source the search answer gave a title (a Messages result's "
    "title, or a Responses url_citation's title for that URL) is not shown untitled. Which of several titles "
    "for one URL is kept is open; an answer with a title that is not a string may fail as an ordinary tool "
    "error instead.",
    cases=TITLE_CASES,
)
async def sources_titled(ctx: CheckContext) -> None:
    for case in TITLE_CASES:
        outcome = await _faulted(ctx, case["protocol"], Malformed(body=case["body"]))
        if case.params.get("junk") and not outcome.ok:
            expect_error(outcome, f"[{case.name}]")  # the whole search refused: a tool error
            continue
        value = _visible(outcome, f"[{case.name}]")
        shown = {s.get("url"): s.get("title") for s in value["sources"]}
        for url, title in case["titles"].items():
            if url not in shown:
                continue  # which sources are kept is standalone.sources.filtered's business
            require(shown[url] == title, f"[{case.name}] the source {url} has title {shown[url]!r}, but the answer "
                    f"titled it {title!r}", catches=case.catches)


# -- redirects ------------------------------------------------------------------------------------


REDIRECT_CASES = (
    Case("messages-307", "following a redirect of the Messages search request",
         {"protocol": "messages", "status": 307}),
    # seed 003: "搜索请求不会跟随重定向" - no redirect status is followed, whichever the method it would keep
    Case("messages-302", "following a 301/302/303 redirect (as a GET, as browsers and many clients do) while refusing "
         "only the method-keeping 307/308", {"protocol": "messages", "status": 302}),
    Case("responses-307", "following redirects on the Responses search backend (only Messages refusing them)",
         {"protocol": "responses", "status": 307}),
    # From an outside hunt: a permanent redirect taken for a moved endpoint and followed.
    Case("messages-308", "following a permanent redirect (308, 301: the endpoint 'moved') while refusing the "
         "temporary ones", {"protocol": "messages", "status": 308}),
    Case("responses-301", "the same on Responses (a 301 followed as the new address)",
         {"protocol": "responses", "status": 301}),
    # From a hunt (P-D5): a 303 See Other followed (as a GET to the Location, the one status whose meaning is
    # "look over there" rather than "moved") passed, since no row answered with a 303.
    Case("messages-303", "following a 303 See Other (its Location fetched with a GET) while refusing every other "
         "redirect status", {"protocol": "messages", "status": 303}),
    Case("responses-303", "the same on Responses", {"protocol": "responses", "status": 303}),
    # From a hunt (P-D4): no row asked for a stream, so a target whose streaming client follows redirects (its
    # plain one refusing them) passed.
    Case("messages-307-streamed", "following a redirect of a streamed search request (the streaming client built "
         "with follow_redirects while the plain one refuses them)",
         {"protocol": "messages", "status": 307, "stream": True}),
    Case("responses-302-streamed", "the same on a streamed Responses request",
         {"protocol": "responses", "status": 302, "stream": True}),
)


@check(
    "standalone.redirect.not_followed",
    "a redirect from the search backend is an error and its Location is never visited",
    seed="003",
    requires=(SA,),
    provider="messages",
    rule="Seed 003: search requests do not follow redirects (on either backend, whatever the 3xx status, a "
    "streamed request as a plain one).",
    cases=REDIRECT_CASES,
)
async def redirect_not_followed(ctx: CheckContext) -> None:
    for case in REDIRECT_CASES:
        await _streaming(ctx, case)
        outcome = await _faulted(ctx, case["protocol"], Redirect(case["status"]))  # a fresh log per case
        await ctx.settle()
        require(not ctx.emu.log.trap_hits(), f"[{case.name}] the redirect's Location was visited",
                catches=case.catches)
        expect_error(outcome, f"[{case.name}] search redirected with {case['status']}")


# -- the 90-second limit --------------------------------------------------------------------------

# Seed 003: "每次搜索限时 90 秒" (each search is limited to 90 seconds): the whole search, not each wait within it.
# Every answer comes past the limit, in one of two ways. Held: the emulator holds the answer HELD seconds after the
# request arrives, then answers with a completed search: a target whose limit fired has failed the call by then, one
# with none (or a longer one) takes that answer. Trickled (an outside hunt, N-B1): the emulator sends the status and
# headers at once, then the answer in TRICKLE_PIECES pieces TRICKLE_GAP seconds apart, the last trickle_end() after
# the first. No wait for the next bytes comes near 90 s, so a limit on each wait (an HTTP client's timeout=90 on each
# connect, read and write, with no deadline over the search) never fires and takes the answer, which the held answer
# could not tell (it sends nothing until its end, so a limit on each read fires at 90 s too); a limit on the whole
# search fails it at 90 s.
SEARCH_LIMIT = 90.0
HELD = 95.0
TRICKLE_PIECES = 6
# 23 s: a quarter of the limit, so a loop stall of over a minute still leaves every wait short of 90 s; and the
# last piece 25 s past the limit (HELD's 5 s, five times over), which a limit that fired loses to only if the
# machine stalled over 12 s (LAG_FACTOR).
TRICKLE_GAP = 23.0
# Below the limit: a timer's own granularity. Load only ever makes an answer later (the target's clock starts after
# the suite's), so an error this much before 90 s is early on any machine.
EARLY_SLACK = 1.0
# The rows run at once (three searches in flight: one held on each backend, one trickled on Messages): one wait for
# all. Whether a target runs two searches at once is open (standalone.request.isolated), so the wait covers one run
# after the other: a search's request may arrive only when the answers before it have ended. MARGIN: for load, past
# the last answer's end.
MARGIN = 30.0


def trickle_end() -> float:
    """Seconds from the trickled answer's first piece (sent with its headers) to its last."""
    return (TRICKLE_PIECES - 1) * TRICKLE_GAP


def deadline_wait() -> float:
    """Seconds the calls are waited for: the two holds and the trickle one after the other, and the margin."""
    return 2 * HELD + trickle_end() + MARGIN


DEADLINE_CASES = (
    Case("messages-answer-held-95s", "no limit on a search (an answer held 95 s still taken), a limit longer than "
         "the hold (900 s), or one far shorter than 90 s (9 s, or an HTTP client's default read timeout), failing a "
         "search still within its time",
         {"protocol": "messages", "answer": "held", "query": "gold price held past the limit"}),
    Case("responses-answer-held-95s", "the same on Responses (a limit applied on one backend only)",
         {"protocol": "responses", "answer": "held", "query": "silver price held past the limit"}),
    # From an outside hunt (N-B1): the HTTP client's timeout=90 taken for the search's limit, certified.
    Case("messages-answer-trickled-115s", "a limit on each wait for the backend's answer, not on the whole search "
         "(an HTTP client's timeout=90 on each connect, read and write, no deadline over the search): an answer "
         "whose pieces come 23 s apart, the last after 115 s, taken",
         {"protocol": "messages", "answer": "trickled", "query": "copper price trickled past the limit"}),
)


def _carrying(query: str) -> Callable[[Any], bool]:
    """A request whose body carries ``query``, in any wording around it, on either backend (Messages: in the user
    message; Responses: in the input)."""
    return lambda body: query in json.dumps(body, ensure_ascii=False)


def _deadline_answer(case: Case) -> tuple[Fault, float]:
    """The row's fault and the seconds from its request's arrival to its answer's end."""
    if case["answer"] == "trickled":
        return SlowBody(delay=TRICKLE_GAP, pieces=TRICKLE_PIECES), trickle_end()
    return Delay(HELD), HELD


@check(
    "standalone.deadline.enforced",
    "a search whose answer ends past 90 s (held, or trickled in pieces) fails as a tool error at the limit, not "
    "before it",
    seed="003",
    requires=(SA,),
    provider="messages",
    # 90 s of waiting (115 s for a target past the limit): only when asked for (a default run would pay every time).
    profiles=("seed-003-deadline",),
    time_limit=deadline_wait() + 30.0,  # over the run's limit per check
    rule="Seed 003: each search is limited to 90 seconds, the whole search. A search whose answer the backend holds "
    "for 95 s, or sends at once in pieces 23 s apart whose last comes 115 s after the first (no wait for the next "
    "bytes near 90 s), fails as an ordinary tool error, not before the 90 s have passed (a second's slack), and never "
    "answers with that answer; the held answer on either backend, the trickled one on Messages (three searches "
    "started at once; a target may run them one after the other, each with its own limit, from the call's start or "
    "from its own). The trickled answer tells a limit on each wait for the backend's bytes (an HTTP client's "
    "timeout on each read, which it never reaches) from one on the whole search. A limit between 90 s and the "
    "answer's end is not told from a 90 s one on a loaded machine (accepted). Timing: an early error is early on any "
    "machine (load only delays an answer); an answer is judged taken past the limit unless the suite's loop stalled "
    "long enough to hide a limit that fired (then the case passes with a note).",
    cases=DEADLINE_CASES,
)
async def deadline_enforced(ctx: CheckContext) -> None:
    ctx.fresh()
    routes: list[RouteName] = ["responses" if c["protocol"] == "responses" else "messages" for c in DEADLINE_CASES]
    answers = [_deadline_answer(case) for case in DEADLINE_CASES]
    for case, route, (fault, _) in zip(DEADLINE_CASES, routes, answers, strict=True):
        # The trickle for its own search's requests (each retry too), added first: a request takes the first match.
        if case["answer"] != "held":
            ctx.emu.inject(route, fault, times=None, when=_carrying(case["query"]))
    for route in dict.fromkeys(routes):  # every other request held: a target may retry within its limit (a review's
        ctx.emu.inject(route, Delay(HELD), times=None)  # false failure)
    async with LagSampler() as lag:
        began = time.monotonic()
        calls = [ctx.target.start_call("standalone_search", {"arguments": {"query": case["query"]},
                                                             "protocol": case["protocol"]})
                 for case in DEADLINE_CASES]
        outcomes = await asyncio.gather(*(call.outcome(deadline_wait()) for call in calls))
    for case, route, (_, ends), outcome in zip(DEADLINE_CASES, routes, answers, outcomes, strict=True):
        # Judged from the call's start: a search started no earlier (its limit may run from then, or from its own
        # start, up to its request's arrival, when a target queues it behind the others), so an error this early
        # is early by either reading. Its answer ends a hold (or the trickle) after the request's arrival, past any
        # limit.
        took = outcome.answered_at - began
        records = [r for r in ctx.records(route) if _carrying(case["query"])(r.json)]
        sent = len(records)
        if not records:  # its request not found by its query (rewritten, or none sent): the catch-all hold met it
            ends = HELD
        told = (f"held {HELD:g}s" if case["answer"] == "held" or not records else
                f"sent in {TRICKLE_PIECES} pieces {TRICKLE_GAP:g}s apart, the last after {ends:g}s")
        ctx.note(f"{case.name}: answered after (s)", round(took, 2))
        if records:
            arrived = min(r.started for r in records)
            ctx.note(f"{case.name}: answered after its request's arrival (s)", round(outcome.answered_at - arrived, 2))
        else:  # none sent, or none carried the query as given (a trickled row's then held, not trickled)
            ctx.note(case.name, f"{NOT_SHOWN}: no request carrying the query reached the backend")
        if outcome.ok:
            # A limit that fired at 90 s loses to the answer only if this machine stalled past the answer's end.
            if LAG_FACTOR * lag.worst >= ends - SEARCH_LIMIT:
                ctx.note(case.name, f"{LATE_UNDER_LOAD}: answered after {took:.1f}s, the suite's loop stalled "
                         f"{lag.worst:.1f}s")
                continue
            raise CheckFailed(f"[{case.name}] the search answered after {took:.1f}s with the answer the backend "
                              f"{told}: it ran past the 90-second limit", catches=case.catches)
        expect_error(outcome, f"[{case.name}] a search whose answer was {told}")
        require(took >= SEARCH_LIMIT - EARLY_SLACK, f"[{case.name}] the search failed after {took:.1f}s ({sent} "
                f"request(s) sent), before the 90-second limit; its answer was due after {ends:g}s",
                catches=case.catches)


# -- reasoning and encrypted content ---------------------------------------------------------------

_SECRET_KEYS = ("thinking", "signature", "encrypted_content", "encrypted_index")


def _opaque_values(value: Any) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _SECRET_KEYS and isinstance(item, str) and len(item) >= 8:
                found.append(item)
            else:
                found += _opaque_values(item)
    elif isinstance(value, list):
        for item in value:
            found += _opaque_values(item)
    return found


def _told(body: bytes) -> Any:
    """An answer as the emulator sent it: its JSON, or for an event stream (a target that streams whether asked
    or not) its content blocks as their events told them, thinking and signature deltas joined."""
    try:
        return json.loads(body)
    except ValueError:
        pass
    blocks: dict[Any, dict[str, Any]] = {}
    for line in body.decode("utf-8", "replace").splitlines():
        event = json.loads(line[5:]) if line.startswith("data:") else {}
        if event.get("type") == "content_block_start":
            blocks[event.get("index")] = dict(event.get("content_block") or {})
        elif event.get("type") == "content_block_delta":
            block, delta = blocks.setdefault(event.get("index"), {}), event.get("delta") or {}
            for key in ("thinking", "signature"):
                if isinstance(delta.get(key), str):
                    block[key] = str(block.get(key) or "") + delta[key]
    return list(blocks.values())


REASONING_SUMMARY = "Private chain of thought about the query"
REASONING_SECRET = "gAAAAB-opaque-reasoning-blob-0123456789"
# A Responses answer with a reasoning item (its summary and encrypted content) before the search and the message.
REASONING_TEXT = "Raw reasoning text of the search model"
REASONING_ANSWER = _responses_body([
    {"id": "rs_cert", "type": "reasoning", "encrypted_content": REASONING_SECRET,
     "summary": [{"type": "summary_text", "text": REASONING_SUMMARY}],
     "content": [{"type": "reasoning_text", "text": REASONING_TEXT}]},
    {"id": "ws_cert", "type": "web_search_call", "status": "completed",
     "action": {"type": "search", "query": "q", "sources": [{"type": "url", "url": VALID[0]}]}},
    {"id": "msg_cert", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Summary.", "annotations": []}]}])
REASONING_CASES = (
    Case("messages", "a thinking block (or its signature) joining the summary", {"protocol": "messages"}),
    Case("responses", "a Responses reasoning item's summary, encrypted content or (from an outside hunt) its "
         "reasoning_text content joining the result", {"protocol": "responses", "body": REASONING_ANSWER}),
    # Streaming is open: a target asked for a stream must withhold the reasoning its events tell too.
    Case("responses-streamed", "reading a streamed Responses answer's reasoning item (its summary text events) as "
         "answer text, so the search model's reasoning joins the summary",
         {"protocol": "responses", "stream": True, "body": REASONING_ANSWER}),
    Case("messages-streamed", "reading a streamed answer's thinking deltas (or its thinking block) as answer text, "
         "so the search model's reasoning joins the summary",
         {"protocol": "messages", "stream": True, "body": _messages_body([
             {"type": "thinking", "thinking": REASONING_SUMMARY, "signature": REASONING_SECRET},
             _result_block([_item(VALID[0])]), {"type": "text", "text": "Summary."}])}),
)


@check(
    "standalone.reasoning.withheld",
    "reasoning, signatures and encrypted content of the search answer never reach the result",
    seed="003",
    requires=(SA,),
    provider="messages",
    rule="Seed 003: the reasoning, encrypted page content and Responses replay items produced by the search do "
    "not enter the main conversation (nor, when the target streams, what the answer's reasoning events tell).",
    cases=REASONING_CASES,
)
async def reasoning_withheld(ctx: CheckContext) -> None:
    for case in REASONING_CASES:
        await _streaming(ctx, case)
        body: bytes | None = case.params.get("body")
        if body is None:  # the emulator's own Messages answer, which carries thinking and encrypted content
            outcome = await _search(ctx, "search api")
            _visible(outcome, f"[{case.name}] search")
            records = ctx.records("messages")
            require(records, "no Messages request reached the emulator")
            hidden = _opaque_values(_told(records[-1].response_body))
            require(hidden, "the emulator answer carried no reasoning to withhold (emulator changed?)")
        else:  # streamed when the target asks for a stream, as the same JSON when it does not
            fault = AsAnswer(body) if case.params.get("stream") else Malformed(body=body)
            outcome = await _faulted(ctx, case["protocol"], fault)
            _visible(outcome, f"[{case.name}] search")
            hidden = [REASONING_SUMMARY, REASONING_SECRET, REASONING_TEXT]
        leaked = [h[:40] for h in hidden if h in (outcome.text or "")]
        require(not leaked, f"[{case.name}] the result contains reasoning or encrypted content: {leaked!r}",
                catches=case.catches)


# -- account selection ----------------------------------------------------------------------------

ENV_SET = ("DS_KEY", "OTHER_KEY", "RELAY_KEY")
OFFICIAL_URL = "https://api.deepseek.com/anthropic/v1/messages"
REASON_SHOWN = "a reason"  # an invalid resolution's reason as compared: any non-empty string


def _acct(name: str, protocol: str = "chat", base_url: str = "https://api.deepseek.com", *, key: str = "DS_KEY",
          model: str = "deepseek-v4-flash", **extra: Any) -> dict[str, Any]:
    return {"name": name, "protocol": protocol, "base_url": base_url, "model": model, "api_key_env": key, **extra}


_RELAY = _acct("relay", "messages", "https://relay.example.test/anthropic", key="RELAY_KEY", model="r-model")
_RELAY_R = _acct("relay-r", "responses", "https://relay.example.test/v1", key="RELAY_KEY", model="gpt-x")
_OFFICIAL = ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash", "DS_KEY")
_RELAY_ROUTE = ("selected", "relay", "messages", "https://relay.example.test/anthropic/v1/messages", "r-model",
                "RELAY_KEY")


def _row(name: str, catches: str, document: dict[str, Any], expect: tuple[Any, ...], *, refusable: bool = False,
         also: tuple[tuple[Any, ...], ...] = ()) -> Case:
    """``refusable``: the row also passes a WEB_CONFIG_INVALID refusal of the whole document (seed 003 decides
    the expected resolution is not a selection, but not whether a malformed value is refused at load).
    ``also``: other resolutions the row accepts, where seed 003 leaves the reading open."""
    params: dict[str, Any] = {"document": document, "expect": expect, "refusable": refusable}
    if also:
        params["also"] = also
    return Case(name, "" + catches, params)


def _invalid(reference: str) -> tuple[str, str, str]:
    """An unusable assignment as a row compares it: seed 003 keeps the reference and shows why (any reason)."""
    return ("invalid", reference, REASON_SHOWN)


RESOLUTION_CASES = (
    _row("current-official-chat-searches-via-official-messages",
         "sending the search to the chat URL instead of the official Anthropic-compatible base",
         {"current": "main", "accounts": [_acct("main")]}, _OFFICIAL),
    # No trailing "/" in these rows: seed 003 matches the official addresses "exactly" (精确匹配), and whether
    # "/v1/" is "/v1" is left open (a clean-room target reading it literally was failed here before).
    _row("official-chat-with-v1-is-official", "accepting only the bare host for Chat Completions",
         {"current": "main", "accounts": [_acct("main", base_url="https://api.deepseek.com/v1")]}, _OFFICIAL),
    # seed 003: "精确匹配的官方 Messages、Responses 及 Chat Completions 地址（后者可带 /v1）" grants /v1 to "the
    # latter": Chat Completions alone read literally, Responses and Chat Completions as the reference reads it.
    # So /v1 on Responses is open: official (the official Messages base) or another address (a third-party
    # Responses account without web_search = true, which searches nothing). The bare host, official under
    # either reading, is enforced by official-responses-bare-host-is-official.
    _row("official-responses-is-official", "searching a Responses account at the official host's /v1 through its "
         "own Responses URL without an opt-in, which neither reading of /v1 allows (official: the official Messages "
         "base; not official: a third party that did not opt in searches nothing)",
         {"current": "main", "accounts": [_acct("main", "responses", "https://API.deepseek.com/v1")]}, _OFFICIAL,
         also=(("none", "no_search_account"),)),
    # The host in lower case here, so the row tests only the bare host; no row makes a target fold the host's
    # letter case before comparing (the row below folds nothing but the host).
    _row("official-responses-bare-host-is-official", "recognising the official Responses account only at /v1, so "
         "the bare official host is taken for a third-party address",
         {"current": "main", "accounts": [_acct("main", "responses", "https://api.deepseek.com")]}, _OFFICIAL),
    _row("official-messages-base-with-v1-is-not-official", "granting the /v1 of Chat Completions to the Messages "
         "base too, so https://api.deepseek.com/anthropic/v1 is taken for the exact official Messages address",
         {"current": "main", "accounts": [_acct("main", "messages", "https://api.deepseek.com/anthropic/v1")]},
         ("none", "no_search_account")),
    # seed 003: "精确匹配" - the host's case is the URL's own (RFC 3986), the path's is not
    _row("official-path-differing-in-case-is-not-official", "comparing the official path regardless of case, so "
         "https://api.deepseek.com/V1 is taken for the official /v1",
         {"current": "main", "accounts": [_acct("main", base_url="https://api.deepseek.com/V1")]},
         ("none", "no_search_account")),
    _row("official-messages-is-official", "not recognising the official Messages base",
         {"current": "main", "accounts": [_acct("main", "messages", "https://api.deepseek.com/anthropic")]},
         _OFFICIAL),
    _row("official-derived-request-url-is-still-official", "treating an override equal to the derived route as custom",
         {"current": "main", "accounts": [_acct("main", request_url="https://api.deepseek.com/chat/completions")]},
         _OFFICIAL),
    _row("custom-request-url-is-never-converted", "converting a custom request URL into the official search route",
         {"current": "main", "accounts": [_acct("main", request_url="https://api.deepseek.com/custom/chat")]},
         ("none", "no_search_account")),
    _row("look-alike-host-is-not-official", "matching the official host by prefix",
         {"current": "main", "accounts": [_acct("main", base_url="https://api.deepseek.com.evil.test")]},
         ("none", "no_search_account")),
    _row("plain-http-is-not-official", "accepting http:// as the official endpoint",
         {"current": "main", "accounts": [_acct("main", base_url="http://api.deepseek.com")]},
         ("none", "no_search_account")),
    _row("current-account-wins-over-earlier-accounts", "always taking the first account instead of the current one",
         {"current": "relay", "accounts": [_acct("main"), {**_RELAY, "web_search": True}]}, _RELAY_ROUTE),
    _row("fallback-to-first-configured-search-enabled-account", "giving up, or picking the last candidate",
         {"current": "plain", "accounts": [_acct("plain", base_url="https://other.example.test/v1", key="OTHER_KEY"),
                                           _acct("main"), _acct("second")]}, _OFFICIAL),
    # seed 003: "否则按配置顺序选择第一个已配置、已启用搜索的账号" - an opted-in relay is search-enabled
    # ("第三方 Messages 或 Responses 账号须显式设置 web_search = true"), and it comes first in the order here
    _row("fallback-takes-an-opted-in-relay-in-order", "taking official accounts before (or instead of) an opted-in "
         "third-party account in the automatic fallback, so the official account after it is chosen",
         {"current": "plain", "accounts": [_acct("plain", base_url="https://other.example.test/v1", key="OTHER_KEY"),
                                           {**_RELAY, "web_search": True}, _acct("main")]}, _RELAY_ROUTE),
    # seed 003: "当前支持搜索的账号显式设置 web_search = false 时，不会改用其他账号" names the current account
    # only: another account switched off is passed over, as any account that is not search-enabled
    _row("fallback-skips-a-switched-off-account-that-is-not-current", "stopping the fallback at any account "
         "whose web_search is false, not only the current one",
         {"current": "plain", "accounts": [_acct("plain", base_url="https://other.example.test/v1", key="OTHER_KEY"),
                                           _acct("off", web_search=False), _acct("main")]}, _OFFICIAL),
    # seed 003: only an explicit web_search = false blocks; a relay that never set it merely does not search
    _row("current-relay-without-a-switch-does-not-block-fallback", "letting a current third-party account that "
         "never set web_search (so never opted in) block the fallback, whatever reason it reports",
         {"current": "relay", "accounts": [_RELAY, _acct("main")]}, _OFFICIAL),
    _row("fallback-skips-accounts-without-credentials", "choosing an account whose key variable is unset",
         {"current": "x", "accounts": [_acct("nokey", key="UNSET_KEY"), _acct("main")]}, _OFFICIAL),
    _row("current-without-credentials-falls-back", "selecting the current account although it is not configured",
         {"current": "nokey", "accounts": [_acct("nokey", key="UNSET_KEY"), _acct("main")]}, _OFFICIAL),
    _row("explicit-off-on-search-capable-current-blocks-fallback", "falling back after search was switched off",
         {"current": "main", "accounts": [_acct("main", web_search=False), _acct("second")]},
         ("none", "explicit_off")),
    # From an outside hunt: the off switch read as binding only a current account that could search now.
    _row("explicit-off-on-current-without-credentials-blocks-fallback", "letting an explicit off bind only a "
         "configured current account: one whose key is unset falls back though it switched search off",
         {"current": "main", "accounts": [_acct("main", key="UNSET_KEY", web_search=False), _acct("second")]},
         ("none", "explicit_off")),
    _row("explicit-off-on-non-capable-current-still-falls-back", "treating off on a custom chat account as global",
         {"current": "plain", "accounts": [_acct("plain", base_url="https://other.example.test/v1", key="OTHER_KEY",
                                                 web_search=False), _acct("main")]}, _OFFICIAL),
    _row("third-party-messages-needs-explicit-opt-in", "enabling search by default on a relay",
         {"current": "relay", "accounts": [_RELAY]}, ("none", "no_search_account")),
    _row("third-party-messages-opted-in-keeps-own-endpoint-and-key", "sending a relay key to the official host",
         {"current": "relay", "accounts": [{**_RELAY, "web_search": True}]}, _RELAY_ROUTE),
    # seed 003: "搜索仍使用该账号配置的端点和凭据"; "自定义请求 URL 不会被自动转换"
    _row("third-party-request-url-is-the-search-url", "dropping a third-party account's own request URL and "
         "deriving the search URL from its base",
         {"current": "relay", "accounts": [{**_RELAY, "request_url": "https://relay.example.test/gw/v1/messages",
                                            "web_search": True}]},
         ("selected", "relay", "messages", "https://relay.example.test/gw/v1/messages", "r-model", "RELAY_KEY")),
    _row("third-party-responses-opted-in-uses-responses", "forcing every third-party account onto Messages",
         {"current": "relay-r", "accounts": [{**_RELAY_R, "web_search": True}]},
         ("selected", "relay-r", "responses", "https://relay.example.test/v1/responses", "gpt-x", "RELAY_KEY")),
    _row("third-party-chat-never-searches", "treating web_search = true on a Chat Completions relay as native search",
         {"current": "c", "accounts": [_acct("c", base_url="https://relay.example.test/v1", key="RELAY_KEY",
                                             web_search=True)]}, ("none", "no_search_account")),
    _row("auto-string-is-automatic", 'reading "auto" as a connection name',
         {"current": "main", "web_search_model": "auto", "accounts": [_acct("main")]}, _OFFICIAL),
    _row("empty-string-is-automatic", 'reading "" as a malformed reference',
         {"current": "main", "web_search_model": "", "accounts": [_acct("main")]}, _OFFICIAL),
    _row("assigned-splits-at-the-first-slash", "splitting at the last slash (the model may contain /)",
         {"current": "main", "web_search_model": "relay/vendor/model-1",
          "accounts": [_acct("main"), {**_RELAY, "web_search": True}]},
         ("selected", "relay", "messages", "https://relay.example.test/anthropic/v1/messages", "vendor/model-1",
          "RELAY_KEY")),
    _row("assigned-ignores-the-current-accounts-switch", "letting the current account's off block an assignment",
         {"current": "main", "web_search_model": "second/deepseek-v4-pro",
          "accounts": [_acct("main", web_search=False), _acct("second")]},
         ("selected", "second", "messages", OFFICIAL_URL, "deepseek-v4-pro", "DS_KEY")),
    _row("assigned-connection-gone-does-not-fall-back", "switching accounts when the assigned one was removed"
         " (or dropping the kept reference or the reason shown)",
         {"current": "main", "web_search_model": "gone/m", "accounts": [_acct("main")]}, _invalid("gone/m")),
    _row("assigned-connection-disabled",
         "using a switched-off connection (or dropping the kept reference or the reason shown)",
         {"current": "main", "web_search_model": "second/m",
          "accounts": [_acct("main"), _acct("second", enabled=False)]}, _invalid("second/m")),
    # seed 003: "手动指定时 ... 检查该连接的搜索开关"; a third-party account's switch is on only when set true
    _row("assigned-third-party-needs-its-own-opt-in", "taking the hand-picked assignment as a third-party "
         "connection's opt-in, so one that never set web_search = true searches (or dropping the kept reference or "
         "the reason shown)",
         {"current": "main", "web_search_model": "relay/r-model", "accounts": [_acct("main"), _RELAY]},
         _invalid("relay/r-model")),
    _row("assigned-connection-search-off", "ignoring the assigned connection's own search switch"
         " (or dropping the kept reference or the reason shown)",
         {"current": "main", "web_search_model": "second/m",
          "accounts": [_acct("main"), _acct("second", web_search=False)]}, _invalid("second/m")),
    _row("assigned-without-credentials",
         "selecting an assignment whose key is missing (or dropping the kept reference or the reason shown)",
         {"current": "main", "web_search_model": "second/m",
          "accounts": [_acct("main"), _acct("second", key="UNSET")]}, _invalid("second/m")),
    _row("offline-registers-nothing", "registering the tool in offline mode",
         {"offline": True, "current": "main", "accounts": [_acct("main")]}, ("none", "offline")),
    _row("allow-list-without-web-search-registers-nothing", "ignoring an explicit tool allow-list",
         {"tools_enabled": ["web_fetch"], "current": "main", "accounts": [_acct("main")]}, ("none", "not_allowed")),
    # seed 003: "如果 [tools].enabled 是显式工具白名单，需要包含 web_search" - an empty list is one without it
    _row("empty-allow-list-registers-nothing", "reading an explicit empty allow-list as no allow-list at all",
         {"tools_enabled": [], "current": "main", "accounts": [_acct("main")]}, ("none", "not_allowed")),
    _row("allow-list-with-web-search-registers", "treating any allow-list as excluding the tool",
         {"tools_enabled": ["web_search"], "current": "main", "accounts": [_acct("main")]}, _OFFICIAL),
    # seed 003: a model offered only by a remote broker or an extension brings no local search credential
    _row("broker-current-needs-a-local-search-account", "searching with a broker-offered model's credentials",
         {"current": "bk", "accounts": [_acct("bk", source="broker", key="OTHER_KEY"), _acct("main")]}, _OFFICIAL),
    _row("extension-only-model-registers-nothing", "treating an extension's model as a local search account",
         {"current": "ext", "accounts": [_acct("ext", source="extension")]}, ("none", "no_search_account")),
    _row("broker-first-in-order-is-skipped", "taking a broker account in the automatic fallback order",
         {"current": "plain", "accounts": [_acct("plain", base_url="https://other.example.test/v1", key="OTHER_KEY"),
                                           _acct("bk", source="broker", key="RELAY_KEY"), _acct("main")]},
         _OFFICIAL),
    _row("assigned-broker-model-is-unusable", "using a broker-offered connection named by web_search_model"
         " (or dropping the kept reference or the reason shown)",
         {"current": "main", "web_search_model": "bk/deepseek-v4-flash",
          "accounts": [_acct("main"), _acct("bk", source="broker")]}, _invalid("bk/deepseek-v4-flash")),
    # seed 003: connection-access limits still apply
    _row("access-list-excludes-the-current-account", "ignoring connection-access limits in automatic selection",
         {"current": "main", "connection_access": ["second"],
          "accounts": [_acct("main"), _acct("second", model="deepseek-v4-pro")]},
         ("selected", "second", "messages", OFFICIAL_URL, "deepseek-v4-pro", "DS_KEY")),
    _row("access-list-excludes-every-account", "searching through a connection the access list leaves out",
         {"current": "main", "connection_access": [], "accounts": [_acct("main")]}, ("none", "no_search_account")),
    _row("access-list-excludes-the-assigned-connection", "using an assigned connection the access list leaves out"
         " (or dropping the kept reference or the reason shown)",
         {"current": "main", "web_search_model": "second/m", "connection_access": ["main"],
          "accounts": [_acct("main"), _acct("second")]}, _invalid("second/m")),
    _row("offline-applies-to-an-assigned-model", "registering an assigned search model in offline mode",
         {"offline": True, "current": "main", "web_search_model": "main/deepseek-v4-pro", "accounts": [_acct("main")]},
         ("none", "offline")),
    _row("allow-list-applies-to-an-assigned-model", "letting an assignment bypass the tool allow-list",
         {"tools_enabled": ["web_fetch"], "web_search_model": "main/deepseek-v4-pro", "accounts": [_acct("main")]},
         ("none", "not_allowed")),
    # seed 003: an arbitrary model ID is never lower-cased (the one aliased beta ID is left open here)
    _row("model-id-is-kept-verbatim", "lower-casing the saved model ID on the search route",
         {"current": "main", "accounts": [_acct("main", model="DeepSeek-V4-Flash-Custom")]},
         ("selected", "main", "messages", OFFICIAL_URL, "DeepSeek-V4-Flash-Custom", "DS_KEY")),
    # From a hunt (R-I1): every assigned model above was lower case, so a search route lower-casing the model
    # an assignment names passed; seed 003 keeps the saved ID as it is and never lower-cases an arbitrary one.
    _row("assigned-model-id-is-kept-verbatim", "lower-casing the model an assignment names (or the whole "
         "assignment) on the search route",
         {"current": "main", "web_search_model": "second/DeepSeek-V4-Pro-Custom",
          "accounts": [_acct("main"), _acct("second")]},
         ("selected", "second", "messages", OFFICIAL_URL, "DeepSeek-V4-Pro-Custom", "DS_KEY")),
    _row("agent-table-names-the-search-model", "reading web_search_model only at the top level, not in [agent]",
         {"current": "main", "agent": {"web_search_model": "second/deepseek-v4-pro"},
          "accounts": [_acct("main"), _acct("second")]},
         ("selected", "second", "messages", OFFICIAL_URL, "deepseek-v4-pro", "DS_KEY")),
    # seed 003: "字段缺失、空字符串或 "auto" 表示自动" - a missing field is automatic, wherever [agent] stands
    _row("agent-table-without-the-field-is-automatic", "requiring web_search_model in an [agent] table that is given",
         {"current": "main", "agent": {}, "accounts": [_acct("main")]}, _OFFICIAL),
    # seed 003: "显式值使用 连接名/模型名" - a value with no model part is neither automatic nor a usable choice
    _row("reference-without-a-model-is-not-used",
         "searching with an empty model (main/ read as connection main, model ''), or reading it as automatic",
         {"current": "main", "web_search_model": "main/", "accounts": [_acct("main")]}, _invalid("main/"),
         refusable=True),
    # seed 003: "显式值使用 连接名/模型名"; an unusable choice "保留引用并显示不可用原因 ... 不会自动换账号"
    _row("bare-model-without-a-connection-is-not-used", "reading a value without / (a model ID) as that model on "
         "the automatically chosen account, or as automatic",
         {"current": "main", "web_search_model": "deepseek-v4-pro", "accounts": [_acct("main")]},
         _invalid("deepseek-v4-pro"), refusable=True),
    # seed 003: "当前支持搜索的账号显式设置 web_search = false 时，不会改用其他账号" - a third-party
    # Messages or Responses account is search-capable ("须显式设置 web_search = true")
    _row("explicit-off-on-third-party-messages-current-blocks-fallback",
         "treating a third-party Messages account as not search-capable, so its off falls back",
         {"current": "relay", "accounts": [{**_RELAY, "web_search": False}, _acct("main")]}, ("none", "explicit_off")),
    _row("explicit-off-on-third-party-responses-current-blocks-fallback",
         "treating a third-party Responses account as not search-capable, so its off falls back",
         {"current": "relay-r", "accounts": [{**_RELAY_R, "web_search": False}, _acct("main")]},
         ("none", "explicit_off")),
    # seed 003: only exact official addresses search via the official base ("精确匹配的官方 ... 地址");
    # "自定义请求 URL 不会被自动转换"
    _row("official-host-on-another-port-is-not-official", "ignoring the port when matching the official URL",
         {"current": "main", "accounts": [_acct("main", base_url="https://api.deepseek.com:8443")]},
         ("none", "no_search_account")),
    _row("official-host-with-userinfo-is-not-official", "ignoring userinfo (user@) when matching the official URL",
         {"current": "main", "accounts": [_acct("main", base_url="https://user@api.deepseek.com")]},
         ("none", "no_search_account")),
    _row("official-path-with-a-suffix-is-not-official",
         "matching the official path by prefix, or trimming more than a trailing /",
         {"current": "main", "accounts": [_acct("main", base_url="https://api.deepseek.com/v1X")]},
         ("none", "no_search_account")),
    _row("host-without-a-scheme-is-not-official", "taking a base URL without https:// for the official endpoint",
         {"current": "main", "accounts": [_acct("main", base_url="api.deepseek.com")]},
         ("none", "no_search_account")),
    # seed 003: "搜索仍使用该账号配置的端点" - a base URL's trailing / names the same endpoint
    _row("third-party-base-with-a-trailing-slash",
         "appending the route after the base's trailing / (a // URL), or trimming more than that /",
         {"current": "relay", "accounts": [{**_RELAY, "base_url": "https://relay.example.test/anthropic-X/",
                                            "web_search": True}]},
         ("selected", "relay", "messages", "https://relay.example.test/anthropic-X/v1/messages", "r-model",
          "RELAY_KEY")),
)


def resolution_observed(result: Any, expect: tuple[Any, ...]) -> tuple[Any, ...]:
    """What of a resolution object a row compares: the route fields for a selection; the status and
    reason for ``none`` (the reasons are this suite's names); for ``invalid`` the status, the reference
    as the document gave it and whether a reason is shown (seed 003: the reference is kept and the reason
    shown; what the reason is called is the implementation's)."""
    if not isinstance(result, dict):
        return ("not an object",)
    route = result.get("route")
    if isinstance(route, dict):
        keys = ("account", "protocol", "url", "model", "api_key_env")
        return (result.get("status"), *(route.get(k) for k in keys))
    if expect[0] == "invalid" or result.get("status") == "invalid":
        reason = result.get("reason")
        shown = REASON_SHOWN if isinstance(reason, str) and reason.strip() else f"no reason ({reason!r})"
        return (result.get("status"), result.get("reference"), shown)
    return (result.get("status"), result.get("reason"))


@check(
    "standalone.resolve.table",
    "account and model selection follows the seed's rules, row by row",
    seed="003",
    requires=(SR,),
    provider="messages",
    rule="Seed 003: the current account when configured and search-enabled, else the first configured search-enabled "
    "account in configuration order (an opted-in third-party account included); explicit off on a search-capable "
    "current account blocks fallback (an omitted switch does not, nor another account's off); exactly matched "
    "official DeepSeek URLs (Messages without /v1, Chat Completions with or without it; /v1 on Responses is open) "
    "search via the official Anthropic-compatible base with the same account and model, custom URLs are never "
    "converted; third-party Messages/Responses accounts need web_search = true (an assignment too) and keep their "
    "endpoint (their own request URL) and key; web_search_model missing, empty or auto is automatic, else "
    "connection/model split at the first slash; an unusable assignment keeps its reference, shows why, registers "
    "nothing and does not switch; offline mode and an allow-list without web_search (an empty one too) register "
    "nothing; a model offered only by a remote broker or an extension does not mean a local search credential, so an "
    "enabled local search account is still needed; connection-access limits still apply.",
    cases=RESOLUTION_CASES,
)
async def resolve_table(ctx: CheckContext) -> None:
    wrong: list[str] = []
    for case in RESOLUTION_CASES:
        call = ctx.target.start_call(
            "standalone_resolve", {"document": case["document"], "environ_set": list(ENV_SET)}
        )
        outcome = await call.outcome(CALL_TIMEOUT)
        if case["refusable"] and outcome.error_code == WebErrorCode.CONFIG_INVALID.value:
            continue
        if not outcome.ok:
            wrong.append(f"{case.name}: {outcome.brief()}")
            continue
        got = resolution_observed(outcome.value, case["expect"])
        also: tuple[tuple[Any, ...], ...] = case.params.get("also", ())
        if got != case["expect"] and got not in also:
            wrong.append(f"{case.name}: got {got!r}, expected {' or '.join(map(repr, (case['expect'], *also)))}")
    require(not wrong, f"{len(wrong)} selection row(s) wrong: " + "; ".join(wrong)[:900], rows=wrong)
