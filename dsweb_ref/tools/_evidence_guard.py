"""What the evidence pipeline refuses before any search (seed 002).

* Local documents: web search is not a fallback for the user's files or knowledge
  base, so a query carrying a local path, a ``file:`` URL or a name the caller
  marked local is refused and nothing is sent to a search engine.
* Retries that are no retry: after ``[needs_retry]`` the agent must make the query
  more specific (subject, place, time). Queries are compared after NFKC, with format
  characters (zero-width spaces and joiners, BOM, soft hyphen) removed and case and
  whitespace folded. Refused: the same query again; a query whose words are all in
  an attempt that found nothing (less specific, or the same words reordered); and a
  retry whose only additions are numbers or names found neither in earlier evidence
  nor in the user's question (seed 002: adding facts with no evidence behind them is
  no good retry; applied when the caller passes the question). Each refusal says what
  would count as a better query.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .._exceptions import WebError, WebErrorCode

__all__ = ["EvidenceContext", "names_local", "normalized_query", "refuse_local", "refuse_repeats"]

# Bounded input (queries are length-capped); each alternative is a linear scan.
_LOCAL_PATH = re.compile(
    r"""
    \bfile:                                  # file: URLs, any spelling of the slashes
    | (?<![A-Za-z0-9])[A-Za-z]:[\\/]         # C:\\ or C:/ drive paths
    | \\\\[^\\\s]+\\                         # \\\\server\\share UNC paths
    | (?<![A-Za-z0-9_.~/\\:])(?:~|\.{1,2})[\\/]  # ~/ ./ ../ relative and home paths (after Thai or CJK too)
    | (?<![A-Za-z0-9_.~/\\:])/(?:home|users|etc|var|tmp|mnt|media|opt|root|private|volumes|srv|data)/
    | \b(?:desktop|documents|downloads)[\\/]  # Desktop/ Documents/ Downloads/
    | (?<![A-Za-z0-9_.~/\\:])~[A-Za-z_][A-Za-z0-9_.-]*[\\/][^\s\\/]*[.\\/]  # ~name/file.ext, ~name/dir/ (not ~mg/kg)
    | \$(?:env:)?\{?(?:home|userprofile)\}?[\\/](?!\.)  # $HOME/ ${HOME}/ $env:USERPROFILE\ (not $HOME/.local/bin)
    | %(?:userprofile|homepath|onedrive)%[\\/](?!\.)  # %USERPROFILE%\ profile folders (app data is no document)
    | (?<![A-Za-z0-9_.~/\\:])//[A-Za-z0-9_-]+/[^/\\\s]+/  # //server/share/: an undotted server (not //cdn.host/, //g/)
    | \b(?:smb|cifs|afp|nfs)://[^/\s]+/\S  # a network share URL naming a share (not "smb:// server")
    """,
    re.IGNORECASE | re.VERBOSE,
)
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d")
_NAME = re.compile(r"^[A-Z][a-z]")
_BETTER = (
    "A better query adds what is known to be missing: the subject's full name, the place, or the time "
    "period from the user's question or from earlier evidence."
)


def _visible(text: str, separator: str = "") -> str:
    """``text`` without format characters (BOM, soft hyphen, joiners, direction marks); a zero-width
    space, which Thai text uses between words, becomes ``separator``."""
    return "".join(
        separator if c == "\u200b" else c for c in text if c == "\u200b" or unicodedata.category(c) != "Cf"
    )


def normalized_query(query: str) -> str:
    """The form two queries are compared in: NFKC, format characters (U+200B/C/D, U+FEFF, U+00AD
    and the like) removed, casefolded, without any whitespace."""
    return _SPACE.sub("", _visible(unicodedata.normalize("NFKC", query).casefold()))


def _words(text: str) -> frozenset[str]:
    """The query's words as compared across attempts (Thai segmented into words)."""
    from ._evidence_text import tokenize  # the segmenter is loaded with the pipeline, not the guard

    return frozenset(tokenize(_visible(text, " ")))


def _facts(query: str) -> dict[str, str]:
    """The query's fact-like words (numbers, dates, capitalised names): folded word -> as written."""
    from ._evidence_text import fold

    out: dict[str, str] = {}
    for raw in re.findall(r"[^\W_]+(?:[.,:/-][^\W_]+)*", unicodedata.normalize("NFKC", query)):
        if _NUMBER.search(raw) or _NAME.match(raw):
            out[fold(raw)] = raw
    return out


