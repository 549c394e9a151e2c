"""Seed 000's merge, restated for the oracles apart from the reference's ``tools/_merge.py``.

An expected value computed by the code under test moves with it: a wrong merge made in the reference (a mutant,
or an in-place reading a hunt tries) agreed with itself, and an outside hunt saw three such merges certified.
Seed 000: rank r of every query, in query order, before rank r+1; a URL kept once, as its first occurrence;
the combined sources capped at searchMaxResults; each provider answer labelled with its query. As the checks
read the rest: ``truncated`` when the cap dropped a source or any query's own result was truncated, and the
label a ``### <query>`` line."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import zip_longest

from .._types import SearchResult, Source

__all__ = ["merge_by_seed"]


def _printable(query: str) -> str:
    # a lone surrogate cannot be UTF-8 encoded; the model receives U+FFFD in its place
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in query)


def merge_by_seed(
    queries: Sequence[str], results: Sequence[SearchResult], cap: int, key: Callable[[str], str] = str
) -> SearchResult:
    """``queries``' ``results`` merged; two URLs with one ``key`` are one URL (the first spelling kept)."""
    if len(queries) != len(results):
        raise ValueError("one result per query")
    tiers = zip_longest(*(result.sources for result in results))
    first: dict[str, Source] = {}
    for source in (s for tier in tiers for s in tier if s is not None):
        first.setdefault(key(source.url), source)
    unique = list(first.values())
    answers = [f"### {_printable(q)}\n\n{r.content}" for q, r in zip(queries, results, strict=True) if r.content]
    return SearchResult(
        sources=tuple(unique[:cap]),
        content="\n\n".join(answers) or None,
        truncated=len(unique) > cap or any(r.truncated for r in results),
    )
