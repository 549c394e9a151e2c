"""Endpoint certification: which DeepSeek web protocols and routes an endpoint serves, and
whether each answers as the contract says (seed 001).

Each check runs one named probe (see :mod:`.probes`), either live against the given bases with
the given key, or offline by replaying that probe's cassette from ``cassette_dir``.

Route discovery, as decided: a protocol whose first probe (``messages.search`` for Messages,
``search-api.basic`` for Search/Fetch, which share one base) answers HTTP 404 is *not served*.
Every check of that protocol is then SKIPPED with the reason ``route not served (404)``: a
gateway that serves Messages web search and has no ``/v1/tools`` routes is a legitimate
deployment (seed 001 keeps Messages search for it), so its missing routes are reported, not
failed. A base that was not given skips its checks with ``no <protocol> base given``; offline, a
missing cassette skips its check with ``no cassette <path>``. A check that cannot run (timeout,
unmatched replay, crash) is ERROR; a served route that answers wrongly is FAILED.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._exceptions import WebError
from .._types import FetchResult, SearchResult
from .model import Check, CheckResult, Outcome, TargetInfo
from .probes import Probe, ProbeContext, ProbeRun, RateLimiter, get_probe
from .record import replay_context

__all__ = ["ENDPOINT_CHECKS", "MAX_RPS", "NOT_SERVED", "EndpointCheck", "certify_endpoint"]

MAX_RPS = 4.0  # live request starts per second: under the account-wide 5 QPS of seed 001
NOT_SERVED = "route not served (404)"
_LIVE_FETCH_URL = "https://api-docs.deepseek.com/"  # used only when the search check found no URL


Verdict = Callable[[ProbeRun], str | None]  # None: passed; otherwise the failure reason


def _status(run: ProbeRun) -> str:
    return ", ".join(str(e.status) for e in run.exchanges) or "none"


def _outcome(run: ProbeRun) -> object:
    return run.outcomes[0] if run.outcomes else None


def _sources(minimum: int) -> Verdict:
    def verdict(run: ProbeRun) -> str | None:
        result = _outcome(run)
        if not isinstance(result, SearchResult):
            return f"expected search results, got {_describe(result)} (HTTP {_status(run)})"
        if len(result.sources) < minimum:
            return f"expected at least {minimum} source(s), got {len(result.sources)}"
        return None

    return verdict


def _status_is(*expected: int) -> Verdict:
    def verdict(run: ProbeRun) -> str | None:
        statuses = {e.status for e in run.exchanges}
        if not statuses or not statuses <= set(expected):
            return f"expected HTTP {'/'.join(map(str, expected))}, got {_status(run)}"
        if not isinstance(_outcome(run), WebError):
            return "the provider did not report the rejection as an error"
        return None

    return verdict


def _fetched(run: ProbeRun) -> str | None:
    result = _outcome(run)
    if not isinstance(result, FetchResult):
        return f"expected a fetched page, got {_describe(result)} (HTTP {_status(run)})"
    if not result.body.content.strip():
        return "the fetched Markdown body is empty"
    return None


def _fetch_failure(run: ProbeRun) -> str | None:
    statuses = [e.status for e in run.exchanges]
    if not statuses or any(s < 400 or s in (401, 402, 429) for s in statuses):
        return f"expected a retrieval failure (404, or another non-auth error status), got {_status(run)}"
    return None


def _describe(value: object) -> str:
    if isinstance(value, WebError):
        return f"error {value.code}: {value.message}"
    return type(value).__name__


@dataclass(frozen=True)
class EndpointCheck:
    check: Check
    probe: str
    verdict: Verdict

    @property
    def protocol(self) -> str:
        return "messages" if self.probe.startswith("messages.") else "tools"


def _check(cid: str, description: str, capability: str) -> Check:
    return Check(cid, description, "001", capability)


# Order matters: the first check of each protocol discovers whether its routes are served.
ENDPOINT_CHECKS: tuple[EndpointCheck, ...] = (
    EndpointCheck(
        _check(
            "endpoint.messages.web_search",
            "Messages with the web_search server tool returns structured sources",
            "messages.web_search",
        ),
        "messages.search",
        _sources(1),
    ),
    EndpointCheck(
        _check(
            "endpoint.auth.rejects_bad_key", "Messages rejects a wrong API key with HTTP 401", "messages.web_search"
        ),
        "messages.auth-invalid",
        _status_is(401),
    ),
    EndpointCheck(
        _check("endpoint.tools.search", "POST {tools}/search returns results for a plain query", "tools.search"),
        "search-api.basic",
        _sources(1),
    ),
    EndpointCheck(
        _check("endpoint.tools.fetch", "POST {tools}/fetch returns a page as Markdown", "tools.fetch"),
        "fetch-api.success",
        _fetched,
    ),
    EndpointCheck(
        _check("endpoint.tools.auth.rejects_bad_key", "Search rejects a wrong API key with HTTP 401", "tools.search"),
        "search-api.auth-invalid",
        _status_is(401),
    ),
    EndpointCheck(
        _check(
            "endpoint.search.empty_results_ok",
            "a query matching nothing answers HTTP 200 (results may be empty)",
            "tools.search",
        ),
        "search-api.empty",
        _sources(0),
    ),
    EndpointCheck(
        _check(
            "endpoint.search.query_limit",
            "a 129-character query is rejected with HTTP 400, not truncated",
            "tools.search",
        ),
        "search-api.too-long",
        _status_is(400),
    ),
    EndpointCheck(
        _check(
            "endpoint.search.operators",
            "a query with site:/lang:/after:/-term/phrase operators is accepted",
            "tools.search",
        ),
        "search-api.operators",
        _sources(0),
    ),
    EndpointCheck(
        _check("endpoint.search.ori_question", "a 128-character non-ASCII ori_question is accepted", "tools.search"),
        "search-api.ori-question-cut",
        _sources(0),
    ),
    EndpointCheck(
        _check(
            "endpoint.fetch.unavailable_page", "an unavailable page is a retrieval failure (HTTP 404)", "tools.fetch"
        ),
        "fetch-api.not-found",
        _fetch_failure,
    ),
)
_DISCOVERY = {"messages": "messages.search", "tools": "search-api.basic"}


@dataclass
class _Runner:
    messages_base: str | None
    tools_base: str | None
    cassette_dir: Path | None
    api_key: str | None
    timeout_s: float
    limiter: RateLimiter | None = None

    def base_for(self, protocol: str) -> str | None:
        return self.messages_base if protocol == "messages" else self.tools_base

    async def run(self, probe: Probe, params: dict[str, Any]) -> ProbeRun:
        if self.cassette_dir is not None:
            cassette = self.cassette_dir / probe.cassette
            ctx, player = replay_context(probe, cassette)
            with player.use_cassette(str(cassette)):
                async with asyncio.timeout(self.timeout_s):
                    return await probe.run(ctx)
        if self.limiter is None:
            self.limiter = RateLimiter(MAX_RPS)
        ctx = ProbeContext(
            self.messages_base, self.tools_base, self.api_key or "", params, self.timeout_s, self.limiter
        )
        async with asyncio.timeout(self.timeout_s + 5.0):
            return await probe.run(ctx)


async def _certify(runner: _Runner) -> tuple[list[CheckResult], set[str]]:
    results: list[CheckResult] = []
    served: set[str] = set()
    skip: dict[str, str] = {}
    found_url: str | None = None
    offline = runner.cassette_dir is not None
    for item in ENDPOINT_CHECKS:
        check, probe = item.check, get_probe(item.probe)
        started = time.perf_counter()
        details: dict[str, Any] = {"probe": probe.id}

        def done(
            outcome: Outcome,
            reason: str = "",
            *,
            check: Check = check,
            started: float = started,
            details: dict[str, Any] = details,
        ) -> None:
            elapsed = time.perf_counter() - started
            results.append(CheckResult(check, outcome, reason, dict(details), elapsed))

        if item.protocol in skip:
            done(Outcome.SKIPPED, skip[item.protocol])
            continue
        if not offline and runner.base_for(item.protocol) is None:
            skip[item.protocol] = f"no {item.protocol} base given"
            done(Outcome.SKIPPED, skip[item.protocol])
            continue
        if offline:
            assert runner.cassette_dir is not None
            details["cassette"] = probe.cassette
            if not (runner.cassette_dir / probe.cassette).is_file():
                done(Outcome.SKIPPED, f"no cassette {probe.cassette}")
                continue
        elif runner.api_key is None:
            done(Outcome.ERROR, "no API key given for a live run")
            continue
        params = dict(probe.params)
        if probe.id == "fetch-api.success" and not offline:
            params["url"] = found_url or _LIVE_FETCH_URL
        try:
            run = await runner.run(probe, params)
        except TimeoutError:
            done(Outcome.ERROR, f"timed out after {runner.timeout_s}s")
            continue
        except Exception as exc:  # replay mismatch, transport crash: the check could not run
            done(Outcome.ERROR, f"{type(exc).__name__}: {exc}"[:500])
            continue
        details["statuses"] = [e.status for e in run.exchanges]
        if probe.id == _DISCOVERY[item.protocol]:
            if [e.status for e in run.exchanges] == [404]:
                skip[item.protocol] = NOT_SERVED
                done(Outcome.SKIPPED, NOT_SERVED)
                continue
            if run.exchanges:
                served.add(item.protocol)
        result = _outcome(run)
        if probe.id == "search-api.basic" and isinstance(result, SearchResult) and result.sources:
            found_url = result.sources[0].url
        reason = item.verdict(run)
        done(Outcome.PASSED if reason is None else Outcome.FAILED, reason or "")
    return results, served


def certify_endpoint(
    *,
    messages_base: str | None,
    tools_base: str | None,
    cassette_dir: Path | None = None,
    api_key: str | None = None,
    timeout_s: float = 30.0,
) -> tuple[TargetInfo, list[CheckResult]]:
    """Run the endpoint checks live (bases + ``api_key``) or offline (``cassette_dir``)."""
    runner = _Runner(messages_base, tools_base, Path(cassette_dir) if cassette_dir else None, api_key, timeout_s)
    results, served = asyncio.run(_certify(runner))
    capabilities: list[str] = []
    if "messages" in served:
        capabilities.append("messages.web_search")
    if "tools" in served:
        capabilities += ["tools.search", "tools.fetch"]
    if runner.cassette_dir is not None:
        how = f"replayed from cassettes in {runner.cassette_dir}"
    else:
        how = f"live: messages={messages_base or '-'} tools={tools_base or '-'}"
    target = TargetInfo(
        kind="endpoint",
        description=f"DeepSeek web API endpoint ({how})",
        name=messages_base or tools_base or str(runner.cassette_dir or ""),
        capabilities=tuple(capabilities),
    )
    return target, results
