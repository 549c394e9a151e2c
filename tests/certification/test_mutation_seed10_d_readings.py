"""Survivors of the seed-10 mutation draw (``scripts/mutation_score.py --sample 400 --seed 10``), list D, that a new
row now rejects: a page left out of a query's passages for a similar name (Pell Creek Bridge for the Pell River
Bridge) recorded as nothing, which the query's [needs_retry] line then cannot account for, so the tool raises. The
mutant's change is made in the reference and must fail exactly the row that names it; the reference passes the row."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import evidence_relevance
from dsweb_ref.tools import _evidence_passages, evidence_search

from ._readings import fails_exactly_shown, passes_rows, patch_reading

CHECK = "evidence.designators"
NO_PASSAGE = "similar-name-no-passage"


def test_the_reference_passes_the_similar_name_no_passage_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(evidence_relevance, "DESIGNATORS", CHECK, (NO_PASSAGE,), monkeypatch)


def test_a_near_miss_recorded_as_nothing_fails_exactly_the_similar_name_no_passage_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's choice.rejected.append(None): the similar-name page's record holds no url and no reason,
    # harmless while the query has evidence; when the page naming the subject gives no passage, the [needs_retry]
    # line reads the record's url and the tool raises TypeError instead of answering
    right = """choice.rejected.append({"url": page.url, "reason": f"a similar name, not {', '.join(missing)}"})"""
    patch_reading(_evidence_passages, "choose", right, "choice.rejected.append(None)", monkeypatch, evidence_search)
    fails_exactly_shown(evidence_relevance, "DESIGNATORS", CHECK, NO_PASSAGE, None, monkeypatch)
