"""A read-only hunt (P-A) over seed 000: wrong readings dsweb certify passed. Each is made in the reference as the
hunt made it and must fail exactly the new row (or pinned scenario) that names it; the reference passes them.

P-A1. Seed 000: web_search 'accepts one required queries string array' (accepting both query and queries was
rejected). The rows sent the legacy query alone, so a tool that searched a query given beside queries too was
certified: search.validation.arguments now sends both.

P-A6. Seed 001: Harness 'retains ... bounded tool output'. Only answers carried huge fields, so a failure that quoted a
300,000-character provider error message whole into an uncut 'Error: ...' text was certified: search.text.bounded
now answers a 500 with such a message. Either cut alone (the quote's, or the error text's) keeps the failure bounded.

P-A2, P-A3, P-A4 (seed 000's batch merge), each caught by a new pinned scenario of search.differential.merge:
a URL repeated inside one query's list freed its rank (each list deduplicated before the round-robin; the default
seed's scenarios hold no batch it reorders, and the reference's DeepSeek providers keep a URL once in their own
result, so search.merge.round_robin cannot show it); '### <query>' labels cut to 39 characters and an ellipsis (no
generated query is that long); an answer equal to an earlier query's shown once, under the first label only."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable, Iterable

import pytest

from dsweb_ref import providers
from dsweb_ref._types import SearchResult
from dsweb_ref.certification import scenarios
from dsweb_ref.certification.checks import differential, text, validation
from dsweb_ref.certification.scenarios import Scenario
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers import _deepseek_http
from dsweb_ref.tools import _merge, _result, web_fetch, web_search

from ._readings import fails_exactly_shown, passes_rows, patch_reading
from .conftest import run

ARGUMENTS_CHECK, ARGUMENTS_TABLE = "search.validation.arguments", "ARGUMENTS"
BESIDE = next(c.name for c in validation.ARGUMENTS if "beside" in c.params)
ROUTED = r"\[(?:Search API|Messages)\] (.+?): "  # a check over both search routes names the row under each

# P-A1: the legacy query put in front of the queries array.
QUERIES = '    queries = arguments["queries"]\n'
BOTH = ('    queries = arguments["queries"]\n'
        "    if isinstance(queries, list) and isinstance(arguments.get('query'), str):\n"
        "        queries = [arguments['query'], *queries]\n")


def test_the_reference_passes_the_legacy_query_beside_queries_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(validation, ARGUMENTS_TABLE, ARGUMENTS_CHECK, (BESIDE,), monkeypatch)


def test_a_legacy_query_searched_beside_queries_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: P-A1, a query given beside queries searched too (both representations accepted and merged)
    patch_reading(web_search, "parse_queries", QUERIES, BOTH, monkeypatch)
    fails_exactly_shown(validation, ARGUMENTS_TABLE, ARGUMENTS_CHECK, BESIDE, ROUTED, monkeypatch)


def test_a_legacy_query_beside_queries_refused_passes_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: refusing the extra argument as invalid arguments before any request is the other right answer
    refuse = QUERIES + "    if 'query' in arguments:\n        raise _invalid('unknown argument: query')\n"
    patch_reading(web_search, "parse_queries", QUERIES, refuse, monkeypatch)
    passes_rows(validation, ARGUMENTS_TABLE, ARGUMENTS_CHECK, (BESIDE,), monkeypatch)


# P-A6: neither the provider's quoted error message nor the tool's 'Error: ...' text cut.
BOUNDED_CHECK, BOUNDED_TABLE = "search.text.bounded", "BOUNDED"
HUGE_ERROR = next(c.name for c in text.BOUNDED if "error_message" in c.params)
ERROR_CUT = "if max_chars is not None and len(text) > max_chars:"


def _error_detail_uncut(body: bytes, secrets: Iterable[str] = ()) -> str | None:
    """The hunt's error_detail: the provider's message found as the reference finds it, scrubbed, never cut."""
    try:
        data = _deepseek_http.parse_json(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, str):
        detail: object = error
    else:
        inner = error.get("message") if isinstance(error, dict) else None
        detail = inner if inner is not None else data.get("message")
    if not isinstance(detail, str):
        return None
    return _deepseek_http.scrub_secrets(detail, tuple(secrets))


def _uncut_error_result(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(_result, "error_result", ERROR_CUT, "if False:", monkeypatch, web_search, web_fetch)


def _uncut_error_detail(monkeypatch: pytest.MonkeyPatch) -> None:
    original = _deepseek_http.error_detail
    for info in pkgutil.iter_modules(providers.__path__):
        module = importlib.import_module(f"{providers.__name__}.{info.name}")
        if getattr(module, "error_detail", None) is original:
            monkeypatch.setattr(module, "error_detail", _error_detail_uncut)


def test_the_reference_passes_the_huge_error_message_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(text, BOUNDED_TABLE, BOUNDED_CHECK, (HUGE_ERROR,), monkeypatch)


def test_an_error_quoted_whole_into_an_uncut_error_text_fails_exactly_its_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: P-A6, the provider's 300,000-character error message quoted whole and the tool's 'Error: ...' text
    # left uncut: the failure the model sees is unbounded
    _uncut_error_result(monkeypatch)
    _uncut_error_detail(monkeypatch)
    fails_exactly_shown(text, BOUNDED_TABLE, BOUNDED_CHECK, HUGE_ERROR, ROUTED, monkeypatch)


@pytest.mark.parametrize("uncut", [_uncut_error_result, _uncut_error_detail], ids=["error-text", "error-detail"])
def test_either_bound_alone_keeps_the_error_text_bounded(
    uncut: Callable[[pytest.MonkeyPatch], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    # open: one cut is enough. The quote cut at 500 characters in an uncut error text, or the whole message quoted
    # into an error text cut to the output cap, is a bounded failure: the row judges the text the model sees.
    uncut(monkeypatch)
    passes_rows(text, BOUNDED_TABLE, BOUNDED_CHECK, (HUGE_ERROR,), monkeypatch)



# P-A2, P-A3, P-A4: readings of the batch merge, each caught by a pinned scenario of search.differential.merge.
DIFFERENTIAL = "search.differential.merge"
PINNED = {"P-A2": 5, "P-A3": 6, "P-A4": 7}  # each finding's pinned scenario, numbered from 1 as the check reports it


def _merge_at(pinned: tuple[Scenario, ...], generated: int = differential.SUCCEEDING) -> tuple[str, str]:
    """search.differential.merge at the default seed, over ``pinned`` and ``generated`` scenarios."""
    with pytest.MonkeyPatch.context() as scoped:
        scoped.setattr(differential, "PINNED", pinned)
        scoped.setattr(differential, "SUCCEEDING", generated)
        with differential.seeded(None):
            (result,) = run(reference_target(), only=[DIFFERENTIAL]).results
    return result.outcome.value, result.reason


def _fails_exactly_pinned(finding: str) -> str:
    """The finding's pinned scenario fails, as the check numbers it among them all, and every other pinned and
    generated scenario passes: the reason it fails with."""
    number = PINNED[finding]
    outcome, reason = _merge_at(scenarios.PINNED)
    assert outcome == "failed" and reason.startswith(f"pinned scenario {number}: "), reason
    others = scenarios.PINNED[: number - 1] + scenarios.PINNED[number:]
    assert _merge_at(others) == ("passed", "")
    return reason


def _firsts(result: SearchResult) -> SearchResult:
    """The hunt's per-list dedup: each URL's first occurrence in one query's result."""
    seen: set[str] = set()
    kept = []
    for source in result.sources:
        if source.url not in seen:
            seen.add(source.url)
            kept.append(source)
    return dataclasses.replace(result, sources=tuple(kept))


