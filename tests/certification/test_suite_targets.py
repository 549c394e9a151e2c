"""The reference passes every check, in-process and through the example adapter; checks for any
search protocol run over each declared one; capabilities gate checks; --only selects by prefix.
(Each deliberate break is proven through `dsweb certify` in test_breaks_end_to_end.py.)"""

from __future__ import annotations

from dsweb_ref.certification.checks import all_checks
from dsweb_ref.certification.checks.scheduling import OPT_IN_CHECKS
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.targets import reference_target

from .conftest import adapter, outcomes, run

# The opt-in scheduling checks are skipped until the reference declares retry/pacing/localization
# (tests/certification/test_scheduling_checks.py runs them against a reference that does).
ALL_IDS = {s.check.id for s in all_checks()} - OPT_IN_CHECKS
ANY_PROTOCOL = {s.check.id for s in all_checks() if s.provider == "any"}


def test_reference_in_process_passes_every_check() -> None:
    report = run(reference_target())
    assert report.ok
    assert outcomes(report) == dict.fromkeys(ALL_IDS, Outcome.PASSED) | dict.fromkeys(OPT_IN_CHECKS, Outcome.SKIPPED)


def test_reference_through_example_adapter_passes_every_check_over_both_search_protocols() -> None:
    report = run(adapter())
    assert outcomes(report) == dict.fromkeys(ALL_IDS, Outcome.PASSED) | dict.fromkeys(
        OPT_IN_CHECKS, Outcome.SKIPPED
    ), [r.reason for r in report.results]
    assert report.target.name == "dsweb_ref example adapter"
    assert "cancel" in report.target.capabilities
    # Batch and merge checks (and every other check for "any" protocol) ran over Messages too.
    assert {"search.batch.concurrent", "search.merge.round_robin", "search.batch.quiescence"} <= ANY_PROTOCOL
    for r in report.results:
        if r.check.id in ANY_PROTOCOL:
            assert r.details["protocols"] == {"api": "passed", "messages": "passed"}, r.check.id


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
        "fetch.value.schema",
        "search.api.fail_fast",
        *OPT_IN_CHECKS,
        # the seed 002 evidence checks run over the Search and Fetch APIs
        "evidence.no_model_call",
        "evidence.lines_cite_results",
        "evidence.local_refused",
        "evidence.retry_refused",
    }
    assert all(o is Outcome.PASSED for i, o in got.items() if i not in skipped)  # batch/merge ran over Messages
    reasons = {r.check.id: r.reason for r in report.results}
    assert "cancel" in reasons["search.cancel.quiescence"]
    assert {r.check.id: r.details.get("protocols") for r in report.results}["search.batch.concurrent"] == {
        "messages": "passed"
    }
    assert report.ok  # skipped is not a failure, but it is not a pass either


def test_only_selects_by_id_prefix() -> None:
    report = run(reference_target(), only=["search.merge"])
    assert set(outcomes(report)) == {"search.merge.round_robin", "search.merge.dedup", "search.merge.truncation"}
