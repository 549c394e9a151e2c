"""Case tables: the data a check runs its rule over.

A check is worth the wrong implementations it rejects and the right ones it accepts, so each rule is
exercised with a table of cases chosen so that every plausible wrong reading of the rule (off by one,
bytes vs characters, trim vs collapse, first vs latest, one status class vs all, ...) gives a different
answer than the right one. Each row says which wrong reading it catches; ``dsweb certify --explain ID``
prints the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["Case"]


@dataclass(frozen=True, slots=True)
class Case:
    """One row: a short name, the inputs (``params``), and the wrong reading this row alone tells apart."""

    name: str
    catches: str  # e.g. "a cut counted in UTF-16 units instead of characters"
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __getitem__(self, key: str) -> Any:
        return self.params[key]
