"""A read-only hunt (R, hunter H) over retries: every retry.waits row that fails every time named no usable wait
(none, 'soon', '-1') or one past the target's cap, which ends the retries. So a target that did not count a retry
the server timed (a Retry-After honoured, taken for no retry of its own) retried without bound and passed: against
a 429 with 'Retry-After: 0' every time it sent 862 088 requests in 3 s. Seed 001 asks for 'bounded retry
ownership'. The new RETRY_SEQUENCES row, a 429 with 'Retry-After: 0' every time, fails it; the reference passes."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import scheduling
from dsweb_ref.providers import _scheduler

from ._readings import failing_rows, passes_rows, patch_reading

WAITS = "search.api.retry.waits"
UNCOUNTED = "429 with Retry-After 0 every time: the retries end"


def _sequences_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check's sequence runs alone (its main table proves nothing here, and takes seconds of waits)."""
    monkeypatch.setattr(scheduling, "RETRY_CASES", ())


def test_the_reference_passes_the_uncounted_retry_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _sequences_only(monkeypatch)
    passes_rows(scheduling, "RETRY_SEQUENCES", WAITS, (UNCOUNTED,), monkeypatch)


def test_a_retry_the_server_timed_left_uncounted_fails_exactly_the_uncounted_retry_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: retry += 0 when a Retry-After was honoured (the server named the time, so 'it is no retry'): a 429
    # with 'Retry-After: 0' every time retried until the call's deadline
    patch_reading(_scheduler.AccountScheduler, "run", "retry += 1", "retry += 0 if asked is not None else 1",
                  monkeypatch)
    _sequences_only(monkeypatch)
    assert failing_rows(scheduling, "RETRY_SEQUENCES", WAITS, monkeypatch) == {UNCOUNTED}
