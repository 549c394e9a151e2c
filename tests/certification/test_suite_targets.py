"""The reference passes every check, in-process and through the example adapter; each deliberate
break of the example adapter is caught by the check that names it; capabilities gate checks."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import all_checks
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.targets import reference_target

from .conftest import adapter, failed_ids, outcomes, run

ALL_IDS = {s.check.id for s in all_checks()}


def test_reference_in_process_passes_every_check() -> None:
    report = run(reference_target())
    assert report.ok
    assert outcomes(report) == dict.fromkeys(ALL_IDS, Outcome.PASSED)


def test_reference_through_example_adapter_passes_every_check() -> None:
    report = run(adapter())
    assert outcomes(report) == dict.fromkeys(ALL_IDS, Outcome.PASSED), [r.reason for r in report.results]
    assert report.target.name == "dsweb_ref example adapter"
    assert "cancel" in report.target.capabilities


# mode -> the checks it must fail; the full suite runs, so no other check may fail.
BREAKS = {
    "thinking-enabled": {"search.messages.thinking_disabled"},
    "no-ori-cut": {"search.api.ori_question"},
    "early-answer": {"search.batch.quiescence"},
    "ignore-cancel": {"search.cancel.quiescence"},
    "follow-redirects": {"search.redirect.not_followed", "fetch.redirect.not_followed"},
    "no-round-robin": {"search.merge.round_robin"},
    "duplicate-url": {"search.merge.dedup"},
}


@pytest.mark.parametrize("mode", sorted(BREAKS), ids=sorted(BREAKS))
def test_break_is_caught_by_exactly_its_checks(mode: str) -> None:
    report = run(adapter("--break", mode))
    assert failed_ids(report) == BREAKS[mode]
    assert all(outcomes(report)[i] is Outcome.FAILED for i in BREAKS[mode])


def test_sequential_break_is_caught_by_the_concurrency_check() -> None:
    # Sequential searches also starve the quiescence checks' preconditions; each waits 5 s, so run one.
    report = run(adapter("--break", "sequential"), only=["search.batch.concurrent"])
    (result,) = report.results
    assert result.outcome is Outcome.FAILED
    assert "only 1 of 4" in result.reason


def test_undeclared_capabilities_are_skipped_never_passed() -> None:
    report = run(adapter("--without", "cancel", "--without", "search-api", "--without", "fetch-api"))
    got = outcomes(report)
    skipped = {i for i, o in got.items() if o is Outcome.SKIPPED}
    assert skipped == {
        "search.cancel.quiescence",
        "search.api.ori_question",
        "search.api.count",
        "fetch.api.mapping",
        "fetch.redirect.not_followed",
    }
    assert all(o is Outcome.PASSED for i, o in got.items() if i not in skipped)  # batch/merge ran over Messages
    reasons = {r.check.id: r.reason for r in report.results}
    assert "cancel" in reasons["search.cancel.quiescence"]
    assert report.ok  # skipped is not a failure, but it is not a pass either


def test_only_selects_by_id_prefix() -> None:
    report = run(reference_target(), only=["search.merge"])
    assert set(outcomes(report)) == {"search.merge.round_robin", "search.merge.dedup", "search.merge.truncation"}
