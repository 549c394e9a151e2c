"""Small value checks shared across modules (each caller keeps its own error code and wording)."""

from __future__ import annotations

from typing import TypeGuard

__all__ = ["is_int_at_least"]


def is_int_at_least(value: object, minimum: int = 1) -> TypeGuard[int]:
    """A real ``int`` (``bool`` is not a number here) that is at least ``minimum``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum
