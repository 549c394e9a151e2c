"""Known-failures baseline semantics, and the report writers (JUnit, JSON, Markdown, HTML, scrubbing)."""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dsweb_ref.certification.known_failures import KnownFailuresError, load_known_failures
from dsweb_ref.certification.model import Check, CheckResult, Outcome, Report, TargetInfo
from dsweb_ref.certification.report import (
    REDACTED,
    ReportError,
    check_report_paths,
    nothing_certified,
    report_ok,
    scrub,
    scrub_text,
    summary,
    to_junit,
    to_markdown,
    write_reports,
)
from dsweb_ref.emulator.server import DEFAULT_API_KEY

A = Check("search.a", "first", "000", "web_search")
B = Check("search.b", "second", "000", "web_search")
C = Check("search.c", "third", "001", "search-api")


def report_of(*results: CheckResult, description: str = "target") -> Report:
    return Report("0.1.0", TargetInfo("implementation", description, "impl", "9"), results, "t0", "t1")


def test_known_failure_passes_ci_and_stale_entry_fails_it(tmp_path: Path) -> None:
    path = tmp_path / "known_failures.yaml"
    path.write_text(
        "known_failures:\n"
        "  - id: search.a\n    reason: runs sequentially\n"
        "  - id: search.b\n    reason: fixed upstream?\n"
        "  - id: no.such.check\n    reason: typo\n"
    )
    known = load_known_failures(path)
    assert known.unknown(["search.a", "search.b", "search.c"]) == ["no.such.check"]
    results = known.apply([
        CheckResult(A, Outcome.FAILED, "only 1 of 4"),
        CheckResult(C, Outcome.PASSED),
    ])
    assert results[0].outcome is Outcome.KNOWN_FAILURE and "runs sequentially" in results[0].reason
    assert report_of(*results).ok  # a known failure does not fail CI
    stale = known.apply([CheckResult(B, Outcome.PASSED)])
    assert stale[0].outcome is Outcome.FIXED_KNOWN_FAILURE
    assert not report_of(*stale).ok  # a listed check that passes fails CI: the list is stale


