"""The SSRF checks (seed 002) over the adapter protocol's test network: the reference and the
example adapter pass; each SSRF break mode of the example adapter fails exactly its check."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsweb_ref.certification.checks import REGISTRY
from dsweb_ref.certification.targets import reference_target

from ._profile_breaks import assert_break_fails_exactly, certify_only
from .conftest import run

SSRF_CHECKS = {
    "ssrf.resolve.special_ranges",
    "ssrf.resolve.mixed_answers",
    "ssrf.resolve.rebinding",
    "ssrf.redirect.private",
}
BREAKS = {
    "ssrf-no-unwrap": ("ssrf.resolve.special_ranges", "nat64-loopback"),
    "ssrf-first-answer-only": ("ssrf.resolve.mixed_answers", "dead-public-then-private"),
    "ssrf-re-resolve": ("ssrf.resolve.rebinding", "a later lookup's answer"),
    "ssrf-redirect-unchecked": ("ssrf.redirect.private", "301-literal"),
}


def test_the_reference_passes_every_ssrf_check_in_process() -> None:
    report = run(reference_target(), only=sorted(SSRF_CHECKS))
    assert {r.check.id: r.outcome.value for r in report.results} == dict.fromkeys(SSRF_CHECKS, "passed")


def test_ssrf_checks_cite_seed_002_and_carry_case_tables() -> None:
    for check_id in SSRF_CHECKS:
        spec = REGISTRY[check_id]
        assert spec.check.seed == "002" and spec.rule.startswith("Seed 002:")
        assert spec.cases and all(case.catches for case in spec.cases)
        assert spec.requires == ("web_fetch", "ssrf-test-mode")


def test_an_adapter_without_test_mode_skips_them(tmp_path: Path) -> None:
    code, _data, outcomes = certify_only("ssrf", tmp_path, "--without", "ssrf-test-mode")
    # Skipped, never passed (and a run where everything skipped certifies nothing).
    assert code == 1 and set(outcomes.values()) == {"skipped"}


@pytest.mark.parametrize("mode", sorted(BREAKS))
def test_each_ssrf_break_fails_exactly_its_check(mode: str, tmp_path: Path) -> None:
    assert_break_fails_exactly("ssrf", mode, *BREAKS[mode], tmp_path)


def test_the_example_adapter_passes_every_ssrf_check(tmp_path: Path) -> None:
    code, _data, outcomes = certify_only("ssrf", tmp_path)
    assert code == 0 and outcomes == dict.fromkeys(SSRF_CHECKS, "passed")
