"""Deterministic ranking over the built-in corpus, with a simple reading of the Search API operators.

Honoured operators (all others are read as plain words):

* ``site:host`` keeps documents on that host or its subdomains; several ``site:`` terms are ORed.
* ``-site:host`` drops documents on that host.
* ``"exact phrase"`` must occur (case- and accent-insensitive); ``-"phrase"`` and ``-word`` must not.
* ``lang:zh`` / ``lang:en,zh`` keeps documents in those languages.
* ``after:YYYY[-MM[-DD]]`` / ``before:…`` compare the document's local date; undated documents are dropped
  when either is present. Unparseable dates are ignored.
* ``OR`` / ``AND`` are ignored: plain words already match any-of and rank by how many match.

A document matches when it passes every filter and contains at least one word or phrase of the
query; a query made only of filters lists every document that passes them. Stop words alone match
nothing, so such queries give ``results: []``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cache

from .corpus import DOCUMENTS, Document

__all__ = ["Hit", "ParsedQuery", "parse_query", "search"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_RUN = re.compile(f"([{_CJK}]+)")
_WORD = re.compile(r"[^\W_]+")
_TOKEN = re.compile(r'-?(?:[A-Za-z]+:)?"[^"]*"?|\S+')
_STOP_WORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it me my of on or the this to was what when "
    "where which who why will with you your".split()
)


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    words: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    excluded_words: frozenset[str] = frozenset()
    excluded_phrases: tuple[str, ...] = ()
    sites: tuple[str, ...] = ()
    excluded_sites: tuple[str, ...] = ()
    langs: frozenset[str] = frozenset()
    after: date | None = None
    before: date | None = None

    @property
    def has_filters(self) -> bool:
        return bool(self.sites or self.langs or self.after or self.before)


@dataclass(frozen=True, slots=True)
class Hit:
    document: Document
    rerank_score: float
    matched: tuple[str, ...] = field(default=())


def fold(text: str) -> str:
    """Compare text the way the ranking does: NFKC, accents stripped, case-folded, spaces collapsed."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(unicodedata.normalize("NFC", stripped).casefold().split())


def words_of(text: str) -> list[str]:
    """Word tokens: Latin words lightly stemmed, CJK runs split into bigrams (they have no spaces)."""
    tokens: list[str] = []
    for raw in _WORD.findall(_CJK_RUN.sub(r" \1 ", fold(text))):
        if _CJK_RUN.fullmatch(raw):
            tokens.extend([raw] if len(raw) == 1 else [raw[i : i + 2] for i in range(len(raw) - 1)])
        else:
            tokens.append(_stem(raw))
    return tokens


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _parse_date(value: str) -> date | None:
    """The first day of ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``: after: keeps that day on, before: stops short of it."""
    for fmt in ("%Y-%m-%d", "%Y-%m", "%Y"):
        try:
            return datetime.strptime(value, fmt).date()
        except ValueError:
            continue
    return None


def parse_query(query: str) -> ParsedQuery:
    words: list[str] = []
    phrases: list[str] = []
    excluded_words: set[str] = set()
    excluded_phrases: list[str] = []
    sites: list[str] = []
    excluded_sites: list[str] = []
    langs: set[str] = set()
    after: date | None = None
    before: date | None = None
    for token in _TOKEN.findall(query):
        negated = token.startswith("-") and len(token) > 1
        body = token[1:] if negated else token
        key, sep, value = body.partition(":")
        key = key.casefold()
        if body.startswith('"'):
            phrase = fold(body.strip('"'))
            if phrase:
                (excluded_phrases if negated else phrases).append(phrase)
        elif sep and key == "site" and value:
            (excluded_sites if negated else sites).append(value.casefold().strip("."))
        elif sep and key == "lang" and value and not negated:
            langs.update(part.strip().casefold() for part in value.split(",") if part.strip())
        elif sep and key in ("after", "before") and not negated:
            parsed = _parse_date(value)
            if parsed is not None and key == "after":
                after = parsed
            elif parsed is not None:
                before = parsed
        elif token in ("OR", "AND"):
            continue
        elif negated:
            excluded_words.update(words_of(body))
        else:
            words.extend(w for w in words_of(token) if w not in _STOP_WORDS and w not in words)
    return ParsedQuery(
        words=tuple(words),
        phrases=tuple(phrases),
        excluded_words=frozenset(excluded_words),
        excluded_phrases=tuple(excluded_phrases),
        sites=tuple(sites),
        excluded_sites=tuple(excluded_sites),
        langs=frozenset(langs),
        after=after,
        before=before,
    )


@cache
def _index(document: Document) -> tuple[frozenset[str], frozenset[str], str]:
    title = frozenset(words_of(document.title))
    text = " ".join([document.title, document.snippet, *document.body])
    return title, frozenset(words_of(text)) | title, fold(text)


def _on_site(host: str, site: str) -> bool:
    return host == site or host.endswith("." + site)


def _passes_filters(document: Document, query: ParsedQuery) -> bool:
    host = document.host
    if query.sites and not any(_on_site(host, s) for s in query.sites):
        return False
    if any(_on_site(host, s) for s in query.excluded_sites):
        return False
    if query.langs and document.lang not in query.langs:
        return False
    if query.after or query.before:
        if document.date is None:
            return False
        day = datetime.fromisoformat(document.date).date()
        if (query.after and day < query.after) or (query.before and day >= query.before):
            return False
    _, words, text = _index(document)
    if words & query.excluded_words or any(p in text for p in query.excluded_phrases):
        return False
    return all(p in text for p in query.phrases)


def _score(document: Document, query: ParsedQuery) -> Hit | None:
    title_words, words, _ = _index(document)
    terms = len(query.words) + len(query.phrases)
    matched = tuple(w for w in query.words if w in words) + query.phrases
    if terms and not matched:
        return None
    if not terms and not query.has_filters:
        return None
    if terms:
        weight = sum(2 if w in title_words else 1 for w in matched if w in words) + 2 * len(query.phrases)
        relevance = weight / (2 * terms)
    else:
        relevance = 0.5
    score = round(min(3.0, document.quality + 1.5 * relevance), 3)
    return Hit(document=document, rerank_score=score, matched=matched)


def search(query: str, count: int, documents: Iterable[Document] = DOCUMENTS) -> list[Hit]:
    """The ranked hits for ``query``: best rerank score first, then higher authority, then URL."""
    parsed = parse_query(query)
    hits = [
        hit
        for document in documents
        if document.indexed and _passes_filters(document, parsed)
        for hit in [_score(document, parsed)]
        if hit is not None
    ]
    hits.sort(key=lambda h: (-h.rerank_score, -h.document.authority, h.document.url))
    return hits[:count]
