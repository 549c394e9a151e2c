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
        # dsweb_certify asserts by default: any failed/error/fixed-known-failure check fails the test,
        # and so does a run that certified nothing (every check skipped); jobs=4 runs up to four checks
        # at once, each on providers of its own (one target, and the factories' calls, per check lane)

    async def test_certified_async(dsweb_certify):       # inside a running event loop
        report = await dsweb_certify.run_async(my_search_factory)

The suite runs in its own event loop: called from a thread whose loop is running (an async test),
the synchronous form runs it in a worker thread and blocks until it is done; ``run_async`` runs it
on the caller's loop instead.

The seam's own multi-query tool runs on top of your provider, so what is certified is your
provider's wire behaviour plus the shared orchestration. Capabilities you do not declare are skipped.

Fixtures: ``dsweb_certify``; ``dsweb_cassette_dir`` (the cassettes this package ships, for replay);
the ``emulator`` fixtures come with the ``dsweb_emulator`` entry point. Heavy imports happen on
first use, so merely having the plugin installed costs a pytest session nothing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .._protocols import FetchProvider, SearchProvider
    from .known_failures import KnownFailures
    from .model import Report
    from .targets import InProcessTarget, TargetConfig

    SearchFactory = Callable[[TargetConfig], SearchProvider]
    FetchFactory = Callable[[TargetConfig], FetchProvider]

__all__ = [
    "Certify",
    "certify_providers",
    "certify_providers_async",
    "dsweb_cassette_dir",
    "dsweb_certify",
    "provider_target",
]

DEFAULT_CAPABILITIES = ("web_search", "search-api", "cancel")


def provider_target(
    search_provider: SearchFactory,
    fetch_provider: FetchFactory | None = None,
    *,
    capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
    name: str = "provider",
    version: str = "0",
) -> InProcessTarget:
    from .._service import ProviderSelection, WebService
    from ..tools.web_fetch import WebFetchTool
    from ..tools.web_search import SearchToolSettings, WebSearchTool
    from .targets import InProcessTarget, ToolPair

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


async def certify_providers_async(
    search_provider: SearchFactory,
    fetch_provider: FetchFactory | None = None,
    *,
    capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
    only: Sequence[str] | None = None,
    known_failures: KnownFailures | str | Path | None = None,
    name: str = "provider",
    version: str = "0",
    jobs: int = 1,
) -> Report:
    """Run the suite on the running event loop against the given provider factories. With ``jobs`` of 2
    or more, up to that many checks run at once, each on a target of its own (the factories are called
    once per such target, so they must not hand two targets one provider with per-call state)."""
    from .known_failures import load_known_failures
    from .suite import run_suite

    def target() -> InProcessTarget:
        return provider_target(search_provider, fetch_provider, capabilities=capabilities, name=name, version=version)

    if isinstance(known_failures, (str, Path)):
        known_failures = load_known_failures(known_failures)
    lanes = target if jobs >= 2 else None
    return await run_suite(target(), only=only, known_failures=known_failures, jobs=jobs, lanes=lanes)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def certify_providers(
    search_provider: SearchFactory,
    fetch_provider: FetchFactory | None = None,
    *,
    capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
    only: Sequence[str] | None = None,
    known_failures: KnownFailures | str | Path | None = None,
    name: str = "provider",
    version: str = "0",
    jobs: int = 1,
) -> Report:
    """Run the suite synchronously in a fresh event loop against the given provider factories; from a
    thread whose loop is running, in a worker thread (``asyncio.run`` cannot nest). ``jobs``: as for
    :func:`certify_providers_async`."""

    def run() -> Report:
        return asyncio.run(
            certify_providers_async(
                search_provider,
                fetch_provider,
                capabilities=capabilities,
                only=only,
                known_failures=known_failures,
                name=name,
                version=version,
                jobs=jobs,
            )
        )

    if not _loop_running():
        return run()
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="dsweb-certify") as pool:
        return pool.submit(run).result()


def _failures(report: Report) -> str:
    from .model import Outcome

    bad = [r for r in report.results if r.outcome in (Outcome.FAILED, Outcome.ERROR, Outcome.FIXED_KNOWN_FAILURE)]
    return "\n".join(f"  {r.outcome.value}: {r.check.id}: {r.reason}" for r in bad)


def _verify(report: Report) -> Report:
    from .report import report_ok, summary

    if not report_ok(report):
        raise AssertionError(f"dsweb certification: {summary(report)}\n{_failures(report)}")
    return report


class Certify:
    """The fixture's value: call it like :func:`certify_providers` (or await :meth:`run_async` like
    :func:`certify_providers_async`); ``check=False`` skips the assertion."""

    def __call__(
        self,
        search_provider: SearchFactory,
        fetch_provider: FetchFactory | None = None,
        *,
        check: bool = True,
        capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
        only: Sequence[str] | None = None,
        known_failures: KnownFailures | str | Path | None = None,
        jobs: int = 1,
    ) -> Report:
        report = certify_providers(
            search_provider, fetch_provider, capabilities=capabilities, only=only, known_failures=known_failures,
            jobs=jobs,
        )
        return _verify(report) if check else report

    async def run_async(
        self,
        search_provider: SearchFactory,
        fetch_provider: FetchFactory | None = None,
        *,
        check: bool = True,
        capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
        only: Sequence[str] | None = None,
        known_failures: KnownFailures | str | Path | None = None,
        jobs: int = 1,
    ) -> Report:
        report = await certify_providers_async(
            search_provider, fetch_provider, capabilities=capabilities, only=only, known_failures=known_failures,
            jobs=jobs,
        )
        return _verify(report) if check else report


@pytest.fixture
def dsweb_certify() -> Certify:
    return Certify()


@pytest.fixture
def dsweb_cassette_dir() -> Path:
    """The directory of cassettes this package ships (``<protocol>/<probe>.yaml``), for replay."""
    from ..replay.cassettes import default_cassette_dir

    return default_cassette_dir()
