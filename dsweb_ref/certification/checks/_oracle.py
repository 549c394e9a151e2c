"""Expected values computed from what the emulator actually answered, so merge checks do not depend
on corpus details: per-query answers are read back from the request log and merged by seed 000's
merge restated apart from the reference (:func:`~dsweb_ref.certification.seed_merge.merge_by_seed`). The
mapping of
a provider body to sources is still the reference's (``map_results``, ``map_sources``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..._types import SearchResult
from ...emulator import RequestRecord
from ...providers.deepseek_official import map_sources
from ...providers.deepseek_search_api import map_results
from ..seed_merge import merge_by_seed
from ._base import CheckFailed

__all__ = [
    "expected_merge", "observed", "offered_urls", "query_match", "query_of", "source_tuples", "source_urls",
]


def _messages_text(body: Any) -> str:
    try:
        content = body["messages"][-1]["content"]
        if isinstance(content, str):
            return content
        return " ".join(block.get("text", "") for block in content if isinstance(block, dict))
    except (KeyError, IndexError, TypeError):
        return ""


def query_of(record: RequestRecord, queries: Sequence[str]) -> str | None:
    """Which of ``queries`` this upstream request searched for (Search API field or Messages prompt)."""
    body = record.json
    if record.route == "search":
        q = body.get("query") if isinstance(body, dict) else None
        return q if q in queries else None
    return _prompt_query(_messages_text(body), queries)


_QUOTES = (('"', '"'), ("'", "'"), ("\u201c", "\u201d"), ("\u300c", "\u300d"), ("\u00ab", "\u00bb"), ("`", "`"))


def _prompt_query(text: str, queries: Sequence[str]) -> str | None:
    # A Messages prompt wraps the query in prose; the longest query it ends with is the one (exactly,
    # so " coffee " and "coffee" stay apart; then ignoring the prompt's own trailing whitespace). The wording
    # is open, so a query in quotes, or on the prompt's first line with an instruction below, is found too;
    # only where the quotes or the line end delimit it, so "coffee" is never found inside "coffee beans" or
    # in the prose of another query's prompt.
    matches = [q for q in queries if text.endswith(q)] or [q for q in queries if text.strip().endswith(q)]
    if not matches:
        matches = [q for q in queries if any(f"{a}{q}{b}" in text for a, b in _QUOTES)]
    if not matches:
        matches = [q for q in queries if text.startswith(q + "\n")]
    return max(matches, key=len) if matches else None


def query_match(route: str, query: str) -> Callable[[Any], bool]:
    """An emulator fault predicate selecting the upstream request of ``query``."""

    def match(body: Any) -> bool:
        if route == "search":
            return isinstance(body, dict) and body.get("query") == query
        return _prompt_query(_messages_text(body), [query]) is not None

    return match


def observed(
    records: Sequence[RequestRecord], queries: Sequence[str], cap: int | None = None
) -> dict[str, SearchResult]:
    """Each query's provider result as the emulator served it; with ``cap``, cut to the request's
    result bound (``truncated`` when sources were cut), as every search request carries the cap."""
    out: dict[str, SearchResult] = {}
    for record in records:
        query = query_of(record, queries)
        if query is None or record.status != 200:
            continue
        data = json.loads(record.response_body)
        sources = map_results(data) if record.route == "search" else map_sources(data)
        cut = cap is not None and len(sources) > cap
        out[query] = SearchResult(sources=sources[:cap] if cut else sources, truncated=cut)
    return out


def offered_urls(records: Sequence[RequestRecord], queries: Sequence[str]) -> dict[str, set[str]]:
    """The result URLs the Search API answered each of ``queries`` with (what the target asked for)."""
    offered: dict[str, set[str]] = {}
    for record in records:
        query = query_of(record, queries)
        if record.status != 200 or query is None:
            continue
        try:
            data = json.loads(record.response_body)
        except ValueError:
            continue
        results = data.get("results", []) if isinstance(data, dict) else []
        urls = {r["url"] for r in results if isinstance(r, dict) and isinstance(r.get("url"), str)}
        offered.setdefault(query, set()).update(urls)
    return offered


def expected_merge(records: Sequence[RequestRecord], queries: Sequence[str], cap: int) -> SearchResult:
    """The value seed 000 gives for ``queries``: one distinct query is its (capped) provider result,
    several are merged round-robin with URL dedup and the cap."""
    distinct = list(dict.fromkeys(queries))
    answers = observed(records, distinct, cap)
    missing = [q for q in distinct if q not in answers]
    if missing:
        raise CheckFailed(f"no successful upstream request seen for queries {missing}")
    if len(distinct) == 1:
        return answers[distinct[0]]
    return merge_by_seed(distinct, [answers[q] for q in distinct], cap)


def source_tuples(result: SearchResult) -> list[tuple[Any, ...]]:
    return [(s.url, s.title, s.snippet, s.published_at) for s in result.sources]


def source_urls(value: dict[str, Any]) -> list[str | None]:
    sources = value.get("sources")
    if not isinstance(sources, list):
        raise CheckFailed("value has no sources list", value=value)
    return [s.get("url") if isinstance(s, dict) else None for s in sources]
