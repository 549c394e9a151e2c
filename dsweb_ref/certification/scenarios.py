"""Generated multi-query scenarios for the differential checks, their oracle, and shrinking.

A :class:`Scenario` is one ``web_search`` call over the emulator's conformance search route: the
``queries`` argument (exact duplicates included), per distinct query its scripted answer (a seam
result or a failure), the order in which answers complete, and the two caps. :func:`generate`
draws them from a seed, so a failure is replayed by its seed; :func:`expect` is the oracle: the
merge restated from seed 000 (:func:`~dsweb_ref.certification.seed_merge.merge_by_seed`) for several
distinct queries, the provider's result unchanged for one, and the first failure in completion order when
any fails (seed 000). :func:`compare` says how an answer differs from the oracle, judging only what seed 000
decides; :func:`shrink_candidates` lists smaller scenarios for the check to try.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._types import SearchResult, Source
from ..emulator.scripted import Failure, Script
from .seed_merge import merge_by_seed

__all__ = [
    "FAILURE_CODES", "Expected", "Scenario", "answer_labels", "compare", "content_answers", "expect", "generate",
    "shown_at", "shrink_candidates", "trimmed", "unjudged_labels",
]

# Codes a scripted failure carries: distinct codes make "which failure was reported" visible.
FAILURE_CODES = ("WEB_PROVIDER_ERROR", "WEB_PROVIDER_UNAVAILABLE", "WEB_PROVIDER_CREDENTIAL_MISSING")
_STATUSES = (400, 401, 402, 403, 404, 429, 500, 502, 503)
# Distinct queries that a case-folding, accent-stripping or whitespace-collapsing dedup would merge.
_QUERIES = ("alpha", "Alpha", "ALPHA", "beta release", "beta  release", "café", "cafe", "数据 检索", "gamma-1")
# URLs that differ only by case, a trailing slash, a trailing space, escaping, the query string, the scheme
# (http, https) or a leading "www.": seed 000 dedups by URL, and each of these is another URL.
_URLS = (
    "https://a.example.test/page",
    "http://a.example.test/page",
    "https://www.a.example.test/page",
    "https://a.example.test/page/",
    "https://A.example.test/page",
    "https://a.example.test/Page",
    "https://a.example.test/page ",
    "https://b.example.test/~docs",
    "https://b.example.test/%7Edocs",
    "https://b.example.test/q?x=1",
    "https://b.example.test/q?x=2",
    "https://c.example.test/数据",
    "https://d.example.test/",
    "https://e.example.test/a#part",
)
_WORDS = ("search", "merge", "rank", "数据", "résumé", "answer", "source", "cap", "naïve", "ok")


@dataclass(frozen=True, slots=True)
class Scenario:
    queries: tuple[str, ...]  # the tool argument, exact duplicates included
    answers: tuple[tuple[str, Failure | dict[str, Any]], ...]  # per distinct query, in first-seen order
    order: tuple[str, ...]  # completion order of the distinct queries
    cap: int  # searchMaxResults
    max_queries: int  # searchMaxQueries

    @property
    def distinct(self) -> list[str]:
        return [q for q, _ in self.answers]

    def script(self, hold_limit: float) -> Script:
        return Script(dict(self.answers), self.order, hold_limit)

    def to_json(self) -> dict[str, Any]:
        """The scenario as a report shows it (a failure as ``{"fail": {status, code}}``)."""
        answers = {
            q: {"fail": {"status": a.status, "code": a.code}} if isinstance(a, Failure) else a for q, a in self.answers
        }
        return {
            "queries": list(self.queries),
            "answers": answers,
            "completion_order": list(self.order),
            "search_max_results": self.cap,
            "search_max_queries": self.max_queries,
        }


@dataclass(frozen=True, slots=True)
class Expected:
    value: dict[str, Any] | None = None  # the expected value, or None when a failure is expected
    error_code: str | None = None
    labelled: tuple[tuple[str, str], ...] = ()  # (query, answer) pairs the content must label
    single: bool = False  # one distinct query: the provider's result unchanged, no labels
    # The merge with scheme and host compared without letter case (RFC 3986 6.2.2.1: one URL), where it differs:
    # seed 000 dedups "by URL", and URLs so written are the same URL (standalone.sources.filtered reads it so too).
    folded: dict[str, Any] | None = None


def _source(rng: random.Random, url: str, rank: int) -> dict[str, Any]:
    out: dict[str, Any] = {"url": url}
    if rng.random() < 0.8:
        out["title"] = f"{rng.choice(_WORDS)} {rank} {rng.randrange(1000)}"
    if rng.random() < 0.5:
        out["snippet"] = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 6)))
    if rng.random() < 0.3:
        out["published_at"] = f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
    return out


def _result(rng: random.Random, pool: Sequence[str], cap: int) -> dict[str, Any]:
    count = rng.randint(0, cap)
    urls = [rng.choice(pool) for _ in range(count)]
    if rng.random() < 0.85:  # a provider usually lists a URL once; sometimes it repeats one
        urls = list(dict.fromkeys(urls))
    out: dict[str, Any] = {}
    if rng.random() < 0.6:
        lines = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(1, 3))]
        out["content"] = "\n".join(lines)
    out["sources"] = [_source(rng, url, rank) for rank, url in enumerate(urls)]
    out["truncated"] = rng.random() < 0.25
    return out


def _failure(rng: random.Random) -> Failure:
    return Failure(rng.choice(_STATUSES), rng.choice(FAILURE_CODES), f"scripted failure {rng.randrange(10_000)}")


def scenario(seed: int, index: int, failing: bool) -> Scenario:
    """Scenario ``index`` of ``seed``: the same inputs always give the same scenario."""
    rng = random.Random(f"{seed}/{'failing' if failing else 'succeeding'}/{index}")
    distinct = rng.sample(_QUERIES, rng.choice((1, 2, 2, 3, 3, 4)))
    queries = list(distinct)
    for _ in range(rng.choice((0, 0, 0, 1, 2))):  # exact duplicates, anywhere after the first
        query = rng.choice(distinct)
        first = queries.index(query)
        queries.insert(rng.randint(first + 1, len(queries)), query)
    cap = rng.randint(1, 6)
    pool = rng.sample(_URLS, rng.randint(2, len(_URLS)))
    answers: dict[str, Failure | dict[str, Any]] = {q: _result(rng, pool, cap) for q in distinct}
    if failing:
        bad = [q for q in distinct if rng.random() < 0.4] or [rng.choice(distinct)]
        answers.update({q: _failure(rng) for q in bad})
    order = rng.sample(distinct, len(distinct))
    return Scenario(tuple(queries), tuple(answers.items()), tuple(order), cap, len(queries) + rng.randint(0, 2))


def generate(seed: int, count: int, failing: bool) -> Iterator[Scenario]:
    return (scenario(seed, i, failing) for i in range(count))


_REPEATED = {"sources": [{"url": _URLS[0], "title": "first listing"}, {"url": _URLS[-2]},
                         {"url": _URLS[0], "title": "listed again"}], "content": "one answer", "truncated": False}
_FRAGMENT = "https://e.example.test/a#part"  # in the pool; no other URL there differs from it by the fragment alone
_WHOLE = {"sources": [{"url": _FRAGMENT, "title": "the part"}], "content": "with the fragment", "truncated": False}
_BARE = {"sources": [{"url": _FRAGMENT.split("#")[0], "title": "the page"}], "truncated": False}
_PAD = {"sources": [{"url": _URLS[-3], "title": "the plain one"}], "content": "answered for the plain query",
        "truncated": False}
_PADDED = {"sources": [{"url": _URLS[-6], "title": "the padded one"}], "content": "answered for the padded query",
           "truncated": False}
# A URL repeated inside the first query's list, at ranks 1 and 2 (P-A2).
_RANK_ONE = {"sources": [{"url": "https://f.example.test/1", "title": "first"}, {"url": "https://f.example.test/1",
                                                                                 "title": "first again"},
                         {"url": "https://f.example.test/2", "title": "third"}], "truncated": False}
_RANK_TWO = {"sources": [{"url": "https://g.example.test/1", "title": "one"}, {"url": "https://g.example.test/2",
                                                                              "title": "two"}], "truncated": False}
# Two answered queries of about 100 characters whose first 60 agree (P-A3).
_STEM = "pinned long query about how a batch labels each answer it merges, "
_LONG_QUERIES = (_STEM + "the first of two searches, told apart only here",
                 _STEM + "the second of two searches, told apart only here")
_LONG_ONE = {"sources": [{"url": "https://h.example.test/1"}], "content": "answered for the first long query",
             "truncated": False}
_LONG_TWO = {"sources": [{"url": "https://h.example.test/2"}], "content": "answered for the second long query",
             "truncated": False}
# Two queries whose providers answer with the same words (P-A4).
_SAME = "both searches answered with these same words"
_SAME_ONE = {"sources": [{"url": "https://i.example.test/1"}], "content": _SAME, "truncated": False}
_SAME_TWO = {"sources": [{"url": "https://i.example.test/2"}], "content": _SAME, "truncated": False}
# Families the generator shows only now and then, or never, run first whatever the seed:
# - a one-query result that lists a URL twice comes back as the provider gave it (the dedup is the merge's; a
#   one-item array is not merged). The default seed's 200 scenarios hold it twice; 9 of seeds 0-19 none (a review
#   of the halved counts, issue 18);
# - two URLs that differ by their fragment alone are two URLs (dedup "by exact URL"): no seed's scenarios hold
#   such a pair (the same review);
# - two queries that differ by a leading space alone, each with its own answer: a batch that searches both labels
#   each answer with its query as given, so the model can tell them apart (hunt O-A3: '### <query>' lines that trim
#   the query put both under '### pinned pad', certified; no generated query carries surrounding whitespace).
#   A target that trims queries, and so makes one search, is judged as that one-query call (see trimmed);
# - a URL repeated inside one query's list of a batch: its repeat uses up that query's turn at its rank, as a URL
#   another query listed first does (hunt P-A2: a merge that deduplicated each list before the round-robin, so the
#   repeat freed its rank, was certified; the default seed's scenarios hold no such batch it would reorder);
# - two answered queries of about 100 characters whose first 60 agree: each label shows its whole query (hunt P-A3:
#   labels cut to 39 characters and an ellipsis, both answers under one label, were certified; generated queries
#   are 10 characters at most);
# - two queries answered with the same words: the answer stands under each query's label (hunt P-A4: an answer
#   shown once, under the first query's label only, was certified; generated answers are random words).
PINNED = (
    Scenario(("pinned repeat",), (("pinned repeat", _REPEATED),), ("pinned repeat",), 6, 4),
    Scenario(("pinned repeat", "pinned repeat"), (("pinned repeat", _REPEATED),), ("pinned repeat",), 6, 4),
    Scenario(("pinned fragment", "pinned page"), (("pinned fragment", _WHOLE), ("pinned page", _BARE)),
             ("pinned fragment", "pinned page"), 6, 4),
    Scenario(("pinned pad", " pinned pad"), (("pinned pad", _PAD), (" pinned pad", _PADDED)),
             ("pinned pad", " pinned pad"), 6, 4),
    Scenario(("pinned rank one", "pinned rank two"), (("pinned rank one", _RANK_ONE), ("pinned rank two", _RANK_TWO)),
             ("pinned rank one", "pinned rank two"), 6, 4),
    Scenario(_LONG_QUERIES, ((_LONG_QUERIES[0], _LONG_ONE), (_LONG_QUERIES[1], _LONG_TWO)), _LONG_QUERIES, 6, 4),
    Scenario(("pinned same one", "pinned same two"), (("pinned same one", _SAME_ONE), ("pinned same two", _SAME_TWO)),
             ("pinned same one", "pinned same two"), 6, 4),
)


def trimmed(s: Scenario) -> Scenario | None:
    """``s`` as a target that trims its queries runs it, where trimming leaves fewer distinct queries and each
    trimmed query is one the scenario answers; else None. Seed 000 removes exact duplicate strings and says nothing
    of whitespace around a query, so whether a query is trimmed before is open: such a target makes one search for
    " pinned pad" and "pinned pad", and its result is that search's, returned as a one-query result (or merged, if
    other queries remain). The scripted route holds that search until its hold limit, for the untrimmed query."""
    queries = tuple(q.strip() for q in s.queries)
    distinct = list(dict.fromkeys(queries))
    answers = dict(s.answers)
    if len(distinct) == len(s.distinct) or any(q not in answers for q in distinct):
        return None
    return replace(s, queries=queries, answers=tuple((q, answers[q]) for q in distinct),
                   order=tuple(q for q in s.order if q in distinct))


def _seam(answer: Mapping[str, Any]) -> SearchResult:
    sources = tuple(
        Source(url=s["url"], title=s.get("title"), snippet=s.get("snippet"), published_at=s.get("published_at"))
        for s in answer["sources"]
    )
    return SearchResult(sources=sources, content=answer.get("content"), truncated=answer["truncated"])


def expect(s: Scenario) -> Expected:
    """The oracle (seed 000): the first failure in completion order, else the provider's result unchanged
    for one distinct query, else the round-robin merge with answers labelled by query."""
    answers = dict(s.answers)
    for query in s.order:
        answer = answers[query]
        if isinstance(answer, Failure):
            return Expected(error_code=answer.code)
    results = [_seam(a) for a in answers.values() if not isinstance(a, Failure)]
    if len(results) == 1:
        return Expected(value=results[0].to_json(), single=True)
    merged = merge_by_seed(s.distinct, results, s.cap)
    folded = _merge_folded(s.distinct, results, s.cap)
    labelled = tuple((q, r.content) for q, r in zip(s.distinct, results, strict=True) if r.content)
    return Expected(value=merged.to_json(), labelled=labelled, folded=None if folded == merged else folded.to_json())


def url_key(url: str) -> str:
    """``url`` with its scheme and host (not its user info, path or query) in lower case: their letter case
    carries no meaning (RFC 3986 6.2.2.1), so two URLs with one key are one URL."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    cut = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    user, at, host = rest[:cut].rpartition("@")
    return f"{scheme.lower()}://{user}{at}{host.lower()}{rest[cut:]}"


