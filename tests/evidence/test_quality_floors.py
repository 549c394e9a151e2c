"""The evidence quality benchmark (scripts/bench_evidence_quality.py) holds its measured figures: the
labelled corpus of emulator/quality.py through the real path (emulator search, loopback HTTP pages,
the strict ``http`` fetcher). Floors are what the pipeline reaches today; a change that loses a fact,
lets a decoy or furniture line in, or misses a [needs_retry] fails here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from dsweb_ref.emulator.quality import CASES

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_evidence_quality.py"


def test_the_quality_benchmark_holds_its_floors() -> None:
    spec = importlib.util.spec_from_file_location("bench_evidence_quality", SCRIPT)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    figures, report = bench.measure()
    shown = "\n".join(report)
    assert figures["recall"] >= 1.0, shown
    assert figures["precision"] >= 1.0, shown
    assert figures["needs_retry_accuracy"] == 1.0, shown
    assert figures["lines_per_query"] <= 1.0, shown
    assert figures["refused_cited"] == 0, shown


def test_the_corpus_is_hard_in_the_ways_the_issue_names() -> None:
    assert len(CASES) >= 30
    assert sum(1 for c in CASES if not c.facts) >= 8  # queries with no answer anywhere
    assert sum(1 for c in CASES if any("\u0e00" <= ch <= "\u0e7f" for ch in c.query)) >= 10  # Thai
    assert sum(1 for c in CASES for fact in c.facts if len(fact) > 1) >= 8  # facts tied to a row or term
