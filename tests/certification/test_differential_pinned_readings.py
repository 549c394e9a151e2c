"""search.differential.merge's pinned scenarios: families the generator shows only now and then, or never, run
first whatever the seed. A review of the halved scenario counts (issue 18) found a one-query result that lists a URL
twice in only two of the default seed's 200 scenarios (none on 9 of seeds 0-19), and no scenario of any seed pairing
two URLs that differ by their fragment alone; the pinned scenarios hold both every run. An outside hunt (O-A3) found
'### <query>' labels that trim the query certified: no query carried surrounding whitespace, and the judges strip
labels; a fourth pinned scenario searches "pinned pad" and " pinned pad"."""

from __future__ import annotations

import pytest

from dsweb_ref import tools
from dsweb_ref.certification import scenarios
from dsweb_ref.certification.checks import differential
from dsweb_ref.certification.scenarios import compare, expect, trimmed
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.tools import _merge, web_search
from dsweb_ref.tools.web_search import WebSearchTool

from ._readings import patch_reading
from .conftest import run

CHECK = "search.differential.merge"
SINGLE = "return await self.web.search(SearchRequest(queries[0], cap), ctx)"
# The merge's first-wins URL dedup applied to the one query's result; nothing else changes.
DEDUPED = ("return (lambda r: __import__('dataclasses').replace(r, sources=tuple(s for i, s in enumerate(r.sources) "
           "if s.url not in {t.url for t in r.sources[:i]})))(await self.web.search(SearchRequest(queries[0], cap), "
           "ctx))")
SEED = 3  # its 200 generated scenarios hold no one-query result with a repeated URL (the review's finding)


def _merge_at(seed: int) -> tuple[str, str]:
    with differential.seeded(seed):
        (result,) = run(reference_target(), only=[CHECK]).results
    if result.outcome.value == "failed" and result.reason.startswith("pinned"):
        # a pinned scenario has no generated index (scenario(seed, -2) would be another scenario)
        pinned = int(result.reason.split(":")[0].rsplit(" ", 1)[1])
        assert "scenario_index" not in result.details and result.details["pinned"] == pinned, result.details
    return result.outcome.value, result.reason


def test_a_single_query_deduplicated_is_caught_by_a_pinned_scenario_whatever_the_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the merge's URL dedup applied to a one-item array (seed 000: the provider's result comes back as is)
    patch_reading(WebSearchTool, "run", SINGLE, DEDUPED, monkeypatch)
    outcome, reason = _merge_at(SEED)
    assert outcome == "failed" and reason.startswith("pinned scenario 1: "), reason
    # without the pinned scenarios, that seed's generated ones let the reading through
    monkeypatch.setattr(differential, "PINNED", ())
    assert _merge_at(SEED) == ("passed", "")


def test_the_pinned_scenarios_repeat_a_url_in_one_query_s_result() -> None:
    for pinned in scenarios.PINNED[:2]:
        (answer,) = (a for _, a in pinned.answers)
        assert isinstance(answer, dict)
        urls = [s["url"] for s in answer["sources"]]
        assert len(pinned.distinct) == 1 and len(set(urls)) < len(urls)


def test_a_dedup_that_drops_the_fragment_is_caught_by_a_pinned_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: "…/a" and "…/a#part" deduplicated as one URL (seed 000 dedups by exact URL); no seed's generated
    # scenarios pair two such URLs (a review found it never caught, even at 400 scenarios)
    patch_reading(_merge, "merge_results", "if source.url in seen:",
                  "if source.url.split('#')[0] in {u.split('#')[0] for u in seen}:", monkeypatch, web_search, tools)
    outcome, reason = _merge_at(differential.DEFAULT_SEED)
    assert outcome == "failed" and reason.startswith("pinned scenario 3: "), reason


PADDED = scenarios.PINNED[3]
LABEL = 'answers = [f"### {visible(q)}\\n'