def _merge_folded(queries: Sequence[str], results: Sequence[SearchResult], cap: int) -> SearchResult:
    """The merge with URLs keyed by :func:`url_key`: each source kept as its first occurrence spells it."""
    return merge_by_seed(queries, results, cap, key=url_key)


def _fields(sources: object) -> list[tuple[object, ...]] | None:
    if not isinstance(sources, list):
        return None
    return [
        tuple(s.get(k) for k in ("url", "title", "snippet", "published_at")) if isinstance(s, dict) else (s,)
        for s in sources
    ]


def _blocks(content: str) -> list[tuple[str, str]] | None:
    """``### <query>`` blocks of a merged content as (query, answer); None when text precedes the first."""
    before = content.split("\n### ", 1)[0] if not content.startswith("### ") else ""
    if before.strip():
        return None
    return [(query.strip(), answer.strip()) for query, answer in _sections(content)]


def _content_problems(got: object, want: Expected) -> list[str]:
    assert want.value is not None
    if want.single:
        expected = want.value.get("content")
        return [] if got == expected else [f"content {got!r}, expected the provider's answer unchanged: {expected!r}"]
    if not want.labelled:
        return [] if got in (None, "") else [f"content {got!r}, expected none (no query returned an answer)"]
    blocks = _blocks(got) if isinstance(got, str) else None
    pairs = sorted((q.strip(), a) for q, a in want.labelled)
    if blocks is None or sorted(blocks) != pairs:
        return [f"content {got!r} does not give each answer under its own '### <query>' heading: expected {pairs}"]
    return []


