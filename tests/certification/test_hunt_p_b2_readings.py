"""An outside hunt (P, its second list) found two wrong readings of seed 001 that dsweb certify passed.

F4, search.messages.recorded: "The retained Messages path explicitly sends thinking: {type: 'disabled'} and records
that same body before dispatch." The hunt's reading searched each query of a batch with a call context made afresh
(the prompt and localization carried over, the recorder dropped): one-query calls were recorded, a batch's Messages
requests went out with no record, and every row of the check searched one query. Its new row, same-body-batch,
searches two queries of its own and requires a record of each Messages body.

Each reading is made in the reference as the hunt made it and must fail exactly its new row; the reference passes
the new rows."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import request_record
from dsweb_ref.tools.web_search import WebSearchTool

from ._readings import failing_rows, fails_exactly, keep_rows, patch_reading

RECORDED, RECORD_TABLE = "search.messages.recorded", "CASES"
BATCH = request_record.SAME_BODY_BATCH.name

EACH_QUERY = "[self.web.search(SearchRequest(q, cap), ctx) for q in queries]"
EACH_QUERY_UNRECORDED = ("[self.web.search(SearchRequest(q, cap), CallContext(latest_prompt=ctx.latest_prompt, "
                         "localization=ctx.localization)) for q in queries]")


def test_the_reference_passes_the_batch_record_row(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_rows(request_record, RECORD_TABLE, (BATCH,), monkeypatch)
    assert failing_rows(request_record, RECORD_TABLE, RECORDED, monkeypatch) == set()


def test_a_batch_searched_without_the_recorder_fails_exactly_the_batch_record_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (P-F4): each query of a batch searched with a call context made afresh that keeps the prompt and
    # localization but drops the recorder, so a batch's Messages requests go out unrecorded (one-query calls are)
    patch_reading(WebSearchTool, "run", EACH_QUERY, EACH_QUERY_UNRECORDED, monkeypatch)
    fails_exactly(request_record, RECORD_TABLE, RECORDED, BATCH, monkeypatch)
