"""Helpers for the certification suite's own tests: run the suite synchronously, start adapters."""

from __future__ import annotations

import asyncio
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from dsweb_ref.certification.model import Outcome, Report
from dsweb_ref.certification.suite import run_suite
from dsweb_ref.certification.targets import AdapterTarget, Target

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_ADAPTER = ROOT / "scripts" / "example_adapter.py"


def adapter_command(*args: str) -> str:
    return shlex.join([sys.executable, str(EXAMPLE_ADAPTER), *args])


def adapter(*args: str, **kwargs: float) -> AdapterTarget:
    return AdapterTarget(adapter_command(*args), **kwargs)


def run(target: Target, only: Sequence[str] | None = None) -> Report:
    return asyncio.run(run_suite(target, only=only))


def outcomes(report: Report) -> dict[str, Outcome]:
    return {r.check.id: r.outcome for r in report.results}


def failed_ids(report: Report) -> set[str]:
    return {r.check.id for r in report.results if r.outcome is not Outcome.PASSED}
