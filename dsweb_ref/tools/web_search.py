"""The model-facing ``web_search`` tool (seed 000).

One required ``queries`` array. Validation happens before any provider call, in
this order: empty array, too many items (counted before dedup), a blank item.
Exact duplicates are then dropped keeping first positions. One distinct query
returns the provider's result as is; several run concurrently through the seam
and merge. The tool never talks to a provider directly.

What the model sees per source is a deployment setting (seed 001's remaining list): the snippet
(default, as shipped) or the Search API's summary under a per-source and a total character budget
(``_summary.py``); the structured value keeps the snippet and the whole summary either way, and in
summary mode records per source the summary as the model saw it. When the Search API searches, the
description and the prompt guidance name the query operators it documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .._context import CallContext
from .._exceptions import WebError, WebErrorCode
from .._service import WebService
from .._types import SearchRequest, SearchResult
from .._validate import is_int_at_least
from ._batch import run_all_or_nothing
from ._merge import merge_results
from ._render import DEFAULT_MAX_OUTPUT_CHARS, render_search
from ._result import ToolResult, error_result
from ._summary import budget_summaries

__all__ = ["MODEL_TEXTS", "SEARCH_OPERATORS_HINT", "SearchToolSettings", "WebSearchTool", "parse_queries"]

ModelText = Literal["snippet", "summary"]
MODEL_TEXTS: tuple[ModelText, ...] = ("snippet", "summary")
# The Search API's documented operators (seed 001: site, language, date, exclusion and exact phrase;
# the syntax is the one "Upstream wire facts" in the README lists). Named only when that API searches:
# Messages search does not document them.
SEARCH_OPERATORS_HINT = (
    'Search operators: site:example.com, lang:en, after:2025-01-01, before:2025-06-30, '
    '-word or -site:example.com (exclude), "exact phrase".'
)


def _positive_int(name: str, value: object) -> int:
    if not is_int_at_least(value):
        raise WebError(WebErrorCode.CONFIG_INVALID, f"{name} must be a positive integer, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class SearchToolSettings:
    """Deployment settings; validated at construction."""

    search_max_queries: int = 4
    search_max_results: int = 8
    fetch_enabled: bool = True
    search_max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS  # model-visible text, errors included
    # What the model sees per source: the snippet (seed 001 as shipped) or the budgeted summary (_summary.py).
    model_text: ModelText = "snippet"
    summary_max_chars: int = 1000  # per source, marker included
    summary_total_chars: int = 4000  # over every source of one call
    # The selected search provider documents query operators (the Search API): say so to the model.
    search_operators: bool = False

    def __post_init__(self) -> None:
        _positive_int("searchMaxQueries", self.search_max_queries)
        _positive_int("searchMaxResults", self.search_max_results)
        _positive_int("searchMaxOutputChars", self.search_max_output_chars)
        _positive_int("searchSummaryMaxChars", self.summary_max_chars)
        _positive_int("searchSummaryTotalChars", self.summary_total_chars)
        if self.model_text not in MODEL_TEXTS:
            raise WebError(
                WebErrorCode.CONFIG_INVALID, f'searchModelText must be "snippet" or "summary", got {self.model_text!r}'
            )
        for name in ("fetch_enabled", "search_operators"):
            if not isinstance(getattr(self, name), bool):
                raise WebError(WebErrorCode.CONFIG_INVALID, f"{name} must be a boolean")


def _invalid(message: str) -> WebError:
    return WebError(WebErrorCode.INVALID_ARGUMENTS, message)


def parse_queries(arguments: object, max_queries: int) -> list[str]:
    """Validate tool arguments and return the distinct queries in first-seen order."""
    if not isinstance(arguments, dict):
        raise _invalid('invalid arguments: "arguments" must be an object')
    if "queries" not in arguments:
        raise _invalid('invalid arguments: missing required property "queries"')
    queries = arguments["queries"]
    if not isinstance(queries, list):
        raise _invalid('invalid arguments: "queries" must be an array')
    # The count comes first (seed 000: an oversized array is refused before anything else).
    if not queries:
        raise _invalid("queries must contain at least one query")
    if len(queries) > max_queries:
        noun = "query" if max_queries == 1 else "queries"
        raise _invalid(f"queries must contain at most {max_queries} {noun}")
    for i, q in enumerate(queries):
        if not isinstance(q, str):
            raise _invalid(f'invalid arguments: "queries[{i}]" must be a string')
    if any(not q.strip() for q in queries):
        raise _invalid("each query must be a non-empty string")
    # No trimming or case folding: only exact duplicates are the same search.
    return list(dict.fromkeys(queries))


class WebSearchTool:
    name = "web_search"

    def __init__(self, web: WebService, settings: SearchToolSettings | None = None) -> None:
        self.web = web
        self.settings = settings or SearchToolSettings()

    @property
    def description(self) -> str:
        s = self.settings
        return (
            "Search the web for current information. "
            f"Provide 1-{s.search_max_queries} distinct queries in the required queries array; "
            "several queries run concurrently and their sources are merged "
            f"(at most {s.search_max_results} sources). "
            "Returns an optional answer and a list of source URLs."
        ) + (" " + SEARCH_OPERATORS_HINT if s.search_operators else "")

    @property
    def input_schema(self) -> dict[str, Any]:
        n = self.settings.search_max_queries
        return {
            "type": "object",
            "required": ["queries"],
            "properties": {
                "queries": {
                    "type": "array",
                    "description": f"Required search queries; accepts 1-{n} items and merges their results.",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "maxItems": n,
                }
            },
        }

    @property
    def system_prompt(self) -> str:
        s = self.settings
        text = (
            "Use the web_search tool to find current information on the web. "
            f"The required queries array takes 1-{s.search_max_queries} non-empty queries; "
            "use a one-item array for a single search and several items for different angles of one question. "
            f"Results merge into at most {s.search_max_results} sources. "
        )
        if s.search_operators:
            text += SEARCH_OPERATORS_HINT + " "
        if s.fetch_enabled:
            return text + (
                "Follow up with web_fetch when you need the full content of a specific result, "
                "and cite the relevant URLs as markdown links."
            )
        return text + "Use the returned source snippets when available, and cite the relevant URLs as markdown links."

    async def run(self, arguments: object, ctx: CallContext | None = None) -> SearchResult:
        """The structured result, or a ``WebError``. Cancellation propagates after quiescence."""
        queries = parse_queries(arguments, self.settings.search_max_queries)
        ctx = ctx or CallContext()
        cap = self.settings.search_max_results
        if len(queries) == 1:
            return await self.web.search(SearchRequest(queries[0], cap), ctx)
        results = await run_all_or_nothing([self.web.search(SearchRequest(q, cap), ctx) for q in queries])
        return merge_results(queries, results, cap)

    async def execute(self, arguments: object, ctx: CallContext | None = None) -> ToolResult:
        """Model-visible text plus the structured value; errors become ``Error: ...`` with the code kept."""
        try:
            result = await self.run(arguments, ctx)
        except WebError as error:
            return error_result(error, self.settings.search_max_output_chars)
        return self.present(result)

    def present(self, result: SearchResult) -> ToolResult:
        """A result as the model sees it (snippet or summary mode) with its structured value."""
        s = self.settings
        if s.model_text == "snippet":
            return ToolResult(text=render_search(result, s.search_max_output_chars), value=result.to_json())
        view = budget_summaries(result.sources, s.summary_max_chars, s.summary_total_chars)
        text = render_search(result, s.search_max_output_chars, view.shown)
        value = result.to_json()
        # The value keeps the snippet and the whole summary as served, and records what the model saw.
        for source, shown in zip(value["sources"], view.shown, strict=True):
            if shown is not None:
                source["summary_shown"] = shown
        value["truncated"] = result.truncated or view.cut
        return ToolResult(text=text, value=value)