def _heading(line: str, framed: bool) -> str | None:
    """What a '### ' line shows after '### ' (trailing whitespace aside), or None. In the model-visible text
    (``framed``) a heading framed as the text likes (in a blockquote, indented) is one too (a hunt's
    blockquoted provider answer, headings and all, was failed as unlabelled); a value's content is exact."""
    line = _unframed(line) if framed else line
    return line[4:].rstrip() if line.startswith("### ") else None


def _label_lines(text: str) -> list[str]:
    return sorted(head.strip() for line in text.split("\n") if (head := _heading(line, True)) is not None)


def _runs_on(char: str) -> bool:
    # A letter, digit, non-ASCII character or URL punctuation right after a URL reads as part of it.
    return char.isalnum() or ord(char) > 127 or char in "/-_~%#&=+@$"


def shown_at(url: str, text: str) -> int:
    """Where ``url`` first occurs whole in ``text`` (not followed by a character that would read as more of
    the URL: the end, a space, a bracket, a quote or sentence punctuation may follow), or -1."""
    at = text.find(url)
    while at != -1:
        end = at + len(url)
        if end == len(text) or not _runs_on(text[end]):
            return at
        at = text.find(url, at + 1)
    return -1


def _unframed(line: str) -> str:
    """A text line without the framing a layout may give it (indentation, blockquote markers, trailing space):
    how the text frames an answer is free (a hunt's blockquoted answers were failed as not shown)."""
    return line.lstrip(" \t>").rstrip()


