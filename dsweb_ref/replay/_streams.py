"""The text a streamed (server-sent events) body carries across its events.

A streamed answer spreads its text over many events (``content_block_delta`` ``delta.text``,
Responses ``delta``, chat ``choices[].delta.content``). A key echoed across two of them is in no
single event, so scanning the body as stored finds nothing, while joining the deltas gives the key
back (issue 20 item 4). :func:`stream_texts` rebuilds, per field, the text a client would join.
"""

from __future__ import annotations

import json
import re

__all__ = ["looks_streamed", "stream_texts"]

_DATA_LINE = re.compile(r"^data:", re.MULTILINE)
_EVENT_END = re.compile(r"\r\n\r\n|\n\n|\r\r")


def looks_streamed(body: str) -> bool:
    """Whether ``body`` holds server-sent events (a ``data:`` line)."""
    return _DATA_LINE.search(body) is not None


def stream_texts(body: str) -> list[str]:
    """For each field path seen in the events' JSON data (list positions ignored, so deltas of any
    block or choice join), the field's string values joined in event order; and the non-JSON data
    of all events joined. Only paths that hold a string in at least two events are returned: a
    value in one event is already in the body as stored."""
    channels: dict[str, list[str]] = {}
    plain: list[str] = []
    for event in _EVENT_END.split(body):
        data = "\n".join(line[5:].removeprefix(" ") for line in event.splitlines() if line.startswith("data:"))
        if not data:
            continue
        try:
            value = json.loads(data)
        except (ValueError, RecursionError):  # not JSON, or nested past the decoder's depth: joined as text
            plain.append(data)
            continue
        for path, text in _strings(value, ""):
            channels.setdefault(path, []).append(text)
    joined = ["".join(parts) for parts in channels.values() if len(parts) > 1]
    return joined + (["".join(plain)] if len(plain) > 1 else [])


def _strings(value: object, path: str) -> list[tuple[str, str]]:
    """Every string in ``value`` with its path, in document order; iterative, since a hostile event may
    nest as deep as the decoder allows."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[object, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            found.append((where, item))
        elif isinstance(item, dict):
            stack.extend(reversed([(inner, f"{where}.{key}") for key, inner in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(inner, f"{where}[]") for inner in item]))
    return found
