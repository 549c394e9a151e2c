"""Server-sent events for ``stream: true``: the complete answer is built first, then told again as
the event sequence the official SDKs consume, so a streamed and a plain answer always agree
(``app._responder`` picks one per request).

Messages (Anthropic): ``message_start``, then per content block ``content_block_start``, its
deltas (``thinking_delta`` + ``signature_delta``, ``citations_delta`` + ``text_delta``,
``input_json_delta``) and ``content_block_stop``, then ``message_delta`` (stop reason, usage) and
``message_stop``. A validation error is still a plain JSON error (status 400), as upstream.

The whole event stream is one body, so the wire layer's faults apply unchanged: ``SlowBody`` is a
slow stream and ``CutBody`` a stream cut mid-event.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .errors import render_json

__all__ = ["TEXT_CHUNK", "Event", "messages_events", "render_sse", "wants_stream"]

TEXT_CHUNK = 24  # characters per text delta: several deltas per block, as a real stream has
Event = tuple[str, dict[str, Any]]


def render_sse(events: Iterable[Event]) -> bytes:
    return b"".join(b"event: " + name.encode() + b"\ndata: " + render_json(data) + b"\n\n" for name, data in events)


def _pieces(text: str) -> list[str]:
    return [text[i : i + TEXT_CHUNK] for i in range(0, len(text), TEXT_CHUNK)] or [""]


def _delta(index: int, delta: dict[str, Any]) -> Event:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}


def _block_events(index: int, block: dict[str, Any]) -> list[Event]:
    kind = block.get("type")
    events: list[Event] = []
    if kind == "thinking":
        start: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
        events += [_delta(index, {"type": "thinking_delta", "thinking": p}) for p in _pieces(block["thinking"])]
        events.append(_delta(index, {"type": "signature_delta", "signature": block["signature"]}))
    elif kind == "text":
        start = {"type": "text", "text": ""}
        events += [_delta(index, {"type": "citations_delta", "citation": c}) for c in block.get("citations") or []]
        events += [_delta(index, {"type": "text_delta", "text": p}) for p in _pieces(block["text"])]
    elif kind in ("server_tool_use", "tool_use"):
        start = {**block, "input": {}}
        partial = json.dumps(block.get("input", {}), ensure_ascii=False, separators=(",", ":"))
        events.append(_delta(index, {"type": "input_json_delta", "partial_json": partial}))
    else:  # web_search_tool_result and anything else: whole in the start event
        start = block
    return [
        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
        *events,
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


def messages_events(answer: dict[str, Any]) -> list[Event]:
    usage = answer["usage"]
    opening = {**answer, "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {**usage, "output_tokens": 1}}
    events: list[Event] = [("message_start", {"type": "message_start", "message": opening})]
    for index, block in enumerate(answer["content"]):
        events += _block_events(index, block)
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": answer["stop_reason"], "stop_sequence": answer["stop_sequence"]},
                "usage": usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def wants_stream(body: bytes) -> bool:
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(request, dict) and request.get("stream") is True
