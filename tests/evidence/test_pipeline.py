"""The evidence pipeline end to end over in-memory providers: validation, passages, fallback,
grouping, bounds, concurrency, the deadline and hostile pages."""

from __future__ import annotations

import asyncio

import pytest

from dsweb_ref import FetchBody, FetchResult, WebError, WebErrorCode
from dsweb_ref.tools._evidence_text import topic_of
from dsweb_ref.tools.evidence_search import LEFT_OUT, EvidenceSearchTool, EvidenceSettings, render_evidence

from ._fakes import TableFetch, TableSearch, evidence_tool, html, src

THAI_PAGE = """<html><head><title>ทองคำ</title><script>var ราคาทองคำ = 1;</script>
<style>.ราคาทองคำ { color: red }</style></head><body>
<nav>หน้าแรก ราคาทองคำ ข่าว ติดต่อเรา</nav>
<header>ราคาทองคำ เว็บข่าวเศรษฐกิจ</header>
<p>ข่าวกีฬาประจำวัน ทีมชาติไทยชนะ</p>
<p>ราคาทองคำแท่งวันนี้ขายออกบาทละ 41,000 บาท ปรับขึ้นจากเมื่อวาน 200 บาท</p>
<div class="sidebar">ราคาทองคำย้อนหลัง</div>
<footer>ราคาทองคำ ลิขสิทธิ์ 2569</footer></body></html>"""


def run(tool: EvidenceSearchTool, arguments: object) -> dict[str, object]:
    return asyncio.run(tool.run(arguments))


def test_a_thai_page_yields_its_matching_passage_without_boilerplate() -> None:
    url = "https://th.example/gold"
    tool = evidence_tool(
        TableSearch({"ราคาทองคำวันนี้": (src(url, "ราคาทองคำ", "ราคาทองคำวันนี้"),)}), TableFetch({url: html(url, THAI_PAGE)})
    )
    result = asyncio.run(tool.execute({"query": "ราคาทองคำวันนี้"}))
    assert result.value is not None
    lines = result.value["queries"][0]["evidence"]
    assert [line["text"] for line in lines] == ["ราคาทองคำแท่งวันนี้ขายออกบาทละ 41,000 บาท ปรับขึ้นจากเมื่อวาน 200 บาท"]
    assert lines[0]["from"] == "page"
    for furniture in ("var ", "color", "หน้าแรก", "ลิขสิทธิ์", "ย้อนหลัง", "เว็บข่าว"):
        assert furniture not in result.text
    assert result.text == (
        "Query 1: ราคาทองคำวันนี้\n"
        '- "ราคาทองคำแท่งวันนี้ขายออกบาทละ 41,000 บาท ปรับขึ้นจากเมื่อวาน 200 บาท" (source: https://th.example/gold)'
    )


@pytest.mark.parametrize(
    ("url", "code_word"),
    [
        pytest.param("http://127.0.0.1/admin", "loopback", id="loopback"),
        pytest.param("http://169.254.169.254/latest/meta-data/", "metadata", id="metadata"),
        pytest.param("http://2130706433/", "dotted-decimal", id="numeric"),
        pytest.param("file:///etc/passwd", "scheme", id="file"),
        pytest.param("javascript:alert(1)", "scheme", id="javascript"),
        pytest.param("http://user:pw@example.com/", "credentials", id="credentials"),
        pytest.param("http://localhost:8080/", "local or internal", id="localhost"),
        pytest.param("http://[::ffff:10.0.0.1]/", "private", id="mapped-private"),
    ],
)
def test_unsafe_results_are_dropped_with_a_reason_and_never_fetched(url: str, code_word: str) -> None:
    good = "https://ok.example/tides"
    fetch = TableFetch({good: html(good, "<p>Spring tides follow the new moon.</p>")})
    search = TableSearch({"spring tides": (src(url, "spring tides", "spring tides"), src(good, "Spring tides"))})
    value = run(evidence_tool(search, fetch), {"query": "spring tides"})
    group = value["queries"][0]  # type: ignore[index]
    assert fetch.calls == [good]
    assert [d["url"] for d in group["tried"]["dropped"]] == [url]
    assert code_word in group["tried"]["dropped"][0]["reason"]
    assert all(line["url"] == good for line in group["evidence"])