def _unframed_text(text: str) -> str:
    return "\n".join(_unframed(line) for line in text.split("\n"))


def _shown_lines(text: str) -> list[str]:
    """The non-blank lines of ``text``, unframed and stripped."""
    return [line for line in (_unframed(raw).strip() for raw in text.split("\n")) if line]


# A lead-in of the text's own before an answer: a short label and its colon or dash ('**Answer:** ', 'Provider
# answer - ', '答案：'), never prose that happens to end before an answer's words (a final read's false failure).
_LEAD_IN = re.compile(r"[\W_]*\w+(?: \w+){0,2}[\W_]*[:\-\u2013\u2014\uff1a][\W_]*")


def _ends_with(line: str, part: str) -> bool:
    """``line`` is ``part``, or ends with it after a lead-in of the text's own (see :data:`_LEAD_IN`)."""
    if line == part:
        return True
    lead = line[: -len(part)] if line.endswith(part) else ""
    return 0 < len(lead) <= 40 and _LEAD_IN.fullmatch(lead) is not None


def _holds(lines: Sequence[str], answer: str) -> bool:
    """Whether ``lines`` (see :func:`_shown_lines`) show ``answer`` whole: its lines in a row, framing aside,
    the first of them maybe after a lead-in (a review's false failure: '**Answer:** ...' under its label)."""
    want = _shown_lines(answer)
    return bool(want) and any(_ends_with(line, want[0]) and list(lines[n + 1 : n + len(want)]) == want[1:]
                              for n, line in enumerate(lines))


