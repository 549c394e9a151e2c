"""A read-only hunt (U3) over seed 000's web_search checks found wrong readings dsweb certify passed. Each is made in
the reference as the hunt made it and must fail exactly the new rows that name it; the reference passes them.

U3-1. Seed 000: 'web_search accepts one required queries string array.' A tool that never checks that queries is an
array iterates a string as its characters and an object as its keys. The one string row sent "markdown", refused
for the wrong reason (eight characters over the cap of four): search.validation.arguments now sends "md", "m" and
an object with two keys.

U3-4. Seed 000: 'Accept both query and queries. Rejected: two optional fields make the model choose between
equivalent representations.' A tool reading the legacy query as an alias of queries (validated as the array it must
be) refused the one legacy row, a string, as "not an array": search.validation.arguments now sends the legacy query
as an array.

U3-3. Seed 000: the package tests prove 'caller cancellation propagation'; 'Multi-query failure is all-or-nothing'.
Both cancel rows held every request, so nothing had succeeded when the cancel landed, and a batch that answered a
cancel with the searches already finished (merged, as a normal result) was certified: search.cancel.quiescence now
answers one search and parks the others, and cancels once the target has read that answer."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Coroutine, Sequence
from typing import Any

import pytest

from dsweb_ref import WebError
from dsweb_ref._context import CallContext
from dsweb_ref._exceptions import WebErrorCode
from dsweb_ref._types import SearchRequest, SearchResult
from dsweb_ref.certification.checks import batch, validation
from dsweb_ref.tools import _batch, web_search
from dsweb_ref.tools._merge import merge_results

from ._readings import fails_exactly_shown, passes_rows, patch_reading

ARGUMENTS_CHECK, ARGUMENTS_TABLE = "search.validation.arguments", "ARGUMENTS"
ROUTED = r"\[(?:Search API|Messages)\] (.+?): "  # the check runs over both search routes and names the row under each
NOT_ARRAY = ("queries is a short string", "queries is a one-character string", "queries is an object")
LEGACY_ARRAY = "legacy query as an array"

# U3-1: queries read by duck typing, the array test left out.
ARRAY_TEST = """    if not isinstance(queries, list):
        raise _invalid('invalid arguments: "queries" must be an array')
"""
# U3-4: the legacy query read in place of a missing queries.
READ_QUERIES = """    if "queries" not in arguments:
        raise _invalid('invalid arguments: missing required property "queries"')
    queries = arguments["queries"]
"""
ALIAS = """    queries = arguments.get("queries", arguments.get("query"))
    if queries is None:
        raise _invalid('invalid arguments: missing required property "queries"')
"""


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(validation, ARGUMENTS_TABLE, ARGUMENTS_CHECK, (*NOT_ARRAY, LEGACY_ARRAY), monkeypatch)


def test_the_new_rows_send_what_the_hunt_found_searched() -> None:
    rows = {c.name: c["arguments"] for c in validation.ARGUMENTS}
    cap = web_search.SearchToolSettings().search_max_queries  # the check runs under the default cap
    strings = [rows[name]["queries"] for name in NOT_ARRAY[:2]]
    assert all(isinstance(s, str) and 0 < len(s) <= cap for s in strings) and {len(s) for s in strings} == {1, 2}
    assert isinstance(rows[NOT_ARRAY[2]]["queries"], dict) and len(rows[NOT_ARRAY[2]]["queries"]) == 2
    assert rows[LEGACY_ARRAY] == {"query": ["markdown"]}


def test_queries_iterated_without_an_array_test_fails_exactly_the_not_array_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: U3-1, a string no longer than the cap searched character by character, an object key by key
    patch_reading(web_search, "parse_queries", ARRAY_TEST, "", monkeypatch)
    fails_exactly_shown(validation, ARGUMENTS_TABLE, ARGUMENTS_CHECK, NOT_ARRAY, ROUTED, monkeypatch)


def test_the_array_test_after_the_count_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: which refusal a non-array meets first (the cap counting a long string's characters, or the array test) is
    # the target's; seed 000 fixes that it is refused before any provider call, not in what words
    late = "    for i, q in enumerate(queries):\n"
    source = inspect.getsource(web_search.parse_queries)
    checks = source[source.index(ARRAY_TEST):source.index(late) + len(late)]
    patch_reading(web_search, "parse_queries", checks, checks.replace(ARRAY_TEST, "").replace(late, ARRAY_TEST + late),
                  monkeypatch)
    passes_rows(validation, ARGUMENTS_TABLE, ARGUMENTS_CHECK, [c.name for c in validation.ARGUMENTS], monkeypatch)


def test_the_legacy_query_read_as_an_alias_fails_exactly_its_array_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: U3-4, the legacy query read in place of a missing queries and validated as the array: ['markdown']
    # searched (the string row is refused as not an array, so it passed)
    patch_reading(web_search, "parse_queries", READ_QUERIES, ALIAS, monkeypatch)
    fails_exactly_shown(validation, ARGUMENTS_TABLE, ARGUMENTS_CHECK, LEGACY_ARRAY, ROUTED, monkeypatch)


def test_the_legacy_query_refused_by_name_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: the legacy query refused by its own name (an unknown argument) rather than as a missing queries: the
    # refusal's wording is the target's
    by_name = "    if 'query' in arguments and 'queries' not in arguments:\n" \
              "        raise _invalid('invalid arguments: query is not an argument, use queries')\n"
    patch_reading(web_search, "parse_queries", READ_QUERIES, by_name + READ_QUERIES, monkeypatch)
    passes_rows(validation, ARGUMENTS_TABLE, ARGUMENTS_CHECK, [c.name for c in validation.ARGUMENTS], monkeypatch)


# --- U3-3: a cancelled batch answering with the searches that finished ----------------------------------------------

CANCEL_CHECK, CANCEL_TABLE = "search.cancel.quiescence", "CANCEL"
(ANSWERED_FIRST,) = (c.name for c in batch.CANCEL if c.params.get("answered"))


class Partial(Exception):
    """The hunt's signal: the batch was cancelled after ``done`` (index, result) had finished."""

    def __init__(self, done: list[tuple[int, SearchResult]]) -> None:
        super().__init__("cancelled with finished searches")
        self.done = done


