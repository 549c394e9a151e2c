"""Issue 24, the outside hunt hunt_f over seed 002's evidence pipeline: wrong pipelines certified before these rows
(URLs validated after the pages are picked, a flat evidence text, a text cut from its end losing a query, cited URLs
without their query string, retry memory kept per whole call, only U+0020 ignored in a retry, macOS home paths
searched). Each wrong reading is made in the reference and must fail exactly the rows that name it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from dsweb_ref import WebError, WebErrorCode
from dsweb_ref.certification.checks import evidence
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.tools import _evidence_guard, evidence_search
from dsweb_ref.tools._evidence_rank import Candidate

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run

UNSAFE = "evidence.unsafe_dropped"
BATCH = "evidence.batch"
CITES = "evidence.lines_cite_results"
RETRY = "evidence.retry_refused"
LOCAL = "evidence.local_refused"
NEW_ROWS = {
    UNSAFE: ("VALIDATE_FIRST", {"validated-before-picked"}),
    BATCH: ("BATCH", {"grouped-text", "cut-keeps-every-query"}),
    CITES: ("CITES", {"query-string"}),
    RETRY: ("RETRIES", {"batch-needs-retry", "tab-inside"}),
    LOCAL: ("LOCAL", {"macos-path"}),
}
RIGHT_RENDER = evidence_search.render_evidence


def test_the_reference_passes_the_checks_with_the_new_rows() -> None:
    for check_id, (table, rows) in NEW_ROWS.items():
        assert rows <= {c.name for c in getattr(evidence, table)}, check_id
    report = run(reference_target(), only=sorted(NEW_ROWS))
    assert {r.check.id: r.outcome.value for r in report.results} == dict.fromkeys(NEW_ROWS, "passed"), [
        r.reason for r in report.results
    ]


def test_urls_validated_after_the_pages_are_picked_fail_exactly_the_validated_first_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: select-before-validate (every parseable result ranked and picked; an unsafe pick dropped afterwards,
    # its slot lost, so a query whose unsafe results match best reads none of its safe ones)
    validate, select = evidence_search.check_url, evidence_search.select_pages

    def parse_only(raw: str, *, max_length: int, policy: Any) -> httpx.URL:
        try:
            url = httpx.URL(raw)
        except Exception as exc:
            raise WebError(WebErrorCode.INVALID_URL, "malformed") from exc
        if not url.host:
            raise WebError(WebErrorCode.INVALID_URL, "malformed")
        return url

    def select_then_validate(
        ranked: Sequence[Sequence[Candidate]], *, max_pages: int, max_per_domain: int
    ) -> list[Candidate]:
        safe = []
        for c in select(ranked, max_pages=max_pages, max_per_domain=max_per_domain):
            try:
                validate(c.url, max_length=2048, policy=evidence_search.DEFAULT_POLICY)
            except WebError:
                continue  # wrong: the slot is lost
            safe.append(c)
        return safe

    monkeypatch.setattr(evidence_search, "check_url", parse_only)
    monkeypatch.setattr(evidence_search, "select_pages", select_then_validate)
    assert failing_rows(evidence, "VALIDATE_FIRST", UNSAFE, monkeypatch) == {"validated-before-picked"}
    fails_exactly(evidence, "VALIDATE_FIRST", UNSAFE, "validated-before-picked", monkeypatch)  # the rest pass it


def _flat(value: Mapping[str, Any], max_chars: int) -> str:
    """The reference's text without its query headings: one flat list of lines."""
    return "\n".join(line for line in RIGHT_RENDER(value, max_chars).splitlines()
                     if line.strip() and not line.startswith("Query "))  # fmt: skip


def test_a_flat_evidence_text_fails_exactly_the_grouped_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: text-flat-lines (no query named above its lines; seed 002 returns the results separated by query)
    monkeypatch.setattr(evidence_search, "render_evidence", _flat)
    # ... and, with no group, the [needs_retry] of the batch's query that found nothing in none of its own (a row
    # added by an audit of seed 002)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == {"grouped-text", "needs-retry-per-query"}


