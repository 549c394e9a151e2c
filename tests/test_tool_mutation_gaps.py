"""Tool behaviours that survived mutation testing (issue 14, "unit-test gaps"): the cut of a
model-visible field exactly at its limit and on a space, a second cancel while a failed batch
settles, the ABORTED message, and the settings type checks."""

from __future__ import annotations

import asyncio

import pytest
from fakes import FakeSearch, result

from dsweb_ref import CallContext, SearchRequest, SearchResult, Source, WebError, WebErrorCode, WebService
from dsweb_ref.tools import SearchToolSettings, WebSearchTool, render_search
from dsweb_ref.tools._render import MAX_SNIPPET_CHARS, MAX_TITLE_CHARS

BOUND = 5.0


def _line(title: str) -> str:
    text = render_search(SearchResult(sources=(Source("https://a.test/", title=title),)))
    return text.splitlines()[1]


def test_a_title_exactly_at_the_limit_is_shown_whole() -> None:
    title = "t" * MAX_TITLE_CHARS
    assert _line(title) == f"- [{title}](https://a.test/)"


def test_a_title_one_past_the_limit_is_cut_with_a_marker() -> None:
    title = "t" * (MAX_TITLE_CHARS + 1)
    assert _line(title) == f"- [{'t' * (MAX_TITLE_CHARS - 1)}…](https://a.test/)"


def test_a_cut_landing_on_a_space_drops_the_space_before_the_marker() -> None:
    snippet = "s" * (MAX_SNIPPET_CHARS - 2) + " tail"
    text = render_search(SearchResult(sources=(Source("https://a.test/", title="T", snippet=snippet),)))
    assert text.splitlines()[1] == f"- [T](https://a.test/) — {'s' * (MAX_SNIPPET_CHARS - 2)}…"


def test_a_sibling_cancelled_by_someone_else_fails_with_the_aborted_message() -> None:
    async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
        if request.query == "b":
            raise asyncio.CancelledError
        return result("https://a.test/")

    web = WebService()
    web.register_search(FakeSearch(handler=handler))
    out = asyncio.run(WebSearchTool(web).execute({"queries": ["a", "b"]}))
    assert (out.error_code, out.text) == (WebErrorCode.ABORTED, "Error: a search of the batch was cancelled")


def test_a_second_cancel_while_a_failed_batch_settles_is_raised_after_quiescence() -> None:
    async def main() -> None:
        settling = asyncio.Event()
        release = asyncio.Event()
        finished: list[str] = []

        async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
            if request.query == "bad":
                raise WebError(WebErrorCode.PROVIDER_ERROR, "bad failed")
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                settling.set()
                await asyncio.wait_for(release.wait(), BOUND)  # slow cleanup
                finished.append(request.query)
                raise
            raise AssertionError("unreachable")

        web = WebService()
        web.register_search(FakeSearch(handler=handler))
        task = asyncio.create_task(WebSearchTool(web).run({"queries": ["slow", "bad"]}))
        await asyncio.wait_for(settling.wait(), BOUND)
        task.cancel()  # the caller gives up while the batch is settling after the failure
        for _ in range(5):
            await asyncio.sleep(0)
        assert not task.done()  # quiescence first
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, BOUND)
        assert finished == ["slow"]

    asyncio.run(main())


@pytest.mark.parametrize("value", ["yes", 1, 0, None])
def test_fetch_enabled_must_be_a_boolean(value: object) -> None:
    with pytest.raises(WebError) as info:
        SearchToolSettings(fetch_enabled=value)  # type: ignore[arg-type]
    assert (info.value.code, info.value.message) == (WebErrorCode.CONFIG_INVALID, "fetch_enabled must be a boolean")


@pytest.mark.parametrize("name", ["search_max_queries", "search_max_results"])
@pytest.mark.parametrize("value", [True, 0, 1.5, "4"])
def test_counts_must_be_positive_integers_not_booleans(name: str, value: object) -> None:
    with pytest.raises(WebError) as info:
        SearchToolSettings(**{name: value})  # type: ignore[arg-type]
    assert info.value.code == WebErrorCode.CONFIG_INVALID
    label = {"search_max_queries": "searchMaxQueries", "search_max_results": "searchMaxResults"}[name]
    assert info.value.message == f"{label} must be a positive integer, got {value!r}"


@pytest.mark.parametrize(("queries", "index"), [([3], 0), (["ok", None], 1), (["ok", "ok2", ["x"]], 2)])
def test_a_non_string_query_names_its_index_with_the_invalid_arguments_code(queries: list[object], index: int) -> None:
    fake = FakeSearch()
    web = WebService()
    web.register_search(fake)
    out = asyncio.run(WebSearchTool(web).execute({"queries": queries}))
    assert (out.error_code, out.text) == (
        WebErrorCode.INVALID_ARGUMENTS,
        f'Error: invalid arguments: "queries[{index}]" must be a string',
    )
    assert fake.calls == []
