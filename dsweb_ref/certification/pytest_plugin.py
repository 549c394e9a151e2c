"""Run the certification checks against your own provider classes inside your own pytest run.

Enable it through the ``pytest11`` entry point (or
``pytest_plugins = ["dsweb_ref.certification.pytest_plugin"]``) and use the ``dsweb_certify`` fixture.
Each factory receives the suite's
:class:`~dsweb_ref.certification.targets.TargetConfig` (emulator addresses, test key, caps) and
returns a provider talking to those addresses::

    def test_certified(dsweb_certify):
        report = dsweb_certify(
            search_provider=lambda cfg: MySearch(base_url=cfg.tools_base, api_key=cfg.api_key),
            capabilities=("web_search", "search-api", "cancel"),
        )
        # dsweb_certify asserts by default: any failed/error/fixed-known-failure check fails the test

The seam's own multi-query tool runs on top of your provider, so what is certified is your
provider's wire behaviour plus the shared orchestration. Capabilities you do not declare are skipped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from .._protocols import FetchProvider, SearchProvider
from .._service import ProviderSelection, WebService
from ..tools.web_fetch import WebFetchTool
from ..tools.web_search import SearchToolSettings, WebSearchTool
from .known_failures import KnownFailures, load_known_failures
from .model import Outcome, Report
from .report import summary
from .suite import run_suite
from .targets import InProcessTarget, TargetConfig, ToolPair

__all__ = ["Certify", "certify_providers", "dsweb_certify", "provider_target"]

SearchFactory = Callable[[TargetConfig], SearchProvider]
FetchFactory = Callable[[TargetConfig], FetchProvider]


def provider_target(
    search_provider: SearchFactory,
    fetch_provider: FetchFactory | None = None,
    *,
    capabilities: Sequence[str] = ("web_search", "search-api", "cancel"),
    name: str = "provider",
    version: str = "0",
) -> InProcessTarget:
    def build(config: TargetConfig) -> ToolPair:
        search = search_provider(config)
        fetch = fetch_provider(config) if fetch_provider else None
        selection = ProviderSelection(search=search.id, fetch=fetch.id if fetch else None)
        web = WebService(lambda: selection)
        web.register_search(search)
        if fetch is not None:
            web.register_fetch(fetch)
        tool_settings = SearchToolSettings(config.search_max_queries, config.search_max_results)
        return ToolPair(WebSearchTool(web, tool_settings), WebFetchTool(web) if fetch else None)

    return InProcessTarget(build, name=name, version=version, capabilities=tuple(capabilities))


def certify_providers(
    search_provider: SearchFactory,
    fetch_provider: FetchFactory | None = None,
    *,
    capabilities: Sequence[str] = ("web_search", "search-api", "cancel"),
    only: Sequence[str] | None = None,
    known_failures: KnownFailures | str | Path | None = None,
    name: str = "provider",
    version: str = "0",
) -> Report:
    """Run the suite (synchronously, in a fresh event loop) against the given provider factories."""
    target = provider_target(search_provider, fetch_provider, capabilities=capabilities, name=name, version=version)
    if isinstance(known_failures, (str, Path)):
        known_failures = load_known_failures(known_failures)
    return asyncio.run(run_suite(target, only=only, known_failures=known_failures))


def _failures(report: Report) -> str:
    bad = [r for r in report.results if r.outcome in (Outcome.FAILED, Outcome.ERROR, Outcome.FIXED_KNOWN_FAILURE)]
    return "\n".join(f"  {r.outcome.value}: {r.check.id}: {r.reason}" for r in bad)


class Certify:
    """The fixture's value: call it like :func:`certify_providers`; ``check=False`` skips the assertion."""

    def __call__(
        self,
        search_provider: SearchFactory,
        fetch_provider: FetchFactory | None = None,
        *,
        check: bool = True,
        capabilities: Sequence[str] = ("web_search", "search-api", "cancel"),
        only: Sequence[str] | None = None,
        known_failures: KnownFailures | str | Path | None = None,
    ) -> Report:
        report = certify_providers(
            search_provider, fetch_provider, capabilities=capabilities, only=only, known_failures=known_failures
        )
        if check and not report.ok:
            raise AssertionError(f"dsweb certification: {summary(report)}\n{_failures(report)}")
        return report


@pytest.fixture
def dsweb_certify() -> Certify:
    return Certify()
