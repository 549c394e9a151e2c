"""The certification checks. Importing this package registers every check in :data:`REGISTRY`,
keyed by its stable id; :func:`all_checks` lists them in a fixed order (by seed, then id)."""

from __future__ import annotations

from collections.abc import Iterable

from ..profiles import opt_in_profile
from . import (  # noqa: F401  (registration side effect)
    batch,
    citations,
    credentials,
    deployment,
    differential,
    evidence,
    evidence_cancel,
    evidence_diversity,
    evidence_html,
    evidence_passages,
    evidence_relevance,
    evidence_wire,
    fetch,
    fetch_selection,
    live_settings,
    mapping,
    merge,
    outcomes,
    request_record,
    scheduling,
    search,
    shipped_defaults,
    ssrf,
    ssrf_body,
    ssrf_limits,
    standalone,
    standalone_notice,
    standalone_save,
    standalone_tools,
    standalone_usage,
    summary,
    text,
    tool_schema,
    validation,
)
from ._base import CALL_TIMEOUT, OPT_IN_CAPABILITIES, REGISTRY, CheckContext, CheckFailed, CheckSpec, check, require

__all__ = ["CALL_TIMEOUT", "REGISTRY", "CheckContext", "CheckFailed", "CheckSpec", "all_checks", "check",
           "profile_members", "require"]


def all_checks() -> list[CheckSpec]:
    return sorted(REGISTRY.values(), key=lambda s: (s.check.seed, s.check.id))


# Another seed's tool an opt-in check may use beside its own capability (search.api.pacing.shared: the evidence
# pipeline's searches under the account's pacer). A target without it skips such a check, and that must not withhold
# the opt-in profile: seed 001's pacing does not ask for seed 002's pipeline.
BESIDE_OPT_IN = ("fetch-api", "evidence-search")


def profile_members(capabilities: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Each check's profiles, for a target declaring ``capabilities``. A check that needs two opt-in capabilities
    (search.api.pacing.retries: pacing and retry) is in both profiles, but a target may opt into one alone: for
    it, the check leaves the profile of the one it declares (skipped there, it withheld that profile, as the
    rows it holds never did when they were pacing.rate's and skipped inside it). Likewise for a check that also
    needs another seed's tool (:data:`BESIDE_OPT_IN`) the target does not declare."""
    declared = set(capabilities)
    members: dict[str, tuple[str, ...]] = {}
    for spec in all_checks():
        needs = [c for c in OPT_IN_CAPABILITIES if c in spec.requires]
        partly = not declared.issuperset(needs)  # some of them declared, or none: only then does a profile lose it
        left = {opt_in_profile(c) for c in needs if c in declared} if partly else set()
        if not declared.issuperset(c for c in BESIDE_OPT_IN if c in spec.requires):
            left |= {opt_in_profile(c) for c in needs}
        members[spec.check.id] = tuple(p for p in spec.profiles if p not in left)
    return members

