"""The SSRF checks (seed 002) over the adapter protocol's test network: the reference and the
example adapter pass; each SSRF break mode of the example adapter fails exactly its check."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from dsweb_ref.certification.checks import REGISTRY
from dsweb_ref.certification.sandbox import PROXY_VARIABLES, SandboxNetwork
from dsweb_ref.certification.targets import (
    InProcessTarget,
    TargetConfig,
    ToolPair,
    reference_settings,
    reference_target,
)
from dsweb_ref.replay._bases import credential_environ
from dsweb_ref.runtime import build_runtime

from ._profile_breaks import assert_break_fails_exactly, certify_only
from .conftest import run
from .test_breaks_end_to_end import example_adapter_module

SSRF_CHECKS = {
    "ssrf.resolve.special_ranges",
    "ssrf.resolve.mixed_answers",
    "ssrf.resolve.rebinding",
    "ssrf.redirect.private",
    "ssrf.proxy.ignored",
    "ssrf.caps.body",
    "ssrf.caps.redirects",
    "ssrf.deadline",
}
BREAKS = {
    "ssrf-no-unwrap": ("ssrf.resolve.special_ranges", "nat64-loopback"),
    "ssrf-first-answer-only": ("ssrf.resolve.mixed_answers", "dead-public-then-private"),
    "ssrf-re-resolve": ("ssrf.resolve.rebinding", "a later lookup's answer"),
    "ssrf-redirect-unchecked": ("ssrf.redirect.private", "301-literal"),
}


def test_the_reference_passes_every_ssrf_check_in_process() -> None:
    report = run(reference_target(), only=sorted(SSRF_CHECKS))
    assert {r.check.id: r.outcome.value for r in report.results} == dict.fromkeys(SSRF_CHECKS, "passed")


def test_ssrf_checks_cite_seed_002_and_carry_case_tables() -> None:
    for check_id in SSRF_CHECKS:
        spec = REGISTRY[check_id]
        assert spec.check.seed == "002" and spec.rule.startswith("Seed 002:")
        assert spec.cases and all(case.catches for case in spec.cases)
        assert spec.requires == ("web_fetch", "ssrf-test-mode")


def test_an_adapter_without_test_mode_skips_them(tmp_path: Path) -> None:
    code, _data, outcomes = certify_only("ssrf", tmp_path, "--without", "ssrf-test-mode")
    # Skipped, never passed (and a run where everything skipped certifies nothing).
    assert code == 1 and set(outcomes.values()) == {"skipped"}


@pytest.mark.parametrize("mode", sorted(BREAKS))
def test_each_ssrf_break_fails_exactly_its_check(mode: str, tmp_path: Path) -> None:
    assert_break_fails_exactly("ssrf", mode, *BREAKS[mode], tmp_path)


def test_the_example_adapter_passes_every_ssrf_check(tmp_path: Path) -> None:
    code, _data, outcomes = certify_only("ssrf", tmp_path)
    assert code == 0 and outcomes == dict.fromkeys(SSRF_CHECKS, "passed")


def test_an_in_process_target_runs_with_the_proxy_traps_in_its_environment_and_gets_it_back() -> None:
    seen: dict[str, str | None] = {}
    target = reference_target()
    before = {name: os.environ.get(name) for name in (*PROXY_VARIABLES, "NO_PROXY")}
    target.use_environment({"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1"})
    seen.update(HTTP_PROXY=os.environ.get("HTTP_PROXY"), NO_PROXY=os.environ.get("NO_PROXY"))
    asyncio.run(target.close())
    assert seen == {"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1"}
    assert {name: os.environ.get(name) for name in before} == before


def test_an_in_process_fetcher_that_honours_proxy_variables_is_caught_in_process() -> None:
    """The in-process path is no blind spot: the run's proxy variables reach the process environment."""
    broken: Any = example_adapter_module()

    def build(config: TargetConfig) -> ToolPair:
        settings = reference_settings(config)
        network = SandboxNetwork.from_json(config.test_network)
        http = broken.sandboxed_fetch("ssrf-env-proxy", settings, network) if network is not None else None
        runtime = build_runtime(lambda: settings, environ=credential_environ(config.api_key), http_fetch=http)
        return ToolPair(search=runtime.search_tool(), fetch=runtime.fetch_tool())

    report = run(InProcessTarget(build, name="proxied", version="0"), only=["ssrf.proxy.ignored"])
    (result,) = report.results
    assert result.outcome.value == "failed" and "the fetch went through the proxy named by" in result.reason
