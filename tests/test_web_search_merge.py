"""The multi-query merge (seed 000 / SRCH-20..25): round-robin by rank, URL dedup, cap, truncation."""

from __future__ import annotations

from fakes import result
from hypothesis import given
from hypothesis import strategies as st

from dsweb_ref import SearchResult, Source
from dsweb_ref.schemas import validate
from dsweb_ref.tools import merge_results


def urls(r: SearchResult) -> list[str]:
    return [s.url for s in r.sources]


def test_round_robin_takes_rank_r_of_every_query_before_rank_r_plus_1() -> None:
    out = merge_results(["a", "b"], [result("a1", "a2", "a3"), result("b1", "b2", "b3")], 8)
    assert urls(out) == ["a1", "b1", "a2", "b2", "a3", "b3"]


def test_uneven_lists_skip_exhausted_queries() -> None:
    out = merge_results(["a", "b", "c"], [result("a1", "a2", "a3"), result("b1"), result("c1", "c2")], 8)
    assert urls(out) == ["a1", "b1", "c1", "a2", "c2", "a3"]


def test_sources_are_deduplicated_by_exact_url_first_occurrence_wins() -> None:
    first = SearchResult(sources=(Source("https://s.test", title="from a"), Source("https://s.test", title="dup")))
    second = SearchResult(sources=(Source("https://s.test", title="from b"), Source("https://S.test")))
    out = merge_results(["a", "b"], [first, second], 8)
    assert [(s.url, s.title) for s in out.sources] == [("https://s.test", "from a"), ("https://S.test", None)]


def test_cap_drops_unique_sources_and_sets_truncated() -> None:
    out = merge_results(["a", "b"], [result("a", "b"), result("c", "d")], 2)
    assert urls(out) == ["a", "c"]
    assert out.truncated is True


def test_filling_the_cap_exactly_is_not_truncation() -> None:
    out = merge_results(["a", "b"], [result("a", "dup"), result("a", "dup")], 2)
    assert urls(out) == ["a", "dup"]
    assert out.truncated is False


def test_a_truncated_sibling_truncates_the_merge() -> None:
    out = merge_results(["a", "b"], [result("x", "x"), result(content="", truncated=True)], 8)
    assert urls(out) == ["x"]
    assert out.truncated is True
    assert out.content is None  # empty answers are dropped; no answer means no content


def test_answers_are_labelled_in_query_order_and_raw() -> None:
    out = merge_results([" one ", "two"], [result(content="A"), result(content="B")], 8)
    assert out.content == "###  one \n\nA\n\n### two\n\nB"


# -- property test against a deliberately naive oracle -------------------------------------------


def oracle(results: list[list[str]], cap: int) -> tuple[list[str], bool]:
    """Walk a rank-major grid of (rank, query) positions, one by one."""
    positions = sorted(
        ((rank, qi) for qi, urls_ in enumerate(results) for rank in range(len(urls_))),
    )
    out: list[str] = []
    for rank, qi in positions:
        u = results[qi][rank]
        if u in out:
            continue
        if len(out) == cap:
            return out, True
        out.append(u)
    return out, False


url_lists = st.lists(
    st.lists(st.sampled_from([f"https://u{i}.test" for i in range(12)]), max_size=7), min_size=1, max_size=4
)


@given(url_lists, st.integers(min_value=1, max_value=10), st.lists(st.booleans(), min_size=4, max_size=4))
def test_merge_matches_the_oracle(lists: list[list[str]], cap: int, flags: list[bool]) -> None:
    results = [result(*u, truncated=flags[i]) for i, u in enumerate(lists)]
    queries = [f"q{i}" for i in range(len(lists))]
    out = merge_results(queries, results, cap)
    expected_urls, dropped = oracle(lists, cap)
    assert urls(out) == expected_urls
    assert out.truncated == (dropped or any(flags[: len(lists)]))
    assert len(out.sources) <= cap
    assert validate("web_search.output", out.to_json()) == []