async def run_keeping_partial(coros: Sequence[Coroutine[Any, Any, SearchResult]]) -> list[SearchResult]:
    """The hunt's batch: cancelled, it settles every search as the reference does, then hands on the finished ones."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except asyncio.CancelledError:
        await _batch._cancel_and_settle(tasks)
        ok = [(i, t.result()) for i, t in enumerate(tasks) if not t.cancelled() and t.exception() is None]
        if ok:  # wrong: a cancelled call answers with the searches that had finished
            raise Partial(ok) from None
        raise
    failed = [t for t in tasks if t.done() and not t.cancelled() and t.exception() is not None]
    if failed:
        await _batch._cancel_and_settle(tasks)
        raise failed[0].exception()  # type: ignore[misc]
    return [t.result() for t in tasks]


def _cancel_keeps(answer: str, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """WebSearchTool.run with the hunt's batch: a cancel after some searches finished answers ``answer``: "merged"
    (the hunt's reading: the finished searches merged as the call's result) or "aborted" (WEB_ABORTED, no value).
    Returns the list of the queries finished at each such cancel, filled as calls run."""
    kept: list[list[str]] = []

    async def run(self: web_search.WebSearchTool, arguments: object, ctx: CallContext | None = None) -> SearchResult:
        queries = web_search.parse_queries(arguments, self.settings.search_max_queries)
        ctx = ctx or CallContext()
        cap = self.settings.search_max_results
        if len(queries) == 1:
            return await self.web.search(SearchRequest(queries[0], cap), ctx)
        try:
            results = await run_keeping_partial([self.web.search(SearchRequest(q, cap), ctx) for q in queries])
        except Partial as partial:
            task = asyncio.current_task()
            assert task is not None
            task.uncancel()
            kept.append([queries[i] for i, _ in partial.done])
            if answer == "aborted":
                raise WebError(WebErrorCode.ABORTED, "the call was cancelled") from None
            return merge_results([queries[i] for i, _ in partial.done], [r for _, r in partial.done], cap)
        return merge_results(queries, results, cap)

    monkeypatch.setattr(web_search.WebSearchTool, "run", run)
    return kept


def test_the_reference_passes_the_answered_first_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(batch, CANCEL_TABLE, CANCEL_CHECK, ANSWERED_FIRST, monkeypatch)


def test_a_cancel_keeping_the_finished_searches_fails_exactly_the_answered_first_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: U3-3, a cancel that lands after one search of the batch succeeded answered with that search's result
    # (merged, a success) instead of cancelled; with every search parked it propagates, so the other rows pass
    kept = _cancel_keeps("merged", monkeypatch)
    fails_exactly_shown(batch, CANCEL_TABLE, CANCEL_CHECK, ANSWERED_FIRST, ROUTED, monkeypatch)
    assert kept == [batch.QUERIES[:1]] * 2  # the row alone, on each search route (the rest park every search)


def test_a_cancel_answered_aborted_after_a_search_finished_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: the cancelled call answering WEB_ABORTED with no value (the protocol's other cancelled answer) once a
    # search had finished; the finished search is discarded either way
    kept = _cancel_keeps("aborted", monkeypatch)
    passes_rows(batch, CANCEL_TABLE, CANCEL_CHECK, [c.name for c in batch.CANCEL], monkeypatch)
    assert kept == [batch.QUERIES[:1]] * 2  # the cancel landed after the answered search finished, on each route
