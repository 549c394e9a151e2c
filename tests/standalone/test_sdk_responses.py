"""The official OpenAI SDK against the emulator's /v1/responses: plain and streamed, strictly parsed,
and the standalone Responses backend against the same route."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from dsweb_ref.emulator import CutBody, Emulator, HugeSummary, NoSources, ProseOnly, SlowBody, ToolError
from dsweb_ref.providers.standalone_responses import ResponsesStandaloneSearch
from dsweb_ref.tools._result import ToolResult
from dsweb_ref.tools.standalone_search import MAX_RESULT_BYTES, StandaloneSearchTool

from ._fakes import TRANSPORT_ERRORS, without

TOOLS: Any = [{"type": "web_search"}]
INPUT = "Perform a web search for the query: search api"
HASHED = {"id", "item_id", "input_tokens", "total_tokens"}


def _content(value: Any) -> Any:
    return without(value, HASHED)


@pytest.fixture
def sdk(emulator: Emulator, emulator_api_key: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        base_url=emulator.openai_base, api_key=emulator_api_key, max_retries=0, timeout=10.0,
        _strict_response_validation=True,
    ) as client:
        yield client


def test_plain_answer_parses_strictly(sdk: openai.OpenAI, emulator: Emulator) -> None:
    response = sdk.responses.create(model="deepseek-v4-flash", input=INPUT, tools=TOOLS, max_output_tokens=8192)
    assert [r.path for r in emulator.log.records()] == ["/v1/responses"]
    kinds = [item.type for item in response.output]
    assert kinds == ["reasoning", "web_search_call", "message"]
    call = response.output[1]
    assert call.type == "web_search_call" and call.status == "completed"
    notes = [a for part in response.output[2].content if part.type == "output_text" for a in part.annotations]
    assert notes and all(a.type == "url_citation" for a in notes)
    assert response.output_text.startswith("Here is what I found")


def test_sources_and_encrypted_reasoning_only_when_included(sdk: openai.OpenAI) -> None:
    response = sdk.responses.create(
        model="deepseek-v4-flash", input=INPUT, tools=TOOLS,
        include=["web_search_call.action.sources", "reasoning.encrypted_content"],
    )
    reasoning, call = response.output[0], response.output[1]
    assert reasoning.type == "reasoning" and reasoning.encrypted_content
    assert call.type == "web_search_call" and call.action.type == "search" and call.action.sources


def test_streamed_answer_ends_in_the_plain_answer(sdk: openai.OpenAI) -> None:
    plain = sdk.responses.create(model="deepseek-v4-flash", input=INPUT, tools=TOOLS)
    events = list(sdk.responses.create(model="deepseek-v4-flash", input=INPUT, tools=TOOLS, stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert "response.web_search_call.completed" in [e.type for e in events]
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == plain.output_text
    final = events[-1].response  # type: ignore[union-attr]
    assert _content(final.model_dump()) == _content(plain.model_dump())


def test_stream_helper_accumulates(sdk: openai.OpenAI) -> None:
    with sdk.responses.stream(model="deepseek-v4-flash", input=INPUT, tools=TOOLS) as stream:
        final = stream.get_final_response()
    assert final.output_text.startswith("Here is what I found") and final.status == "completed"


def test_unknown_model_and_state_are_400(sdk: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError):
        sdk.responses.create(model="deepseek-v9-imaginary", input=INPUT)
    with pytest.raises(openai.BadRequestError):
        sdk.responses.create(model="deepseek-v4-flash", input=INPUT, previous_response_id="resp_1")


def _tool(emulator: Emulator, key: str) -> StandaloneSearchTool:
    backend = ResponsesStandaloneSearch(emulator.openai_base + "/responses", "deepseek-v4-flash", "K",
                                        environ={"K": key})
    return StandaloneSearchTool(backend)


def _run(tool: StandaloneSearchTool) -> ToolResult:
    return asyncio.run(tool.execute({"query": "search api"}))


def test_standalone_over_responses_returns_cited_sources(emulator: Emulator, emulator_api_key: str) -> None:
    result = _run(_tool(emulator, emulator_api_key))
    value = json.loads(result.text)
    assert value["sources"] and all(s["url"].startswith("https://") for s in value["sources"])
    assert "rs_" not in result.text and "ws_" not in result.text


def test_standalone_over_responses_prose_only_is_an_error(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("responses", ProseOnly("I remember https://guess.test/"))
    assert _run(_tool(emulator, emulator_api_key)).is_error


def test_standalone_over_responses_failed_search_is_an_error(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("responses", ToolError("unavailable"))
    result = _run(_tool(emulator, emulator_api_key))
    assert result.is_error and "search failed" in result.text


def test_standalone_over_responses_no_sources_gives_empty_list(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("responses", NoSources())
    value = json.loads(_run(_tool(emulator, emulator_api_key)).text)
    assert value["sources"] == [] and value["summary"]


def test_standalone_over_responses_huge_summary_is_bounded(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("responses", HugeSummary(500_000))
    result = _run(_tool(emulator, emulator_api_key))
    assert len(result.text.encode()) <= MAX_RESULT_BYTES and json.loads(result.text)["truncated"] is True


def test_slow_response_stream_still_parses(sdk: openai.OpenAI, emulator: Emulator) -> None:
    emulator.inject("responses", SlowBody(chunk_size=256, delay=0.0))
    with sdk.responses.stream(model="deepseek-v4-flash", input=INPUT, tools=TOOLS) as stream:
        assert stream.get_final_response().status == "completed"


def test_cut_response_stream_is_an_error_not_a_partial_response(sdk: openai.OpenAI, emulator: Emulator) -> None:
    emulator.inject("responses", CutBody())
    with (
        pytest.raises((openai.APIError, *TRANSPORT_ERRORS)),
        sdk.responses.stream(model="deepseek-v4-flash", input=INPUT, tools=TOOLS) as stream,
    ):
        stream.get_final_response()
