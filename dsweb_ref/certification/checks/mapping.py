"""How each search protocol's answer becomes shared sources (seed 001): which upstream field feeds
which source field, in service order, with nothing invented. Each case scripts one upstream answer
(through the emulator's ordinary ``Status(200, body=...)`` fault) and states the sources it must give.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...emulator import Status
from ..cases import ORDER, Case
from ..targets import CallOutcome
from ._base import PROVIDER_ERROR, CheckContext, check, expect_error, expect_success, lone_surrogates, require
from ._oracle import query_match
from ._script import answer_body, value_sources

WS, API, MSG = "web_search", "search-api", "messages-search"
QUERY = "mapping probe"
Expected = Sequence[tuple[str, str | None, str | None, str | None]]  # (url, title, snippet, published_at)


def _result(url: str, title: str, snippet: str, summary: str, date: str | None, score: float) -> dict[str, Any]:
    return {"url": url, "title": title, "snippet": snippet, "summary": summary, "content": "", "date": date,
            "site_name": "Example", "site_icon": "https://example.test/icon.png", "rerank_score": score,
            "authority": 3}


API_CASES = (
    Case("snippet beside a long summary", "the model-facing summary used as the snippet",
         {"results": [_result("https://m.example.test/1", "One", "short one", "a long summary " * 40,
                              "2026-06-01T00:00:00+00:00", 2.4)],
          "expected": [("https://m.example.test/1", "One", "short one", "2026-06-01T00:00:00+00:00")]}),
    Case("service order with rising scores", "sources re-sorted by rerank_score or authority",
         {"results": [_result(f"https://m.example.test/{i}", f"T{i}", f"s{i}", "sum", "2026-01-01", score)
                      for i, score in ((1, 0.5), (2, 2.9), (3, 1.2))],
          "expected": [(f"https://m.example.test/{i}", f"T{i}", f"s{i}", "2026-01-01") for i in (1, 2, 3)]}),
    Case("a repeated URL before another result", "the results after a repeated URL dropped",
         {"results": [_result("https://m.example.test/r", "R", "s1", "sum", None, 2.0),
                      _result("https://m.example.test/r", "R again", "s2", "sum", None, 1.5),
                      _result("https://m.example.test/after", "After", "s3", "sum", None, 1.0)],
          "expected": [("https://m.example.test/r", "R", "s1", None),
                       ("https://m.example.test/after", "After", "s3", None)],
          "repeat_open": True}),
    Case("null date", "a null date turned into text ('None', 'null') or a made-up date",
         {"results": [_result("https://m.example.test/n", "N", "s", "sum", None, 1.0)],
          "expected": [("https://m.example.test/n", "N", "s", None)]}),
    Case("date passed as served", "the date re-formatted (to a day, to UTC)",
         {"results": [_result("https://m.example.test/d", "D", "s", "sum", "2026-10-16T08:30:00+08:00", 1.0)],
          "expected": [("https://m.example.test/d", "D", "s", "2026-10-16T08:30:00+08:00")]}),
    # The seed maps the title and consumes no site_name; what an untitled source shows instead (no title,
    # the host, the URL) is left open, so only the row's other fields are compared.
    Case("no title, a site_name", "the site_name taken as the title (in the source or the model-visible text)",
         {"results": [{"url": "https://m.example.test/untitled", "snippet": "an untitled page", "date": None,
                       "summary": "sum", "site_name": "Acme Daily Herald", "rerank_score": 1.0, "authority": 2}],
          "expected": [("https://m.example.test/untitled", None, "an untitled page", None)],
          "site_name": "Acme Daily Herald"}),
)
# A result whose title, snippet and date are not text: the shared source's fields are text, so they
# are dropped, turned into text, or the answer is refused as malformed; never carried as a number,
# a list or an object (and the URL is kept: it is the one field the seed requires).
WRONG_TYPES = Case(
    "title, snippet and date of the wrong type", "a non-text title, snippet or date carried into the source as is",
    {"results": [{"url": "https://m.example.test/t", "title": 7, "snippet": ["s"], "date": {"y": 2026}}]},
)

# The service's JSON may escape a lone surrogate (\ud800): valid JSON, but no Unicode text. It never
# reaches a source or the model (replaced, dropped, or the answer refused as malformed), while a
# surrogate pair, one astral character, is text like any other.
LONE = Case(
    "a lone surrogate escaped in the title and snippet", "a lone surrogate carried into a source or the "
    "model-visible text, which then is no Unicode text (a model API refuses it or the encoder crashes); "
    "the text cut at the bad character",
    # the answer as served: ASCII JSON text with the escapes, so the catalogue can print the row
    {"answer": json.dumps({"results": [_result("https://m.example.test/lone", "Caf\ud800 menu", "tail \udc00 end",
                                                "sum", None, 1.0)]})},
)
PAIR = Case(
    "a surrogate pair escaped in the title", "every surrogate escape treated as broken: the astral character "
    "replaced or dropped, or the answer refused",
    {"results": [_result("https://m.example.test/pair", "Menu \U0001f600 today", "s", "sum", None, 1.0)],
     "expected": [("https://m.example.test/pair", "Menu \U0001f600 today", "s", None)]},
)


def _same(got: list[tuple[Any, ...]], expected: Expected) -> bool:
    """Equal, where the seed leaves an absent field's spelling open (absent, null or empty)."""
    if len(got) != len(expected):
        return False
    pairs = zip(got, expected, strict=True)
    return all(tuple(g or None for g in row) == tuple(want) for row, want in pairs)


