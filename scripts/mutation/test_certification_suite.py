"""The certification suite as a mutation killer: every implementation check, run against the in-process
reference (Search API and Messages where the check applies to both). Used only by
``scripts/mutation_score.py``; the project's own tests never collect this directory.

A mutant of the reference is killed when a check that passes on the reference fails (or errors) on it.
"""

from __future__ import annotations

import asyncio

import pytest

from dsweb_ref.certification.checks import all_checks
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.suite import run_suite
from dsweb_ref.certification.targets import reference_target

CHECK_IDS = [spec.check.id for spec in all_checks()]


@pytest.mark.parametrize("check_id", CHECK_IDS, ids=CHECK_IDS)
def test_check_passes_on_the_reference(check_id: str) -> None:
    report = asyncio.run(run_suite(reference_target(), only=[check_id]))
    assert [r.outcome for r in report.results] == [Outcome.PASSED], [r.reason for r in report.results]
