"""Issue 24 outside hunt (seeds 000 and 001): a fan-out pool fixed at four, a failure listing the successful
searches' sources, a dedup keeping last positions or keyed on NFC, and 409/425 retried like a 429 all still
certified. Each wrong reading is made in the reference and must fail exactly the rows that name it."""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Coroutine, Sequence
from typing import Any

import pytest

from dsweb_ref._exceptions import WebError
from dsweb_ref.certification.checks import batch, scheduling, validation
from dsweb_ref.providers import _scheduler
from dsweb_ref.tools import web_search

from ._readings import failing_rows, patch_reading

SIX = "six queries, searchMaxQueries six"
UNLISTED = "successful siblings' sources kept out of the failure"
LAST = "duplicate after another query"
NFC = "differ by Unicode normalisation"
CONFLICT, TOO_EARLY = "409", "425"


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not failing_rows(batch, "CONCURRENT", "search.batch.concurrent", monkeypatch) & {SIX}
    assert not failing_rows(batch, "ALL_OR_NOTHING", "search.batch.all_or_nothing", monkeypatch) & {UNLISTED}
    assert not failing_rows(validation, "DEDUP", "search.validation.dedup", monkeypatch) & {LAST, NFC}
    assert not failing_rows(scheduling, "NEVER_CASES", "search.api.retry.never", monkeypatch) & {CONFLICT, TOO_EARLY}


def test_a_pool_of_four_fails_exactly_the_six_query_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: at most four searches in flight whatever searchMaxQueries is (a Semaphore(4) around each)
    run_all = web_search.run_all_or_nothing

    async def pooled(coros: Sequence[Coroutine[Any, Any, Any]]) -> list[Any]:
        pool = asyncio.Semaphore(4)

        async def one(coro: Coroutine[Any, Any, Any]) -> Any:
            async with pool:
                return await coro

        return await run_all([one(c) for c in coros])

    monkeypatch.setattr(web_search, "run_all_or_nothing", pooled)
    assert failing_rows(batch, "CONCURRENT", "search.batch.concurrent", monkeypatch) == {SIX}


# The wrong reading wraps each search: a wrapper cancelled before its first step (a sibling failed first) never awaits
# the search it holds, and that coroutine is collected unstarted (seen once in a fresh-clone CI). The reference's own
# batch hands the service's coroutines to its tasks directly, so only this test's wrapper can leave one.
@pytest.mark.filterwarnings("ignore:coroutine 'WebService.search' was never awaited:RuntimeWarning")
def test_a_failure_listing_the_found_sources_fails_exactly_the_unlisted_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the re-raised failure's message lists the URLs the successful searches found
    run_all = web_search.run_all_or_nothing

    async def leaky(coros: Sequence[Coroutine[Any, Any, Any]]) -> list[Any]:
        found: list[str] = []

        async def kept(coro: Coroutine[Any, Any, Any]) -> Any:
            result = await coro
            found.extend(s.url for s in result.sources)
            return result

        try:
            return await run_all([kept(c) for c in coros])
        except WebError as error:
            raise WebError(error.code, f"{error.message} (sources found: {', '.join(found)})") from error

    monkeypatch.setattr(web_search, "run_all_or_nothing", leaky)
    assert failing_rows(batch, "ALL_OR_NOTHING", "search.batch.all_or_nothing", monkeypatch) == {UNLISTED}


def test_a_dedup_keeping_last_positions_fails_exactly_the_later_duplicate_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: exact duplicates dropped keeping their last position, not their first
    patch_reading(web_search, "parse_queries", "return list(dict.fromkeys(queries))",
                  "return list(dict.fromkeys(queries[::-1]))[::-1]", monkeypatch)
    assert failing_rows(validation, "DEDUP", "search.validation.dedup", monkeypatch) == {LAST}


def test_an_nfc_dedup_key_fails_exactly_the_normalisation_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: queries deduplicated by their NFC form, so precomposed and decomposed é are one search
    parse = web_search.parse_queries

    def nfc_keyed(arguments: object, max_queries: int) -> list[str]:
        first: dict[str, str] = {}
        for query in parse(arguments, max_queries):
            first.setdefault(unicodedata.normalize("NFC", query), query)
        return list(first.values())

    monkeypatch.setattr(web_search, "parse_queries", nfc_keyed)
    assert failing_rows(validation, "DEDUP", "search.validation.dedup", monkeypatch) == {NFC}


def test_409_and_425_retried_fail_exactly_their_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: 409 and 425 taken for transient and retried like a 429 (a Fetch API 409 too: hunt T1-2's row)
    patch_reading(_scheduler, "retryable", "status in (408, 429)", "status in (408, 409, 425, 429)", monkeypatch)
    failing = failing_rows(scheduling, "NEVER_CASES", "search.api.retry.never", monkeypatch)
    assert failing == {CONFLICT, TOO_EARLY, "fetch 409", "evidence search 409"}  # the pipeline's too (review R3-F2)
