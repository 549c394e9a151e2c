"""A scripted standalone backend: records every call and answers what the test says."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
from dataclasses import dataclass, field
from typing import Any

from dsweb_ref._context import CallContext
from dsweb_ref._protocols import StandaloneAnswer, StandaloneSource, StandaloneUsage

# The SDKs' HTTP stack (httpx, or its httpx2 fork in newer releases) reports a cut body itself.
TRANSPORT_ERRORS: tuple[type[Exception], ...] = tuple(
    importlib.import_module(name).TransportError for name in ("httpx", "httpx2") if importlib.util.find_spec(name)
)


@dataclass
class Call:
    query: str
    max_tokens: int
    timeout_s: float


@dataclass
class ScriptedBackend:
    answer: StandaloneAnswer | None = None
    error: BaseException | None = None
    hold: asyncio.Event | None = None
    calls: list[Call] = field(default_factory=list)
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    id: str = "scripted"

    async def standalone_search(
        self, query: str, ctx: CallContext, *, max_tokens: int, timeout_s: float
    ) -> StandaloneAnswer:
        self.calls.append(Call(query, max_tokens, timeout_s))
        self.entered.set()
        if self.hold is not None:
            await self.hold.wait()
        if self.error is not None:
            raise self.error
        assert self.answer is not None
        return self.answer


def answer(
    summary: str = "A summary.",
    sources: list[tuple[str, str]] | None = None,
    *,
    searched: bool = True,
    usage: StandaloneUsage | None = None,
) -> StandaloneAnswer:
    pairs = [("https://a.test/", "A")] if sources is None else sources
    return StandaloneAnswer(
        summary=summary,
        sources=tuple(StandaloneSource(url, title) for url, title in pairs),
        searched=searched,
        usage=usage or StandaloneUsage(input_tokens=10, output_tokens=20, http_requests=1, web_search_requests=1),
    )


def without(value: Any, keys: set[str]) -> Any:
    """``value`` with every mapping key in ``keys`` removed at any depth (ids and hashes of the
    request body, which differ between a plain and a streamed request)."""
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without(v, keys) for v in value]
    return value
