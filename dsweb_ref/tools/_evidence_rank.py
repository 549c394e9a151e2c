"""Code-only relevance ranking and source diversity for the evidence pipeline.

Ranking is BM25 (bm25s, k1 1.5, b 0.75) over each result's title, snippet and
summary, with the query's own tokens (``_evidence_text.tokenize``, so Thai and
other unspaced scripts rank by words, not whole sentences); equal scores keep the
search engine's order. Diversity counts registrable domains from the Public
Suffix List shipped inside ``publicsuffixlist`` (no download at run time).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from ipaddress import ip_address
from typing import TYPE_CHECKING

from ._evidence_text import tokenize

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList

__all__ = ["Candidate", "rank", "registrable_domain", "select_pages"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One validated search result of one query."""

    query_index: int
    rank: int  # position in the provider's answer
    url: str  # canonical form (httpx), fragment removed
    host: str
    title: str
    snippet: str
    text: str  # what ranking reads: title, snippet, summary
    score: float = field(default=0.0, compare=False)


@functools.cache
def _psl() -> PublicSuffixList:
    from publicsuffixlist import PublicSuffixList  # imported on first use, like bm25s below

    return PublicSuffixList()  # the list bundled with the package; never fetched


def registrable_domain(host: str) -> str:
    """``news.bbc.co.uk`` -> ``bbc.co.uk``; an IP literal or a bare suffix stays itself."""
    bare = host.strip("[]").rstrip(".").lower()
    try:
        ip_address(bare)
    except ValueError:
        return _psl().privatesuffix(bare) or bare
    return bare


def rank(query: str, candidates: Sequence[Candidate]) -> list[Candidate]:
    """``candidates`` by BM25 score for ``query``, best first (ties: provider order)."""
    if not candidates:
        return []
    corpus = [tokenize(c.text) for c in candidates]
    query_tokens = tokenize(query)
    scores = [0.0] * len(candidates)
    if query_tokens and any(corpus):
        # Imported here: bm25s brings numpy and scipy (a third of a second in a fresh process), which
        # nothing but evidence ranking needs; the evidence warm-up imports it ahead of the first call.
        import bm25s

        retriever = bm25s.BM25(k1=1.5, b=0.75)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # empty documents divide 0 by 0; scored 0 below
            retriever.index([doc or [""] for doc in corpus], show_progress=False)
            raw = retriever.get_scores(query_tokens)
        scores = [float(s) if s == s else 0.0 for s in raw]  # NaN -> 0
    scored = [
        Candidate(c.query_index, c.rank, c.url, c.host, c.title, c.snippet, c.text, scores[i])
        for i, c in enumerate(candidates)
    ]
    return sorted(scored, key=lambda c: (-c.score, c.rank))


def select_pages(ranked: Sequence[Sequence[Candidate]], *, max_pages: int, max_per_domain: int) -> list[Candidate]:
    """The pages to fetch, in pick order.

    First one page for every query, its best (so each query with a usable result keeps
    a source, when ``max_pages`` allows), then round robin over the queries by rank. A registrable domain holds at
    most ``max_per_domain`` picks while pages from other domains are left; only when
    none are left does it take more. A URL is picked once."""
    picked: list[Candidate] = []
    urls: set[str] = set()
    per_domain: dict[str, int] = {}

    def take(c: Candidate) -> None:
        picked.append(c)
        urls.add(c.url)
        domain = registrable_domain(c.host)
        per_domain[domain] = per_domain.get(domain, 0) + 1

    def fits(c: Candidate, relaxed: bool) -> bool:
        if c.url in urls:
            return False
        return relaxed or per_domain.get(registrable_domain(c.host), 0) < max_per_domain

    for queue in ranked:  # one page per query first (a page another query picked counts)
        if len(picked) >= max_pages or not queue or queue[0].url in urls:
            continue
        choice = next((c for c in queue if fits(c, False)), None) or next((c for c in queue if fits(c, True)), None)
        if choice is not None:
            take(choice)
    for relaxed in (False, True):
        queues = [list(q) for q in ranked]
        while len(picked) < max_pages and any(queues):
            for queue in queues:
                while queue and not fits(queue[0], relaxed):
                    queue.pop(0)
                if queue and len(picked) < max_pages:
                    take(queue.pop(0))
    return picked
