"""Which passage units of the fetched pages answer a query (seed 002: short text that matches).

1. Designators: the query's specific markers (a model or version such as "X5", "Q7", "OS 14",
   "3.2"; a year, Gregorian or Buddhist Era, so 2569 is 2026) must be named by a page for its
   units to count, and a page whose title or heading names only a conflicting one (the previous
   model, last year's edition) is a decoy. A unit that names only a conflicting designator is out.
2. Names: the query's proper names (capitalised English words, Thai word groups) must stand in a
   page whole ("Pell River Bridge", not "Pell Creek Bridge"; "สายหมอก", not "สายหมอกน้อย"); a
   page naming fewer of them than the best page of the call is a near-miss and left out.
3. Ranking: BM25 over every unit of every kept page of the query (the unit's words plus its
   page title's), normalised, plus a bonus for units carrying what the query asks for (a price,
   a date, a length, a capacity, a time, a person's name; any number, date or name otherwise).
4. Budget: the best unit, merged with its neighbour when it leans on it ("It launches at ..."),
   and a second line only when it scores nearly as well; never two lines from one page's block.

When nothing survives, the query gets no evidence and the reasons say what was tried and why.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from ._evidence_text import content_tokens, fold, tokenize
from ._evidence_units import Unit

__all__ = ["Choice", "PageUnits", "Pick", "choose", "designators", "plain"]


def plain(text: str) -> str:
    """Folded as tokens are (NFKC, casefold, Thai SARA AM kept whole), format characters removed,
    spaces collapsed: the form texts are compared in, so a folded token is found in it."""
    folded = fold(text)
    return " ".join("".join(c for c in folded if unicodedata.category(c) != "Cf").split())


@dataclass(frozen=True, slots=True)
class PageUnits:
    """A fetched page of one query: its URL, title and units."""

    url: str
    title: str
    units: Sequence[Unit]


@dataclass(frozen=True, slots=True)
class Pick:
    url: str
    text: str
    score: float


@dataclass
class Choice:
    picks: list[Pick] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)  # {"url", "reason"}
    why_none: str = ""


# --- designators ----------------------------------------------------------------------------------

_WORDS = re.compile(r"[a-z]*\d+(?:[.,]\d+)*[a-z]*|[^\W\d_]+")


@dataclass(frozen=True, slots=True)
class Designator:
    kind: str  # "year" or "model"
    value: str  # the Gregorian year, or the designator as written (folded)
    family: str  # model: its letter prefix, or the word before a bare number

    def __str__(self) -> str:
        if self.kind == "year" or self.value[0].isalpha():
            return self.value  # "2026", "x5": the prefix is part of it
        return f"{self.family} {self.value}"  # "cli 3.2", "os 14"


def _year(word: str) -> int | None:
    if len(word) == 4 and word.isdigit():
        n = int(word)
        if 1900 <= n <= 2100:
            return n
        if 2443 <= n <= 2643:  # Buddhist Era (Thai calendar): 543 years ahead
            return n - 543
    return None


def _marks(text: str) -> list[Designator]:
    words = _WORDS.findall(plain(text))
    out: list[Designator] = []
    for index, word in enumerate(words):
        if not any(c.isdigit() for c in word):
            continue
        year = _year(word)
        if year is not None:
            out.append(Designator("year", str(year), ""))
            continue
        prefix = word[: len(word) - len(word.lstrip("abcdefghijklmnopqrstuvwxyz"))]
        if prefix:
            out.append(Designator("model", word, prefix))
        elif index and words[index - 1].isalpha():
            out.append(Designator("model", word, words[index - 1]))
    return out


def designators(query: str) -> list[Designator]:
    """The query's designators (versions, model numbers, years)."""
    seen: dict[tuple[str, str], Designator] = {}
    for mark in _marks(query):
        seen.setdefault((mark.family, mark.value), mark)
    return list(seen.values())


