"""The frame every check runs in: a registry entry, a context with a fresh emulator, and helpers.

A check is an ``async def`` taking a :class:`CheckContext`; it raises :class:`CheckFailed` when
the implementation misbehaves. Blocking emulator waits (gates, the log) run in a worker thread,
since an in-process target shares the suite's event loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import re
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, TypeVar

from ..._exceptions import WebError
from ...emulator import Emulator, Fault, RequestRecord
from ...emulator.faults import RouteName
from ...schemas import validate
from ..cases import Case
from ..model import Check
from ..profiles import opt_in_profile
from ..sandbox import ProxyTraps
from ..targets import CallOutcome, Hello, PendingCall, Probe, Target, TargetConfig, TargetError

__all__ = [
    "ABORTED",
    "CALL_TIMEOUT",
    "INVALID_ARGUMENTS",
    "OPT_IN_DEFAULTS",
    "PROTOCOL_LABELS",
    "PROVIDER_ERROR",
    "REGISTRY",
    "CheckContext",
    "CheckFailed",
    "CheckSpec",
    "Process",
    "Slot",
    "check",
    "expect_error",
    "expect_schema",
    "expect_success",
    "lone_surrogates",
    "require",
    "unless_refused",
]

# The configure keys of seed 001's opt-in capabilities, at the defaults every target must honour.
OPT_IN_DEFAULTS: dict[str, Any] = {
    f.name: f.default
    for f in fields(TargetConfig)
    if f.name in ("retries", "pacing_qps", "localization", "search_model_text", "search_summary_max_chars",
                  "search_summary_total_chars")
}
CALL_TIMEOUT = 20.0  # seconds a single tool call may take against the loopback emulator
T = TypeVar("T")
Provider = Literal["api", "messages", "any", "scripted"]
SearchProtocol = Literal["api", "messages", "scripted"]  # "scripted": the emulator's conformance search route
# How a check may share the machine with others (suite.py runs them in this order of phases): "alone"
# with no other check running in the run's process, "shared" side by side with any, "quiet" side by side only with other
# quiet ones (timing checks, whose waits a CPU-bound neighbour would stretch); for an in-process target
# they run in a worker process of their own, beside the rest (suite.py's _quiet_remote), and for an adapter
# beside the bulk (suite.py's _quiet_beside_bulk).
Slot = Literal["alone", "shared", "quiet"]
# Which process a check may run in: "suite" (the run's own, the default; an in-process reference's bulk
# may still go to a worker, suite.py's _bulk_remote, so no check may rely on the run's process) or "own":
# a CPU-bound check that the run may hand to a worker process of its own (suite.py, offload.py), so it
# computes on another core beside the rest instead of holding the run's interpreter lock. Only "shared"
# checks may be "own".
Process = Literal["suite", "own"]
PROTOCOL_LABELS: dict[str, str] = {"api": "Search API", "messages": "Messages", "scripted": "conformance route"}
# The codes seed 000/001 fix (see dsweb_ref._exceptions): rejected tool arguments, a provider-side
# failure (HTTP error status, unreadable body, redirect, rejected credential), caller cancellation.
INVALID_ARGUMENTS = "WEB_INVALID_ARGUMENTS"
PROVIDER_ERROR = "WEB_PROVIDER_ERROR"
ABORTED = "WEB_ABORTED"
# A hostile setting refused at the call: a configuration or argument error, never a provider failure.
REFUSED_SETTING_CODES = ("WEB_CONFIG_INVALID", INVALID_ARGUMENTS)


class CheckFailed(Exception):
    def __init__(self, reason: str, **details: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.details = details


def require(condition: object, reason: str, **details: Any) -> None:
    if not condition:
        raise CheckFailed(reason, **details)


@dataclass
class CheckContext:
    emu: Emulator
    target: Target
    hello: Hello
    config: TargetConfig
    proxies: ProxyTraps | None = None  # the run's proxy traps (sandbox.py); None outside run_suite
    executor: Executor | None = None  # threads for blocking waits (the run's own pool; None: the loop's default)
    # Evidence a passing check reports (e.g. a timing claim only met "late under load"); see note().
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def search_route(self) -> Literal["search", "messages"]:
        """The emulator route the configured search provider uses."""
        return "search" if self.config.provider == "api" else "messages"

    async def configure(self, **changes: Any) -> None:
        self.config = replace(self.config, **changes)
        await self.target.configure(self.config)

    async def configure_if_accepted(self, **changes: Any) -> bool:
        """Configure ``changes``; False when the target refuses them, which then keeps (and the check
        records) the configuration it had."""
        config = replace(self.config, **changes)
        try:
            await self.target.configure(config)
        except (TargetError, WebError):  # an adapter's error answer, or the in-process target's own refusal
            return False
        self.config = config
        return True

    async def configure_opt_in(self, **keys: Any) -> None:
        """Configure seed 001's opt-in keys (:data:`OPT_IN_DEFAULTS`): ``keys`` set, every other one back at
        its default, so one case's retries, pacing, localization or summary mode never leak into the next.
        The configuration is kept only once the target accepted it (a refused one raises)."""
        config = replace(self.config, **{**OPT_IN_DEFAULTS, **keys})
        await self.target.configure(config)
        self.config = config

    async def under_fault(
        self, route: RouteName, fault: Fault, call: Callable[[], Awaitable[CallOutcome]], *, times: int | None = 1
    ) -> CallOutcome:
        """One case afresh (:meth:`fresh`): ``fault`` on ``route`` for ``times`` requests, then ``call``'s answer."""
        self.fresh()
        self.emu.inject(route, fault, times=times)
        return await call()

    def start_search(
        self, queries: list[str], latest_prompt: str | None = None, *, probe: Probe | None = None
    ) -> PendingCall:
        """Start a search; ``probe`` runs the moment its answer arrives (see ``CallOutcome.at_answer``)."""
        params = {"arguments": {"queries": queries}, "latest_prompt": latest_prompt}
        return self.target.start_call("web_search", params, probe)

    async def search(self, queries: list[str], latest_prompt: str | None = None) -> CallOutcome:
        return await self.start_search(queries, latest_prompt).outcome(CALL_TIMEOUT)

    async def search_arguments(
        self, arguments: object, latest_prompt: str | None = None, limit: float = CALL_TIMEOUT
    ) -> CallOutcome:
        """web_search given ``arguments`` whole, as a model may write them (any keys, valid or not)."""
        params = {"arguments": arguments, "latest_prompt": latest_prompt}
        return await self.target.start_call("web_search", params).outcome(limit)

    async def fetch(self, url: str) -> CallOutcome:
        call = self.target.start_call("web_fetch", {"arguments": {"url": url}})
        return await call.outcome(CALL_TIMEOUT)

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        call = functools.partial(contextvars.copy_context().run, fn, *args)
        return await asyncio.get_running_loop().run_in_executor(self.executor, call)

    def records(self, route: str | None = None) -> list[RequestRecord]:
        records = self.emu.log.records()
        return records if route is None else [r for r in records if r.route == route]

    def note(self, key: str, value: Any) -> None:
        """Keep ``value`` (JSON-serialisable) in the details of this check's result, passed or not."""
        self.notes[key] = value

    def fresh(self) -> None:
        """Start a case afresh: no scripted fault left (their gates released) and an empty log."""
        self.emu.faults.clear()
        self.emu.log.clear()

    async def settle(self, limit: float = 5.0) -> None:
        """Wait until the emulator serves nothing (after releasing gates), so evidence is complete."""
        await self.blocking(self.emu.wait_until_idle, limit)