async def _answer(ctx: CheckContext, body: bytes, **settings: Any) -> CallOutcome:
    """One search for QUERY answered with ``body``, under searchMaxResults 20 and ``settings``."""
    route = ctx.search_route
    ctx.fresh()
    await ctx.configure(search_max_results=20, **settings)
    ctx.emu.inject(route, Status(200, body=body), when=query_match(route, QUERY))
    return await ctx.search([QUERY])


@check(
    "search.api.mapping",
    "Search API results map url, title, snippet and date onto sources, in service order",
    seed="001",
    requires=(WS, API),
    provider="api",
    rule="Seed 001: 'The provider preserves service order and maps URL, title, snippet, and nullable date into "
    "shared sources'; 'It does not consume summary, full content, site_name, site_icon, rerank_score, or "
    "authority'. So snippet is the snippet (never the summary), the date passes as served or is absent when "
    "null, and the order is the service's. An untitled result's title is never its site_name (in the source "
    "or the model-visible text, which shows no site_name); what stands in for it is open. The shared source's "
    "fields are text: a title, snippet or date served as something else never reaches a source as is "
    "(dropped, made text, or the answer refused). A lone surrogate the JSON escapes is no text: like the "
    "'malformed responses' the seed's provider tests cover, it never reaches a source or the model (what "
    "stands in for it, or dropping the field, is open; a field is not cut there; refusing the answer is "
    "right too), while an escaped surrogate pair is one character, kept.",
    cases=(*API_CASES, WRONG_TYPES, LONE, PAIR),
)
async def api_mapping(ctx: CheckContext) -> None:
    for case in API_CASES:
        outcome = await _answer(ctx, json.dumps({"results": case["results"]}).encode())
        got = value_sources(expect_success(outcome, case.name))
        site_name: str | None = case.params.get("site_name")
        if site_name is not None:  # an untitled result: any title but the site_name, which no text shows
            require(all(site_name not in row[1:2] for row in got), f"{case.name}: the site_name became the title",
                    sources=got)
            require(site_name not in (outcome.text or ""), f"{case.name}: the model-visible text shows the "
                    f"site_name {site_name!r}", text=outcome.text)
            got = [(*row[:1], None, *row[2:]) for row in got]
        if case.params.get("repeat_open"):  # one answer repeating a URL: kept once or twice is open (seed 000
            got = _first_per_url(got)  # dedups batches only)
        require(_same(got, case["expected"]), f"{case.name}: sources {got}, expected {case['expected']}")
    outcome = await _answer(ctx, json.dumps({"results": WRONG_TYPES["results"]}).encode())
    if outcome.error_code is not None:  # refusing the malformed answer is a right reading too
        expect_error(outcome, WRONG_TYPES.name, PROVIDER_ERROR)
        return
    got = value_sources(expect_success(outcome, WRONG_TYPES.name))
    require(len(got) == 1 and got[0][0] == "https://m.example.test/t", f"{WRONG_TYPES.name}: sources {got}")
    require(all(field is None or isinstance(field, str) for field in got[0][1:]),
            f"{WRONG_TYPES.name}: source fields {got[0][1:]!r} are not text")
    await _surrogates(ctx)


