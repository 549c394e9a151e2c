"""A read-only review (R1) of evidence.retry_refused after hunts T3-1 and T4-1 found three problems, each made here
in the reference as the review's adapter made it (EvidenceSearchTool.run, or .execute, wrapped):

- R1-F1 (false failure): a tool that keeps a conversation's answers that found evidence and answers the same query
  again from that store, evidence included, without searching, failed found-again ("the retry ... was refused").
  Seed 002 forbids repeating a dead end only ("ถ้าผลขึ้น [needs_retry] … ห้ามยิง query เดิมซ้ำ"); nothing asks that a
  found query be searched again. found-again and found-less-specific now take a search or an answer with evidence
  lines; an error or an unsearched answer with no evidence still fails (and so do hunt T4-1's readings, in
  test_hunt_t4_readings.py).
- R1-F2 (false pass): a repeated dead end answered [needs_retry] with no structured evidence, its text showing the
  conversation's earlier evidence lines with their URLs, passed as a refusal. Seed 002 keeps a source URL on every
  evidence line ("ผลลัพธ์ทุก evidence line รักษา source URL ไว้") and no query of the check holds one, so a
  refusal's text holds no "://".
- R1-F3 (false pass): a retry memory shared by every conversation answered another conversation's first query with
  a [needs_retry] answer (no error), which the other-conversation line took for a search. That query must now reach
  the engine."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from dsweb_ref._context import CallContext
from dsweb_ref.certification.checks import evidence
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.tools._evidence_guard import EvidenceContext, normalized_query
from dsweb_ref.tools._result import ToolResult
from dsweb_ref.tools.evidence_search import EvidenceSearchTool

from ._readings import fails_exactly, passes, passes_rows
from .conftest import run

RETRY = "evidence.retry_refused"
FOUND_ROWS = ("found-again", "found-less-specific")
STALE_ROWS = {"batch-needs-retry", "after-evidence"}  # a refused repeat after evidence was shown
Run = Callable[..., Any]


def _queries(arguments: object) -> list[str]:
    query = arguments.get("query") if isinstance(arguments, dict) else None
    return [query] if isinstance(query, str) else [str(q) for q in (query or [])]


def _wrap_run(monkeypatch: pytest.MonkeyPatch, wrapper: Callable[[Run], Run]) -> None:
    monkeypatch.setattr(EvidenceSearchTool, "run", wrapper(EvidenceSearchTool.run))


def _cache(monkeypatch: pytest.MonkeyPatch, *, keep_evidence: bool = True) -> None:
    """The review's `cache`: a call whose every query found evidence kept per conversation, and the same call asked
    again answered from it, unsearched (``keep_evidence`` False: answered with the evidence left out)."""
    stores: list[tuple[EvidenceContext, dict[tuple[str, ...], dict[str, Any]]]] = []  # contexts kept alive

    def wrapper(original: Run) -> Run:
        async def run(
            self: EvidenceSearchTool, arguments: object, ctx: CallContext | None = None,
            context: EvidenceContext | None = None,
        ) -> dict[str, Any]:
            context = context if context is not None else EvidenceContext()
            store = next((s for known, s in stores if known is context), None)
            if store is None:
                store = {}
                stores.append((context, store))
            key = tuple(normalized_query(q) for q in _queries(arguments))
            if key in store:
                kept = copy.deepcopy(store[key])
                if not keep_evidence:
                    for group in kept["queries"]:
                        group["evidence"] = []
                return kept
            value: dict[str, Any] = await original(self, arguments, ctx, context)
            if not value["needs_retry"] and all(not g["needs_retry"] for g in value["queries"]):
                store[key] = copy.deepcopy(value)
            return value

        return run

    _wrap_run(monkeypatch, wrapper)


def _answered_refusal(monkeypatch: pytest.MonkeyPatch, *, stale_text: bool = False, shared: bool = False) -> None:
    """The review's refusal as an answer: a refused repeat (the reference's WEB_* error) answered [needs_retry],
    unsearched, with no structured evidence. ``stale_text``: its text shows the conversation's earlier evidence
    lines with their URLs (`stale-text`); ``shared``: one retry memory for every conversation (`global`)."""
    lines: list[tuple[EvidenceContext, list[tuple[str, str]]]] = []  # each conversation's lines shown so far
    common = EvidenceContext()

    def shown(context: EvidenceContext) -> list[tuple[str, str]]:
        found = next((kept for known, kept in lines if known is context), None)
        if found is None:
            found = []
            lines.append((context, found))
        return found

    def wrapper(original: Run) -> Run:
        async def run(
            self: EvidenceSearchTool, arguments: object, ctx: CallContext | None = None,
            context: EvidenceContext | None = None,
        ) -> dict[str, Any]:
            context = context if context is not None else EvidenceContext()
            if shared:
                common.question, common.local_names = context.question, context.local_names
                context = common
            value: dict[str, Any] = await original(self, arguments, ctx, context)
            shown(context).extend((e["text"], e["url"]) for g in value["queries"] for e in g["evidence"])
            return value

        return run

    _wrap_run(monkeypatch, wrapper)
    original_execute = EvidenceSearchTool.execute

    async def execute(
        self: EvidenceSearchTool, arguments: object, ctx: CallContext | None = None,
        context: EvidenceContext | None = None,
    ) -> ToolResult:
        result = await original_execute(self, arguments, ctx, context)
        if not result.error_code or "found no usable evidence" not in result.text:
            return result
        why = result.text[:300]
        tried = {"results": 0, "dropped": [], "candidates": 0, "fetched": 0, "fetch_failed": 0, "search_error": None,
                 "rejected": [], "why": f"not searched again: {why}"}
        qs = _queries(arguments)
        groups = [{"query": q, "needs_retry": True, "evidence": [], "tried": dict(tried)} for q in qs]
        text = "\n\n".join(f"Query {n}: {q}\n[needs_retry] not searched again: {why}" for n, q in enumerate(qs, 1))
        earlier = shown(common if shared else context or EvidenceContext())
        if stale_text and earlier:
            text += "\n\nEvidence so far:\n" + "\n".join(f'- "{t}" (source: {u})' for t, u in earlier)
        return ToolResult(text=text, value={"queries": groups, "needs_retry": True, "sources": []})

    monkeypatch.setattr(EvidenceSearchTool, "execute", execute)


def _reason() -> tuple[str, str]:
    (result,) = run(reference_target(), only=[RETRY]).results
    return result.outcome.value, result.reason


# --- R1-F1: a found query answered again from the evidence kept -----------------------------------------------------


def test_the_found_rows_pass_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(evidence, "RETRIES", RETRY, FOUND_ROWS, monkeypatch)


def test_a_found_query_answered_again_from_the_evidence_kept_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: nothing in seed 002 asks that a query that found evidence be searched again; its kept evidence will do
    _cache(monkeypatch)
    passes(RETRY)


def test_a_found_query_answered_again_unsearched_without_evidence_fails_exactly_found_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the repeat of a query that found evidence left unsearched and answered with nothing (a refusal in
    # all but name); the message says what came back
    _cache(monkeypatch, keep_evidence=False)
    fails_exactly(evidence, "RETRIES", RETRY, "found-again", monkeypatch)
    assert _reason() == ("failed", "found-again: the retry 'harbour pilot roster' came back not searched, with 0 "
                         "evidence line(s)")


# --- R1-F2: a refusal whose text shows earlier evidence lines -------------------------------------------------------


def test_a_refusal_whose_text_shows_earlier_evidence_fails_exactly_the_rows_with_evidence_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: [needs_retry] said again, nothing in the value, but the conversation's earlier lines (and URLs)
    # shown in the text the model reads
    _answered_refusal(monkeypatch, stale_text=True)
    fails_exactly(evidence, "RETRIES", RETRY, STALE_ROWS, monkeypatch)


def test_a_refusal_answered_needs_retry_with_no_evidence_line_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: how the tool says no (here a [needs_retry] answer naming the query and why, no URL) is the tool's
    _answered_refusal(monkeypatch)
    passes(RETRY)


# --- R1-F3: a retry memory shared by every conversation --------------------------------------------------------------


def test_a_retry_memory_shared_across_conversations_fails_on_the_other_conversation_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: another conversation's first zzqx unknowable answered [needs_retry] (no error), unsearched, because
    # the first conversation's dead end is remembered for every conversation
    _answered_refusal(monkeypatch, shared=True)
    value, reason = _reason()
    assert value == "failed" and reason.startswith(
        "same: another conversation's first 'zzqx unknowable' came back not searched"
    ), reason
    assert "shared across conversations" in reason, reason
