"""Issue 24 item 5: the evidence.designators row added for survivors of the mutation run over the
passage chooser (dsweb_ref/tools/_evidence_passages.py), which an audit of their judgements showed
cite another model's passage or crash on a one-digit model number. Each wrong reading is made in the
reference and must fail exactly the row that names it."""

from __future__ import annotations

from types import ModuleType

import pytest

from dsweb_ref.certification.checks import evidence_relevance
from dsweb_ref.tools import _evidence_passages, evidence_search

from ._readings import failing_rows, patch_reading

CHECK = "evidence.designators"
ROW = "sentence-per-model"


def test_the_reference_passes_every_designator_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(evidence_relevance, "DESIGNATORS", CHECK, monkeypatch) == set()


@pytest.mark.parametrize(
    "owner, function, right, wrong",
    [
        # catches: a unit naming only another model kept, the asked model's own unit dropped
        (_evidence_passages, "choose", "if conflicts and not named:", "if conflicts and named:"),
        # catches: a model's letters read past its number, so no unit's model matches the asked one
        (_evidence_passages, "_marks", "prefix = word[: len(word) - len(", "prefix = word[: len(word) + len("),
        # catches: a one-digit model number (Pixel 9) read past its end: IndexError, the query's evidence lost
        (_evidence_passages.Designator, "__str__", "self.value[0].isalpha()", "self.value[1].isalpha()"),
    ],
)
def test_a_wrong_designator_reading_fails_the_sentence_per_model_row(
    owner: ModuleType | type, function: str, right: str, wrong: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_reading(owner, function, right, wrong, monkeypatch, evidence_search)  # it imports choose by name
    assert failing_rows(evidence_relevance, "DESIGNATORS", CHECK, monkeypatch) == {ROW}
