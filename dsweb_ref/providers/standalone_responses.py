"""Standalone search (seed 003) over the OpenAI-style Responses protocol.

One request per search: a single user input with the query, the ``web_search`` tool and nothing
else (``store: false``, no ``previous_response_id``: every search is stateless). Facts read from
the answer's ``output`` items:

- ``summary``: the ``output_text`` parts of ``message`` items; ``reasoning`` items (and their
  ``encrypted_content``) are skipped, and no item is kept for replay;
- ``sources``: ``action.sources`` of ``web_search_call`` items, then the ``url_citation``
  annotations of the message text (both structured; the text itself is never mined for URLs);
  a URL's first non-empty title is given to every entry of that URL (``merge_titles``);
- ``searched``: a ``web_search_call`` item with ``status == "completed"``; a failed call, a
  ``function_call`` item or a failed response is an error (returned as ``failure`` with usage).
"""

from __future__ import annotations

from typing import Any

from .._context import CallContext
from .._protocols import StandaloneAnswer, StandaloneSource, StandaloneUsage
from ._standalone import StandaloneEndpoint, Streamed, count, mapping, unprocessable
from .standalone_messages import PROMPT_PREFIX

__all__ = ["ResponsesStandaloneSearch", "merge_titles", "read_events", "read_response"]


class ResponsesStandaloneSearch(StandaloneEndpoint):
    provider_id = "standalone-responses"
    label = "Responses web search"

    async def standalone_search(
        self, query: str, ctx: CallContext, *, max_tokens: int, timeout_s: float
    ) -> StandaloneAnswer:
        key = self._key()
        payload: dict[str, Any] = {
            "model": self.model,
            "input": [{"role": "user", "content": [{"type": "input_text", "text": PROMPT_PREFIX + query}]}],
            "tools": [{"type": "web_search"}],
            "max_output_tokens": max_tokens,
            "store": False,
        }
        headers = {
            "authorization": f"Bearer {key}",
            "content-type": "application/json",
            "accept": "application/json",
        }
        data = await self._exchange(payload, headers, key, ctx, timeout_s)
        if isinstance(data, Streamed):
            return read_events(data, self.label)
        return read_response(data, self.label)


def _source(value: object) -> StandaloneSource | None:
    item = mapping(value)
    url, title = item.get("url"), item.get("title")
    if not isinstance(url, str):
        return None
    return StandaloneSource(url, title if isinstance(title, str) else "")


def _message(item: dict[str, Any], texts: list[str], cited: list[StandaloneSource]) -> None:
    parts = item.get("content")
    for part in parts if isinstance(parts, list) else []:
        part = mapping(part)
        if part.get("type") != "output_text" or not isinstance(part.get("text"), str):
            continue
        texts.append(part["text"])
        annotations = part.get("annotations")
        for note in annotations if isinstance(annotations, list) else []:
            if mapping(note).get("type") == "url_citation" and (source := _source(note)) is not None:
                cited.append(source)


def merge_titles(sources: list[StandaloneSource]) -> tuple[StandaloneSource, ...]:
    """``sources`` in order, each with the first non-empty title any entry of the same URL carries.

    ``action.sources`` come first and carry no title; the ``url_citation`` of the same page names
    it. Without this the exact-URL dedupe keeps the title-less entry (seed 003: a source is its
    title and URL)."""
    titles: dict[str, str] = {}
    for source in sources:
        if source.title and source.url not in titles:
            titles[source.url] = source.title
    return tuple(s if s.title else StandaloneSource(s.url, titles.get(s.url, "")) for s in sources)


def read_usage(usage: object, searches: int) -> StandaloneUsage:
    usage = mapping(usage)
    return StandaloneUsage(
        input_tokens=count(usage.get("input_tokens")),
        output_tokens=count(usage.get("output_tokens")),
        http_requests=1,
        web_search_requests=searches,
    )


def _failed(label: str, what: str, usage: StandaloneUsage) -> StandaloneAnswer:
    return StandaloneAnswer(summary="", sources=(), searched=False, usage=usage, failure=f"{label}: {what}")


def read_response(data: dict[str, Any], label: str) -> StandaloneAnswer:
    """The facts of one Responses answer; a failed response, a failed search call or a client tool
    call is returned as ``failure`` with the answer's usage."""
    output = data.get("output")
    if data.get("status") == "failed" or mapping(data.get("error")):
        return _failed(label, "the response failed", read_usage(data.get("usage"), 0))
    if not isinstance(output, list):
        raise unprocessable(label, "output is not a list")
    texts: list[str] = []
    searched_sources: list[StandaloneSource] = []
    cited: list[StandaloneSource] = []
    completed = 0
    failure: str | None = None
    for i, raw in enumerate(output):
        if not isinstance(raw, dict):
            raise unprocessable(label, f"output[{i}] is not an object")
        kind = raw.get("type")
        if kind == "web_search_call":
            status = raw.get("status")
            if status == "failed":
                failure = failure or "the native web search failed"
            if status != "completed":
                continue
            completed += 1
            sources = mapping(raw.get("action")).get("sources")
            for value in sources if isinstance(sources, list) else []:
                if (source := _source(value)) is not None:
                    searched_sources.append(source)
        elif kind == "function_call":
            failure = failure or "the search model called a client tool"
        elif kind == "message":
            _message(raw, texts, cited)
    usage = read_usage(data.get("usage"), completed)
    if failure is not None:
        return _failed(label, failure, usage)
    return StandaloneAnswer(
        summary="".join(texts),
        sources=merge_titles(searched_sources + cited),
        searched=completed > 0,
        usage=usage,
    )


_FINAL = ("response.completed", "response.failed", "response.incomplete")


def read_events(streamed: Streamed, label: str) -> StandaloneAnswer:
    """A streamed Responses answer: the response its final event (``response.completed``, or
    ``.failed`` / ``.incomplete``) carries, read like a plain one (titles merged the same way); its
    output items are taken from ``response.output_item.done`` events when the final response lists
    none. No final event (a cut stream) or an ``error`` event is a failure; the usage, which only
    the final event carries, is then what arrived (nothing, for a cut before it)."""
    final: dict[str, Any] | None = None
    items: dict[int, Any] = {}
    for event in streamed.events:
        kind = event.get("type")
        if kind in _FINAL:
            final = mapping(event.get("response"))
        elif kind == "response.output_item.done":
            index = event.get("output_index")
            if isinstance(index, int) and not isinstance(index, bool):
                items[index] = event.get("item")
        elif kind == "error":
            return _failed(label, "the stream reported an error", read_usage((final or {}).get("usage"), 0))
    if final is None:
        return _failed(label, "the answer stream ended before the response completed", read_usage(None, 0))
    output = final.get("output")
    if not (isinstance(output, list) and output) and items:
        final = {**final, "output": [items[i] for i in sorted(items)]}
    return read_response(final, label)
