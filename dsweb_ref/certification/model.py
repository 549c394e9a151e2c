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

__all__ = ["Check", "CheckResult", "Outcome", "ProfileVerdict", "Report", "TargetInfo"]


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

    def to_json(self) -> dict[str, Any]:
        """Everything, for :meth:`from_json` in another process (the check worker); not rounded."""
        c = self.check
        return {"id": c.id, "description": c.description, "seed": c.seed, "capability": c.capability,
                "outcome": self.outcome.value, "reason": self.reason, "details": self.details,
                "duration_s": self.duration_s}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckResult:
        """The result :meth:`to_json` gave; ValueError/KeyError/TypeError when ``data`` is not one."""
        check = Check(str(data["id"]), str(data["description"]), str(data["seed"]), str(data["capability"]))
        details = data["details"]
        if not isinstance(details, dict):
            raise TypeError("details is not an object")
        return cls(check, Outcome(data["outcome"]), str(data["reason"]), details, float(data["duration_s"]))


@dataclass(frozen=True, slots=True)
class TargetInfo:
    kind: str  # "implementation" | "endpoint"
    description: str  # e.g. "reference implementation (dsweb_ref 0.1.0) against the embedded emulator"
    name: str = ""
    version: str = ""
    capabilities: tuple[str, ...] = ()


_LISTED = 6  # check ids a profile line names before "and N more" (the JSON report lists them all)


def _some(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:_LISTED])
    return shown + (f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else "")


@dataclass(frozen=True, slots=True)
class ProfileVerdict:
    """Whether a run certified a profile, and if not, why: capabilities the target did not declare,
    checks of the profile that did not pass, and checks that did not run (``--only``)."""

    name: str
    certified: bool
    missing: tuple[str, ...] = ()
    not_passed: tuple[str, ...] = ()
    not_run: tuple[str, ...] = ()

    def explain(self) -> str:
        """``certified``; ``partial run (...)`` when some of its checks did not run (``--only``,
        another ``--profile``): such a run cannot judge the profile; else ``NOT certified (...)``."""
        if self.certified:
            return "certified"
        why = []
        if self.missing:
            why.append(f"capability not declared: {', '.join(self.missing)}")
        if self.not_passed:
            why.append(f"did not pass: {_some(self.not_passed)}")
        if self.not_run:
            why.append(f"not run: {_some(self.not_run)}")
        head = "partial run" if self.not_run else "NOT certified"
        return f"{head} (" + "; ".join(why or ["no check belongs to it"]) + ")"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "certified": self.certified,
            "missing_capabilities": list(self.missing),
            "not_passed": list(self.not_passed),
            "not_run": list(self.not_run),
        }


@dataclass(frozen=True, slots=True)
class Report:
    suite_version: str
    target: TargetInfo
    results: tuple[CheckResult, ...]
    started_at: str = ""  # ISO-8601 UTC
    finished_at: str = ""
    profiles: tuple[ProfileVerdict, ...] = ()  # one verdict per profile (implementation targets)

    @property
    def ok(self) -> bool:
        bad = (Outcome.FAILED, Outcome.ERROR, Outcome.FIXED_KNOWN_FAILURE)
        return bool(self.results) and not any(r.outcome in bad for r in self.results)
