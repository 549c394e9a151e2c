"""Small value checks shared across modules (each caller keeps its own error code and wording)."""

from __future__ import annotations

import ipaddress
from typing import TypeGuard

__all__ = ["ip_literal", "is_int_at_least"]

_MAX_IP_LITERAL_CHARS = 45  # the longest IPv6 text form (IPv4-mapped tail included)


def is_int_at_least(value: object, minimum: int = 1) -> TypeGuard[int]:
    """A real ``int`` (``bool`` is not a number here) that is at least ``minimum``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def ip_literal(value: object) -> str | None:
    """``value`` as the canonical text of an IPv4 or IPv6 address literal, or None when it is
    anything else: a name, a range, a zone-scoped IPv6 (``fe80::1%eth0``), surrounding spaces."""
    if not isinstance(value, str) or not value or len(value) > _MAX_IP_LITERAL_CHARS:
        return None
    if value != value.strip() or "%" in value or "/" in value:
        return None
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return None
