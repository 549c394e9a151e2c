"""Issue 24 item 6, from an outside hunt: a merge that drops URL fragments before deduplicating was certified,
because no case held two URLs that differ only by their #fragment. Seed 000 deduplicates sources by URL, and
search.merge.dedup reads that as the exact string (its other near-duplicate rows: case, trailing slash)."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import merge
from dsweb_ref.tools import _merge, web_search

from ._readings import failing_rows, patch_reading

CHECK = "search.merge.dedup"
ROW = "URLs differing only by their #fragment"


def test_the_reference_passes_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ROW not in failing_rows(merge, "DEDUP", CHECK, monkeypatch)


def test_a_dedup_that_drops_fragments_fails_exactly_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: fragments dropped before dedup (the check's oracle keeps its own, exact merge)
    patch_reading(_merge, "merge_results", "if source.url in seen:",
                  'if source.url.split("#")[0] in {u.split("#")[0] for u in seen}:', monkeypatch, web_search)
    assert failing_rows(merge, "DEDUP", CHECK, monkeypatch) == {ROW}
