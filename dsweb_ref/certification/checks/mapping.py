"""How each search protocol's answer becomes shared sources (seed 001): which upstream field feeds
which source field, in service order, with nothing invented. Each case scripts one upstream answer
(through the emulator's ordinary ``Status(200, body=...)`` fault) and states the sources it must give.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...emulator import Status
from ..cases import Case
from ._base import CheckContext, check, expect_success, require
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
    Case("null date", "a null date turned into text ('None', 'null') or a made-up date",
         {"results": [_result("https://m.example.test/n", "N", "s", "sum", None, 1.0)],
          "expected": [("https://m.example.test/n", "N", "s", None)]}),
    Case("date passed as served", "the date re-formatted (to a day, to UTC)",
         {"results": [_result("https://m.example.test/d", "D", "s", "sum", "2026-10-16T08:30:00+08:00", 1.0)],
          "expected": [("https://m.example.test/d", "D", "s", "2026-10-16T08:30:00+08:00")]}),
)


def _same(got: list[tuple[Any, ...]], expected: Expected) -> bool:
    """Equal, where the seed leaves an absent field's spelling open (absent, null or empty)."""
    if len(got) != len(expected):
        return False
    pairs = zip(got, expected, strict=True)
    return all(tuple(g or None for g in row) == tuple(want) for row, want in pairs)


async def _scripted(ctx: CheckContext, body: bytes, what: str) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    route = ctx.search_route
    ctx.fresh()
    await ctx.configure(search_max_results=20)
    ctx.emu.inject(route, Status(200, body=body), when=query_match(route, QUERY))
    value = expect_success(await ctx.search([QUERY]), what)
    return value, value_sources(value)


@check(
    "search.api.mapping",
    "Search API results map url, title, snippet and date onto sources, in service order",
    seed="001",
    requires=(WS, API),
    provider="api",
    rule="Seed 001: 'The provider preserves service order and maps URL, title, snippet, and nullable date into "
    "shared sources'; 'It does not consume summary, full content, site_name, site_icon, rerank_score, or "
    "authority'. So snippet is the snippet (never the summary), the date passes as served or is absent when "
    "null, and the order is the service's.",
    cases=API_CASES,
)
async def api_mapping(ctx: CheckContext) -> None:
    for case in API_CASES:
        body = json.dumps({"results": case["results"]}).encode()
        _, got = await _scripted(ctx, body, case.name)
        require(_same(got, case["expected"]), f"{case.name}: sources {got}, expected {case['expected']}")


def _messages(results: list[dict[str, Any]], citations: list[tuple[str, str]]) -> bytes:
    base = json.loads(answer_body("messages", QUERY, []))
    base["content"][1]["content"] = results
    base["content"].append({"type": "text", "text": "Cited.", "citations": [
        {"type": "web_search_result_location", "url": url, "title": None, "cited_text": text,
         "encrypted_index": "aW5kZXg="} for url, text in citations]})
    return json.dumps(base).encode()


def _hit(url: str, title: str, page_age: str | None = None, kind: str = "web_search_result") -> dict[str, Any]:
    return {"type": kind, "url": url, "title": title, "encrypted_content": "ZW5j", "page_age": page_age}


MESSAGES_CASES = (
    Case("first citation per URL", "a later citation of the same URL used as the snippet",
         {"results": [_hit("https://c.example.test/1", "One", "2026-02-02")],
          "citations": [("https://c.example.test/1", "first excerpt"),
                        ("https://c.example.test/1", "second excerpt")],
          "expected": [("https://c.example.test/1", "One", "first excerpt", "2026-02-02")]}),
    Case("uncited result", "a snippet invented for a result no citation names (title, another excerpt)",
         {"results": [_hit("https://c.example.test/a", "A"), _hit("https://c.example.test/b", "B")],
          "citations": [("https://c.example.test/a", "about a")],
          "expected": [("https://c.example.test/a", "A", "about a", None),
                       ("https://c.example.test/b", "B", None, None)]}),
    Case("other item types and repeats", "a non-result item kept, or a repeated URL kept twice",
         {"results": [_hit("https://c.example.test/x", "X"), _hit("https://c.example.test/e", "E", kind="other"),
                      _hit("https://c.example.test/x", "X again"),
                      _hit("https://c.example.test/y", "Y", "May 1, 2026")],
          "citations": [],
          "expected": [("https://c.example.test/x", "X", None, None),
                       ("https://c.example.test/y", "Y", None, "May 1, 2026")]}),
)


@check(
    "search.messages.mapping",
    "Messages results map url, title, page_age and the first citation excerpt per URL onto sources",
    seed="001",
    requires=(WS, MSG),
    provider="messages",
    rule="Seed 001: Messages search 'extracts sources and citation excerpts but discards the generated answer'. "
    "Sources are the web_search_result items in order (other item types skipped, a repeated URL kept once), "
    "each with its title, its page_age as the date, and as snippet the first citation excerpt naming its URL, "
    "if any; no answer content.",
    cases=MESSAGES_CASES,
)
async def messages_mapping(ctx: CheckContext) -> None:
    for case in MESSAGES_CASES:
        value, got = await _scripted(ctx, _messages(case["results"], case["citations"]), case.name)
        require(_same(got, case["expected"]), f"{case.name}: sources {got}, expected {case['expected']}")
        require(not value.get("content"), f"{case.name}: the model's prose became answer content")
