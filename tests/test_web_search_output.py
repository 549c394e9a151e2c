"""web_search output: the structured value (schema-validated) and the model-visible text (snapshots)."""

from __future__ import annotations

import asyncio

import pytest
from fakes import FakeSearch, result
from syrupy.assertion import SnapshotAssertion

from dsweb_ref import SearchResult, Source, WebService
from dsweb_ref.schemas import validate
from dsweb_ref.tools import SearchToolSettings, WebSearchTool, render_search
from dsweb_ref.tools._render import CITE_REMINDER, source_label


def deepseek_like(q: int, n: int) -> SearchResult:
    return SearchResult(
        sources=tuple(
            Source(
                url=f"https://docs.example.test/search/{q}/{i}",
                title=f"Snapshot Search {q} Result {i}",
                snippet=f"Snapshot search {q} excerpt {i}.",
                published_at=f"2026-07-0{i}",
            )
            for i in range(1, n + 1)
        )
    )


SCENARIOS: dict[str, tuple[list[str], dict[str, SearchResult]]] = {
    "single-answer-and-sources": (
        ["q"],
        {
            "q": SearchResult(
                content="an answer",
                sources=(
                    Source("https://a.test/x", title="A", snippet="about a", published_at="2026-01-01"),
                    Source("https://b.test/y"),
                    Source("https://c.test/z", snippet="only a snippet"),
                    Source("https://d.test/w", published_at="2026"),
                ),
            )
        },
    ),
    "no-results": (["q"], {"q": SearchResult()}),
    "truncated-with-no-sources": (["q"], {"q": SearchResult(content="", truncated=True)}),
    "answer-only": (["q"], {"q": SearchResult(content="just an answer")}),
    "multi-query-merge": (
        ["one", "two"],
        {
            "one": SearchResult(
                content="answer one", sources=(Source("https://a.test", title="A"), Source("https://shared.test"))
            ),
            "two": SearchResult(
                content="answer two", sources=(Source("https://b.test", title="B"), Source("https://shared.test"))
            ),
        },
    ),
    "two-queries-capped-at-eight": (["first", "second"], {"first": deepseek_like(1, 6), "second": deepseek_like(2, 6)}),
    "untitled-labels": (
        ["q"],
        {
            "q": result(
                "https://EXAMPLE.com:8443/p",
                "https://bücher.example/",
                "http://[::1]:8080/",
                "mailto:x@y.z",
                "not a url",
            )
        },
    ),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_output_snapshots(scenario: str, snapshot_text: SnapshotAssertion, snapshot_json: SnapshotAssertion) -> None:
    queries, canned = SCENARIOS[scenario]
    web = WebService()
    web.register_search(FakeSearch(canned=canned))
    out = asyncio.run(WebSearchTool(web).execute({"queries": queries}))
    assert not out.is_error
    assert out.value is not None
    assert validate("web_search.output", out.value) == []
    assert out.text == snapshot_text
    assert out.value == snapshot_json


def test_error_output_keeps_the_code_for_the_caller(snapshot_text: SnapshotAssertion) -> None:
    out = asyncio.run(WebSearchTool(WebService()).execute({"queries": ["q"]}))
    assert out.error_code == "WEB_PROVIDER_UNAVAILABLE"
    assert out.value is None
    assert out.to_json()["error"] == {"code": "WEB_PROVIDER_UNAVAILABLE"}
    assert validate("seam", {}) == []  # the shared document itself applies cleanly
    assert out.text == snapshot_text


def test_citation_reminder_closes_every_rendering() -> None:
    for r in (SearchResult(), SearchResult(content="x"), result("https://a.test")):
        assert render_search(r).endswith(CITE_REMINDER)


def test_truncation_note_counts_the_shown_sources() -> None:
    text = render_search(result("https://a.test", "https://b.test", truncated=True))
    assert "(Showing the first 2 sources. Refine the query for more.)" in text


def test_model_text_shows_the_snippet_but_never_provider_metadata() -> None:
    src = Source("https://a.test", title="A", snippet="short", metadata={"summary": "LONG SUMMARY", "authority": 3})
    text = render_search(SearchResult(sources=(src,)))
    assert "short" in text and "LONG SUMMARY" not in text


@pytest.mark.parametrize(
    ("url", "label"),
    [
        ("https://EXAMPLE.com:8443/p", "example.com"),
        ("https://bücher.example/", "xn--bcher-kva.example"),
        ("http://[::1]:8080/", "::1"),
        ("not a url", "not a url"),
        ("http://[bad", "http://[bad"),
    ],
)
def test_untitled_sources_are_labelled_by_hostname(url: str, label: str) -> None:
    assert source_label(Source(url)) == label


def test_a_many_query_value_stays_valid_under_a_custom_cap() -> None:
    canned = {f"q{i}": deepseek_like(i, 5) for i in range(1, 4)}
    web = WebService()
    web.register_search(FakeSearch(canned=canned))
    tool = WebSearchTool(web, SearchToolSettings(search_max_queries=3, search_max_results=5))
    out = asyncio.run(tool.execute({"queries": list(canned)}))
    assert out.value is not None and validate("web_search.output", out.value) == []
    assert len(out.value["sources"]) == 5 and out.value["truncated"] is True


def test_model_text_keeps_titles_and_snippets_short_but_the_value_keeps_them_whole() -> None:
    long_title, long_snippet = "T" * 1000, "word " * 1000
    web = WebService()
    web.register_search(FakeSearch(canned={"q": SearchResult(sources=(Source("https://a.test", long_title,
                                                                                 long_snippet),))}))
    out = asyncio.run(WebSearchTool(web).execute({"queries": ["q"]}))
    line = out.text.splitlines()[1]
    assert len(line) < 800 and line.endswith("…")
    assert "T" * 200 not in line and "T" * 199 in line
    assert out.value is not None and out.value["sources"][0]["snippet"] == long_snippet
