"""A read-only hunt (T4) found a false pass in evidence.retry_refused: every row's first call was a dead end, so a
pipeline that refuses EVERY earlier query of a conversation when asked again, also one that found evidence,
certified. Seed 002 scopes the refusal to a query that said [needs_retry] ("ถ้าผลขึ้น [needs_retry] agent ต้องปรับ
query ให้เจาะจงขึ้น … ห้ามยิง query เดิมซ้ำ"), and web_search serves data that changes over time (the latest news,
prices): asking again a query that found evidence is legitimate and is searched.

- T4-1 repeat-any: after each call every query is added to the repeats the tool refuses (the found-again row).
- T4-1 remember-all: every query is remembered as an attempt that found nothing, so the less-specific and
  invented-fact rules apply to queries that found evidence too (found-again and found-less-specific).

Each wrong reading is made in the reference as the hunt made it (EvidenceSearchTool.run wrapped) and fails exactly
its rows; the reference passes them, and a repeat answered otherwise than the first time (the seed leaves how open)
stays certified."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dsweb_ref._context import CallContext
from dsweb_ref.certification.checks import evidence
from dsweb_ref.tools._evidence_guard import EvidenceContext, normalized_query
from dsweb_ref.tools.evidence_search import EvidenceSearchTool

from ._readings import fails_exactly, passes_rows

RETRY = "evidence.retry_refused"
FOUND_AGAIN = "found-again"
FOUND_LESS_SPECIFIC = "found-less-specific"
NEW_ROWS = (FOUND_AGAIN, FOUND_LESS_SPECIFIC)

Afterwards = Callable[[EvidenceContext, dict[str, Any]], None]


def _wrap_run(afterwards: Afterwards, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference's EvidenceSearchTool.run with ``afterwards(context, value)`` done after each call that
    returned, as the hunt's adapter wrapped it."""
    original = EvidenceSearchTool.run

    async def run(
        self: EvidenceSearchTool, arguments: object, ctx: CallContext | None = None,
        context: EvidenceContext | None = None,
    ) -> dict[str, Any]:
        context = context if context is not None else EvidenceContext()
        value = await original(self, arguments, ctx, context)
        afterwards(context, value)
        return value

    monkeypatch.setattr(EvidenceSearchTool, "run", run)


def _repeat_any(context: EvidenceContext, value: dict[str, Any]) -> None:
    # the hunt's repeat-any: "never repeat the same query" enforced for every earlier query of the conversation
    for group in value["queries"]:
        context.exhausted.add(normalized_query(group["query"]))


def _remember_all(context: EvidenceContext, value: dict[str, Any]) -> None:
    # the hunt's remember-all: every query of a call remembered as an attempt that found nothing
    context.remember_empty(group["query"] for group in value["queries"])


def test_the_new_rows_are_searched_by_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(evidence, "RETRIES", RETRY, NEW_ROWS, monkeypatch)


def test_every_query_refused_again_fails_exactly_the_found_again_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: harbour pilot roster, which found evidence, refused when asked again (a less specific query is
    # still searched: only the repeats are refused)
    _wrap_run(_repeat_any, monkeypatch)
    fails_exactly(evidence, "RETRIES", RETRY, FOUND_AGAIN, monkeypatch)


def test_every_query_remembered_as_a_dead_end_fails_exactly_the_found_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the dead-end rules applied to a query that found evidence: harbour pilot roster refused when asked
    # again, and pilot roster (all its words in it) refused as less specific
    _wrap_run(_remember_all, monkeypatch)
    fails_exactly(evidence, "RETRIES", RETRY, set(NEW_ROWS), monkeypatch)


def test_a_repeat_answered_without_the_evidence_shown_before_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: seed 002 asks that a query that found evidence may be asked again, not how the repeat is answered: a
    # pipeline that searches it again and leaves out the lines an earlier call of the conversation showed (the agent
    # has them) stays certified
    shown: list[tuple[EvidenceContext, set[str]]] = []  # each conversation's context (kept alive) and its lines

    def new_lines_only(context: EvidenceContext, value: dict[str, Any]) -> None:
        seen = next((lines for known, lines in shown if known is context), None)
        if seen is None:
            seen = set()
            shown.append((context, seen))
        for group in value["queries"]:
            lines = group["evidence"]
            group["evidence"] = [line for line in lines if line["text"] not in seen]
            seen.update(line["text"] for line in lines)

    _wrap_run(new_lines_only, monkeypatch)
    passes_rows(evidence, "RETRIES", RETRY, NEW_ROWS, monkeypatch)
