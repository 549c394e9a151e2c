"""One deadline over every stage (issue 20 item 7, issue 21 item 6) and every retry rule of seed 002
(issue 21 item 5)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from dsweb_ref import CallContext, FetchResult, SearchRequest, SearchResult, WebError, WebErrorCode
from dsweb_ref.tools import evidence_search
from dsweb_ref.tools._evidence_guard import EvidenceContext, refuse_repeats
from dsweb_ref.tools._evidence_units import warm_up
from dsweb_ref.tools.evidence_search import EvidenceSettings

from ._fakes import TableFetch, TableSearch, evidence_tool, html, src

URL = "https://tides.example/"


def test_a_slow_parse_stays_inside_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    warm_up().result(60)  # a fresh process's segmenter load is not what this test measures
    gate = threading.Event()
    parsing = threading.Event()
    right = evidence_search.page_units

    def slow_parse(body):  # type: ignore[no-untyped-def]
        parsing.set()
        gate.wait(30)  # an expensive page: parsing goes on until the test lets it finish
        return right(body)

    monkeypatch.setattr(evidence_search, "page_units", slow_parse)
    search = TableSearch({"spring tides": (src(URL, "Spring tides", "Spring tides come at new moon."),)})
    tool = evidence_tool(search, TableFetch({URL: html(URL, "<p>Spring tides come twice a month.</p>")}),
                         EvidenceSettings(deadline_s=4.0))  # fmt: skip

    async def main() -> dict[str, object]:
        try:
            value = await tool.run({"query": "spring tides"})
            assert parsing.is_set() and not gate.is_set()  # returned while the page was still being parsed
            return value
        finally:
            gate.set()  # before asyncio.run waits for its worker threads

    value = asyncio.run(main())
    group = value["queries"][0]  # type: ignore[index]
    assert [e["from"] for e in group["evidence"]] == ["snippet"]  # the unparsed page fell back
    assert group["tried"]["fetch_failed"] == 1


def test_cancelling_a_call_during_a_slow_parse_is_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    loop_started: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def slow_parse(body):  # type: ignore[no-untyped-def]
        loop, parsing = loop_started[0]
        loop.call_soon_threadsafe(parsing.set)
        gate.wait(30)
        return []

    monkeypatch.setattr(evidence_search, "page_units", slow_parse)
    search = TableSearch({"spring tides": (src(URL, "Spring tides", "Spring tides come at new moon."),)})
    tool = evidence_tool(search, TableFetch({URL: html(URL, "<p>x</p>")}), EvidenceSettings(deadline_s=60))

    async def main() -> None:
        parsing = asyncio.Event()
        loop_started.append((asyncio.get_running_loop(), parsing))
        task = asyncio.create_task(tool.run({"query": "spring tides"}))
        await parsing.wait()
        task.cancel()
        try:
            with pytest.raises(asyncio.CancelledError):
                await task
            assert not gate.is_set()  # the event loop was free: cancelled while the parse still ran
        finally:
            gate.set()

    asyncio.run(main())


def test_a_hung_search_does_not_starve_the_other_queries_fetches() -> None:
    class HungSearch(TableSearch):
        async def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult:
            if request.query == "hung tides":
                await asyncio.Event().wait()
            return await super().search(request, ctx)

    search = HungSearch({"spring tides": (src(URL, "Spring tides", "Spring tides snippet."),)})
    fetch = TableFetch({URL: html(URL, "<p>Spring tides come twice a month.</p>")})
    tool = evidence_tool(search, fetch, EvidenceSettings(deadline_s=2.0))
    value = asyncio.run(tool.run({"query": ["hung tides", "spring tides"]}))
    hung, good = value["queries"]
    assert hung["tried"]["search_error"] and hung["needs_retry"]
    assert [e["from"] for e in good["evidence"]] == ["page"]  # its page was read, not only its snippet


def test_one_hung_page_is_cut_at_the_page_timeout_not_the_call_deadline() -> None:
    stalled = asyncio.Event()
    slow, fast = "https://slow.example/", "https://fast.example/"

    async def stall() -> FetchResult:
        stalled.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    search = TableSearch({"spring tides": (src(slow, "Spring tides slow"), src(fast, "Spring tides"))})
    fetch = TableFetch({slow: stall, fast: html(fast, "<p>Spring tides come twice a month.</p>")})
    tool = evidence_tool(search, fetch, EvidenceSettings(deadline_s=300, page_timeout_s=0.3))
    value = asyncio.run(asyncio.wait_for(tool.run({"query": "spring tides"}), 60))  # far below 300 s
    assert stalled.is_set()
    group = value["queries"][0]
    assert group["tried"]["fetch_failed"] == 1 and [e["url"] for e in group["evidence"]] == [fast]


def test_stage_budgets_split_one_deadline() -> None:
    searches_end, fetches_end, end = EvidenceSettings().stage_ends(100.0)
    assert (searches_end, fetches_end, end) == (118.0, 142.0, 145.0)
    assert EvidenceSettings().page_timeout_s <= EvidenceSettings().deadline_s / 4
    assert EvidenceSettings(deadline_s=1.0).stage_ends(0.0)[1] == 0.75  # ranking keeps at least 0.25 s
    assert EvidenceSettings(deadline_s=0.3).stage_ends(0.0)[1] == 0.15  # ... but at most half
    with pytest.raises(WebError):
        EvidenceSettings(search_share=0.8, rank_share=0.3)


def exhausted(*queries: str, question: str = "") -> EvidenceContext:
    context = EvidenceContext(question=question)
    context.remember_empty(queries)
    return context


@pytest.mark.parametrize(
    "again",
    [
        "harbour\u200b mooring fees",
        "harbour mooring\u200c fees",
        "\ufeffharbour mooring fees",
        "har\u00adbour mooring fees",
        "harbour mooring fe\u200des",
        "ＨＡＲＢＯＵＲ mooring fees",  # full-width: NFKC
    ],
)
def test_invisible_characters_and_width_do_not_make_a_new_query(again: str) -> None:
    with pytest.raises(WebError, match="repeats a query") as caught:
        refuse_repeats([again], exhausted("harbour mooring fees"))
    assert "A better query adds" in caught.value.message


@pytest.mark.parametrize("again", ["harbour fees", "fees mooring harbour", "mooring"])
def test_a_less_specific_retry_is_refused(again: str) -> None:
    with pytest.raises(WebError, match="no more specific") as caught:
        refuse_repeats([again], exhausted("harbour mooring fees"))
    assert "the subject's full name, the place, or the time period" in caught.value.message


def test_a_retry_adding_only_an_unsupported_fact_is_refused() -> None:
    context = exhausted("harbour mooring fees", question="What are the harbour mooring fees?")
    for invented in ("harbour mooring fees 2026", "harbour mooring fees Brest", "harbour mooring fees 12.50"):
        with pytest.raises(WebError, match="only adds") as caught:
            refuse_repeats([invented], context)
        assert "neither the user's question nor earlier evidence" in caught.value.message


def test_a_fact_from_the_question_or_earlier_evidence_or_a_plain_word_makes_a_real_retry() -> None:
    context = exhausted("harbour mooring fees", question="What are the Brest harbour mooring fees?")
    refuse_repeats(["harbour mooring fees Brest"], context)  # from the question
    context.remember_evidence(["Mooring fees were revised in 2026."])
    refuse_repeats(["harbour mooring fees 2026"], context)  # from earlier evidence
    refuse_repeats(["harbour mooring fees yachts"], context)  # a plain subject word
    refuse_repeats(["harbour mooring fees 2031"], exhausted("harbour mooring fees"))  # no question given


def test_an_added_number_is_supported_only_by_the_whole_number_not_a_piece_of_another() -> None:
    from dsweb_ref.tools._evidence_guard import _unsupported, _words

    context = exhausted("harbour mooring fees", question="What are the Brest harbour mooring fees?")
    context.remember_evidence(["The fee was $12,031 in 20 31 places, or 55.5 a night."])
    for added in ("2031", "031", "55"):  # pieces of other numbers, or numbers split by a space
        query = f"harbour mooring fees {added}"
        assert _unsupported(query, _words(query), context) == [added], added
    assert _unsupported("harbour mooring fees 12,031", _words("harbour mooring fees 12,031"), context) == []


def test_the_pipeline_remembers_evidence_and_refuses_through_execute() -> None:
    url = "https://harbour.example/"
    search = TableSearch({"harbour mooring fees 2026": (src(url, "Harbour fees"),)})
    fetch = TableFetch({url: html(url, "<p>Harbour mooring fees rose to $40 a night in 2026.</p>")})
    tool = evidence_tool(search, fetch)
    context = EvidenceContext(question="How much is mooring in the harbour?")
    first = asyncio.run(tool.execute({"query": "harbour mooring fees"}, context=context))
    assert first.value is not None and first.value["needs_retry"]
    refused = asyncio.run(tool.execute({"query": "harbour mooring\u200b fees"}, context=context))
    assert refused.error_code == WebErrorCode.INVALID_ARGUMENTS
    invented = asyncio.run(tool.execute({"query": "harbour mooring fees 2026"}, context=context))
    assert invented.error_code == WebErrorCode.INVALID_ARGUMENTS
    assert search.calls == ["harbour mooring fees"]  # neither refused retry reached the search engine