def test_passages_are_short_and_never_the_whole_page() -> None:
    url = "https://long.example/report"
    filler = "".join(f"<p>Paragraph {i} talks about unrelated gardening topics at length.</p>" for i in range(2000))
    body = filler + "<p>" + "The tide table for Brest shows spring tides at 7.2 metres. " * 40 + "</p>" + filler
    settings = EvidenceSettings(passages_per_page=2, passage_chars=200)
    tool = evidence_tool(
        TableSearch({"brest tide table": (src(url, "Tides"),)}), TableFetch({url: html(url, body)}), settings
    )
    value = run(tool, {"query": "brest tide table"})
    lines = value["queries"][0]["evidence"]  # type: ignore[index]
    assert 1 <= len(lines) <= 2
    assert all(len(line["text"]) <= 200 and "gardening" not in line["text"] for line in lines)


def test_a_failed_fetch_falls_back_to_the_search_snippet() -> None:
    url = "https://down.example/page"
    fetch = TableFetch({url: WebError(WebErrorCode.FETCH_TIMEOUT, "web fetch timed out")})
    search = TableSearch({"coffee ratio": (src(url, "Coffee", "A good coffee ratio is 1:16 water to grounds."),)})
    value = run(evidence_tool(search, fetch), {"query": "coffee ratio"})
    group = value["queries"][0]  # type: ignore[index]
    assert group["evidence"] == [
        {"url": url, "title": "Coffee", "text": "A good coffee ratio is 1:16 water to grounds.", "from": "snippet"}
    ]
    assert group["tried"]["fetch_failed"] == 1


def test_a_page_without_a_matching_passage_falls_back_to_the_snippet() -> None:
    url = "https://spa.example/app"
    fetch = TableFetch({url: html(url, "<div>Loading…</div><script>render()</script>")})
    search = TableSearch({"kettle price": (src(url, "Shop", "The gooseneck kettle price is 39 euros."),)})
    value = run(evidence_tool(search, fetch), {"query": "kettle price"})
    assert value["queries"][0]["evidence"][0]["from"] == "snippet"  # type: ignore[index]


def test_an_unrelated_snippet_is_no_evidence_and_the_result_says_needs_retry() -> None:
    url = "https://spa.example/app"
    fetch = TableFetch({url: WebError(WebErrorCode.BLOCKED_URL, "blocked")})
    search = TableSearch(
        {"kettle price": (src(url, "Shop", "Welcome to our shop"), src("http://10.0.0.1/", "kettle price"))}
    )
    result = asyncio.run(evidence_tool(search, fetch).execute({"query": "kettle price"}))
    assert result.value is not None and result.value["needs_retry"] is True
    assert result.text == (
        "Query 1: kettle price\n"
        "[needs_retry] No usable evidence. Tried: 2 search results, 2 dropped as unsafe or invalid URLs, "
        "0 pages read; no passage or snippet matched the query. Search again with a more "
        "specific query (add the subject, place or time); do not repeat this query."
    )


