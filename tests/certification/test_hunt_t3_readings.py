"""A hunt (T3) certified an evidence pipeline written from the seeds alone, not from this reference, and found
one false failure: its tool answered a repeated dead end with [needs_retry] again, unsearched, where
evidence.retry_refused wanted a WEB_* error. Seed 002 forbids firing the query again ("ห้ามยิง query เดิมซ้ำ");
how the tool says no is open. The check now takes either refusal, and still fails a repeat sent to the engine or
a refusal that shows evidence."""

from __future__ import annotations

from typing import Any

import pytest

from dsweb_ref._context import CallContext
from dsweb_ref._exceptions import WebError
from dsweb_ref.certification.checks import evidence
from dsweb_ref.tools import evidence_search
from dsweb_ref.tools._evidence_guard import EvidenceContext
from dsweb_ref.tools.evidence_search import EvidenceSearchTool

from ._readings import failing_rows, passes

RETRY = "evidence.retry_refused"


def _answered_again(monkeypatch: pytest.MonkeyPatch, *, evidence: list[dict[str, Any]] | None = None) -> None:
    """The reference's tool answering a refused repeat with a [needs_retry] value (``evidence`` lines in it, for
    the wrong reading), nothing searched."""
    original = EvidenceSearchTool.run

    async def run(
        self: EvidenceSearchTool, arguments: object, ctx: CallContext | None = None,
        context: EvidenceContext | None = None,
    ) -> dict[str, Any]:
        try:
            return await original(self, arguments, ctx, context)
        except WebError as error:
            if "no usable evidence" not in error.message and "no more specific" not in error.message:
                raise
        queries = evidence_search.parse_evidence_queries(arguments, self.settings)
        tried = {"results": 0, "dropped": [], "candidates": 0, "fetched": 0, "fetch_failed": 0, "search_error": None,
                 "why": "not searched again: it already found no usable evidence"}
        groups = [{"query": q, "needs_retry": not evidence, "evidence": evidence or [], "tried": tried}
                  for q in queries]
        return {"queries": groups, "needs_retry": not evidence, "sources": []}

    monkeypatch.setattr(EvidenceSearchTool, "run", run)


def test_a_repeat_answered_needs_retry_unsearched_is_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    passes(RETRY)
    _answered_again(monkeypatch)
    passes(RETRY)


def test_a_refusal_that_shows_evidence_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    line = {"url": "https://harbour.example.test/ferry", "title": "Ferry", "text": "It leaves at nine.", "from": "page"}
    _answered_again(monkeypatch, evidence=[line])
    failing = failing_rows(evidence, "RETRIES", RETRY, monkeypatch)
    assert {"same", "case", "spacing"} <= failing, failing


def test_without_the_refusal_reading_the_answer_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # The check before this hunt: a WEB_* error only. The [needs_retry] answer then fails the plain repeat.
    monkeypatch.setattr(evidence, "_refused", lambda outcome, what, catches: evidence.expect_error(outcome, what))
    _answered_again(monkeypatch)
    assert "same" in failing_rows(evidence, "RETRIES", RETRY, monkeypatch)
