"""An outside hunt (H) over seeds 000 and 001: wrong readings of Messages search that `dsweb certify` certified.
searchMaxResults taken for a bound on native searches (max_uses lowered to it), the Direct Search service's
1-128 character query constraint applied to Messages, and the Search API's count setting cutting Messages
sources silently. Each wrong reading is made in the reference and fails exactly the row that names it; the
reference, and the right-by-seed variants the rows leave open, pass."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import mapping, search
from dsweb_ref.providers import deepseek_official

from ._readings import failing_rows, fails_exactly, patch_reading

MAPPING, WIRE = "search.messages.mapping", "search.messages.wire"
CAP_BELOW_MAX_USES = "searchMaxResults below max_uses"
LONG_QUERY = "a query over 128 characters"
COUNT_BELOW_SOURCES = "count below the answer's sources"

SEARCH = deepseek_official.DeepSeekMessagesSearch
STRING_CHECK = 'raise WebError(WebErrorCode.INVALID_ARGUMENTS, "query must be a string")'
PROMPT = "PROMPT_PREFIX + request.query"
RETURN = "return SearchResult(sources=map_sources(data, secrets=(key,)))"


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {CAP_BELOW_MAX_USES, LONG_QUERY} <= {c.name for c in search.MESSAGES_WIRE}
    assert COUNT_BELOW_SOURCES in {c.name for c in mapping.MESSAGES_CASES}
    assert failing_rows(search, "MESSAGES_WIRE", WIRE, monkeypatch) == set()
    assert failing_rows(mapping, "MESSAGES_CASES", MAPPING, monkeypatch) == set()


def test_max_uses_lowered_to_the_result_bound_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: max_uses sent as min(maxUses, searchMaxResults) (seed 000: "searchMaxResults bounds only the combined
    # sources returned to the caller")
    patch_reading(SEARCH, "search", '"max_uses": conf.max_uses}',
                  '"max_uses": min(conf.max_uses, request.max_results or conf.max_uses)}', monkeypatch)
    fails_exactly(search, "MESSAGES_WIRE", WIRE, CAP_BELOW_MAX_USES, monkeypatch)


def test_a_messages_query_over_128_characters_refused_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the Direct Search service's 1-128 character constraint enforced by Messages search (nothing sent)
    patch_reading(SEARCH, "search", STRING_CHECK,
                  STRING_CHECK + "\n    if len(request.query) > 128:\n"
                  '        raise WebError(WebErrorCode.INVALID_ARGUMENTS, "query must be at most 128 characters")',
                  monkeypatch)
    fails_exactly(search, "MESSAGES_WIRE", WIRE, LONG_QUERY, monkeypatch)


@pytest.mark.parametrize("bound", [129, 200])
def test_a_messages_query_bound_of_the_target_s_own_above_128_passes_the_row(
    bound: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # seed-open: no seed bounds a Messages query; a target's own bound above the service's 128 passes the row, whose
    # query is one character past 128 (a review found a 202-character query failing a bound of 200)
    assert len(search.LONG_MESSAGES_QUERY) == 129
    patch_reading(SEARCH, "search", STRING_CHECK,
                  STRING_CHECK + f"\n    if len(request.query) > {bound}:\n"
                  '        raise WebError(WebErrorCode.INVALID_ARGUMENTS, "query too long")', monkeypatch)
    assert failing_rows(search, "MESSAGES_WIRE", WIRE, monkeypatch) == set()


def test_a_messages_query_cut_to_128_characters_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the same constraint met by cutting the query before it is sent
    patch_reading(SEARCH, "search", PROMPT, "PROMPT_PREFIX + request.query[:128]", monkeypatch)
    fails_exactly(search, "MESSAGES_WIRE", WIRE, LONG_QUERY, monkeypatch)


def test_messages_sources_cut_silently_to_count_fail_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: map_sources(...)[:count], the Search API count applied to Messages with truncated left false
    patch_reading(SEARCH, "search", RETURN,
                  "return SearchResult(sources=map_sources(data, secrets=(key,))[: snapshot.deepseek_api.count])",
                  monkeypatch)
    fails_exactly(mapping, "MESSAGES_CASES", MAPPING, COUNT_BELOW_SOURCES, monkeypatch)


def test_a_cut_signalled_as_truncated_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    # seed-open: the row decides only that no source is lost silently; a Messages provider that leaves sources
    # out and says so (truncated true) is not judged by it
    patch_reading(SEARCH, "search", RETURN,
                  "found = map_sources(data, secrets=(key,))\n    limit = snapshot.deepseek_api.count\n"
                  "    return SearchResult(sources=found[:limit], truncated=len(found) > limit)", monkeypatch)
    assert failing_rows(mapping, "MESSAGES_CASES", MAPPING, monkeypatch) == set()


@pytest.mark.parametrize(
    "wording",
    ['\'Search the web for "\' + request.query + \'"\'',
     'request.query + "\\n\\nSearch the web for the query above and cite your sources."'],
    ids=["quoted", "first-line"],
)
def test_another_prompt_wording_around_a_long_query_is_certified(wording: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # seed-open: the wording around the query (seed 001 fixes only one user message carrying it); the long query
    # is found whole in quotes or on the prompt's first line
    patch_reading(SEARCH, "search", PROMPT, wording, monkeypatch)
    assert failing_rows(search, "MESSAGES_WIRE", WIRE, monkeypatch) == set()