@pytest.mark.parametrize("finding", sorted(PINNED))
def test_the_reference_passes_the_new_pinned_scenarios(finding: str) -> None:
    number = PINNED[finding]
    assert _merge_at(scenarios.PINNED[number - 1 : number], 0) == ("passed", "")


def test_the_pinned_scenarios_hold_what_their_findings_need() -> None:
    repeat, long, same = (scenarios.PINNED[PINNED[f] - 1] for f in ("P-A2", "P-A3", "P-A4"))
    first = dict(repeat.answers)[repeat.distinct[0]]
    assert isinstance(first, dict) and [s["url"] for s in first["sources"]][:2] == [first["sources"][0]["url"]] * 2
    assert all(len(q) >= 100 for q in long.distinct) and long.distinct[0][:60] == long.distinct[1][:60]
    answers = [a["content"] for _, a in same.answers if isinstance(a, dict)]
    assert len(answers) == 2 and answers[0] == answers[1] and len(set(same.distinct)) == 2


def test_each_list_deduplicated_before_the_round_robin_fails_exactly_its_pinned_scenario(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: P-A2, a URL repeated inside one query's list frees its rank: the first query's next source moves
    # ahead of the second query's second (a merge seen only on the conformance route: the reference's DeepSeek
    # providers keep a URL's first occurrence in their own result, so search.merge.round_robin never sees a repeat)
    monkeypatch.setattr(_merge, "_firsts", _firsts, raising=False)  # before the patch copies the globals
    patch_reading(_merge, "merge_results", "deepest = max(", "results = [_firsts(r) for r in results]\n"
                  "    deepest = max(", monkeypatch, web_search)
    assert "sources [" in _fails_exactly_pinned("P-A2")


LABEL = 'f"### {visible(q)}'


def test_labels_cut_for_long_queries_fail_exactly_their_pinned_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: P-A3, '### <first 39 characters>…' for a query over 40: both long queries' answers under one label
    patch_reading(_merge, "merge_results", LABEL,
                  'f"### {visible(q) if len(q) <= 40 else visible(q)[:39] + chr(8230)}', monkeypatch, web_search)
    assert "heading" in _fails_exactly_pinned("P-A3")


def test_an_answer_equal_to_an_earlier_one_shown_once_fails_exactly_its_pinned_scenario(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: P-A4, the second query's answer dropped when it equals the first's: one '###' block for two answers
    patch_reading(_merge, "merge_results", "for q, r in zip(queries, results, strict=True) if r.content]",
                  "for i, (q, r) in enumerate(zip(queries, results, strict=True)) "
                  "if r.content and r.content not in [x.content for x in results[:i]]]", monkeypatch, web_search)
    assert "heading" in _fails_exactly_pinned("P-A4")
