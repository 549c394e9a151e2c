"""In-memory search and fetch providers for the evidence pipeline tests.

Pages are looked up by URL; a page may be a FetchResult, a WebError (the fetch fails) or an
async handler (to order events with gates). Searches answer from a table by query.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from dsweb_ref import (
    CallContext,
    FetchBody,
    FetchRequest,
    FetchResult,
    SearchRequest,
    SearchResult,
    Source,
    WebError,
    WebService,
)
from dsweb_ref.tools.evidence_search import EvidenceSearchTool, EvidenceSettings

Page = FetchResult | WebError | Callable[[], Awaitable[FetchResult]]


def html(url: str, markup: str) -> FetchResult:
    return FetchResult(url=url, status_code=200, body=FetchBody("html", markup))


def src(url: str, title: str = "", snippet: str = "", **metadata: str) -> Source:
    return Source(url=url, title=title or None, snippet=snippet or None, metadata=metadata)


@dataclass
class TableSearch:
    answers: Mapping[str, tuple[Source, ...] | WebError]
    id: str = "table-search"
    calls: list[str] = field(default_factory=list)

    def available(self) -> bool:
        return True

    async def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult:
        self.calls.append(request.query)
        answer = self.answers.get(request.query, ())
        if isinstance(answer, WebError):
            raise answer
        return SearchResult(sources=answer)


@dataclass
class TableFetch:
    pages: Mapping[str, Page]
    id: str = "table-fetch"
    calls: list[str] = field(default_factory=list)

    def available(self) -> bool:
        return True

    async def fetch(self, request: FetchRequest, ctx: CallContext) -> FetchResult:
        self.calls.append(request.url)
        page = self.pages.get(request.url)
        if page is None:
            return FetchResult(url=request.url, status_code=404, body=FetchBody("text", "not found"))
        if isinstance(page, WebError):
            raise page
        if isinstance(page, FetchResult):
            return page
        return await page()


def evidence_tool(
    search: TableSearch, fetch: TableFetch, settings: EvidenceSettings | None = None
) -> EvidenceSearchTool:
    web = WebService()
    web.register_search(search)
    web.register_fetch(fetch)
    return EvidenceSearchTool(web, settings)
