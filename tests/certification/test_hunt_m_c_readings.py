"""Issue 24, item 6: an outside hunt (M1) over seeds 000 and 001 found wrong readings of the opt-in Search API
retries and pacing that dsweb certify passed. A Retry-After honoured on a 400 or 402 (any status naming a time
retried); a 4xx no row named (499, 421) retried; the first Retry-After reused for every later retry, so a 503
after a "Retry-After: 0" went out at once; a negative Retry-After read with float() and waited as nothing; a
retry that waited at least one pacing interval sent outside the pacer; a pacer that keeps the rate it was first
used with after the deployment lowers it. Each wrong reading is made in the reference and must fail exactly the
new row that names it; the reference passes the new rows."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.adapter_protocol import CAP_RETRY, CAPABILITIES
from dsweb_ref.certification.checks import scheduling
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers import _scheduler

from ._readings import failing_rows, fails_exactly, keep_rows, patch_reading
from .conftest import outcomes, reference_variant, run

NEVER = "search.api.retry.never"
RA_402, RA_400 = "402 with Retry-After 1 s", "400 with Retry-After 1 s"
OTHER_4XX = "every other 4xx"
RETRYABLE = "return status in (408, 429) or 500 <= status <= 599"


def _keep(table: str, rows: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``rows`` alone of ``scheduling.table``: the other rows run in other tests (and cost seconds each)."""
    keep_rows(scheduling, table, tuple(rows), monkeypatch)


NEW_NEVER = {RA_402, RA_400, OTHER_4XX}


def test_the_reference_passes_the_new_never_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep("NEVER_CASES", NEW_NEVER, monkeypatch)
    assert failing_rows(scheduling, "NEVER_CASES", NEVER, monkeypatch) == set()


def test_a_retry_after_honoured_on_any_status_fails_exactly_the_retry_after_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: "the server named a time, so honour it": a Retry-After makes a 400 or a 402 retryable
    right = "if retry >= policy.retries or not retryable(reply.status):"
    wrong = 'if retry >= policy.retries or not (retryable(reply.status) or "retry-after" in reply.headers):'
    patch_reading(_scheduler.AccountScheduler, "run", right, wrong, monkeypatch)
    assert failing_rows(scheduling, "NEVER_CASES", NEVER, monkeypatch) == {RA_402, RA_400}


