"""Standalone search (seed 003) over the Anthropic-compatible Messages protocol.

One request per search: a single user message with the query and the ``web_search_20250305``
server tool, nothing else (no history, no client tools). Facts read from the answer:

- ``summary``: the text blocks, joined; thinking and redacted thinking are skipped;
- ``sources``: ``web_search_result`` items of ``web_search_tool_result`` blocks (url, title);
  ``encrypted_content`` and ``page_age`` are never read; citations are not mined for URLs;
- ``searched``: a ``web_search_tool_result`` holding a result list (empty or not) was returned;
  a ``server_tool_use`` alone means the search started, not that it completed;
- an in-band ``web_search_tool_result_error`` or a client ``tool_use`` block is an error
  (returned as the answer's ``failure``, with its usage).
"""

from __future__ import annotations

import re
from typing import Any

from .._context import CallContext
from .._protocols import StandaloneAnswer, StandaloneSource, StandaloneUsage
from ._standalone import StandaloneEndpoint, Streamed, count, mapping, unprocessable

__all__ = ["PROMPT_PREFIX", "MessagesStandaloneSearch", "read_answer", "read_events", "read_usage"]

PROMPT_PREFIX = "Perform a web search for the query: "
_ERROR_CODE = re.compile(r"[a-z0-9_]{1,64}")


class MessagesStandaloneSearch(StandaloneEndpoint):
    provider_id = "standalone-messages"
    label = "Messages web search"
    api_version = "2023-06-01"

    async def standalone_search(
        self, query: str, ctx: CallContext, *, max_tokens: int, timeout_s: float
    ) -> StandaloneAnswer:
        key = self._key()
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": [{"type": "text", "text": PROMPT_PREFIX + query}]}],
            "tools": [{"type": "web_search_20250305", "name": "web_search"}],
        }
        headers = {
            "x-api-key": key,
            "authorization": f"Bearer {key}",
            "anthropic-version": self.api_version,
            "content-type": "application/json",
            "accept": "application/json",
        }
        data = await self._exchange(payload, headers, key, ctx, timeout_s)
        if isinstance(data, Streamed):
            return read_events(data, self.label)
        return read_answer(data, self.label)


def _search_error(code: object, label: str) -> str:
    shown = code if isinstance(code, str) and _ERROR_CODE.fullmatch(code) else "unknown"
    return f"{label}: the native web search failed (error_code {shown})"


def read_usage(usage: object) -> StandaloneUsage:
    """The counters of a Messages ``usage`` object (a plain answer's, or a stream's last one)."""
    usage = mapping(usage)
    server = mapping(usage.get("server_tool_use"))
    # A Messages input_tokens leaves out the input read from and written to the prompt cache: all three are input
    # the request used, priced at the account's rates (seed 003), so the input count is their sum.
    counts = [count(usage.get(k)) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")]
    return StandaloneUsage(
        input_tokens=sum(counts),
        output_tokens=count(usage.get("output_tokens")),
        http_requests=1,
        web_search_requests=count(server.get("web_search_requests")),
    )


def read_answer(data: dict[str, Any], label: str) -> StandaloneAnswer:
    """The facts of one Messages answer. An in-band search error or a client tool call is returned
    as ``failure`` with the answer's usage (seed 003: the search's usage is reported either way)."""
    blocks = data.get("content")
    if not isinstance(blocks, list):
        raise unprocessable(label, "content is not a list")
    usage = read_usage(data.get("usage"))
    texts: list[str] = []
    sources: list[StandaloneSource] = []
    searched = False
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise unprocessable(label, f"content[{i}] is not an object")
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise unprocessable(label, f"content[{i}].text is not a string")
            texts.append(text)
        elif kind == "tool_use":
            return _failed(f"{label}: the search model called a client tool", usage)
        elif kind == "web_search_tool_result":
            items = block.get("content")
            if isinstance(items, dict) and items.get("type") == "web_search_tool_result_error":
                return _failed(_search_error(items.get("error_code"), label), usage)
            if not isinstance(items, list):
                raise unprocessable(label, f"content[{i}].content is neither a result list nor a search error")
            searched = True
            for item in items:
                if isinstance(item, dict) and item.get("type") == "web_search_result":
                    url, title = item.get("url"), item.get("title")
                    if isinstance(url, str):
                        sources.append(StandaloneSource(url, title if isinstance(title, str) else ""))
    return StandaloneAnswer(summary="".join(texts), sources=tuple(sources), searched=searched, usage=usage)


def _failed(message: str, usage: StandaloneUsage) -> StandaloneAnswer:
    return StandaloneAnswer(summary="", sources=(), searched=False, usage=usage, failure=message)


def read_events(streamed: Streamed, label: str) -> StandaloneAnswer:
    """A streamed Messages answer: the message rebuilt from its events, then read like a plain one.
    Usage is the last one seen (``message_start``, then ``message_delta``'s); an ``error`` event or
    a stream that ends before ``message_stop`` is a failure that still carries that usage."""
    usage: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    texts: dict[int, list[str]] = {}
    stopped, failure = False, None
    for event in streamed.events:
        kind = event.get("type")
        raw_index = event.get("index")
        index = raw_index if isinstance(raw_index, int) and not isinstance(raw_index, bool) else None
        if kind == "message_start":
            usage.update(mapping(mapping(event.get("message")).get("usage")))
        elif kind == "message_delta":
            usage.update(mapping(event.get("usage")))
        elif kind == "content_block_start" and index is not None:
            blocks[index] = dict(mapping(event.get("content_block")))
            texts[index] = [blocks[index]["text"]] if isinstance(blocks[index].get("text"), str) else []
        elif kind == "content_block_delta" and index in texts:
            delta = mapping(event.get("delta"))
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                texts[index].append(delta["text"])
        elif kind == "message_stop":
            stopped = True
        elif kind == "error":
            failure = f"{label}: the stream reported an error"
    for index, parts in texts.items():
        if blocks[index].get("type") == "text":
            blocks[index]["text"] = "".join(parts)
    if failure is None and (streamed.cut or not stopped):
        failure = f"{label}: the answer stream ended before message_stop"
    if failure is not None:
        return _failed(failure, read_usage(usage))
    return read_answer({"content": [blocks[i] for i in sorted(blocks)], "usage": usage}, label)
