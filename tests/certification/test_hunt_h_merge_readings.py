"""An outside hunt (H) over seed 000's merge: wrong readings dsweb certify passed. A batch's merged sources re-sorted
by the Search API's rerank_score (the merge checks' scripted answers carried no scores, so the sort did nothing
there); a dedup taking http:// and https:// for one URL; a dedup ignoring a leading "www.". Each wrong reading is
made in the reference and must fail exactly the rows that name it; the reference passes them, and a merge folding
the letter case of scheme and host (open: RFC 3986 makes such URLs one) passes them too."""

from __future__ import annotations

import pytest

from dsweb_ref.certification import scenarios
from dsweb_ref.certification.checks import merge
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.tools import _merge, web_search

from ._readings import failing_rows, patch_reading
from .conftest import run

ROUND_ROBIN, DEDUP, DIFFERENTIAL = "search.merge.round_robin", "search.merge.dedup", "search.differential.merge"
SCORES = "scores rising down the lists and across queries"
SCHEME, WWW = "URLs differing only by scheme (http, https)", "URLs differing only by a leading www."
DEDUP_TEST = "if source.url in seen:"


def _reason(module: object, table: str, check: str, row: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Why ``row`` of ``module.table``, run alone, fails ``check`` (a merge check runs over both search routes,
    each route's failure under its name)."""
    monkeypatch.setattr(module, table, tuple(c for c in getattr(module, table) if c.name == row))
    (result,) = run(reference_target(), only=[check]).results
    return result.reason


def _differential_passes() -> bool:
    (result,) = run(reference_target(), only=[DIFFERENTIAL]).results
    return result.outcome is Outcome.PASSED


def test_the_reference_passes_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert SCORES in {case.name for case in merge.ROUND_ROBIN}
    assert failing_rows(merge, "ROUND_ROBIN", ROUND_ROBIN, monkeypatch) == set()
    assert {SCHEME, WWW} <= {case.name for case in merge.DEDUP}
    assert failing_rows(merge, "DEDUP", DEDUP, monkeypatch) == set()


# The hunt's patch, as written: the merged sources sorted by descending rerank_score.
BY_SCORE = """m = merge_results(queries, results, cap)
    return __import__("dataclasses").replace(m, sources=tuple(sorted(
        m.sources, key=lambda s: -float(s.metadata.get("rerank_score", 0) or 0))))"""


def test_a_batch_sorted_by_rerank_score_fails_exactly_the_scores_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the service's rerank_score taken for a rank, so the second query's sources displace the first's.
    # Only over the Search API: a Messages answer carries no score, and the stable sort leaves the merge as it is.
    # No other check fails it (the hunt's full certify run passed it): search.api.mapping's scored row is one
    # query, which web_search returns without the merge, and the other merge checks' answers carry no score.
    patch_reading(web_search.WebSearchTool, "run", "return merge_results(queries, results, cap)", BY_SCORE,
                  monkeypatch)
    assert failing_rows(merge, "ROUND_ROBIN", ROUND_ROBIN, monkeypatch) == {SCORES}
    reason = _reason(merge, "ROUND_ROBIN", ROUND_ROBIN, SCORES, monkeypatch)
    assert reason.startswith(f"[Search API] {SCORES}: ") and "[Messages]" not in reason, reason


def test_a_batch_sorted_by_authority_fails_the_scores_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: authority (another service assessment) taken for a rank, in ascending order this time
    patch_reading(web_search.WebSearchTool, "run", "return merge_results(queries, results, cap)",
                  BY_SCORE.replace('-float(s.metadata.get("rerank_score", 0) or 0)',
                                   'int(s.metadata.get("authority", 0) or 0)'), monkeypatch)
    assert failing_rows(merge, "ROUND_ROBIN", ROUND_ROBIN, monkeypatch) == {SCORES}


def test_a_dedup_without_the_scheme_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the dedup key the URL after "://", so https://x/p is dropped as a duplicate of http://x/p.
    # search.differential.merge fails it too: its URL pool holds an http/https pair.
    patch_reading(_merge, "merge_results", DEDUP_TEST,
                  'if source.url.split("://", 1)[-1] in {u.split("://", 1)[-1] for u in seen}:', monkeypatch,
                  web_search)
    assert failing_rows(merge, "DEDUP", DEDUP, monkeypatch) == {SCHEME}
    assert not _differential_passes()


def test_a_dedup_ignoring_www_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a leading "www." dropped from the key, so https://x/p is dropped after https://www.x/p.
    # search.differential.merge fails it too: its URL pool holds a www./bare pair.
    bare = 'u.replace("://www.", "://", 1)'
    patch_reading(_merge, "merge_results", DEDUP_TEST,
                  f"if {bare.replace('u.', 'source.url.')} in {{{bare} for u in seen}}:", monkeypatch, web_search)
    assert failing_rows(merge, "DEDUP", DEDUP, monkeypatch) == {WWW}
    assert not _differential_passes()


def test_a_merge_folding_the_case_of_scheme_and_host_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # Open by the seed: a scheme and host compared without letter case (RFC 3986 6.2.2.1: one URL).
    monkeypatch.setattr(_merge, "url_key", scenarios.url_key, raising=False)  # before the patch copies the globals
    patch_reading(_merge, "merge_results", DEDUP_TEST, "if url_key(source.url) in {url_key(u) for u in seen}:",
                  monkeypatch, web_search)
    assert failing_rows(merge, "DEDUP", DEDUP, monkeypatch) == set()
