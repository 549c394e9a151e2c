"""``POST /v1/responses``: an OpenAI-style Responses answer that runs one web search.

The query is the text of the last user input (``input`` as a string, or ``input_text`` parts),
found like the Messages route finds it. With a ``web_search`` tool the output is a ``reasoning``
item, a completed ``web_search_call`` (``action.sources`` only when ``include`` asks for
``web_search_call.action.sources``, as upstream) and an assistant ``message`` whose ``output_text``
carries ``url_citation`` annotations. ``encrypted_content`` on the reasoning item appears only
when ``include`` asks for ``reasoning.encrypted_content``. Stateless: ``previous_response_id`` is
refused. ``stream: true`` retells the same answer as Responses events (``responses_events``).

Faults bend the answer through ``MessagesMode`` (shared with the Messages route): prose only (no
search call), a failed search call, a completed search without sources, a huge summary.
"""

from __future__ import annotations

from typing import Any

from .errors import ApiError
from .messages import CITED_RESULTS, RESULTS_PER_SEARCH, MessagesMode, _hash, _opaque, extract_query
from .models import check_model
from .search import search
from .streaming import TEXT_CHUNK, Event
from .tools import parse_json_object

__all__ = ["CREATED_AT", "responses_answer", "responses_events"]

CREATED_AT = 1_764_547_200  # fixed: equal requests give byte-identical answers
_WEB_SEARCH_TYPES = ("web_search", "web_search_preview", "web_search_2025_08_26")


def _user_text(items: Any) -> str:
    if isinstance(items, str):
        return items
    for item in reversed(items):
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        content = item.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(
                part["text"]
                for part in content
                if isinstance(part, dict) and part.get("type") == "input_text" and isinstance(part.get("text"), str)
            )
    return ""


def _validate(request: dict[str, Any]) -> None:
    check_model(request)
    items = request.get("input")
    if not isinstance(items, str | list) or not items:
        raise ApiError(400, "input: must be a non-empty string or list", param="input")
    limit = request.get("max_output_tokens")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 16):
        raise ApiError(400, "max_output_tokens: must be an integer of at least 16", param="max_output_tokens")
    if not isinstance(request.get("stream", False), bool):
        raise ApiError(400, "stream: must be a boolean", param="stream")
    if request.get("previous_response_id") is not None:
        raise ApiError(400, "previous_response_id: this endpoint keeps no state", param="previous_response_id")
    tools = request.get("tools", [])
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise ApiError(400, "tools: must be a list of objects", param="tools")
    include = request.get("include", [])
    if not isinstance(include, list) or not all(isinstance(i, str) for i in include):
        raise ApiError(400, "include: must be a list of strings", param="include")


def _message(item_id: str, text: str, annotations: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": annotations, "logprobs": []}],
    }


