"""Merge per-query search results into one (seed 000, SRCH-20..25).

Pure and deterministic: results are indexed by query position, never by
completion order, so the same inputs always give the same value.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._types import SearchResult, Source
from ._result import visible

__all__ = ["merge_results"]


def merge_results(queries: Sequence[str], results: Sequence[SearchResult], max_results: int) -> SearchResult:
    """Round-robin by rank (rank r of every query, in query order, before rank r+1),
    dedup by exact URL (first occurrence wins), cap at ``max_results``.

    ``truncated`` is any per-query ``truncated`` or a unique source dropped by the
    cap; filling the cap exactly with nothing left over is not truncation.
    """
    if len(queries) != len(results):
        raise ValueError("one result per query is required")
    merged: list[Source] = []
    seen: set[str] = set()
    dropped = False
    deepest = max((len(r.sources) for r in results), default=0)
    for rank in range(deepest):
        for result in results:
            if rank >= len(result.sources):
                continue
            source = result.sources[rank]
            if source.url in seen:
                continue
            if len(merged) >= max_results:
                dropped = True
                break
            seen.add(source.url)
            merged.append(source)
        if dropped:
            break
    answers = [f"### {visible(q)}\n\n{r.content}" for q, r in zip(queries, results, strict=True) if r.content]
    return SearchResult(
        sources=tuple(merged),
        content="\n\n".join(answers) if answers else None,
        truncated=dropped or any(r.truncated for r in results),
    )
