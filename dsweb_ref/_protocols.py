"""What a provider must look like to plug into the seam."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ._context import CallContext
from ._types import FetchRequest, FetchResult, SearchRequest, SearchResult

__all__ = [
    "FetchProvider",
    "SearchProvider",
    "StandaloneAnswer",
    "StandaloneSearchBackend",
    "StandaloneSource",
    "StandaloneUsage",
]


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


# -- seed 003: the standalone model-backed search ------------------------------------------------
# A different consumer from the seed-000 ``SearchProvider``: one model request per query carrying
# only the query and the backend's native search tool. The backend reports facts (what the model
# wrote, which structured sources the native search returned, whether a native search completed,
# what it cost); the consuming tool decides what is an error and bounds what the model sees.


@dataclass(frozen=True, slots=True)
class StandaloneUsage:
    """What one standalone search request cost; reported under the ``web-search`` source."""

    input_tokens: int = 0
    output_tokens: int = 0
    http_requests: int = 1
    web_search_requests: int = 0
    # Seed 003: usage belongs to the connection and model the search actually used (never the main
    # conversation's model); the tool stamps both from the route it was built for.
    connection: str = ""
    model: str = ""

    def to_json(self) -> dict[str, int | str]:
        return {
            "source": "web-search",
            "connection": self.connection,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "http_requests": self.http_requests,
            "web_search_requests": self.web_search_requests,
        }


@dataclass(frozen=True, slots=True)
class StandaloneSource:
    url: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class StandaloneAnswer:
    """``summary`` is the model's answer text only (no reasoning, no encrypted or replay items);
    ``sources`` are the native search's structured sources in the backend's order, unfiltered;
    ``searched`` is true only when a native search *completed* (a started call is not enough);
    ``failure`` is set when the answer reports an error in band (its usage still counts, so the
    backend returns the answer and the tool raises after reporting the usage)."""

    summary: str
    sources: tuple[StandaloneSource, ...]
    searched: bool
    usage: StandaloneUsage = field(default_factory=StandaloneUsage)
    failure: str | None = None


@runtime_checkable
class StandaloneSearchBackend(Protocol):
    """One model request per call. ``max_tokens`` is the output budget sent as the request's
    limit; ``timeout_s`` bounds the whole exchange. Must not follow redirects and must let
    asyncio cancellation through promptly."""

    @property
    def id(self) -> str: ...

    async def standalone_search(
        self, query: str, ctx: CallContext, *, max_tokens: int, timeout_s: float
    ) -> StandaloneAnswer: ...
