"""Summary mode (seed 001's remaining list: model-facing summary apart from the display snippet, with
per-source and total budgets). Budgets are tested at their edges (one below, at, one above) with
summaries as long as the seed measured (1,000-2,300 characters), CJK and astral characters at the cut."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fakes import FakeSearch

from dsweb_ref import SearchResult, Source, WebError, WebErrorCode, WebService
from dsweb_ref.schemas import validate
from dsweb_ref.settings import Settings, parse_settings
from dsweb_ref.tools import SearchToolSettings, WebSearchTool, render_search
from dsweb_ref.tools._summary import SUMMARY_CUT_MARKER, budget_summaries, cut_to

ASTRAL = "😀"  # one code point, two UTF-16 units, four UTF-8 bytes


def long_summary(n: int, word: str = "summary") -> str:
    """Exactly ``n`` characters of single-spaced words (folding leaves it unchanged)."""
    text = " ".join(f"{word}{i}" for i in range(n))[:n]
    return text[:-1] + "x" if text.endswith(" ") else text


def src(i: int, summary: str | None, snippet: str = "short snippet") -> Source:
    metadata = {"summary": summary, "site_name": "Example"} if summary is not None else {}
    return Source(url=f"https://s.example.test/{i}", title=f"T{i}", snippet=f"{snippet} {i}", metadata=metadata)


def run(tool: WebSearchTool, queries: list[str]) -> Any:
    return asyncio.run(tool.execute({"queries": queries}))


def tool_over(canned: dict[str, SearchResult], **settings: Any) -> WebSearchTool:
    web = WebService()
    web.register_search(FakeSearch(canned=canned))
    return WebSearchTool(web, SearchToolSettings(**settings))


# -- the cut -------------------------------------------------------------------------------------

@pytest.mark.parametrize("length", [1000, 1733, 2300])
def test_a_summary_one_below_or_at_the_budget_is_shown_whole(length: int) -> None:
    for summary in (long_summary(length - 1), long_summary(length)):
        assert cut_to(summary, length) == (summary, False)


@pytest.mark.parametrize("length", [1000, 1733, 2300])
def test_a_summary_one_above_the_budget_is_cut_to_the_budget_with_the_marker(length: int) -> None:
    summary = "长" * (length + 1)  # CJK: three UTF-8 bytes each, one character
    shown, cut = cut_to(summary, length)
    assert cut and len(shown) == length and shown == "长" * (length - 1) + SUMMARY_CUT_MARKER


def test_budgets_count_code_points_not_bytes_or_utf16_units() -> None:
    at = ASTRAL * 1000  # 1,000 characters, 2,000 UTF-16 units, 4,000 bytes
    assert cut_to(at, 1000) == (at, False)
    shown, cut = cut_to(at + ASTRAL, 1000)
    assert cut and shown == ASTRAL * 999 + SUMMARY_CUT_MARKER
    shown.encode("utf-8")  # no lone surrogate anywhere


def test_an_astral_character_right_at_the_cut_stays_whole_or_goes_whole() -> None:
    summary = "a" * 998 + ASTRAL + "b" * 1000  # the 999th character, the last one kept, is astral
    shown, _ = cut_to(summary, 1000)
    assert shown == "a" * 998 + ASTRAL + SUMMARY_CUT_MARKER
    shown, _ = cut_to(summary, 999)
    assert shown == "a" * 998 + SUMMARY_CUT_MARKER


def test_whitespace_is_folded_before_counting_and_a_space_at_the_cut_is_dropped() -> None:
    assert cut_to("a  b\n\tc", 5) == ("a b c", False)
    shown, cut = cut_to("abcd efgh", 6)
    assert cut and shown == "abcd" + SUMMARY_CUT_MARKER  # not "abcd …"


def test_a_budget_of_one_shows_only_the_marker() -> None:
    assert cut_to("ab", 1) == (SUMMARY_CUT_MARKER, True)


# -- the two budgets over one call ---------------------------------------------------------------

def test_the_total_budget_is_spent_in_source_order_and_a_source_without_room_shows_nothing() -> None:
    sources = [src(i, long_summary(1500)) for i in range(4)]
    view = budget_summaries(sources, per_source=1000, total=2500)
    assert [len(s or "") for s in view.shown] == [1000, 1000, 500, 0] and view.cut


@pytest.mark.parametrize(("total", "cut"), [(2999, True), (3000, False), (3001, False)])
def test_the_total_budget_at_its_edge(total: int, cut: bool) -> None:
    sources = [src(i, long_summary(1000)) for i in range(3)]
    view = budget_summaries(sources, per_source=1000, total=total)
    assert view.cut is cut
    assert sum(len(s or "") for s in view.shown) == min(total, 3000)
    assert view.shown[2] is not None and view.shown[2].endswith(SUMMARY_CUT_MARKER) is cut


def test_both_budgets_binding_at_once() -> None:
    sources = [src(0, long_summary(2300)), src(1, long_summary(1000)), src(2, long_summary(1200))]
    view = budget_summaries(sources, per_source=1100, total=2500)
    assert [len(s or "") for s in view.shown] == [1100, 1000, 400]
    assert view.shown[0].endswith(SUMMARY_CUT_MARKER) and not view.shown[1].endswith(SUMMARY_CUT_MARKER)


def test_a_source_without_a_summary_keeps_its_snippet_and_spends_nothing() -> None:
    sources = [src(0, None), src(1, long_summary(10))]
    view = budget_summaries(sources, per_source=10, total=10)
    assert view.shown == (None, long_summary(10)) and not view.cut
    text = render_search(SearchResult(sources=tuple(sources)), summaries=view.shown)
    assert "short snippet 0" in text and "short snippet 1" not in text


# -- the tool ------------------------------------------------------------------------------------

def test_snippet_mode_is_the_default_and_renders_exactly_as_before() -> None:
    result = SearchResult(sources=(src(0, long_summary(2000)), src(1, long_summary(1200))))
    out = run(tool_over({"q": result}), ["q"])
    assert SearchToolSettings().model_text == "snippet"
    assert out.text == render_search(result) and "summary5" not in out.text
    assert out.value == result.to_json() and all("summary_shown" not in s for s in out.value["sources"])


def test_summary_mode_shows_summaries_and_the_value_keeps_both_and_what_the_model_saw() -> None:
    full = long_summary(2300)
    result = SearchResult(sources=(src(0, full), src(1, None)))
    out = run(tool_over({"q": result}, model_text="summary", summary_max_chars=1000), ["q"])
    first, second = out.value["sources"]
    assert first["snippet"] == "short snippet 0" and first["metadata"]["summary"] == full  # both, whole
    assert first["summary_shown"] == full[:999].rstrip() + SUMMARY_CUT_MARKER
    assert f"— {first['summary_shown']}" in out.text and "short snippet 0" not in out.text
    assert "summary_shown" not in second and "short snippet 1" in out.text
    assert out.value["truncated"] is True
    assert "(Showing the first" not in out.text  # no source was dropped: only a summary was cut
    assert validate("web_search.output", out.value) == []


def test_summary_mode_without_a_cut_leaves_truncated_false() -> None:
    result = SearchResult(sources=(src(0, long_summary(1000)),))
    out = run(tool_over({"q": result}, model_text="summary", summary_max_chars=1000), ["q"])
    assert out.value["truncated"] is False and out.value["sources"][0]["summary_shown"] == long_summary(1000)


def test_the_total_budget_binds_across_the_queries_of_a_batch() -> None:
    canned = {
        "one": SearchResult(sources=(src(1, long_summary(900, "alpha")), src(2, long_summary(900, "beta")))),
        "two": SearchResult(sources=(src(3, long_summary(900, "gamma")), src(4, long_summary(900, "delta")))),
    }
    tool = tool_over(canned, model_text="summary", summary_max_chars=1000, summary_total_chars=2000)
    out = run(tool, ["one", "two"])
    shown = [s["summary_shown"] for s in out.value["sources"]]
    # Round-robin order (1, 3, 2, 4): each query alone fits 2,000, the batch does not.
    assert [s["url"][-1] for s in out.value["sources"]] == ["1", "3", "2", "4"]
    assert [len(s) for s in shown] == [900, 900, 200, 0] and sum(map(len, shown)) == 2000
    assert shown[2].endswith(SUMMARY_CUT_MARKER) and out.value["truncated"] is True
    assert all(s in out.text for s in shown)


def test_the_output_cap_still_bounds_a_huge_summary_budget() -> None:
    result = SearchResult(sources=tuple(src(i, long_summary(2300)) for i in range(8)))
    tool = tool_over({"q": result}, model_text="summary", summary_max_chars=1_000_000,
                     summary_total_chars=1_000_000, search_max_output_chars=5000)
    assert len(run(tool, ["q"]).text) <= 5000


# -- settings ------------------------------------------------------------------------------------

def test_settings_defaults_are_snippet_mode_with_safe_budgets() -> None:
    tools = Settings().tools
    assert (tools.search_model_text, tools.search_summary_max_chars, tools.search_summary_total_chars) == (
        "snippet", 1000, 4000)


def test_settings_reach_the_runtime_tool() -> None:
    from dsweb_ref.runtime import build_runtime

    settings = Settings().updated({"tools.search_model_text": "summary", "tools.search_summary_max_chars": 300,
                                   "tools.search_summary_total_chars": 900})
    tool = build_runtime(lambda: settings).search_tool()
    assert (tool.settings.model_text, tool.settings.summary_max_chars, tool.settings.summary_total_chars) == (
        "summary", 300, 900)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("tools.search_model_text", "both"),
        ("tools.search_model_text", "Summary"),
        ("tools.search_model_text", 1),
        ("tools.search_summary_max_chars", 0),
        ("tools.search_summary_max_chars", 1_000_001),
        ("tools.search_summary_max_chars", "100"),
        ("tools.search_summary_total_chars", -1),
        ("tools.search_summary_total_chars", 2.5),
    ],
)
def test_bad_summary_settings_are_config_invalid(key: str, value: object) -> None:
    section, name = key.split(".")
    with pytest.raises(WebError) as info:
        parse_settings({section: {name: value}})
    assert info.value.code == WebErrorCode.CONFIG_INVALID and key in info.value.message


def test_summary_settings_from_the_environment() -> None:
    settings = parse_settings({}, {"DSWEB_SEARCH_MODEL_TEXT": "summary", "DSWEB_SEARCH_SUMMARY_TOTAL_CHARS": "2500"})
    assert (settings.tools.search_model_text, settings.tools.search_summary_total_chars) == ("summary", 2500)
    with pytest.raises(WebError) as info:
        parse_settings({}, {"DSWEB_SEARCH_SUMMARY_MAX_CHARS": "1e3"})
    assert info.value.code == WebErrorCode.CONFIG_INVALID


@pytest.mark.parametrize(
    "bad", [{"model_text": "both"}, {"summary_max_chars": 0}, {"summary_total_chars": True},
            {"search_operators": "yes"}],
)
def test_bad_tool_settings_are_config_invalid(bad: dict[str, object]) -> None:
    with pytest.raises(WebError) as info:
        SearchToolSettings(**bad)  # type: ignore[arg-type]
    assert info.value.code == WebErrorCode.CONFIG_INVALID


def test_a_hostile_summary_stays_within_its_budget_and_valid_text() -> None:
    """300,000 characters of mixed whitespace, controls-free CJK and astral text: one line per source,
    the budget holds, and the text encodes as UTF-8."""
    hostile = ("长\n\n\t" + ASTRAL + "  word\r\n") * 37_500
    result = SearchResult(sources=(src(0, hostile), src(1, hostile)))
    out = run(tool_over({"q": result}, model_text="summary", summary_max_chars=500, summary_total_chars=700), ["q"])
    shown = [s["summary_shown"] for s in out.value["sources"]]
    assert len(shown[0]) in (499, 500) and 698 <= sum(map(len, shown)) <= 700  # a space at a cut is dropped
    assert all("\n" not in s and s.endswith(SUMMARY_CUT_MARKER) for s in shown)
    assert len(out.text) < 2000 and out.text.encode("utf-8")
    assert out.value["sources"][0]["metadata"]["summary"] == hostile