def _verdict(wanted: Sequence[Designator], text: str) -> tuple[bool, list[str]]:
    """(every wanted designator is named, the conflicting ones named instead of a wanted one)."""
    marks = _marks(text)
    named = True
    conflicts: list[str] = []
    for d in wanted:
        same = [m for m in marks if m.kind == d.kind and m.family == d.family]
        if not any(m.value == d.value for m in same):
            named = False
            conflicts.extend(str(m) for m in same)
    return named, sorted(set(conflicts))


# --- names ----------------------------------------------------------------------------------------

_CAPITALISED = re.compile(r"(?:[A-Z][a-z]+(?:'s)?)(?:\s+[A-Z][a-z]+)*")
_THAI_RUN = re.compile("[\u0e01-\u0e4e]{2,}")
_THAI_LETTER = re.compile("[\u0e01-\u0e4e]")


def _names(query: str) -> list[str]:
    english = [plain(m.group()) for m in _CAPITALISED.finditer(query)]
    thai = [plain(m.group()) for m in _THAI_RUN.finditer(query)]
    return list(dict.fromkeys(english + thai))


def _mentions(page: PageUnits, term: str) -> bool:
    whole = " ".join([page.title, *(u.text for u in page.units)])
    return term in _terms(whole) or term in plain(whole)


def _stands_whole(name: str, text: str) -> bool:
    """``name`` occurs in ``text`` at least once not glued to more letters of its script."""
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        before, after = text[start - 1 : start], text[end : end + 1]
        if _THAI_LETTER.match(name):
            if not after or not _THAI_LETTER.match(after):
                return True
        elif not (before.isalnum() or after.isalnum()):
            return True
        start = text.find(name, start + 1)
    return False


# --- what the query asks for ----------------------------------------------------------------------

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|"
    "มกราคม|กุมภาพันธ์|มีนาคม|เมษายน|พฤษภาคม|มิถุนายน|กรกฎาคม|สิงหาคม|กันยายน|ตุลาคม|พฤศจิกายน|ธันวาคม"
)
# A number is matched only from the start of its digit run ((?<![\d,.])): tried at every digit, a
# pattern would rescan the run each time, quadratic on a hostile page of digits.
_SHAPES: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (re.compile(asks), re.compile(shape))
    for asks, shape in (
        (r"\b(?:price|prices|cost|costs|fee|fees|fare|fares|charge|tuition|tickets?|admission)\b|ราคา|ค่า|ตั๋ว",
         r"[$€£¥฿]\s?\d|(?<![\d,.])\d[\d,.]*\s?(?:บาท|baht|usd|dollars?|euros?|thb)\b|(?<![\d,.])\d[\d,.]*\s?บาท"),
        (r"\b(?:dates?|when|released?|schedule|deadline|day)\b|วันที่|วันจัดงาน|กำหนดการ|เมื่อไร",
         rf"\d{{1,2}}(?:\s*[-–]\s*\d{{1,2}})?\s+(?:{_MONTHS})|(?:{_MONTHS})\s+\d{{1,2}}\b|\d{{4}}-\d{{2}}-\d{{2}}"),
        (r"\b(?:length|long|height|tall|distance|width|span|depth)\b|ความยาว|ความสูง|ระยะทาง",
         r"(?<![\d,.])\d[\d,.]*\s?(?:m|km|metres?|meters?|ft|feet|miles?|เมตร|กิโลเมตร)\b|(?<![\d,.])\d[\d,.]*\s?(?:เมตร|กิโลเมตร)"),
        (r"\b(?:battery|capacity)\b|แบตเตอรี่|ความจุ", r"(?<![\d,.])\d[\d,.]*\s?(?:mah|wh)\b"),
        (r"\b(?:ram|memory|storage)\b|หน่วยความจำ", r"(?<![\d,.])\d[\d,.]*\s?(?:gb|tb|mb)\b"),
        (r"\b(?:hours|opening hours|opens?|closes?|closing)\b|เวลาเปิด|เปิดปิด|เปิด-ปิด", r"\b\d{1,2}[:.]\d{2}\b"),
        (r"\b(?:flight time|duration|runtime|run time|battery life|how long)\b|นานเท่าไร|ระยะเวลา",
         r"(?<![\d,.])\d[\d,.]*\s?(?:minutes?|mins?|hours?|hrs?|seconds?|days?|นาที|ชั่วโมง|วัน)"),
        (r"\b(?:weight|weighs?|heavy)\b|น้ำหนัก", r"(?<![\d,.])\d[\d,.]*\s?(?:kg|g|lbs?|กก\.?|กิโลกรัม|กรัม)"),
        (r"\b(?:elevation|altitude)\b|ความสูง", r"(?<![\d,.])\d[\d,.]*\s?(?:m|ft|metres?|meters?|feet|เมตร)\b"),
        (r"\b(?:who|ceo|founder|director|president|chief|head|leader|mayor|architect|author|designed|"
         r"founded|wrote|written|invented)\b|ผู้ก่อตั้ง|ผู้อำนวยการ|ประธาน|ใคร",
         r"(?-i:[A-Z][a-z]+ [A-Z][a-z]+)"),
    )
)  # fmt: skip
_VALUE = re.compile(rf"\d|(?:{_MONTHS})\b", re.IGNORECASE)