def test_a_batch_is_grouped_by_query_and_every_line_carries_its_url() -> None:
    a, b = "https://a.example/rev", "https://b.example/margin"
    search = TableSearch(
        {
            "NVIDIA total revenue": (src(a, "Revenue"),),
            "NVIDIA gross margin": (src(b, "Margin"),),
        }
    )
    fetch = TableFetch(
        {
            a: html(a, "<p>NVIDIA total revenue was 35.1 billion dollars.</p>"),
            b: html(b, "<p>NVIDIA gross margin was 75 percent.</p>"),
        }
    )
    result = asyncio.run(
        evidence_tool(search, fetch).execute({"query": ["NVIDIA total revenue", "NVIDIA gross margin"]})
    )
    assert result.text == (
        "Query 1: NVIDIA total revenue\n"
        '- "NVIDIA total revenue was 35.1 billion dollars." (source: https://a.example/rev)\n\n'
        "Query 2: NVIDIA gross margin\n"
        '- "NVIDIA gross margin was 75 percent." (source: https://b.example/margin)'
    )
    assert result.value is not None
    assert result.value["sources"] == [{"url": a, "title": "Revenue"}, {"url": b, "title": "Margin"}]


def _group(query: str, url: str, text: str = "Harbour fees are 12 baht.") -> dict[str, object]:
    return {"query": query, "needs_retry": False, "evidence": [{"text": text, "url": url}]}


def test_one_line_a_query_still_over_the_bound_goes_whole_the_longest_first() -> None:
    # catches: the text cut at a character count inside the last line's URL (an outside hunt), or the lines
    # left out from the last query back, dropping a short line where the long one alone was enough
    long_url, short_url = "https://a.example/" + "p" * 2030, "https://b.example/x"
    text = render_evidence({"queries": [_group("q0", long_url), _group("q1", short_url)]}, 2000)
    assert long_url not in text and f"(source: {short_url})" in text
    assert f"Query 1: q0\n{LEFT_OUT}" in text and text.endswith("left out to keep the result short.)")
    urls = [f"https://q{i}.example/" + "p" * 2020 for i in range(4)]
    text = render_evidence({"queries": [_group(f"q{i}", u) for i, u in enumerate(urls)]}, 8000)
    assert len(text) <= 8000 and all(f"(source: {u})" in text for u in urls[:3]) and urls[3] not in text


def test_the_text_is_bounded_and_a_cut_is_said() -> None:
    sources = tuple(src(f"https://s{i}.example/", "tides", "spring tides come with the new moon") for i in range(8))
    pages = {
        s.url: html(
            s.url, f"<p>Spring tides come twice a month at {s.url}.</p><p>Spring tides are high at {s.url}.</p>"
        )
        for s in sources
    }
    settings = EvidenceSettings(max_output_chars=200, max_pages=8)
    result = asyncio.run(
        evidence_tool(TableSearch({"spring tides": sources}), TableFetch(pages), settings).execute(
            {"query": "spring tides"}
        )
    )
    assert len(result.text) <= 200
    assert result.text.endswith("(Some evidence lines were left out to keep the result short.)")
    assert result.text.startswith("Query 1: spring tides\n- ")


def test_searches_and_fetches_run_concurrently() -> None:
    # Each search and each fetch waits until all of its siblings have started: serial code would hang.
    queries = ["alpha tides", "beta tides", "gamma tides", "delta tides"]
    started: list[str] = []
    all_searching = asyncio.Event()
    all_fetching = asyncio.Event()

    class GatedSearch(TableSearch):
        async def search(self, request, ctx):  # type: ignore[no-untyped-def]
            started.append(request.query)
            if len(started) == len(queries):
                all_searching.set()
            await all_searching.wait()
            return await super().search(request, ctx)

    urls = [f"https://{q.split()[0]}.example/" for q in queries]
    fetching: list[str] = []

    def page(url: str):  # type: ignore[no-untyped-def]
        async def handler() -> FetchResult:
            fetching.append(url)
            if len(fetching) == len(urls):
                all_fetching.set()
            await all_fetching.wait()
            return html(url, f"<p>{url} has tides data.</p>")

        return handler

    search = GatedSearch({q: (src(u, q),) for q, u in zip(queries, urls, strict=True)})
    tool = evidence_tool(search, TableFetch({u: page(u) for u in urls}), EvidenceSettings(deadline_s=30))
    value = asyncio.run(asyncio.wait_for(tool.run({"query": queries}), 10))
    assert sorted(started) == sorted(queries) and sorted(fetching) == sorted(urls)
    assert not value["needs_retry"]


