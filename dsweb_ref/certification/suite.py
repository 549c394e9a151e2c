"""Run the checks against one target, each against a fresh embedded emulator, and build a Report.

Per check: skip it when the target lacks a required capability (never a pass), start a new
emulator (no state leaks between checks), configure the target for it, run the check under an
overall deadline, and turn the result into a :class:`~.model.CheckResult`. A target that crashes,
times out or breaks the protocol gives ``error`` results, never a hang.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from .._version import __version__
from .checks import CheckContext, CheckFailed, CheckSpec, all_checks
from .emulator import Emulator
from .emulator.server import DEFAULT_API_KEY
from .known_failures import KnownFailures
from .model import CheckResult, Outcome, Report, TargetInfo
from .targets import Hello, Target, TargetConfig, TargetError

__all__ = ["CHECK_TIMEOUT", "UnknownCheckError", "run_suite", "select_checks"]

CHECK_TIMEOUT = 60.0  # seconds one check may take in total
Progress = Callable[[CheckResult], None]


class UnknownCheckError(ValueError):
    pass


def select_checks(only: Sequence[str] | None = None) -> list[CheckSpec]:
    """All checks, or those whose id equals or starts with one of ``only`` (``search.merge``)."""
    specs = all_checks()
    if not only:
        return specs
    chosen = [s for s in specs if any(s.check.id == o or s.check.id.startswith(o.rstrip(".") + ".") for o in only)]
    unknown = [o for o in only if not any(s.check.id == o or s.check.id.startswith(o.rstrip(".") + ".") for s in specs)]
    if unknown:
        raise UnknownCheckError(f"unknown check ids: {', '.join(unknown)}")
    return chosen


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


async def _run_one(spec: CheckSpec, target: Target, hello: Hello, limit: float) -> CheckResult:
    started = time.monotonic()

    def result(outcome: Outcome, reason: str = "", details: dict[str, object] | None = None) -> CheckResult:
        return CheckResult(spec.check, outcome, reason, dict(details or {}), time.monotonic() - started)

    missing = spec.missing(hello.capabilities)
    if missing:
        return result(Outcome.SKIPPED, f"target does not declare: {', '.join(missing)}")
    emu = Emulator(api_keys=(DEFAULT_API_KEY,))
    try:
        await asyncio.to_thread(emu.start)
    except Exception as exc:
        return result(Outcome.ERROR, f"could not start the emulator: {exc!r}")
    try:
        config = TargetConfig(
            messages_base=emu.messages_base,
            tools_base=emu.tools_base,
            api_key=DEFAULT_API_KEY,
            provider=spec.provider_for(hello.capabilities),
        )
        await target.configure(config)
        await asyncio.wait_for(spec.run(CheckContext(emu, target, hello, config)), limit)
    except CheckFailed as exc:
        return result(Outcome.FAILED, exc.reason, exc.details)
    except TargetError as exc:
        return result(Outcome.ERROR, f"target error: {exc}")
    except TimeoutError:
        return result(Outcome.ERROR, f"check did not finish within {limit:g}s")
    except Exception as exc:  # a bug in a check or a target must not stop the suite
        return result(Outcome.ERROR, f"check raised {exc!r}")
    finally:
        emu.faults.release_gates()
        await asyncio.to_thread(emu.stop)
    return result(Outcome.PASSED)


async def run_suite(
    target: Target,
    *,
    only: Sequence[str] | None = None,
    known_failures: KnownFailures | None = None,
    progress: Progress | None = None,
    check_timeout: float = CHECK_TIMEOUT,
    kind: str = "implementation",
) -> Report:
    """Run the selected checks in a fixed order; closes ``target`` at the end."""
    specs = select_checks(only)
    started_at = _now()
    results: list[CheckResult] = []
    hello: Hello | None = None
    hello_error = ""
    try:
        try:
            hello = await target.hello()
        except TargetError as exc:
            hello_error = f"hello failed: {exc}"
        for spec in specs:
            if hello is None:
                r = CheckResult(spec.check, Outcome.ERROR, hello_error)
            else:
                r = await _run_one(spec, target, hello, check_timeout)
            if known_failures is not None:
                r = known_failures.apply([r])[0]
            results.append(r)
            if progress is not None:
                progress(r)
    finally:
        await target.close()
    info = TargetInfo(
        kind=kind,
        description=target.describe(),
        name=hello.name if hello else "",
        version=hello.version if hello else "",
        capabilities=tuple(sorted(hello.capabilities)) if hello else (),
    )
    return Report(__version__, info, tuple(results), started_at, _now())