def _asked(query: str) -> list[re.Pattern[str]]:
    folded = plain(query)
    return [shape for asks, shape in _SHAPES if asks.search(folded)]


# Words that qualify what is asked rather than name it: a page need not repeat them.
_MODIFIERS = frozenset(
    "minimum maximum min max latest current official total average full exact new usual standard "
    "ขั้นต่ำ สูงสุด ล่าสุด ปัจจุบัน ทั้งหมด".split()
)


def _asked_words(query: str) -> str:
    """The stretches of the query that ask for a kind of value ("price", "dates", "ความยาว")."""
    folded = plain(query)
    return " ".join(m.group() for asks, _shape in _SHAPES for m in asks.finditer(folded))


def _topic_words(query_terms: Sequence[str], query: str) -> list[str]:
    """The query's words a page must hold somewhere to be about what is asked: not the asked kind of
    value, not a qualifier; e.g. "parking" in "Greyfield Library parking fee"."""
    asked = _asked_words(query)
    # Numbers, versions and model names are the designator rule's (it also says which one a page names).
    return [t for t in query_terms if t not in _MODIFIERS and t not in asked and not any(c.isdigit() for c in t)]


def _carries(shapes: Sequence[re.Pattern[str]], raw: str, query_plain: str) -> bool:
    """The unit holds a value of an asked shape that the query itself does not already hold."""
    text = plain(raw)
    for shape in shapes:
        source = raw if shape.pattern.startswith("(?-i:") else text
        if any(plain(m.group()) not in query_plain for m in shape.finditer(source)):
            return True
    return False


# --- ranking --------------------------------------------------------------------------------------


def _stem(token: str) -> str:
    """Light English stemming so "launches" meets "launch" and "fares" meets "fare"."""
    if not token.isascii() or not token.isalpha() or len(token) <= 3:
        year = _year(token)
        return str(year) if year is not None else token
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ches", "ch"), ("shes", "sh"), ("xes", "x")):
        if token.endswith(suffix):
            return token[: -len(suffix)] + keep
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    if token.endswith("ing") and len(token) >= 7:
        return token[:-3]  # "opening" meets "opens"
    return token


def _terms(text: str) -> list[str]:
    return [_stem(t) for t in tokenize(text)]


@dataclass
class _Scored:
    page: int
    index: int
    own: set[str]
    score: float = 0.0
    carries: bool = False  # holds a value of the kind the query asks for


