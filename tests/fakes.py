"""Scriptable in-memory providers for seam and tool tests.

A fake's behaviour is an async handler, so a test can order events exactly
(gates and events, never sleeps).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from dsweb_ref import (
    CallContext,
    FetchBody,
    FetchRequest,
    FetchResult,
    SearchRequest,
    SearchResult,
    Source,
)

SearchHandler = Callable[[SearchRequest, CallContext], Awaitable[SearchResult]]


def sources(*urls: str) -> tuple[Source, ...]:
    return tuple(Source(url=u) for u in urls)


def result(*urls: str, content: str | None = None, truncated: bool = False) -> SearchResult:
    return SearchResult(sources=sources(*urls), content=content, truncated=truncated)


@dataclass
class FakeSearch:
    id: str = "fake"
    is_available: bool = True
    handler: SearchHandler | None = None
    canned: dict[str, SearchResult] = field(default_factory=dict)
    calls: list[SearchRequest] = field(default_factory=list)
    contexts: list[CallContext] = field(default_factory=list)

    def available(self) -> bool:
        return self.is_available

    async def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult:
        self.calls.append(request)
        self.contexts.append(ctx)
        if self.handler is not None:
            return await self.handler(request, ctx)
        return self.canned.get(request.query, SearchResult())


@dataclass
class FakeFetch:
    id: str = "fake-fetch"
    is_available: bool = True
    calls: list[FetchRequest] = field(default_factory=list)

    def available(self) -> bool:
        return self.is_available

    async def fetch(self, request: FetchRequest, ctx: CallContext) -> FetchResult:
        self.calls.append(request)
        return FetchResult(url=request.url, status_code=200, body=FetchBody("text", "hello"))
