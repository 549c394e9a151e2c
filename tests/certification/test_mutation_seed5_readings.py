"""Survivors of the seed-5 mutation draw (``scripts/mutation_score.py --sample 400 --seed 5``): wrong readings of
seeds 001 and 002 that no certification row rejected. A part of the key echoed with an enclosing mark on each
character read as text, so the part shows; a result that validation refused at its page fetch failing the whole
evidence call (the refused URL dropped from its record); a line break inside a table cell read as text; the
model-visible text's second cut (sources cut once the answer is left out) breaking the call. Each
mutant's change is made in the reference and must fail exactly the row that names it; the reference passes them."""

from __future__ import annotations

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks import evidence_html, outcomes, text
from dsweb_ref.tools import _evidence_units as U
from dsweb_ref.tools import _render, evidence_search, web_search

from . import test_key_part_readings
from ._readings import failing_rows, fails_exactly, patch_reading

ECHO, HTML_PAGE = "errors.secret_echo", "evidence.html_page"
ZERO_WIDTH_PART, COMBINING_PART, ENCLOSING_PART = (
    f"12 characters from the middle of the key {shown}"
    for shown in (
        "with a zero-width space between its characters",
        "with a combining accent on each character",
        "with an enclosing keycap mark on each character",
    )
)
BESIDE, BR_INSIDE = "private-redirect-beside-page", "cell-line-break-inside-fact"
MARK_ROWS = (ZERO_WIDTH_PART, COMBINING_PART, ENCLOSING_PART)
INVISIBLE = 'return category in ("Cf", "Mn", "Me")'


def _only(module: object, table: str, names: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, table, tuple(c for c in getattr(module, table) if c.name in names))


# The tables as the module defines them: a test may narrow one after emptying it.
TABLES = {t: getattr(evidence_html, t) for t in ("HTML", "ERROR_STATUS", "PRIVATE", "REFUSED", "BESIDE_REFUSED")}


def _html_only(table: str, names: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """evidence.html_page runs five tables; only ``names`` of ``table`` are kept, the others emptied."""
    for other in TABLES:
        if other != table:
            monkeypatch.setattr(evidence_html, other, ())
    monkeypatch.setattr(evidence_html, table, tuple(c for c in TABLES[table] if c.name in names))


def test_the_reference_passes_the_mark_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(outcomes, "SECRET_ECHOES", MARK_ROWS, monkeypatch)
    assert {c.name for c in outcomes.SECRET_ECHOES} == set(MARK_ROWS)
    assert set(MARK_ROWS) == test_key_part_readings.MARKED  # the part rows' readings expect these three too
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == set()


@pytest.mark.parametrize(
    ("category", "row"), [("Cf", ZERO_WIDTH_PART), ("Mn", COMBINING_PART), ("Me", ENCLOSING_PART)]
)
def test_a_mark_category_not_read_through_fails_exactly_its_part_row(
    category: str, row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: _invisible without one category (the mutant: "Me" spelled "ME"), so a part of the key, which has
    # no whole-key form in the compact view, shows with that mark on each character
    categories = ", ".join(f'"{c}"' for c in ("Cf", "Mn", "Me") if c != category) + ', "XX"'
    patch_reading(_secrets, "_invisible", INVISIBLE, f"return category in ({categories})", monkeypatch)
    _only(outcomes, "SECRET_ECHOES", MARK_ROWS, monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == {row}


def test_the_reference_passes_the_inside_fact_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _html_only("HTML", (BR_INSIDE,), monkeypatch)
    assert failing_rows(evidence_html, "HTML", HTML_PAGE, monkeypatch) == set()


def test_the_reference_passes_the_beside_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _html_only("BESIDE_REFUSED", (BESIDE,), monkeypatch)
    assert [c.name for c in evidence_html.BESIDE_REFUSED] == [BESIDE]
    assert failing_rows(evidence_html, "BESIDE_REFUSED", HTML_PAGE, monkeypatch) == set()


def test_a_refused_result_failing_the_call_fails_exactly_the_beside_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant's clean_text(None, 300) for the refused URL: a result validation refused at its page
    # fetch crashes the query's passage step, so the call fails and the page beside it is never cited (the rows
    # with no other result accept a WEB_* failure)
    right = 'refused.append({"url": clean_text(candidate.url, 300),'
    patch_reading(evidence_search.EvidenceSearchTool, "_collect", right, right.replace("candidate.url", "None"),
                  monkeypatch)
    # The refused rows alone pass it: with no other result, a WEB_* failure is the pipeline's to make.
    _html_only("REFUSED", tuple(c.name for c in evidence_html.REFUSED), monkeypatch)
    assert failing_rows(evidence_html, "REFUSED", HTML_PAGE, monkeypatch) == set()
    _html_only("BESIDE_REFUSED", (BESIDE,), monkeypatch)
    fails_exactly(evidence_html, "BESIDE_REFUSED", HTML_PAGE, BESIDE, monkeypatch)


BR = 'self._cell.append(" ")'


def test_a_cell_line_break_read_as_text_fails_exactly_the_inside_fact_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant's self._cell.append("XX XX"): something other than white space where a <br> stands in a
    # table cell; the row whose break sits beside the fact (not inside it) does not see it
    patch_reading(U._Units, "handle_starttag", BR, 'self._cell.append("XX XX")', monkeypatch)
    _html_only("HTML", (BR_INSIDE, "cell-line-break"), monkeypatch)
    fails_exactly(evidence_html, "HTML", HTML_PAGE, BR_INSIDE, monkeypatch)


def test_a_cell_line_break_dropped_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the seed: the break dropped, not read as a space; the newline after it in the page keeps the fact's
    # words apart, so the row accepts a reader that only drops tags.
    patch_reading(U._Units, "handle_starttag", BR, "pass", monkeypatch)
    _html_only("HTML", (BR_INSIDE,), monkeypatch)
    assert failing_rows(evidence_html, "HTML", HTML_PAGE, monkeypatch) == set()


BESIDE_SOURCES = "an answer beside sources that alone fill the text"


def test_the_text_s_second_cut_breaking_the_call_fails_exactly_the_long_sources_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: render_search's text lost (None) where the answer is left out, so cutting the sources raises; the
    # other rows' sources never fill the bound alone. The reference passes the table (test_text_rules).
    patch_reading(_render, "render_search", 'text = "\\n\\n".join(rest)', "text = None", monkeypatch, web_search)
    assert failing_rows(text, "BOUNDED_ANSWERS", "search.text.bounded_answers", monkeypatch) == {BESIDE_SOURCES}


TERM_AFTER_LIST = "term-after-list"


def test_a_definition_term_kept_past_its_list_fails_exactly_the_term_after_list_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: _flush pairing any text with the last term seen (or instead of and): the paragraph after the list
    # becomes "Fernhollow moorings: Harbour pilot boarding starts ..."
    patch_reading(U._Units, "_flush", 'if self._kind == "desc" and self._term is not None:',
                  'if self._kind == "desc" or self._term is not None:', monkeypatch)
    assert failing_rows(evidence_html, "HTML", HTML_PAGE, monkeypatch) == {TERM_AFTER_LIST}