async def unless_refused(ctx: CheckContext, case: Case, outcome: CallOutcome) -> CallOutcome | None:
    """``outcome`` of a call carrying the model's extra arguments, or None when the target refused them as
    WEB_INVALID_ARGUMENTS; a refusal must come before any request (the model's own arguments never reach one)."""
    if outcome.error_code != INVALID_ARGUMENTS:
        return outcome
    await ctx.settle()
    sent = len(ctx.records())
    require(not sent, f"{case.name}: refused as {INVALID_ARGUMENTS} after {sent} request(s); an unknown argument "
            "is refused before any request", catches=case.catches)
    return None


def expect_success(outcome: CallOutcome, what: str, catches: str = "") -> dict[str, Any]:
    require(outcome.ok and outcome.value is not None, f"{what}: expected a result, got {outcome.brief()}",
            **({"catches": catches} if catches else {}))
    assert outcome.value is not None
    return outcome.value


def expect_error(outcome: CallOutcome, what: str, code: str | None = None) -> None:
    """An error answer with no value; with ``code``, exactly that code (where the seeds fix one)."""
    require(not outcome.cancelled, f"{what}: expected an error, the call reported cancelled")
    want = code or "a WEB_* error"
    require(outcome.error_code is not None, f"{what}: expected {want}, got a result")
    got = outcome.error_code or ""
    require(got.startswith("WEB_"), f"{what}: error code {got!r} is not a WEB_* code")
    require(code is None or got == code, f"{what}: error code {got}, expected {code}", code=got, expected=code)
    require(outcome.value is None, f"{what}: an error must carry no partial value")


def expect_schema(value: dict[str, Any], schema: str, what: str) -> None:
    """``value`` follows the shipped schema ``schema`` (e.g. ``web_search.output``)."""
    problems = validate(schema, value)
    require(not problems, f"{what}: value does not follow {schema}: {'; '.join(problems[:3])}",
            problems=problems, value=value)


