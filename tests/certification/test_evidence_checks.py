"""The seed 002 evidence checks: the reference and the example adapter pass; each evidence break
mode of the example adapter fails exactly its check."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from publicsuffixlist import PublicSuffixList

from dsweb_ref import WebError
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import (
    REGISTRY,
    evidence,
    evidence_diversity,
    evidence_html,
    evidence_passages,
    evidence_relevance,
)
from dsweb_ref.certification.targets import InProcessTarget, TargetConfig, ToolPair, reference_target
from dsweb_ref.netguard import DEFAULT_POLICY, check_url
from dsweb_ref.tools import (
    ToolResult,
    _evidence_guard,
    _evidence_passages,
    _evidence_rank,
    _evidence_text,
    _evidence_units,
    evidence_search,
)
from dsweb_ref.tools._evidence_passages import Choice, Pick

from ._profile_breaks import assert_break_fails_exactly, certify_only
from ._readings import failing_rows, patch_reading
from .conftest import run

EVIDENCE_CHECKS = {
    "evidence.batch",
    "evidence.no_model_call",
    "evidence.lines_cite_results",
    "evidence.local_refused",
    "evidence.retry_refused",
    "evidence.diversity",
    "evidence.unsafe_dropped",
    "evidence.passages",
    "evidence.designators",
    "evidence.table_rows",
    "evidence.own_ranking",
    "evidence.html_page",
    "evidence.ori_question",
    "evidence.api_wire",
    "evidence.cancel.quiescence",
}
BREAKS = {
    "evidence-model-call": ("evidence.no_model_call", "sent a Messages request"),
    "evidence-no-urls": ("evidence.lines_cite_results", "carries no source URL"),
    "evidence-local-allowed": ("evidence.local_refused", "a search was sent"),
    "evidence-retry-allowed": ("evidence.retry_refused", "searched again"),
    # Found by red-teaming the evidence checks: each was certified before the row named in its fragment.
    "evidence-retry-model": ("evidence.no_model_call", "(needs-retry) sent a model request (responses)"),
    # Seed 001's ori_question for the pipeline's own Search API requests (found by the mutation run).
    "evidence-prompt-dropped": ("evidence.ori_question", "a batch of two queries: ori_question differs"),
    "evidence-local-few-forms": ("evidence.local_refused", "posix-path: a search was sent"),
    "evidence-local-home-only": ("evidence.local_refused", "root-home: a search was sent"),
    "evidence-url-canonical": ("evidence.lines_cite_results", "path-case: value cites"),
    "evidence-byte-cut": ("evidence.passages", "thai-long-sentence: the evidence shows U+FFFD"),
    "evidence-retry-last-only": ("evidence.retry_refused", "earlier: the repeated query was searched again"),
    "evidence-retry-single-only": ("evidence.retry_refused", "in-a-batch: the repeated query was searched again"),
    "evidence-unsafe-snippets": ("evidence.unsafe_dropped", "loopback: http://127.0.0.1/harbour-fees is cited"),
    "evidence-retry-only-when-empty": ("evidence.unsafe_dropped", "only-unsafe: a query whose every result was unsafe"),
    "evidence-cite-candidates": ("evidence.lines_cite_results", "which gave no evidence"),
    "evidence-snippet-only": ("evidence.passages", "deep-match: the page's query-matching passage is not in"),
    "evidence-page-lead": ("evidence.passages", "deep-match: the page's query-matching passage is not in"),
    # Issue 21: the retry rules of seed 002, decoys, table rows and the pipeline's own ranking.
    "evidence-retry-zero-width": ("evidence.retry_refused", "zero-width: the dead end was searched again as"),
    "evidence-retry-less-specific": ("evidence.retry_refused", "less-specific: the dead end was searched again as"),
    "evidence-retry-invented": ("evidence.retry_refused", "invented-fact: the dead end was searched again as"),
    "evidence-retry-no-question": ("evidence.retry_refused", "question-fact: the retry 'zzqx unknowable 2026'"),
    "evidence-designators-ignored": ("evidence.designators", "absent-model: https://veltra-phones.example.com"),
    "evidence-table-cells": ("evidence.table_rows", "row-label: no evidence line holds 'Adult'"),
    "evidence-engine-order": ("evidence.own_ranking", "engine-last: the relevant result for"),
    # Mutation survivors of tools/_evidence_guard.py made rows (issue 24 item 5): each was certified before.
    "evidence-retry-reordered": ("evidence.retry_refused", "reordered: the dead end was searched again as"),
    "evidence-retry-space-collapsed": ("evidence.retry_refused", "joined: the repeated query was searched again"),
    "evidence-retry-forgets-evidence": ("evidence.retry_refused", "evidence-fact: the retry 'zzqx unknowable 2031'"),
    "evidence-local-any-name": ("evidence.local_refused", "unrelated: 'harbour ferry timetable' names nothing"),
    # Seed 002's users write Thai: pages and queries without spaces between words.
    "evidence-thai-unsegmented": ("evidence.passages", "thai-page: the page's query-matching passage is not in"),
    "evidence-cjk-whole-runs": ("evidence.passages", "chinese-page: the page's query-matching passage is not in"),
    # Mutation survivors of tools/_evidence_text.py and _evidence_passages.py made rows (issue 24 item 5).
    "evidence-stop-words-counted": ("evidence.passages", "stop-words: the page's unrelated opening paragraph"),
    "evidence-operators-as-words": ("evidence.passages", "operators: the page's query-matching passage is not in"),
    # Mutation survivors of tools/_evidence_units.py made rows (issue 24 item 5).
    "evidence-list-numbers-stripped": ("evidence.passages", "list-item-number: the page's query-matching passage"),
    "evidence-table-short-rows": ("evidence.table_rows", "page-row: no evidence line holds 'Bicycle'"),
    # HTML pages the pipeline fetches itself (issue 24 item 5): its tags stripped by a pattern, furniture kept.
    "evidence-html-as-text": ("evidence.html_page", "script: no evidence line citing"),
    # An outside hunt (issue 24): seed 002's searches of a batch run concurrently.
    "evidence-sequential": ("evidence.batch", "two-queries"),
    # An outside hunt of seed 002 (session of 2026-12-05): each certified before its row.
    "evidence-404-only-failure": ("evidence.html_page", "error-403: the text of the page answered HTTP 403"),
    "evidence-snippet-alongside": ("evidence.passages", "snippet-beside-page: the search snippet"),
    "evidence-retry-window": ("evidence.retry_refused", "after-six-others: the repeated query was searched again"),
    "evidence-designator-prefix": ("evidence.designators", "model-number-prefix: https://veltra-phones.example.com"),
    "evidence-ditto-url": ("evidence.lines_cite_results", "two-lines-one-page: 2 evidence lines"),
    "evidence-strip-tracking": ("evidence.lines_cite_results", "tracking-parameters: value cites"),
    "evidence-table-no-columns": ("evidence.table_rows", "column-header: no evidence line holds 'Adult'"),
    "evidence-retry-no-nfkc": ("evidence.retry_refused", "full-width: the dead end was searched again as"),
    "evidence-retry-failed-as-evidence": ("evidence.retry_refused", "failed-query-fact: the dead end was searched"),
    "evidence-furniture-tags-only": ("evidence.html_page", "hidden: no evidence line citing"),
    "evidence-rank-gated": ("evidence.own_ranking", "near-misses: the relevant result for"),
    "evidence-fetch-re-resolve": ("evidence.html_page", "rebound-host: the pipeline's page fetch"),
    "evidence-fetch-redirect-unchecked": ("evidence.html_page", "redirect-to-private: the pipeline's page fetch"),
    "evidence-prompt-local-sent": ("evidence.local_refused", "prompt-names-file: 1 search request(s) carried"),
    # An outside hunt of seeds 002/003 (session of 2026-12-05, the third): each certified before its row.
    "evidence-diversity-first": ("evidence.own_ranking", "relevant-behind-its-site: the relevant result"),
    "evidence-rank-batch-words": ("evidence.own_ranking", "other-query-words: the relevant result"),
    "evidence-batch-dedupe": ("evidence.diversity", "one-page-two-queries: query 'harbour pilot boarding fee'"),
    "evidence-fact-substring": ("evidence.retry_refused", "fact-inside-a-number: the dead end was searched again as"),
    "evidence-table-empty-cells-first": ("evidence.table_rows", "empty-cell: no evidence line holds 'Pet'"),
    "evidence-table-header-kept": ("evidence.table_rows", "second-table: no evidence line holds 'Gull Island'"),
    "evidence-html-header-kept": ("evidence.html_page", "second-table-no-header: another table's column labels"),
    "evidence-local-path-normalised": ("evidence.local_refused", "home-path-after-a-word: a search was sent"),
    "evidence-local-names-no-nfkc": ("evidence.local_refused", "full-width-name: a search was sent"),
    "evidence-local-name-words": ("evidence.local_refused", "glued-name: a search was sent"),
    "evidence-local-checked-with-names": ("evidence.local_refused", "path-without-marked-names: a search was sent"),
    "evidence-prompt-checked-with-names": ("evidence.local_refused", "prompt-without-marked-names: 1 search"),
    "evidence-prompt-raw-cut": ("evidence.local_refused", "prompt-padded: 1 search request(s)"),
    # An audit of which requests seed 001's rules apply to: the pipeline's own Search and Fetch API requests
    # (web_search and web_fetch stay right in each).
    "evidence-client-defaults": ("evidence.api_wire", "search headers: the search request for"),
    "evidence-need-content": ("evidence.api_wire", "search body: the search request for"),
    "evidence-count-own-bound": ("evidence.api_wire", "search count: the search request for"),
    "evidence-api-redirects-followed": ("evidence.api_wire", "search redirect: HTTP 302 on the pipeline's Search"),
    "evidence-key-not-token": ("evidence.api_wire", "the account route: the search request for"),
    # An audit of seed 002: a page bound, [needs_retry] per query of a batch and a deterministic pipeline.
    "evidence-every-result-read": ("evidence.diversity", "many-results: 180 Fetch API requests"),
    "evidence-retry-said-once": ("evidence.batch", "needs-retry-per-query: [needs_retry] does not stand"),
    "evidence-completion-order": ("evidence.batch", "completion-order: the same call returned another text"),
}


def test_the_reference_passes_every_evidence_check_in_process() -> None:
    report = run(reference_target(), only=sorted(EVIDENCE_CHECKS))
    assert {r.check.id: r.outcome.value for r in report.results} == dict.fromkeys(EVIDENCE_CHECKS, "passed")


# Seed 001 decisions the evidence pipeline keeps as every Search API consumer does.
FROM_SEED_001 = {"evidence.ori_question", "evidence.api_wire"}


def test_evidence_checks_cite_the_seed_they_enforce() -> None:
    for check_id in EVIDENCE_CHECKS:
        spec = REGISTRY[check_id]
        seed = "001" if check_id in FROM_SEED_001 else "002"
        assert spec.check.seed == seed and spec.rule.startswith(f"Seed {seed}:")
        assert "evidence-search" in spec.requires
        assert spec.profiles == ("seed-002-evidence",) or check_id == "evidence.html_page"


# Format characters kept in the one normalizer that also serves the marked names: a name split by a
# zero-width space is missed as well.
ALSO_FAILED = {
    # The seed-6 rows of evidence.html_page ("a passage is the page's own text") reject these two readings over HTML
    # pages too: a snippet's words shown beside the page's passage are words the page does not hold
    # (private-use-glyph), and a table read without its columns splits a cell's fact (inline-split-cell).
    "evidence-snippet-alongside": {"evidence.html_page"},
    "evidence-table-no-columns": {"evidence.html_page"},
    "evidence-retry-zero-width": {"evidence.local_refused"},
    # The query's normal form is the marked names' too: without NFKC the full-width name, with spaces collapsed
    # (not removed) the name written as one word, no longer match.
    "evidence-retry-no-nfkc": {"evidence.local_refused"},
    "evidence-retry-space-collapsed": {"evidence.local_refused"},
    # The release page's snippet does not name the version (3.2), nor the ferry page-row's snippet the bicycle
    # fare: each is evidence only when its page is read.
    # ... and neither does the HTML page's snippet hold its facts; nor its opening its fact (evidence-page-lead).
    "evidence-snippet-only": {"evidence.designators", "evidence.table_rows", "evidence.html_page"},
    # ... and the Corvan page opens with the Pixel 8's sentence, which the sentence-per-model row refuses.
    "evidence-page-lead": {"evidence.html_page", "evidence.designators"},
    # A result refused when its page is fetched falls back to its snippet over HTML pages too (a redirect to a
    # private address, a host resolving privately: evidence.html_page's refused-snippet rows) ...
    "evidence-unsafe-snippets": {"evidence.html_page"},
    # ... and every ranked result listed as a source lists such a refused result too.
    "evidence-cite-candidates": {"evidence.html_page"},
    # A row label dropped from Markdown and HTML tables alike (the one row reader serves both).
    "evidence-table-cells": {"evidence.html_page"},
    # Thai read as whole space-separated runs ranks too: the relevant Thai result is never read (thai-words).
    "evidence-thai-unsegmented": {"evidence.own_ranking"},
}


@pytest.mark.parametrize("mode", sorted(BREAKS))
def test_each_evidence_break_fails_exactly_its_check(mode: str, tmp_path: Path) -> None:
    assert_break_fails_exactly("evidence", mode, *BREAKS[mode], tmp_path, also=ALSO_FAILED.get(mode, set()))


def test_a_pipeline_that_reads_no_buddhist_era_year_is_certified(tmp_path: Path) -> None:
    """Seed 002 names no calendar: 2569 read as a bare number, so the 2026 page is not found and the call
    says [needs_retry], is allowed; only last year's page (2568) cited for it is not."""
    code, _data, outcomes = certify_only("evidence", tmp_path, "--variant", "evidence-gregorian-only")
    assert code == 0 and outcomes == dict.fromkeys(EVIDENCE_CHECKS, "passed")


