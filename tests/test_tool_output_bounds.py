"""Model-visible text of both tools is bounded, per field and in total, errors included
(issue 14 item 7: eight sources with huge URLs and dates made 11.2 MB of web_search text)."""

from __future__ import annotations

import asyncio

import pytest
from fakes import FakeFetch, FakeSearch

from dsweb_ref import (
    CallContext,
    FetchRequest,
    FetchResult,
    SearchRequest,
    SearchResult,
    Source,
    WebError,
    WebErrorCode,
    WebService,
)
from dsweb_ref.runtime import build_runtime
from dsweb_ref.settings import Settings
from dsweb_ref.tools import SearchToolSettings, WebFetchTool, WebSearchTool, render_search
from dsweb_ref.tools._render import ANSWER_CUT_NOTE, CITE_REMINDER, MAX_DATE_CHARS, MAX_URL_CHARS, OUTPUT_CUT_NOTE

HUGE = 1_400_000


def _search_tool(provided: SearchResult | WebError, **settings: object) -> WebSearchTool:
    async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
        if isinstance(provided, WebError):
            raise provided
        return provided

    web = WebService()
    web.register_search(FakeSearch(handler=handler))
    return WebSearchTool(web, SearchToolSettings(**settings))  # type: ignore[arg-type]


def _hostile_sources(n: int = 8) -> SearchResult:
    return SearchResult(
        sources=tuple(
            Source(
                url=f"https://a.test/{i}/" + "u" * HUGE, title="t" * HUGE, snippet="s" * HUGE, published_at="d" * HUGE
            )
            for i in range(n)
        ),
        content="answer " * HUGE,
    )


def test_eight_hostile_sources_stay_under_the_default_bound() -> None:
    out = asyncio.run(_search_tool(_hostile_sources()).execute({"queries": ["q"]}))
    assert len(out.text) <= SearchToolSettings().search_max_output_chars == 20_000
    assert out.text.endswith("\n\n" + OUTPUT_CUT_NOTE.format(limit=20_000) + "\n\n" + CITE_REMINDER)
    # The structured value keeps the provider's strings whole.
    assert out.value is not None and len(out.value["sources"][0]["url"]) > HUGE


def test_a_huge_answer_is_cut_before_its_sources() -> None:
    # catches: the answer filling the bound and the sources after it cut with it (an outside hunt): the text
    # then ended 'Cite the relevant URLs above' with no URL above
    result = SearchResult(sources=(Source(url="https://a.test/1", title="A"),), content="word " * HUGE)
    text = render_search(result, 20_000)
    assert len(text) <= 20_000 and "- [A](https://a.test/1)" in text and text.endswith(CITE_REMINDER)
    assert ANSWER_CUT_NOTE.format(limit=20_000) in text and text.startswith("word word")


def test_sources_that_alone_fill_the_bound_leave_the_answer_out() -> None:
    # catches (review): the whole-text cut keeping the answer, which comes first, and dropping every source
    sources = tuple(Source(url=f"https://a.test/{i}", title=f"title {i}") for i in range(8))
    listed = render_search(SearchResult(sources=sources), 10**6)
    result = SearchResult(sources=sources, content="\n".join(f"answer line {i}" for i in range(100)))
    text = render_search(result, len(listed) + 20)
    assert len(text) <= len(listed) + 20 and "answer line" not in text and "https://a.test/0" in text


def test_a_url_and_a_date_are_cut_per_field_with_a_marker() -> None:
    source = Source(url="https://a.test/" + "u" * 5000, title="T", published_at="2026-" + "9" * 500)
    text = render_search(SearchResult(sources=(source,)), 100_000)
    url = "https://a.test/" + "u" * (MAX_URL_CHARS - 1 - len("https://a.test/")) + "…"
    date = "2026-" + "9" * (MAX_DATE_CHARS - 1 - len("2026-")) + "…"
    assert f"- [T]({url}) — ({date})" in text


def test_the_total_bound_follows_the_setting_and_cuts_at_a_line_end() -> None:
    sources = tuple(Source(url=f"https://a.test/{i}", title=f"title {i}") for i in range(40))
    out = asyncio.run(
        _search_tool(SearchResult(sources=sources), search_max_results=40, search_max_output_chars=600).execute(
            {"queries": ["q"]}
        )
    )
    assert len(out.text) <= 600
    head = out.text.split("\n\n(Output cut")[0]
    assert head.splitlines()[-1].startswith("- [title ") and head.splitlines()[-1].endswith(")")


@pytest.mark.parametrize("limit", [1, 10, 150])
def test_a_tiny_bound_is_still_honoured(limit: int) -> None:
    assert len(render_search(_hostile_sources(1), limit)) <= limit


def test_text_under_the_bound_is_unchanged() -> None:
    result = SearchResult(sources=(Source(url="https://a.test/", title="A"),))
    assert render_search(result, 10**9) == render_search(result, len(render_search(result, 10**9)))


def test_a_search_error_text_obeys_the_bound() -> None:
    error = WebError(WebErrorCode.PROVIDER_ERROR, "x" * HUGE)
    out = asyncio.run(_search_tool(error, search_max_output_chars=300).execute({"queries": ["q"]}))
    assert out.error_code == WebErrorCode.PROVIDER_ERROR
    assert len(out.text) == 300 and out.text.startswith("Error: xxx") and out.text.endswith("…")


class _FailingFetch(FakeFetch):
    async def fetch(self, request: FetchRequest, ctx: CallContext) -> FetchResult:
        raise WebError(WebErrorCode.PROVIDER_ERROR, "refused: " + "r" * HUGE)


def test_a_fetch_error_text_obeys_the_output_cap() -> None:
    web = WebService()
    web.register_fetch(_FailingFetch())
    out = asyncio.run(WebFetchTool(web, max_output_chars=200).execute({"url": "https://a.test/"}))
    assert out.error_code == WebErrorCode.PROVIDER_ERROR
    assert len(out.text) == 200 and out.text.startswith("Error: refused: rrr") and out.text.endswith("…")


def test_the_setting_reaches_the_search_tool_and_is_validated() -> None:
    snapshot = Settings().updated({"tools.search_max_output_chars": 321})
    tool = build_runtime(lambda: snapshot).search_tool()
    assert tool.settings.search_max_output_chars == 321
    with pytest.raises(WebError) as info:
        SearchToolSettings(search_max_output_chars=0)
    assert info.value.code == WebErrorCode.CONFIG_INVALID
    assert info.value.message == "searchMaxOutputChars must be a positive integer, got 0"


@pytest.mark.parametrize(
    "url", ["https://a\ud800.test/", "https://example.com/\ud800", "http://127.0.0.1/\udfff", "\ud800"]
)
def test_a_model_url_with_a_lone_surrogate_is_echoed_as_valid_unicode(url: str) -> None:
    """The local http provider quotes the URL it refuses; the model gets U+FFFD, never a surrogate."""
    out = asyncio.run(build_runtime(Settings).fetch_tool().execute({"url": url}))
    assert out.error_code == WebErrorCode.INVALID_URL
    assert out.text.encode("utf-8") and "\ufffd" in out.text


def test_a_query_heading_with_a_lone_surrogate_is_valid_unicode() -> None:
    async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
        return SearchResult(content=f"answer {len(request.query)}")

    web = WebService()
    web.register_search(FakeSearch(handler=handler))
    out = asyncio.run(WebSearchTool(web).execute({"queries": ["a\ud800", "b"]}))
    assert out.text.startswith("### a\ufffd\n\nanswer 2\n\n### b\n\nanswer 1")
    assert out.value is not None and out.value["content"].startswith("### a\ufffd")
