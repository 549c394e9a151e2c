"""Outside hunt: readings the seeds leave open that `dsweb certify` failed (false failures). Each is made in
the reference with :func:`patch_reading` and must be certified by the check that failed it; the wrong
readings those rows catch stay caught (their own reading tests and break modes, and the ones here)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dsweb_ref import SearchResult
from dsweb_ref.certification.checks import differential, mapping, scheduling, text
from dsweb_ref.certification.checks import summary as summary_checks
from dsweb_ref.certification.checks._base import CheckFailed
from dsweb_ref.certification.scenarios import Scenario, answer_labels, compare, expect
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers import _scheduler, deepseek_official
from dsweb_ref.tools import ToolResult, _render, _summary
from dsweb_ref.tools import web_search as web_search_tool
from dsweb_ref.tools._result import visible

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import adapter_command, run
from .test_breaks_end_to_end import certify_json
from .test_retry_waits_judge import QUIET, Ctx, record, run_check, scripted
from .test_retry_waits_judge import rows as judge_rows

WAITS = "search.api.retry.waits"
BUDGET = "search.api.summary.budget"
TOTAL_BINDING = "total binding, per-source not"
CUT = "excerpt, cut = cut_to(summary, min(per_source, left))"
MAPPING = "search.messages.mapping"
FIRST_WINS = "if url and cited and url not in snippets:"
CEILING = "ceiling = min(cap, BACKOFF_FIRST_S * 2.0**retry)"


# -- R1: a short backoff (seed 001: "the guide recommends waiting before retrying 408, 429, and 5xx") ----------


def test_a_backoff_of_50_to_100_ms_then_100_to_200_ms_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backoff curve is open: a first ceiling of 0.1 s (waits of 50-100 ms, then 100-200 ms) waits
    before every retry. The at-once rule failed it ("the second-longest of 7 waits 99.0 ms")."""
    patch_reading(_scheduler.AccountScheduler, "backoff", CEILING, "ceiling = min(cap, 0.1 * 2.0**retry)", monkeypatch)
    (result,) = run(reference_target(), only=[WAITS]).results
    assert result.outcome.value == "passed", result.reason
    assert scheduling.AT_ONCE_RETRY + scheduling.TURNAROUND_CAP <= 0.05  # never a problem for a wait of 50 ms


def test_one_stalled_at_once_retry_does_not_pass_a_status_off_as_waiting() -> None:
    """The bar sits below 50 ms, so the judge is a second-longest wait: an at-once target whose one retry a
    busy moment held back 80 ms (measured: the first 408 of a run) still fails the at-once rows."""
    rows = [replace(row, records=[record(0.0, 0.1), record(0.18, 0.28)]) if row.case.name == "408, then success"
            else row for row in judge_rows(0.002, 0.005)]
    problems, _ = scheduling._retry_problems(rows, QUIET)
    failed = {reason.split(":")[0] for reason, _ in problems}
    assert {"no Retry-After", "408 every time", "429 without Retry-After every time", "502 every time",
            "503 with an unreadable Retry-After every time"} == failed


