"""Seed 003's usage, certified (capability ``standalone-usage``): each wrong reading is made in the
reference and must fail exactly the rows of standalone.usage.reported that name it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from dsweb_ref._protocols import StandaloneAnswer, StandaloneUsage
from dsweb_ref.certification.checks import standalone_usage
from dsweb_ref.providers import standalone_messages, standalone_responses
from dsweb_ref.tools import standalone_search

from ._readings import failing_rows, patch_reading

CHECK = "standalone.usage.reported"
TABLE = "USAGE_CASES"
EVERY = {case.name for case in standalone_usage.USAGE_CASES}


def test_the_reference_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(standalone_usage, TABLE, CHECK, monkeypatch) == set()


def test_usage_left_out_of_the_value_fails_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the usage reported nowhere the caller can read it (the value holds the result alone)
    patch_reading(standalone_search.StandaloneSearchTool, "execute",
                  'value={"result": json.loads(text), "usage": usage.to_json()}',
                  'value={"result": json.loads(text)}', monkeypatch)
    assert failing_rows(standalone_usage, TABLE, CHECK, monkeypatch) == EVERY


def test_usage_owned_by_the_model_the_answer_claims_fails_exactly_those_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the answer's own "model" field taken as the model the usage belongs to
    def claimed(read: Any) -> Any:
        def read_claimed(data: dict[str, Any], label: str) -> StandaloneAnswer:
            answer: StandaloneAnswer = read(data, label)
            return replace(answer, usage=replace(answer.usage, model=str(data.get("model") or "")))
        return read_claimed

    monkeypatch.setattr(standalone_messages, "read_answer", claimed(standalone_messages.read_answer))
    monkeypatch.setattr(standalone_responses, "read_response", claimed(standalone_responses.read_response))

    def owned(self: standalone_search.StandaloneSearchTool, usage: StandaloneUsage) -> StandaloneUsage:
        return replace(usage, connection=self.connection, model=usage.model or self.model)

    monkeypatch.setattr(standalone_search.StandaloneSearchTool, "_owned", owned)
    assert failing_rows(standalone_usage, TABLE, CHECK, monkeypatch) == {
        "messages-answer-names-another-model", "responses-answer-names-another-model"}


@pytest.mark.parametrize("kept", ["message_start", "message_delta"])
def test_a_stream_usage_read_from_one_event_fails_exactly_the_streamed_row(
        kept: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a streamed Messages answer's usage taken from message_start alone (output 1) or from
    # message_delta alone (its input count lost)
    right = ('usage.update(mapping(event.get("usage")))' if kept == "message_start"
             else 'usage.update(mapping(mapping(event.get("message")).get("usage")))')
    patch_reading(standalone_messages, "read_events", right, "pass", monkeypatch)
    # message_start alone also loses the cache rows' streamed output count (hunt T2-5's row, whose stream carries it)
    also = {"messages-cache-tokens-streamed"} if kept == "message_start" else set()
    assert failing_rows(standalone_usage, TABLE, CHECK, monkeypatch) == {"messages-streamed", *also}
