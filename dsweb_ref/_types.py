"""Provider-neutral values that cross the seam.

Single-query by design (seed 000): a search request carries one query; any
batching belongs to the tool that consumes the seam. Values are immutable so a
result handed to several consumers cannot be changed under them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

__all__ = [
    "BodyKind",
    "FetchBody",
    "FetchRequest",
    "FetchResult",
    "JSONValue",
    "SearchRequest",
    "SearchResult",
    "Source",
]

JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
# Closed: raw HTML, or any other text (plain, Markdown). Seed 001 maps the Fetch API's Markdown onto
# this unchanged shape, so Markdown is "text", not a third kind.
BodyKind = Literal["html", "text"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    max_results: int | None = None


@dataclass(frozen=True, slots=True)
class Source:
    url: str
    title: str | None = None
    snippet: str | None = None
    published_at: str | None = None
    # Provider-specific facts kept for later use (e.g. the Search API's summary,
    # rerank_score, authority, site_name). Never rendered to the model as is.
    # Excluded from hashing: a mapping has no hash, and url/title/snippet identify a source.
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, hash=False)

    def __post_init__(self) -> None:
        # A private deep copy behind a read-only view: "frozen" must hold for the caller's dict too.
        if self.metadata is not _EMPTY:
            frozen = MappingProxyType(copy.deepcopy(dict(self.metadata))) if self.metadata else _EMPTY
            object.__setattr__(self, "metadata", frozen)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"url": self.url}
        if self.title is not None:
            out["title"] = self.title
        if self.snippet is not None:
            out["snippet"] = self.snippet
        if self.published_at is not None:
            out["published_at"] = self.published_at
        if self.metadata:
            out["metadata"] = copy.deepcopy(dict(self.metadata))
        return out


@dataclass(frozen=True, slots=True)
class SearchResult:
    sources: tuple[Source, ...] = ()
    content: str | None = None
    truncated: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.sources, Sequence) and not isinstance(self.sources, (tuple, str, bytes)):
            object.__setattr__(self, "sources", tuple(self.sources))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.content is not None:
            out["content"] = self.content
        out["sources"] = [s.to_json() for s in self.sources]
        out["truncated"] = self.truncated
        return out


@dataclass(frozen=True, slots=True)
class FetchRequest:
    url: str


@dataclass(frozen=True, slots=True)
class FetchBody:
    kind: BodyKind
    content: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "content": self.content}


@dataclass(frozen=True, slots=True)
class FetchResult:
    url: str
    status_code: int
    body: FetchBody
    truncated: bool = False
    # No title: seed 001 keeps the shared fetch result unchanged, and it has no title field.

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "status_code": self.status_code,
            "body": self.body.to_json(),
            "truncated": self.truncated,
        }
