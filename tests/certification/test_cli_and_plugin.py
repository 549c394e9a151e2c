"""`dsweb certify` exit codes and reports, and the pytest-plugin entry for provider packages."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.pytest_plugin import Certify, certify_providers
from dsweb_ref.certification.targets import TargetConfig
from dsweb_ref.cli import certify
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.settings import Settings

from .conftest import adapter_command


def dsweb_certify(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="dsweb")
    certify.register(parser.add_subparsers())
    args = parser.parse_args(["certify", *argv])
    code: int = args.func(args)
    return code


def test_certify_with_no_target_passes_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert dsweb_certify("--report-dir", str(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "PASS   search.batch.concurrent" in out and "OK:" in out
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["ok"] and data["target"]["name"] == "dsweb_ref"


def test_certify_stale_known_failure_exits_1(tmp_path: Path) -> None:
    known = tmp_path / "known.yaml"
    known.write_text("known_failures:\n  - id: search.merge.dedup\n    reason: was broken\n")
    junit = tmp_path / "j.xml"
    assert dsweb_certify("--only", "search.merge.dedup", "--known-failures", str(known), "--junit", str(junit)) == 1
    assert "fixed-known-failure" in junit.read_text()


def test_certify_adapter_known_failure_exits_0(tmp_path: Path) -> None:
    known = tmp_path / "known.yaml"
    known.write_text("known_failures:\n  - id: search.merge.round_robin\n    reason: concatenates\n")
    md = tmp_path / "m.md"
    code = dsweb_certify("--adapter", adapter_command("--break", "no-round-robin"), "--only", "search.merge",
                         "--known-failures", str(known), "--markdown", str(md))
    assert code == 0
    assert "| `search.merge.round_robin` | known-failure |" in md.read_text()


def test_certify_usage_errors_exit_2(tmp_path: Path) -> None:
    assert dsweb_certify("--only", "no.such.check") == 2
    assert dsweb_certify("--messages-base", "http://127.0.0.1:1") == 2


def search_api(config: TargetConfig, *, honour_switch: bool = True) -> DeepSeekSearchApi:
    values: dict[str, object] = {"deepseek_api.base_url": config.tools_base, "credentials.api_key_env": "KEY"}
    if honour_switch:
        values["deepseek_api.send_original_question"] = config.send_original_question
    settings = Settings().updated(values)
    return DeepSeekSearchApi(lambda: settings, environ={"KEY": config.api_key})


def search_api_ignoring_switch(config: TargetConfig) -> DeepSeekSearchApi:
    return search_api(config, honour_switch=False)


def test_plugin_certifies_a_provider_class() -> None:
    report = certify_providers(search_api, capabilities=("web_search", "search-api", "cancel"))
    assert report.ok
    got = {r.check.id: r.outcome for r in report.results}
    assert got["search.batch.concurrent"] is Outcome.PASSED
    assert got["fetch.api.mapping"] is Outcome.SKIPPED


def test_plugin_fixture_asserts_on_failure() -> None:
    with pytest.raises(AssertionError, match=r"search\.api\.ori_question"):
        Certify()(search_api_ignoring_switch, capabilities=("web_search", "search-api", "messages-search"),
                  only=["search.api.ori_question", "search.messages"])
