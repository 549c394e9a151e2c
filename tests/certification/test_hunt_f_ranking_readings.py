"""Issue 24, outside hunt f over seed 002's evidence pipeline: rankings that are no relevance ranking (the
engine's order reversed; Thai ranked by whole runs of letters, so the engine's order passes through) and
a domain share keyed by scheme too, all certified before these rows. Each wrong reading is made in the
reference and must fail exactly the rows that name it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import pytest

from dsweb_ref.certification.checks import evidence_diversity, evidence_relevance
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.tools import _evidence_passages, _evidence_rank, _evidence_text, evidence_search
from dsweb_ref.tools._evidence_rank import Candidate

from ._readings import failing_rows
from .conftest import run

RANKING = "evidence.own_ranking"
DIVERSITY = "evidence.diversity"


def test_the_reference_passes_the_checks_with_the_new_rows() -> None:
    assert {"engine-first", "thai-words"} <= {c.name for c in evidence_relevance.RANKING}
    assert "http-and-https" in {c.name for c in evidence_diversity.DIVERSITY}
    report = run(reference_target(), only=[RANKING, DIVERSITY])
    assert {r.check.id: r.outcome.value for r in report.results} == dict.fromkeys([RANKING, DIVERSITY], "passed"), [
        r.reason for r in report.results
    ]


def test_the_engine_order_reversed_fails_the_engine_first_and_behind_its_site_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: rank-reverse-engine ("do not trust the engine" as its order reversed, no relevance score)
    assert evidence_search.rank is _evidence_rank.rank

    def reversed_engine(query: str, candidates: Sequence[Candidate]) -> list[Candidate]:
        return sorted(candidates, key=lambda c: -c.rank)

    monkeypatch.setattr(evidence_search, "rank", reversed_engine)
    # (the relevant result behind two pages of its own site sits in the middle: reversed, it is read last)
    rows = failing_rows(evidence_relevance, "RANKING", RANKING, monkeypatch)
    assert rows == {"engine-first", "relevant-behind-its-site"}


def test_the_engine_order_kept_fails_every_ranking_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the engine's order passed through (the engine-first row's relevant result in the middle is
    # missed by it too)
    monkeypatch.setattr(evidence_search, "rank", lambda query, candidates: list(candidates))
    assert failing_rows(evidence_relevance, "RANKING", RANKING, monkeypatch) == {
        "engine-last", "engine-first", "near-misses", "relevant-behind-its-site", "other-query-words", "thai-words",
        "one-word-and-operator-queries",
    }  # fmt: skip


def test_a_gate_on_shared_words_over_the_engine_order_fails_the_near_miss_and_other_query_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: results sharing half the query's words first, in the engine's order, with no score (an outside hunt)
    def gated(query: str, candidates: Any) -> list[Any]:
        wanted = _evidence_passages.content_tokens(_evidence_text.tokenize(query))
        need = max(1, (len(wanted) + 1) // 2)
        return sorted(candidates, key=lambda c: len(wanted & set(_evidence_text.tokenize(c.text))) < need)

    monkeypatch.setattr(evidence_search, "rank", gated)
    # (the other query's decoys share two of this query's words: they pass the gate, listed first)
    assert failing_rows(evidence_relevance, "RANKING", RANKING, monkeypatch) == {"near-misses", "other-query-words"}


def test_the_share_applied_before_the_ranking_fails_exactly_the_behind_its_site_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: n01 of the hunt of the third session of 2026-12-05 (seed 002 ranks, then picks diverse sources)
    right = evidence_search.rank

    def share_first(query: str, candidates: Sequence[Candidate]) -> list[Candidate]:
        kept, later, count = [], [], dict[str, int]()
        for c in candidates:
            site = _evidence_rank.registrable_domain(c.host)
            count[site] = count.get(site, 0) + 1
            (kept if count[site] <= 2 else later).append(c)
        return right(query, kept) + right(query, later)

    monkeypatch.setattr(evidence_search, "rank", share_first)
    assert failing_rows(evidence_relevance, "RANKING", RANKING, monkeypatch) == {"relevant-behind-its-site"}


def test_ranking_against_the_whole_batch_fails_exactly_the_other_query_words_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: n03 of the same hunt (a result is relevant to its own query, not to the batch)
    right_rank, right_parse = evidence_search.rank, evidence_search.parse_evidence_queries
    batch: list[str] = []

    def parse(arguments: object, settings: Any) -> list[str]:
        batch[:] = right_parse(arguments, settings)
        return list(batch)

    def batch_words(query: str, candidates: Sequence[Candidate]) -> list[Candidate]:
        return right_rank(" ".join(_evidence_text.topic_of(q) for q in batch), candidates)

    monkeypatch.setattr(evidence_search, "parse_evidence_queries", parse)
    monkeypatch.setattr(evidence_search, "rank", batch_words)
    assert failing_rows(evidence_relevance, "RANKING", RANKING, monkeypatch) == {"other-query-words"}


def test_thai_ranked_by_whole_runs_fails_exactly_the_thai_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: rank-thai-whole-runs (result ranking not cutting Thai into words; passages keep the segmenter)
    right = _evidence_text.tokenize
    assert _evidence_rank.tokenize is right

    def whole_thai_runs(text: str) -> list[str]:
        tokens: list[str] = []
        for match in _evidence_text._RUNS.finditer(_evidence_text.fold(text)):
            tokens.extend([match.group()] if match.lastgroup == "thai" else right(match.group()))
        return tokens

    monkeypatch.setattr(_evidence_rank, "tokenize", whole_thai_runs)
    assert failing_rows(evidence_relevance, "RANKING", RANKING, monkeypatch) == {"thai-words"}


def test_the_share_keyed_by_scheme_and_domain_fails_exactly_the_http_and_https_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: diversity-schemeful-site (http://x.com and https://x.com counted as two sources)
    right_select, right_domain = _evidence_rank.select_pages, _evidence_rank.registrable_domain
    assert evidence_search.select_pages is right_select

    def schemeful(host: str) -> str:
        scheme, _, bare = host.rpartition("://")
        return f"{scheme}://{right_domain(bare)}" if scheme else right_domain(bare)

    def select_by_schemeful_site(
        ranked: Sequence[Sequence[Candidate]], *, max_pages: int, max_per_domain: int
    ) -> list[Candidate]:
        moved = [[replace(c, host=f"{urlsplit(c.url).scheme}://{c.host}") for c in q] for q in ranked]
        back = {c.url: c for q in ranked for c in q}
        return [back[c.url] for c in right_select(moved, max_pages=max_pages, max_per_domain=max_per_domain)]

    monkeypatch.setattr(_evidence_rank, "registrable_domain", schemeful)
    monkeypatch.setattr(evidence_search, "select_pages", select_by_schemeful_site)
    assert failing_rows(evidence_diversity, "DIVERSITY", DIVERSITY, monkeypatch) == {"http-and-https"}