def test_the_example_adapter_passes_every_evidence_check(tmp_path: Path) -> None:
    code, _data, outcomes = certify_only("evidence", tmp_path)
    assert code == 0 and outcomes == dict.fromkeys(EVIDENCE_CHECKS, "passed")


@pytest.mark.parametrize(
    ("host", "site"),
    [
        ("news.bbc.co.uk", "bbc.co.uk"),
        ("BBC.CO.UK", "bbc.co.uk"),
        ("alice.github.io", "alice.github.io"),
        ("docs.alice.github.io", "alice.github.io"),
        ("www.Example.com.", "example.com"),
    ],
)
def test_the_diversity_oracle_counts_registrable_domains_from_the_bundled_list(host: str, site: str) -> None:
    assert evidence_diversity.site(f"https://{host}/x") == site


ICANN = PublicSuffixList(only_icann=True)
# A wrong reading of "registrable domain" the reference could make, and the one row that catches it.
READINGS: dict[str, tuple[Callable[[str], str], str]] = {
    "hosts": (str.lower, "subdomains"),
    "last-two-labels": (lambda h: ".".join(h.split(".")[-2:]), "co-uk"),
    "icann-only": (lambda h: ICANN.privatesuffix(h) or h, "github-io"),
    # from an outside hunt: a host's absolute form (trailing dot) looked up as written finds no suffix
    "absolute-form": (lambda h, right=_evidence_rank.registrable_domain: h.lower() if h.endswith(".") else right(h),
                      "absolute-names"),
}


