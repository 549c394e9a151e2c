"""`dsweb certify` as a newcomer and a CI job see it: the output opens with what is certified and ends
with the verdict and where the reports went; README's GitHub Actions job runs as written."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from dsweb_ref.cli import main
from dsweb_ref.cli._certify_text import opening

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = shlex.join([sys.executable, str(ROOT / "tests" / "fixtures" / "example_adapter.py")])


def _lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_reference_run_opens_with_target_and_emulator_and_ends_with_verdict_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["certify", "--only", "search.merge.dedup", "--report-dir", str(tmp_path)]) == 0
    lines = _lines(capsys)
    assert lines[0].startswith("dsweb certify ")
    assert lines[1].startswith("  target:    the reference implementation (dsweb_ref ")
    assert lines[2] == "  profiles:  all checks (no --profile)"
    assert "  emulator:  embedded, a fresh one per check on 127.0.0.1" in lines[4]
    assert any(line.startswith("PASS   search.merge.dedup") for line in lines)
    assert lines[-2] == "verdict:   CERTIFIED (OK: 1 passed); exit 0"
    reports = lines[-1].removeprefix("reports:   ").split(", ")
    assert sorted(Path(r).name for r in reports) == ["junit.xml", "report.html", "report.json", "report.md"]
    assert all(Path(r).is_file() for r in reports)


def test_a_failing_adapter_run_says_not_certified_and_that_no_report_was_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    adapter = f"{ADAPTER} --break duplicate-url"
    assert main(["certify", "--adapter", adapter, "--only", "search.merge.dedup"]) == 1
    lines = _lines(capsys)
    assert lines[1] == f"  target:    adapter {adapter!r} over the JSON-lines adapter protocol"
    assert lines[-2].startswith("verdict:   NOT CERTIFIED (NOT OK") and lines[-2].endswith("exit 1")
    assert lines[-1] == "reports:   none written (--report-dir DIR writes all four)"


def test_an_endpoint_run_names_the_cassettes_and_no_emulator(capsys: pytest.CaptureFixture[str]) -> None:
    main(["certify", "--cassettes", str(ROOT / "cassettes"), "--only", "endpoint.tools.search"])
    lines = _lines(capsys)
    assert lines[1] == f"  target:    endpoint cassettes in {ROOT / 'cassettes'} (offline replay)"
    assert "  emulator:  none (the endpoint itself answers)" in lines[:6]
    assert lines[-2].startswith("verdict:   ")


def test_the_opening_names_profiles_and_seeds_when_the_options_exist() -> None:
    args = argparse.Namespace(
        adapter=None, cassettes=None, only=None, known_failures="k.yaml", profile=["core", "fetch"], seed="001"
    )
    lines = opening(args, is_endpoint=False)
    assert "  profiles:  core, fetch" in lines and "  seeds:     001" in lines and "  known failures: k.yaml" in lines


def _readme_workflow() -> dict[str, Any]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Certify in CI", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    workflow: dict[str, Any] = yaml.safe_load(block)
    return workflow


@pytest.mark.slow
def test_readme_ci_workflow_certifies_an_adapter_and_publishes_its_reports(tmp_path: Path) -> None:
    workflow = _readme_workflow()
    assert workflow.get("on", workflow.get(True)) == ["push", "pull_request"]  # YAML 1.1 reads `on` as True
    job = workflow["jobs"]["certify"]
    steps = job["steps"]
    install = next(s for s in steps if s.get("name") == "Install dsweb_ref")
    assert install["run"].startswith('pip install "dsweb_ref @ git+')  # no package index serves it
    certify = next(s for s in steps if "dsweb certify" in s.get("run", ""))
    publish = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert publish["if"] == "always()"
    published = publish["with"]["path"].split()
    assert {"dsweb-report/junit.xml", "dsweb-report/report.html"} <= set(published)

    # Run the job's certify step as written, in a provider's checkout with a known failure listed,
    # the example adapter standing in for the provider's (it concatenates instead of round-robin).
    (tmp_path / "known_failures.yaml").write_text(
        "known_failures:\n  - id: search.merge.round_robin\n    reason: we concatenate\n"
        "  - id: search.differential.merge\n    reason: we concatenate\n",  # whole values are compared there too
        encoding="utf-8",
    )
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])  # where `dsweb` is
    env = {**os.environ, **job["env"], "PATH": path, "ADAPTER": f"{ADAPTER} --break no-round-robin"}
    done = subprocess.run(["bash", "-ec", certify["run"]], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "KNOWN  search.merge.round_robin" in done.stdout and "verdict:   CERTIFIED" in done.stdout
    assert all((tmp_path / p).is_file() for p in published)
    assert "search.merge.round_robin" in (tmp_path / "dsweb-report" / "junit.xml").read_text(encoding="utf-8")
