"""Every deliberate break of the example adapter, driven through `dsweb certify --adapter ... --json`:
exit status 1 and exactly the named checks failing in the JSON report (the whole suite runs, so
no other check may fail), while the reference passes the same way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import dsweb_ref.certification.checks.batch as batch
from dsweb_ref.certification.checks.scheduling import OPT_IN_CHECKS

from .conftest import ROOT, adapter_command, dsweb_certify, json_outcomes, json_report

# mode -> the checks it must fail, and a fragment of the failing reason.
BREAKS: dict[str, tuple[set[str], str]] = {
    "thinking-enabled": ({"search.messages.thinking_disabled"}, "thinking="),
    "no-ori-cut": ({"search.api.ori_question"}, "long prompt"),
    "early-answer": ({"search.batch.quiescence"}, "still open"),
    "early-answer-subtle": ({"search.batch.quiescence"}, "not closed when the answer arrived"),
    "ignore-cancel": ({"search.cancel.quiescence"}, "still open"),
    "cancel-no-wait": ({"search.cancel.quiescence"}, "not closed when the answer arrived"),
    "follow-redirects": ({"search.redirect.not_followed", "fetch.redirect.not_followed"}, "Location was visited"),
    "no-round-robin": ({"search.merge.round_robin"}, "round-robin"),
    "duplicate-url": ({"search.merge.dedup"}, "duplicate URLs"),
    "wrong-error-code": ({"search.validation.query_cap"}, "expected WEB_INVALID_ARGUMENTS"),
    "schema-extra-field": ({"search.value.schema"}, "does not follow web_search.output"),
    "label-single": ({"search.differential.merge"}, "expected the provider's answer unchanged"),
    "truncated-cap-only": ({"search.differential.merge"}, "truncated=False, expected True"),
    "url-normalise-dedup": ({"search.differential.merge"}, "sources"),
    "generic-failure": ({"search.differential.failure"}, "the first failure in time, with its own code"),
}
# The differential checks compare whole values, so they also catch every merge or batch break; the
# other modes run without the scripted-search capability to show the check they name catches them alone.
DIFFERENTIAL = {"search.differential.merge", "search.differential.failure"}


def certify_json(tmp_path: Path, *argv: str) -> tuple[int, dict[str, object], dict[str, str]]:
    path = tmp_path / "report.json"
    code = dsweb_certify(*argv, "--json", str(path))
    data = json_report(path)
    return code, data, json_outcomes(data)


@pytest.mark.parametrize("mode", sorted(BREAKS), ids=sorted(BREAKS))
def test_break_fails_dsweb_certify_with_exactly_its_checks(mode: str, tmp_path: Path) -> None:
    expected, fragment = BREAKS[mode]
    scripted = bool(expected & DIFFERENTIAL)
    without = () if scripted else ("--without", "scripted-search")
    code, data, got = certify_json(tmp_path, "--adapter", adapter_command("--break", mode, *without))
    assert code == 1 and data["ok"] is False
    skipped = set() if scripted else DIFFERENTIAL
    opt_in = {i for i, o in got.items() if i in OPT_IN_CHECKS and o == "skipped"}
    assert {i for i, o in got.items() if o != "passed"} - opt_in == expected | skipped
    assert all(got[i] == "skipped" for i in skipped)
    assert all(got[i] == "failed" for i in expected)
    checks = data["checks"]
    assert isinstance(checks, list)
    reasons = " ".join(c["reason"] for c in checks if c["id"] in expected)
    assert fragment in reasons


@pytest.mark.parametrize("mode", ["no-round-robin", "duplicate-url"])
def test_the_differential_check_also_catches_merge_breaks(mode: str, tmp_path: Path) -> None:
    command = adapter_command("--break", mode)
    code, _, got = certify_json(tmp_path, "--adapter", command, "--only", "search.differential.merge")
    assert code == 1 and got == {"search.differential.merge": "failed"}


def test_reference_adapter_passes_dsweb_certify(tmp_path: Path) -> None:
    code, data, got = certify_json(tmp_path, "--adapter", adapter_command(), "--only", "search.batch", "search.cancel")
    assert code == 0 and data["ok"] is True
    assert set(got.values()) == {"passed"} and "search.batch.quiescence" in got and "search.cancel.quiescence" in got


def test_sequential_break_is_caught_by_the_concurrency_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "HELD_BOUND", 2.0)  # a sequential batch never gets there; no need to wait 5 s
    command = adapter_command("--break", "sequential", "--without", "messages-search")
    code, data, got = certify_json(tmp_path, "--adapter", command, "--only", "search.batch.concurrent")
    assert code == 1 and got == {"search.batch.concurrent": "failed"}
    checks = data["checks"]
    assert isinstance(checks, list) and "only 1 of 4" in checks[0]["reason"]


def test_messages_path_that_does_not_overlap_is_caught_although_search_api_is_declared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch, "HELD_BOUND", 2.0)
    command = adapter_command("--break", "messages-sequential")
    code, data, got = certify_json(tmp_path, "--adapter", command, "--only", "search.batch.concurrent")
    assert code == 1 and got == {"search.batch.concurrent": "failed"}
    checks = data["checks"]
    assert isinstance(checks, list)
    (result,) = checks
    assert result["details"]["protocols"] == {"api": "passed", "messages": "failed"}
    assert result["reason"].startswith("[Messages]") and "Search API" not in result["reason"]


def test_dsweb_certify_console_command_fails_a_broken_adapter(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    command = adapter_command("--break", "duplicate-url")
    argv = [sys.executable, "-m", "dsweb_ref", "certify", "--adapter", command, "--only", "search.merge.dedup",
            "--json", str(path)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "FAIL   search.merge.dedup" in done.stdout and "Traceback" not in done.stderr
    assert json_outcomes(json_report(path)) == {"search.merge.dedup": "failed"}
