"""Text for the evidence pipeline: tokens that work for unspaced scripts, query topics,
one-line display text, and the snippet fallback's policy. (Page units are
``_evidence_units``; choosing among them is ``_evidence_passages``.)

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
from collections.abc import Iterable

__all__ = ["clean_text", "content_tokens", "fold", "snippet_matches", "tokenize", "topic_of"]

_THAI = "\u0e00-\u0e7f"
_UNSPACED = (
    "\u0e80-\u0eff"  # Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
)
# A word ends where Thai or an unspaced script begins ("ที่Bangkokไหม" is ที่ + bangkok + ไหม): Thai letters
# are \w too, and a plain \w+ ran a Latin name on into the Thai after it.
_RUNS = re.compile(rf"(?P<thai>[{_THAI}]+)|(?P<cjk>[{_UNSPACED}]+)|(?P<word>[^\W{_THAI}{_UNSPACED}]+)")
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
            # Imported here: PyThaiNLP is only needed once Thai text shows up (the warm-up loads it).
            from pythainlp.tokenize import word_tokenize

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


def snippet_matches(title: str, snippet: str, query: str) -> bool:
    """The snippet fallback's policy: the snippet holds a content token of the query, and the
    result's title and snippet together meet the passage rule (a snippet describes its title)."""
    wanted = content_tokens(tokenize(query))
    in_snippet = wanted & set(tokenize(snippet))
    together = wanted & set(tokenize(f"{title} {snippet}"))
    return bool(in_snippet) and len(together) >= (1 if len(wanted) <= 2 else 2)
