"""A read-only hunt (T1) found two wrong readings of seed 001 that settings.snapshot.per_operation certified. Seed 001:
"Each operation resolves one settings snapshot, including its endpoint and credentials", and "A Session on the
DeepSeek account route sends its account token instead"; the adapter protocol: every operation that starts after a
settings_save "resolves the saved values".

- T1-1: a retry and pacing policy built once (at configure: a retry decorator or a limiter made with the runtime) while
  key, base, count and ori_question are read per operation. The hunt's save put back the old deepseek_api.retries,
  pacing, search_qps and fetch_qps: no row saved either, so a saved retries or pacing rate did nothing until the next
  configure. The retries row (0, saved 2, saved 0 again, a 503 with Retry-After 0 each time) and the pacing-off row
  (0.01 QPS configured, saved off, a two-query search) judge it by request counts, not by time.
- T1-5: the credential route (API key or account token) chosen at construction while the key values are read per
  operation. The hunt's save put back the old credentials.auth: no row saved the route. The account row saves auth
  account with both credentials configured: the next Search and Fetch API requests carry the token.

Each reading is made in the reference as the hunt made it (in the save the reference's live runtime answers) and
fails exactly its new rows; the reference passes them, and so does a target that rebuilds its runtime, its retry
policy and pacer included, on each save (how a target applies a save is its own: test_live_settings_readings)."""

from __future__ import annotations

import pytest

from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import live_settings
from dsweb_ref.certification.targets import CAPABILITIES, InProcessTarget

from ._readings import failing_rows, fails_exactly, keep_rows, patch_reading
from .conftest import run

CHECK, TABLE = "settings.snapshot.per_operation", "CASES"
RETRIES, PACING_OFF, ACCOUNT = (case.name for case in (live_settings.RETRIES, live_settings.PACING_OFF,
                                                       live_settings.ACCOUNT))
NEW_ROWS = (RETRIES, PACING_OFF, ACCOUNT)

SAVED = "self.config, self.settings = config, settings"
# T1-1 (hunt mode policy-once): the save puts back the scheduling policy the runtime was built with.
POLICY_ONCE = ("old = self.settings.deepseek_api; settings = settings.updated({'deepseek_api.retries': old.retries, "
               "'deepseek_api.pacing': old.pacing, 'deepseek_api.search_qps': old.search_qps, "
               "'deepseek_api.fetch_qps': old.fetch_qps}); " + SAVED)
# T1-5 (hunt mode route-once): the save puts back the credential route; the key and token values are saved.
ROUTE_ONCE = "settings = settings.updated({'credentials.auth': self.settings.credentials.auth}); " + SAVED
# Open (how a target applies a save is its own): the runtime, its retry policy and pacer with it, built anew.
REBUILT = ("self.runtime = build_runtime(lambda: self.settings, environ=self.environ, http_fetch=self.http); "
           "return self.tools()")


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_rows(live_settings, TABLE, NEW_ROWS, monkeypatch)
    assert failing_rows(live_settings, TABLE, CHECK, monkeypatch) == set()


def test_a_retry_and_pacing_policy_built_once_fails_exactly_the_retries_and_pacing_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (T1-1): saved retries 2, a 503 still ends the search after one request; saved pacing off, a two-query
    # search still waits 100 s for its second slot (past its deadline: one request or none)
    patch_reading(targets._LiveReference, "save", SAVED, POLICY_ONCE, monkeypatch)
    fails_exactly(live_settings, TABLE, CHECK, (RETRIES, PACING_OFF), monkeypatch)


def test_a_credential_route_chosen_at_construction_fails_exactly_the_account_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (T1-5): saved auth account, the next Search and Fetch API requests still carry the API key
    patch_reading(targets._LiveReference, "save", SAVED, ROUTE_ONCE, monkeypatch)
    fails_exactly(live_settings, TABLE, CHECK, ACCOUNT, monkeypatch)


def test_a_runtime_rebuilt_on_each_save_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a save that builds a new runtime (retry policy, pacer and credential route made afresh from the saved
    # settings) rather than one whose providers read the settings at each operation
    patch_reading(targets._LiveReference, "save", "return self.tools()", REBUILT, monkeypatch)
    keep_rows(live_settings, TABLE, NEW_ROWS, monkeypatch)
    assert failing_rows(live_settings, TABLE, CHECK, monkeypatch) == set()


def test_the_rows_skip_without_their_capability(monkeypatch: pytest.MonkeyPatch) -> None:
    # a target without retry, pacing or account-route is not sent the row that needs it: both readings made, the
    # new rows pass it
    keep_rows(live_settings, TABLE, NEW_ROWS, monkeypatch)
    patch_reading(targets._LiveReference, "save", SAVED, POLICY_ONCE.replace(SAVED, ROUTE_ONCE), monkeypatch)
    capabilities = tuple(c for c in CAPABILITIES if c not in ("retry", "pacing", "account-route"))
    target = InProcessTarget(targets._Reference(), name="dsweb_ref", version="test", capabilities=capabilities)
    (result,) = run(target, only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason


def test_a_target_refusing_a_rate_below_one_per_second_is_not_judged_by_the_pacing_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # open (review R1 F4): no seed names a range of rates; a target refusing 0.01 QPS at configure (a floor of
    # 1 QPS) is not judged by the pacing-off row, and says so in the result's details
    original = InProcessTarget.configure

    async def floored(self: InProcessTarget, config: targets.TargetConfig) -> None:
        if config.pacing_qps is not None and config.pacing_qps < 1:
            raise targets.TargetError(f"pacing_qps {config.pacing_qps} below 1 request per second")
        await original(self, config)

    monkeypatch.setattr(InProcessTarget, "configure", floored)
    keep_rows(live_settings, TABLE, (PACING_OFF,), monkeypatch)
    (result,) = run(targets.reference_target(), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason
    assert "refused at configure: not judged" in str(result.details.get(PACING_OFF)), result.details
