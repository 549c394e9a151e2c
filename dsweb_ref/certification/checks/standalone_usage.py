"""Seed 003: the standalone search's usage, reported apart from the conversation's and owned by its route.

Enforced (capability ``standalone-usage``: the call's ``value`` carries ``usage``): each search reports the
tokens its model request used and its HTTP request count under the ``web-search`` source ("搜索 token 用量和
HTTP 请求次数单独以 `web-search` 来源上报"), owned by the connection and model the search was set to use
("查询和搜索用量归属实际指定的连接及模型"): the model the request named, never one the answer claims; the
tokens as the answer counted them, a streamed answer's opening and closing counts read together (a Responses
input count's cached tokens and output count's reasoning tokens kept in it or reported apart, never lost; a Messages
answer's cache reads and writes, which its input_tokens leaves out, folded into it or reported apart); a count below
zero (no request used it) never reported as it stands, since the usage is counted into the task's ("计入任务用量").

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


# The counts of an answer that no request can have used: an input count below zero.
NEGATIVE = {**TOKENS, "input_tokens": -TOKENS["input_tokens"]}
# A Messages answer's counts with input read from and written to the prompt cache: input_tokens leaves both out, so
# the request's input is the three together (TOKENS' 1 234).
CACHE_READ, CACHE_CREATION = 1_000, 50
CACHED = {**TOKENS, "input_tokens": TOKENS["input_tokens"] - CACHE_READ - CACHE_CREATION,
          "cache_read_input_tokens": CACHE_READ, "cache_creation_input_tokens": CACHE_CREATION}


def _messages(model: str = STANDALONE_MODEL, searches: int = 1, tokens: dict[str, int] = TOKENS) -> bytes:
    blocks = [_result_block([_item(f"https://u{n}.example.test/")]) for n in range(searches)]
    body = json.loads(_messages_body([*blocks, {"type": "text", "text": "Usage answer."}]))
    body["model"] = model
    body["usage"] = {**tokens, "server_tool_use": {"web_search_requests": searches, "web_fetch_requests": 0}}
    return json.dumps(body).encode()


def _responses(model: str = STANDALONE_MODEL, reasoning: int = 0, tokens: dict[str, int] = TOKENS,
               cached: int = 0) -> bytes:
    body = json.loads(_responses_body([_search_call(urls=("https://u.example.test/",)),
                                       _answer([_text("Usage answer.")])]))
    body["model"] = model
    body["usage"] = {**body["usage"], **tokens, "total_tokens": sum(tokens.values()),
                     "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
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
    # From a hunt (P-D6): on Responses, input_tokens already holds the cached input tokens (input_tokens_details.
    # cached_tokens is a part of it); every answer before said 0 cached, so taking them out went unseen.
    Case("responses-cached-input", "the cached input tokens taken out of the input count and lost (they are part "
         "of input_tokens, used by the request and counted at the account's price; reporting them apart, under a "
         "key naming the cache, at the usage's top level or in an object inside it, or in an object under such a "
         "key, is accepted)",
         {"protocol": "responses", "fault": AsAnswer(_responses(cached=1_000))}),
    # From a hunt (T2-5): on Messages, input_tokens leaves out the tokens read from and written to the prompt
    # cache (cache_read_input_tokens, cache_creation_input_tokens count apart); every answer before gave none, so a
    # usage that lost them passed. Both are input the request used, priced at the account's rates ("使用所选账号的
    # 价格计入任务用量"): folded into input_tokens, or reported apart under keys naming the cache, never lost.
    # From a review (R2 F2): the counts reported apart in an object under such a key (Anthropic's own
    # cache_creation: {ephemeral_5m_input_tokens, ...}, or cache_tokens: {read, creation}) were not read, a false
    # failure: they count as reported apart too.
    Case("messages-cache-tokens", "the cache read and cache creation tokens of a Messages answer lost (only its "
         "input_tokens, which leaves both out, reported; folding them into input_tokens, or reporting either apart "
         "under a key naming the cache or in an object under one, is accepted)",
         {"protocol": "messages", "cache": True, "fault": AsAnswer(_messages(tokens=CACHED))}),
    Case("messages-cache-tokens-streamed", "the same on a streamed answer (its message_start and message_delta "
         "each carry the cache counts)",
         {"protocol": "messages", "cache": True, "stream": True, "fault": AsAnswer(_messages(tokens=CACHED))}),
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
    # From the seed-7 mutation draw: a count below zero is no count of tokens a request used; reported as it
    # stands, the search takes tokens off the task's usage ('计入任务用量' at the account's price). Any count of
    # zero or more, null, leaving it out, dropping the whole token usage (both counts null or both zero), or failing
    # the call (seed 003 leaves a failed search's usage open) is right.
    Case("messages-negative-input-count", "an answer's input_tokens below zero (-1234) reported as it stands, so the "
         "search takes tokens off the task's usage", {"protocol": "messages", "fault": AsAnswer(_messages(
             tokens=NEGATIVE)), "unknown": ("input_tokens",)}),
    Case("responses-negative-input-count", "the same over Responses",
         {"protocol": "responses", "fault": AsAnswer(_responses(tokens=NEGATIVE)), "unknown": ("input_tokens",)}),
)


def _count(value: Any) -> bool:
    """Whether ``value`` can stand for a token count the answer did not give: none, or an integer of zero or more."""
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


_NOT_HITS = ("miss", "write", "creat")  # cache counts that are not input read from the cache


def _cached(usage: dict[str, Any]) -> list[tuple[str, int]]:
    """Each whole number above zero a usage reports under the cache, with the names leading to it (joined, lower
    case): a value up to two objects deep whose path names the cache (cached_tokens at the top level,
    input_tokens_details.cached_tokens, Anthropic's cache_creation.ephemeral_5m_input_tokens, cache_tokens.read: a
    review found the last two not read)."""
    found: list[tuple[str, int]] = []

    def walk(place: dict[str, Any], names: str, depth: int) -> None:
        for key, value in place.items():
            if not isinstance(key, str):
                continue
            named = f"{names} {key.lower()}"
            if type(value) is int and value > 0 and "cache" in named:
                found.append((named, value))
            elif isinstance(value, dict) and depth < 2:
                walk(value, named, depth + 1)

    walk(usage, "", 0)
    return found


def _cache_hits(usage: dict[str, Any]) -> set[int]:
    """The counts of cached input a usage reports apart (:func:`_cached`: cached_tokens, cache_read_input_tokens,
    prompt_cache_hit_tokens, cache.read, ...); cache writes, creations and misses are not such counts (a review found
    DeepSeek's prompt_cache_miss_tokens summed in, and a nested count not read)."""
    return {v for named, v in _cached(usage) if not any(w in named for w in _NOT_HITS)}


def _cache_counts(usage: dict[str, Any]) -> list[int]:
    """The counts of cached input a Messages usage reports apart (:func:`_cached`): reads and writes alike, since a
    Messages input_tokens leaves out both (misses are not such counts)."""
    return [v for named, v in _cached(usage) if "miss" not in named]


def _problems(usage: Any, unknown: tuple[str, ...] = (), cache: bool = False) -> list[str]:
    """What ``usage`` gets wrong; ``unknown`` are the counts the answer gave as no count (judged by ``_count``);
    ``cache``: a Messages answer whose input_tokens leaves out its cache reads and writes (any of the counts reported
    apart, :func:`_cache_counts`, make up the rest of the input)."""
    if not isinstance(usage, dict):
        return [f"value.usage is {type(usage).__name__}, expected an object"]
    want: dict[str, Any] = {"source": "web-search", "model": STANDALONE_MODEL, **TOKENS, "http_requests": 1}
    for key in unknown:
        del want[key]
    # An answer with a count below zero may be read as no usage at all, like a failed call that reports none: both
    # token counts null (or left out) or both zero (seed 003 leaves a corrupt answer's usage open).
    counts = [usage.get(key) for key in TOKENS]
    if unknown and (all(c is None for c in counts) or all(type(c) is int and c == 0 for c in counts)):
        for key in TOKENS:
            want.pop(key, None)
    apart = usage.get("reasoning_tokens")  # reasoning tokens reported beside the output count: counted with it
    if isinstance(apart, int) and not isinstance(apart, bool) and isinstance(usage.get("output_tokens"), int):
        usage = {**usage, "output_tokens": usage["output_tokens"] + apart}
    # Cached input tokens reported apart with an input count that leaves them out: counted with it; an input count
    # that holds them, with or without such keys beside it, is right as it stands.
    given, wanted = usage.get("input_tokens"), want.get("input_tokens")
    found = sorted(_cache_counts(usage) if cache else _cache_hits(usage))
    sums = {0}  # what the counts reported apart add up to: one of them, or (cache) any of them, each once
    for count in found:  # kept to sums up to the input wanted (every count is above zero), so a long list is cheap
        sums |= {count} if not cache else {s + count for s in sums if type(wanted) is int and s + count <= wanted}
    if type(given) is int and given != wanted and type(wanted) is int and wanted - given in sums - {0}:
        usage = {**usage, "input_tokens": wanted}
    beside = f" (the cache counts reported apart, {found}, make up no rest of it)" if found else ""
    problems = [f"{key}={usage.get(key)!r}, expected {value!r}{beside if key == 'input_tokens' else ''}"
                for key, value in want.items() if usage.get(key) != value or isinstance(usage.get(key), bool)]
    problems += [f"{key}={usage.get(key)!r}, expected no count or one of zero or more (the answer's is below zero)"
                 for key in unknown if not _count(usage.get(key))]
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
    "counts together; a Responses input count holds its cached tokens and an output count its reasoning tokens, "
    "both used by the request and priced: either may be reported apart, under reasoning_tokens or a key naming "
    "the cache (or in an object under one), the count beside it then without them, never lost; a Messages "
    "input_tokens leaves out its cache_read_input_tokens and cache_creation_input_tokens, input the request used "
    "too: each folded into the input count or reported apart under a key naming the cache (or in an object under "
    "one, as Anthropic's cache_creation), never lost) and one HTTP request (the search's own "
    "request, however many searches the model ran inside it: seed 003 says each search adds one model request). "
    "More keys are accepted. The usage is "
    "'counted into the task's usage at the account's price', so a count the answer gives below zero, which no "
    "request can have used, is never reported as it stands: none, a count of zero or more, both token counts "
    "dropped (null or zero, the answer's usage read as unreadable), or a failed call.",
    cases=USAGE_CASES,
)
async def usage_reported(ctx: CheckContext) -> None:
    for case in USAGE_CASES:
        await _streaming(ctx, case)
        fault: Fault = case["fault"]
        outcome = await _faulted(ctx, case["protocol"], fault)
        unknown: tuple[str, ...] = case.params.get("unknown", ())
        if unknown and outcome.error_code is not None:
            continue  # the answer refused as a failure: it reports no count at all
        _visible(outcome, f"[{case.name}]")
        value = outcome.value if isinstance(outcome.value, dict) else {}
        problems = _problems(value.get("usage"), unknown, bool(case.params.get("cache")))
        require(not problems, f"[{case.name}] {'; '.join(problems)}", usage=value.get("usage"), catches=case.catches)
