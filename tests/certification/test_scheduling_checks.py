"""The opt-in scheduling capabilities (retry, pacing, fetch-pacing, localization) and the fail-fast rule, run by the
real suite against in-process reference targets: the right one passes, each wrong reading fails
exactly the check made for it, and a target declaring none of them still fails fast."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any

import pytest

from dsweb_ref.certification.adapter_protocol import CAPABILITIES
from dsweb_ref.certification.checks import REGISTRY, all_checks
from dsweb_ref.certification.checks.scheduling import OPT_IN_CHECKS, SCHEDULING_CAPABILITIES
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.targets import InProcessTarget, TargetConfig, reference_settings
from dsweb_ref.providers import _scheduler, deepseek_search_api
from dsweb_ref.settings import Settings
from dsweb_ref.tools import web_search

from ._readings import patch_reading
from .conftest import failed_checks, outcomes, reference_variant, run

SCHEDULING = ["search.api.retry", "search.api.pacing", "fetch.api.pacing", "search.api.localization"]
ALL = ["search.api.fail_fast", *SCHEDULING]
Tweak = Callable[[TargetConfig, Settings], Settings]


# The variants build no evidence tool (reference_variant), so they do not declare it: the evidence rows of
# search.api.retry.never are not judged, and search.api.pacing.shared is skipped (test_hunt_t_scheduling_readings
# runs them).
VARIANT_CAPABILITIES = tuple(c for c in CAPABILITIES if c != "evidence-search")


def _target(tweak: Tweak | None = None, capabilities: tuple[str, ...] = VARIANT_CAPABILITIES) -> InProcessTarget:
    """The reference (which honours the scheduling keys); ``tweak`` turns it into a wrong implementation."""
    return reference_variant("scheduling", tweak=tweak, capabilities=capabilities)


def _failed(only: list[str], tweak: Tweak | None = None) -> set[str]:
    return failed_checks(_target(tweak), only)


def test_every_scheduling_check_has_a_rule_and_cases_with_catches_notes() -> None:
    ids = [i for i in REGISTRY if i.startswith(("search.api.fail_fast", *SCHEDULING))]
    assert set(ids) == {"search.api.fail_fast", *OPT_IN_CHECKS}
    for check_id in ids:
        spec = REGISTRY[check_id]
        assert spec.check.seed == "001" and "Seed 001" in spec.rule
        assert spec.cases and all(case.catches for case in spec.cases), check_id


def test_reference_with_the_scheduler_passes_every_scheduling_check() -> None:
    report = run(_target(), ALL)
    assert {i: o for i, o in outcomes(report).items()} == {
        "fetch.api.pacing.fraction": Outcome.PASSED,
        "fetch.api.pacing.rate": Outcome.PASSED,
        "fetch.api.pacing.retries": Outcome.PASSED,
        "search.api.fail_fast": Outcome.PASSED,
        "search.api.localization": Outcome.PASSED,
        "search.api.pacing.cancel": Outcome.PASSED,
        "search.api.pacing.cancel_slots": Outcome.PASSED,
        "search.api.pacing.failure": Outcome.PASSED,
        "search.api.pacing.fraction": Outcome.PASSED,
        "search.api.pacing.lowered": Outcome.PASSED,
        "search.api.pacing.rate": Outcome.PASSED,
        "search.api.pacing.retries": Outcome.PASSED,
        "search.api.pacing.shared": Outcome.SKIPPED,  # no evidence-search (test_hunt_t_scheduling_readings runs it)
        "search.api.pacing.wire": Outcome.PASSED,
        "search.api.retry.cancel": Outcome.PASSED,
        "search.api.retry.deadline": Outcome.PASSED,
        "search.api.retry.never": Outcome.PASSED,
        "search.api.retry.waits": Outcome.PASSED,
        "search.api.retry.wire": Outcome.PASSED,
    }, [(r.check.id, r.reason) for r in report.results]


def test_the_reference_declares_every_scheduling_capability() -> None:
    assert set(SCHEDULING_CAPABILITIES) <= set(CAPABILITIES)
    assert SCHEDULING_CAPABILITIES == ("retry", "pacing", "fetch-pacing", "localization")


def test_the_configure_keys_default_to_fail_fast_and_reach_the_reference_settings() -> None:
    config = TargetConfig("http://127.0.0.1:1/anthropic/v1", "http://127.0.0.1:1/v1/tools", "k")
    assert (config.retries, config.pacing_qps, config.localization) == (0, None, None)
    plain = reference_settings(config).deepseek_api
    assert (plain.retries, plain.pacing, plain.localization) == (0, False, "")
    on = TargetConfig.from_json({**config.to_json(), "retries": 2, "pacing_qps": 2.0, "localization": "2001:db8::1"})
    api = reference_settings(on).deepseek_api
    assert (api.retries, api.pacing, api.search_qps, api.fetch_qps) == (2, True, 2.0, 2.0)
    assert api.localization == "2001:db8::1"


def test_a_target_declaring_none_of_them_still_fails_fast_and_is_not_certified_for_them() -> None:
    plain = tuple(c for c in CAPABILITIES if c not in SCHEDULING_CAPABILITIES)
    report = run(_target(capabilities=plain), ALL)
    got = outcomes(report)
    assert got.pop("search.api.fail_fast") is Outcome.PASSED
    assert set(got.values()) == {Outcome.SKIPPED}, "the opt-in checks never pass by default"
    verdicts = {v.name: v for v in report.profiles}
    for capability in SCHEDULING_CAPABILITIES:
        verdict = verdicts[f"seed-001-{capability}"]
        assert not verdict.certified and verdict.missing == (capability,), verdict


def test_retrying_when_not_configured_fails_only_the_fail_fast_check() -> None:
    always = lambda _c, s: s.updated({"deepseek_api.retries": 2})  # noqa: E731
    assert _failed(["search.api.fail_fast", "search.api.retry.never"], always) == {"search.api.fail_fast"}


def test_declaring_retry_without_retrying_fails_the_waits_check() -> None:
    never = lambda _c, s: s.updated({"deepseek_api.retries": 0})  # noqa: E731
    assert _failed(["search.api.retry.waits", "search.api.retry.never"], never) == {"search.api.retry.waits"}


def test_retrying_402_fails_only_the_never_check(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = _scheduler.retryable
    monkeypatch.setattr(_scheduler, "retryable", lambda status: status == 402 or wrong(status))
    assert _failed(["search.api.retry.waits", "search.api.retry.never"]) == {"search.api.retry.never"}


def test_retries_counted_with_the_first_attempt_fail_the_one_retry_row_of_the_wire_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A survivor of the seed-2 mutation draw: configure's retries read as attempts in all, so retries 1
    retries nothing. The retries-2 rows before it pass that reading (one 503, then success, takes one retry),
    so the reason names the row that allows one retry."""
    patch_reading(_scheduler.AccountScheduler, "run", "if retry >= policy.retries or",
                  "if retry + 1 >= policy.retries or", monkeypatch)
    (result,) = run(_target(), ["search.api.retry.wire"]).results
    assert result.outcome is Outcome.FAILED
    assert result.reason.startswith("a retried request with one retry allowed: search:"), result.reason


