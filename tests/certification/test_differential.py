"""The differential checks: the scenario generator, the oracle (seed 000's merge), the comparison that
judges only what the seed decides, shrinking, and the checks themselves against right and wrong targets."""

from __future__ import annotations

import asyncio
import collections
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dsweb_ref import CallContext
from dsweb_ref.certification.checks import differential
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.scenarios import Scenario, compare, expect, generate, scenario, shrink_candidates
from dsweb_ref.certification.suite import run_suite
from dsweb_ref.certification.targets import InProcessTarget, TargetConfig, ToolPair, reference_target
from dsweb_ref.emulator.scripted import Failure
from dsweb_ref.runtime import scripted_runtime
from dsweb_ref.settings import Settings
from dsweb_ref.tools import ToolResult

from .conftest import adapter_command, dsweb_certify, json_report


def src(url: str, title: str | None = None) -> dict[str, Any]:
    return {"url": url} if title is None else {"url": url, "title": title}


def ok(*sources: dict[str, Any], content: str | None = None, truncated: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {} if content is None else {"content": content}
    return {**out, "sources": list(sources), "truncated": truncated}


def sc(queries: tuple[str, ...], answers: dict[str, Any], cap: int = 8, order: tuple[str, ...] = ()) -> Scenario:
    return Scenario(queries, tuple(answers.items()), order or tuple(answers), cap, len(queries))


MULTI = sc(("one", "two"), {"one": ok(src("A", "a"), src("S", "first"), content="answer one"),
                            "two": ok(src("B"), src("S", "second"), content="answer two")})


# --- the oracle ------------------------------------------------------------------------------------


def test_oracle_merges_round_robin_dedups_first_wins_and_labels_answers() -> None:
    want = expect(MULTI)
    assert want.value == {
        "content": "### one\n\nanswer one\n\n### two\n\nanswer two",
        "sources": [src("A", "a"), src("B"), src("S", "first")],
        "truncated": False,
    }
    assert want.labelled == (("one", "answer one"), ("two", "answer two")) and not want.single


def test_oracle_truncated_by_a_query_with_nothing_dropped_and_by_the_cap() -> None:
    flagged = sc(("a", "b"), {"a": ok(src("x")), "b": ok(truncated=True)})
    assert expect(flagged).value == {"sources": [src("x")], "truncated": True}
    exact = sc(("a", "b"), {"a": ok(src("x"), src("d")), "b": ok(src("x"), src("d"))}, cap=2)
    assert expect(exact).value == {"sources": [src("x"), src("d")], "truncated": False}  # filled exactly: no drop
    over = sc(("a", "b"), {"a": ok(src("a1"), src("a2")), "b": ok(src("b1"))}, cap=2)
    assert expect(over).value == {"sources": [src("a1"), src("b1")], "truncated": True}


def test_oracle_returns_one_distinct_querys_result_unchanged() -> None:
    answer = ok(src("x"), src("x"), content="as is", truncated=True)
    for queries in (("q",), ("q", "q", "q")):
        want = expect(sc(queries, {"q": answer}))
        assert want.single and want.value == answer and not want.labelled


def test_oracle_reports_the_first_failure_in_completion_order() -> None:
    answers = {"a": Failure(500, "WEB_PROVIDER_ERROR"), "b": ok(), "c": Failure(401, "WEB_PROVIDER_UNAVAILABLE")}
    assert expect(sc(("a", "b", "c"), answers, order=("b", "c", "a"))).error_code == "WEB_PROVIDER_UNAVAILABLE"
    assert expect(sc(("a", "b", "c"), answers, order=("a", "c", "b"))).error_code == "WEB_PROVIDER_ERROR"


# --- the comparison --------------------------------------------------------------------------------


def judge(s: Scenario, value: dict[str, Any] | None, text: str = "", error: str | None = None) -> list[str]:
    return compare(s, expect(s), error is None, value, text, error)


REFERENCE_TEXT = "### one\n\nanswer one\n\n### two\n\nanswer two\n\nSources: ..."


def test_compare_accepts_the_oracle_and_whatever_the_seed_leaves_open() -> None:
    want = expect(MULTI).value
    assert want is not None
    assert judge(MULTI, want, REFERENCE_TEXT) == []
    # Block order and the blank lines around headings are the implementation's choice.
    other = {**want, "content": "### two\nanswer two\n### one\n\n\nanswer one\n"}
    assert judge(MULTI, other, "### two\nanswer two\n### one\n\n\nanswer one\n") == []


def test_compare_requires_each_answer_under_its_label_in_the_text() -> None:
    """Seed 000 labels answers 'so the model can tell which answer came from which search'."""
    want = expect(MULTI).value
    assert want is not None
    assert judge(MULTI, want, "### two\n### one") != []  # labels without their answers
    swapped = judge(MULTI, want, "### one\n\nanswer two\n\n### two\n\nanswer one")
    assert any("under its label '### one'" in p for p in swapped)


def test_compare_rejects_each_wrong_reading() -> None:
    want = expect(MULTI).value
    assert want is not None
    single = sc(("q", "q"), {"q": ok(src("x"), content="raw")})
    assert "unchanged" in judge(single, {**ok(src("x")), "content": "### q\n\nraw"}, "### q")[0]
    assert any("labels" in p for p in judge(single, ok(src("x"), content="raw"), "### q\nraw"))
    assert "truncated" in judge(MULTI, {**want, "truncated": True}, REFERENCE_TEXT)[0]
    swapped = {**want, "sources": [src("A", "a"), src("B"), src("S", "second")]}
    assert "sources" in judge(MULTI, swapped, REFERENCE_TEXT)[0]
    unlabelled = {**want, "content": "answer one\n\nanswer two"}
    assert "heading" in judge(MULTI, unlabelled, REFERENCE_TEXT)[0]
    assert any("labels" in p for p in judge(MULTI, want, "answer one answer two"))
    failing = sc(("a", "b"), {"a": Failure(500, "WEB_PROVIDER_UNAVAILABLE"), "b": ok()})
    assert "WEB_PROVIDER_UNAVAILABLE" in judge(failing, None, error="WEB_PROVIDER_ERROR")[0]
    assert "got a result" in judge(failing, ok())[0]


# --- generation and shrinking ----------------------------------------------------------------------


def test_generation_is_a_function_of_seed_and_index() -> None:
    assert list(generate(3, 5, False)) == [scenario(3, i, False) for i in range(5)]
    assert scenario(3, 0, False) != scenario(4, 0, False)


def _features(s: Scenario) -> set[str]:
    want = expect(s)
    answers = [a for _, a in s.answers if not isinstance(a, Failure)]
    urls = [src["url"] for a in answers for src in a["sources"]]
    found = set()
    if len(set(s.queries)) < len(s.queries):
        found.add("duplicate queries")
    if want.single and "content" in answers[0]:
        found.add("one query with an answer")
    if len(urls) > len(set(urls)):
        found.add("shared urls")
    if {u.strip().lower().rstrip("/") for u in urls} != {u for u in urls} and len(set(urls)) > 1:
        found.add("near-duplicate urls")
    if want.value is not None and not want.single and want.value["truncated"] and len(set(urls)) <= s.cap:
        found.add("per-query truncated, nothing dropped")
    if want.value is not None and len(set(urls)) > s.cap and not want.single:
        found.add("cap drops sources")
    if sum(isinstance(a, Failure) for _, a in s.answers) > 1:
        found.add("several failures")
    return found


def test_a_default_run_covers_every_case_family() -> None:
    # catches: scenario counts cut (issue 18 halved them) until a family shows up once or not at all
    counts = collections.Counter(
        f for s in generate(differential.DEFAULT_SEED, differential.SUCCEEDING, False) for f in _features(s))
    counts.update(f for s in generate(differential.DEFAULT_SEED, differential.FAILING, True) for f in _features(s))
    assert set(counts) == {
        "duplicate queries", "one query with an answer", "shared urls", "near-duplicate urls",
        "per-query truncated, nothing dropped", "cap drops sources", "several failures",
    }
    assert min(counts.values()) >= 14, counts


def test_shrink_candidates_are_each_one_step_smaller() -> None:
    s = scenario(0, 7, True)
    size = len(str(s.to_json()))
    candidates = list(shrink_candidates(s))
    assert candidates and all(len(str(c.to_json())) < size for c in candidates)
    assert all(expect(c) is not None for c in candidates)  # every candidate is still a valid scenario


# --- the checks ------------------------------------------------------------------------------------


class _NoTruncated:
    """A wrong tool: the reference, but ``truncated`` is always false."""

    def __init__(self, config: TargetConfig) -> None:
        settings = Settings().updated({"tools.search_max_results": config.search_max_results,
                                       "tools.search_max_queries": config.search_max_queries})
        self.tool = scripted_runtime(config.scripted_base, lambda: settings).search_tool()

    async def execute(self, arguments: object, ctx: CallContext | None = None) -> ToolResult:
        result = await self.tool.execute(arguments, ctx)
        value = None if result.value is None else {**result.value, "truncated": False}
        return replace(result, value=value)


def _broken() -> InProcessTarget:
    return InProcessTarget(lambda config: ToolPair(search=_NoTruncated(config)), name="broken", version="0")


@pytest.mark.parametrize("check_id", ["search.differential.merge", "search.differential.failure"])
def test_the_reference_passes_the_differential_checks(check_id: str) -> None:
    report = asyncio.run(run_suite(reference_target(), only=[check_id]))
    assert [r.outcome for r in report.results] == [Outcome.PASSED], report.results[0].reason


def test_a_failure_names_its_seed_and_a_shrunk_scenario_that_replays_it() -> None:
    with differential.seeded(2):
        report = asyncio.run(run_suite(_broken(), only=["search.differential.merge"]))
    (result,) = report.results
    assert result.outcome is Outcome.FAILED and result.reason.startswith("seed 2, scenario ")
    details = result.details
    assert details["seed"] == 2 and details["replay"] == "dsweb certify --only search.differential.merge --seed 2"
    minimal = details["minimal_scenario"]
    # Shrunk to the rule itself (seed 2: a cap of one drops the second query's only source): no duplicate
    # queries, no answers, no fields but the URL, and each remaining source needed for the drop.
    assert len(minimal["queries"]) == len(set(minimal["queries"])) == 2 and minimal["search_max_results"] == 1
    assert all(a["truncated"] is False and [list(x) for x in a["sources"]] == [["url"]]
               for a in minimal["answers"].values())
    assert details["minimal_problems"] == ["truncated=False, expected True"]
    original = scenario(2, details["scenario_index"], False)
    assert details["scenario"] == original.to_json()


def test_differential_checks_are_skipped_without_the_scripted_search_capability() -> None:
    target = InProcessTarget(lambda c: ToolPair(search=_NoTruncated(c)), name="x", version="0",
                             capabilities=("web_search", "search-api"))
    report = asyncio.run(run_suite(target, only=["search.differential"]))
    assert {r.outcome for r in report.results} == {Outcome.SKIPPED}
    assert all("scripted-search" in r.reason for r in report.results)


@pytest.mark.parametrize("seed", ["5", "6"])
def test_dsweb_certify_seed_option_picks_the_scenarios(tmp_path: Path, seed: str) -> None:
    path = tmp_path / "report.json"
    command = adapter_command("--break", "truncated-cap-only")
    code = dsweb_certify("--adapter", command, "--only", "search.differential.merge", "--seed", seed,
                         "--json", str(path))
    (check,) = json_report(path)["checks"]
    assert code == 1 and check["reason"].startswith(f"seed {seed}, ")
    assert check["details"]["replay"].endswith(f"--seed {seed}")


def _runs_with(monkeypatch: pytest.MonkeyPatch, answers: list[list[str]]) -> list[int]:
    """Replace one scenario run by the scripted problem lists, in turn; the count of runs."""
    runs: list[int] = []

    async def fake_run(ctx: object, s: Scenario) -> list[str]:
        runs.append(1)
        return answers[min(len(runs), len(answers)) - 1]

    monkeypatch.setattr(differential, "_run", fake_run)
    monkeypatch.setattr(differential, "_shrink", lambda ctx, s, problems: asyncio.sleep(0, (s, problems)))
    return runs


LATE = [f"searches ['a'] waited {differential.HOLD_LIMIT:g}s: the queries did not run concurrently, ..."]


def test_a_scenario_late_once_under_load_runs_again_and_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _runs_with(monkeypatch, [LATE, []])
    asyncio.run(differential._differential(None, "search.differential.failure", True, 1))  # type: ignore[arg-type]
    assert len(runs) == 2


def test_a_scenario_late_in_every_run_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _runs_with(monkeypatch, [LATE])
    with pytest.raises(differential.CheckFailed, match="waited"):
        asyncio.run(differential._differential(None, "search.differential.failure", True, 1))  # type: ignore[arg-type]
    assert len(runs) == 1 + differential.LATE_RERUNS


def test_a_wrong_value_is_not_run_again(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _runs_with(monkeypatch, [["value differs"]])
    with pytest.raises(differential.CheckFailed):
        asyncio.run(differential._differential(None, "search.differential.merge", False, 1))  # type: ignore[arg-type]
    assert len(runs) == 1


def test_the_reference_target_carries_every_scenario_over_one_pool_and_closes_it() -> None:
    """A scripted runtime per scenario used to open a connection per search (a third of the differential
    checks' CPU, on both sides of the wire); the reference target now keeps one pool for its life."""
    from dsweb_ref.emulator import Emulator
    from dsweb_ref.emulator.scripted import scripted_base

    scenarios = [s for s in generate(0, 40, False) if len(s.distinct) == 1][:5]
    assert len(scenarios) == 5

    async def scenario_runs(emu: Emulator) -> tuple[int, int]:
        target = reference_target()
        await target.hello()
        for s in scenarios:
            scenario_id = emu.scripted.load(s.script(differential.HOLD_LIMIT))
            await target.configure(TargetConfig(
                messages_base=emu.messages_base, tools_base=emu.tools_base, api_key="k", provider="scripted",
                scripted_base=scripted_base(emu.base_url, scenario_id), search_max_results=s.cap,
            ))
            outcome = await target.start_call("web_search", {"arguments": {"queries": list(s.queries)}}).outcome(20)
            assert outcome.ok, outcome.brief()
        opened = emu.log.connections_opened
        await target.close()
        await asyncio.to_thread(emu.log.wait_connections_closed, 5.0)
        return opened, emu.log.connections_open

    with Emulator() as emu:
        opened, left_open = asyncio.run(scenario_runs(emu))
    assert opened == 1  # five scenarios, five configurations, one search each: one connection
    assert left_open == 0  # closing the target closed its pool
