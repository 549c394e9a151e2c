"""The model-facing summary checks (seed 001), run by the real suite against in-process reference targets:
the reference passes, each wrong reading fails exactly the check made for it, and a target that does not
declare summary-budget is not charged for it (it keeps showing snippets)."""

from __future__ import annotations

from typing import Any

import pytest

from dsweb_ref.certification.adapter_protocol import CAP_SUMMARY_BUDGET, CAPABILITIES
from dsweb_ref.certification.checks import REGISTRY
from dsweb_ref.certification.checks import summary as summary_checks
from dsweb_ref.certification.checks.summary import BUDGET_CASES, SUMMARY_CHECKS, case_summary, summary_text
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.profiles import find_profile
from dsweb_ref.certification.targets import InProcessTarget, TargetConfig, reference_settings
from dsweb_ref.tools import ToolResult, _summary
from dsweb_ref.tools import web_search as web_search_tool

from .conftest import failed_checks, outcomes, reference_variant, run

BUDGET = "search.api.summary.budget"
DEFAULT = "search.api.summary.snippet_default"


class _Bent:
    """A web_search tool whose answer ``bend`` rewrites (a wrong implementation of the record)."""

    def __init__(self, tool: Any, bend: Any) -> None:
        self.tool, self.bend = tool, bend

    async def execute(self, arguments: object, ctx: Any = None) -> ToolResult:
        return self.bend(await self.tool.execute(arguments, ctx))


def _target(bend: Any = None, capabilities: tuple[str, ...] = CAPABILITIES) -> InProcessTarget:
    wrap = (lambda tool: _Bent(tool, bend)) if bend is not None else None
    return reference_variant("summary", wrap=wrap, capabilities=capabilities)


def _failed(bend: Any = None) -> set[str]:
    return failed_checks(_target(bend), [BUDGET, DEFAULT])


def test_the_checks_state_their_rule_and_cases_and_belong_to_the_right_profiles() -> None:
    assert {i for i in REGISTRY if i.startswith("search.api.summary")} == SUMMARY_CHECKS
    for check_id in SUMMARY_CHECKS:
        spec = REGISTRY[check_id]
        assert spec.check.seed == "001" and "Seed 001" in spec.rule
        assert spec.cases and all(case.catches for case in spec.cases)
    assert REGISTRY[BUDGET].profiles == ("seed-001-summary-budget",)
    assert REGISTRY[DEFAULT].profiles == ("seed-001-search-api",)
    assert find_profile("seed-001-summary-budget").requires == ("web_search", "search-api", CAP_SUMMARY_BUDGET)


def test_the_cases_use_summaries_as_long_as_the_seed_measured_and_hit_every_edge() -> None:
    summaries = [case_summary(s) for case in BUDGET_CASES for specs in case["queries"].values() for s in specs]
    lengths = {len(s) for s in summaries if s}
    assert max(lengths) == 2300 and {999, 1000, 1001} <= lengths
    assert summary_text(1001, "c") == " ".join(summary_text(1001, "c").split()) and len(summary_text(7, "t")) == 7
    at_cut = case_summary(["astral-at-999", 2300])
    assert len(at_cut) == 2300 and at_cut[998] == "😀"


def test_the_reference_passes_both() -> None:
    assert _failed() == set()


def test_a_target_not_declaring_summary_budget_is_not_charged_and_still_shows_snippets() -> None:
    plain = tuple(c for c in CAPABILITIES if c != CAP_SUMMARY_BUDGET)
    report = run(_target(capabilities=plain), [BUDGET, DEFAULT])
    assert outcomes(report) == {BUDGET: Outcome.SKIPPED, DEFAULT: Outcome.PASSED}
    verdict = {v.name: v for v in report.profiles}["seed-001-summary-budget"]
    assert not verdict.certified and verdict.missing == (CAP_SUMMARY_BUDGET,)


def test_the_configure_keys_default_to_snippet_mode_and_reach_the_reference_settings() -> None:
    config = TargetConfig("http://127.0.0.1:1/anthropic/v1", "http://127.0.0.1:1/v1/tools", "k")
    tools = reference_settings(config).tools
    assert (tools.search_model_text, tools.search_summary_max_chars, tools.search_summary_total_chars) == (
        "snippet", 1000, 4000)
    on = TargetConfig.from_json({**config.to_json(), "search_model_text": "summary", "search_summary_max_chars": 9,
                                 "search_summary_total_chars": 20})
    tools = reference_settings(on).tools
    assert (tools.search_model_text, tools.search_summary_max_chars, tools.search_summary_total_chars) == (
        "summary", 9, 20)


def _utf16_cut(text: str, budget: int) -> tuple[str, bool]:
    folded = " ".join(text.split())
    units = folded.encode("utf-16-le", "surrogatepass")
    if len(units) // 2 <= budget:
        return folded, False
    return units[: (budget - 1) * 2].decode("utf-16-le", "surrogatepass") + "…", True


def test_a_budget_counted_in_utf16_units_fails_the_budget_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_summary, "cut_to", _utf16_cut)
    assert _failed() == {BUDGET}


def test_a_total_reset_per_query_fails_the_budget_check(monkeypatch: pytest.MonkeyPatch) -> None:
    right = _summary.budget_summaries

    def per_query(sources: Any, per: int, total: int) -> Any:  # two sources per scripted query
        views = [right(sources[i:i + 2], per, total) for i in range(0, len(sources), 2)]
        return _summary.SummaryView(tuple(s for v in views for s in v.shown), any(v.cut for v in views))

    monkeypatch.setattr(web_search_tool, "budget_summaries", per_query)
    assert _failed() == {BUDGET}