def test_one_deadline_cancels_slow_fetches_and_keeps_their_snippets() -> None:
    url = "https://slow.example/"
    cancelled = asyncio.Event()

    async def stall() -> FetchResult:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    search = TableSearch({"slow tides": (src(url, "Tides", "Slow tides are predictable."),)})
    tool = evidence_tool(search, TableFetch({url: stall}), EvidenceSettings(deadline_s=1.0))

    async def main() -> dict[str, object]:
        value = await tool.run({"query": "slow tides"})
        assert cancelled.is_set()  # the stalled fetch was cancelled and settled before the call returned
        return value

    value = asyncio.run(main())
    assert value["queries"][0]["evidence"][0]["from"] == "snippet"  # type: ignore[index]


def test_a_failed_search_leaves_the_other_queries_and_says_why() -> None:
    ok = "https://ok.example/"
    search = TableSearch(
        {
            "good tides": (src(ok, "Tides", "good tides here"),),
            "bad tides": WebError(WebErrorCode.PROVIDER_ERROR, "boom"),
        }
    )
    result = asyncio.run(evidence_tool(search, TableFetch({})).execute({"query": ["good tides", "bad tides"]}))
    assert "Query 2: bad tides\n[needs_retry] No usable evidence. Tried: the search failed (boom)." in result.text
    assert result.value is not None and result.value["needs_retry"] is False


def test_every_search_failing_is_a_coded_error() -> None:
    search = TableSearch({"x tides": WebError(WebErrorCode.PROVIDER_UNAVAILABLE, "no usable web search provider")})
    result = asyncio.run(evidence_tool(search, TableFetch({})).execute({"query": "x tides"}))
    assert result.error_code == WebErrorCode.PROVIDER_UNAVAILABLE
    assert result.text == "Error: no usable web search provider"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param({}, 'invalid arguments: missing required property "query"', id="missing"),
        pytest.param({"query": []}, "query must hold at least one query", id="empty-list"),
        pytest.param({"query": ["a", "b", "c", "d", "e"]}, "query must hold at most 4 queries", id="five"),
        pytest.param({"query": "  "}, "each query must be a non-empty string", id="blank"),
        pytest.param({"query": [1]}, 'invalid arguments: "query[0]" must be a string', id="not-string"),
        pytest.param({"query": 5}, 'invalid arguments: "query" must be a string or an array of strings', id="number"),
        pytest.param({"query": "x", "queries": ["y"]}, 'invalid arguments: unknown property "queries"', id="extra"),
        pytest.param({"query": "x" * 401}, "each query must be at most 400 characters", id="too-long"),
        pytest.param([], 'invalid arguments: "arguments" must be an object', id="not-object"),
    ],
)
def test_bad_arguments_are_refused_before_any_search(arguments: object, message: str) -> None:
    search = TableSearch({})
    result = asyncio.run(evidence_tool(search, TableFetch({})).execute(arguments))
    assert (result.error_code, result.text) == (WebErrorCode.INVALID_ARGUMENTS, f"Error: {message}")
    assert search.calls == []


def test_queries_differing_only_in_case_or_spacing_are_searched_once() -> None:
    search = TableSearch({})
    asyncio.run(evidence_tool(search, TableFetch({})).run({"query": ["Gold  price", "gold price", " GOLD PRICE "]}))
    assert search.calls == ["Gold  price"]


