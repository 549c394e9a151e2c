"""The reference passes every check, in-process and through the example adapter; checks for any
search protocol run over each declared one; capabilities gate checks; --only selects by prefix;
every run gives a verdict per profile. (Each deliberate break is proven through `dsweb certify` in
test_breaks_end_to_end.py.)"""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import all_checks
from dsweb_ref.certification.checks.scheduling import OPT_IN_CHECKS
from dsweb_ref.certification.checks.summary import SUMMARY_CHECKS
from dsweb_ref.certification.model import Outcome, Report
from dsweb_ref.certification.profiles import PROFILES
from dsweb_ref.certification.suite import select_checks
from dsweb_ref.certification.targets import reference_target

from .conftest import adapter, outcomes, run

ALL_IDS = {s.check.id for s in select_checks()}  # a default run's (those run only on request left out)
ANY_PROTOCOL = {s.check.id for s in all_checks() if s.provider == "any"}
PENDING: set[str] = set()  # checks the reference may still fail, each waiting for its own fix


def assert_passes_all_but_pending(report: Report) -> None:
    """Every check ran (the opt-in scheduling ones too: the reference declares retry, pacing and
    localization) and passed."""
    got = outcomes(report)
    assert set(got) == ALL_IDS
    bad = {i: r.reason for i, r in ((r.check.id, r) for r in report.results) if r.outcome is not Outcome.PASSED}
    assert set(bad) <= PENDING, bad


@pytest.mark.slow
def test_reference_in_process_passes_every_check_and_is_certified_for_every_profile() -> None:
    report = run(reference_target(), lanes=reference_target)
    assert report.ok, [(r.check.id, r.outcome.value, r.reason, r.details) for r in report.results
                       if r.outcome.value != "passed"]
    assert_passes_all_but_pending(report)
    pending_profiles = {p for s in all_checks() if s.check.id in PENDING for p in s.profiles}
    on_request = {p.name for p in PROFILES if p.on_request}  # not run by default: no verdict to give
    for verdict in report.profiles:  # the opt-in seed-001-retry, -pacing and -localization included
        assert verdict.certified or verdict.name in pending_profiles | on_request, verdict
    assert [v.name for v in report.profiles] == [p.name for p in PROFILES]


@pytest.mark.slow
def test_reference_through_example_adapter_passes_every_check_over_both_search_protocols() -> None:
    report = run(adapter(), lanes=adapter)
    assert_passes_all_but_pending(report)
    assert report.target.name == "dsweb_ref example adapter"
    assert "cancel" in report.target.capabilities
    # Batch and merge checks (and every other check for "any" protocol) ran over Messages too.
    assert {"search.batch.concurrent", "search.merge.round_robin", "search.batch.quiescence"} <= ANY_PROTOCOL
    for r in report.results:
        if r.check.id in ANY_PROTOCOL and r.check.id not in PENDING:
            assert r.details["protocols"] == {"api": "passed", "messages": "passed"}, r.check.id


@pytest.mark.slow
def test_undeclared_capabilities_are_skipped_never_passed_and_withhold_their_profiles() -> None:
    only = ["search.cancel", "search.api", "fetch", "evidence", "search.batch.concurrent", "search.messages"]
    without = ("--without", "cancel", "--without", "search-api", "--without", "fetch-api")
    report = run(adapter(*without), only=only, lanes=lambda: adapter(*without))
    got = outcomes(report)
    skipped = {i for i, o in got.items() if o is Outcome.SKIPPED}
    assert skipped == {
        "search.cancel.quiescence",
        "search.api.ori_question",
        "search.api.count",
        "search.api.wire",
        "search.api.mapping",
        "fetch.api.mapping",
        "fetch.api.wire",
        "fetch.redirect.not_followed",
        "fetch.value.schema",
        "fetch.cancel.quiescence",
        "search.api.fail_fast",
        "search.api.base_unavailable",
        "search.api.base_shapes",
        "search.api.metadata",  # quality-metadata is declared, but it needs search-api
        "search.api.account_route",  # account-route likewise
        *OPT_IN_CHECKS,  # declared, but they need search-api
        "fetch.api.retry.waits",  # retry likewise (its Fetch API retries beside the Search API's)
        "fetch.selection.alone",  # fetch-selection likewise (it needs fetch-api)
        *SUMMARY_CHECKS,
        # the seed 002 evidence checks run over the Search and Fetch APIs
        "evidence.no_model_call",
        "evidence.lines_cite_results",
        "evidence.local_refused",
        "evidence.retry_refused",
        "evidence.diversity",
        "evidence.unsafe_dropped",
        "evidence.passages",
        "evidence.designators",
        "evidence.table_rows",
        "evidence.own_ranking",
        "evidence.ori_question",
        "evidence.batch",
        "evidence.api_wire",
        "evidence.cancel.quiescence",
    }
    assert all(o is Outcome.PASSED for i, o in got.items() if i not in skipped)  # batch ran over Messages
    reasons = {r.check.id: r.reason for r in report.results}
    assert "cancel" in reasons["search.cancel.quiescence"]
    assert {r.check.id: r.details.get("protocols") for r in report.results}["search.batch.concurrent"] == {
        "messages": "passed"
    }
    assert report.ok  # skipped is not a failure, but it is not a pass either
    verdicts = {v.name: v for v in report.profiles}
    assert not verdicts["seed-000-web-search"].certified
    assert verdicts["seed-000-web-search"].missing == ("cancel",)
    assert "search.cancel.quiescence" in verdicts["seed-000-web-search"].not_passed
    assert verdicts["seed-001-search-api"].missing == ("search-api",)
    assert verdicts["seed-001-fetch-api"].missing == ("fetch-api", "cancel")
    assert "capability not declared: cancel" in verdicts["seed-000-web-search"].explain()


@pytest.mark.slow
def test_a_profile_is_certified_only_by_its_own_protocol_run() -> None:
    broken = ("--break", "thinking-enabled")
    report = run(adapter(*broken), only=["search.messages", "search.api"], lanes=lambda: adapter(*broken))
    verdicts = {v.name: v for v in report.profiles}
    assert verdicts["seed-001-messages"].not_passed == ("search.messages.thinking_disabled",)
    assert not verdicts["seed-001-search-api"].not_passed  # its own checks passed; the rest did not run
    assert not verdicts["seed-001-search-api"].certified and verdicts["seed-001-search-api"].not_run


def test_only_selects_by_id_prefix() -> None:
    report = run(reference_target(), only=["search.merge"])
    assert set(outcomes(report)) == {"search.merge.round_robin", "search.merge.dedup", "search.merge.truncation"}