@dataclass(frozen=True, slots=True)
class CheckSpec:
    check: Check
    requires: tuple[str, ...]
    provider: Provider
    run: Callable[[CheckContext], Awaitable[None]]
    # The seed sentence the check enforces, restated in the project's own words (``--explain``).
    rule: str = ""
    cases: tuple[Case, ...] = ()
    # The profiles (``certification.profiles``) this check belongs to.
    profiles: tuple[str, ...] = ()
    slot: Slot = "shared"  # who it may run beside (see Slot); a mark needs a comment saying why
    process: Process = "suite"  # where it may run (see Process); "own" needs a comment saying why
    # Seconds one run of the check may take, where that is more than the run's limit (a check that waits out a
    # long deadline); None: the run's limit.
    time_limit: float | None = None

    def limit(self, run_limit: float) -> float:
        """Seconds one run of the check may take in a run whose limit per check is ``run_limit``."""
        return max(run_limit, self.time_limit or 0.0)

    def missing(self, capabilities: frozenset[str]) -> list[str]:
        missing = [c for c in self.requires if c not in capabilities]
        if self.provider == "any" and not {"search-api", "messages-search"} & capabilities:
            missing.append("search-api or messages-search")
        return missing

    def providers_for(self, capabilities: frozenset[str]) -> tuple[SearchProtocol, ...]:
        """Every search protocol the check runs over: a protocol-specific check runs once; a check
        for "any" protocol runs once per declared one (Search API first, then Messages), so a
        Messages path is exercised even when the Search API is declared too."""
        if self.provider != "any":
            return (self.provider,)
        declared: list[SearchProtocol] = []
        if "search-api" in capabilities:
            declared.append("api")
        if "messages-search" in capabilities:
            declared.append("messages")
        return tuple(declared) or ("api",)


REGISTRY: dict[str, CheckSpec] = {}
# Seed 001's remaining list; each its own profile.
OPT_IN_CAPABILITIES = ("retry", "pacing", "fetch-pacing", "localization", "summary-budget", "quality-metadata")


def default_profiles(seed: str, requires: tuple[str, ...], provider: Provider) -> tuple[str, ...]:
    """Seed-003 checks certify the standalone search; an opt-in capability's checks (seed 001's
    remaining list) that capability's profile; seed-002 ones the evidence pipeline or the fetch
    guard (profile ``ssrf``); Fetch API checks the Fetch API; a
    protocol-specific check its protocol; a seed-000 check the web_search tool; a seed-001 check for
    any protocol both search protocols."""
    if seed == "003":
        return ("seed-003-standalone",)
    opt_in = [c for c in OPT_IN_CAPABILITIES if c in requires]
    if opt_in:
        return tuple(opt_in_profile(c) for c in opt_in)
    if "evidence-search" in requires:
        return ("seed-002-evidence",)
    if "ssrf-test-mode" in requires:
        return ("ssrf",)
    if "fetch-api" in requires:
        return ("seed-001-fetch-api",)
    if provider == "api":
        return ("seed-001-search-api",)
    if provider == "messages":
        return ("seed-001-messages",)
    if seed == "000":
        return ("seed-000-web-search",)
    return ("seed-001-search-api", "seed-001-messages")


def check(
    check_id: str,
    description: str,
    *,
    seed: str,
    requires: tuple[str, ...],
    provider: Provider = "any",
    rule: str = "",
    cases: tuple[Case, ...] = (),
    profiles: tuple[str, ...] | None = None,
    slot: Slot = "shared",
    process: Process = "suite",
    time_limit: float | None = None,
) -> Callable[[Callable[[CheckContext], Awaitable[None]]], Callable[[CheckContext], Awaitable[None]]]:
    """Register a check under a stable id (ids are never reused for another meaning). ``rule`` restates the
    seed decision it enforces (default: the function's docstring); ``cases`` is its case table;
    ``profiles`` the profiles it belongs to (default: :func:`default_profiles`); ``slot`` who it may run
    beside (:data:`Slot`); ``process`` where it may run (:data:`Process`); ``time_limit`` the seconds it may
    take, where that is more than a run's limit per check."""
    if process == "own" and slot != "shared":
        raise ValueError(f"{check_id}: only a shared check may run in a process of its own")

    def register(fn: Callable[[CheckContext], Awaitable[None]]) -> Callable[[CheckContext], Awaitable[None]]:
        if check_id in REGISTRY:
            raise ValueError(f"duplicate check id {check_id}")
        capability = requires[-1] if requires else "web_search"
        text = rule or " ".join((fn.__doc__ or "").split())
        member = default_profiles(seed, requires, provider) if profiles is None else tuple(profiles)
        spec = CheckSpec(
            Check(check_id, description, seed, capability), requires, provider, fn, text, tuple(cases), member, slot,
            process, time_limit,
        )
        REGISTRY[check_id] = spec
        return fn

    return register


def lone_surrogates(value: object) -> list[str]:
    """The lone surrogates in every string of ``value`` (keys included): JSON text keeps them as they are, and a
    JSON line may carry one escaped (``\\ud83d``), half of a character split by a cut in UTF-16 units."""
    return sorted({f"U+{ord(c):04X}" for c in _LONE.findall(json.dumps(value, ensure_ascii=False))})


_LONE = re.compile("[\ud800-\udfff]")

