"""Passage units of a fetched page for the evidence pipeline: sentences, list items, table rows
carried with their header cells, definition pairs and headings, with page furniture removed by
structure (tags, ARIA roles, dialogs, consent containers, hidden elements).

One streaming pass over the markup (no tree, no recursion, bounded end-tag search), so deep or
broken nesting costs nothing extra. Thai sentences are cut with PyThaiNLP's CRF sentence
segmenter (``crfcut``, model shipped in the package), other text at sentence punctuation.
CPU-heavy: the pipeline runs it off the event loop.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from html.parser import HTMLParser

from .._types import FetchBody

__all__ = ["Unit", "page_units", "printable", "sentences", "warm_up"]

_SPACES = re.compile(r"\s+")
_THAI = re.compile("[\u0e00-\u0e7f]")
# A sentence ends at . ! ? (or their full-width forms) followed by space and a capital, digit or quote.
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+(?=[\"'“‘(\[A-Z0-9\u0e00-\u0e7f])")
# Chinese and Japanese end sentences in 。！？ with no space after: a run of them and the closing quotes or
# brackets after it end the sentence, which is cut before the next character that is neither. Linear: a match
# starts only at a run's first mark, and its quantifiers are possessive (no backtracking into a long run).
_CJK_END = re.compile(r"(?<![。！？])[。！？]++[”’」』）)\]》】〉]*+(?=[^\s”’」』）)\]》】〉])")
_MAX_UNITS = 3000  # per page: what ranking reads of one page
_MAX_UNIT_CHARS = 2000  # one unit: several passages long, yet bounded
_MAX_SEGMENT = 4000  # characters handed to the Thai segmenter at once
_SEGMENTER = threading.Lock()  # the CRF tagger is one shared object


@dataclass(frozen=True, slots=True)
class Unit:
    """One passage unit. ``block``: units of one paragraph, list, table or definition list share it
    (adjacent units of one block may be merged into one evidence line)."""

    text: str
    kind: str  # "text", "item", "row", "pair" or "heading"
    block: int


_WARM: Future[None] | None = None
_WARM_LOCK = threading.Lock()


def warm_up() -> Future[None]:
    """Start loading the Thai word and sentence segmenters, the ranker and the public suffix list in a
    background thread, once per process (about a second in a fresh one); the returned future is
    done when they are loaded. The pipeline starts it when its tool is built and awaits it off the
    event loop, so the first call overlaps the load with its searches instead of paying it after."""
    global _WARM
    with _WARM_LOCK:
        if _WARM is None:
            _WARM = Future()
            threading.Thread(target=_load, args=(_WARM,), name="evidence-warm-up", daemon=True).start()
        return _WARM


def _load(done: Future[None]) -> None:
    try:
        from ._evidence_rank import Candidate, rank, registrable_domain
        from ._evidence_text import content_tokens, tokenize

        sentences("ทดสอบการตัดประโยค ภาษาไทย")
        content_tokens(tokenize("ทดสอบ ราคาทองคำ"))
        registrable_domain("news.example.co.uk")
        # The ranker imports bm25s (with numpy and scipy) on first use: that use is here.
        rank("ราคาทองคำ", [Candidate(0, 0, "https://example.test/", "example.test", "", "", "ราคาทองคำ")])
    except BaseException as exc:  # a failed warm-up only means the first call loads lazily
        done.set_exception(exc)
    else:
        done.set_result(None)


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (Thai by the CRF segmenter, other scripts at punctuation)."""
    text = _SPACES.sub(" ", text).strip()
    if not text:
        return []
    if not _THAI.search(text):
        return [c.strip() for s in _SENTENCE_END.split(text) for c in _cjk_split(s) if c.strip()]
    out: list[str] = []
    for start in range(0, len(text), _MAX_SEGMENT):
        with _SEGMENTER:
            cut = _crf_sentences(text[start : start + _MAX_SEGMENT])
        out.extend(s.strip() for s in cut)
    return [c for piece in out if piece for s in _SENTENCE_END.split(piece) for c in _cjk_split(s) if c.strip()]


def _cjk_split(text: str) -> list[str]:
    """``text`` cut after each run of Chinese or Japanese end marks (and its closers) that text follows."""
    cuts = [m.end() for m in _CJK_END.finditer(text)]
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def _crf_sentences(text: str) -> list[str]:
    """PyThaiNLP's CRF sentence cut (``crfcut``) over words from nlpO3, the Rust build of the same
    ``newmm`` segmenter: crfcut would otherwise build newmm's Python dictionary trie on first use,
    several seconds in a fresh process (the warm-start budget), for the very same words."""
    from pythainlp.tokenize import crfcut

    words = _thai_words(text)
    features, tagger = getattr(crfcut, "_extract_features", None), getattr(crfcut, "_tagger", None)
    if not words or features is None or tagger is None:  # another PyThaiNLP layout: its own entry point
        return [str(s) for s in crfcut.segment(text)]
    labels = list(tagger.tag(features(words)))
    labels[-1] = "E"
    for i, word in enumerate(words):  # crfcut's own rules: punctuation ends, a leading space does not
        if word.strip().endswith(("!", ".", "?")):
            labels[i] = "E"
        elif (i == 0 or labels[i - 1] == "E") and word.strip() == "":
            labels[i] = "I"
    out: list[str] = []
    sentence = ""
    for word, label in zip(words, labels, strict=True):
        sentence += word
        if label == "E" and sentence:
            out.append(sentence)
            sentence = ""
    return out