def unjudged_labels(fields: Mapping[str, Sequence[str]], answers: Sequence[str]) -> set[str]:
    """The queries (stripped) whose label no text can show apart from their sources: one of their sources' titles
    or excerpts (``fields``) reads as one of the ``answers`` whole, so a heading over that source, shown on a line
    of its own, reads as a heading over the answer, and the answer reads as the source (the generator draws
    both from one word list). Their labels are not judged; every other query's are."""
    return {query for query, own in fields.items()
            if any(_holds([field.strip() for field in own], answer) for answer in answers)}


def answer_labels(text: str, sources: Mapping[str, Sequence[str]], answers: Sequence[str]) -> list[str]:
    """The queries whose '### <query>' line in a batch's ``text`` labels an answer (sorted): under it, before
    the next '### ' line, one of the ``answers`` stands whole (see :func:`_holds`), or a line showing a URL of
    another query's sources but none of its own (``sources``: each query's URLs, keyed by the stripped
    query). Seed 000 prefixes answers with these headings but does not reserve them for answers, and lays
    the sources out as the text likes (merged or under each query), so a heading over its query's own sources
    labels no answer, however each is shown (a title or an excerpt on a line of its own, a hunt's false
    failure), nor does a heading over a note that the query found nothing (no provider answer), nor a heading
    that names no query (a '### Sources' section); see :func:`unjudged_labels` for the queries whose sources'
    own lines read as answers. The text's closing lines (after its last line showing a source or
    ending with a line of one of the ``answers``: a note, a reminder to cite) stand under no heading."""
    lines = text.split("\n")
    every = [url for urls in sources.values() for url in urls]
    said = [line for answer in answers for line in _shown_lines(answer)]

    def shows(line: str, urls: Sequence[str]) -> bool:
        return any(shown_at(url, line) >= 0 for url in urls)

    def answered(line: str) -> bool:
        return any(_ends_with(_unframed(line).strip(), part) for part in said)

    end = max((n + 1 for n, line in enumerate(lines) if answered(line) or shows(line, every)), default=0)
    labels = []
    for n, line in enumerate(lines):
        head = _heading(line, True)
        query = head.strip() if head is not None else ""
        if head is None or query not in sources:
            continue
        own = sources[query]
        body: list[str] = []
        foreign = False
        for under in lines[n + 1 : end]:
            if _heading(under, True) is not None:
                break
            shown = _unframed(under).strip()
            if not shown or shows(under, own):
                continue  # blank, or one of its own sources
            foreign = foreign or shows(under, every)
            body.append(shown)
        if foreign or any(_holds(body, answer) for answer in answers):
            labels.append(query)
    return sorted(labels)


def content_answers(content: str) -> list[str]:
    """The answers a value's ``content`` carries: each '### <query>' block's, or the whole when it has none."""
    blocks = [body for _, body in _sections(content) if body.strip()]
    return blocks or ([content] if content.strip() else [])


