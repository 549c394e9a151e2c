"""What a provider must look like to plug into the seam."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ._context import CallContext
from ._types import FetchRequest, FetchResult, SearchRequest, SearchResult

__all__ = ["FetchProvider", "SearchProvider"]


@runtime_checkable
class SearchProvider(Protocol):
    """One query in, one result out. ``available()`` is a cheap local check (no I/O);
    ``search`` must let asyncio cancellation through promptly."""

    @property
    def id(self) -> str: ...

    def available(self) -> bool: ...

    async def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult: ...


@runtime_checkable
class FetchProvider(Protocol):
    @property
    def id(self) -> str: ...

    def available(self) -> bool: ...

    async def fetch(self, request: FetchRequest, ctx: CallContext) -> FetchResult: ...
