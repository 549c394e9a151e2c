"""Helpers for the certification suite's own tests: run the suite synchronously, start adapters,
run `dsweb certify` in-process."""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dsweb_ref.certification.model import Outcome, Report
from dsweb_ref.certification.suite import run_suite
from dsweb_ref.certification.targets import AdapterTarget, Target
from dsweb_ref.cli import certify

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_ADAPTER = ROOT / "scripts" / "example_adapter.py"


def adapter_command(*args: str) -> str:
    return shlex.join([sys.executable, str(EXAMPLE_ADAPTER), *args])


def adapter(*args: str, hello_timeout: float = 20.0, call_timeout: float = 30.0) -> AdapterTarget:
    return AdapterTarget(adapter_command(*args), hello_timeout=hello_timeout, call_timeout=call_timeout)


def script_command(body: str, *args: str) -> str:
    """An adapter written inline: ``python -c BODY ARGS``."""
    return shlex.join([sys.executable, "-c", body, *args])


def run(target: Target, only: Sequence[str] | None = None) -> Report:
    return asyncio.run(run_suite(target, only=only))


def outcomes(report: Report) -> dict[str, Outcome]:
    return {r.check.id: r.outcome for r in report.results}


def failed_ids(report: Report) -> set[str]:
    return {r.check.id for r in report.results if r.outcome is not Outcome.PASSED}


def dsweb_certify(*argv: str) -> int:
    """`dsweb certify ARGV` in this process (the command's own parser and code path); its exit code."""
    parser = argparse.ArgumentParser(prog="dsweb")
    certify.register(parser.add_subparsers())
    args = parser.parse_args(["certify", *argv])
    code: int = args.func(args)
    return code


def json_report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def json_outcomes(data: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["outcome"] for c in data["checks"]}