def test_the_schema_takes_a_string_or_a_list_of_one_to_four() -> None:
    from jsonschema import Draft202012Validator

    schema = evidence_tool(TableSearch({}), TableFetch({})).input_schema
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"query": "python release notes"})
    assert validator.is_valid({"query": ["a", "b", "c", "d"]})
    assert not validator.is_valid({"query": ["a", "b", "c", "d", "e"]})
    assert not validator.is_valid({"query": []})
    assert not validator.is_valid({"queries": ["a"]})


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("<div>" * 20000 + "deep tides text" + "</div>" * 20000, id="deep-nesting"),
        pytest.param("tides" + "x" * 300_000, id="one-huge-word"),
        pytest.param("<p>tides \x00\x07\u202e\ud800 data</p>", id="control-and-surrogates"),
        pytest.param("<p>" + "<b>tides</b> " * 50_000 + "</p>", id="many-tags"),
    ],
)
def test_hostile_pages_never_raise_and_stay_bounded(body: str) -> None:
    url = "https://hostile.example/"
    search = TableSearch({"tides data": (src(url, "tides", "tides data snippet"),)})
    fetch = TableFetch({url: FetchResult(url=url, status_code=200, body=FetchBody("html", body))})
    result = asyncio.run(evidence_tool(search, fetch).execute({"query": "tides data"}))
    assert result.error_code is None and len(result.text) <= 8000
    result.text.encode("utf-8")  # valid UTF-8: no lone surrogates reach the model
    assert "\x00" not in result.text and "\u202e" not in result.text


def test_pages_in_flight_never_exceed_max_concurrent_fetches() -> None:
    urls = [f"https://p{i}.example/" for i in range(6)]
    in_flight: list[int] = []
    current = 0
    release = asyncio.Event()

    def page(url: str):  # type: ignore[no-untyped-def]
        async def handler() -> FetchResult:
            nonlocal current
            current += 1
            in_flight.append(current)
            if current == 2:
                release.set()  # the third fetch can only start after one of these two ends
            await release.wait()
            current -= 1
            return html(url, "<p>tides data here</p>")

        return handler

    search = TableSearch({"tides data": tuple(src(u, "tides data") for u in urls)})
    settings = EvidenceSettings(max_pages=6, max_concurrent_fetches=2, deadline_s=30)
    tool = evidence_tool(search, TableFetch({u: page(u) for u in urls}), settings)
    asyncio.run(asyncio.wait_for(tool.run({"query": "tides data"}), 10))
    assert len(in_flight) == 6 and max(in_flight) == 2


def test_bad_evidence_settings_are_refused() -> None:
    for bad in (
        {"max_pages": 0},
        {"max_concurrent_fetches": -1},
        {"deadline_s": float("nan")},
        {"passage_chars": True},
    ):
        with pytest.raises(WebError) as info:
            EvidenceSettings(**bad)  # type: ignore[arg-type]
        assert info.value.code == WebErrorCode.CONFIG_INVALID


@pytest.mark.parametrize("query", ["tides\x00", "tides\ud800", "\x1b[31mtides"])
def test_queries_with_control_characters_or_lone_surrogates_are_refused(query: str) -> None:
    search = TableSearch({})
    result = asyncio.run(evidence_tool(search, TableFetch({})).execute({"query": query}))
    assert result.error_code == WebErrorCode.INVALID_ARGUMENTS
    assert search.calls == []


def test_hostile_provider_text_is_bounded_and_printable_in_the_value() -> None:
    """Huge, control-laden provider text stays bounded. (A lone surrogate never gets this far: the seam
    refuses a provider string that is not valid Unicode, and the DeepSeek providers turn one into U+FFFD.)"""
    from dsweb_ref.schemas import validate

    url = "https://ok.example/"
    search = TableSearch(
        {
            "tides data": (
                src(url, "tides\x00\u202e" * 5000, "tides data " * 100_000),
                src("http://exa\x00mple.com/" + "a" * 5000, "t", "tides data"),
            )
        }
    )
    value = asyncio.run(
        evidence_tool(search, TableFetch({url: WebError(WebErrorCode.FETCH_TIMEOUT, "t")})).run({"query": "tides data"})
    )
    assert validate("evidence_search.output", value) == []
    import json

    json.dumps(value, ensure_ascii=False).encode("utf-8")  # no lone surrogate anywhere
    group = value["queries"][0]
    assert len(group["evidence"][0]["title"]) <= 160 and len(group["tried"]["dropped"][0]["reason"]) <= 300


