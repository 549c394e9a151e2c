"""Run the checks against one target, each against a fresh embedded emulator, and build a Report.

Per check: skip it when the target lacks a required capability (never a pass), start a new
emulator (no state leaks between checks), configure the target for it, run the check under an
overall deadline, and turn the result into a :class:`~.model.CheckResult`. A check that applies
to any search protocol runs once per protocol the target declares (Search API, then Messages),
each against its own emulator, and fails if any run fails; its reason names the protocol. A
target that crashes, times out or breaks the protocol gives ``error`` results, never a hang.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from .._version import __version__
from ..emulator import Emulator
from ..emulator.server import DEFAULT_API_KEY
from . import checks
from .checks import CheckContext, CheckFailed, CheckSpec
from .checks._base import PROTOCOL_LABELS, SearchProtocol
from .known_failures import KnownFailures
from .model import CheckResult, Outcome, Report, TargetInfo
from .profiles import find_profile, profile_verdicts
from .sandbox import ProxyTraps
from .targets import Hello, Target, TargetConfig, TargetError

__all__ = ["CHECK_TIMEOUT", "UnknownCheckError", "run_suite", "select_checks", "select_ids"]

CHECK_TIMEOUT = 60.0  # seconds one check may take in total
Progress = Callable[[CheckResult], None]


class UnknownCheckError(ValueError):
    pass


def _selects(check_id: str, wanted: str) -> bool:
    return check_id == wanted or check_id.startswith(wanted.rstrip(".") + ".")


def select_ids(ids: Sequence[str], only: Sequence[str]) -> tuple[list[str], list[str]]:
    """The ``ids`` that equal or start with one of ``only`` (``search.merge``), in ``ids`` order, and
    the entries of ``only`` that select nothing."""
    chosen = [i for i in ids if any(_selects(i, o) for o in only)]
    unknown = [o for o in only if not any(_selects(i, o) for i in ids)]
    return chosen, unknown


def select_checks(only: Sequence[str] | None = None, profiles: Sequence[str] | None = None) -> list[CheckSpec]:
    """All checks, or those whose id equals or starts with one of ``only`` (``search.merge``); with
    ``profiles``, only the checks of those profiles (UnknownProfileError for an unknown name)."""
    specs = checks.all_checks()  # looked up at call time, so a patched catalogue is seen and then undone
    if profiles:
        names = {find_profile(name).name for name in profiles}
        specs = [s for s in specs if names & set(s.profiles)]
    if not only:
        return specs
    chosen, unknown = select_ids([s.check.id for s in specs], only)
    if unknown:
        raise UnknownCheckError(f"unknown check ids: {', '.join(unknown)}")
    return [s for s in specs if s.check.id in chosen]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


_Run = tuple[Outcome, str, dict[str, object]]


async def _run_protocol(
    spec: CheckSpec, target: Target, hello: Hello, provider: SearchProtocol, limit: float, proxies: ProxyTraps | None
) -> _Run:
    """One run of ``spec`` over one search protocol, against a fresh emulator."""
    emu = Emulator(api_keys=(DEFAULT_API_KEY,))
    try:
        await asyncio.to_thread(emu.start)
    except Exception as exc:
        return Outcome.ERROR, f"could not start the emulator: {exc!r}", {}
    try:
        config = TargetConfig(
            messages_base=emu.messages_base, tools_base=emu.tools_base, api_key=DEFAULT_API_KEY, provider=provider,
            openai_base=emu.openai_base,
        )
        await target.configure(config)
        ctx = CheckContext(emu, target, hello, config, proxies)
        await asyncio.wait_for(spec.run(ctx), limit)
    except CheckFailed as exc:
        return Outcome.FAILED, exc.reason, dict(exc.details)
    except TargetError as exc:
        return Outcome.ERROR, f"target error: {exc}", {}
    except TimeoutError:
        return Outcome.ERROR, f"check did not finish within {limit:g}s", {}
    except Exception as exc:  # a bug in a check or a target must not stop the suite
        return Outcome.ERROR, f"check raised {exc!r}", {}
    finally:
        emu.faults.release_gates()
        await asyncio.to_thread(emu.stop)
    return Outcome.PASSED, "", dict(ctx.notes)  # e.g. a timing claim met only "late under load"


def _combine(runs: list[tuple[SearchProtocol, _Run]]) -> _Run:
    """One verdict for a check run over several search protocols: failed if any run failed, else
    error if any errored; the reason names each protocol that did not pass."""
    outcomes = {run[0] for _, run in runs}
    outcome = next((o for o in (Outcome.FAILED, Outcome.ERROR) if o in outcomes), Outcome.PASSED)
    reason = "; ".join(f"[{PROTOCOL_LABELS[p]}] {r}" for p, (o, r, _) in runs if o is not Outcome.PASSED)
    details: dict[str, object] = {"protocols": {p: o.value for p, (o, _, _) in runs}}
    details.update({p: d for p, (_, _, d) in runs if d})
    return outcome, reason, details


async def _run_one(
    spec: CheckSpec, target: Target, hello: Hello, limit: float, proxies: ProxyTraps | None = None
) -> CheckResult:
    started = time.monotonic()
    missing = spec.missing(hello.capabilities)
    if missing:
        reason = f"target does not declare: {', '.join(missing)}"
        return CheckResult(spec.check, Outcome.SKIPPED, reason, {}, time.monotonic() - started)
    protocols = spec.providers_for(hello.capabilities)
    runs = [(p, await _run_protocol(spec, target, hello, p, limit, proxies)) for p in protocols]
    outcome, reason, details = runs[0][1] if len(runs) == 1 else _combine(runs)
    if spec.provider == "any" and len(runs) == 1:
        details = {"protocols": {runs[0][0]: outcome.value}, **details}
    return CheckResult(spec.check, outcome, reason, details, time.monotonic() - started)


async def run_suite(
    target: Target,
    *,
    only: Sequence[str] | None = None,
    known_failures: KnownFailures | None = None,
    progress: Progress | None = None,
    check_timeout: float = CHECK_TIMEOUT,
    kind: str = "implementation",
    profiles: Sequence[str] | None = None,
) -> Report:
    """Run the selected checks in a fixed order; closes ``target`` at the end. The report carries a
    verdict for every profile (see :mod:`.profiles`); ``profiles`` restricts the run to their checks."""
    specs = select_checks(only, profiles)
    started_at = _now()
    results: list[CheckResult] = []
    hello: Hello | None = None
    hello_error = ""
    # Every proxy variable points at a trap from the target's start (see certification/sandbox.py).
    proxies = ProxyTraps()
    try:
        try:
            target.use_environment(proxies.environment())
            hello = await target.hello()
        except TargetError as exc:
            hello_error = f"hello failed: {exc}"
        for spec in specs:
            if hello is None:
                r = CheckResult(spec.check, Outcome.ERROR, hello_error)
            else:
                r = await _run_one(spec, target, hello, check_timeout, proxies)
            if known_failures is not None:
                r = known_failures.apply([r])[0]
            results.append(r)
            if progress is not None:
                progress(r)
    finally:
        await target.close()
        proxies.close()
    info = TargetInfo(
        kind=kind,
        description=target.describe(),
        name=hello.name if hello else "",
        version=hello.version if hello else "",
        capabilities=tuple(sorted(hello.capabilities)) if hello else (),
    )
    members = {s.check.id: s.profiles for s in checks.all_checks()}
    verdicts = profile_verdicts(members, results, info.capabilities)
    return Report(__version__, info, tuple(results), started_at, _now(), verdicts)
