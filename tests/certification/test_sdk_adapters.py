"""Issue 24 item 3: an implementation built on an official SDK with strict parsing certifies for its
profile through `dsweb certify --adapter ... --profile ...` (it failed three checks for the suite's
own fault before: scripted answers the SDK's types reject)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from .conftest import ROOT, dsweb_certify, json_outcomes, json_report

MESSAGES_ADAPTER = ROOT / "tests" / "certification" / "sdk_messages_adapter.py"


def test_anthropic_sdk_adapter_with_strict_parsing_is_certified_for_messages_search(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    command = shlex.join([sys.executable, str(MESSAGES_ADAPTER)])
    code = dsweb_certify("--adapter", command, "--profile", "seed-001-messages", "--json", str(path))
    data = json_report(path)
    outcomes = json_outcomes(data)
    assert code == 0, {i: o for i, o in outcomes.items() if o != "passed"}
    assert "search.messages.mapping" in outcomes and set(outcomes.values()) == {"passed"}
    verdicts = {v["name"]: v["certified"] for v in data["profiles"]}
    assert verdicts["seed-001-messages"] is True


STANDALONE_ADAPTER = ROOT / "tests" / "certification" / "sdk_standalone_adapter.py"


def test_openai_and_anthropic_sdk_standalone_adapter_is_certified_for_the_standalone_search(tmp_path: Path) -> None:
    """The openai SDK serves only the Responses half of seed 003's standalone search (no DeepSeek
    Search/Fetch API type exists in it); the Messages half is the anthropic SDK's."""
    path = tmp_path / "report.json"
    command = shlex.join([sys.executable, str(STANDALONE_ADAPTER)])
    code = dsweb_certify("--adapter", command, "--profile", "seed-003-standalone", "--json", str(path))
    outcomes = json_outcomes(json_report(path))
    assert code == 0 and set(outcomes.values()) == {"passed"}, {i: o for i, o in outcomes.items() if o != "passed"}