def test_labels_that_trim_the_query_are_caught_by_the_padded_pinned_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: '### {query.strip()}' (hunt O-A3): " pinned pad"'s answer under '### pinned pad', beside "pinned pad"'s
    assert _merge_at(differential.DEFAULT_SEED) == ("passed", "")  # the reference labels each query as given
    patch_reading(_merge, "merge_results", LABEL, 'answers = [f"### {visible(q).strip()}\\n', monkeypatch,
                  web_search, tools)
    outcome, reason = _merge_at(differential.DEFAULT_SEED)
    assert outcome == "failed" and reason.startswith(
        "pinned scenario 4: the text shows the answer 'answered for the padded query' under ['### pinned pad'], "
        "not under a '### ' line showing its own query ' pinned pad' as given"), reason
    # without the pinned scenarios the reading is certified (the hunt's finding)
    monkeypatch.setattr(differential, "PINNED", ())
    assert _merge_at(differential.DEFAULT_SEED) == ("passed", "")


def test_a_target_that_trims_queries_passes_the_padded_scenario_as_the_one_search_it_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # open: seed 000 removes exact duplicates and leaves trimming open; trimmed, the two queries are one search, whose
    # result comes back as a one-query result (the script holds that search 2 s for the other, which never comes)
    patch_reading(web_search, "parse_queries", "return list(dict.fromkeys(queries))",
                  "return list(dict.fromkeys(q.strip() for q in queries))", monkeypatch)
    monkeypatch.setattr(differential, "PINNED", (PADDED,))
    monkeypatch.setattr(differential, "SUCCEEDING", 0)
    assert _merge_at(differential.DEFAULT_SEED) == ("passed", "")


def _judged(text: str) -> list[str]:
    want = expect(PADDED)
    assert want.value is not None
    return compare(PADDED, want, True, want.value, text, None)


SOURCES = "Sources:\n- [the plain one](https://c.example.test/数据)\n- [the padded one](https://b.example.test/q?x=1)"
PLAIN, PADDED_ANSWER = "answered for the plain query", "answered for the padded query"


@pytest.mark.parametrize("text", [
    f"### pinned pad\n\n{PLAIN}\n\n###  pinned pad\n\n{PADDED_ANSWER}\n\n{SOURCES}",
    f"###  pinned pad\n\n{PADDED_ANSWER}\n\n### pinned pad\n\n{PLAIN}\n\n{SOURCES}",  # the order is open
    f"### pinned pad \t\n{PLAIN}\n###  pinned pad  \n{PADDED_ANSWER}\n\n{SOURCES}",  # trailing whitespace too
], ids=["as-given", "other-order", "trailing-whitespace"])
def test_the_padded_scenario_accepts_each_answer_under_its_own_query(text: str) -> None:
    assert _judged(text) == []


@pytest.mark.parametrize("text", [
    f"### pinned pad\n\n{PLAIN}\n\n### pinned pad\n\n{PADDED_ANSWER}\n\n{SOURCES}",  # one label for both
    f"### pinned pad\n\n{PLAIN}\n\n### pinned pad (2)\n\n{PADDED_ANSWER}\n\n{SOURCES}",  # not its query
    f"###  pinned pad\n\n{PLAIN}\n\n### pinned pad\n\n{PADDED_ANSWER}\n\n{SOURCES}",  # swapped
], ids=["trimmed", "numbered", "swapped"])
def test_the_padded_scenario_fails_answers_not_under_their_own_query(text: str) -> None:
    problems = _judged(text)
    assert problems and all("pinned pad" in p for p in problems), problems
    assert any(p.startswith("the text shows the answer") for p in problems), problems


def test_trimming_merges_only_the_padded_scenario_s_queries() -> None:
    one = trimmed(PADDED)
    assert one is not None and one.distinct == ["pinned pad"] and expect(one).single
    assert [trimmed(s) for s in scenarios.PINNED[:3]] == [None, None, None]
    assert not any(trimmed(s) for s in scenarios.generate(differential.DEFAULT_SEED, differential.SUCCEEDING, False))
