"""Text for the evidence pipeline: tokens that work for unspaced scripts, page blocks
without boilerplate, and the short passages of a page that match a query.

Tokens: Thai is segmented into words with PyThaiNLP's dictionary tokenizer
(``newmm`` in its Rust build nlpO3, dictionary shipped in PyThaiNLP; it loads in a
fraction of the Python trie's time); Chinese, Japanese, Lao, Khmer and
Myanmar runs become overlapping character bigrams (the usual index unit when no
segmenter is at hand); everything else is NFKC-casefolded ``\\w+`` words.
Splitting on spaces alone would turn a whole Thai sentence into one token and
nothing would ever match.

All inputs are bounded by the caller; every regex here is a plain character-class
scan (linear time).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from html.parser import HTMLParser

from pythainlp.tokenize import word_tokenize

from .._types import FetchBody

__all__ = [
    "clean_text",
    "content_tokens",
    "fold",
    "page_blocks",
    "passages_for",
    "snippet_matches",
    "tokenize",
    "topic_of",
]

_THAI = "\u0e00-\u0e7f"
_UNSPACED = (
    "\u0e80-\u0eff"  # Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
)
_RUNS = re.compile(rf"(?P<thai>[{_THAI}]+)|(?P<cjk>[{_UNSPACED}]+)|(?P<word>\w+)")
_SPACES = re.compile(r"\s+")

# Words so common that matching only them says nothing about relevance.
_EN_STOP = frozenset(
    "a an and are as at be by for from how in is it of on or that the this to was what when where which who why "
    "with latest new news".split()
)


@functools.cache
def _thai_stopwords() -> frozenset[str]:
    from pythainlp.corpus import thai_stopwords

    return frozenset(thai_stopwords())


def fold(text: str) -> str:
    """NFKC and casefold, keeping Thai SARA AM whole: NFKC splits it into NIKHAHIT + SARA AA,
    which no Thai dictionary word contains (so "ทองคำ" would never match)."""
    return unicodedata.normalize("NFKC", text).casefold().replace("\u0e4d\u0e32", "\u0e33")


# A search operator the Search API documents (site, language, date) or an exclusion: it steers the
# search, it is not what the query is about. A token is one whitespace-free word, so this is linear.
_OPERATOR = re.compile(r"-\S+|(?:site|lang|after|before):\S+", re.IGNORECASE)


def topic_of(query: str) -> str:
    """``query`` without its search operators, or the query itself when it is nothing but operators.

    Ranking, passage matching and the "a heading repeating the query is no evidence" rule use the
    topic: ``site:example.com gold price`` is about "gold price", and words such as "site" or
    "example" matching a page say nothing about relevance."""
    words = [w for w in query.split() if not _OPERATOR.fullmatch(w)]
    return " ".join(words) if words else query


def tokenize(text: str) -> list[str]:
    """Index tokens of ``text`` (see the module docstring)."""
    folded = fold(text)
    tokens: list[str] = []
    for match in _RUNS.finditer(folded):
        run = match.group()
        if match.lastgroup == "thai":
            tokens.extend(w for w in word_tokenize(run, engine="nlpo3", keep_whitespace=False) if w.strip())
        elif match.lastgroup == "cjk":
            tokens.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
        else:
            tokens.append(run)
    return tokens


def content_tokens(tokens: Iterable[str]) -> set[str]:
    """The tokens that carry meaning (no stop words, no single Latin letters)."""
    stop = _EN_STOP | _thai_stopwords()
    return {t for t in tokens if t not in stop and not (len(t) == 1 and t.isascii())}


def clean_text(text: str, limit: int) -> str:
    """One line of printable text, at most ``limit`` characters (an ellipsis marks a cut)."""
    shown = "".join(c if c.isprintable() else " " for c in text[: limit * 4])
    shown = _SPACES.sub(" ", shown).strip()
    return shown if len(shown) <= limit else shown[: limit - 1].rstrip() + "…"


# Elements that are page furniture, never content.
_DROP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "iframe", "object", "embed", "canvas", "nav", "header",
     "footer", "aside", "form", "button", "select", "textarea", "menu", "dialog", "head", "title"}
)  # fmt: skip
_DROP_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"})
# Whole class or id tokens (not substrings, so "navigation-free-article" survives).
_DROP_NAMES = frozenset(
    {"nav", "navbar", "menu", "footer", "sidebar", "breadcrumb", "breadcrumbs", "cookie", "cookies",
     "cookie-banner", "advert", "ads", "share", "social", "related", "comments", "skip-link"}
)  # fmt: skip
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)
_INLINE = frozenset(
    {"a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "i", "kbd", "mark", "q", "s", "samp",
     "small", "span", "strong", "sub", "sup", "time", "u", "var", "font"}
)  # fmt: skip
_END_SEARCH = 64  # how far down the open-element stack an end tag may close; keeps bad markup linear


def _is_furniture(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    if tag in _DROP_TAGS:
        return True
    for name, value in attrs:
        if not value:
            continue
        if name == "role" and value.strip().lower() in _DROP_ROLES:
            return True
        if name in ("class", "id") and any(token.lower() in _DROP_NAMES for token in value.split()):
            return True
    return False


class _Blocks(HTMLParser):
    """One pass over the markup, no tree: text outside furniture, a break at every non-inline
    element. Deep or broken nesting costs nothing extra (no recursion, bounded end-tag search)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._open: list[tuple[str, bool]] = []  # (tag, opened a skipped region)
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _INLINE:
            self.parts.append("\n")
        if tag in _VOID:
            return
        furniture = _is_furniture(tag, attrs)
        self._open.append((tag, furniture))
        self._skipping += furniture

    def handle_endtag(self, tag: str) -> None:
        if tag not in _INLINE:
            self.parts.append("\n")
        for depth in range(1, min(len(self._open), _END_SEARCH) + 1):
            if self._open[-depth][0] == tag:
                for _ in range(depth):
                    _name, furniture = self._open.pop()
                    self._skipping -= furniture
                return

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def page_blocks(body: FetchBody) -> list[str]:
    """The text blocks of a fetched page, boilerplate removed, whitespace collapsed."""
    if body.kind != "html":
        # Plain text or Markdown (the Fetch API's form): heading, quote and bullet markers are not content.
        raw = [line.lstrip("#>*-+ \t") for line in body.content.split("\n")]
    else:
        parser = _Blocks()
        parser.feed(body.content)
        parser.close()
        raw = "".join(parser.parts).split("\n")
    blocks = (_SPACES.sub(" ", "".join(c if c.isprintable() else " " for c in b)).strip() for b in raw)
    return [b for b in blocks if b]