@pytest.mark.parametrize("status", [499, 421])
def test_a_4xx_no_row_named_retried_fails_exactly_the_other_4xx_row(
    status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: 499 (nginx "client closed request") or 421 (Misdirected Request) taken for transient
    patch_reading(_scheduler, "retryable", RETRYABLE, RETRYABLE.replace("(408, 429)", f"(408, 429, {status})"),
                  monkeypatch)
    assert failing_rows(scheduling, "NEVER_CASES", NEVER, monkeypatch) == {OTHER_4XX}


WAITS = "search.api.retry.waits"
NEGATIVE = "503 with Retry-After -1 every time: a wait before each retry"
FIRST_VS_LATEST = "429 with Retry-After 0, then 503 without it, then success: a wait before the 503's retry"
BACKOFF = "wait = self.backoff(retry, policy.max_wait_s) if asked is None else asked"


def test_the_reference_passes_the_new_waits_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep("RETRY_SEQUENCES", {NEGATIVE, FIRST_VS_LATEST}, monkeypatch)
    assert failing_rows(scheduling, "RETRY_SEQUENCES", WAITS, monkeypatch) == set()


def test_a_negative_retry_after_read_with_float_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: Retry-After read with float() first ("fractions welcome"): "-1" is a negative wait, retried at once
    right = '    value = (headers.get("retry-after") or "").strip()\n'
    wrong = right + "    try:\n        return float(value)\n    except ValueError:\n        pass\n"
    patch_reading(_scheduler, "retry_after_seconds", right, wrong, monkeypatch)
    fails_exactly(scheduling, "RETRY_SEQUENCES", WAITS, NEGATIVE, monkeypatch)


def test_the_first_retry_after_reused_for_every_retry_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the first failure's Retry-After sets the pace of every retry: a 503 after "Retry-After: 0" at once
    first = "if retry == 0:\n            first_asked = asked\n        asked = first_asked\n        "
    patch_reading(_scheduler.AccountScheduler, "run", BACKOFF, first + BACKOFF, monkeypatch)
    fails_exactly(scheduling, "RETRY_SEQUENCES", WAITS, FIRST_VS_LATEST, monkeypatch)


LOWERED_CHECK = "search.api.pacing.lowered"
LOWERED = ("the rate lowered on one account: a 3-query call at 2 QPS after one at 5 QPS, its first query answered "
           "429 with Retry-After 1")
SLOT_CALL = "ticket = await self._slot(api, policy.qps, deadline) if policy.pacing else None"


def test_the_reference_passes_the_new_pacing_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep("PACING_LOWERED_CASES", {LOWERED}, monkeypatch)
    assert failing_rows(scheduling, "PACING_LOWERED_CASES", LOWERED_CHECK, monkeypatch) == set()


def test_a_paced_target_without_retries_passes_the_lowered_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pacing without capability retry: the row judges the lowered rate alone (no 429 injected), and passes.
    _keep("PACING_LOWERED_CASES", {LOWERED}, monkeypatch)
    target = reference_variant("paced-no-retry", capabilities=tuple(c for c in CAPABILITIES if c != CAP_RETRY))
    assert outcomes(run(target, only=[LOWERED_CHECK]))[LOWERED_CHECK] == Outcome.PASSED


def test_a_retry_that_waited_an_interval_sent_unpaced_fails_exactly_the_lowered_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: "pace or wait, not both": a retry whose wait was at least one pacing interval skips the pacer
    skip = "policy.pacing and not (retry and wait >= spacing(policy.qps))"
    wrong = f"ticket = await self._slot(api, policy.qps, deadline) if {skip} else (object() if policy.pacing else None)"
    patch_reading(_scheduler.AccountScheduler, "run", SLOT_CALL, wrong, monkeypatch)
    fails_exactly(scheduling, "PACING_LOWERED_CASES", LOWERED_CHECK, LOWERED, monkeypatch)


def test_a_pacer_that_keeps_its_first_rate_fails_exactly_the_lowered_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the per-account pacer caches its interval on first use, so a lowered rate is never applied
    right = "interval = spacing(qps)\n    pacer = self._pacer(api)\n"
    wrong = 'pacer = self._pacer(api)\n    interval = pacer.__dict__.setdefault("interval", spacing(qps))\n'
    patch_reading(_scheduler.AccountScheduler, "_slot", right, wrong, monkeypatch)
    assert failing_rows(scheduling, "PACING_LOWERED_CASES", LOWERED_CHECK, monkeypatch) == {LOWERED}
    # search.api.pacing.rate, whole, catches it too: its one-by-one row runs at 2 QPS on the check's account, which its
    # first row paced at 3 QPS (review R6)
    (result,) = run(reference_target(), only=["search.api.pacing.rate"]).results
    one_by_one = next(c.name for c in scheduling.PACING_CASES if "sequential" in c.params)
    assert result.outcome is Outcome.FAILED and result.reason.startswith(f"{one_by_one}: "), result.reason


PARSE = '    value = (headers.get("retry-after") or "").strip()\n'


@pytest.mark.parametrize(
    ("owner", "function", "right", "variant"),
    [
        # "Retry-After: 0" read as no hint (a backoff instead of an at-once retry): waiting longer is allowed
        (_scheduler, "retry_after_seconds", PARSE, PARSE + '    if value == "0":\n        return None\n'),
        # a negative Retry-After read as a very long wait, which ends the retries (one request)
        (_scheduler, "retry_after_seconds", PARSE, PARSE + '    if value.startswith("-"):\n        return 1e9\n'),
        # a negative Retry-After waited as its magnitude (1 s)
        (_scheduler, "retry_after_seconds", PARSE, PARSE + '    if value.startswith("-"):\n        return 1.0\n'),
        # one retry per search at most: the 503 after the 429 ends the retries (its failure answered)
        (_scheduler.AccountScheduler, "run", "if retry >= policy.retries or", "if retry >= min(policy.retries, 1) or"),
    ],
    ids=["retry-after-0-backs-off", "negative-ends-retries", "negative-waited-as-1s", "one-retry-at-most"],
)
def test_right_variants_pass_the_new_waits_rows(
    owner: object, function: str, right: str, variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Right by seed 001 ("wait before retrying"; how long, and how many retries, is open): certified.
    patch_reading(owner, function, right, variant, monkeypatch)  # type: ignore[arg-type]
    _keep("RETRY_SEQUENCES", {NEGATIVE, FIRST_VS_LATEST}, monkeypatch)
    assert failing_rows(scheduling, "RETRY_SEQUENCES", WAITS, monkeypatch) == set()
