"""An outside hunt (N, entry B1) over seed 003's limit: "每次搜索限时 90 秒" (each search is limited to 90 seconds),
the whole search. The hunt's wrong reading took the HTTP client's timeout for that limit: the standalone endpoint's
request sent with httpx's timeout=90 (a limit on each connect, read and write wait) and no deadline over the
exchange (post's own dropped for it) nor over the search (the tool's dropped). dsweb certify passed it:
standalone.deadline.enforced held each answer 95 s without sending a byte, so the first read's wait ran out at 90 s
just as a limit on the whole search does, and the check's rule said as much (a limit on each wait was not told
from one on the search). Its new row, messages-answer-trickled-115s, sends the status and headers at once and the
answer in six pieces 23 s apart, the last after 115 s: no wait comes near 90 s, so the per-read reading takes the
answer, where a limit on the whole search fails the search at 90 s.

As in hunt L's tests of the same check (test_hunt_l_standalone_readings.py), the check runs scaled down: a 3 s
limit, answers held 6 s, the trickle's pieces 1.2 s apart (its last after 6 s). The reference's 90 s is scaled
with it: its tool built with a 3 s timeout, which also bounds the request's exchange and sets the HTTP client's
timeouts, so the per-read reading made here is the hunt's at a thirtieth of the scale. The real scale runs through
the example adapter (tests/standalone/test_certification.py, marked slow).
"""

from __future__ import annotations

from typing import Any

import pytest

from dsweb_ref.certification import suite
from dsweb_ref.certification.calibration import NOT_SHOWN
from dsweb_ref.certification.checks import REGISTRY, standalone
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers import _deepseek_http, _standalone
from dsweb_ref.tools.standalone_search import StandaloneSearchTool

from ._readings import failing_rows, keep_rows, patch_reading
from .conftest import run

DEADLINE, LIMITS = "standalone.deadline.enforced", "DEADLINE_CASES"
TRICKLED = "messages-answer-trickled-115s"
HELD_ROWS = ("messages-answer-held-95s", "responses-answer-held-95s")

LIMIT, HOLD = 3.0, 6.0  # the seed's 90 s and the emulator's 95 s hold, scaled as hunt L scales them
TRICKLE = HOLD / (standalone.TRICKLE_PIECES - 1)  # the gap between pieces: the last comes when the holds end
EXCHANGE_DEADLINE = "deadline = asyncio.timeout(timeout_s)"  # in post: one deadline over the whole exchange
SEARCH_DEADLINE = "deadline = asyncio.timeout(self.timeout_s)"  # in the tool: one over the whole search
NO_DEADLINE = "deadline = asyncio.timeout(None)"


def _scaled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check at a LIMIT-second limit, and the reference's tool built with LIMIT for its 90 s."""
    monkeypatch.setattr(standalone, "SEARCH_LIMIT", LIMIT)
    monkeypatch.setattr(standalone, "HELD", HOLD)
    monkeypatch.setattr(standalone, "TRICKLE_GAP", TRICKLE)
    monkeypatch.setattr(standalone, "EARLY_SLACK", 0.5)
    monkeypatch.setattr(standalone, "MARGIN", 3.0)
    built = StandaloneSearchTool.__init__

    def limited(self: StandaloneSearchTool, backend: Any, **options: Any) -> None:
        built(self, backend, **{**options, "timeout_s": LIMIT})

    monkeypatch.setattr(StandaloneSearchTool, "__init__", limited)


def _per_read(monkeypatch: pytest.MonkeyPatch, *, search_deadline: bool = False) -> None:
    """The hunt's reading: the standalone endpoint's request without its deadline over the exchange (the HTTP
    client's timeout left to bound each wait), and unless ``search_deadline`` the tool without its own."""
    right = _deepseek_http.post
    patch_reading(_deepseek_http, "post", EXCHANGE_DEADLINE, NO_DEADLINE, monkeypatch, _standalone)
    monkeypatch.setattr(_deepseek_http, "post", right)  # the standalone endpoint's requests only, as in the hunt
    if not search_deadline:
        patch_reading(StandaloneSearchTool, "_answer", SEARCH_DEADLINE, NO_DEADLINE, monkeypatch)


def _whole_check() -> tuple[str, str]:
    """The check run whole (the three searches at once, as it runs them): its outcome and reason."""
    (result,) = run(reference_target(), only=[DEADLINE]).results
    return result.outcome.value, result.reason


def test_the_trickled_row_is_past_the_limit_with_no_wait_near_it() -> None:
    # the real constants: every wait for the next piece far below 90 s, the last piece far past it (more than the
    # held answer's 5 s), and the calls' bound fitting the three answers one after the other
    assert {c.name for c in standalone.DEADLINE_CASES} == {*HELD_ROWS, TRICKLED}
    (row,) = (c for c in standalone.DEADLINE_CASES if c.name == TRICKLED)
    assert row["protocol"] == "messages" and row["answer"] == "trickled"
    told = f"{standalone.TRICKLE_GAP:g} s apart", f"{standalone.trickle_end():g} s"  # as the row and rule say
    assert all(t in row.catches and t in REGISTRY[DEADLINE].rule for t in told)
    assert standalone.TRICKLE_GAP <= standalone.SEARCH_LIMIT / 3
    assert standalone.trickle_end() - standalone.SEARCH_LIMIT > 4 * (standalone.HELD - standalone.SEARCH_LIMIT)
    assert standalone.deadline_wait() > 2 * standalone.HELD + standalone.trickle_end()
    assert REGISTRY[DEADLINE].limit(suite.CHECK_TIMEOUT) > standalone.deadline_wait()


def test_the_reference_passes_the_trickled_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _scaled(monkeypatch)
    keep_rows(standalone, LIMITS, (TRICKLED,), monkeypatch)
    assert _whole_check() == ("passed", "")


def test_the_reference_passes_the_three_rows_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    _scaled(monkeypatch)
    (result,) = run(reference_target(), only=[DEADLINE]).results
    assert (result.outcome.value, result.reason) == ("passed", "")
    # each row's request found by its query on its backend (the trickle given to its own search's request only)
    assert not [v for v in result.details.values() if isinstance(v, str) and v.startswith(NOT_SHOWN)], result.details
    assert {f"{row}: answered after its request's arrival (s)" for row in (*HELD_ROWS, TRICKLED)} <= set(result.details)


def test_a_limit_on_each_read_fails_exactly_the_trickled_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the HTTP client's timeout=90 on each read for the search's limit, no deadline over the search (the
    # hunt's reading): each held answer's first read runs out at the limit (passed), the trickled answer taken
    _scaled(monkeypatch)
    _per_read(monkeypatch)
    assert failing_rows(standalone, LIMITS, DEADLINE, monkeypatch) == {TRICKLED}
    outcome, reason = _whole_check()  # the rows are judged in order: both held ones passed before it
    assert outcome == "failed" and f"[{TRICKLED}] the search answered after" in reason, reason


def test_a_limit_on_each_read_under_a_deadline_over_the_search_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: where the whole search's limit lives (the tool's deadline alone, the request left with the HTTP client's
    # timeout on each read)
    _scaled(monkeypatch)
    _per_read(monkeypatch, search_deadline=True)
    assert _whole_check() == ("passed", "")
