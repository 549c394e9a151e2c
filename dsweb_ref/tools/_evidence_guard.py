"""What the evidence pipeline refuses before any search (seed 002).

* Local documents: web search is not a fallback for the user's files or knowledge
  base, so a query carrying a local path, a ``file:`` URL or a name the caller
  marked local is refused and nothing is sent to a search engine.
* Repeated retries: after ``[needs_retry]`` the agent must change the query for
  real (subject, place, time); a query equal to one that already came back
  without evidence, ignoring case and whitespace, is refused.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .._exceptions import WebError, WebErrorCode

__all__ = ["EvidenceContext", "normalized_query", "refuse_local", "refuse_repeats"]

# Bounded input (queries are length-capped); each alternative is a linear scan.
_LOCAL_PATH = re.compile(
    r"""
    \bfile:                                  # file: URLs, any spelling of the slashes
    | (?<![A-Za-z0-9])[A-Za-z]:[\\/]         # C:\\ or C:/ drive paths
    | \\\\[^\\\s]+\\                         # \\\\server\\share UNC paths
    | (?:^|[\s"'(\[])(?:~|\.{1,2})[\\/]      # ~/ ./ ../ relative and home paths
    | (?:^|[\s"'(\[])/(?:home|users|etc|var|tmp|mnt|media|opt|root|private|volumes|srv|data)/
    | \b(?:desktop|documents|downloads)[\\/]  # Desktop/ Documents/ Downloads/
    """,
    re.IGNORECASE | re.VERBOSE,
)
_SPACE = re.compile(r"\s+")


def normalized_query(query: str) -> str:
    """The form two queries are compared in: NFKC, casefolded, without any whitespace."""
    return _SPACE.sub("", unicodedata.normalize("NFKC", query).casefold())


@dataclass
class EvidenceContext:
    """Per-conversation state the agent layer keeps across evidence calls.

    ``local_names``: names the caller knows are local (knowledge-base documents, file
    names, project names) and that must never reach a search engine.
    ``exhausted``: normalized queries that already came back without usable evidence."""

    local_names: frozenset[str] = frozenset()
    exhausted: set[str] = field(default_factory=set)

    def remember_empty(self, queries: Iterable[str]) -> None:
        self.exhausted.update(normalized_query(q) for q in queries)


def refuse_local(queries: Sequence[str], local_names: Iterable[str]) -> None:
    """Raise ``WEB_INVALID_ARGUMENTS`` when a query names something local."""
    names = [n for n in (normalized_query(name) for name in local_names) if n]
    for index, query in enumerate(queries):
        if _LOCAL_PATH.search(query):
            raise _local(index, "a local file path or file: URL")
        folded = normalized_query(query)
        if any(name in folded for name in names):
            raise _local(index, "a name the caller marked as a local document")


def _local(index: int, what: str) -> WebError:
    return WebError(
        WebErrorCode.INVALID_ARGUMENTS,
        f"query {index + 1} carries {what}; web_search is not a fallback for local files or the knowledge base. "
        "Use the local read-only document tool instead; nothing was sent to the search engine.",
    )


def refuse_repeats(queries: Sequence[str], context: EvidenceContext) -> None:
    """Raise ``WEB_INVALID_ARGUMENTS`` when a query repeats one that found no evidence."""
    for index, query in enumerate(queries):
        if normalized_query(query) in context.exhausted:
            raise WebError(
                WebErrorCode.INVALID_ARGUMENTS,
                f'query {index + 1} ("{query[:200]}") repeats a query that already found no usable evidence '
                "(case and spacing do not make it new). Make it more specific: add the subject's full name, "
                "the place, or the time period.",
            )
