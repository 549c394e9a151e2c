"""web_search batches: concurrency, dedup, all-or-nothing failure and quiescence (seed 000).

Ordering is proven with events and gates, never with sleeps. Every wait has a
bound so a regression fails instead of hanging.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest
from fakes import FakeSearch, result

from dsweb_ref import CallContext, SearchRequest, SearchResult, WebError, WebErrorCode, WebService
from dsweb_ref.tools import SearchToolSettings, WebSearchTool

BOUND = 5.0  # seconds; only reached if the behaviour under test is broken


def tool_with(fake: FakeSearch, **settings: Any) -> WebSearchTool:
    web = WebService()
    web.register_search(fake)
    return WebSearchTool(web, SearchToolSettings(**settings))


async def bounded(aw: Coroutine[Any, Any, Any]) -> Any:
    return await asyncio.wait_for(aw, BOUND)


class Gates:
    """Per-query 'started', 'release' and 'finished' events, created inside the running loop."""

    def __init__(self, queries: list[str]) -> None:
        self.started = {q: asyncio.Event() for q in queries}
        self.release = {q: asyncio.Event() for q in queries}
        self.finished = {q: asyncio.Event() for q in queries}
        self.cancelled: list[str] = []


def test_batch_searches_all_start_before_the_first_settles() -> None:
    queries = ["q1", "q2", "q3", "q4"]

    async def main() -> None:
        g = Gates(queries)
        settled: list[str] = []

        async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
            g.started[request.query].set()
            await g.release[request.query].wait()
            settled.append(request.query)
            return result(f"https://{request.query}.test/")

        tool = tool_with(FakeSearch(handler=handler))
        task = asyncio.create_task(tool.run({"queries": queries}))
        # All four have started while none may settle: a sequential tool would stall here.
        await bounded(asyncio.gather(*(e.wait() for e in g.started.values())))
        assert settled == []
        assert not task.done()
        for q in reversed(queries):
            g.release[q].set()
        out = await bounded(task)
        assert [s.url for s in out.sources] == [f"https://{q}.test/" for q in queries]

    asyncio.run(main())


@pytest.mark.parametrize(
    "queries",
    [["a", "b", "c", "d", "e"], ["a", "a", "a", "a", "a"]],
    ids=["five-distinct", "five-duplicates-count-before-dedup"],
)
def test_query_cap_rejects_before_any_provider_call(queries: list[str]) -> None:
    fake = FakeSearch()
    out = asyncio.run(tool_with(fake).execute({"queries": queries}))
    assert out.is_error and out.error_code == WebErrorCode.INVALID_ARGUMENTS
    assert out.text == "Error: queries must contain at most 4 queries"
    assert fake.calls == []


def test_exact_duplicate_queries_cause_one_call_each_without_normalising() -> None:
    fake = FakeSearch()
    asyncio.run(tool_with(fake).run({"queries": ["one", "one", " two ", "One"]}))
    assert [c.query for c in fake.calls] == ["one", " two ", "One"]


def test_every_seam_request_carries_the_result_cap() -> None:
    fake = FakeSearch()
    asyncio.run(tool_with(fake, search_max_results=3).run({"queries": ["a", "b"]}))
    assert {c.max_results for c in fake.calls} == {3}


def test_single_query_returns_the_provider_result_as_is() -> None:
    provided = SearchResult(sources=result("https://dup.test", "https://dup.test").sources, content="", truncated=False)
    fake = FakeSearch(canned={"only": provided})
    out = asyncio.run(tool_with(fake).run({"queries": ["only", "only"]}))
    assert out == provided  # no heading, no dedup, empty content passes through
    assert len(fake.calls) == 1


def test_multi_query_answers_are_labelled_with_their_query_in_query_order() -> None:
    async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
        return {
            "alpha": result(content="answer a"),
            "beta": result(content=""),
            "gamma": result(content="answer c"),
        }[request.query]

    out = asyncio.run(tool_with(FakeSearch(handler=handler)).run({"queries": ["alpha", "beta", "gamma"]}))
    assert out.content == "### alpha\n\nanswer a\n\n### gamma\n\nanswer c"


def test_results_are_merged_by_query_position_not_completion_order() -> None:
    async def main() -> SearchResult:
        order = {"first": asyncio.Event(), "second": asyncio.Event()}

        async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
            if request.query == "first":
                await order["second"].wait()  # finishes last
            else:
                order["second"].set()
            return result(f"https://{request.query}.test/", content=request.query)

        return await bounded(tool_with(FakeSearch(handler=handler)).run({"queries": ["first", "second"]}))

    out = asyncio.run(main())
    assert [s.url for s in out.sources] == ["https://first.test/", "https://second.test/"]
    assert out.content == "### first\n\nfirst\n\n### second\n\nsecond"


def test_caller_cancellation_reaches_every_sibling_and_waits_for_them() -> None:
    queries = ["q1", "q2", "q3"]

    async def main() -> None:
        g = Gates(queries)
        slow_cleanup = asyncio.Event()

        async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
            g.started[request.query].set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                g.cancelled.append(request.query)
                if request.query == "q2":  # honours cancellation only after a while
                    await asyncio.wait_for(slow_cleanup.wait(), BOUND)
                g.finished[request.query].set()
                raise
            raise AssertionError("unreachable")

        task = asyncio.create_task(tool_with(FakeSearch(handler=handler)).run({"queries": queries}))
        await bounded(asyncio.gather(*(e.wait() for e in g.started.values())))
        task.cancel()
        await bounded(g.finished["q1"].wait())
        await bounded(g.finished["q3"].wait())
        # q2 is still cleaning up, so the batch is not quiescent and the call must not have returned.
        assert sorted(g.cancelled) == queries
        assert not task.done()
        slow_cleanup.set()
        with pytest.raises(asyncio.CancelledError):
            await bounded(task)
        assert all(e.is_set() for e in g.finished.values())

    asyncio.run(main())


def test_failure_waits_for_a_slow_sibling_before_returning_the_error() -> None:
    async def main() -> None:
        g = Gates(["ok", "bad"])
        slow_cleanup = asyncio.Event()
        ok_cancelled = asyncio.Event()

        async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
            g.started[request.query].set()
            if request.query == "bad":
                await g.started["ok"].wait()
                raise WebError(WebErrorCode.PROVIDER_ERROR, "bad failed")
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                g.cancelled.append("ok")
                ok_cancelled.set()
                await asyncio.wait_for(slow_cleanup.wait(), BOUND)
                g.finished["ok"].set()
                raise
            raise AssertionError("unreachable")

        task = asyncio.create_task(tool_with(FakeSearch(handler=handler)).execute({"queries": ["ok", "bad"]}))
        await bounded(ok_cancelled.wait())
        assert not task.done()  # the failure is known, but a sibling is still settling
        slow_cleanup.set()
        out = await bounded(task)
        assert g.finished["ok"].is_set()
        assert (out.error_code, out.text) == ("WEB_PROVIDER_ERROR", "Error: bad failed")
        assert out.value is None

    asyncio.run(main())


def test_successes_are_discarded_when_a_sibling_fails() -> None:
    async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
        if request.query == "bad":
            raise WebError(WebErrorCode.PROVIDER_ERROR, "nope")
        return result("https://good.test/", content="good answer")

    out = asyncio.run(tool_with(FakeSearch(handler=handler)).execute({"queries": ["good", "bad"]}))
    assert out.is_error and "good" not in out.text and out.value is None


def test_the_earlier_of_two_failures_wins_whatever_the_query_order() -> None:
    async def main() -> WebError:
        second_failed = asyncio.Event()

        async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
            if request.query == "late":
                try:
                    await second_failed.wait()
                except asyncio.CancelledError:
                    # Fails too, but later in time than "early".
                    raise WebError(WebErrorCode.ABORTED, "late aborted") from None
                raise WebError(WebErrorCode.PROVIDER_ERROR, "late failed")
            second_failed.set()
            raise WebError(WebErrorCode.PROVIDER_ERROR, "early failed")

        tool = tool_with(FakeSearch(handler=handler))
        with pytest.raises(WebError) as info:
            await bounded(tool.run({"queries": ["late", "early"]}))
        return info.value

    assert asyncio.run(main()).message == "early failed"


def test_a_sibling_cancelled_by_someone_else_fails_the_batch_with_a_code() -> None:
    async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
        if request.query == "b":
            raise asyncio.CancelledError  # e.g. a provider's own inner task group tearing down
        return result("https://a.test/")

    out = asyncio.run(tool_with(FakeSearch(handler=handler)).execute({"queries": ["a", "b"]}))
    assert out.error_code == WebErrorCode.ABORTED


def test_no_task_of_the_batch_is_left_running_after_return() -> None:
    async def main() -> None:
        async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
            if request.query == "bad":
                raise WebError(WebErrorCode.PROVIDER_ERROR, "x")
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

        before = asyncio.all_tasks()
        out = await bounded(tool_with(FakeSearch(handler=handler)).execute({"queries": ["a", "b", "bad", "c"]}))
        assert out.is_error
        assert asyncio.all_tasks() == before

    asyncio.run(main())


def test_a_sibling_cancelled_by_someone_else_cancels_the_rest_at_once() -> None:
    async def main() -> None:
        g = Gates(["a", "b"])

        async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
            g.started[request.query].set()
            if request.query == "b":
                await g.started["a"].wait()
                raise asyncio.CancelledError  # not the caller's doing
            try:
                await asyncio.wait_for(asyncio.Event().wait(), BOUND)
            except asyncio.CancelledError:
                g.cancelled.append("a")
                raise
            raise AssertionError("a was never cancelled: the batch waited for it instead")

        out = await bounded(tool_with(FakeSearch(handler=handler)).execute({"queries": ["a", "b"]}))
        assert out.error_code == WebErrorCode.ABORTED
        assert g.cancelled == ["a"]

    asyncio.run(main())


def test_a_failure_landing_right_after_a_success_is_not_lost() -> None:
    """Issue 14 item 1, forced by ordering: ``ok`` completes, and ``bad`` is scheduled to run
    (and fail) in the loop step after ``ok``'s completion callbacks, i.e. in the same step
    that wakes the batch. The batch must still see ``bad``, cancel ``slow`` and return bad's
    error, instead of waiting for ``slow`` (which here never finishes unless cancelled)."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        bad_go = asyncio.Event()
        slow_cancelled = asyncio.Event()

        async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
            if request.query == "ok":
                loop.call_soon(bad_go.set)  # bad wakes one step after ok completes
                return result("https://ok.test/")
            if request.query == "bad":
                await bad_go.wait()
                raise WebError(WebErrorCode.PROVIDER_ERROR, "bad failed")
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                slow_cancelled.set()
                raise
            raise AssertionError("unreachable")

        tool = tool_with(FakeSearch(handler=handler))
        out = await bounded(tool.execute({"queries": ["ok", "bad", "slow"]}))
        assert (out.error_code, out.text) == ("WEB_PROVIDER_ERROR", "Error: bad failed")
        assert slow_cancelled.is_set()

    asyncio.run(main())
