"""scripts/adapter_node.mjs: an adapter with its own web_search implementation in another language
(Node's standard library only, written from the adapter protocol page), certified for the profiles
it claims. It proves the protocol page is enough to build a certifiable implementation from."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dsweb_ref.cli import main

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = ROOT / "scripts" / "adapter_node.mjs"


def _node() -> str:
    found = shutil.which("node")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed")
        pytest.skip("node is not installed")
    return found


def test_it_uses_nothing_but_node_itself() -> None:
    imports = [line for line in ADAPTER.read_text(encoding="utf-8").splitlines() if line.startswith("import ")]
    assert imports and all('from "node:' in line for line in imports), imports


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_it_certifies_for_seed_000_and_the_search_api(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    code = main(["certify", "--adapter", f"{_node()} {ADAPTER}", "--profile", "seed-000-web-search",
                 "--profile", "seed-001-search-api", "--json", str(report)])
    data = json.loads(report.read_text(encoding="utf-8"))
    verdicts = {p["name"]: p for p in data["profiles"]}
    failing = [c["id"] + ": " + c["reason"] for c in data["checks"] if c["outcome"] not in ("passed", "skipped")]
    assert code == 0, failing
    assert verdicts["seed-000-web-search"]["certified"] and verdicts["seed-001-search-api"]["certified"]
