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

__all__ = ["CARRY", "FAMILIES", "ORDER", "RANKING", "SCOPE", "Case"]

# The families of wrong readings that outside red-teaming found still certified (issue 24): a row
# naming one says which kind of misreading it rejects, and ``--explain`` shows it beside the row.
ORDER = "order of operations"  # two steps of one rule done the other way round
SCOPE = "which requests a policy applies to"
RANKING = "whose ordering"  # the pipeline's own ranking or the engine's order passed through
CARRY = "what else a request may carry"
FAMILIES = (ORDER, SCOPE, RANKING, CARRY)


@dataclass(frozen=True, slots=True)
class Case:
    """One row: a short name, the inputs (``params``), and the wrong reading this row alone tells apart;
    ``family`` (one of :data:`FAMILIES`, or "") names the kind of misreading it is."""

    name: str
    catches: str  # e.g. "a cut counted in UTF-16 units instead of characters"
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    family: str = ""

    def __post_init__(self) -> None:
        if self.family and self.family not in FAMILIES:
            raise ValueError(f"case {self.name!r}: unknown misreading family {self.family!r}")

    @property
    def misreading(self) -> str:
        """The catches note, with its family in brackets when it has one."""
        return f"[{self.family}] {self.catches}" if self.family else self.catches

    def __getitem__(self, key: str) -> Any:
        return self.params[key]