def _each_source(change: Any) -> Any:
    def bend(result: ToolResult) -> ToolResult:
        if result.value is None:
            return result
        for source in result.value["sources"]:
            change(source)
        return ToolResult(text=result.text, value=result.value)

    return bend


def test_a_value_that_keeps_only_the_cut_summary_fails_the_budget_check() -> None:
    def cut_in_value(source: dict[str, Any]) -> None:
        if "summary_shown" in source:
            source["metadata"]["summary"] = source["summary_shown"]

    assert _failed(_each_source(cut_in_value)) == {BUDGET}


def test_truncated_left_false_after_a_cut_fails_the_budget_check() -> None:
    def bend(result: ToolResult) -> ToolResult:
        value = None if result.value is None else {**result.value, "truncated": False}
        return ToolResult(text=result.text, value=value)

    assert _failed(bend) == {BUDGET}


def test_a_record_that_disagrees_with_the_text_fails_the_budget_check() -> None:
    def whole(source: dict[str, Any]) -> None:
        if "summary_shown" in source:
            source["summary_shown"] = source["metadata"]["summary"][: len(source["summary_shown"])]

    assert _failed(_each_source(whole)) == {BUDGET}


def _word_cut(text: str, budget: int) -> tuple[str, bool]:
    folded = " ".join(text.split())
    if len(folded) <= budget:
        return folded, False
    if budget <= 0:
        return "", True
    keep = folded[: budget - 1]
    if " " in keep and not folded[len(keep)].isspace():
        keep = keep[: keep.rindex(" ")]  # back off to the last whole word
    return keep.rstrip() + "…", True


def test_a_cut_that_backs_off_to_a_whole_word_passes_both() -> None:
    """Removed false failure: seed 001 fixes budgets (maxima), not where under them a cut ends."""
    assert _word_cut("alpha beta gamma", 13) == ("alpha beta…", True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_summary, "cut_to", _word_cut)
        assert _failed() == set()


def test_a_marker_of_several_characters_or_in_front_passes_both(monkeypatch: pytest.MonkeyPatch) -> None:
    def in_front(text: str, budget: int) -> tuple[str, bool]:
        folded = " ".join(text.split())
        if len(folded) <= budget:
            return folded, False
        return ("[cut] " + folded)[:budget] if budget > 6 else "", True

    monkeypatch.setattr(_summary, "cut_to", in_front)
    assert _failed() == set()


@pytest.mark.parametrize("row", ["at the per-source budget", "total at the sum"])
def test_a_summary_that_fits_its_budgets_is_never_cut(row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each row catches its off-by-one (before, both were certified: the lower bound alone allowed them)."""
    right = _summary.budget_summaries
    short = lambda sources, per, total: right(sources, per - 1, total - 1)  # noqa: E731
    monkeypatch.setattr(web_search_tool, "budget_summaries", short)
    case = next(c for c in BUDGET_CASES if c.name == row)
    monkeypatch.setattr(summary_checks, "BUDGET_CASES", (case,))
    (result,) = run(_target(), [BUDGET]).results
    assert result.outcome is Outcome.FAILED and "was cut although it fits the budgets" in result.reason


def _with_budget(monkeypatch: pytest.MonkeyPatch, wrong: Any) -> None:
    monkeypatch.setattr(web_search_tool, "budget_summaries", wrong)


def test_summary_mode_ended_by_a_source_without_a_summary_fails_the_budget_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    right = _summary.budget_summaries

    def stop_at_missing(sources: Any, per: int, total: int) -> Any:
        view = right(sources, per, total)
        first = next((i for i, s in enumerate(view.shown) if s is None), len(view.shown))
        return _summary.SummaryView(view.shown[:first] + (None,) * (len(view.shown) - first), view.cut)

    _with_budget(monkeypatch, stop_at_missing)
    assert _failed() == {BUDGET}


def test_a_blank_summary_shown_instead_of_the_snippet_fails_the_budget_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_summary, "summary_of", lambda source: source.metadata.get("summary"))
    assert _failed() == {BUDGET}


def test_a_summary_left_out_by_the_total_but_not_reported_fails_the_budget_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    right = _summary.cut_to
    monkeypatch.setattr(_summary, "cut_to", lambda text, budget: ("", False) if budget <= 0 else right(text, budget))
    assert _failed() == {BUDGET}


def test_truncated_null_when_no_source_has_a_summary_fails_the_budget_check(monkeypatch: pytest.MonkeyPatch) -> None:
    right = _summary.budget_summaries

    def null_cut(sources: Any, per: int, total: int) -> Any:
        view = right(sources, per, total)
        return _summary.SummaryView(view.shown, view.cut or (None if all(s is None for s in view.shown) else False))

    _with_budget(monkeypatch, null_cut)
    assert _failed() == {BUDGET}


def test_a_space_kept_before_the_marker_or_an_empty_last_character_passes_both(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed-open: seed 001 fixes neither the marker's place nor how much of a cut a summary gives back."""
    def loose(text: str, budget: int) -> tuple[str, bool]:
        folded = " ".join(text.split())
        if len(folded) <= budget:
            return folded, False
        if budget <= 1:
            return "", True
        return folded[: budget - 1].lstrip() + "…", True

    monkeypatch.setattr(_summary, "cut_to", loose)
    assert _failed() == set()
