"""An audit of seed 002's evidence checks: three readings dsweb certify passed because no row enforced what the seed
decides. A pipeline that reads every result it is offered (the reference's max_pages and max_per_domain set to
10,000) passed all thirteen evidence checks, though seed 002 "normally selects evidence pages, bounded" after
"source diversity selection -> fetch selected pages"; [needs_retry] was only looked for somewhere in a call's text,
never in the group of the one query of a batch that found nothing ("results come back separated by query"); and
the output was never checked for being deterministic ("web_search.py uses a deterministic code pipeline"): the
query groups shuffled at random passed. Each wrong reading is made in the reference and must fail exactly the row
that names it; variants the seed leaves open stay certified."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

import pytest

from dsweb_ref.certification.checks import evidence, evidence_diversity
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.tools import evidence_search

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run
from .test_open_choice_evidence import settings

BATCH, DIVERSITY = "evidence.batch", "evidence.diversity"
MANY, PER_QUERY, ORDER = "many-results", "needs-retry-per-query", "completion-order"
RIGHT_VALUE, RIGHT_RENDER = evidence_search._value, evidence_search.render_evidence
RIGHT_SETTLE, RIGHT_SELECT = evidence_search._settle_until, evidence_search.select_pages


def _alone(module: Any, table: str, check: str, row: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """(outcome, reason) of ``row`` of ``module.table`` run alone by ``check``, the table whole again after."""
    cases = getattr(module, table)
    monkeypatch.setattr(module, table, tuple(c for c in cases if c.name == row))
    (result,) = run(reference_target(), only=[check]).results
    monkeypatch.setattr(module, table, cases)
    return result.outcome.value, result.reason


def test_the_reference_passes_the_new_rows() -> None:
    assert MANY in {c.name for c in evidence_diversity.DIVERSITY}
    assert {PER_QUERY, ORDER} <= {c.name for c in evidence.BATCH}
    report = run(reference_target(), only=[BATCH, DIVERSITY])
    assert {r.check.id: r.outcome.value for r in report.results} == {BATCH: "passed", DIVERSITY: "passed"}, [
        r.reason for r in report.results
    ]


# Gap A: the page bound.


def test_every_result_asked_for_and_read_fails_exactly_the_many_results_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: no page bound (the auditor's max_pages and max_per_domain of 10,000) in a pipeline that asks for the
    # Search API's most results (50): all 180 fetched; the other diversity rows pass it (where every result offered
    # was used they note the share not judged)
    settings(monkeypatch, results_per_query=50, max_pages=10_000, max_per_domain=10_000)
    fails_exactly(evidence_diversity, "DIVERSITY", DIVERSITY, MANY, monkeypatch)


def test_an_answer_not_cut_to_its_count_and_read_whole_fails_exactly_the_many_results_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: no page bound in a pipeline that keeps an answer longer than its count (its searches sent with no
    # result bound, so the seam cuts nothing): every one of the 180 results fetched
    settings(monkeypatch, max_pages=10_000, max_per_domain=10_000)
    patch_reading(evidence_search.EvidenceSearchTool, "run", "SearchRequest(q, cfg.results_per_query)",
                  "SearchRequest(q, None)", monkeypatch)  # fmt: skip
    fails_exactly(evidence_diversity, "DIVERSITY", DIVERSITY, MANY, monkeypatch)


@pytest.mark.parametrize(("count", "pages"), [(1, 8), (2, 8), (8, 3), (8, 40), (50, 8)])
def test_any_count_and_any_page_bound_pass_the_many_results_row(
    count: int, pages: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # seed-open: how many results a query the target asks for (seed 001: 1-50) and how many pages it reads (seed
    # 002 names no number); the engine offers its 45 results a query whatever the count
    settings(monkeypatch, results_per_query=count, max_pages=pages)
    assert _alone(evidence_diversity, "DIVERSITY", DIVERSITY, MANY, monkeypatch) == ("passed", "")


def test_every_result_kept_of_an_answer_cut_to_its_count_passes_the_many_results_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # seed-open: the reference's searches ask for 8 results and the seam cuts a longer answer to them (seed 000's
    # cut), so with no page bound it reads 32 pages, four times its count: a bound of its own, which no row can tell
    # from a target whose page bound is 32 (the auditor's setting; left open, see the row's rule)
    settings(monkeypatch, max_pages=10_000, max_per_domain=10_000)
    assert _alone(evidence_diversity, "DIVERSITY", DIVERSITY, MANY, monkeypatch) == ("passed", "")


def test_the_many_results_row_offers_far_more_than_a_page_bound() -> None:
    case = next(c for c in evidence_diversity.DIVERSITY if c.name == MANY)
    results = {q: evidence_diversity.many_results(q, case["each"]) for q in case["queries"]}
    urls = [r["url"] for rows in results.values() for r in rows]
    assert len(case["queries"]) == 4 and len(urls) == len(set(urls)) == 180
    assert len({evidence_diversity.site(u) for u in urls}) == 180  # no domain share can be what leaves one unread


# Gap B: [needs_retry] in the group of the query that found nothing.


def _said_once(top: bool) -> Any:
    """The groups rendered without their markers, and one [needs_retry] for the whole call above (``top``) or
    below them when any query found nothing."""

    def render(value: Any, max_chars: int) -> str:
        text = RIGHT_RENDER({**value, "queries": [{**g, "needs_retry": False} for g in value["queries"]]}, max_chars)
        if not any(g["needs_retry"] for g in value["queries"]):
            return text
        marker = "[needs_retry] Some queries found no usable evidence: make them more specific."
        return f"{marker}\n\n{text}" if top else f"{text}\n\n{marker}"

    return render


@pytest.mark.parametrize("top", [True, False], ids=["above", "below"])
def test_one_marker_for_the_call_fails_exactly_the_per_query_row(top: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: one call-wide [needs_retry], above the groups (in none) or below them (in the last query's group)
    monkeypatch.setattr(evidence_search, "render_evidence", _said_once(top))
    fails_exactly(evidence, "BATCH", BATCH, PER_QUERY, monkeypatch)


def test_the_marker_on_every_query_fails_exactly_the_per_query_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: every query of a batch marked [needs_retry] (text and value) when one of them found nothing
    patch_reading(evidence_search, "_value", '"needs_retry": not q.evidence,',
                  '"needs_retry": not all(s.evidence for s in state),', monkeypatch)  # fmt: skip
    fails_exactly(evidence, "BATCH", BATCH, PER_QUERY, monkeypatch)


def test_the_call_marked_when_any_query_found_nothing_fails_exactly_the_per_query_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the value's call-wide needs_retry set when any query (not every one) found nothing; the schema says
    # it is true when no query found usable evidence
    patch_reading(evidence_search, "_value", 'all(g["needs_retry"] for g in groups)',
                  'any(g["needs_retry"] for g in groups)', monkeypatch)  # fmt: skip
    fails_exactly(evidence, "BATCH", BATCH, PER_QUERY, monkeypatch)


def test_groups_named_by_number_only_pass_the_batch_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # seed-open: a group named by its number alone ("Query 2"), the query's words nowhere above its marker
    named = "heads.append(f\"Query {number}: {clean_text(group['query'], 200)}\")"
    patch_reading(evidence_search, "render_evidence", named, 'heads.append(f"Query {number}")', monkeypatch)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == set()


def test_the_marker_at_the_end_of_its_line_passes_the_per_query_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # seed-open: where in its group the marker stands (here after the query's heading and its retry advice)
    def marker_last(value: Any, max_chars: int) -> str:
        return re.sub(r"^\[needs_retry\] (.*)$", r"\1 [needs_retry]", RIGHT_RENDER(value, max_chars), flags=re.M)

    monkeypatch.setattr(evidence_search, "render_evidence", marker_last)
    assert _alone(evidence, "BATCH", BATCH, PER_QUERY, monkeypatch) == ("passed", "")


# Gap C: the same call, answered in another order, returns the same text and value.


def _noting_order(order: list[int]) -> Any:
    async def settle(calls: Sequence[Any], deadline: float, what: str) -> list[Any]:
        if what != "the search":
            return await RIGHT_SETTLE(calls, deadline, what)
        order.clear()

        async def noted(index: int, call: Any) -> Any:
            try:
                return await call
            finally:
                order.append(index)

        return await RIGHT_SETTLE([noted(i, c) for i, c in enumerate(calls)], deadline, what)

    return settle


def test_groups_in_the_order_the_searches_answered_fail_exactly_the_completion_order_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a batch's groups in the order its searches answered (the calls of a check run one at a time)
    order: list[int] = []

    def by_completion(state: Sequence[Any]) -> dict[str, Any]:
        value = RIGHT_VALUE(state)
        place = {index: n for n, index in enumerate(order)}
        value["queries"] = [g for _i, g in sorted(enumerate(value["queries"]), key=lambda p: place.get(p[0], 9))]
        return value

    monkeypatch.setattr(evidence_search, "_settle_until", _noting_order(order))
    monkeypatch.setattr(evidence_search, "_value", by_completion)
    fails_exactly(evidence, "BATCH", BATCH, ORDER, monkeypatch)


def test_pages_picked_in_the_order_the_searches_answered_fail_exactly_the_completion_order_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the page bound filled by the queries in the order their searches answered (the groups stay in query
    # order): the first query to answer gets the extra page, so the pages read, and the value, differ
    order: list[int] = []

    def by_completion(ranked: Sequence[Sequence[Any]], *, max_pages: int, max_per_domain: int) -> list[Any]:
        first = [i for i in order if i < len(ranked)]
        queues = [ranked[i] for i in (*first, *(i for i in range(len(ranked)) if i not in first))]
        return RIGHT_SELECT(queues, max_pages=max_pages, max_per_domain=max_per_domain)

    monkeypatch.setattr(evidence_search, "_settle_until", _noting_order(order))
    monkeypatch.setattr(evidence_search, "select_pages", by_completion)
    fails_exactly(evidence, "BATCH", BATCH, ORDER, monkeypatch)


def test_groups_in_a_varying_order_fail_exactly_the_completion_order_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the auditor's shuffle of the groups, made repeatable: every other call's groups reversed
    calls = itertools.count()

    def varying(state: Sequence[Any]) -> dict[str, Any]:
        value = RIGHT_VALUE(state)
        if next(calls) % 2:
            value["queries"] = value["queries"][::-1]
        return value

    monkeypatch.setattr(evidence_search, "_value", varying)
    fails_exactly(evidence, "BATCH", BATCH, ORDER, monkeypatch)


def test_groups_in_a_fixed_order_of_their_own_pass_the_batch_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # seed-open: the layout and order of the groups, as long as the same call gives the same text
    def sorted_groups(state: Sequence[Any]) -> dict[str, Any]:
        value = RIGHT_VALUE(state)
        value["queries"] = sorted(value["queries"], key=lambda g: str(g["query"]))
        return value

    monkeypatch.setattr(evidence_search, "_value", sorted_groups)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == set()