def test_the_first_call_without_retry_after_starts_after_the_retry_after_block_has_arrived(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Started with the Retry-After block, the first 408's at-once retry was answered among the block's
    failures and looked like a wait of 30-80 ms; it waits STAGGER after the block like the others."""
    runs: list[list[Any]] = []
    judge = scheduling._retry_problems
    monkeypatch.setattr(scheduling, "_retry_problems", lambda rows, load: runs.append(rows) or judge(rows, load))
    (result,) = run(reference_target(), only=[WAITS]).results
    assert result.outcome.value == "passed", result.reason
    first = {scheduling._start_order(row.case) == 0: [] for row in runs[0]}
    for row in runs[0]:
        first[scheduling._start_order(row.case) == 0].append(min(r.started for r in row.records))
    assert min(first[False]) - max(first[True]) >= scheduling.STAGGER - 0.005


@pytest.mark.parametrize(
    ("runs", "fails"),
    [
        # catches: an at-once target held back past the bar in two of three runs (now 35 ms, not 100 ms) passed
        # off with a load note: the inconclusive runs earn two more, and two runs showing the problem fail it
        (["problem", "doubt", "doubt", "problem"], True),
        (["doubt", "doubt", "doubt", "problem", "problem"], True),
        (["doubt", "problem", "doubt", "met"], False),  # a run that meets the rule still ends the check
        (["problem", "doubt", "doubt", "doubt", "doubt"], False),  # five runs at most, then a load note
    ],
)
def test_inconclusive_at_once_runs_are_run_again_up_to_five_runs(
    runs: list[str], fails: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = scripted(monkeypatch, runs)
    ctx = Ctx()
    if fails:
        with pytest.raises(CheckFailed, match="came at once"):
            run_check(ctx)
    else:
        run_check(ctx)
        assert "verdict" not in ctx.notes[-1] if runs[-1] == "met" else ctx.notes[-1]["verdict"]
    assert made == runs and len(made) <= scheduling.AT_ONCE_ATTEMPTS


# -- B1: a summary the total has no room for left out whole (seed 001: "per-source and total output budgets") ---


def test_a_summary_the_total_has_no_room_for_may_be_left_out_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Budgets are limits: a summary whose share no longer fits what the total has left may be left out
    instead of cut to a fragment. It failed "total binding, per-source not" ("1800 summary characters shown
    where the budgets allow 2000")."""
    whole_or_nothing = ("excerpt, cut = cut_to(summary, min(per_source, left) if min(per_source, len(summary)) <= left "
                        "else 0)")
    patch_reading(_summary, "budget_summaries", CUT, whole_or_nothing, monkeypatch, web_search_tool)
    assert failing_rows(summary_checks, "BUDGET_CASES", BUDGET, monkeypatch) == set()


@pytest.mark.parametrize(
    ("wrong", "rows"),
    [
        # catches: every summary cut at half what its budgets allow (each shown, none left out whole)
        ("excerpt, cut = cut_to(summary, min(per_source, left) // 2)", {TOTAL_BINDING}),
        # catches: a summary left out although the total had room for it (only the first summary shown)
        ("excerpt, cut = cut_to(summary, min(per_source, left) if left == total else 0)", {TOTAL_BINDING}),
    ],
)
def test_a_summary_left_out_or_cut_short_while_the_total_has_room_still_fails(
    wrong: str, rows: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_reading(_summary, "budget_summaries", CUT, wrong, monkeypatch, web_search_tool)
    assert rows <= failing_rows(summary_checks, "BUDGET_CASES", BUDGET, monkeypatch)


# -- M2/M3: which excerpt of a URL cited several times (seed 001: "extracts sources and citation excerpts") ---


@pytest.mark.parametrize(
    "which",
    [
        "if url and cited:",  # the last excerpt wins
        "if url and cited and (url not in snippets or len(cited) > len(snippets[url])):",  # the longest
    ],
    ids=["last", "longest"],
)
def test_another_excerpt_of_a_url_cited_twice_is_certified(which: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The seed does not say which excerpt: the last (or longest) failed "first citation per URL" ("sources
    [(..., 'second excerpt', ...)], expected [(..., 'first excerpt', ...)]")."""
    patch_reading(deepseek_official, "_citations", FIRST_WINS, which, monkeypatch)
    assert failing_rows(mapping, "MESSAGES_CASES", MAPPING, monkeypatch) == set()


def test_the_last_citation_variant_of_the_example_adapter_is_certified(tmp_path: Path) -> None:
    """The example adapter's last-citation-wins was a break mode; the seeds allow it, so it is a variant."""
    code, _, got = certify_json(tmp_path, "--adapter", adapter_command("--variant", "last-citation-wins"),
                                "--only", "search.messages")
    assert code == 0 and got and set(got.values()) == {"passed"}, got


@pytest.mark.parametrize(
    ("wrong", "row"),
    [
        # catches: the excerpts of a URL cited twice joined into one snippet (not one excerpt as cited)
        ("if url and cited:\n                snippets[url] = snippets[url] + ' ' + cited if url in snippets else cited"
         "\n            if False:", "a URL cited twice"),
        # catches: an empty cited_text taken as the URL's excerpt, hiding the next one
        ("if url and citation.get('cited_text') is not None and url not in snippets:", "empty first excerpt"),
    ],
    ids=["joined", "empty"],
)
def test_an_excerpt_not_as_cited_fails_exactly_its_row(wrong: str, row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(deepseek_official, "_citations", FIRST_WINS, wrong, monkeypatch)
    fails_exactly(mapping, "MESSAGES_CASES", MAPPING, row, monkeypatch)


def test_another_urls_excerpt_for_an_uncited_result_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a result no citation names given another URL's excerpt
    patch_reading(deepseek_official, "map_sources", "snippet=snippets.get(url),",
                  "snippet=snippets.get(url) or next(iter(snippets.values()), None),", monkeypatch)
    fails_exactly(mapping, "MESSAGES_CASES", MAPPING, "uncited result", monkeypatch)


# -- A6: a batch's sources under '### <query>' headings (seed 000 labels answers so; the layout is open) ------

AGREES, DIFFERENTIAL = "search.text.agrees", "search.differential.merge"
MERGE = "return merge_results(queries, results, cap)"
# Each call's merge with the per-query results it came from (present sees only the merge).
_GROUPS: ContextVar[tuple[SearchResult, list[str], list[SearchResult]] | None] = ContextVar("groups", default=None)


def _keep_groups(queries: list[str], results: list[SearchResult], merged: SearchResult) -> SearchResult:
    _GROUPS.set((merged, list(queries), list(results)))
    return merged


def _grouped(monkeypatch: pytest.MonkeyPatch, *, placeholder: str = "", answers_first: bool = False,
             lines_each: bool = False, quoted: bool = False, all_under_last: bool = False) -> None:
    """The reference, but a batch's text lays each query's shown sources out under its '### <query>' heading,
    with its answer (if any) between: the layout A6 of the outside hunt. ``placeholder``: shown under the
    heading of a query without an answer (a note that it found nothing: no answer, so no label; hunt S4-2);
    ``answers_first``: every answer under the first query's heading (wrong: an answer under another query's
    label); ``lines_each``: each source as a numbered title line, its URL and its excerpt on lines of their own
    (hunt S4-3); ``quoted``: each answer as a Markdown blockquote (hunt S4-5); ``all_under_last``: every source
    under the last query's heading (wrong: other queries' sources shown as that query's)."""
    monkeypatch.setattr(web_search_tool, "_keep_groups", _keep_groups, raising=False)
    patch_reading(web_search_tool.WebSearchTool, "run", MERGE,
                  "return _keep_groups(queries, results, merge_results(queries, results, cap))", monkeypatch)
    right = web_search_tool.WebSearchTool.present

    def present(self: web_search_tool.WebSearchTool, result: SearchResult) -> ToolResult:
        groups = _GROUPS.get()
        if groups is None or groups[0] is not result or self.settings.model_text != "snippet":
            return right(self, result)
        _, queries, results = groups
        shown, listed = {s.url for s in result.sources}, set()
        said = [r.content for r in results if r.content]
        blocks = []
        for n, (query, own) in enumerate(zip(queries, results, strict=True)):
            lines = []
            last = n == len(queries) - 1
            for source in ([s for r in results for s in r.sources] if last else []) if all_under_last else own.sources:
                if source.url in shown and source.url not in listed:
                    listed.add(source.url)
                    lines.append(_render._source_line(source) if not lines_each else
                                 f"{len(lines) + 1}. {source.title or 'untitled'}\n   {source.url}"
                                 + (f"\n   {source.snippet}" if source.snippet else ""))
            answer = ("\n\n".join(said) if n == 0 else "") if answers_first else own.content or placeholder
            if quoted and own.content:
                answer = "\n".join(f"> {line}" for line in answer.split("\n"))
            if lines or answer:
                blocks.append("\n\n".join([f"### {visible(query)}", *filter(None, [answer, "\n".join(lines)])]))
        if result.truncated:
            blocks.append(f"(Showing the first {len(result.sources)} sources. Refine the query for more.)")
        blocks.append(_render.CITE_REMINDER)
        return ToolResult(text="\n\n".join(blocks), value=result.to_json())

    monkeypatch.setattr(web_search_tool.WebSearchTool, "present", present)


def test_a_batch_whose_sources_stand_under_query_headings_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """It failed search.text.agrees ("the text adds the label '### tx one'") and search.differential.merge
    ("the text labels answers ['ALPHA', 'beta release'], expected []")."""
    _grouped(monkeypatch)
    assert failing_rows(text, "AGREES", AGREES, monkeypatch) == set()
    report = run(reference_target(), only=[DIFFERENTIAL, "search.text.snippets", "search.single.passthrough"])
    assert {r.check.id: r.outcome.value for r in report.results} == {
        DIFFERENTIAL: "passed", "search.text.snippets": "passed", "search.single.passthrough": "passed"
    }, [r.reason for r in report.results]


@pytest.mark.parametrize("layout", [
    {"placeholder": "No results for this query."},  # S4-2: failed as "labels answers ['cafe', 'café']"
    {"lines_each": True},  # S4-3: failed as "the text adds the label '### tx one'"
    {"quoted": True},  # S4-5: failed as "the text does not show the provider's answer"
    {"placeholder": "No results for this query.", "lines_each": True, "quoted": True},
], ids=["no-results-note", "source-lines-each", "answers-quoted", "all-three"])
def test_a_grouped_layout_framing_its_parts_freely_is_certified(
    layout: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # From a hunt (S4-2, S4-3, S4-5): seed 000 labels provider answers; a note that a query found nothing is no
    # answer (an earlier session had judged a heading over '(no answer)' a label: no seed sentence reserves a
    # heading for queries with answers), a source's title or excerpt on a line of its own is the source's, and how
    # an answer is framed is free. Each of these layouts failed search.differential.merge or search.text.agrees.
    _grouped(monkeypatch, **layout)
    assert failing_rows(text, "AGREES", AGREES, monkeypatch) == set()
    report = run(reference_target(), only=[DIFFERENTIAL, "search.text.snippets", "search.single.passthrough"])
    assert {r.check.id: r.outcome.value for r in report.results} == {
        DIFFERENTIAL: "passed", "search.text.snippets": "passed", "search.single.passthrough": "passed"
    }, [r.reason for r in report.results]


def test_a_heading_over_other_queries_sources_still_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the row "a batch without answers" after hunt S4 (a note under a heading is no label now): a query's
    # heading over every query's sources labels them as its own
    _grouped(monkeypatch, all_under_last=True)
    assert "a batch without answers" in failing_rows(text, "AGREES", AGREES, monkeypatch)


def test_an_answer_under_another_querys_heading_still_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: every answer under the first query's heading (the model cannot tell which search gave which)
    _grouped(monkeypatch, answers_first=True)
    (result,) = run(reference_target(), only=[DIFFERENTIAL]).results
    # the padded pinned scenario (hunt O-A3) runs first and says it in its own words (the padded query's answer not
    # under its own query); without it, a generated scenario says the answer is not under its label
    assert result.outcome.value == "failed", result.reason
    assert result.reason.startswith("pinned scenario 4: the text shows the answer 'answered for the padded query' "
                                    "under ['### pinned pad'], not under a '### ' line showing its own query"), \
        result.reason
    monkeypatch.setattr(differential, "PINNED", differential.PINNED[:3])
    (result,) = run(reference_target(), only=[DIFFERENTIAL]).results
    assert result.outcome.value == "failed" and "under its label" in result.reason, result.reason


TWO = Scenario(("one", "two"), (("one", {"sources": [{"url": "https://a.test/1"}], "truncated": False,
                                         "content": "answer one"}),
                                ("two", {"sources": [{"url": "https://b.test/1"}], "truncated": False})),
               ("one", "two"), 8, 2)
BOTH = Scenario(("one", "two"), (("one", {"sources": [{"url": "https://a.test/1"}], "truncated": False,
                                          "content": "answer one"}),
                                 ("two", {"sources": [{"url": "https://b.test/1"}], "truncated": False,
                                          "content": "answer two\nits second line"})),
                ("one", "two"), 8, 2)
ONE = Scenario(("one",), (("one", {"sources": [{"url": "https://a.test/1"}], "truncated": False}),), ("one",), 8, 1)


@pytest.mark.parametrize(
    ("scenario", "shown", "problem"),
    [
        # the layouts the seed leaves open: merged after the answers, or each query's sources under its heading
        (TWO, "### one\n\nanswer one\n\nSources:\n- [a](https://a.test/1)\n- [b](https://b.test/1)\n\nCite.", ""),
        (TWO, "### one\n\nanswer one\n\n- [a](https://a.test/1)\n\n### two\n\n- [b](https://b.test/1)\n\nCite.", ""),
        (TWO, "### one\n- [a](https://a.test/1)\n\nanswer one\n### two\n- [b](https://b.test/1)\n(Showing 2.)", ""),
        # a note that a query found nothing, a source over several lines, a quoted answer, a heading naming no query
        # (hunt S4): no answer stands under the note, the lines are the source's, the framing is free
        (TWO, "### one\n\nanswer one\n\n### two\n\n(no answer)\n\n- [b](https://b.test/1)", ""),
        (TWO, "### one\n\n> answer one\n\n1. A\n   https://a.test/1\n   an excerpt\n\n### two\n\n1. B\n"
         "   https://b.test/1", ""),
        (TWO, "### one\n\nanswer one\n\n### Sources\n\n- [a](https://a.test/1)\n- [b](https://b.test/1)", ""),
        (ONE, "- [a](https://a.test/1)\n\n### Sources\n\n- [a](https://a.test/1)", ""),
        # the provider's labelled answers quoted whole, headings and all (hunt S1-1: failed as unlabelled)
        (TWO, "Provider answer (untrusted):\n> ### one\n>\n> answer one\n\nResults:\n1. A\n   URL: https://a.test/1"
         "\n2. B\n   URL: https://b.test/1", ""),
        # an answer after a lead-in of the text's own (a review's false failure, L2)
        (TWO, "### one\n\n**Answer:** answer one\n\n- [a](https://a.test/1)\n\n### two\n\n- [b](https://b.test/1)", ""),
        (BOTH, "### one\n\nAnswer: answer one\n\n### two\n\nAnswer: answer two\nits second line\n\n"
         "- [a](https://a.test/1)\n- [b](https://b.test/1)", ""),
        # catches: each label over every answer so far (a review's false pass, L1), the lead-in or not
        (BOTH, "### one\n\nanswer one\n\n### two\n\nanswer one\n\nanswer two\nits second line\n\n"
         "- [a](https://a.test/1)\n- [b](https://b.test/1)", "'one''s answer 'answer one' under '### two' too"),
        (BOTH, "### two\n\nanswer two\nits second line\n\n### one\n\nAnswer: answer two\nits second line\n\n"
         "answer one\n\n- [a](https://a.test/1)\n- [b](https://b.test/1)", "under '### one' too"),
        # catches (framed as well): an answer quoted under another query's heading, a one-query result labelled
        (TWO, "> ### two\n>\n> answer one\n\n- [a](https://a.test/1)\n- [b](https://b.test/1)", "under its label"),
        (ONE, "> ### one\n\n- [a](https://a.test/1)", "labels answers ['one'], expected []"),
        # catches: a query's heading over another query's sources, or over another query's answer as well
        (TWO, "### one\n\nanswer one\n\n### two\n\n- [a](https://a.test/1)\n- [b](https://b.test/1)", "labels"),
        (TWO, "### one\n\nanswer one\n\n- [a](https://a.test/1)\n\n### two\n\n> answer one\n\n"
         "- [b](https://b.test/1)", "labels answers ['one', 'two'], expected ['one']"),
        # catches: an answer unlabelled, or under another query's heading
        (TWO, "answer one\n\n- [a](https://a.test/1)\n- [b](https://b.test/1)", "under its label"),
        (TWO, "### two\n\nanswer one\n\n- [b](https://b.test/1)\n\n### one\n\n- [a](https://a.test/1)",
         "under its label"),
        # catches: a one-query result given batch formatting (any heading, over its sources alone too)
        (ONE, "### one\n\n- [a](https://a.test/1)", "labels answers ['one'], expected []"),
    ],
)
def test_a_heading_labels_an_answer_when_more_than_its_own_sources_stand_under_it(
    scenario: Scenario, shown: str, problem: str
) -> None:
    want = expect(scenario)
    problems = compare(scenario, want, True, want.value, shown, None)
    assert (problem in " ".join(problems) if problem else problems == []), problems


def test_the_closing_lines_and_a_heading_over_nothing_label_no_answer() -> None:
    sources = {"one": ["https://a.test/1"], "two": ["https://b.test/1"], "three": []}
    shown = "### one\n\nanswer\n\n- [a](https://a.test/1)\n\n### two\n- [b](https://b.test/1)\n\n### three\n\nCite."
    assert answer_labels(shown, sources, ["answer"]) == ["one"]


EXCERPT = Scenario(("one", "two"), (("one", {"sources": [{"url": "https://a.test/1", "snippet": "merge ok"}],
                                            "truncated": False, "content": "answer one"}),
                                    ("two", {"sources": [{"url": "https://b.test/1"}], "truncated": False,
                                             "content": "ok"})),
                   ("one", "two"), 8, 2)


@pytest.mark.parametrize(
    ("shown", "problem"),
    [
        # an excerpt on a line of its own, framed as a list item: the source's line, not two's answer (a final read)
        ("### one\n\nanswer one\n\n1. A\n   https://a.test/1\n   - merge ok\n\n### two\n\nok\n\n"
         "- https://b.test/1", ""),
        # a closing note ending in an answer's word is prose, not a lead-in before that answer (a final read)
        ("### one\n\nanswer one\n\n### two\n\nok\n\n- https://a.test/1\n- https://b.test/1\n\nCite them, they are ok",
         ""),
        # catches: two's answer under one's label too, after a lead-in
        ("### one\n\nanswer one\n\nAnswer: ok\n\n### two\n\nok\n\n- https://a.test/1\n- https://b.test/1",
         "under '### one' too"),
    ],
)
def test_an_answer_elsewhere_is_told_from_a_source_line_or_a_note(shown: str, problem: str) -> None:
    want = expect(EXCERPT)
    problems = compare(EXCERPT, want, True, want.value, shown, None)
    assert (problem in " ".join(problems) if problem else problems == []), problems
