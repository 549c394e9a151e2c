"""Helpers for the certification suite's own tests: run the suite synchronously, start adapters,
run `dsweb certify` in-process."""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.adapter_protocol import CAPABILITIES
from dsweb_ref.certification.model import Outcome, Report
from dsweb_ref.certification.suite import default_jobs, run_suite
from dsweb_ref.certification.targets import (
    AdapterTarget,
    InProcessTarget,
    Target,
    TargetConfig,
    ToolPair,
    reference_settings,
)
from dsweb_ref.cli import certify
from dsweb_ref.replay._bases import credential_environ
from dsweb_ref.runtime import build_runtime
from dsweb_ref.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_ADAPTER = ROOT / "tests" / "fixtures" / "example_adapter.py"


def adapter_command(*args: str) -> str:
    return shlex.join([sys.executable, str(EXAMPLE_ADAPTER), *args])


def adapter(*args: str, hello_timeout: float = 20.0, call_timeout: float = 30.0) -> AdapterTarget:
    return AdapterTarget(adapter_command(*args), hello_timeout=hello_timeout, call_timeout=call_timeout)


def script_command(body: str, *args: str) -> str:
    """An adapter written inline: ``python -c BODY ARGS``."""
    return shlex.join([sys.executable, "-c", body, *args])


def run(target: Target, only: Sequence[str] | None = None, *, lanes: Callable[[], Target] | None = None) -> Report:
    """Run the suite; with ``lanes`` (a factory of targets like ``target``), checks run side by side."""
    return asyncio.run(run_suite(target, only=only, lanes=lanes, jobs=default_jobs() if lanes else 1))


def outcomes(report: Report) -> dict[str, Outcome]:
    return {r.check.id: r.outcome for r in report.results}


def reference_variant(
    name: str,
    *,
    tweak: Callable[[TargetConfig, Settings], Settings] | None = None,
    wrap: Callable[[Any], Any] | None = None,
    capabilities: tuple[str, ...] = CAPABILITIES,
) -> InProcessTarget:
    """The reference configured as ``configure`` says, then bent into a wrong implementation: ``tweak``
    changes its settings, ``wrap`` its web_search tool (an object with the tool's ``execute``)."""

    def build(config: TargetConfig) -> ToolPair:
        settings = reference_settings(config)
        if tweak is not None:
            settings = tweak(config, settings)
        runtime = build_runtime(lambda: settings, environ=credential_environ(config.api_key))
        search = runtime.search_tool()
        return ToolPair(search=wrap(search) if wrap is not None else search, fetch=runtime.fetch_tool())

    return InProcessTarget(build, name=f"dsweb_ref+{name}", version="test", capabilities=capabilities)


def failed_checks(target: Target, only: Sequence[str]) -> set[str]:
    """Run ``only`` against ``target``: the ids that failed (none may error or be skipped)."""
    report = run(target, only)
    unexpected = [(r.check.id, r.reason) for r in report.results if r.outcome in (Outcome.ERROR, Outcome.SKIPPED)]
    assert not unexpected, unexpected
    return {check_id for check_id, o in outcomes(report).items() if o is Outcome.FAILED}


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


@pytest.fixture
def fresh_forms() -> Iterator[None]:
    """The scrubber keeps each key's patterns (lru_cache): a reading of the code that builds them must build them
    anew, and must not leave its own behind for the tests after it."""
    _secrets._forms.cache_clear()
    _secrets._piece_forms.cache_clear()
    yield
    _secrets._forms.cache_clear()
    _secrets._piece_forms.cache_clear()
