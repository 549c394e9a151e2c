"""Survivors of the seed-9 mutation draw (``scripts/mutation_score.py --sample 400 --seed 9``), list B, that a row now
rejects: the account scheduler giving up a paced request within the last second of its deadline (``remaining <= 1``
where it read ``remaining <= 0``). Giving up is a margin a target may keep, but the request's pacer start had already
been counted and was never ended, so every later start of that API waited for it and was refused: one search under a
short deadline stopped the account's searches for good. The reference had the same hole on a late wake-up (a start
taken at or past the deadline); it now ends such a start in ``_slot``, and in ``run`` when the deadline passes between
the two clock reads, so the mutant's margin now ends its start too (a right reading). The wrong reading, the margin
with the start left open, is made in the reference and must fail the row that names it; the reference passes the row,
and the margin that ends its start passes too."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import scheduling
from dsweb_ref.providers._scheduler import AccountScheduler

from ._readings import failing_rows, keep_rows, passes_rows, patch_reading

PACING = "search.api.pacing.rate"
AFTER_SHORT = "a search under a 1 s deadline at 5 QPS, then one under 3 s"
GIVE_UP = """if remaining <= 0:
            if ticket is not None:"""


def test_the_reference_passes_the_after_short_deadline_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(scheduling, "PACING_CASES", PACING, (AFTER_SHORT,), monkeypatch)


def test_a_start_never_ended_after_giving_up_fails_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the seed-9 mutant's 'remaining <= 1' in AccountScheduler.run as it read before the start was ended
    # there: the search under 1 s is given up after its pacer start was taken, the start stays open, and the search
    # under 3 s polls for it until its deadline and is refused ('request not sent'); the pacing rule: waiting is
    # pacing, failing a query for want of a slot is not
    patch_reading(AccountScheduler, "run", GIVE_UP, "if remaining <= 1:\n            if False:", monkeypatch)
    keep_rows(scheduling, "PACING_CASES", (AFTER_SHORT,), monkeypatch)
    assert failing_rows(scheduling, "PACING_CASES", PACING, monkeypatch) == {AFTER_SHORT}


def test_a_margin_that_ends_its_start_passes_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the seed: a target that gives up a request with a second or less left (a margin before its deadline)
    # and ends the start it took; the first search is not judged.
    patch_reading(AccountScheduler, "run", GIVE_UP, "if remaining <= 1:\n            if ticket is not None:",
                  monkeypatch)
    passes_rows(scheduling, "PACING_CASES", PACING, (AFTER_SHORT,), monkeypatch)