def _first_per_url(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Source rows with each URL's first row only: where keeping a repeat is open, the first is compared."""
    kept: list[tuple[Any, ...]] = []
    for row in rows:  # compared, not hashed: a target's URL may be any JSON value
        if all(row[0] != k[0] for k in kept):
            kept.append(row)
    return kept


async def _surrogates(ctx: CheckContext) -> None:
    # json.dumps escapes a lone surrogate as \udxxx and an astral character as its pair, as a service would.
    outcome = await _answer(ctx, LONE["answer"].encode())
    if outcome.error_code is not None:
        expect_error(outcome, LONE.name, PROVIDER_ERROR)
    else:
        value = expect_success(outcome, LONE.name)
        require([row[0] for row in value_sources(value)] == ["https://m.example.test/lone"],
                f"{LONE.name}: sources {value_sources(value)}")
        lone = lone_surrogates([value, outcome.text])
        require(not lone, f"{LONE.name}: the value or the model-visible text carries the lone surrogate(s) "
                f"{', '.join(lone)}", value=value)
        # What stands in for the bad character (U+FFFD, "?", nothing, a visible escape) is open, and so is
        # dropping the field (absent, empty, or an untitled source's stand-in); only a field cut there fails.
        _url, title, snippet, _date = value_sources(value)[0]
        for got, head, tail in ((title, "Caf", " menu"), (snippet, "tail", " end")):
            require(not got or not got.startswith(head) or got.endswith(tail),
                    f"{LONE.name}: {got!r} was cut at its lone surrogate ({head!r} … {tail!r} served)")
    outcome = await _answer(ctx, json.dumps({"results": PAIR["results"]}).encode())
    got = value_sources(expect_success(outcome, PAIR.name))
    require(_same(got, PAIR["expected"]), f"{PAIR.name}: sources {got}, expected {PAIR['expected']}")


def _cited(text: str, citations: Sequence[tuple[str, str]]) -> dict[str, Any]:
    return {"type": "text", "text": text, "citations": [
        {"type": "web_search_result_location", "url": url, "title": None, "cited_text": cited,
         "encrypted_index": "aW5kZXg="} for url, cited in citations]}


def _messages(params: Mapping[str, Any]) -> bytes:
    """A Messages answer: one result block holding ``results``, then a text block citing ``citations``.
    ``shape`` "empty-block-first": a result block with null content comes before it; "prose-first": an
    uncited text block comes before the cited one (as real answers open). ``second_search``: a second
    native search (its server_tool_use and result block) follows the first; ``more_citations``: after
    an uncited text block, a second text block cites them (answers cite block by block)."""
    base = json.loads(answer_body("messages", QUERY, []))
    base["content"][1]["content"] = params["results"]
    shape = params.get("shape", "")
    if shape == "empty-block-first":
        base["content"].insert(1, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_empty", "content": None})
    second = params.get("second_search")
    if second is not None:
        base["content"] += [
            {"type": "server_tool_use", "id": "srvtoolu_second", "name": "web_search", "input": {"query": "more"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_second", "content": second}]
        base["usage"]["server_tool_use"]["web_search_requests"] = 2
    if shape == "prose-first":
        base["content"].append({"type": "text", "text": "Here is what I found:"})
    base["content"].append(_cited("Cited.", params["citations"]))
    if "more_citations" in params:
        base["content"] += [{"type": "text", "text": "\n\n"}, _cited("Cited again.", params["more_citations"])]
    return json.dumps(base).encode()


def _hit(url: str, title: str, page_age: str | None = None, kind: str = "web_search_result") -> dict[str, Any]:
    return {"type": kind, "url": url, "title": title, "encrypted_content": "ZW5j", "page_age": page_age}


MESSAGES_CASES = (
    # Which excerpt of a URL cited twice is its snippet is open (the first, the last, the longest): seed 001
    # says only that Harness "extracts sources and citation excerpts". One excerpt as cited is the snippet.
    Case("a URL cited twice", "the excerpts of a URL cited twice joined into one snippet, not one excerpt as cited",
         {"results": [_hit("https://c.example.test/1", "One", "2026-02-02")],
          "citations": [("https://c.example.test/1", "first excerpt"),
                        ("https://c.example.test/1", "second excerpt")],
          "expected": [("https://c.example.test/1", "One", "first excerpt", "2026-02-02")]}),
    Case("empty first excerpt", "an empty cited_text taken as the excerpt, hiding the next one",
         {"results": [_hit("https://c.example.test/e", "E")],
          "citations": [("https://c.example.test/e", ""), ("https://c.example.test/e", "the excerpt")],
          "expected": [("https://c.example.test/e", "E", "the excerpt", None)]}),
    Case("uncited text before the citations", "the citation scan stopped at a text block without citations",
         {"results": [_hit("https://c.example.test/p", "P")], "citations": [("https://c.example.test/p", "cited")],
          "shape": "prose-first", "expected": [("https://c.example.test/p", "P", "cited", None)]}),
    Case("a result block without content first", "the results after an empty result block dropped",
         {"results": [_hit("https://c.example.test/s", "S")], "citations": [], "shape": "empty-block-first",
          "expected": [("https://c.example.test/s", "S", None, None)], "may_refuse": True}),
    Case("uncited result", "a snippet invented for a result no citation names (title, another excerpt)",
         {"results": [_hit("https://c.example.test/a", "A"), _hit("https://c.example.test/b", "B")],
          "citations": [("https://c.example.test/a", "about a")],
          "expected": [("https://c.example.test/a", "A", "about a", None),
                       ("https://c.example.test/b", "B", None, None)]}),
    # Kept once or twice is open, as in a Search API answer (seed 000 dedups the sources of a batch only).
    Case("repeats", "the page_age re-formatted, or the results after a repeated URL dropped",
         {"results": [_hit("https://c.example.test/x", "X"), _hit("https://c.example.test/x", "X again"),
                      _hit("https://c.example.test/y", "Y", "May 1, 2026")],
          "citations": [], "repeat_open": True,
          "expected": [("https://c.example.test/x", "X", None, None),
                       ("https://c.example.test/y", "Y", None, "May 1, 2026")]}),
    Case("another item type", "a non-result item kept as a source",
         {"results": [_hit("https://c.example.test/x", "X"), _hit("https://c.example.test/e", "E", kind="other")],
          "citations": [], "expected": [("https://c.example.test/x", "X", None, None)], "may_refuse": True}),
    Case("another item type before a result with its URL", "repeats judged before other item types are "
         "skipped, so the result is dropped as a repeat of the item",
         {"results": [_hit("https://c.example.test/o", "O", kind="other"), _hit("https://c.example.test/o", "R")],
          "citations": [], "expected": [("https://c.example.test/o", "R", None, None)], "may_refuse": True},
         family=ORDER),
    Case("two native searches in one answer", "only the first web_search_tool_result block mapped, so the "
         "sources of a later native search (max_uses above 1) are lost",
         {"results": [_hit("https://c.example.test/first", "First")],
          "second_search": [_hit("https://c.example.test/second", "Second", "2026-03-03")],
          "citations": [("https://c.example.test/first", "from the first search"),
                        ("https://c.example.test/second", "from the second search")],
          "expected": [("https://c.example.test/first", "First", "from the first search", None),
                       ("https://c.example.test/second", "Second", "from the second search", "2026-03-03")]}),
    Case("citations in two text blocks", "excerpts read only from the first text block that carries citations",
         {"results": [_hit("https://c.example.test/one", "One"), _hit("https://c.example.test/two", "Two")],
          "citations": [("https://c.example.test/one", "excerpt one")],
          "more_citations": [("https://c.example.test/two", "excerpt two")],
          "expected": [("https://c.example.test/one", "One", "excerpt one", None),
                       ("https://c.example.test/two", "Two", "excerpt two", None)]}),
    # From an outside hunt (H). count is Direct Search's body field (seed 001: 'Direct Search sends query, count,
    # ...'), and seed 000 bounds the sources returned by searchMaxResults (20 here). The decision: no source is
    # lost silently, so four sources, or fewer with truncated true (the value's flag for sources left out, as
    # search.merge.truncation reads seed 000's cap). Whether a Messages provider may leave any out at all (a
    # bound of its own, signalled) no seed sentence decides: it 'extracts sources'.
    Case("count below the answer's sources", "the Search API count setting applied to Messages sources: count 2 "
         "cuts the answer's four sources to two, with truncated false (sources lost silently)",
         {"results": [_hit(f"https://c.example.test/n{i}", f"N{i}") for i in range(1, 5)], "citations": [],
          "count": 2, "cut_signalled": True,
          "expected": [(f"https://c.example.test/n{i}", f"N{i}", None, None) for i in range(1, 5)]}),
    # From a hunt (S2-5): a URL the answer cites but no result lists (a page the model knew of, a result of an earlier
    # turn) made a source of its own from its citation. Seed 001: Harness 'extracts sources and citation excerpts':
    # the sources are the results; a citation gives an excerpt of one, never a source.
    Case("a citation of a URL no result lists", "a URL the answer cites that no web_search_result lists added as a "
         "source (its title and excerpt taken from the citation)",
         {"results": [_hit("https://c.example.test/listed-1", "Listed one"),
                      _hit("https://c.example.test/listed-2", "Listed two")],
          "citations": [("https://c.example.test/listed-1", "about one"),
                        ("https://elsewhere.example.test/x", "an excerpt of a page no result lists"),
                        ("https://c.example.test/listed-2", "about two")],
          "expected": [("https://c.example.test/listed-1", "Listed one", "about one", None),
                       ("https://c.example.test/listed-2", "Listed two", "about two", None)]}),
)
# Rows marked may_refuse script an answer the official SDK's types reject (a result block whose content
# is null, an item type it does not know): refusing it as malformed (WEB_PROVIDER_ERROR) is a right
# reading too, so an implementation that parses with the SDK strictly is not failed for it.


@check(
    "search.messages.mapping",
    "Messages results map url, title, page_age and a citation excerpt per URL onto sources",
    seed="001",
    requires=(WS, MSG),
    provider="messages",
    rule="Seed 001: Messages search 'extracts sources and citation excerpts but discards the generated answer'. "
    "Sources are the web_search_result items in order (other item types skipped; a repeated URL kept once or "
    "twice, open as in a Search API answer, since seed 000 dedups only a batch's sources) "
    "of every web_search_tool_result block (seed 000: a provider with its own maxUses 'may perform several "
    "native searches inside one ctx.web.search call'), and only they (a URL a text block cites that no result "
    "lists is no source), each with its title, its page_age as the date, and as "
    "snippet a citation excerpt naming its URL in any text block (an empty cited_text is no excerpt), if any: "
    "one excerpt as cited, never another URL's nor one made up; which one when several cite the URL (the "
    "first, the last, the longest) is open, since the seed says only that Harness 'extracts sources and "
    "citation excerpts'. No answer content. An answer the official SDK's types "
    "reject (a result block with null content, an unknown item type) may instead be refused as malformed. "
    "count is Direct Search's ('Direct Search sends query, count, need_content: false, and ori_question'), and "
    "'searchMaxResults bounds only the combined sources returned to the caller' (seed 000): with count "
    "configured below the answer's sources, within searchMaxResults, no source is lost silently: every one is "
    "returned, or those returned are some of them in order and the value is truncated (whether a Messages "
    "provider may leave sources out so is open).",
    cases=MESSAGES_CASES,
)
async def messages_mapping(ctx: CheckContext) -> None:
    count = ctx.config.count
    for case in MESSAGES_CASES:
        body = _messages(case.params)
        outcome = await _answer(ctx, body, count=case.params.get("count", count))
        if case.params.get("may_refuse") and outcome.error_code is not None:
            expect_error(outcome, case.name, PROVIDER_ERROR)
            continue
        value = expect_success(outcome, case.name)
        got = value_sources(value)
        if case.params.get("repeat_open"):  # a repeated URL kept once or twice: the first is compared
            got = _first_per_url(got)
        got = _any_excerpt(got, [*case["citations"], *case.params.get("more_citations", ())])
        if case.params.get("cut_signalled") and not _same(got, case["expected"]):
            require(len(got) < len(case["expected"]) and _in_order(got, case["expected"]),
                    f"{case.name}: sources {got}, expected {case['expected']} or some of them in order")
            require(value.get("truncated") is True, f"{case.name}: {len(got)} of the answer's "
                    f"{len(case['expected'])} sources returned with truncated={value.get('truncated')!r} "
                    "(count is a Direct Search setting; a source left out must be signalled)", sources=got)
        else:
            require(_same(got, case["expected"]), f"{case.name}: sources {got}, expected {case['expected']}")
        require(not value.get("content"), f"{case.name}: the model's prose became answer content")


def _in_order(got: list[tuple[Any, ...]], expected: Expected) -> bool:
    """Each row of ``got`` one of ``expected``'s (as :func:`_same` compares them), in ``expected``'s order."""
    rest = iter(expected)
    return all(any(_same([row], [want]) for want in rest) for row in got)


def _any_excerpt(got: list[tuple[Any, ...]], citations: Sequence[tuple[str, str]]) -> list[tuple[Any, ...]]:
    """Source rows with a snippet that is any non-empty cited_text naming the row's URL read as the first such
    (the one the case table expects): which excerpt of a URL cited several times is the snippet is open."""
    out = []
    for row in got:
        cited = [text for url, text in citations if text and url == row[0]]
        out.append((*row[:2], cited[0], *row[3:]) if cited and row[2] in cited else row)
    return out


def _meta(url: str, **fields: Any) -> dict[str, Any]:
    return {"url": url, "title": "T", "snippet": "s", **fields}


LONG_SUMMARY = ("Der Überblick (概要): " + "a measured summary,  with  spacing\n\nand paragraphs. " * 50)[:2300]
METADATA_CASES = (
    Case("zero score and unknown authority", "a falsy score or the 'unknown' authority (-1) dropped: a cutoff",
         {"results": [_meta("https://q.example.test/z", rerank_score=0, authority=-1, site_name="Zero",
                            summary="z")],
          "expected": [{"rerank_score": 0, "authority": -1, "site_name": "Zero", "summary": "z"}]}),
    Case("low assessments kept in service order", "sources under a score or authority threshold dropped or re-sorted",
         {"results": [_meta("https://q.example.test/1", rerank_score=0.01, authority=0),
                      _meta("https://q.example.test/2", rerank_score=2.9, authority=4),
                      _meta("https://q.example.test/3", rerank_score=1, authority=1)],
          "expected": [{"rerank_score": 0.01, "authority": 0}, {"rerank_score": 2.9, "authority": 4},
                       {"rerank_score": 1, "authority": 1}]}),
    Case("a whole long summary", "the summary cut, or its whitespace collapsed (2,300 characters were measured)",
         {"results": [_meta("https://q.example.test/l", summary=LONG_SUMMARY, site_name="例子 Example")],
          "expected": [{"summary": LONG_SUMMARY, "site_name": "例子 Example"}]}),
    Case("absent fields not invented", "a missing summary, site_name or assessment filled in (empty, zero, null)",
         {"results": [_meta("https://q.example.test/a")], "expected": [{}]}),
    Case("booleans are not assessments", "a boolean rerank_score or authority kept as a number (true == 1)",
         {"results": [_meta("https://q.example.test/b", rerank_score=True, authority=False, summary="b")],
          "expected": [{"summary": "b"}], "may_refuse": True}),
    Case("a summary and site_name that are not text", "a non-text summary or site_name kept as is",
         {"results": [_meta("https://q.example.test/n", summary=7, site_name=["Example"], authority=2)],
          "expected": [{"authority": 2}], "may_refuse": True}),
)
QUALITY = ("summary", "site_name", "rerank_score", "authority")


def _typed(fields: dict[str, Any]) -> dict[str, tuple[str, object]]:
    """Fields compared by JSON kind and value (``true`` is not ``1``; ``3`` equals ``3.0``)."""
    kinds = {k: "bool" if isinstance(v, bool) else "number" if isinstance(v, (int, float)) else "other"
             for k, v in fields.items()}
    return {k: (kinds[k], v) for k, v in fields.items()}


@check(
    "search.api.metadata",
    "Quality metadata (summary, site_name, rerank_score, authority) is kept exactly as served, no cutoff",
    seed="001",
    requires=(WS, API, "quality-metadata"),
    provider="api",
    rule="Seed 001 lists as remaining adoption: 'Retain quality metadata before defining selection policies. "
    "rerank_score and authority describe service assessments, not guarantees of truth; a hard cutoff can "
    "discard useful niche sources.' A target declaring quality-metadata keeps each source's summary, "
    "site_name, rerank_score and authority in its metadata exactly as served (a summary whole, 0 and -1 "
    "kept), invents none that was not served, drops and reorders no source by them, and never takes a "
    "boolean for a number.",
    cases=METADATA_CASES,
)
async def api_metadata(ctx: CheckContext) -> None:
    for case in METADATA_CASES:
        outcome = await _answer(ctx, json.dumps({"results": case["results"]}).encode())
        if case.params.get("may_refuse") and outcome.error_code is not None:
            expect_error(outcome, case.name, PROVIDER_ERROR)  # refusing a malformed answer is right too
            continue
        sources = expect_success(outcome, case.name).get("sources")
        urls = [r["url"] for r in case["results"]]
        require(isinstance(sources, list) and [s.get("url") for s in sources if isinstance(s, dict)] == urls,
                f"{case.name}: sources {sources!r}, expected {urls} in service order")
        assert isinstance(sources, list)
        for source, want in zip(sources, case["expected"], strict=True):
            meta = source.get("metadata") or {}
            require(isinstance(meta, dict), f"{case.name}: metadata {meta!r} is not an object")
            got = {k: meta[k] for k in QUALITY if meta.get(k) is not None}
            require(_typed(got) == _typed(want),
                    f"{case.name}: {source.get('url')} metadata {got!r}, expected {want!r}")
