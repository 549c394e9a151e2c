"""scripts/adapter_minimal.py, the adapter README tells people to copy: short, built only on what a
user of dsweb_ref would import, and certified for the profiles it claims."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dsweb_ref.cli import main

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = ROOT / "scripts" / "adapter_minimal.py"
PUBLIC = {"dsweb_ref", "dsweb_ref.runtime", "dsweb_ref.settings", "dsweb_ref.tools",
          "dsweb_ref.certification.adapter_protocol"}
EXAMPLE = ROOT / "tests" / "fixtures" / "example_adapter.py"


def test_it_reads_in_one_sitting() -> None:
    assert len(ADAPTER.read_text(encoding="utf-8").splitlines()) <= 250


def test_it_imports_only_public_dsweb_ref_modules() -> None:
    tree = ast.parse(ADAPTER.read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    ours = {m for m in modules if m.split(".")[0] == "dsweb_ref"}
    assert ours and ours <= PUBLIC, ours - PUBLIC


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_it_certifies_for_seed_000_and_the_search_api(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    code = main(["certify", "--adapter", f"{sys.executable} {ADAPTER}", "--profile", "seed-000-web-search",
                 "--profile", "seed-001-search-api", "--json", str(report)])
    verdicts = {p["name"]: p for p in json.loads(report.read_text(encoding="utf-8"))["profiles"]}
    assert code == 0, verdicts
    assert verdicts["seed-000-web-search"]["certified"] and verdicts["seed-001-search-api"]["certified"]


@pytest.mark.parametrize("adapter", [ADAPTER, EXAMPLE], ids=["minimal", "example"])
@pytest.mark.parametrize("stdin", ["/dev/null", "a file"])
def test_it_reads_stdin_that_is_not_a_pipe_and_ends_at_its_end(adapter: Path, stdin: str, tmp_path: Path) -> None:
    # catches: watching stdin on the loop whatever it is (epoll refuses /dev/null and files: the adapter
    # then waited for ever, run by hand with its input redirected)
    lines = ['{"id": 1, "method": "hello"}', '{"id": 2, "method": "shutdown"}']
    path = Path("/dev/null") if stdin == "/dev/null" else tmp_path / "requests.jsonl"
    if stdin != "/dev/null":
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with path.open("rb") as source:
        done = subprocess.run([sys.executable, str(adapter)], stdin=source, capture_output=True, timeout=60,
                              check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == ([] if stdin == "/dev/null" else [1, 2]), answers