def test_the_snippet_fallback_needs_the_query_in_the_snippet_itself() -> None:
    from dsweb_ref.tools._evidence_text import snippet_matches

    assert snippet_matches("上海天气预报", "上海本周多云转晴", "上海天气")  # title and snippet together
    assert not snippet_matches("Kettle price list", "Welcome to our shop", "kettle price")  # title alone
    assert not snippet_matches("", "上海本周多云转晴", "上海天气")  # one bigram of three is not enough


def test_the_same_passage_reached_by_two_urls_is_cited_once() -> None:
    a, b = "https://a.example/page", "https://b.example/mirror"
    body = "<p>Spring tides happen twice a month.</p>"
    search = TableSearch({"spring tides": (src(a, "Tides"), src(b, "Tides mirror", "spring tides mirror"))})
    value = asyncio.run(
        evidence_tool(search, TableFetch({a: html(a, body), b: html(b, body)})).run({"query": "spring tides"})
    )
    lines = value["queries"][0]["evidence"]
    assert len(lines) == 1 and lines[0]["from"] == "page"  # the second URL adds neither the passage nor its snippet


def test_caller_cancellation_returns_only_after_every_fetch_settled() -> None:
    url = "https://slow.example/"
    started = asyncio.Event()
    settled: list[str] = []

    async def stall() -> FetchResult:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            settled.append(url)
        raise AssertionError("unreachable")

    search = TableSearch({"slow tides": (src(url, "Tides", "slow tides"),)})
    tool = evidence_tool(search, TableFetch({url: stall}), EvidenceSettings(deadline_s=30))

    async def main() -> None:
        task = asyncio.create_task(tool.run({"query": "slow tides"}))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert settled == [url]  # the fetch had settled when the cancelled call returned

    asyncio.run(asyncio.wait_for(main(), 10))


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        pytest.param("site:example.com gold price", "gold price", id="site"),
        pytest.param("gold price -site:spam.example -rumour", "gold price", id="exclusions"),
        pytest.param("LANG:th ราคาทองคำ after:2026-01-01 before:2026-06-30", "ราคาทองคำ", id="lang-dates-any-case"),
        pytest.param('"exact phrase" gold', '"exact phrase" gold', id="phrase-kept"),
        pytest.param("COVID-19 site-map", "COVID-19 site-map", id="hyphens-inside-words-kept"),
        pytest.param("site:example.com", "site:example.com", id="only-operators"),
    ],
)
def test_the_topic_of_a_query_is_the_query_without_its_search_operators(query: str, topic: str) -> None:
    assert topic_of(query) == topic


def test_a_heading_repeating_the_query_without_its_operator_is_no_evidence() -> None:
    # catches: comparing headings with the full query text, so "site:x ราคาทองคำวันนี้" cites the
    # page's heading "ราคาทองคำวันนี้" as if it were a fact; and operator words counted as topic words.
    url = "https://th.example/gold"
    page = THAI_PAGE.replace("<p>ข่าวกีฬา", "<h1>ราคาทองคำวันนี้</h1><p>ข่าวกีฬา")
    query = "site:th.example ราคาทองคำวันนี้"
    tool = evidence_tool(TableSearch({query: (src(url, "ทองคำ", "ราคาทองคำวันนี้"),)}), TableFetch({url: html(url, page)}))
    result = asyncio.run(tool.execute({"query": query}))
    assert result.value is not None
    texts = [line["text"] for line in result.value["queries"][0]["evidence"]]
    assert texts == ["ราคาทองคำแท่งวันนี้ขายออกบาทละ 41,000 บาท ปรับขึ้นจากเมื่อวาน 200 บาท"]