def test_a_retry_budget_shared_by_a_batch_passes_every_retry_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Open (no seed decides whether retries count per search or per batch): a batch whose searches share
    configure's retries. The one-retry row sends one query, so such a target still retries it (catches: a
    two-query row, which failed it: the first query took the one retry, the second failed the batch)."""
    budget: contextvars.ContextVar[list[int]] = contextvars.ContextVar("budget")
    batch = web_search.run_all_or_nothing

    async def shared(coros: Any) -> Any:
        budget.set([0])  # the batch's searches are tasks made here: they share this list
        return await batch(coros)

    def take(allowed: int) -> bool:
        spent = budget.get(None)
        if spent is None:  # a one-query call is its own batch (the tool runs it without a batch)
            spent = [0]
            budget.set(spent)
        spent[0] += 1
        return spent[0] <= allowed

    monkeypatch.setattr(web_search, "run_all_or_nothing", shared)
    monkeypatch.setattr(_scheduler, "_take", take, raising=False)
    patch_reading(_scheduler.AccountScheduler, "run", "if retry >= policy.retries or not retryable(reply.status):",
                  "if not retryable(reply.status) or not _take(policy.retries):", monkeypatch)
    assert _failed(["search.api.retry"]) == set()


def test_declaring_pacing_without_pacing_fails_the_pacing_checks() -> None:
    unpaced = lambda _c, s: s.updated({"deepseek_api.pacing": False})  # noqa: E731
    paced = [s.check.id for s in all_checks() if s.check.id.startswith(("search.api.pacing", "fetch.api.pacing"))
             and "evidence-search" not in s.requires]  # the variants have no pipeline (test_hunt_t_scheduling_readings)
    assert _failed(paced, unpaced) == {
        "search.api.pacing.rate", "search.api.pacing.retries", "search.api.pacing.cancel", "search.api.pacing.lowered",
        "search.api.pacing.fraction", "fetch.api.pacing.rate", "fetch.api.pacing.retries", "fetch.api.pacing.fraction",
    }  # (pacing.failure: every query sent at once shows nothing)


def test_a_burst_allowance_fails_the_rate_check() -> None:
    """A pacer that lets a whole 4-query call through at once (here: configured 10x too fast)."""

    def bursty(config: TargetConfig, settings: Settings) -> Settings:
        qps = settings.deepseek_api.search_qps
        return settings.updated({"deepseek_api.search_qps": qps * 10})

    assert _failed(["search.api.pacing.rate"], bursty) == {"search.api.pacing.rate"}


def test_fetches_paced_at_the_seeds_rate_instead_of_the_configured_one_fail_the_fetch_rate_check() -> None:
    """A Fetch API pacer at 5 QPS (the account's limit in the seed) whatever pacing_qps says; Search keeps the rate."""
    own = lambda _c, s: s.updated({"deepseek_api.fetch_qps": 5.0})  # noqa: E731
    assert _failed(["fetch.api.pacing.rate", "search.api.pacing.rate"], own) == {"fetch.api.pacing.rate"}


def test_waits_that_ignore_cancellation_fail_the_cancel_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    async def stubborn_sleep(_self: object, seconds: float) -> None:
        wait = asyncio.ensure_future(asyncio.sleep(seconds))
        try:
            await asyncio.shield(wait)
        except asyncio.CancelledError:
            await wait  # finishes the wait before giving in: the call answers late
            raise

    monkeypatch.setattr(_scheduler.MonotonicClock, "sleep", stubborn_sleep)
    only = ["search.api.retry.cancel", "search.api.pacing.cancel", "search.api.retry.never"]
    assert _failed(only) == {"search.api.retry.cancel", "search.api.pacing.cancel"}


def test_forwarding_unvalidated_localization_fails_the_localization_check(monkeypatch: pytest.MonkeyPatch) -> None:
    import dsweb_ref.settings as settings_module

    anything = lambda value: value if isinstance(value, str) and value else None  # noqa: E731
    monkeypatch.setattr(deepseek_search_api, "ip_literal", anything)
    monkeypatch.setattr(settings_module, "ip_literal", anything)
    assert _failed(["search.api.localization"]) == {"search.api.localization"}


def test_inferring_a_localization_fails_the_localization_check() -> None:
    def inferred(config: TargetConfig, settings: Settings) -> Settings:
        if settings.deepseek_api.localization:
            return settings
        return settings.updated({"deepseek_api.localization": "198.51.100.1"})  # "the user's address"

    assert _failed(["search.api.localization"], inferred) == {"search.api.localization"}


def test_a_late_look_at_a_paced_call_is_run_again_not_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: search.api.pacing.cancel failing a correct pacer as "all queries sent at once" because the
    # check's own look at the log came after every slot (a stalled runner, fresh-clone CI of 1c1f266). The
    # look is made late by ordering: it starts only once all four paced queries have reached the emulator.
    from dsweb_ref.certification.calibration import NOT_SHOWN
    from dsweb_ref.certification.checks import scheduling

    right = scheduling._landed

    async def late(ctx: Any, quiet: float = scheduling.BURST_QUIET) -> int:
        await ctx.blocking(lambda: ctx.emu.log.wait_for(len(scheduling.BATCH), 10.0, route="search"))
        return await right(ctx, quiet)

    monkeypatch.setattr(scheduling, "_landed", late)
    monkeypatch.setattr(scheduling, "PACING_CANCEL_CASES", scheduling.PACING_CANCEL_CASES[:1])
    (result,) = run(_target(), ["search.api.pacing.cancel"]).results
    assert result.outcome is Outcome.PASSED, result.reason
    assert NOT_SHOWN in str(result.details), result.details
