"""The oracles' merge is seed 000's, restated apart from the reference (certification/seed_merge.py). An outside
hunt edited the reference merge in place and saw three wrong merges certified: the expected values were computed
by the very function under test. (The mutation harness pinned the oracle to a pristine copy of the module; a hunt
or a reading made in place had no such pin.)"""

from __future__ import annotations

import inspect
import sys
import textwrap
from typing import Any

import pytest

from dsweb_ref._types import SearchResult, Source
from dsweb_ref.certification import scenarios
from dsweb_ref.certification.seed_merge import merge_by_seed
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.tools import _merge

from .conftest import run

MERGE_CHECKS = ["search.merge.round_robin", "search.merge.dedup", "search.merge.truncation",
                "search.differential.merge"]  # fmt: skip


@pytest.mark.parametrize("seed", range(6))
def test_the_restated_merge_agrees_with_the_reference_on_generated_scenarios(seed: int) -> None:
    for s in scenarios.generate(seed, 40, failing=False):
        results = [scenarios._seam(a) for _, a in s.answers]
        assert merge_by_seed(s.distinct, results, s.cap) == _merge.merge_results(s.distinct, results, s.cap), s


def test_a_url_keyed_merge_keeps_the_first_spelling() -> None:
    first, second = Source(url="HTTPS://A.example.test/p"), Source(url="https://a.example.test/p")
    merged = merge_by_seed(["a", "b"], [SearchResult((first,)), SearchResult((second,))], 8, key=scenarios.url_key)
    assert merged.sources == (first,) and not merged.truncated


def everywhere(right: str, wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``merge_results`` with ``right`` replaced by ``wrong`` in every module that bound it, as an edit in place is."""
    original = _merge.merge_results
    source = textwrap.dedent(inspect.getsource(original))
    assert source.count(right) == 1, right
    namespace: dict[str, Any] = dict(vars(_merge))
    exec(source.replace(right, wrong), namespace)
    bound = [m for m in list(sys.modules.values()) if getattr(m, "merge_results", None) is original]
    assert _merge in bound
    for module in bound:
        monkeypatch.setattr(module, "merge_results", namespace["merge_results"])


CAP = "            if len(merged) >= max_results:\n                dropped = True\n                break\n"
SEEN = "            if source.url in seen:\n                continue\n"
READINGS = {
    # catches: the cap tested before dedup, so a duplicate past the cap counts as dropped
    "cap-before-dedup": (SEEN + CAP, CAP + SEEN),
    # catches: truncated from the merge's own cut only
    "per-query-truncated-ignored": ("dropped or any(r.truncated for r in results)", "dropped"),
    # catches: truncated counted over every source, duplicates included
    "truncated-before-dedup": ("truncated=dropped or",
                               "truncated=sum(len(r.sources) for r in results) > max_results or"),
}


@pytest.mark.parametrize("reading", sorted(READINGS))
def test_a_wrong_merge_bound_everywhere_fails_the_merge_checks(reading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    everywhere(*READINGS[reading], monkeypatch)
    report = run(reference_target(), only=MERGE_CHECKS)
    failed = {r.check.id for r in report.results if r.outcome.value == "failed"}
    assert failed, {r.check.id: r.outcome.value for r in report.results}
