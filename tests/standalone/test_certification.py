"""Seed-003 certification end to end: the reference passes every standalone check (in-process and
through the example adapter), and each deliberate standalone break fails `dsweb certify` with
exactly its own check while the whole suite runs. The 90-second limit's check runs only on request
(profile seed-003-deadline, 90 s a right run, 115 s one that takes the trickled answer): its runs are
marked slow and kept to one right and one of each wrong kind."""

from __future__ import annotations

import importlib.util
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dsweb_ref.certification.checks import REGISTRY
from dsweb_ref.certification.checks.standalone import RESOLUTION_CASES
from dsweb_ref.certification.suite import select_checks
from dsweb_ref.cli import main

EXAMPLE_ADAPTER = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "example_adapter.py"

# mode -> the one check it must fail, and a fragment of the failing reason.
BREAKS: dict[str, tuple[str, str]] = {
    "standalone-budget": ("standalone.request.isolated", "expected 8192"),
    "standalone-no-bound": ("standalone.result.bounded", "over 24000"),
    "standalone-accept-prose": ("standalone.prose.error", "expected a WEB_* error"),
    "standalone-mine-urls": ("standalone.sources.structured_only", "expected []"),
    "standalone-all-sources": ("standalone.sources.filtered", "at most 8"),
    "standalone-follow-redirects": ("standalone.redirect.not_followed", "Location was visited"),
    "standalone-leak-reasoning": ("standalone.reasoning.withheld", "reasoning or encrypted content"),
    "standalone-resolve-last-slash": ("standalone.resolve.table", "assigned-splits-at-the-first-slash"),
    # issue 24 item 5: saving the assigned model (standalone_config.py had no protocol route before)
    "standalone-save-rerender": ("standalone.save.keeps_rest", "comments-kept: comments lost"),
    "standalone-save-project-ignored": ("standalone.save.keeps_rest", "project-overrides: the project's value"),
    # found by red-teaming: each was certified before the row named in its fragment
    "standalone-bound-chars": ("standalone.result.bounded", "[cjk-summary] the result is"),
    "standalone-cited-sources-only": ("standalone.sources.filtered", "0 sources kept of 8"),
    # found by an outside hunt: each was certified before its row
    "standalone-sources-by-host": ("standalone.sources.filtered", "[same-site-pages] 1 sources kept of 3"),
    "standalone-truncated-summary-only": ("standalone.result.bounded", "each alone is kept) but truncated"),
    "standalone-usage-shown": ("standalone.result.bounded", "the result carries ['usage'] beside summary"),
    "standalone-any-search-call": ("standalone.prose.error", "[responses-search-in-progress]"),
    "standalone-failure-as-summary": ("standalone.prose.error", "[http-500]: expected a WEB_* error"),
    "standalone-leak-responses-reasoning": ("standalone.reasoning.withheld", "[responses] the result contains"),
    "standalone-citations-only": ("standalone.sources.filtered", "[responses-action-sources] 0 sources kept"),
    # issue 22 (titles, broker/extension models, connection access) and issue 24's "what else a request
    # may carry" family (an extra instruction, another tool version)
    "standalone-system-prompt": ("standalone.request.isolated", "a system instruction is sent"),
    "standalone-tool-version": ("standalone.request.isolated", "web_search_20260209"),
    "standalone-untitled-sources": ("standalone.sources.titled", "[responses-cited-title] the source"),
    "standalone-broker-credentials": ("standalone.resolve.table", "broker-current-needs-a-local-search-account"),
    "standalone-ignore-access-list": ("standalone.resolve.table", "access-list-excludes-the-current-account"),
    # issue 24 item 5: rows the mutation run of providers/standalone_messages.py showed missing
    "standalone-error-echo-unscrubbed": ("standalone.prose.error", "[http-401-quoting-the-key] the tool error shows"),
    "standalone-no-content-type": ("standalone.request.isolated", "expected application/json"),
    # seed 003's usage (capability standalone-usage): owned by the search's model, not the conversation's
    "standalone-usage-main-model": ("standalone.usage.reported", "[messages] model='deepseek-v4-pro'"),
    # found by an outside hunt of seeds 001/003 (session of 2026-12-05): each certified before its row
    "standalone-scheme-case-sensitive": ("standalone.sources.filtered", "[upper-case-schemes] 0 sources kept of 2"),
    "standalone-sources-page-age": ("standalone.sources.filtered", "sources carry ['page_age']"),
    "standalone-http-requests-from-searches": ("standalone.usage.reported", "[messages-two-searches] http_requests=2"),
    "standalone-shared-cookie-jar": ("standalone.request.isolated", "[messages-no-earlier-cookie] the second search"),
    # An outside hunt of seed 003 (session of 2026-12-05, the second): each certified before its row.
    "standalone-cap-before-filter": ("standalone.sources.filtered", "[eight-other-schemes-then-three] 0 sources"),
    "standalone-dedupe-without-query": ("standalone.sources.filtered", "[query-string-pages] 1 sources kept of 3"),
    "standalone-sources-per-search": ("standalone.sources.filtered", "[messages-two-searches-of-sixteen] 16 sources"),
    "standalone-follow-permanent": ("standalone.redirect.not_followed", "[messages-308] the redirect's Location"),
    "standalone-stream-budget": ("standalone.request.isolated", "[messages-streamed] max_tokens is 4096"),
    "standalone-leak-streamed-reasoning": ("standalone.reasoning.withheld", "[responses-streamed] the result contains"),
    "standalone-save-every-occurrence": ("standalone.save.keeps_rest", "field-elsewhere-kept: "),
    "standalone-save-line-replaced": ("standalone.save.keeps_rest", "field-comment-kept: comments lost"),
    "standalone-off-needs-key": ("standalone.resolve.table", "explicit-off-on-current-without-credentials"),
    "standalone-title-key-dropped": ("standalone.sources.filtered", "sources without a title"),
    "standalone-query-cut-2000": ("standalone.request.isolated", "[messages-query-of-3400-characters] the user"),
    # An outside hunt of seeds 002/003 (session of 2026-12-05, the third): each certified before its row.
    "standalone-user-location": ("standalone.request.isolated", "[messages] the search tool carries user_location"),
    "standalone-mcp-servers": ("standalone.request.isolated", "[messages] mcp_servers is set"),
    "standalone-answer-schema": ("standalone.request.isolated", "[responses] text.format asks"),
    "standalone-query-cut-3600": ("standalone.request.isolated", "[messages-query-of-4089-bytes] the user message"),
    "standalone-cut-replace": ("standalone.result.bounded", "[cjk-cut-inside-a-character] the summary holds U+FFFD"),
    "standalone-reasoning-content": ("standalone.reasoning.withheld", "[responses] the result contains"),
    "standalone-usage-reasoning-excluded": ("standalone.usage.reported", "[responses-reasoning-tokens] output_tokens"),
    "standalone-save-enables-connection": ("standalone.save.keeps_rest", "chosen-connection-untouched: the rest"),
    # An audit of seed 003 (the summary's content) and its concurrent searches: each certified before its row.
    "standalone-empty-summary": ("standalone.result.bounded", "[summary-of-12000-bytes] truncated is true"),
    "standalone-queries-in-flight": ("standalone.request.isolated", "[messages-concurrent] a search request carries"),
    # The main model's tool list (capability standalone-tools): the search model named in web_search's definition.
    "standalone-tools-model-named": ("standalone.tools.listed", "another-model-on-the-same-connection: the tools"),
    # The notice for an unusable assigned model (capability standalone-notice; a seed-decision audit found no route).
    "standalone-notice-never": ("standalone.notice.once", "connection-deleted-tells-once: expected 1 notice(s), got 0"),
    "standalone-notice-twice": ("standalone.notice.once", "connection-deleted-tells-once: expected 1 notice(s), got 2"),
    "standalone-notice-when-assigned": ("standalone.notice.once", "valid-assignment-tells-nothing: expected 0"),
    "standalone-notice-once-per-process": ("standalone.notice.once", "each-new-runtime-tells-again: assembly 1"),
    "standalone-notice-tool-kept": ("standalone.notice.once", "search-switched-off-tells-once: web_search is listed"),
}
# Breaks another check judges too: the tool kept for an assigned connection whose search is off or whose key is
# unset is also an unusable assignment listing web_search (standalone.tools.listed's rows from a hunt, R-I5).
ALSO_FAILING: dict[str, set[str]] = {"standalone-notice-tool-kept": {"standalone.tools.listed"},
                                     # a valid source dropped unflagged (review R2-F3's long-title row): here the
                                     # long-titled source the summary does not mention
                                     "standalone-cited-sources-only": {"standalone.result.bounded"}}
