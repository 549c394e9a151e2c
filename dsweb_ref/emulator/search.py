"""Deterministic ranking over the built-in corpus, with a simple reading of the Search API operators.

Honoured operators (all others are read as plain words):

* ``site:host`` keeps documents on that host or its subdomains; several ``site:`` terms are ORed.
  ``site:pages.test`` (or a host under it) searches the pages the emulator serves itself instead
  (``corpus.PAGE_DOCUMENTS``), and only such a query lists them; ``site:quality.test`` likewise
  searches the evidence quality corpus (``quality.QUALITY_DOCUMENTS``).
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
from functools import cache, lru_cache

from .corpus import DOCUMENTS, PAGE_DOCUMENTS, PAGES_SITE, Document
from .quality import QUALITY_DOCUMENTS, QUALITY_SITE

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
    if text.isascii():  # the normalisations change no ASCII character; only case and spaces remain
        return " ".join(text.casefold().split())
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(unicodedata.normalize("NFC", stripped).casefold().split())


def words_of(text: str) -> list[str]:
    """Word tokens: Latin words lightly stemmed, CJK runs split into bigrams (they have no spaces)."""
    tokens: list[str] = []
    folded = fold(text)
    if not folded.isascii():  # CJK runs are never ASCII
        folded = _CJK_RUN.sub(r" \1 ", folded)
    for raw in _WORD.findall(folded):
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


@dataclass(frozen=True, slots=True)
class _Entry:
    """What ranking needs of one document, computed once (never per request)."""

    document: Document
    host: str
    title_words: frozenset[str]
    words: frozenset[str]
    text: str  # folded title, snippet and body, for phrase matching
    day: date | None


def _entry(document: Document) -> _Entry:
    title = frozenset(words_of(document.title))
    text = " ".join([document.title, document.snippet, *document.body])
    day = datetime.fromisoformat(document.date).date() if document.date else None
    return _Entry(document, document.host, title, frozenset(words_of(text)) | title, fold(text), day)


@dataclass(frozen=True, slots=True)
class _Index:
    entries: tuple[_Entry, ...]
    postings: dict[str, tuple[int, ...]]  # word -> positions in ``entries`` of the documents holding it

    @classmethod
    def of(cls, documents: Iterable[Document]) -> _Index:
        entries = tuple(_entry(d) for d in documents if d.indexed)
        postings: dict[str, list[int]] = {}
        for position, entry in enumerate(entries):
            for word in entry.words:
                postings.setdefault(word, []).append(position)
        return cls(entries, {word: tuple(found) for word, found in postings.items()})

    def candidates(self, query: ParsedQuery) -> list[_Entry] | tuple[_Entry, ...]:
        """Every entry that may match: with only plain words, those holding at least one of them."""
        if query.phrases or not query.words:
            return self.entries
        positions = {p for word in query.words for p in self.postings.get(word, ())}
        return [self.entries[p] for p in sorted(positions)]


@cache
def _corpus_index() -> _Index:
    return _Index.of(DOCUMENTS)


@cache
def _pages_index() -> _Index:
    return _Index.of(PAGE_DOCUMENTS)


@cache
def _quality_index() -> _Index:
    return _Index.of(QUALITY_DOCUMENTS)


def _on_site(host: str, site: str) -> bool:
    return host == site or host.endswith("." + site)


def _passes_filters(entry: _Entry, query: ParsedQuery) -> bool:
    host = entry.host
    if query.sites and not any(_on_site(host, s) for s in query.sites):
        return False
    if any(_on_site(host, s) for s in query.excluded_sites):
        return False
    if query.langs and entry.document.lang not in query.langs:
        return False
    if query.after or query.before:
        day = entry.day
        if day is None:
            return False
        if (query.after and day < query.after) or (query.before and day >= query.before):
            return False
    if entry.words & query.excluded_words or any(p in entry.text for p in query.excluded_phrases):
        return False
    return all(p in entry.text for p in query.phrases)


def _score(entry: _Entry, query: ParsedQuery) -> Hit | None:
    words = entry.words
    terms = len(query.words) + len(query.phrases)
    matched = tuple(w for w in query.words if w in words) + query.phrases
    if terms and not matched:
        return None
    if not terms and not query.has_filters:
        return None
    if terms:
        weight = sum(2 if w in entry.title_words else 1 for w in matched if w in words) + 2 * len(query.phrases)
        relevance = weight / (2 * terms)
    else:
        relevance = 0.5
    document = entry.document
    score = round(min(3.0, document.quality + 1.5 * relevance), 3)
    return Hit(document=document, rerank_score=score, matched=matched)


def search(query: str, count: int, documents: Iterable[Document] = DOCUMENTS) -> list[Hit]:
    """The ranked hits for ``query``: best rerank score first, then higher authority, then URL."""
    if documents is DOCUMENTS:
        return list(_ranked_default(query)[:count])
    return _rank(query, _Index.of(documents))[:count]


@lru_cache(maxsize=1024)
def _ranked_default(query: str) -> tuple[Hit, ...]:
    # The default corpus never changes and ranking reads nothing else (no clock), so a query's ranking
    # is computed once; tests and benches repeat queries. Bounded: hostile query streams cannot grow it.
    # The served pages (corpus.PAGE_DOCUMENTS) answer only queries that name site:pages.test.
    # The evidence quality corpus (emulator/quality.py) likewise answers only site:quality.test.
    sites = parse_query(query).sites
    if any(_on_site(site, QUALITY_SITE) for site in sites):
        return tuple(_rank(query, _quality_index()))
    pages = any(_on_site(site, PAGES_SITE) for site in sites)
    return tuple(_rank(query, _pages_index() if pages else _corpus_index()))


def _rank(query: str, index: _Index) -> list[Hit]:
    parsed = parse_query(query)
    filtered = parsed.has_filters or parsed.excluded_sites or parsed.excluded_words or parsed.excluded_phrases
    hits = [
        hit
        for entry in index.candidates(parsed)
        if (not (filtered or parsed.phrases) or _passes_filters(entry, parsed))
        for hit in [_score(entry, parsed)]
        if hit is not None
    ]
    hits.sort(key=lambda h: (-h.rerank_score, -h.document.authority, h.document.url))
    return hits
