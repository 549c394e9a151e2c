"""Issue 24 item 5: the row added for a survivor of the mutation run over the Search API scheduler
(dsweb_ref/providers/_scheduler.py): a pacer that never learns its request reached the wire waits for
each answer before the next start, so a paced batch runs one request at a time. The wrong reading is
made in the reference and must fail exactly the row that names it."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import scheduling
from dsweb_ref.providers import _scheduler

from ._readings import failing_rows, fails_exactly, patch_reading

CHECK = "search.api.pacing.rate"
ROW = "a 2-query call at 5 QPS, the first request held unanswered"


def _held_row_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduling, "PACING_CASES", tuple(c for c in scheduling.PACING_CASES if c.name == ROW))


def test_the_reference_sends_a_paced_query_while_an_earlier_one_is_unanswered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _held_row_only(monkeypatch)
    assert failing_rows(scheduling, "PACING_CASES", CHECK, monkeypatch) == set()


def test_a_pacer_waiting_for_each_answer_fails_exactly_the_held_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: pacing read as one request at a time (the mutant: the on-wire report dropped)
    patch_reading(_scheduler.AccountScheduler, "_send", "lambda: pacer.on_wire(ticket, self._clock.now())",
                  "lambda: None", monkeypatch)
    fails_exactly(scheduling, "PACING_CASES", CHECK, ROW, monkeypatch)
