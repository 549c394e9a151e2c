"""The text rules of search.text.agrees and the differential checks, on their own; and the cap-zero row."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dsweb_ref import settings
from dsweb_ref.certification.checks import text, validation
from dsweb_ref.certification.checks.text import shown_whole
from dsweb_ref.certification.scenarios import Expected, _answers_shown
from dsweb_ref.tools import _render, web_search

from ._readings import failing_rows, patch_reading

URL = "https://a.example.test/1"


@pytest.mark.parametrize("text", [f"- [t]({URL})", f"see {URL}. Then", f"{URL}", f"<{URL}>", f"{URL}0 and {URL}\n"])
def test_a_url_shown_whole_may_be_framed_freely(text: str) -> None:
    assert shown_whole(URL, text)


@pytest.mark.parametrize("text", [f"({URL}…)", f"{URL}0", f"{URL}/more", f"{URL}来源", "nothing here"])
def test_a_url_run_on_into_more_url_characters_is_not_shown(text: str) -> None:
    assert not shown_whole(URL, text)


def test_each_answer_must_be_shown_under_its_own_label() -> None:
    want = Expected(value={"sources": [], "truncated": False}, labelled=(("q1", "one\ntwo"), ("q2", "three")))
    assert _answers_shown("### q1\n\none\ntwo\n\n### q2\n\nthree\n\nSources: none", want) == []
    swapped = _answers_shown("### q1\n\nthree\n\n### q2\n\none\ntwo", want)
    assert len(swapped) == 2 and "under its label '### q1'" in swapped[0]
    assert _answers_shown("### q1\n\n### q2\n\n", want) != []  # labels without their answers


def test_a_single_answer_must_be_shown() -> None:
    want = Expected(value={"content": "the answer", "sources": [], "truncated": False}, single=True)
    assert _answers_shown("the answer\n\nSources: ...", want) == []
    assert _answers_shown("Sources: ...", want) == ["the text does not show the provider's answer 'the answer'"]


# search.text.agrees's ranking row, end to end: a text re-sorted on the way to the model fails exactly that row;
# a text laying each query's sources out together (query by query, the second query first) still passes.
_LINES = "lines = (_source_line(s, m) for s, m in zip(result.sources, shown, strict=True))"
# The text's sources re-sorted: newest first, by title, by URL.
_SORTED = {
    "newest-first": "key=lambda p: p[0].published_at or '', reverse=True",
    "by-title": "key=lambda p: p[0].title or ''",
    "by-url": "key=lambda p: p[0].url",
}
_QUERY_BY_QUERY_BACKWARDS = ("pairs = sorted(zip(result.sources, shown, strict=True), key=lambda p: "
                             "p[0].url.startswith('https://b.example.test/'), reverse=True)\n"
                             "        lines = (_source_line(s, m) for s, m in pairs)")


@pytest.mark.parametrize("order", sorted(_SORTED))
def test_a_text_sorted_another_way_fails_the_ranking_row(order: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the value merged round-robin, the text's sources re-sorted (newest first, by title or by URL)
    wrong = (f"pairs = sorted(zip(result.sources, shown, strict=True), {_SORTED[order]})\n"
             "        lines = (_source_line(s, m) for s, m in pairs)")
    patch_reading(_render, "render_search", _LINES, wrong, monkeypatch, web_search)
    rows = failing_rows(text, "AGREES", "search.text.agrees", monkeypatch)
    # (sorted by URL, the odd URLs' row fails too: '/relative/path' sorts before the others of its query)
    assert rows == {"a newer source ranked lower", *(["URLs without a usual host"] if order == "by-url" else [])}


def test_a_text_keeping_each_querys_ranking_in_another_layout_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(_render, "render_search", _LINES, _QUERY_BY_QUERY_BACKWARDS, monkeypatch, web_search)
    assert failing_rows(text, "AGREES", "search.text.agrees", monkeypatch) == set()


# search.validation.query_cap's cap-zero row: a cap of 0 read as "no cap" fails exactly that row.
def _cap_zero_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """searchMaxQueries 0 taken by the settings and the tool (the reference refuses it as a configuration)."""
    spec = settings._BY_KEY["tools.search_max_queries"]
    monkeypatch.setitem(settings._BY_KEY, spec.key, replace(spec, check=settings._Range(0)))
    patch_reading(web_search.SearchToolSettings, "__post_init__",
                  '_positive_int("searchMaxQueries", self.search_max_queries)', "pass", monkeypatch)


def test_a_cap_of_zero_read_as_no_cap_fails_exactly_the_cap_zero_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: searchMaxQueries 0 taken (not refused as a configuration) and then read as "no cap"
    _cap_zero_taken(monkeypatch)
    patch_reading(web_search, "parse_queries", "if len(queries) > max_queries:",
                  "if max_queries and len(queries) > max_queries:", monkeypatch)
    assert failing_rows(validation, "QUERY_CAP", "search.validation.query_cap", monkeypatch) == {"cap zero"}


def test_a_cap_of_zero_taken_and_capping_every_array_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # seed-open: the configuration taken, every array then over the cap (no seed fixes the code)
    _cap_zero_taken(monkeypatch)
    assert failing_rows(validation, "QUERY_CAP", "search.validation.query_cap", monkeypatch) == set()


# search.text.snippets's order rule: snippets shifted by one source, either way, fail every row with two of them
# for one query; a layout under each query passes (the rule reads each query's own snippets).
@pytest.mark.parametrize("shift", ["snippets[1:] + snippets[:1]", "snippets[-1:] + snippets[:-1]"])
def test_snippets_shifted_by_one_source_fail_the_rows_with_two_snippets_of_a_query(
    shift: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a zip off by one, each line given its neighbour's snippet (an outside hunt)
    wrong = ("snippets = [s.snippet for s in result.sources]\n"
             f"        moved = [replace(s, snippet=x) for s, x in zip(result.sources, {shift}, strict=True)]\n"
             "        lines = (_source_line(s, m) for s, m in zip(moved, shown, strict=True))")
    monkeypatch.setattr(_render, "replace", replace, raising=False)  # the reading's own import
    patch_reading(_render, "render_search", _LINES, wrong, monkeypatch, web_search)
    # (every row with two snippets of one query shows them out of order; the merged batch has one a query)
    assert failing_rows(text, "SNIPPETS", "search.text.snippets", monkeypatch) == {
        "one query", "non-ASCII excerpts", "snippets on their own sources"}


def test_snippets_laid_out_under_each_query_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # seed-open (review): the value merged round-robin, the text listing the second query's sources first
    by_host = ("pairs = sorted(zip(result.sources, shown, strict=True), key=lambda p: p[0].url.split('/')[2], "
               "reverse=True)\n        lines = (_source_line(s, m) for s, m in pairs)")  # stable: ranks kept
    patch_reading(_render, "render_search", _LINES, by_host, monkeypatch, web_search)
    assert failing_rows(text, "SNIPPETS", "search.text.snippets", monkeypatch) == set()
