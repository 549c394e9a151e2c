"""An outside hunt (J) over seed 002's page reading: wrong readings of a fetched HTML page that dsweb certify passed.
Seed 002 says code cuts a fetched page down to short text matching the query, so that boilerplate and unrelated
text do not mix in; the hunt kept text that is furniture or never shown: the header's and footer's ARIA roles
(banner, contentinfo) on a div, an element styled display:none, a template's contents. Each wrong reading is made
in the reference's page reader and must fail exactly the evidence.html_page rows that name it; readings the seed
leaves open (visibility:hidden not read, only the plain display:none spelling read, more roles dropped) pass."""

from __future__ import annotations

import re

import pytest

from dsweb_ref.certification.checks import evidence_html
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.tools import _evidence_units as U

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run

CHECK = "evidence.html_page"
BANNER, CONTENTINFO, DISPLAY_NONE, TEMPLATE = "role-banner", "role-contentinfo", "display-none", "template"
NEW_ROWS = (BANNER, CONTENTINFO, DISPLAY_NONE, TEMPLATE)
STYLE_LINES = 'if name == "style" and _HIDDEN_STYLE.search(value):\n            return True'


def _only_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evidence_html, "HTML", tuple(c for c in evidence_html.HTML if c.name in NEW_ROWS))


def _passes() -> None:
    (result,) = run(reference_target(), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason


def test_the_rows_are_furniture_rows_the_reference_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(NEW_ROWS) <= set(evidence_html.FURNITURE)
    _only_new_rows(monkeypatch)
    assert {c.name for c in evidence_html.HTML} == set(NEW_ROWS)
    _passes()


def test_the_banner_and_contentinfo_roles_ignored_fail_exactly_their_two_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: A1, _DROP_ROLES without banner and contentinfo (the header's and the footer's roles on a div read as
    # content)
    monkeypatch.setattr(U, "_DROP_ROLES", U._DROP_ROLES - {"banner", "contentinfo"})
    assert failing_rows(evidence_html, "HTML", CHECK, monkeypatch) == {BANNER, CONTENTINFO}


@pytest.mark.parametrize(("role", "row"), [("banner", BANNER), ("contentinfo", CONTENTINFO)])
def test_each_landmark_role_ignored_fails_exactly_its_row(role: str, row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: one of the two roles known, the other read as content
    monkeypatch.setattr(U, "_DROP_ROLES", U._DROP_ROLES - {role})
    fails_exactly(evidence_html, "HTML", CHECK, row, monkeypatch)


def test_css_hidden_elements_read_fail_exactly_the_display_none_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: A2, is_furniture without its style lines (display:none and visibility:hidden read as content)
    patch_reading(U, "is_furniture", STYLE_LINES, "pass", monkeypatch)
    fails_exactly(evidence_html, "HTML", CHECK, DISPLAY_NONE, monkeypatch)


def test_template_contents_read_fail_exactly_the_template_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: A3, template left out of _DROP_TAGS (its never-rendered contents read as content)
    monkeypatch.setattr(U, "_DROP_TAGS", U._DROP_TAGS - {"template"})
    fails_exactly(evidence_html, "HTML", CHECK, TEMPLATE, monkeypatch)


# Seed-open: which CSS the reader understands. The row holds only the plainest never-shown form, so a reader that
# leaves visibility:hidden alone (its children may be made visible again) or reads only that exact spelling passes.
@pytest.mark.parametrize(
    "style",
    [re.compile(r"display\s*:\s*none", re.IGNORECASE), re.compile(r"display:none")],
    ids=["display-none-only", "exact-spelling-only"],
)
def test_a_reader_of_less_css_still_passes(style: re.Pattern[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(U, "_HIDDEN_STYLE", style)
    _only_new_rows(monkeypatch)
    _passes()


# Seed-open: how much furniture a reader drops beyond the page's boilerplate. One that drops every role but the
# content ones, and aria-hidden elements (already the reference's), passes the whole check.
CONTENT_ROLES = frozenset({"main", "article", "document", "region", "list", "listitem", "table", "row", "cell"})


def test_a_reader_that_drops_more_still_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    right = 'if name == "role" and any(r in _DROP_ROLES for r in low.split()):'
    wrong = 'if name == "role" and any(r not in _CONTENT_ROLES for r in low.split()):'
    monkeypatch.setattr(U, "_CONTENT_ROLES", CONTENT_ROLES, raising=False)
    patch_reading(U, "is_furniture", right, wrong, monkeypatch)
    assert U.is_furniture("div", [("role", "status")]) and not U.is_furniture("div", [("role", "main")])
    _passes()