def _cut_from_the_end(value: Mapping[str, Any], max_chars: int) -> str:
    full = RIGHT_RENDER(value, 10**9)
    if len(full) <= max_chars:
        return full
    note = "\n(Some evidence lines were left out to keep the result short.)"
    lines = full.split("\n")
    while lines and len("\n".join(lines) + note) > max_chars:
        lines.pop()
    while lines and (not lines[-1].strip() or lines[-1].startswith("Query ")):
        lines.pop()
    return "\n".join(lines) + note


def test_a_text_cut_from_its_end_fails_exactly_the_every_query_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: text-cut-drops-later-queries (whole lines left out from the end: the last query, its heading too,
    # vanishes from the text)
    monkeypatch.setattr(evidence_search, "render_evidence", _cut_from_the_end)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == {"cut-keeps-every-query"}


def _headings_kept(value: Mapping[str, Any], max_chars: int) -> str:
    """Another cut: over the bound, only the first query keeps its lines; every query keeps its heading."""
    if len(RIGHT_RENDER(value, 10**9)) <= max_chars:
        return RIGHT_RENDER(value, max_chars)
    first, *rest = value["queries"]
    shown = {**value, "queries": [first, *({**g, "evidence": []} for g in rest)]}
    return RIGHT_RENDER(shown, max_chars) + "\n(The lines of the later queries were left out.)"


_HEAD = re.compile(r"^Query (\d): (.*)$", re.MULTILINE)
OPEN_LAYOUTS = {
    "numbers-only": lambda text: _HEAD.sub(r"[\1]", text),
    "query-only": lambda text: _HEAD.sub(r"## \2", text),
    "url-first": lambda text: re.sub(r'^- "(.*)" \(source: (\S+)\)$', r"* \2 — \1", text, flags=re.MULTILINE),
}


@pytest.mark.parametrize("layout", sorted(OPEN_LAYOUTS))
def test_groups_named_by_number_or_by_query_in_any_layout_pass_the_batch_check(
    layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed-open: how a group names its query (its number, its text) and how a line is laid out."""
    relaid = OPEN_LAYOUTS[layout]
    monkeypatch.setattr(evidence_search, "render_evidence", lambda value, n: relaid(RIGHT_RENDER(value, n)))
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == set()


def test_another_cut_that_keeps_every_query_in_view_passes_the_batch_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed-open: the text's bound and what a cut leaves out (seed 002 fixes neither)."""
    monkeypatch.setattr(evidence_search, "render_evidence", _headings_kept)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == set()


def test_cited_urls_without_their_query_string_fail_exactly_the_query_string_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: cite-url-query-stripped (.../notice?id=4471 cited as .../notice: seed 002 keeps each line's URL)
    right = evidence_search._value

    def stripped(state: Sequence[Any]) -> dict[str, Any]:
        for q in state:
            for line in q.evidence:
                parts = urlsplit(line["url"])
                line["url"] = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return right(state)

    monkeypatch.setattr(evidence_search, "_value", stripped)
    # The tracking-parameters and percent-escapes rows' URLs carry a query string too.
    assert failing_rows(evidence, "CITES", CITES, monkeypatch) == {"query-string", "tracking-parameters",
                                                                  "percent-escapes"}


def test_tracking_parameters_stripped_fail_exactly_the_tracking_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: utm_*, gclid and fbclid dropped from a cited URL (an outside hunt): another string than returned
    right = evidence_search._value

    def untracked(state: Sequence[Any]) -> dict[str, Any]:
        for q in state:
            for line in q.evidence:
                parts = urlsplit(line["url"])
                kept = "&".join(p for p in parts.query.split("&") if not p.startswith(("utm_", "gclid=")))
                line["url"] = urlunsplit((parts.scheme, parts.netloc, parts.path, kept, ""))
        return right(state)

    monkeypatch.setattr(evidence_search, "_value", untracked)
    assert failing_rows(evidence, "CITES", CITES, monkeypatch) == {"tracking-parameters"}


def test_empty_queries_remembered_only_when_the_whole_call_found_nothing_fail_exactly_the_batch_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: retry-remember-whole-call-only (a query that said [needs_retry] beside one that found evidence
    # fired again)
    right = evidence_search.EvidenceSearchTool.run

    async def forgetting(
        self: evidence_search.EvidenceSearchTool, arguments: object, ctx: Any = None, context: Any = None
    ) -> dict[str, Any]:
        context = context if context is not None else evidence_search.EvidenceContext()
        exhausted, attempts = set(context.exhausted), dict(context.attempts)
        value = await right(self, arguments, ctx, context)
        if not value["needs_retry"]:
            context.exhausted, context.attempts = exhausted, attempts
        return value

    monkeypatch.setattr(evidence_search.EvidenceSearchTool, "run", forgetting)
    assert failing_rows(evidence, "RETRIES", RETRY, monkeypatch) == {"batch-needs-retry"}


def test_only_the_ascii_space_ignored_fails_exactly_the_tab_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: retry-ascii-space-only ("zz<TAB>qx unknowable" taken for a new query)
    right = '_SPACE.sub("", _visible(unicodedata.normalize("NFKC", query).casefold()))'
    wrong = '_visible(unicodedata.normalize("NFKC", query).casefold()).replace(" ", "")'
    patch_reading(_evidence_guard, "normalized_query", right, wrong, monkeypatch, evidence_search)
    assert failing_rows(evidence, "RETRIES", RETRY, monkeypatch) == {"tab-inside"}


def test_absolute_paths_local_only_under_home_fail_exactly_the_macos_and_root_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: local-posix-home-only (/Users/somchai/budget-2026.xlsx and /root/salary-2026.xlsx sent)
    folders = "(?:home|users|etc|var|tmp|mnt|media|opt|root|private|volumes|srv|data)"
    right = _evidence_guard._LOCAL_PATH.pattern
    assert right.count(folders) == 1
    wrong = re.compile(right.replace(folders, "home"), _evidence_guard._LOCAL_PATH.flags)
    monkeypatch.setattr(_evidence_guard, "_LOCAL_PATH", wrong)
    # the drive rows of hunt M (/Volumes/, /media/) fail too: those folders are cut from the list as well
    assert failing_rows(evidence, "LOCAL", LOCAL, monkeypatch) == {
        "macos-path", "root-home", "external-drive", "mounted-drive"}


def _numbered_in_groups(text: str) -> str:
    """Headings name the query; lines numbered 1., 2. inside each group (a number is not a group's name)."""
    out, n = [], 0
    for line in text.splitlines():
        if _HEAD.match(line):
            n = 0
        elif line.startswith("- "):
            n += 1
            line = f"{n}. {line[2:]}"
        out.append(line)
    return "\n".join(out)


def test_lines_numbered_inside_groups_named_by_query_pass_the_batch_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed-open: a group may number its own lines; the second line's "2." names no second query."""
    relaid = lambda value, n: _numbered_in_groups(RIGHT_RENDER(value, n))  # noqa: E731
    monkeypatch.setattr(evidence_search, "render_evidence", relaid)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == set()


def test_a_flat_list_that_shows_each_line_title_still_fails_the_grouped_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: text-flat-lines passing because each line shows its source's title, were a title to repeat its
    # query's words (the row's titles name no query); a flat list of lines has no [needs_retry] either
    def flat_titled(value: Any, n: Any) -> str:
        return "\n".join(f'{line.get("title", "")}: "{line["text"]}" (source: {line["url"]})'
                         for group in value["queries"] for line in group["evidence"])

    monkeypatch.setattr(evidence_search, "render_evidence", flat_titled)
    # (the flat list shows no [needs_retry] at all: the audit's needs-retry-per-query row fails it too, as does the
    # seed-5 row whose [needs_retry] line must survive the cut)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == {
        "grouped-text", "cut-keeps-retry-marker", "needs-retry-per-query"}