def _thai_words(text: str) -> list[str]:
    from pythainlp.tokenize import word_tokenize

    return [str(w) for w in word_tokenize(text, engine="nlpo3", keep_whitespace=True)]


# Elements that are page furniture, never content.
_DROP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "iframe", "object", "embed", "canvas", "nav", "header",
     "footer", "aside", "form", "button", "select", "textarea", "menu", "dialog", "head", "title"}
)  # fmt: skip
_DROP_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "dialog", "alertdialog",
     "alert", "marquee", "tooltip"}
)  # fmt: skip
# Whole class or id tokens (not substrings, so "navigation-free-article" survives) ...
_DROP_NAMES = frozenset(
    {"nav", "navbar", "menu", "footer", "sidebar", "breadcrumb", "breadcrumbs", "advert", "ads", "share", "social",
     "related", "comments", "skip-link", "modal", "popup", "newsletter", "banner", "hidden", "d-none",
     "invisible", "sr-only", "visually-hidden", "screen-reader-text", "visuallyhidden"}
)  # fmt: skip
# ... and any token naming cookies or consent, whatever its spelling ("cookie-consent", "gdprBanner").
_CONSENT = re.compile(r"cookie|consent|gdpr", re.IGNORECASE)
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)
_INLINE = frozenset(
    {"a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "i", "kbd", "mark", "q", "s", "samp",
     "small", "span", "strong", "sub", "sup", "time", "u", "var", "font", "label"}
)  # fmt: skip
# Elements that sit inside a line of text (an icon, a button, a form field): like inline markup they
# never end the sentence around them; what they hold is furniture or no text at all.
_INLINE_LEVEL = _INLINE | frozenset(
    {"img", "svg", "button", "input", "select", "textarea", "canvas", "object", "embed", "iframe", "picture",
     "video", "audio", "wbr", "meter", "progress", "output"}
)  # fmt: skip
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_END_SEARCH = 64  # how far down the open-element stack an end tag may close; keeps bad markup linear


