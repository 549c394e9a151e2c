"""Issue 24, hunt_f over seed 002's evidence pipeline: wrong pipelines certified before these rows (a 404 page's
text cited, pop-up dialogs read as content, no size bound on a passage, a batch query's passages chosen against
another query of the batch, Thai paragraphs not cut into sentences). Each wrong reading is made in the
reference and must fail exactly the rows that name it."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import evidence_html, evidence_passages
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.tools import _evidence_units, evidence_search

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run

PASSAGES = "evidence.passages"
HTML = "evidence.html_page"
RUN_ON = "run-on-paragraph"
THAI = "thai-long-paragraph"
OWN_QUERY = "batch-own-query"
ERROR = "error-404"
DIALOG = "dialog"
ROLE_DIALOG = "role-dialog"
TOOL = evidence_search.EvidenceSearchTool
# Where the reference hands each query of the call to passage ranking.
COLLECT = "asyncio.to_thread(self._collect, q, bodies) for q in state]"


def test_the_reference_passes_the_checks_with_the_new_rows() -> None:
    assert {RUN_ON, THAI} <= {c.name for c in evidence_passages.PASSAGES}
    assert {OWN_QUERY} == {c.name for c in evidence_passages.OWN_QUERY}
    assert {DIALOG, ROLE_DIALOG} <= {c.name for c in evidence_html.HTML}
    assert ERROR in {c.name for c in evidence_html.ERROR_STATUS}
    report = run(reference_target(), only=[PASSAGES, HTML])
    assert {r.check.id: r.outcome.value for r in report.results} == dict.fromkeys([PASSAGES, HTML], "passed"), [
        r.reason for r in report.results
    ]


def test_the_run_on_page_is_one_long_unpunctuated_paragraph() -> None:
    match = evidence_passages.RUN_ON.match
    assert len(match) == 4636 and not any(c in match for c in ".!?")


def test_no_size_bound_on_a_passage_fails_exactly_the_run_on_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: passage-uncapped (a unit goes whole however long: the 4,636-character paragraph is the evidence)
    patch_reading(TOOL, "_collect", "clean_text(p.text, cfg.passage_chars)", "clean_text(p.text, 10**6)", monkeypatch)
    monkeypatch.setattr(_evidence_units, "_MAX_UNIT_CHARS", 10**6)
    assert failing_rows(evidence_passages, "PASSAGES", PASSAGES, monkeypatch) == {RUN_ON}


def test_thai_cut_only_at_punctuation_fails_exactly_the_thai_paragraph_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: passage-thai-paragraph-unit (Thai not cut into sentences: the passage is the paragraph's opening)
    patch_reading(_evidence_units, "sentences", "if not _THAI.search(text):", "if True:", monkeypatch)
    assert failing_rows(evidence_passages, "PASSAGES", PASSAGES, monkeypatch) == {THAI}


@pytest.mark.parametrize(
    "topic",
    [
        # catches: passage-last-query-topic (late binding: every query's passages chosen against the last query)
        "state[-1].text",
        # catches: passage-batch-topic (every query's passages chosen against the whole batch joined into one)
        '" ".join(s.text for s in state)',
        # catches: every query's passages chosen against the first query of the batch
        "state[0].text",
    ],
    ids=["last-query", "whole-batch", "first-query"],
)
def test_passages_chosen_against_another_query_fail_exactly_the_batch_row(
    topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = f"asyncio.to_thread(self._collect, _Query({topic}, ranked=q.ranked), bodies) for q in state]"
    patch_reading(TOOL, "run", COLLECT, wrong, monkeypatch)
    assert failing_rows(evidence_passages, "OWN_QUERY", PASSAGES, monkeypatch) == {OWN_QUERY}
    fails_exactly(evidence_passages, "OWN_QUERY", PASSAGES, OWN_QUERY, monkeypatch)  # every other row passes


def test_the_http_status_ignored_fails_exactly_the_error_page_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: error-page-as-evidence (the pipeline's own fetch reads a 404 page like a page fetched successfully)
    patch_reading(TOOL, "_blocks", "if not 200 <= result.status_code <= 299:", "if False:", monkeypatch)
    every = {c.name for c in evidence_html.ERROR_STATUS}
    assert failing_rows(evidence_html, "ERROR_STATUS", HTML, monkeypatch) == every


def test_only_not_found_taken_for_a_failed_fetch_fails_exactly_the_403_and_500_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a 403 login wall or a 500 error page read like a page fetched successfully (an outside hunt)
    patch_reading(TOOL, "_blocks", "if not 200 <= result.status_code <= 299:", "if result.status_code in (404, 410):",
                  monkeypatch)  # fmt: skip
    assert failing_rows(evidence_html, "ERROR_STATUS", HTML, monkeypatch) == {"error-403", "error-500"}


def test_the_dialog_element_kept_fails_exactly_the_dialog_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: an open <dialog> (a survey pop-up) read as content
    monkeypatch.setattr(_evidence_units, "_DROP_TAGS", _evidence_units._DROP_TAGS - {"dialog"})
    assert failing_rows(evidence_html, "HTML", HTML, monkeypatch) == {DIALOG}


def test_dialog_roles_and_aria_modal_ignored_fail_exactly_the_role_dialog_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: dialogs judged by tag name only (role="dialog" aria-modal="true" on a div read as content)
    monkeypatch.setattr(_evidence_units, "_DROP_ROLES", _evidence_units._DROP_ROLES - {"dialog", "alertdialog"})
    patch_reading(_evidence_units, "is_furniture", 'name in ("aria-hidden", "aria-modal")', 'name == "aria-hidden"',
                  monkeypatch)  # fmt: skip
    assert failing_rows(evidence_html, "HTML", HTML, monkeypatch) == {ROLE_DIALOG}


def test_dialogs_kept_fail_exactly_the_two_dialog_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: html-dialogs-kept (<dialog>, role=dialog/alertdialog, aria-modal and modal/popup/newsletter names)
    u = _evidence_units
    monkeypatch.setattr(u, "_DROP_TAGS", u._DROP_TAGS - {"dialog"})
    monkeypatch.setattr(u, "_DROP_ROLES", u._DROP_ROLES - {"dialog", "alertdialog"})
    monkeypatch.setattr(u, "_DROP_NAMES", u._DROP_NAMES - {"modal", "popup", "newsletter"})
    patch_reading(u, "is_furniture", 'name in ("aria-hidden", "aria-modal")', 'name == "aria-hidden"', monkeypatch)
    assert failing_rows(evidence_html, "HTML", HTML, monkeypatch) == {DIALOG, ROLE_DIALOG}


def test_a_passage_window_around_the_first_answer_never_reaches_the_second_query_fare() -> None:
    """Seed-open: a passage may be a window of text around its match, not a sentence. The first query's page
    keeps its visitors' note (the second query's fare) more than a quarter of the page (the bound the check
    holds passages to) away from its own answer, so such a window never cites the other query's fact."""
    content = evidence_passages.BATCH_PAGES[0][3]
    gap = content.index("12.50") - content.index("outer anchorage")
    assert gap > len(content) / 4
