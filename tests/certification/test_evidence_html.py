"""evidence.html_page (seed 002 over HTML pages the pipeline fetches itself): the reference passes it, and
each row catches the wrong reading of a page its "catches" note names, made by changing one piece of the
reference's page reader (tools/_evidence_units.py, issue 24 item 5): that row fails, every other row passes."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsweb_ref.certification.checks import REGISTRY, evidence_html
from dsweb_ref.certification.profiles import find_profile
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.tools import _evidence_units

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run

CHECK = "evidence.html_page"
U = _evidence_units
# A constant of the page reader with one member taken out or added: reading -> (name, value, the row).
CONSTANT_READINGS: dict[str, tuple[str, Any, str | tuple[str, ...]]] = {
    **{f"{tag}-kept": ("_DROP_TAGS", U._DROP_TAGS - {tag}, tag)
       for tag in ("script", "style", "nav", "header", "footer", "aside")},
    "navigation-role-kept": ("_DROP_ROLES", U._DROP_ROLES - {"navigation"}, "role-navigation"),
    "complementary-role-kept": ("_DROP_ROLES", U._DROP_ROLES - {"complementary"}, "role-complementary"),
    # the valueless-attribute and nested banners are named by their id too: a reader blind to consent names keeps
    # them as well
    "consent-names-kept": ("_CONSENT", re.compile("(?!)"), ("cookie-consent", "valueless-attribute",
                                                           "nested-furniture")),
    "list-items-inline": ("_INLINE_LEVEL", U._INLINE_LEVEL | {"ul", "li"}, "list-items"),
    "blocks-inline": ("_INLINE_LEVEL", U._INLINE_LEVEL | {"div", "h2"}, "blocks"),
}  # fmt: skip
# A function of the page reader with one text changed: reading -> (function, right, wrong, the row).
FUNCTION_READINGS: dict[str, tuple[str, str, str, str]] = {
    "inline-tags-as-text": (
        "handle_starttag", 'elif tag == "br" and self._cell is not None:',
        "elif tag in _INLINE:\n"
        '        (self._cell if self._cell is not None else self._text).append(self.get_starttag_text() or "")\n'
        '    elif tag == "br" and self._cell is not None:',
        "markup",
    ),
    "format-characters-as-spaces": (
        "printable", '("" if unicodedata.category(c) == "Cf" else " ")', '" "', "format-characters"
    ),
    "block-end-tags-ignored": (
        "handle_endtag", "elif tag not in _INLINE_LEVEL and self._cell is None:",
        "elif tag not in _INLINE_LEVEL and self._cell is not None:", "blocks",
    ),
    "row-label-dropped": (
        "_row_text", 'return f"{label} — " + "; ".join(parts) if label else "; ".join(parts)',
        'return "; ".join(parts)', "th-row-label",
    ),
    "any-header-cell-makes-the-header": (
        "_end_row", "all(head for _, head in cells)", "any(head for _, head in cells)", "th-first-row-header"
    ),
    # Survivors of the seed-4 draw.
    "text-nodes-joined-with-junk": ("_flush", '_SPACES.sub(" ", "".join(self._text))',
                                    '_SPACES.sub(" ", "XXXX".join(self._text))', "inline-split-fact"),
    "end-tag-search-one-too-deep": ("handle_endtag", "min(len(self._open), _END_SEARCH) + 1)",
                                    "min(len(self._open), _END_SEARCH) + 2)", "stray-end-tag"),
    "furniture-children-untagged": ("handle_starttag", "            self._push(tag, is_furniture(tag, attrs))\n"
                                    "        return", "            self._push(None, is_furniture(tag, attrs))"
                                    "\n        return", "nested-furniture"),
    "unlabelled-row-raises": ("_row_text", 'if label else "; ".join(parts)', 'if label else "; ".join(None)',
                              "unlabelled-row"),
    "terms-as-items": ("_kind_of", 'if tag == "dt":\n        return "term"', 'if tag == "dt":\n        return "item"',
                       "dl-pair"),
}  # fmt: skip


def test_the_reference_passes_the_html_check() -> None:
    (result,) = run(reference_target(), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason


def test_the_html_check_has_a_profile_of_its_own() -> None:
    """Adapters without the test network keep seed-002-evidence; this check certifies its own profile."""
    spec = REGISTRY[CHECK]
    assert spec.profiles == ("seed-002-evidence-html",)
    assert spec.check.seed == "002" and spec.rule.startswith("Seed 002:")
    assert set(find_profile("seed-002-evidence-html").requires) == set(spec.requires)
    assert "ssrf-test-mode" not in find_profile("seed-002-evidence").requires
    assert all(case.catches for case in spec.cases)


@pytest.mark.parametrize("reading", sorted(CONSTANT_READINGS))
def test_each_furniture_and_block_row_catches_the_reading_it_names(
    reading: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, wrong, row = CONSTANT_READINGS[reading]
    assert getattr(U, name) != wrong
    monkeypatch.setattr(U, name, wrong)
    if isinstance(row, tuple):
        assert failing_rows(evidence_html, "HTML", CHECK, monkeypatch) == set(row)
    else:
        fails_exactly(evidence_html, "HTML", CHECK, row, monkeypatch)


@pytest.mark.parametrize("reading", sorted(FUNCTION_READINGS))
def test_each_markup_table_and_pair_row_catches_the_reading_it_names(
    reading: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    function, right, wrong, row = FUNCTION_READINGS[reading]
    patch_reading(U._Units if hasattr(U._Units, function) else U, function, right, wrong, monkeypatch)
    fails_exactly(evidence_html, "HTML", CHECK, row, monkeypatch)
