"""The certification checks. Importing this package registers every check in :data:`REGISTRY`,
keyed by its stable id; :func:`all_checks` lists them in a fixed order (by seed, then id)."""

from __future__ import annotations

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
    live_settings,
    mapping,
    merge,
    outcomes,
    scheduling,
    search,
    shipped_defaults,
    ssrf,
    ssrf_body,
    ssrf_limits,
    standalone,
    standalone_save,
    standalone_tools,
    standalone_usage,
    summary,
    text,
    tool_schema,
    validation,
)
from ._base import CALL_TIMEOUT, REGISTRY, CheckContext, CheckFailed, CheckSpec, check, require

__all__ = ["CALL_TIMEOUT", "REGISTRY", "CheckContext", "CheckFailed", "CheckSpec", "all_checks", "check", "require"]


def all_checks() -> list[CheckSpec]:
    return sorted(REGISTRY.values(), key=lambda s: (s.check.seed, s.check.id))
