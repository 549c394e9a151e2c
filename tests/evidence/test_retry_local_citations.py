"""Retry discipline after [needs_retry], refusal of local documents, and code-owned citations."""

from __future__ import annotations

import asyncio

import pytest

from dsweb_ref import WebErrorCode
from dsweb_ref.tools.evidence_search import EvidenceContext, append_citations

from ._fakes import TableFetch, TableSearch, evidence_tool, html, src

GOOD = "https://good.example/gdp"
SEARCH = {
    "gdp": (),
    "Thailand GDP growth 2025": (src(GOOD, "Thai GDP", "Thailand GDP growth in 2025 was 2.8 percent."),),
}


def tool_and_search() -> tuple[object, TableSearch]:
    search = TableSearch(SEARCH)
    return evidence_tool(search, TableFetch({GOOD: html(GOOD, "<p>Thailand GDP growth in 2025 was 2.8%.</p>")})), search


@pytest.mark.parametrize("repeat", ["gdp", "GDP", "  gdp ", "g d p", ["gdp", "Thailand GDP growth 2025"]])
def test_repeating_a_query_that_needed_a_retry_is_refused(repeat: object) -> None:
    tool, search = tool_and_search()
    context = EvidenceContext()
    first = asyncio.run(tool.execute({"query": "gdp"}, context=context))  # type: ignore[attr-defined]
    assert first.text.startswith("Query 1: gdp\n[needs_retry]")
    again = asyncio.run(tool.execute({"query": repeat}, context=context))  # type: ignore[attr-defined]
    assert again.error_code == WebErrorCode.INVALID_ARGUMENTS
    assert "repeats a query that already found no usable evidence" in again.text
    assert "subject's full name, the place, or the time period" in again.text
    assert search.calls == ["gdp"]  # the refused retry never reached the search engine


def test_a_more_specific_retry_is_searched() -> None:
    tool, search = tool_and_search()
    context = EvidenceContext()
    asyncio.run(tool.execute({"query": "gdp"}, context=context))  # type: ignore[attr-defined]
    better = asyncio.run(tool.execute({"query": "Thailand GDP growth 2025"}, context=context))  # type: ignore[attr-defined]
    assert better.error_code is None and "2.8" in better.text
    assert search.calls == ["gdp", "Thailand GDP growth 2025"]


def test_a_query_that_found_evidence_may_run_again_and_contexts_are_separate() -> None:
    tool, _search = tool_and_search()
    context = EvidenceContext()
    for _ in range(2):
        assert asyncio.run(tool.execute({"query": "Thailand GDP growth 2025"}, context=context)).error_code is None  # type: ignore[attr-defined]
    asyncio.run(tool.execute({"query": "gdp"}, context=context))  # type: ignore[attr-defined]
    fresh = asyncio.run(tool.execute({"query": "gdp"}, context=EvidenceContext()))  # type: ignore[attr-defined]
    assert fresh.error_code is None  # another conversation's retries are its own


@pytest.mark.parametrize(
    "query",
    [
        "file:///home/me/notes.txt",
        "FILE://C:/report.docx",
        r"C:\Users\me\Desktop\budget.xlsx",
        "summary of ~/projects/plan.md",
        "what does ./README.md say",
        r"\\fileserver\share\minutes.doc",
        "/home/somchai/รายงาน.pdf",
        "Documents/สัญญาเช่า.pdf",
        "contents of /etc/passwd",
    ],
)
def test_local_paths_and_file_urls_are_refused_before_any_search(query: str) -> None:
    tool, search = tool_and_search()
    result = asyncio.run(tool.execute({"query": ["Thailand GDP growth 2025", query]}))  # type: ignore[attr-defined]
    assert result.error_code == WebErrorCode.INVALID_ARGUMENTS
    assert result.text.startswith("Error: query 2 carries a local file path or file: URL")
    assert "not a fallback for local files" in result.text
    assert search.calls == []


def test_names_the_caller_marks_local_are_refused_before_any_search() -> None:
    tool, search = tool_and_search()
    context = EvidenceContext(local_names=frozenset({"Q3 Board Minutes", "รายงานประจำปี"}))
    for query in ("q3 board  minutes decisions", "สรุปรายงานประจำปีของบริษัท"):
        result = asyncio.run(tool.execute({"query": query}, context=context))  # type: ignore[attr-defined]
        assert result.error_code == WebErrorCode.INVALID_ARGUMENTS
        assert "a name the caller marked as a local document" in result.text
    assert search.calls == []


@pytest.mark.parametrize(
    "query", ["TCP/IP handshake", "24/7 pharmacy Bangkok", "and/or in contracts", "AC/DC tour 2026"]
)
def test_ordinary_queries_with_slashes_are_not_local(query: str) -> None:
    tool, search = tool_and_search()
    assert asyncio.run(tool.execute({"query": query})).error_code is None  # type: ignore[attr-defined]
    assert search.calls == [query]


def test_citations_list_only_urls_that_produced_evidence() -> None:
    other = "https://other.example/unrelated"
    search = TableSearch(
        {
            "Thailand GDP growth 2025": (
                src(GOOD, "Thai GDP [official]", "Thailand GDP growth"),
                src("http://127.0.0.1/x", "GDP growth", "Thailand GDP growth"),
                src(other, "Other", "cooking"),
            )
        }
    )
    pages = {GOOD: html(GOOD, "<p>Thailand GDP growth in 2025 was 2.8%.</p>"), other: html(other, "<p>pasta</p>")}
    result = asyncio.run(evidence_tool(search, TableFetch(pages)).execute({"query": "Thailand GDP growth 2025"}))
    assert result.value is not None
    answer = append_citations("GDP ของไทยปี 2568 เติบโต 2.8%", result.value)
    assert answer == "GDP ของไทยปี 2568 เติบโต 2.8%\n\nSources:\n- [Thai GDP (official)](https://good.example/gdp)"


def test_citations_merge_calls_dedupe_and_keep_links_well_formed() -> None:
    first = {"sources": [{"url": "https://a.example/x_(y)", "title": ""}]}
    second = {
        "sources": [{"url": "https://a.example/x_(y)", "title": "dup"}, {"url": "javascript:alert(1)", "title": "x"}]
    }
    assert append_citations("answer", [first, second]) == (
        "answer\n\nSources:\n- [https://a.example/x_(y)](https://a.example/x_%28y%29)"
    )
    assert append_citations("answer", {"sources": []}) == "answer"


def test_a_query_whose_search_failed_may_be_retried_as_it_was() -> None:
    from dsweb_ref import WebError

    failing = WebError(WebErrorCode.PROVIDER_ERROR, "HTTP 503")
    search = TableSearch({"inflation rate": failing, "Thailand GDP growth 2025": ()})
    tool = evidence_tool(search, TableFetch({}))
    context = EvidenceContext()
    first = asyncio.run(tool.execute({"query": ["inflation rate", "Thailand GDP growth 2025"]}, context=context))
    assert "the search failed (HTTP 503)" in first.text
    again = asyncio.run(tool.execute({"query": "inflation rate"}, context=context))
    assert again.error_code == WebErrorCode.PROVIDER_ERROR  # searched again, not refused as a repeat
    assert search.calls.count("inflation rate") == 2
    repeat = asyncio.run(tool.execute({"query": "Thailand GDP growth 2025"}, context=context))
    assert repeat.error_code == WebErrorCode.INVALID_ARGUMENTS  # that one did search and found nothing
