"""`search.batch.all_or_nothing` lets a case's failure out only once every sibling request is parked (or
answered), so no request of one case is still on its way to the emulator when the next case starts.

Found by the fresh-clone CI and a loaded test run: a correct target, the example adapter once and the Node
adapter once, failed the check with "adapter did not answer request N within 20s". In the rows whose siblings
are parked, the failure used to go out at once. A sibling the target then aborted could be read by the emulator
only after the next case had scripted its faults; being a query of that case too, it took the failing query's
fault, the real failing query was parked instead, and the call hung until the check gave up."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import batch
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.emulator.gate import Gate

from .conftest import run


def test_every_sibling_is_parked_before_a_failure_goes_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: letting the failure out right after the call starts (the siblings not yet read by the emulator)
    parked_at_release: list[int] = []
    siblings: list[Gate] = []
    made, release = Gate.__init__, Gate.release

    def tracked(self: Gate, name: str = "gate") -> None:
        made(self, name)
        if name == "siblings":
            siblings.append(self)

    def noted(self: Gate) -> None:
        if self.name == "failing" and not self.is_open:
            parked_at_release.append(siblings[-1].held)
        release(self)

    monkeypatch.setattr(Gate, "__init__", tracked)
    monkeypatch.setattr(Gate, "release", noted)
    (result,) = run(reference_target(), only=["search.batch.all_or_nothing"]).results
    assert result.outcome.value == "passed", result.reason
    # Rows whose siblings succeed first have no parked siblings: they were answered before the failure.
    rows = batch.ALL_OR_NOTHING
    expected = [0 if c["siblings"] == "succeed first" else c["queries"] - len(c["failing"]) for c in rows]
    protocols = len(parked_at_release) // len(batch.ALL_OR_NOTHING)
    assert protocols >= 1 and parked_at_release == expected * protocols, parked_at_release
