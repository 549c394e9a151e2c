"""The vocabulary every certification piece shares: checks, outcomes, reports.

A check has a stable id (never reused for another meaning), a one-line
description and the seed decision it enforces. Outcomes keep "skipped" (the
target declared it lacks the capability) apart from "passed", so a report can
never turn a missing feature into a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["Check", "CheckResult", "Outcome", "Report", "TargetInfo"]


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"  # capability declared absent, or route not served
    KNOWN_FAILURE = "known-failure"  # failed, and listed in the known-failures file
    FIXED_KNOWN_FAILURE = "fixed-known-failure"  # listed as known, but passed: the list is stale
    ERROR = "error"  # the check itself could not run (target crashed, timed out, spoke nonsense)


@dataclass(frozen=True, slots=True)
class Check:
    id: str  # e.g. "search.batch.concurrent"
    description: str  # one line
    seed: str  # e.g. "000" — the seed decision this check enforces (restated in its rule)
    capability: str  # what the target must declare for the check to apply, e.g. "web_search"


@dataclass(frozen=True, slots=True)
class CheckResult:
    check: Check
    outcome: Outcome
    reason: str = ""  # why it failed / was skipped; empty when it passed
    details: dict[str, Any] = field(default_factory=dict)  # evidence (JSON-serialisable, secrets scrubbed)
    duration_s: float = 0.0


@dataclass(frozen=True, slots=True)
class TargetInfo:
    kind: str  # "implementation" | "endpoint"
    description: str  # e.g. "reference implementation (dsweb_ref 0.1.0) against the embedded emulator"
    name: str = ""
    version: str = ""
    capabilities: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Report:
    suite_version: str
    target: TargetInfo
    results: tuple[CheckResult, ...]
    started_at: str = ""  # ISO-8601 UTC
    finished_at: str = ""

    @property
    def ok(self) -> bool:
        bad = (Outcome.FAILED, Outcome.ERROR, Outcome.FIXED_KNOWN_FAILURE)
        return bool(self.results) and not any(r.outcome in bad for r in self.results)
