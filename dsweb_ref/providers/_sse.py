"""Streamed standalone answers (seed 003 leaves streaming open): the events of a server-sent-events
body, and a transport that hands over what arrived when the connection breaks mid-body.

A cut stream is still an answer with facts in it: the usage event may have arrived before the cut,
and seed 003 reports a search's usage to the connection and model used whatever the outcome. So a
break while reading the body ends the body where it broke (``KeepPartial.cut`` tells) instead of
losing every byte; the backend then reports the cut as a failure, with the usage it saw.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx

from ._client_pool import tls_context
from ._deepseek_http import parse_json

__all__ = ["MAX_EVENTS", "KeepPartial", "parse_events"]

MAX_EVENTS = 100_000  # with the body cap, bounds the parsed events of one hostile stream
_TOTAL_VALUES = 400_000  # JSON values over all the events of one stream


def parse_events(body: bytes) -> list[dict[str, Any]]:
    """The JSON object of every *complete* event (ended by a blank line) in ``body``; an event the
    stream was cut inside is dropped. ``[DONE]`` and comment lines are skipped; an event whose data
    is not a JSON object raises ``ValueError``."""
    text = body.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    blocks = text.split("\n\n")[:-1]  # the last piece never ended: cut, or empty
    if len(blocks) > MAX_EVENTS:
        raise ValueError(f"more than {MAX_EVENTS} events")
    events: list[dict[str, Any]] = []
    budget = _TOTAL_VALUES
    for block in blocks:
        data = "\n".join(line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:"))
        if not data or data.strip() == "[DONE]":
            continue
        raw = data.encode("utf-8")
        value = parse_json(raw, max_values=budget)
        if not isinstance(value, dict):
            raise ValueError("an event's data is not a JSON object")
        budget -= raw.count(b",") + raw.count(b":") + 1  # a cheap upper bound of the values it held
        events.append(value)
    return events


class _PartialStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, owner: KeepPartial) -> None:
        self._inner = inner
        self._owner = owner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except (httpx.RemoteProtocolError, httpx.ReadError):
            self._owner.cut = True  # the connection broke mid-body: what arrived is the body

    async def aclose(self) -> None:
        await self._inner.aclose()


class KeepPartial(httpx.AsyncBaseTransport):
    """Wraps one request's transport (the default, strict TLS one when ``inner`` is None); a body
    that breaks off ends where it broke and ``cut`` is set. Timeouts are not breaks: they still
    fail the request. Owns and closes a default inner transport only."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None) -> None:
        self._owned = inner is None
        self._inner = inner or httpx.AsyncHTTPTransport(verify=tls_context(), trust_env=False)
        self.cut = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        stream = response.stream
        if isinstance(stream, httpx.AsyncByteStream):
            response.stream = _PartialStream(stream, self)
        return response

    async def aclose(self) -> None:
        if self._owned:
            await self._inner.aclose()
