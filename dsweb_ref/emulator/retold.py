"""The ``AsAnswer`` fault: a scripted JSON answer of the Messages or Responses route, told as JSON to a
plain request and as that route's server-sent events (streaming.py, responses.py) to one asking for
``"stream": true``, so a streamed and a plain answer always carry the same content; and the bends that
spoil a stream near its end (ended early, cut mid-event, an ``error`` event), with what a failed
upstream sends a plain request instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import ApiError, default_error
from .faults import AsAnswer
from .responses import responses_events
from .streaming import Event, messages_events, render_sse

__all__ = ["Told", "error_event", "tell"]


@dataclass(frozen=True, slots=True)
class Told:
    """What to send: ``body`` with ``content_type``; with ``keep``, only its first ``keep`` bytes, then
    the connection breaks mid-body (the full length is declared)."""

    body: bytes
    content_type: str
    keep: int | None = None


def error_event(route: str) -> Event:
    """The ``error`` event an upstream tells mid-stream (an overloaded or failed server)."""
    if route == "responses":
        return "error", {"type": "error", "code": "server_error", "param": None,
                         "message": "The server had an error while processing your request."}
    return "error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def _events(route: str, answer: dict[str, Any]) -> list[Event]:
    return responses_events(answer) if route == "responses" else messages_events(answer)


def _numbered(route: str, events: list[Event]) -> list[Event]:
    """Responses events count ``sequence_number`` from 0; an inserted event moves the rest on."""
    if route != "responses":
        return events
    return [(name, {**data, "sequence_number": n}) for n, (name, data) in enumerate(events)]


def tell(route: str, fault: AsAnswer, stream: bool) -> Told | ApiError:
    """The answer ``fault`` scripts for one request to ``route`` (``stream``: it asked for a stream)."""
    if not stream or fault.ignores_stream:
        if fault.bend == "error":
            return default_error(500)
        keep = None if fault.bend is None else len(fault.body) // 2
        return Told(fault.body, "application/json", keep)
    if fault.stream is not None:
        return Told(fault.stream, "text/event-stream")
    events = _events(route, json.loads(fault.body))
    head, tail = events[: -fault.last], events[-fault.last :]
    match fault.bend:
        case "early":
            return Told(render_sse(_numbered(route, head)), "text/event-stream")
        case "error":
            return Told(render_sse(_numbered(route, [*head, error_event(route), *tail])), "text/event-stream")
        case "cut":
            keep = len(render_sse(head)) + len(render_sse(tail[:1])) // 2
            return Told(render_sse(events), "text/event-stream", keep)
    return Told(render_sse(events), "text/event-stream")
