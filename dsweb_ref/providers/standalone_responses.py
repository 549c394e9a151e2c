"""Standalone search (seed 003) over the OpenAI-style Responses protocol.

One request per search: a single user input with the query, the ``web_search`` tool and nothing
else (``store: false``, no ``previous_response_id``: every search is stateless). Facts read from
the answer's ``output`` items:

- ``summary``: the ``output_text`` parts of ``message`` items; ``reasoning`` items (and their
  ``encrypted_content``) are skipped, and no item is kept for replay;
- ``sources``: ``action.sources`` of ``web_search_call`` items, then the ``url_citation``
  annotations of the message text (both structured; the text itself is never mined for URLs);
- ``searched``: a ``web_search_call`` item with ``status == "completed"``; a failed call, a
  ``function_call`` item or a failed response is an error.
"""

from __future__ import annotations

from typing import Any

from .._context import CallContext
from .._exceptions import WebError, WebErrorCode
from .._protocols import StandaloneAnswer, StandaloneSource, StandaloneUsage
from ._standalone import StandaloneEndpoint, count, mapping, unprocessable
from .standalone_messages import PROMPT_PREFIX

__all__ = ["ResponsesStandaloneSearch", "read_response"]


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
        return read_response(data, self.label)


def _failed(label: str, what: str) -> WebError:
    return WebError(WebErrorCode.PROVIDER_ERROR, f"{label}: {what}")


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


def read_response(data: dict[str, Any], label: str) -> StandaloneAnswer:
    if data.get("status") == "failed" or mapping(data.get("error")):
        raise _failed(label, "the response failed")
    output = data.get("output")
    if not isinstance(output, list):
        raise unprocessable(label, "output is not a list")
    texts: list[str] = []
    searched_sources: list[StandaloneSource] = []
    cited: list[StandaloneSource] = []
    completed = 0
    for i, raw in enumerate(output):
        if not isinstance(raw, dict):
            raise unprocessable(label, f"output[{i}] is not an object")
        kind = raw.get("type")
        if kind == "web_search_call":
            status = raw.get("status")
            if status == "failed":
                raise _failed(label, "the native web search failed")
            if status != "completed":
                continue
            completed += 1
            sources = mapping(raw.get("action")).get("sources")
            for value in sources if isinstance(sources, list) else []:
                if (source := _source(value)) is not None:
                    searched_sources.append(source)
        elif kind == "function_call":
            raise _failed(label, "the search model called a client tool")
        elif kind == "message":
            _message(raw, texts, cited)
    usage = mapping(data.get("usage"))
    return StandaloneAnswer(
        summary="".join(texts),
        sources=tuple(searched_sources + cited),
        searched=completed > 0,
        usage=StandaloneUsage(
            input_tokens=count(usage.get("input_tokens")),
            output_tokens=count(usage.get("output_tokens")),
            http_requests=1,
            web_search_requests=completed,
        ),
    )
