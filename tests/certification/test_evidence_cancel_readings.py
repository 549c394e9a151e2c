"""An audit of the mutation judgement of ``_settle_until`` (the evidence pipeline's stage runner) found that no check
cancelled an evidence call, so a pipeline that ignores a cancel passed. evidence.cancel.quiescence cancels one while
its Search API requests, and then while its page's Fetch API request, are parked at an emulator gate. Each wrong
reading is made in the reference and must fail exactly the rows that name it; the reference passes them."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from typing import Any

import pytest

from dsweb_ref.certification.checks import evidence_cancel
from dsweb_ref.tools import evidence_search

from ._readings import failing_rows, patch_reading

CHECK = "evidence.cancel.quiescence"
SEARCHES, PAGE = (case.name for case in evidence_cancel.CANCEL)
RIGHT_SETTLE, RIGHT_SETTINGS = evidence_search._settle_until, evidence_search.EvidenceSettings
# The cancel branch of _settle_until: every task cancelled, then awaited until it settled.
SETTLED = "await asyncio.gather(*tasks, return_exceptions=True)"
CANCEL_BRANCH = f"for task in tasks:\n                task.cancel()\n            {SETTLED}"


def _shielded(stage: str) -> Any:
    """``_settle_until`` with ``stage``'s tasks shielded from the call's cancel (the other stages as they are)."""
    kept: set[asyncio.Future[Any]] = set()

    async def settle(calls: Sequence[Any], deadline: float, what: str) -> list[Any]:
        if what != stage:
            return await RIGHT_SETTLE(calls, deadline, what)
        task = asyncio.ensure_future(RIGHT_SETTLE(calls, deadline, what))
        kept.add(task)
        task.add_done_callback(kept.discard)
        return await asyncio.shield(task)

    return settle


def test_the_reference_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(evidence_cancel, "CANCEL", CHECK, monkeypatch) == set()


def test_searches_shielded_from_the_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the call answers cancelled at once while its Search API requests run on
    monkeypatch.setattr(evidence_search, "_settle_until", _shielded("the search"))
    assert failing_rows(evidence_cancel, "CANCEL", CHECK, monkeypatch) == {SEARCHES}


def test_page_fetches_shielded_from_the_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the call answers cancelled at once while its page's Fetch API request runs on
    monkeypatch.setattr(evidence_search, "_settle_until", _shielded("the page fetch"))
    assert failing_rows(evidence_cancel, "CANCEL", CHECK, monkeypatch) == {PAGE}


def test_cancel_ignored_until_the_requests_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the cancel swallowed by the stage, which waits for its tasks to end on their own (the server's answer)
    patch_reading(evidence_search, "_settle_until", CANCEL_BRANCH, SETTLED, monkeypatch)
    # The reference's own page timeout (10 s) would end the parked fetch about when the cancel's 10 s run out: the
    # reading is the ignored cancel, so the page waits for the server alone.
    monkeypatch.setattr(evidence_search, "EvidenceSettings", functools.partial(RIGHT_SETTINGS, page_timeout_s=60.0))
    assert failing_rows(evidence_cancel, "CANCEL", CHECK, monkeypatch) == {SEARCHES, PAGE}


def test_answer_before_the_cancelled_tasks_settled(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: every task cancelled, but the cancel re-raised at once: the call answers while its requests still close
    patch_reading(evidence_search, "_settle_until", f"{SETTLED}\n            raise", "raise", monkeypatch)
    assert failing_rows(evidence_cancel, "CANCEL", CHECK, monkeypatch) == {SEARCHES, PAGE}
