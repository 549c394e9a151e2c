"""The certification checks. Importing this package registers every check in :data:`REGISTRY`,
keyed by its stable id; :func:`all_checks` lists them in a fixed order (by seed, then id)."""

from __future__ import annotations

from . import batch, differential, evidence, fetch, merge, search, ssrf, standalone  # noqa: F401  (registration side effect)
from ._base import CALL_TIMEOUT, REGISTRY, CheckContext, CheckFailed, CheckSpec, check, require

__all__ = ["CALL_TIMEOUT", "REGISTRY", "CheckContext", "CheckFailed", "CheckSpec", "all_checks", "check", "require"]


def all_checks() -> list[CheckSpec]:
    return sorted(REGISTRY.values(), key=lambda s: (s.check.seed, s.check.id))