def _bm25(docs: Sequence[Sequence[str]], query: Sequence[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    n = len(docs)
    if not n:
        return []
    avg = sum(len(d) for d in docs) / n or 1.0
    df: dict[str, int] = {}
    for doc in docs:
        for term in set(doc):
            df[term] = df.get(term, 0) + 1
    idf = {t: math.log(1 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in query}
    scores = []
    for doc in docs:
        counts: dict[str, int] = {}
        for term in doc:
            counts[term] = counts.get(term, 0) + 1
        norm = k1 * (1 - b + b * len(doc) / avg)
        scores.append(sum(idf[t] * counts[t] * (k1 + 1) / (counts[t] + norm) for t in query if t in counts))
    return scores


def choose(query: str, pages: Sequence[PageUnits], *, max_lines: int = 2, size: int = 360) -> Choice:
    """The evidence lines of ``query`` from its fetched ``pages`` (best first), or why there are none."""
    choice = Choice()
    wanted = designators(query)
    names = _names(query)
    query_terms = sorted(content_tokens(_terms(query)) - {""})
    if not query_terms:
        choice.why_none = "the query has no content words"
        return choice
    kept: list[tuple[PageUnits, int]] = []
    topic_words = _topic_words(query_terms, query)
    for page in pages:
        body = [u for u in page.units if u.kind != "heading"]
        identity = " ".join([page.title, *(u.text for u in page.units if u.kind == "heading")])
        whole = " ".join([identity, *(u.text for u in body)])
        if wanted:
            named, _ = _verdict(wanted, whole)
            head_named, head_conflicts = _verdict(wanted, identity)
            if not named or (head_conflicts and not head_named):
                other = head_conflicts or _verdict(wanted, whole)[1]
                what = ", ".join(str(d) for d in wanted)
                reason = f"names {', '.join(other)}, not {what}" if other else f"never names {what}"
                choice.rejected.append({"url": page.url, "reason": reason})
                continue
        text = plain(whole)
        kept.append((page, sum(_stands_whole(n, text) for n in names)))
    # A topic word of the query that no page read mentions at all (any spelling the stemmer or a
    # substring of a Thai compound meets) means the pages are about something else: pages without
    # "parking" do not answer a parking fee, however well they match its other words.
    unmet = [t for t in topic_words if not any(_mentions(page, t) for page, _ in kept)]
    if unmet:
        for page, _ in kept:
            choice.rejected.append({"url": page.url, "reason": f"never mentions {', '.join(unmet[:3])}"})
        kept = []
    if kept and names:
        best = max(count for _, count in kept)
        for page, count in kept:
            if count < best:
                text = plain(" ".join([page.title, *(u.text for u in page.units)]))
                missing = [n for n in names if not _stands_whole(n, text)]
                choice.rejected.append({"url": page.url, "reason": f"a similar name, not {', '.join(missing)}"})
        kept = [(p, c) for p, c in kept if c == best]
    if not kept:
        choice.why_none = _why(wanted, choice.rejected, bool(pages))
        return choice

    shapes = _asked(query)
    query_plain = plain(query)
    wanted_terms = set(query_terms)
    scored: list[_Scored] = []
    own_docs: list[list[str]] = []
    title_cover: list[float] = []
    focus_hit: list[float] = []
    for p, (page, _count) in enumerate(kept):
        title_terms = set(_terms(page.title))
        cover = len(title_terms & wanted_terms) / len(wanted_terms)
        # What the query asks about this page's subject: its words the title does not hold.
        focus = wanted_terms - title_terms
        for i, unit in enumerate(page.units):
            if unit.kind == "heading":
                continue
            own = _terms(unit.text)
            if wanted:
                named, conflicts = _verdict(wanted, unit.text)
                if conflicts and not named:
                    continue  # names only another model, version or year
            scored.append(_Scored(p, i, set(own) | title_terms))
            own_docs.append(own)
            title_cover.append(cover)
            focus_hit.append(len(focus & set(own)) / len(focus) if focus else 0.0)
    if not scored:
        choice.why_none = "the pages read hold no text beyond their headings"
        return choice
    # BM25 over the units' own words (the title is the same for every unit of a page, so it
    # enters as the page's coverage of the query, not as words of each unit).
    own_scores = _bm25(own_docs, query_terms)
    top = max(own_scores) or 1.0
    position = {(s.page, s.index): n for n, s in enumerate(scored)}
    need = max(1, math.ceil(len(query_terms) / 2))
    candidates: list[_Scored] = []
    for n, s in enumerate(scored):
        unit = kept[s.page][0].units[s.index]
        context = s.own | _neighbour_terms(position, own_docs, s)
        if len(context & wanted_terms) < need:
            continue
        score = own_scores[n] / top + 0.5 * title_cover[n] + 0.3 * _neighbour_score(position, own_scores, s) / top
        score += 0.8 * focus_hit[n]
        if shapes:
            s.carries = _carries(shapes, unit.text, query_plain)
            score += 1.5 if s.carries else 0.0
        elif _VALUE.search(unit.text):
            score += 0.3
        if unit.kind in ("row", "pair"):
            score += 0.1  # a table row or definition is a fact with its label
        s.score = score
        candidates.append(s)
    if not candidates:
        choice.why_none = "no passage of the pages read matched enough of the query's words"
        return choice
    if any(s.carries for s in candidates):  # the query asks for a value and some unit holds one
        candidates = [s for s in candidates if s.carries]
    candidates.sort(key=lambda s: (-s.score, s.page, s.index))
    leader = candidates[0]
    used: set[tuple[int, int]] = set()
    for s in candidates:
        if len(choice.picks) >= max_lines or s.score < 0.9 * leader.score:
            break
        if any(s.page == p and abs(s.index - i) <= 1 for p, i in used):
            continue
        page = kept[s.page][0]
        text = _merged(page.units, s.index, set(query_terms), size)
        if any(plain(text) == plain(pick.text) for pick in choice.picks):
            continue
        used.add((s.page, s.index))
        choice.picks.append(Pick(page.url, text, s.score))
    return choice


def _neighbour_terms(position: dict[tuple[int, int], int], own_docs: Sequence[Sequence[str]], s: _Scored) -> set[str]:
    out: set[str] = set()
    for i in (s.index - 1, s.index + 1):
        n = position.get((s.page, i))
        if n is not None:
            out.update(own_docs[n])
    return out


def _neighbour_score(position: dict[tuple[int, int], int], own_scores: Sequence[float], s: _Scored) -> float:
    near = [own_scores[n] for i in (s.index - 1, s.index + 1) if (n := position.get((s.page, i))) is not None]
    return max(near, default=0.0)


_ANAPHORA = re.compile(r"(?:It|Its|This|These|They|Their|He|She|His|Her|That|Those)\b|(?:มัน|ซึ่ง|โดย)")


def _merged(units: Sequence[Unit], index: int, query_terms: set[str], size: int) -> str:
    """The unit, merged with a neighbouring sentence of the same paragraph when they carry one fact
    together: the sentence before when the unit names none of the query's words and leans on it
    ("It launches at $749" needs "the Orion X5 ..."), else the sentence after when it adds query
    words the unit lacks ("... the Search API." + "Pricing is per 1,000 requests.")."""
    unit = units[index]
    if unit.kind != "text":
        return unit.text
    have = set(_terms(unit.text)) & query_terms

    def neighbour(i: int) -> Unit | None:
        if 0 <= i < len(units) and units[i].block == unit.block and units[i].kind == "text":
            return units[i]
        return None

    before, after = neighbour(index - 1), neighbour(index + 1)
    leans = not have or _ANAPHORA.match(unit.text) is not None
    if leans and before is not None and len(before.text) + len(unit.text) < size:
        return f"{before.text} {unit.text}"
    if after is not None and (set(_terms(after.text)) & query_terms) - have:
        if len(unit.text) + len(after.text) < size:
            return f"{unit.text} {after.text}"
    return unit.text


def _why(wanted: Sequence[Designator], rejected: Sequence[dict[str, str]], read: bool) -> str:
    if not read:
        return ""  # nothing was read: the caller's account of what was tried says it
    if wanted and rejected:
        return f"the pages found are about something else than {', '.join(str(d) for d in wanted)}"
    return "the pages found are about a similar but different subject"
