"""Seed 003: the standalone search's usage, reported apart from the conversation's and owned by its route.

Enforced (capability ``standalone-usage``: the call's ``value`` carries ``usage``): each search reports the
tokens its model request used and its HTTP request count under the ``web-search`` source ("搜索 token 用量和
HTTP 请求次数单独以 `web-search` 来源上报"), owned by the connection and model the search was set to use
("查询和搜索用量归属实际指定的连接及模型"): the model the request named, never one the answer claims; the
tokens as the answer counted them, a streamed answer's opening and closing counts read together.

Left open (accepted either way): more keys beside these (the reference adds ``web_search_requests``), how
the connection is named, and the usage of a search that failed (a tool error carries no value here).
"""

from __future__ import annotations

import json
from typing import Any

from ...emulator import AsAnswer, Fault
from ...emulator.streaming import Event
from ..cases import Case
from ..targets import STANDALONE_MODEL
from ._base import CheckContext, check, require
from .standalone import (
    _answer,
    _faulted,
    _item,
    _messages_body,
    _own_stream,
    _responses_body,
    _result_block,
    _search_call,
    _streaming,
    _text,
    _visible,
)

__all__ = ["USAGE_CASES"]

SA, SU = "standalone-search", "standalone-usage"
TOKENS = {"input_tokens": 1_234, "output_tokens": 567}
OTHER_MODEL = "deepseek-v4-flash-0917-served"  # what an answer may say it was, beside the model asked for


def _messages(model: str = STANDALONE_MODEL, searches: int = 1) -> bytes:
    blocks = [_result_block([_item(f"https://u{n}.example.test/")]) for n in range(searches)]
    body = json.loads(_messages_body([*blocks, {"type": "text", "text": "Usage answer."}]))
    body["model"] = model
    body["usage"] = {**TOKENS, "server_tool_use": {"web_search_requests": searches, "web_fetch_requests": 0}}
    return json.dumps(body).encode()


def _responses(model: str = STANDALONE_MODEL, reasoning: int = 0) -> bytes:
    body = json.loads(_responses_body([_search_call(urls=("https://u.example.test/",)),
                                       _answer([_text("Usage answer.")])]))
    body["model"] = model
    body["usage"] = {**body["usage"], **TOKENS, "total_tokens": sum(TOKENS.values()),
                     "output_tokens_details": {"reasoning_tokens": reasoning}}
    return json.dumps(body).encode()


def _closing_counts_output_only(events: list[Event]) -> list[Event]:
    """A Messages stream whose message_delta counts output tokens only (as Anthropic's streams long did):
    the input count is in message_start alone, the output count in message_delta alone."""
    out: list[Event] = []
    for name, data in events:
        if data.get("type") == "message_delta":
            data = {**data, "usage": {"output_tokens": data["usage"]["output_tokens"]}}
        out.append((name, data))
    return out


USAGE_CASES = (
    Case("messages", "no usage reported, or not under the web-search source; tokens lost or swapped; the HTTP "
         "request not counted; usage owned by no connection or by another model",
         {"protocol": "messages", "fault": AsAnswer(_messages())}),
    Case("responses", "the same over Responses",
         {"protocol": "responses", "fault": AsAnswer(_responses())}),
    Case("messages-answer-names-another-model", "the model the answer claims taken for the one the search was set "
         "to use", {"protocol": "messages", "fault": AsAnswer(_messages(OTHER_MODEL))}),
    # From an outside hunt: output_tokens already holds the reasoning tokens, which are billed output.
    Case("responses-reasoning-tokens", "the reasoning tokens taken out of the output count and lost (they are "
         "part of output_tokens, billed as output; reporting them apart as reasoning_tokens is accepted)",
         {"protocol": "responses", "fault": AsAnswer(_responses(reasoning=300))}),
    Case("responses-answer-names-another-model", "the same over Responses",
         {"protocol": "responses", "fault": AsAnswer(_responses(OTHER_MODEL))}),
    Case("messages-streamed", "a streamed answer's usage read from one event: message_start's (its output count "
         "is 1) or message_delta's (here it counts output tokens only, so the input count is lost)",
         {"protocol": "messages", "stream": True,
          "fault": _own_stream("messages", _messages(), _closing_counts_output_only)}),
    Case("messages-two-searches", "the answer's count of searches (server_tool_use.web_search_requests: 2) "
         "reported as the HTTP request count, where the search sent one request",
         {"protocol": "messages", "fault": AsAnswer(_messages(searches=2))}),
    Case("responses-streamed", "a streamed Responses answer's usage read from its opening event (null there) "
         "instead of response.completed", {"protocol": "responses", "stream": True, "fault": AsAnswer(_responses())}),
)


def _problems(usage: Any) -> list[str]:
    if not isinstance(usage, dict):
        return [f"value.usage is {type(usage).__name__}, expected an object"]
    want: dict[str, Any] = {"source": "web-search", "model": STANDALONE_MODEL, **TOKENS, "http_requests": 1}
    apart = usage.get("reasoning_tokens")  # reasoning tokens reported beside the output count: counted with it
    if isinstance(apart, int) and not isinstance(apart, bool) and isinstance(usage.get("output_tokens"), int):
        usage = {**usage, "output_tokens": usage["output_tokens"] + apart}
    problems = [f"{key}={usage.get(key)!r}, expected {value!r}" for key, value in want.items()
                if usage.get(key) != value or isinstance(usage.get(key), bool)]
    connection = usage.get("connection")
    if not isinstance(connection, str) or not connection.strip():
        problems.append(f"connection={connection!r}, expected the name of the connection the search used")
    return problems


@check(
    "standalone.usage.reported",
    "each search reports its tokens and HTTP requests under web-search, owned by its connection and model",
    seed="003",
    requires=(SA, SU),
    provider="messages",
    profiles=("seed-003-usage",),
    rule="Seed 003: 'search token usage and the HTTP request count are reported separately under the web-search "
    "source' and 'usage belongs to the connection and model actually designated', not the main conversation's. "
    "The value's usage names source web-search, the connection, the model the request named (deepseek-v4-flash, "
    "whatever model the answer claims), the answer's input and output tokens (a stream's opening and closing "
    "counts together) and one HTTP request (the search's own request, however many searches the model ran "
    "inside it: seed 003 says each search adds one model request). More keys are accepted.",
    cases=USAGE_CASES,
)
async def usage_reported(ctx: CheckContext) -> None:
    for case in USAGE_CASES:
        await _streaming(ctx, case)
        fault: Fault = case["fault"]
        outcome = await _faulted(ctx, case["protocol"], fault)
        _visible(outcome, f"[{case.name}]")
        value = outcome.value if isinstance(outcome.value, dict) else {}
        problems = _problems(value.get("usage"))
        require(not problems, f"[{case.name}] {'; '.join(problems)}", usage=value.get("usage"), catches=case.catches)
