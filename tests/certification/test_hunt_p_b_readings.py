"""Hunt P, part B: wrong readings of seed 001 the suite certified, each now failing a new row. (a) A paced Search API
request whose body is rebuilt when its slot comes (count not lowered, ori_question dropped, need_content true)."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import search
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi

from ._readings import failing_rows, fails_exactly, keep_rows, patch_reading

PACED_WIRE, PACED_VALUES = "search.api.pacing.wire", "paced requests' body values"


def test_the_reference_passes_the_paced_body_values_row(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_rows(search, "SCHEDULED_WIRE", (PACED_VALUES,), monkeypatch)
    assert failing_rows(search, "SCHEDULED_WIRE", PACED_WIRE, monkeypatch) == set()


@pytest.mark.parametrize(("right", "wrong"), [
    ("count = min(count, limit)", "count = min(count, limit) if not conf.pacing else count"),
    ("if conf.send_original_question else None", "if conf.send_original_question and not conf.pacing else None"),
    ('"need_content": False}', '"need_content": bool(conf.pacing)}'),
], ids=["count-not-lowered", "ori-question-dropped", "need-content-true"])
def test_a_paced_body_rebuilt_fails_exactly_the_paced_body_values_row(
    right: str, wrong: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a queue-style pacer that rebuilds the body when the slot comes (the hunt's three readings)
    patch_reading(DeepSeekSearchApi, "search", right, wrong, monkeypatch)
    fails_exactly(search, "SCHEDULED_WIRE", PACED_WIRE, PACED_VALUES, monkeypatch)