@dataclass
class EvidenceContext:
    """Per-conversation state the agent layer keeps across evidence calls.

    ``local_names``: names the caller knows are local (knowledge-base documents, file
    names, project names) and that must never reach a search engine.
    ``exhausted``: normalized queries that already came back without usable evidence."""

    local_names: frozenset[str] = frozenset()
    exhausted: set[str] = field(default_factory=set)
    question: str = ""  # the user's question this search serves: a retry may take facts from it
    attempts: dict[str, frozenset[str]] = field(default_factory=dict)  # exhausted query -> its words
    evidence_text: list[str] = field(default_factory=list)  # earlier evidence lines, spaces collapsed

    def remember_empty(self, queries: Iterable[str]) -> None:
        for query in queries:
            key = normalized_query(query)
            self.exhausted.add(key)
            self.attempts.setdefault(key, _words(query))

    def remember_evidence(self, texts: Iterable[str]) -> None:
        self.evidence_text.extend(" ".join(t.split()) for t in texts)  # words kept apart: facts match whole
        del self.evidence_text[:-200]  # bounded: the newest lines are what a retry builds on


def refuse_local(queries: Sequence[str], local_names: Iterable[str]) -> None:
    """Raise ``WEB_INVALID_ARGUMENTS`` when a query names something local."""
    names = _names(local_names)
    for index, query in enumerate(queries):
        what = _local_kind(query, names)
        if what:
            raise _local(index, what)


def names_local(text: str, local_names: Iterable[str]) -> bool:
    """Whether ``text`` (the user's prompt) names something local, as a refused query would."""
    return bool(_local_kind(text, _names(local_names)))


def _names(local_names: Iterable[str]) -> list[str]:
    return [n for n in (normalized_query(name) for name in local_names) if n]


def _local_kind(text: str, names: Sequence[str]) -> str:
    if _LOCAL_PATH.search(text):
        return "a local file path or file: URL"
    folded = normalized_query(text)
    return "a name the caller marked as a local document" if any(name in folded for name in names) else ""


def _local(index: int, what: str) -> WebError:
    return WebError(
        WebErrorCode.INVALID_ARGUMENTS,
        f"query {index + 1} carries {what}; web_search is not a fallback for local files or the knowledge base. "
        "Use the local read-only document tool instead; nothing was sent to the search engine.",
    )


def refuse_repeats(queries: Sequence[str], context: EvidenceContext) -> None:
    """Raise ``WEB_INVALID_ARGUMENTS`` when a query is no real retry of one that found no evidence."""
    for index, query in enumerate(queries):
        shown = f'query {index + 1} ("{query[:200]}")'
        if normalized_query(query) in context.exhausted:
            raise _retry(
                f"{shown} repeats a query that already found no usable evidence (case, spacing and invisible "
                "characters do not make it new)."
            )
        words = _words(query)
        if _less_specific(words, context):
            raise _retry(
                f"{shown} is no more specific than an earlier query that found no usable evidence "
                "(all its words were in that query)."
            )
        added = _unsupported(query, words, context)
        if added:
            raise _retry(
                f"{shown} only adds {', '.join(added[:5])} to an earlier query that found no usable evidence, "
                "and neither the user's question nor earlier evidence says so: an invented detail is no retry."
            )


def _less_specific(words: frozenset[str], context: EvidenceContext) -> bool:
    """Every word of the retry was in one earlier attempt that found nothing (fewer or reordered)."""
    return bool(words) and any(words <= earlier for earlier in context.attempts.values())


def _unsupported(query: str, words: frozenset[str], context: EvidenceContext) -> list[str]:
    """The facts a retry adds to the earlier attempt it extends, when every word it adds is such a
    fact and none is found in the user's question or earlier evidence (else nothing)."""
    from ._evidence_text import content_tokens, fold

    extended = [earlier for earlier in context.attempts.values() if earlier and earlier < words]
    if not extended or not context.question.strip():
        # Without the user's question the tool cannot tell an invented detail from the user's own
        # words, so it accepts the retry (the caller passes the question to get this rule).
        return []
    added_words = content_tokens(words - max(extended, key=len))  # "in", "the" make no retry
    facts = _facts(query)
    texts = [context.question, *context.evidence_text]
    known_words = frozenset().union(*(_words(text) for text in texts))
    known = "\n".join(_visible(fold(text), " ") for text in texts)
    unsupported: list[str] = []
    for word in added_words:
        fact = next((raw for folded, raw in facts.items() if word in _words(folded) or word == folded), None)
        if fact is None:
            return []  # a plain word (a subject, place or time written out) makes it a real retry
        # A name may be a segmented token of the text; a number must stand whole (the tokenizer
        # splits "12,031" and "5.5", so its pieces prove nothing).
        if (not _NUMBER.search(word) and word in known_words) or _stands_alone(fold(fact), known):
            return []  # the question or the evidence supports it
        if fact not in unsupported:
            unsupported.append(fact)
    return unsupported


def _stands_alone(fact: str, text: str) -> bool:
    """``fact`` in ``text`` as a whole word or number: "2031" is not in "$12,031" or "20312", and "5"
    is not in "5.5" (a substring test supported almost any added digit)."""
    return re.search(rf"(?<![\w.,]){re.escape(fact)}(?![\w]|[.,]\d)", text) is not None


def _retry(message: str) -> WebError:
    return WebError(WebErrorCode.INVALID_ARGUMENTS, f"{message} {_BETTER}")