def _windows(block: str, size: int) -> Iterable[str]:
    # Long blocks are cut into passages near a space, so no passage is more than ``size`` characters.
    while len(block) > size:
        cut = block.rfind(" ", size // 2, size)
        cut = size if cut < 0 else cut
        yield block[:cut].strip()
        block = block[cut:].strip()
    if block:
        yield block


def snippet_matches(title: str, snippet: str, query: str) -> bool:
    """The snippet fallback's policy: the snippet holds a content token of the query, and the
    result's title and snippet together meet the passage rule (a snippet describes its title)."""
    wanted = content_tokens(tokenize(query))
    in_snippet = wanted & set(tokenize(snippet))
    together = wanted & set(tokenize(f"{title} {snippet}"))
    return bool(in_snippet) and len(together) >= (1 if len(wanted) <= 2 else 2)


def passages_for(blocks: Sequence[str], query: str, *, limit: int, size: int) -> list[str]:
    """Up to ``limit`` passages (each at most ``size`` characters) that match ``query``, best first.

    A passage matches when it holds at least one content token of the query, and two when the
    query has more than two. Scoring is per-passage token overlap weighted by rarity on the page."""
    wanted = content_tokens(tokenize(query))
    if not wanted:
        return []
    need = 1 if len(wanted) <= 2 else 2
    folded_wanted = [w for w in wanted if len(w) > 1]
    scored: list[tuple[float, int, str]] = []
    candidates: list[tuple[str, set[str]]] = []
    for block in blocks:
        folded = fold(block)
        # Cheap substring filter first: only blocks that might match are tokenized.
        if folded_wanted and not any(w in folded for w in folded_wanted):
            continue
        for piece in _windows(block, size):
            hits = wanted & set(tokenize(piece))
            if len(hits) >= need:
                candidates.append((piece, hits))
    if not candidates:
        return []
    frequency: dict[str, int] = {}
    for _piece, hits in candidates:
        for token in hits:
            frequency[token] = frequency.get(token, 0) + 1
    for index, (piece, hits) in enumerate(candidates):
        score = sum(1.0 + 1.0 / frequency[t] for t in hits)
        scored.append((-score, index, piece))
    scored.sort()
    chosen: list[str] = []
    for _score, _index, piece in scored:
        if piece not in chosen:
            chosen.append(piece)
        if len(chosen) == limit:
            break
    return chosen
