"""The seed 002 evidence checks: the reference and the example adapter pass; each evidence break
mode of the example adapter fails exactly its check."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsweb_ref.certification.checks import REGISTRY
from dsweb_ref.certification.targets import reference_target

from ._profile_breaks import assert_break_fails_exactly, certify_only
from .conftest import run

EVIDENCE_CHECKS = {
    "evidence.no_model_call",
    "evidence.lines_cite_results",
    "evidence.local_refused",
    "evidence.retry_refused",
}
BREAKS = {
    "evidence-model-call": ("evidence.no_model_call", "sent a Messages request"),
    "evidence-no-urls": ("evidence.lines_cite_results", "carries no source URL"),
    "evidence-local-allowed": ("evidence.local_refused", "a search was sent"),
    "evidence-retry-allowed": ("evidence.retry_refused", "searched again"),
}


def test_the_reference_passes_every_evidence_check_in_process() -> None:
    report = run(reference_target(), only=sorted(EVIDENCE_CHECKS))
    assert {r.check.id: r.outcome.value for r in report.results} == dict.fromkeys(EVIDENCE_CHECKS, "passed")


def test_evidence_checks_cite_seed_002() -> None:
    for check_id in EVIDENCE_CHECKS:
        spec = REGISTRY[check_id]
        assert spec.check.seed == "002" and spec.rule.startswith("Seed 002:")
        assert "evidence-search" in spec.requires


@pytest.mark.parametrize("mode", sorted(BREAKS))
def test_each_evidence_break_fails_exactly_its_check(mode: str, tmp_path: Path) -> None:
    assert_break_fails_exactly("evidence", mode, *BREAKS[mode], tmp_path)


def test_the_example_adapter_passes_every_evidence_check(tmp_path: Path) -> None:
    code, _data, outcomes = certify_only("evidence", tmp_path)
    assert code == 0 and outcomes == dict.fromkeys(EVIDENCE_CHECKS, "passed")
