"""Summary mode: the Search API's long summaries as the model-facing text, under two budgets.

Seed 001 lists separating the model-facing ``summary`` from the display ``snippet`` as remaining
work, with per-source and total output budgets, and notes that summaries measured 1,000-2,300
characters. In summary mode each source shows its summary instead of its snippet:

* whitespace runs are folded to one space (a source is one line of the text), then
* the source may show at most ``min(per_source, what the total has left)`` characters; a longer
  summary is cut there and ends in the visible marker "…" (the marker counts toward the budget);
* sources take from the total in the order they are shown; one that finds nothing left shows no
  summary text at all (an empty excerpt, recorded as such).

A "character" is a Unicode code point (a Python ``str`` index; the unit seed 001 uses for the
query limit and ``ori_question``). An astral character such as "😀" is one character and is never
split into UTF-16 surrogates; a cut may separate a combining mark or a joined emoji sequence from
its neighbour, as every other cut in this package may.

A source without a summary (every Messages source) keeps its snippet, as in snippet mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._types import Source

__all__ = ["SUMMARY_CUT_MARKER", "SummaryView", "budget_summaries", "cut_to"]

SUMMARY_CUT_MARKER = "…"


def cut_to(text: str, budget: int) -> tuple[str, bool]:
    """``text`` folded, and cut to at most ``budget`` characters ending in the marker; whether it was cut."""
    folded = " ".join(text.split())
    if len(folded) <= budget:
        return folded, False
    if budget <= 0:
        return "", True
    keep = budget - len(SUMMARY_CUT_MARKER)
    return folded[:keep].rstrip() + SUMMARY_CUT_MARKER, True


def summary_of(source: Source) -> str | None:
    value = source.metadata.get("summary")
    return value if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True, slots=True)
class SummaryView:
    """Per source (in order): the summary as the model sees it, or None when it has none (its snippet
    is shown). ``cut`` is True when any summary was shortened or left out by a budget."""

    shown: tuple[str | None, ...]
    cut: bool


def budget_summaries(sources: Sequence[Source], per_source: int, total: int) -> SummaryView:
    left = total
    shown: list[str | None] = []
    cut_any = False
    for source in sources:
        summary = summary_of(source)
        if summary is None:
            shown.append(None)
            continue
        excerpt, cut = cut_to(summary, min(per_source, left))
        left -= len(excerpt)
        cut_any = cut_any or cut
        shown.append(excerpt)
    return SummaryView(tuple(shown), cut_any)
