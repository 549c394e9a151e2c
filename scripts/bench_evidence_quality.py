"""Benchmark: how well the evidence pipeline (seed 002) finds the labelled facts of its quality corpus.

The corpus (``dsweb_ref/emulator/quality.py``) is fictional Thai and English pages wrapped in
furniture that repeats the query's words and carries wrong values (navigation, cookie dialogs,
sidebars, hidden SEO blocks, footers), neighbouring-entity decoys (previous model or version, last
year's edition, similar names) and queries with no answer anywhere. It runs through the real path:
the emulator's search (``site:quality.test``) over the Messages API, the real ``http`` fetch provider
with its shipped strict address policy, pages served over loopback HTTP by the emulator (test-mode
resolution maps each public-looking answer to the emulator's port; ``intranet.quality.test``
resolves to a private address and must be refused and never cited).

Metric rules (fixed before measuring; strings compared after NFKC, case folding and removing all
whitespace and the format characters U+200B/U+200C/U+200D/U+FEFF/U+00AD):

* Each case is one single-query call with a fresh conversation context.
* A fact counts as found when one evidence line contains every string of the fact (a table fact
  names its row label and its value, so a value cut off from its row label is not found).
* ``recall``: facts found / facts labelled (over the cases that have an answer).
* ``precision``: evidence lines that contain some fact of their case / all evidence lines (lines of
  a no-answer case are all wrong).
* ``needs_retry_accuracy``: cases whose ``needs_retry`` equals "the case has no fact" / all cases.
* ``lines_per_query``: evidence lines / cases (a ``[needs_retry]`` answer has none).
* ``refused_cited``: evidence lines whose URL failed validation (must be 0).

    python scripts/bench_evidence_quality.py [--verbose]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from dsweb_ref.certification.sandbox import SandboxNetwork
from dsweb_ref.emulator import Emulator
from dsweb_ref.emulator.quality import CASES, PRIVATE_HOST, QUALITY_DOCUMENTS, QUALITY_SITE, QualityCase
from dsweb_ref.emulator.server import DEFAULT_API_KEY
from dsweb_ref.providers.http_fetch import HttpFetchConfig, HttpFetchProvider
from dsweb_ref.replay._bases import credential_environ, settings_for_bases
from dsweb_ref.runtime import build_runtime
from dsweb_ref.tools.evidence_search import EvidenceContext

PUBLIC = "93.184.215.14"
PRIVATE = "10.20.30.40"
_FORMAT = re.compile("[\u200b\u200c\u200d\ufeff\u00ad\\s]+")


def norm(text: str) -> str:
    return _FORMAT.sub("", unicodedata.normalize("NFKC", text).casefold())


@dataclass
class Scores:
    facts: int = 0
    found: int = 0
    lines: int = 0
    good_lines: int = 0
    cases: int = 0
    retry_right: int = 0
    refused_cited: int = 0

    def as_dict(self) -> dict[str, float]:
        return {
            "recall": self.found / self.facts if self.facts else 1.0,
            "precision": self.good_lines / self.lines if self.lines else 1.0,
            "needs_retry_accuracy": self.retry_right / self.cases if self.cases else 1.0,
            "lines_per_query": self.lines / self.cases if self.cases else 0.0,
            "refused_cited": float(self.refused_cited),
        }


def score_case(case: QualityCase, group: dict[str, Any], scores: Scores) -> list[str]:
    """Adds one case's outcome to ``scores``; returns what went wrong (for ``--verbose``)."""
    texts = [norm(line["text"]) for line in group["evidence"]]
    wrong: list[str] = []
    scores.cases += 1
    if group["needs_retry"] == (not case.facts):
        scores.retry_right += 1
    else:
        wrong.append(f"needs_retry={group['needs_retry']}")
    for fact in case.facts:
        scores.facts += 1
        if any(all(norm(part) in text for part in fact) for text in texts):
            scores.found += 1
        else:
            wrong.append(f"missed {fact}")
    for line, text in zip(group["evidence"], texts, strict=True):
        scores.lines += 1
        if any(all(norm(part) in text for part in fact) for fact in case.facts):
            scores.good_lines += 1
        else:
            wrong.append(f"noise: {line['text'][:120]} ({line['url']})")
        if urlsplit(line["url"]).hostname == PRIVATE_HOST:
            scores.refused_cited += 1
            wrong.append(f"REFUSED URL CITED: {line['url']}")
    return wrong


def _context(question: str) -> EvidenceContext:
    try:
        return EvidenceContext(question=question)  # type: ignore[call-arg]
    except TypeError:  # a pipeline without the question in its context (the baseline)
        return EvidenceContext()


async def run_cases(emulator: Emulator, cases: tuple[QualityCase, ...]) -> tuple[Scores, list[str]]:
    hosts = {urlsplit(d.url).hostname or "" for d in QUALITY_DOCUMENTS}
    resolve = {h: [[PRIVATE if h == PRIVATE_HOST else PUBLIC]] for h in hosts}
    network = SandboxNetwork(resolve, {PUBLIC: emulator.port})
    http = HttpFetchProvider(HttpFetchConfig(timeout_s=10), resolver=network.resolver(), dialer=network.dialer())
    settings = settings_for_bases(emulator.messages_base, emulator.tools_base, new_api=False)
    runtime = build_runtime(lambda: settings, environ=credential_environ(DEFAULT_API_KEY), http_fetch=http)
    tool = runtime.evidence_tool()
    scores = Scores()
    report: list[str] = []
    for case in cases:
        query = f"site:{QUALITY_SITE} {case.query}"
        value = await tool.run({"query": query}, context=_context(case.query))
        group = value["queries"][0]
        problems = score_case(case, group, scores)
        report.append(("ok   " if not problems else "MISS ") + case.query)
        report.extend(f"       {p}" for p in problems)
    await runtime.aclose()
    return scores, report


def measure(cases: tuple[QualityCase, ...] = CASES) -> tuple[dict[str, float], list[str]]:
    with Emulator() as emulator:
        scores, report = asyncio.run(run_cases(emulator, cases))
    return scores.as_dict(), report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--verbose", action="store_true", help="show every case and what it missed")
    args = parser.parse_args()
    figures, report = measure()
    if args.verbose:
        print("\n".join(report))
    answerable = sum(1 for c in CASES if c.facts)
    print(f"{len(CASES)} queries ({answerable} with an answer, {len(CASES) - answerable} without)")
    for name, value in figures.items():
        print(f"{name} {value:.2f}")


if __name__ == "__main__":
    main()