def test_known_failures_accepts_a_mapping_and_rejects_nonsense(tmp_path: Path) -> None:
    good = tmp_path / "k.yaml"
    good.write_text("search.a: slow\n")
    assert load_known_failures(good).reasons == {"search.a": "slow"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("known_failures:\n  - 42\n")
    with pytest.raises(KnownFailuresError):
        load_known_failures(bad)


@pytest.mark.parametrize("shape", ["mapping", "list"])
def test_a_reason_that_expands_through_yaml_aliases_is_refused_at_once(shape: str, tmp_path: Path) -> None:
    # catches: str() of whatever the reason is: nine levels of aliases (about 300 bytes) stand for 10^9
    # strings, which took minutes and gigabytes to print
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{b}: &{b} [{','.join(['*' + a] * 10)}]" for a, b in zip("abcdefgh", "bcdefghi", strict=True)]
    entry = "search.a: *i" if shape == "mapping" else "- {id: search.a, reason: *i}"
    bombs = tmp_path / "laughs.yaml"
    bombs.write_text("\n".join(["anchors:", *("  " + line for line in lines), "known_failures:", "  " + entry]) + "\n")
    started = time.monotonic()
    with pytest.raises(KnownFailuresError, match="not text"):
        load_known_failures(bombs)
    assert time.monotonic() - started < 5


def sample() -> Report:
    return report_of(
        CheckResult(A, Outcome.PASSED, duration_s=0.1),
        CheckResult(B, Outcome.FAILED, "a | pipe\nand a newline", {"got": [1]}),
        CheckResult(C, Outcome.SKIPPED, "target does not declare: search-api"),
    )


def test_junit_has_one_testcase_per_check() -> None:
    root = ET.fromstring(to_junit(sample()))
    cases = root.findall("testcase")
    assert [c.get("name") for c in cases] == ["search.a", "search.b", "search.c"]
    assert cases[1].find("failure") is not None
    assert cases[2].find("skipped") is not None
    assert root.get("failures") == "1" and root.get("skipped") == "1"


def test_json_and_markdown_shapes(tmp_path: Path) -> None:
    paths = write_reports(sample(), report_dir=tmp_path, notes=["n1"])
    assert {p.name for p in paths} == {"junit.xml", "report.json", "report.md", "report.html"}
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["suite_version"] == "0.1.0" and data["target"]["name"] == "impl" and data["ok"] is False
    assert data["notes"] == ["n1"]
    assert [c["id"] for c in data["checks"]] == ["search.a", "search.b", "search.c"]
    for c in data["checks"]:
        assert set(c) >= {"id", "description", "seed", "outcome", "reason", "duration_s"}
    md = to_markdown(sample())
    assert "## seed 000" in md and "## seed 001" in md
    assert "| `search.b` | failed | second | a \\| pipe and a newline |" in md


def test_no_secret_reaches_any_report(tmp_path: Path) -> None:
    secret = "sk-live-0123456789abcdef"
    leaky = report_of(
        CheckResult(A, Outcome.FAILED, f"401 for key {secret} and {DEFAULT_API_KEY}",
                    {"headers": {"authorization": f"Bearer {secret}"}, "list": [secret]}),
        description=f"adapter --key {secret}",
    )
    write_reports(leaky, secrets=[secret], notes=[f"note {secret}"], report_dir=tmp_path)
    for path in tmp_path.iterdir():
        text = path.read_text()
        assert secret not in text and DEFAULT_API_KEY not in text, path.name
        assert REDACTED in text, path.name


def test_a_lone_surrogate_in_a_targets_text_is_written_as_its_escape_in_every_report(tmp_path: Path) -> None:
    # A target that hands on a lone surrogate fails search.api.mapping with it in the evidence; UTF-8 has
    # no form for it, so writing the reports crashed (issue 24: a verdict must always reach its report).
    secret = "sk-live-0123456789abcdef"
    broken = report_of(
        CheckResult(A, Outcome.FAILED, "title 'Caf\ud800 menu'",
                    {"value": {"title": "Caf\ud800 menu", "key\udc00": ["tail \udc00 end"]},
                     "echo": "\ud800".join(secret)}),
        description="adapter \udfff",
    )
    write_reports(broken, secrets=[secret], report_dir=tmp_path)
    for path in tmp_path.iterdir():
        text = path.read_bytes().decode("utf-8")  # strict: every report is UTF-8
        assert "\\ud800" in text.replace("\\\\", "\\") and secret not in text, path.name
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["checks"][0]["reason"] == "title 'Caf\\ud800 menu'"
    echo = data["checks"][0]["details"]["echo"]  # the key between the escapes is still found and hidden
    assert REDACTED in echo and secret not in echo.replace("\\ud800", "")


def test_control_characters_a_target_writes_keep_the_junit_report_well_formed(tmp_path: Path) -> None:
    # XML 1.0 has no form for most C0 controls or U+FFFE/U+FFFF: a target's ANSI-coloured error made the
    # JUnit file unreadable to every CI system.
    hostile = "\x1b[31mred\x1b[0m \x00 \x0b \ufffe end"
    write_reports(report_of(CheckResult(A, Outcome.FAILED, hostile, {"text": hostile})), report_dir=tmp_path)
    root = ET.fromstring((tmp_path / "junit.xml").read_bytes())
    assert "\\u001b[31mred" in ET.tostring(root, encoding="unicode")
    assert json.loads((tmp_path / "report.json").read_text())["checks"][0]["reason"].endswith("\\ufffe end")


def test_a_key_variable_that_is_not_utf8_is_still_hidden_and_every_report_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python keeps an environment value's non-UTF-8 bytes as lone surrogates (U+DC80-U+DCFF); the scrub
    # encoded each secret as UTF-8 and raised, so no report was written at all.
    secret = "sk-\udcff\udcfeabcdefghijklmnop"
    monkeypatch.setenv("FOO_API_KEY", secret)
    shown = scrub_text(f"401 for {secret}")
    assert REDACTED in shown and "abcdefghijklmnop" not in shown
    write_reports(report_of(CheckResult(A, Outcome.FAILED, f"401 for {secret}", {"key": secret})), report_dir=tmp_path)
    for path in tmp_path.iterdir():
        text = path.read_bytes().decode("utf-8")
        assert "abcdefghijklmnop" not in text, path.name


def test_an_error_is_not_masked_by_a_known_failure_entry(tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    path.write_text("known_failures:\n  - id: search.a\n    reason: runs sequentially\n")
    (result,) = load_known_failures(path).apply([CheckResult(A, Outcome.ERROR, "adapter exited with status 1")])
    assert result.outcome is Outcome.ERROR and "not masked" in result.reason
    assert not report_of(result).ok


def test_known_failures_file_that_is_not_utf8_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    path.write_bytes(b"known_failures:\n  - id: search.a\n    reason: caf\xe9\n")
    with pytest.raises(KnownFailuresError, match="not UTF-8"):
        load_known_failures(path)


def test_nothing_certified_is_not_ok() -> None:
    skipped = report_of(CheckResult(A, Outcome.SKIPPED, "target does not declare: web_search"))
    assert skipped.ok  # the model's own verdict only looks for failures ...
    assert not report_ok(skipped)  # ... the suite's also wants something certified
    assert nothing_certified(skipped) == "nothing was certified: every check skipped"
    assert summary(skipped).startswith("NOT OK (nothing was certified: every check skipped)")
    known = report_of(CheckResult(A, Outcome.KNOWN_FAILURE, "x"), CheckResult(B, Outcome.SKIPPED))
    assert not report_ok(known) and nothing_certified(known) == "nothing was certified: no check passed"
    mixed = report_of(CheckResult(A, Outcome.PASSED), CheckResult(B, Outcome.SKIPPED))
    assert report_ok(mixed) and summary(mixed) == "OK: 1 passed, 1 skipped"
    assert summary(mixed, ["unknown id"]).startswith("NOT OK")


def test_scrub_covers_every_target_field_and_key_looking_values() -> None:
    key = "sk-" + "0a1b2c3d" * 4
    details: dict[str, object] = {"k": "token=QWERTY12345678"}
    report = Report(
        "0.1.0",
        TargetInfo("implementation", f"adapter --api-key {key}", f"impl {key}", f"v-{key}", ("web_search", key)),
        (CheckResult(A, Outcome.FAILED, "sent Authorization: Bearer abcdef0123456789xyz", details),),
    )
    clean = scrub(report, [])
    text = repr(clean)
    assert key not in text and "abcdef0123456789xyz" not in text and "QWERTY12345678" not in text
    assert clean.target.capabilities == ("web_search", REDACTED)
    assert clean.results[0].reason == f"sent Authorization: Bearer {REDACTED}"
    assert scrub_text("run search.api.ori_question with 128 code points") == (
        "run search.api.ori_question with 128 code points"  # ordinary text is left alone
    )


def test_write_reports_raises_report_error_not_oserror(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="it is a directory"):
        check_report_paths(json_path=tmp_path)
    with pytest.raises(ReportError, match="cannot write the json report"):
        write_reports(sample(), json_path=tmp_path)


def test_run_secrets_scan_the_environment_once_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """print_line used to call default_secrets() (a scan of os.environ) for every line; a run now
    computes its secrets once (run_secrets) and passes them to every line and report."""
    import sys

    from dsweb_ref.certification import report as report_module

    env_secret = "ci-credential-value-9191"
    monkeypatch.setenv("SOME_CI_TOKEN", env_secret)
    calls: list[int] = []
    original = report_module.default_secrets

    def counting() -> list[str]:
        calls.append(1)
        return original()

    monkeypatch.setattr(report_module, "default_secrets", counting)
    secrets = report_module.run_secrets(["extra-run-secret-77"])
    leaky = CheckResult(A, Outcome.FAILED, f"saw {env_secret} and extra-run-secret-77")
    for _ in range(3):
        report_module.print_line(leaky, sys.stdout, secrets)
    assert scrub_text(f"x {env_secret}", secrets) == f"x {REDACTED}"
    write_reports(report_of(leaky), secrets=secrets, report_dir=tmp_path)
    assert calls == [1]
    out = capsys.readouterr().out
    assert env_secret not in out and "extra-run-secret-77" not in out and out.count(REDACTED) == 6
    assert all(env_secret not in p.read_text() for p in tmp_path.iterdir())
    # a plain list still gets the defaults, scanned for that call
    assert scrub_text(f"y {env_secret}") == f"y {REDACTED}" and calls == [1, 1]