def _answers_elsewhere(s: Scenario, text: str, want: Expected) -> list[str]:
    """In a batch, an answer shown whole under another answered query's label too (a review's false pass: each
    label over every answer so far, an accumulator where the query's own was meant): the model cannot tell
    which search gave it. An answer its own answer holds (the same words) is its own; lines showing a source
    (its URL, or its title or excerpt on a line of its own) are no answer's, and an answer a source's title or
    excerpt holds is not judged here (a line showing that source, framed as the text likes, reads as it)."""
    if want.single:
        return []
    served = [src for _, a in s.answers if not isinstance(a, Failure) for src in a["sources"]]
    urls = [str(src.get("url")) for src in served]
    fields = {str(src[key]).strip() for src in served for key in ("title", "snippet") if src.get(key)}
    problems = []
    for head, body in _sections(text, framed=True):
        mine = [answer for query, answer in want.labelled if query.strip() == head.strip()]
        if not mine:
            continue  # a heading of a query without an answer: answer_labels judges it
        lines = [line for line in _shown_lines(body)
                 if line not in fields and not any(shown_at(url, line) >= 0 for url in urls)]
        for query, answer in want.labelled:
            if query.strip() != head.strip() and not any(_holds(_shown_lines(m), answer) for m in mine) \
                    and not any(_holds([field], answer) for field in fields) and _holds(lines, answer):
                problems.append(f"the text shows {query.strip()!r}'s answer {answer!r} under '### {head.strip()}' "
                                "too, another query's label")
    return problems


def compare(s: Scenario, want: Expected, ok: bool, value: Any, text: str | None, error_code: str | None) -> list[str]:
    """How an answer differs from the oracle; empty when it agrees on everything seed 000 decides."""
    if want.error_code is not None:
        if ok:
            return [f"expected the failure {want.error_code} (the first in time), got a result"]
        if error_code != want.error_code:
            return [f"error {error_code}, expected {want.error_code}: the first failure in time, with its own code"]
        return []
    if not ok or not isinstance(value, dict):
        return [f"expected a result, got error {error_code}"]
    assert want.value is not None
    problems: list[str] = []
    expected = want.value
    got_sources, want_sources = _fields(value.get("sources")), _fields(expected["sources"])
    folded = want.folded
    got = (got_sources, value.get("truncated"))
    if folded is not None and got == (_fields(folded["sources"]), folded["truncated"]):
        expected, want_sources = folded, got_sources  # sources and truncated of the one merge, never mixed
    if got_sources != want_sources:
        problems.append(f"sources {got_sources}, expected {want_sources}")
    if value.get("truncated") is not expected["truncated"]:
        problems.append(f"truncated={value.get('truncated')!r}, expected {expected['truncated']}")
    problems += _content_problems(value.get("content"), want)
    # Each answer under its own label first (a label shown without its answer says so), then no label beside:
    # one query's result carries none, a batch's '### <query>' lines over that query's own sources alone are
    # no answer labels (see answer_labels).
    problems += _answers_shown(text or "", want)
    problems += _answers_elsewhere(s, text or "", want)
    problems += _twins_told_apart(text or "", want, "the text", framed=True)
    content = value.get("content")
    problems += _twins_told_apart(content if isinstance(content, str) else "", want, "the value's content")
    unjudged: set[str] = set()
    if want.single:  # a heading naming no query (a '### Sources' section) is no label
        labels = [label for label in _label_lines(text or "") if label == s.distinct[0].strip()]
    else:
        served: dict[str, list[str]] = {}
        fields: dict[str, list[str]] = {}
        for q, a in s.answers:  # queries differing by surrounding whitespace alone share a key, and their sources
            if not isinstance(a, Failure):
                served.setdefault(q.strip(), []).extend(str(src.get("url")) for src in a["sources"])
                fields.setdefault(q.strip(), []).extend(
                    str(src[key]) for src in a["sources"] for key in ("title", "snippet") if src.get(key))
        said = [answer for _, answer in want.labelled]
        unjudged = unjudged_labels(fields, said)
        labels = [label for label in answer_labels(text or "", served, said) if label not in unjudged]
    expected_labels = sorted(q.strip() for q, _ in want.labelled if q.strip() not in unjudged)
    if labels != expected_labels:
        problems.append(f"the text labels answers {labels}, expected {expected_labels}")
    return problems


