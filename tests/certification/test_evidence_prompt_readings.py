"""Issue 24 item 5: the check added for survivors of the mutation run over the evidence pipeline
(dsweb_ref/tools/evidence_search.py): a pipeline whose searches lose the call's context send no
ori_question, which seed 001 asks of every Search API request. Each wrong reading is made in the
reference and must fail exactly the row that names it."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import evidence
from dsweb_ref.tools.evidence_search import EvidenceSearchTool

from ._readings import failing_rows, patch_reading

CHECK = "evidence.ori_question"


def test_the_reference_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(evidence, "ORI", CHECK, monkeypatch) == set()


@pytest.mark.parametrize(
    "right, wrong, row",
    [
        # catches: the call's context dropped between the tool and its searches (the mutants ctx -> None)
        ("SearchRequest(q, cfg.results_per_query), ctx)", "SearchRequest(q, cfg.results_per_query), None)",
         "a batch of two queries"),
        # catches: a fresh context made for the searches, the prompt left behind
        ("ctx = ctx or CallContext()", "ctx = CallContext()", "a batch of two queries"),
    ],
)
def test_searches_without_the_call_s_prompt_fail_the_prompt_row(
    right: str, wrong: str, row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_reading(EvidenceSearchTool, "run", right, wrong, monkeypatch)
    assert failing_rows(evidence, "ORI", CHECK, monkeypatch) == {row}