def _search_output(query: str, mode: MessagesMode, include: list[str], request_hash: str) -> list[dict[str, Any]]:
    call: dict[str, Any] = {
        "id": "ws_" + _hash("call", request_hash),
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": query},
    }
    message_id = "msg_" + _hash("message", request_hash)
    if mode.tool_error is not None:
        call["status"] = "failed"
        return [call, _message(message_id, f"The web search failed ({mode.tool_error}).", [])]
    hits = search(query, RESULTS_PER_SEARCH)
    if "web_search_call.action.sources" in include and not mode.no_sources:
        call["action"]["sources"] = [{"type": "url", "url": hit.document.url} for hit in hits]
    if mode.summary_chars is not None:
        return [call, _message(message_id, ("Summary. " * (mode.summary_chars // 9 + 1))[: mode.summary_chars], [])]
    if not hits:
        return [call, _message(message_id, f"I found no web results for “{query}”.", [])]
    text = f"Here is what I found about “{query}”:"
    annotations: list[dict[str, Any]] = []
    for number, hit in enumerate(hits[:CITED_RESULTS], start=1):
        piece = f"\n\n{number}. {hit.document.snippet or hit.document.title}"
        start = len(text) + 2
        text += piece
        if not mode.no_sources:
            annotations.append(
                {"type": "url_citation", "start_index": start, "end_index": len(text),
                 "title": hit.document.title, "url": hit.document.url}
            )
    return [call, _message(message_id, text, annotations)]


def responses_answer(body: bytes, mode: MessagesMode | None = None) -> dict[str, Any]:
    mode = mode or MessagesMode()
    request = parse_json_object(body)
    _validate(request)
    include = request.get("include", [])
    request_hash = _hash(body, size=64)
    query = extract_query(_user_text(request["input"]))
    tools = request.get("tools", [])
    searching = any(t.get("type") in _WEB_SEARCH_TYPES for t in tools) and bool(query)
    reasoning: dict[str, Any] = {"id": "rs_" + _hash("reasoning", request_hash), "type": "reasoning", "summary": []}
    if "reasoning.encrypted_content" in include:
        reasoning["encrypted_content"] = _opaque("reasoning", request_hash)
    output: list[dict[str, Any]] = [reasoning]
    message_id = "msg_" + _hash("message", request_hash)
    if mode.prose_only is not None:
        output.append(_message(message_id, mode.prose_only or f"From memory, without searching: {query}.", []))
    elif searching:
        output += _search_output(query, mode, include, request_hash)
    else:
        output.append(_message(message_id, f"This is the emulator's answer to: {query}" if query else "Hello.", []))
    text_chars = sum(len(p["text"]) for item in output if item["type"] == "message" for p in item["content"])
    input_tokens, output_tokens = max(1, len(body) // 4), max(1, text_chars // 4)
    return {
        "id": "resp_" + _hash("response", request_hash),
        "object": "response",
        "created_at": CREATED_AT,
        "status": "completed",
        "completed_at": CREATED_AT,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": request.get("max_output_tokens"),
        "metadata": {},
        "model": request["model"],
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "store": False,
        "temperature": 1.0,
        "tool_choice": "auto",
        "tools": tools,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        },
    }


def _item_events(index: int, item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(type, fields) pairs for one output item, without sequence numbers."""
    ref = {"output_index": index, "item_id": item["id"]}
    if item["type"] == "web_search_call":
        opening = {**item, "status": "in_progress"}
        steps = [(f"response.web_search_call.{s}", dict(ref)) for s in ("in_progress", "searching", "completed")]
        if item["status"] != "completed":
            steps = steps[:2]
        return [("response.output_item.added", {"output_index": index, "item": opening}), *steps,
                ("response.output_item.done", {"output_index": index, "item": item})]
    if item["type"] != "message":
        return [("response.output_item.added", {"output_index": index, "item": item}),
                ("response.output_item.done", {"output_index": index, "item": item})]
    opening = {**item, "status": "in_progress", "content": []}
    added = ("response.output_item.added", {"output_index": index, "item": opening})
    events: list[tuple[str, dict[str, Any]]] = [added]
    for n, part in enumerate(item["content"]):  # each part its own events, in order (a refusal, then text)
        events += _part_events({**ref, "content_index": n}, part)
    events.append(("response.output_item.done", {"output_index": index, "item": item}))
    return events


def _part_events(at: dict[str, Any], part: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(type, fields) pairs for one part of a message item: a refusal told by refusal events, any other part as
    output text (its deltas, then its annotations)."""
    if part.get("type") == "refusal":
        said = part["refusal"]
        return [("response.content_part.added", {**at, "part": {**part, "refusal": ""}}),
                *[("response.refusal.delta", {**at, "delta": said[i : i + TEXT_CHUNK]})
                  for i in range(0, len(said), TEXT_CHUNK)],
                ("response.refusal.done", {**at, "refusal": said}),
                ("response.content_part.done", {**at, "part": part})]
    events = [("response.content_part.added", {**at, "part": {**part, "text": "", "annotations": []}})]
    text = part["text"]
    for i in range(0, len(text), TEXT_CHUNK):
        events.append(("response.output_text.delta", {**at, "delta": text[i : i + TEXT_CHUNK], "logprobs": []}))
    for n, note in enumerate(part["annotations"]):
        events.append(("response.output_text.annotation.added", {**at, "annotation_index": n, "annotation": note}))
    events += [
        ("response.output_text.done", {**at, "text": text, "logprobs": []}),
        ("response.content_part.done", {**at, "part": part}),
    ]
    return events


_FINAL_EVENTS = {"failed": "response.failed", "incomplete": "response.incomplete"}


def responses_events(answer: dict[str, Any]) -> list[Event]:
    """The Responses event stream for a complete ``answer``: created, in_progress, each output item
    (with its search or text events), then the final event its status names (``response.completed``,
    ``.failed`` or ``.incomplete``) carrying the whole answer; ``sequence_number`` counts from 0."""
    opening = {**answer, "status": "in_progress", "output": [], "usage": None, "completed_at": None}
    steps: list[tuple[str, dict[str, Any]]] = [("response.created", {"response": opening}),
                                               ("response.in_progress", {"response": opening})]
    for index, item in enumerate(answer["output"]):
        steps += _item_events(index, item)
    steps.append((_FINAL_EVENTS.get(str(answer.get("status")), "response.completed"), {"response": answer}))
    return [(name, {"type": name, "sequence_number": n, **fields}) for n, (name, fields) in enumerate(steps)]