# The breaks of the checks run only on request (profile seed-003-deadline), each run through that profile. Found by
# an outside hunt (L): seed 003's 90-second limit was never judged, so both certified before the check.
DEADLINE, DEADLINE_PROFILE = "standalone.deadline.enforced", "seed-003-deadline"
ON_REQUEST_BREAKS: dict[str, tuple[str, str]] = {
    "standalone-deadline-900s": (DEADLINE, "[messages-answer-held-95s] the search answered after"),
    "standalone-deadline-9s": (DEADLINE, "before the 90-second limit"),
}
# Readings seed 003 leaves open: each must stay certified.
VARIANTS = ("standalone-open-fields", "standalone-url-case-folded", "standalone-notice-own-wording")
STANDALONE = sorted(s.check.id for s in select_checks(["standalone"]))  # what a run of the family runs
ON_REQUEST = sorted(i for i in REGISTRY if i.startswith("standalone.") and i not in STANDALONE)


def adapter_command(*args: str) -> str:
    return shlex.join([sys.executable, str(EXAMPLE_ADAPTER), *args])


def _certify(tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    """`dsweb certify ARGV --json FILE` in this process: exit code, report, outcome per check id."""
    path = tmp_path / "report.json"
    code = main(["certify", *argv, "--json", str(path)])
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return code, data, {c["id"]: c["outcome"] for c in data["checks"]}


def test_every_standalone_check_has_a_break_that_it_alone_catches() -> None:
    assert sorted({check for check, _ in BREAKS.values()}) == STANDALONE
    assert sorted({check for check, _ in ON_REQUEST_BREAKS.values()}) == ON_REQUEST == [DEADLINE]


def test_every_standalone_break_mode_of_the_example_adapter_is_tabled() -> None:
    """A seed-003 mode added to the example adapter is tested here (issue 24 item 5 added two)."""
    spec = importlib.util.spec_from_file_location("example_adapter_modes", EXAMPLE_ADAPTER)
    assert spec is not None and spec.loader is not None
    adapter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(adapter)
    assert {m for m in adapter.BREAKS if m.startswith("standalone-")} == set(BREAKS) | set(ON_REQUEST_BREAKS)


def test_every_standalone_check_cites_seed_003_and_its_cases_say_what_they_catch() -> None:
    for check_id in STANDALONE + ON_REQUEST:
        spec = REGISTRY[check_id]
        assert spec.check.seed == "003" and spec.rule.startswith("Seed 003:")
        assert all(case.catches and not case.catches.startswith("catches") for case in spec.cases)
    assert len({c.name for c in RESOLUTION_CASES}) == len(RESOLUTION_CASES)


def test_reference_passes_the_standalone_checks_in_process(tmp_path: Path) -> None:
    code, _, got = _certify(tmp_path, "--only", "standalone")
    assert code == 0 and sorted(got) == STANDALONE and set(got.values()) == {"passed"}


def test_reference_adapter_passes_the_standalone_checks(tmp_path: Path) -> None:
    code, _, got = _certify(tmp_path, "--adapter", adapter_command(), "--only", "standalone")
    assert code == 0 and sorted(got) == STANDALONE and set(got.values()) == {"passed"}


def test_an_adapter_without_the_capabilities_is_skipped_not_passed(tmp_path: Path) -> None:
    command = adapter_command("--without", "standalone-search", "--without", "standalone-resolve",
                              "--without", "standalone-save", "--without", "standalone-tools",
                              "--without", "standalone-notice")
    _, _, got = _certify(tmp_path, "--adapter", command, "--only", "standalone")
    assert set(got.values()) == {"skipped"}


@pytest.mark.parametrize("variant", VARIANTS)
def test_readings_the_seed_leaves_open_stay_certified(variant: str, tmp_path: Path) -> None:
    code, _, got = _certify(tmp_path, "--adapter", adapter_command("--variant", variant), "--only", "standalone")
    assert code == 0 and sorted(got) == STANDALONE and set(got.values()) == {"passed"}, got


def test_every_request_misreading_row_is_named_in_its_case() -> None:
    """Issue 24's family: the request check's cases name the extra instruction and the tool version."""
    catches = " ".join(c.catches for c in REGISTRY["standalone.request.isolated"].cases)
    for misreading in ("system instruction", "instructions", "tool version", "second content part"):
        assert misreading in catches


@pytest.mark.parametrize("mode", sorted(BREAKS))
def test_break_fails_exactly_its_check(mode: str, tmp_path: Path) -> None:
    """Each seed-003 break fails exactly its own standalone check. The seed-003 modes touch only the
    standalone path (the adapter bends nothing else), so the other seeds' checks are not rerun here."""
    expected, fragment = BREAKS[mode]
    code, data, got = _certify(tmp_path, "--adapter", adapter_command("--break", mode), "--only", "standalone")
    assert code == 1 and data["ok"] is False and sorted(got) == STANDALONE
    assert {i for i, o in got.items() if o != "passed"} == {expected, *ALSO_FAILING.get(mode, ())}
    assert got[expected] == "failed"
    checks = data["checks"]
    assert isinstance(checks, list)
    assert fragment in " ".join(c["reason"] for c in checks if c["id"] == expected)


@pytest.mark.slow
def test_the_deadline_profile_certifies_the_reference_and_fails_a_900s_limit(tmp_path: Path) -> None:
    """The right run and the 900 s limit's break at the real scale, side by side: each mostly waits for the
    seed's 90 s, so one test holds one xdist worker for about 120 s where two held both workers (issue 18).
    The right run: each search fails at 90 s. The 900 s limit takes the answers held 95 s (and the one trickled
    until 115 s)."""
    runs = {"right": adapter_command(), "900s": adapter_command("--break", "standalone-deadline-900s")}
    started: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name, command in runs.items():
            with (tmp_path / f"{name}.err").open("wb") as err:  # a file, not a pipe: nothing can fill and block
                started[name] = subprocess.Popen(
                    [sys.executable, "-m", "dsweb_ref", "certify", "--adapter", command, "--profile", DEADLINE_PROFILE,
                     "--json", str(tmp_path / f"{name}.json")],
                    stdout=subprocess.DEVNULL, stderr=err,
                )
        # Within pytest's 300 s timeout, whose expiry would otherwise leave both runs behind.
        codes = {name: process.wait(timeout=250) for name, process in started.items()}
    finally:
        for process in started.values():  # a timeout or a failed start ends the runs (and their adapters) too
            if process.poll() is None:
                process.kill()
                process.wait()
    errs = {name: (tmp_path / f"{name}.err").read_text(encoding="utf-8", errors="replace")[-2000:] for name in runs}
    assert all((tmp_path / f"{name}.json").exists() for name in runs), errs
    data = {name: json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8")) for name in runs}
    got = {name: {c["id"]: c["outcome"] for c in report["checks"]} for name, report in data.items()}
    assert codes["right"] == 0 and got["right"] == {DEADLINE: "passed"}, (data["right"]["checks"], errs["right"])
    assert next(p for p in data["right"]["profiles"] if p["name"] == DEADLINE_PROFILE)["certified"]
    expected, fragment = ON_REQUEST_BREAKS["standalone-deadline-900s"]
    assert codes["900s"] == 1 and got["900s"] == {expected: "failed"}, (data["900s"]["checks"], errs["900s"])
    assert fragment in " ".join(c["reason"] for c in data["900s"]["checks"])


# The 9 s limit fails within 10 s (the 900 s one runs beside the right run above).
@pytest.mark.parametrize("mode", ["standalone-deadline-9s"])
def test_on_request_break_fails_exactly_its_check(mode: str, tmp_path: Path) -> None:
    expected, fragment = ON_REQUEST_BREAKS[mode]
    code, data, got = _certify(tmp_path, "--adapter", adapter_command("--break", mode), "--profile", DEADLINE_PROFILE)
    assert code == 1 and got == {expected: "failed"}
    assert fragment in " ".join(c["reason"] for c in data["checks"])