@pytest.mark.parametrize("reading", sorted(READINGS))
def test_each_diversity_row_catches_the_reading_it_names(reading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong, row = READINGS[reading]
    monkeypatch.setattr(_evidence_rank, "registrable_domain", wrong)
    outcomes = {}
    for case in evidence_diversity.DIVERSITY:
        monkeypatch.setattr(evidence_diversity, "DIVERSITY", (case,))
        (result,) = run(reference_target(), only=["evidence.diversity"]).results
        outcomes[case.name] = result.outcome.value
    assert outcomes[row] == "failed" and outcomes["only-source"] == "passed"


def hosts_as_spelled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reading the letter-case row catches: hosts compared as the provider spelled them (no case folding)."""
    candidates = evidence_search.EvidenceSearchTool._candidates

    def as_spelled(self: Any, index: int, q: Any, answer: Any) -> list[Any]:
        spelled = {s.url.lower(): urlsplit(s.url).netloc for s in answer.sources}
        return [replace(c, host=spelled.get(c.url.lower(), c.host)) for c in candidates(self, index, q, answer)]

    monkeypatch.setattr(evidence_search.EvidenceSearchTool, "_candidates", as_spelled)
    monkeypatch.setattr(_evidence_rank, "registrable_domain", lambda host: host)


def test_the_letter_case_row_catches_hosts_compared_as_the_provider_spelled_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hosts_as_spelled(monkeypatch)
    row = next(c for c in evidence_diversity.DIVERSITY if c.name == "letter-case")
    monkeypatch.setattr(evidence_diversity, "DIVERSITY", (row,))
    (result,) = run(reference_target(), only=["evidence.diversity"]).results
    assert result.outcome.value == "failed" and "letter-case: 8 of 8 pages" in result.reason


# A reading of "local path" that misses one form, as the reference's pattern with one change, and the
# row that catches it (every other row still refused).
_RIGHT = _evidence_guard._LOCAL_PATH.pattern
LOCAL_READINGS = {
    "posix-path": _RIGHT.replace(r"""| (?<![A-Za-z0-9_.~/\\:])/(?:home|""", r"| (?!)(?:home|"),
    "drive-forward-slash": _RIGHT.replace(r"[A-Za-z]:[\\/]", r"[A-Za-z]:\\"),
    "unc-path": _RIGHT.replace(r"| \\\\[^\\\s]+\\", r"| (?!)"),
    "file-url-upper": _RIGHT.replace(r"\bfile:", r"\b(?-i:file):"),
}


@pytest.mark.parametrize("row", sorted(LOCAL_READINGS))
def test_each_local_path_row_catches_the_form_it_names(row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pattern = LOCAL_READINGS[row]
    assert pattern != _RIGHT
    monkeypatch.setattr(_evidence_guard, "_LOCAL_PATH", re.compile(pattern, _evidence_guard._LOCAL_PATH.flags))
    (result,) = run(reference_target(), only=["evidence.local_refused"]).results
    assert result.outcome.value == "failed" and result.reason.startswith(f"{row}: a search was sent"), result.reason


def test_the_unsafe_rows_are_each_refused_by_the_reference_validation() -> None:
    """Every unsafe row is one the reference's own URL check refuses (no row is a guess), the safe one passes."""
    for case in evidence.UNSAFE:
        with pytest.raises(WebError):
            check_url(case["url"], max_length=2048, policy=DEFAULT_POLICY)
    assert str(check_url(evidence.SAFE_RESULT, max_length=2048, policy=DEFAULT_POLICY)) == evidence.SAFE_RESULT


def _whole_pages(query: str, pages: Any, *, max_lines: int = 2, size: int = 360) -> Choice:
    return Choice([Pick(p.url, " ".join(u.text for u in p.units), 0.0) for p in pages])


def test_a_whole_page_as_evidence_fails_the_passage_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reading no break mode shows: every paragraph of the page, uncut, as one evidence line."""
    whole = _evidence_text.clean_text
    monkeypatch.setattr(evidence_search, "choose", _whole_pages)
    monkeypatch.setattr(evidence_search, "clean_text", lambda text, n: whole(text, 1_000_000))
    (result,) = run(reference_target(), only=["evidence.passages"]).results
    assert result.outcome.value == "failed" and "unrelated opening paragraph" in result.reason, result.reason


class _Relaid:
    """The reference evidence tool with its text laid out another way (the value unchanged)."""

    def __init__(self, tool: Any, layout: Callable[[str], str]) -> None:
        self.tool, self.layout = tool, layout

    async def execute(self, *args: Any, **kwargs: Any) -> ToolResult:
        result = await self.tool.execute(*args, **kwargs)
        return ToolResult(text=self.layout(result.text), value=result.value, error_code=result.error_code)


def _relaid(layout: Callable[[str], str]) -> InProcessTarget:
    def build(config: TargetConfig) -> ToolPair:
        pair = targets._build_reference(config)
        return replace(pair, evidence=_Relaid(pair.evidence, layout))

    return InProcessTarget(build, name="dsweb_ref+layout", version="test")


_LINE = re.compile(r'^- "(.*)" \(source: (\S+)\)$', re.MULTILINE)
# Layouts seed 002 leaves open: every evidence line keeps its URL, wherever on the line (or the next).
LAYOUTS: dict[str, Callable[[str], str]] = {
    "url-first": lambda text: _LINE.sub(r"- \2 — \1", text),
    "next-line": lambda text: _LINE.sub(r"- \1\n  source: \2", text),
    "angle-brackets": lambda text: _LINE.sub(r"* \1 <\2>", text),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_evidence_lines_in_another_layout_pass_the_citation_check(layout: str) -> None:
    """Removed false failure: the check required the reference's `- "..." (source: URL)` layout."""
    (result,) = run(_relaid(LAYOUTS[layout]), only=["evidence.lines_cite_results"]).results
    assert result.outcome.value == "passed", result.reason


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_evidence_lines_in_another_layout_without_their_urls_still_fail(layout: str) -> None:
    def drop(text: str) -> str:
        return re.sub(r"https?://\S+", "", LAYOUTS[layout](text))

    (result,) = run(_relaid(drop), only=["evidence.lines_cite_results"]).results
    assert result.outcome.value == "failed" and "carries no source URL" in result.reason, result.reason


class _AnswersTheRest:
    """Refuses only the local queries of a batch and answers the others (seed 002 forbids sending the
    local ones, not searching the rest)."""

    def __init__(self, tool: Any) -> None:
        self.tool = tool

    async def execute(self, arguments: Any, ctx: Any = None, context: Any = None) -> ToolResult:
        queries = arguments.get("query") if isinstance(arguments, dict) else None
        if not isinstance(queries, list):
            return await self.tool.execute(arguments, ctx, context)
        rest = []
        for query in queries:
            try:
                _evidence_guard.refuse_local([query], context.local_names)
            except WebError:
                continue
            rest.append(query)
        return await self.tool.execute({"query": rest or queries}, ctx, context)


def test_answering_the_other_queries_of_a_batch_with_a_local_one_passes_the_local_check() -> None:
    """Removed false failure: the check required the whole batch refused; seed 002 forbids only sending
    the local query (its names or contents) to a search engine."""

    def build(config: TargetConfig) -> ToolPair:
        pair = targets._build_reference(config)
        return replace(pair, evidence=_AnswersTheRest(pair.evidence))

    (result,) = run(InProcessTarget(build, name="partial", version="test"), only=["evidence.local_refused"]).results
    assert result.outcome.value == "passed", result.reason


def test_every_unsafe_and_malformed_row_is_among_the_results_the_reference_reads() -> None:
    """Two queries of RESULTS_SEEN results each per call (the reference's results_per_query): no row is cut."""
    assert len(evidence.UNSAFE) + 1 <= 2 * evidence.RESULTS_SEEN
    assert len(evidence.MALFORMED) <= 2 * evidence.RESULTS_SEEN
    assert evidence.RESULTS_SEEN == evidence_search.EvidenceSettings().results_per_query


CRASH_ROWS = (*evidence.MALFORMED, *(c for c in evidence.UNSAFE if c.name in ("hex-host", "octal-host")))
NAME_ROWS = ["hex-host", "octal-host", "localhost-subdomain"]


@pytest.mark.parametrize("row", [c.name for c in CRASH_ROWS])
def test_each_malformed_row_catches_a_guard_that_raises_on_it(row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    url = next(c["url"] for c in CRASH_ROWS if c.name == row)
    right = evidence_search.check_url

    def raising(raw: object, **kwargs: Any) -> Any:
        if raw == url:
            raise ValueError("unreadable host")  # wrong: not a WebError, so the result is not dropped
        return right(raw, **kwargs)

    monkeypatch.setattr(evidence_search, "check_url", raising)
    (result,) = run(reference_target(), only=["evidence.unsafe_dropped"]).results
    assert result.outcome.value == "error" and "raised" in result.reason, result.reason


def test_the_malformed_rows_pass_when_kept_instead_of_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed-open: no seed fixes URL syntax, so a guard that keeps such a result stays certified."""
    urls = {c["url"] for c in evidence.MALFORMED}
    right = evidence_search.check_url

    def keeping(raw: object, **kwargs: Any) -> Any:
        return httpx.URL("https://harbour.example.com/kept") if raw in urls else right(raw, **kwargs)

    monkeypatch.setattr(evidence_search, "check_url", keeping)
    (result,) = run(reference_target(), only=["evidence.unsafe_dropped"]).results
    assert result.outcome.value == "passed", result.reason


@pytest.mark.parametrize("row", NAME_ROWS)
def test_each_special_host_row_catches_the_host_taken_for_a_public_name(
    row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    right = check_url.__globals__["parse_host"]
    host = httpx.URL(next(c["url"] for c in evidence.UNSAFE if c.name == row)).host
    monkeypatch.setattr("dsweb_ref.netguard.urls.parse_host", lambda h: h if h == host else right(h))
    (result,) = run(reference_target(), only=["evidence.unsafe_dropped"]).results
    assert result.outcome.value == "failed" and result.reason.startswith(f"{row}: "), result.reason


# Wrong readings of the query's words, of the passage rules and of a page's units (issue 24 item 5:
# survivors of tools/_evidence_text.py, _evidence_passages.py and _evidence_units.py made rows), each the
# reference's function with one change, and the one row of its check that catches it (the check's other rows
# pass it). Where the function was imported by name, the importers get the wrong one too.
# render_evidence's two ways of leaving whole lines out, taken from its source (each reading deletes them): from
# the longest groups down to one line a query, then a query's last line, the longest first.
_RENDER = inspect.getsource(evidence_search.render_evidence)
_LAST_LINES_LEFT_OUT = _RENDER[_RENDER.index("    while len(_join(heads, bodies) + note) > max_chars:\n"):
                               _RENDER.index("    text = _join(heads, bodies)")]
_WHOLE_LINES_LEFT_OUT = _RENDER[_RENDER.index("    while len(_join(heads, bodies) + note) > max_chars and"):
                                _RENDER.index("    text = _join(heads, bodies)")]
ROW_READINGS: dict[str, tuple[Any, str, str, str, str, str | tuple[str, ...]]] = {
    # The floor of one source per query against the per-domain share (page selection).
    "no-floor-pass": (
        _evidence_rank, "select_pages", "or queue[0].url in urls:", "or queue[0].url not in urls:",
        "evidence.diversity", "full-site",
    ),
    "never-relaxed": (
        _evidence_rank, "select_pages", "return relaxed or per_domain", "return relaxed and per_domain",
        "evidence.diversity", "full-site",
    ),
    "floor-stops-at-taken": (
        _evidence_rank, "select_pages", "            continue\n", "            break\n", "evidence.diversity",
        "taken-top",
    ),
    "stop-words-counted": (
        _evidence_text, "content_tokens", "_EN_STOP | _thai", "_EN_STOP & _thai", "evidence.passages", "stop-words"
    ),
    "two-letter-words-dropped": (
        _evidence_text, "content_tokens", "len(t) == 1", "len(t) == 2", "evidence.designators", "two-letter-subject"
    ),
    "sara-am-split": (
        _evidence_text, "fold", '.replace("\\u0e4d\\u0e32", "\\u0e33")', "", "evidence.designators", "thai-sara-am"
    ),
    "cjk-one-character-lost": (
        _evidence_text, "tokenize", "len(run) == 1", "len(run) == 2", "evidence.designators", "cjk-one-character"
    ),
    "cjk-trigrams": (
        _evidence_text, "tokenize", "run[i : i + 2]", "run[i : i + 3]", "evidence.passages", "chinese-words-apart"
    ),
    "cjk-last-bigram-lost": (
        _evidence_text, "tokenize", "range(len(run) - 1)", "range(len(run) - 2)", "evidence.designators",
        "cjk-two-character",
    ),
    "operators-as-words": (
        _evidence_text, "topic_of", "if words else query", "if False else query", "evidence.passages", "operators"
    ),
    # ... which also lets the Pell Creek page give its length where the Pell River page gives no passage
    "latin-name-never-whole": (
        _evidence_passages, "_stands_whole", "isalnum()):\n            return True",
        "isalnum()):\n            return False", "evidence.designators", ("similar-name", "similar-name-no-passage"),
    ),
    "thai-name-never-whole": (
        _evidence_passages, "_stands_whole", "(after):\n                return True",
        "(after):\n                return False", "evidence.designators", "thai-similar-name",
    ),
    "first-designator-only": (
        _evidence_passages, "designators", "seen.setdefault((mark.family, mark.value), mark)",
        "seen.setdefault(None, mark)", "evidence.designators",
        ("model-and-year", "year-first"),  # the year-first row's one model is lost behind its year too
    ),
    "version-with-next-word": (
        _evidence_passages, "_marks", "words[index - 1]))", "words[index + 1]))", "evidence.designators",
        "version-number",
    ),
    "more-than-half-the-words": (
        _evidence_passages, "choose", "if len(context & wanted_terms) < need:",
        "if len(context & wanted_terms) <= need:", "evidence.passages", "one-word",
    ),
    # Survivors of tools/_evidence_units.py: the reference's own reading before the list-item row (the
    # marker stripped with every digit after it), and a row read cell by cell against its header, so a
    # row with fewer cells raises and the whole page fails (its snippet standing in).
    "list-number-stripped": (
        _evidence_units, "_markdown_units", "line[bullet.end() :].strip()",
        'line.lstrip("-*+0123456789.) ").strip()', "evidence.passages", "list-item-number",
    ),
    "short-row-raises": (
        _evidence_units, "_row_text", '" | ".join(c for c in cells if c)',
        # the page fails whole, so the other rows on the same page (column-header, empty-cell, second-table) lose
        # their facts too
        '" | ".join(cells[i] for i in range(len(header)) if cells[i])', "evidence.table_rows",
        ("page-row", "column-header", "empty-cell", "second-table"),
    ),
    # Survivors of tools/evidence_search.py: the text cut at its bound by character count (never by leaving
    # whole lines out), and a failed search's error read as an object, so a batch with one failed search
    # raises instead of answering (or failing with a WEB_* error).
    # (With four queries, even one line each is over the bound: the text cut there too.)
    "text-cut-mid-line": (evidence_search, "render_evidence", _WHOLE_LINES_LEFT_OUT, "",
                          "evidence.lines_cite_results", ("long-urls", "long-urls-four-queries")),
    # From an outside hunt: lines left out only down to one a query, then the text cut at its bound.
    "cut-below-one-line-a-query": (evidence_search, "render_evidence", _LAST_LINES_LEFT_OUT, "",
                                   "evidence.lines_cite_results", "long-urls-four-queries"),
    "search-error-misread": (evidence_search, "_tried", "clean_text(t['search_error'], 200)",
                             "clean_text(t['search_error'].text, 200)", "evidence.diversity", "failed-search"),
    # Survivors of the seed-1 mutation draw: the names of a query checked against the pages read even when none
    # was (max() of nothing raises, so the query loses its snippets too); and furniture judged by a role
    # attribute's presence, not its value (test_a_row_outside_any_table_... below: a header never set).
    "names-checked-with-no-page-read": (_evidence_passages, "choose", "if kept and names:", "if kept or names:",
                                        "evidence.diversity", "named-queries"),
    "any-role-is-furniture": (_evidence_units, "is_furniture", 'if name == "role" and any(',
                              'if name == "role" or any(', "evidence.html_page", "content-roles"),
    # Survivors of the seed-2 draw: a sentence ended by punctuation given another label than the end, so the
    # last sentence of a paragraph ending in "น." is never handed over; and a line break in a table cell kept as
    # a value that is not text, so joining the cell raises and the page counts as unread.
    "punctuation-end-unflushed": (_evidence_units, "_crf_sentences",
                                  'endswith(("!", ".", "?")):\n            labels[i] = "E"',
                                  'endswith(("!", ".", "?")):\n            labels[i] = "P"',
                                  "evidence.passages", "thai-full-stop"),
    "line-break-in-a-cell-not-text": (_evidence_units._Units, "handle_starttag", 'self._cell.append(" ")',
                                      "self._cell.append(None)", "evidence.html_page",
                                      ("cell-line-break", "cell-line-break-inside-fact")),  # both pages crash
    # From an outside hunt: sentences cut only where a space follows the full stop, so a Chinese paragraph (。 with
    # nothing after it) stays one unit and its last sentence's fact is cut off.
    "cjk-sentences-uncut": (_evidence_units, "sentences",
                            "return [c.strip() for s in _SENTENCE_END.split(text) for c in _cjk_split(s) if "
                            "c.strip()]", "return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]",
                            "evidence.passages", "chinese-long-paragraph"),
    # Survivors of the seed-3 draw: a word's designators read only up to the first year (the model after it
    # lost), and an element's attributes read only up to the first one without a value.
    "designators-up-to-a-year": (_evidence_passages, "_marks",
                                 'out.append(Designator("year", str(year), ""))\n            continue',
                                 'out.append(Designator("year", str(year), ""))\n            break',
                                 "evidence.designators", "year-first"),
    "attributes-up-to-a-valueless-one": (_evidence_units, "is_furniture", "if not value:\n            continue",
                                         "if not value:\n            break", "evidence.html_page",
                                         "valueless-attribute"),
}  # fmt: skip
_TABLES = {
    "evidence.diversity": (evidence_diversity, "DIVERSITY"),
    "evidence.html_page": (evidence_html, "HTML"),
    "evidence.passages": (evidence_passages, "PASSAGES"),
    "evidence.designators": (evidence_relevance, "DESIGNATORS"),
    "evidence.table_rows": (evidence_relevance, "TABLES"),
    "evidence.lines_cite_results": (evidence, "CITES"),
}


@pytest.mark.parametrize("reading", sorted(ROW_READINGS))
def test_each_text_and_passage_row_catches_the_reading_it_names(reading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    owner, function, right, wrong, check_id, row = ROW_READINGS[reading]
    patch_reading(owner, function, right, wrong, monkeypatch,
                  _evidence_text, _evidence_passages, _evidence_rank, evidence_search)  # fmt: skip
    module, table = _TABLES[check_id]
    assert failing_rows(module, table, check_id, monkeypatch) == (set(row) if isinstance(row, tuple) else {row})


def test_a_row_outside_any_table_read_against_a_header_never_set_fails_exactly_the_stray_table_row_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A survivor of the seed-1 mutation draw: the parser's table header starts unset, not empty, so a table
    row before any table raises and the page counts as unread (a wrapper: __init__ calls super(), which a
    re-compiled copy of it cannot)."""
    init = _evidence_units._Units.__init__

    def header_unset(self: Any) -> None:
        init(self)
        self._header = None

    monkeypatch.setattr(_evidence_units._Units, "__init__", header_unset)
    assert failing_rows(evidence_html, "HTML", "evidence.html_page", monkeypatch) == {"stray-table-row"}


def test_the_unsafe_check_catches_dropped_results_outside_the_output_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """A survivor of tools/evidence_search.py (issue 24 item 5): dropped results listed in a shape the adapter
    protocol's output schema refuses (here their reason under another key)."""
    candidates = evidence_search.EvidenceSearchTool._candidates

    def misnamed(self: Any, index: int, q: Any, answer: Any) -> list[Any]:
        out = candidates(self, index, q, answer)
        q.dropped[:] = [{"url": d["url"], "why": d["reason"]} for d in q.dropped]
        return out

    monkeypatch.setattr(evidence_search.EvidenceSearchTool, "_candidates", misnamed)
    (result,) = run(reference_target(), only=["evidence.unsafe_dropped"]).results
    assert result.outcome.value == "failed" and "does not follow evidence_search.output" in result.reason, result.reason


def test_a_target_whose_own_url_limit_refuses_the_long_urls_passes_the_long_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # seed-open: a URL limit of the target's own (here 1,024 characters) refuses the long rows' results, which
    # leaves their queries [needs_retry]: no line shown is no line cut
    patch_reading(evidence_search.EvidenceSearchTool, "_candidates", "max_length=cfg.max_url_length",
                  "max_length=1024", monkeypatch)
    assert failing_rows(evidence, "CITES", "evidence.lines_cite_results", monkeypatch) == set()