def _answers_shown(text: str, want: Expected) -> list[str]:
    """Seed 000: the model sees each provider answer, in a batch under its own '### <query>' label (so it
    can tell which answer came from which search); how the text frames it is free."""
    assert want.value is not None
    if want.single:
        answer = want.value.get("content")
        shown = not answer or _unframed_text(answer).strip() in _unframed_text(text)
        return [] if shown else [f"the text does not show the provider's answer {answer!r}"]
    under: dict[str, str] = {}
    for head, body in _sections(text, framed=True):
        under[head.strip()] = under.get(head.strip(), "") + body + "\n"
    return [f"the text does not show the answer {answer!r} under its label '### {query.strip()}'"
            for query, answer in want.labelled if _unframed_text(answer).strip() not in under.get(query.strip(), "")]


def _sections(text: str, framed: bool = False) -> list[tuple[str, str]]:
    """Each '### ' line of ``text`` as (its query, trailing whitespace aside; the lines under it up to the next
    '### ' line). Lines before the first such line belong to none. ``framed``: the model-visible text, whose
    headings and lines may be framed (see :func:`_heading`); the lines come unframed."""
    sections: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        head = _heading(line, framed)
        if head is not None:
            sections.append((head, []))
        elif sections:
            sections[-1][1].append(_unframed(line) if framed else line)
    return [(head, "\n".join(lines)) for head, lines in sections]


def _twins_told_apart(text: str, want: Expected, where: str, framed: bool = False) -> list[str]:
    """Answers of queries that differ by surrounding whitespace alone (" pinned pad", "pinned pad"): each stands
    under a '### ' line showing its own query as given (the line's trailing whitespace aside), so their labels
    differ. Seed 000 labels answers 'so the model can tell which answer came from which search'; the stripped
    comparison of the other judgements (a label's trailing space, the layout around it) would take one label
    for both. Every other answer is judged as before (by :func:`_content_problems` and :func:`_answers_shown`)."""
    stripped = [q.strip() for q, _ in want.labelled]
    twins = [(q, a) for q, a in want.labelled if stripped.count(q.strip()) > 1]
    if not twins:
        return []
    blocks = _sections(text, framed)
    shown = _unframed_text if framed else str
    heads = {answer: [head for head, under in blocks if shown(answer).strip() in under] for _, answer in twins}
    queries = [q for q, _ in twins]
    return [f"{where} shows the answer {answer!r} under {[f'### {h}' for h in heads[answer]]}, not under a '### ' "
            f"line showing its own query {query!r} as given: the queries {queries} differ by surrounding whitespace "
            "alone, and a label that drops it leaves the model unable to tell which answer came from which search"
            for query, answer in twins if query.rstrip() not in heads[answer]]


def shrink_candidates(s: Scenario) -> Iterator[Scenario]:
    """Smaller variants of ``s``, simplest first: fewer queries, then fewer sources and flags."""
    for i in range(len(s.queries)):
        if s.queries.count(s.queries[i]) > 1 and s.queries.index(s.queries[i]) < i:
            yield replace(s, queries=s.queries[:i] + s.queries[i + 1 :])
    if len(s.answers) > 1:
        for query, _ in s.answers:
            yield replace(
                s,
                queries=tuple(q for q in s.queries if q != query),
                answers=tuple(a for a in s.answers if a[0] != query),
                order=tuple(q for q in s.order if q != query),
            )
    for i, (_, answer) in enumerate(s.answers):
        if isinstance(answer, Failure):
            yield _with(s, i, {"sources": [], "truncated": False})
            continue
        for j in range(len(answer["sources"])):
            yield _with(s, i, {**answer, "sources": answer["sources"][:j] + answer["sources"][j + 1 :]})
        if "content" in answer:
            yield _with(s, i, {k: v for k, v in answer.items() if k != "content"})
        if answer["truncated"]:
            yield _with(s, i, {**answer, "truncated": False})
        for j, source in enumerate(answer["sources"]):
            if len(source) > 1:
                yield _with(s, i, {**answer, "sources": [*answer["sources"][:j], {"url": source["url"]},
                                                        *answer["sources"][j + 1 :]]})


def _with(s: Scenario, index: int, answer: Failure | dict[str, Any]) -> Scenario:
    answers = list(s.answers)
    answers[index] = (answers[index][0], answer)
    return replace(s, answers=tuple(answers))