def is_furniture(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    if tag in _DROP_TAGS:
        return True
    for name, value in attrs:
        if name == "hidden":
            return True
        if not value:
            continue
        low = value.strip().lower()
        if name == "role" and any(r in _DROP_ROLES for r in low.split()):
            return True
        if name in ("aria-hidden", "aria-modal") and low == "true":
            return True
        if name == "style" and _HIDDEN_STYLE.search(value):
            return True
        if name in ("class", "id") and any(t.lower() in _DROP_NAMES or _CONSENT.search(t) for t in value.split()):
            return True
    return False


class _Units(HTMLParser):
    """Text outside furniture, cut into blocks at every non-inline element; table cells, list items
    and definition terms are kept apart so rows and pairs can be put back together."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.units: list[Unit] = []
        self._open: list[tuple[str, bool]] = []  # (tag, opened a skipped region)
        self._skipping = 0
        self._text: list[str] = []
        self._block = 0
        self._kind = "text"
        self._cell: list[str] | None = None  # text of the open table cell
        self._cell_is_head = False
        self._row: list[tuple[str, bool]] = []
        self._header: list[str] = []
        self._in_thead = False
        self._term: str | None = None  # the open definition term, waiting for its description

    def _flush(self) -> None:
        text = _SPACES.sub(" ", "".join(self._text)).strip()
        self._text = []
        if not text or len(self.units) >= _MAX_UNITS:
            return
        if self._kind == "term":
            self._term = text
            return
        if self._kind == "desc" and self._term is not None:
            self.units.append(Unit(f"{self._term}: {text}", "pair", self._block))
            return
        if self._kind in ("heading", "item", "desc"):
            self.units.append(Unit(text, "item" if self._kind == "desc" else self._kind, self._block))
            return
        self.units.extend(Unit(s, "text", self._block) for s in sentences(text))

    def _end_cell(self) -> None:
        if self._cell is not None:
            self._row.append((_SPACES.sub(" ", "".join(self._cell)).strip(), self._cell_is_head))
            self._cell = None

    def _end_row(self) -> None:
        self._end_cell()
        cells, self._row = self._row, []
        if not any(text for text, _ in cells):
            return
        if (self._in_thead or all(head for _, head in cells)) and not self._header:
            self._header = [text for text, _ in cells]
            return
        self.units.append(Unit(_row_text([t for t, _ in cells], self._header), "row", self._block))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skipping:
            if tag not in _VOID:
                self._push(tag, is_furniture(tag, attrs))
            return
        if tag in ("td", "th"):
            self._end_cell()
            self._cell, self._cell_is_head = [], tag == "th"
        elif tag == "tr":
            self._end_row()
        elif tag == "table":
            self._flush()
            self._block += 1
            self._header, self._in_thead = [], False
        elif tag == "thead":
            self._in_thead = True
        elif tag not in _INLINE_LEVEL and self._cell is None:
            self._flush()
            if tag in ("ul", "ol", "dl", "p", "div", "section", "article", "main", "blockquote", "pre"):
                self._block += 1
            self._kind = _kind_of(tag)
            if tag == "dl":
                self._term = None
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")
        if tag not in _VOID:
            self._push(tag, is_furniture(tag, attrs))

    def _push(self, tag: str, furniture: bool) -> None:
        # Block furniture ends the text before it; inline furniture (a hidden span, an icon) is
        # skipped inside its sentence, which a browser shows whole.
        if furniture and tag not in _INLINE_LEVEL and not self._skipping and self._cell is None:
            self._flush()
        self._open.append((tag, furniture))
        self._skipping += furniture

    def handle_endtag(self, tag: str) -> None:
        for depth in range(1, min(len(self._open), _END_SEARCH) + 1):
            if self._open[-depth][0] == tag:
                for _ in range(depth):
                    _name, furniture = self._open.pop()
                    self._skipping -= furniture
                break
        else:
            return
        if self._skipping:
            return
        if tag in ("td", "th"):
            self._end_cell()
        elif tag == "tr":
            self._end_row()
        elif tag == "thead":
            self._in_thead = False
        elif tag == "table":
            self._end_row()
            self._header = []
            self._block += 1
        elif tag not in _INLINE_LEVEL and self._cell is None:
            self._flush()
            self._kind = "text"

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        (self._cell if self._cell is not None else self._text).append(data)

    def finish(self) -> list[Unit]:
        self.close()
        self._end_row()
        self._flush()
        return self.units


def _kind_of(tag: str) -> str:
    if tag in _HEADINGS:
        return "heading"
    if tag == "li":
        return "item"
    if tag == "dt":
        return "term"
    if tag == "dd":
        return "desc"
    return "text"


def _row_text(cells: list[str], header: list[str]) -> str:
    """A table row as one line: its label (first cell), then each value with its column header."""
    label, values = cells[0], cells[1:]
    if not values:
        return label
    if len(header) == len(cells):
        parts = [f"{h}: {v}" if h else v for h, v in zip(header[1:], values, strict=True) if v]
        return f"{label} — " + "; ".join(parts) if label else "; ".join(parts)
    return " | ".join(c for c in cells if c)


_MD_TABLE_RULE = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?$")
_MD_BULLET = re.compile(r"(?:[-*+]|\d+[.)]) ")  # a list item's marker


def _markdown_units(content: str) -> Iterable[Unit]:
    """Plain text or Markdown (the Fetch API's form): a unit per sentence, bullet, table row."""
    block, header = 0, list[str]()
    for raw in content.split("\n"):
        line = "".join(c if c.isprintable() else " " for c in raw).strip()
        if not line:
            block += 1
            header = []
            continue
        if line.startswith("|") and line.count("|") >= 2:
            if _MD_TABLE_RULE.match(line):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not header:
                header = cells
                continue
            yield Unit(_row_text(cells, header), "row", block)
        elif line.startswith("#"):
            yield Unit(line.lstrip("# ").strip(), "heading", block)
        elif (bullet := _MD_BULLET.match(line)) is not None:  # the marker only: "- 40 berths" keeps its 40
            yield Unit(line[bullet.end() :].strip(), "item", block)
        else:
            yield from (Unit(s, "text", block) for s in sentences(line.lstrip("> ")))


def page_units(body: FetchBody) -> list[Unit]:
    """The passage units of a fetched page, furniture removed, whitespace collapsed."""
    if body.kind != "html":
        units = list(_markdown_units(body.content))
    else:
        parser = _Units()
        parser.feed(body.content)
        units = parser.finish()
    cleaned = (Unit(piece, u.kind, u.block) for u in units[:_MAX_UNITS] for piece in _pieces(printable(u.text)))
    return [u for u in cleaned if u.text][:_MAX_UNITS]


def _pieces(text: str) -> list[str]:
    """A unit longer than any passage is split, so the work per unit stays bounded on a hostile page."""
    return [text[i : i + _MAX_UNIT_CHARS] for i in range(0, len(text), _MAX_UNIT_CHARS)] or [text]


def printable(text: str) -> str:
    """One line of printable text: format characters (zero-width spaces, soft hyphens, direction
    marks) removed, other unprintable characters and runs of spaces made one space."""
    kept = "".join(c if c.isprintable() else ("" if unicodedata.category(c) == "Cf" else " ") for c in text)
    return _SPACES.sub(" ", kept).strip()
