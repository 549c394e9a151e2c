"""Streamed standalone answers (``stream=True``): the same result, titles and usage as a plain answer,
and the usage of a cut stream reported when its usage event arrived before the cut."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from dsweb_ref._protocols import StandaloneUsage
from dsweb_ref.emulator import CutBody, Emulator, ToolError
from dsweb_ref.emulator.responses import responses_answer, responses_events
from dsweb_ref.emulator.streaming import render_sse
from dsweb_ref.providers._sse import parse_events
from dsweb_ref.providers.standalone_messages import MessagesStandaloneSearch
from dsweb_ref.providers.standalone_responses import ResponsesStandaloneSearch
from dsweb_ref.tools._result import ToolResult
from dsweb_ref.tools.standalone_search import StandaloneSearchTool

KINDS = {"messages": MessagesStandaloneSearch, "responses": ResponsesStandaloneSearch}


def _url(emulator: Emulator, protocol: str) -> str:
    return emulator.messages_base + "/messages" if protocol == "messages" else emulator.openai_base + "/responses"


def _search(emulator: Emulator, key: str, protocol: str, *, stream: bool) -> tuple[ToolResult, list[StandaloneUsage]]:
    seen: list[StandaloneUsage] = []
    backend = KINDS[protocol](_url(emulator, protocol), "deepseek-v4-flash", "K", environ={"K": key}, stream=stream)
    tool = StandaloneSearchTool(backend, on_usage=seen.append, connection="conn", model="deepseek-v4-flash")
    return asyncio.run(tool.execute({"query": "search api"})), seen


@pytest.mark.parametrize("protocol", sorted(KINDS))
def test_a_streamed_answer_gives_the_plain_answers_result(emulator: Emulator, emulator_api_key: str,
                                                           protocol: str) -> None:
    plain, plain_usage = _search(emulator, emulator_api_key, protocol, stream=False)
    streamed, streamed_usage = _search(emulator, emulator_api_key, protocol, stream=True)
    assert not streamed.is_error and streamed.text == plain.text
    assert json.loads(streamed.text)["sources"]
    first, second = emulator.log.for_route(protocol)  # type: ignore[arg-type]
    assert "stream" not in (first.json or {}) and (second.json or {})["stream"] is True
    assert second.response_body.startswith(b"event: ")
    # Output tokens are the same; the input differs by the request's own "stream" field.
    assert [(u.output_tokens, u.web_search_requests, u.connection) for u in streamed_usage] == [
        (u.output_tokens, u.web_search_requests, u.connection) for u in plain_usage]


def _sse_transport(body: bytes, *, fail_after: bool = False) -> httpx.MockTransport:
    class Breaking(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield body
            if fail_after:
                raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Breaking())

    return httpx.MockTransport(handler)


def _responses_stream(**mode: Any) -> bytes:
    request = {"model": "deepseek-v4-flash", "input": "search api", "tools": [{"type": "web_search"}],
               "include": ["web_search_call.action.sources"]}
    return render_sse(responses_events(responses_answer(json.dumps(request).encode())))


def _run_responses(body: bytes, *, fail_after: bool = False) -> tuple[ToolResult, list[StandaloneUsage]]:
    seen: list[StandaloneUsage] = []
    backend = ResponsesStandaloneSearch("https://relay.test/v1/responses", "m", "K", environ={"K": "k-0001"},
                                       transport=_sse_transport(body, fail_after=fail_after), stream=True)
    return asyncio.run(StandaloneSearchTool(backend, on_usage=seen.append).execute({"query": "q"})), seen


def test_a_streamed_responses_answer_merges_citation_titles_into_untitled_sources() -> None:
    body = _responses_stream()
    events = parse_events(body)
    final = next(e for e in events if e["type"] == "response.completed")["response"]
    call = next(i for i in final["output"] if i["type"] == "web_search_call")
    assert all("title" not in s for s in call["action"]["sources"])  # the search call's sources are untitled
    cited = {n["url"]: n["title"] for i in final["output"] if i["type"] == "message"
             for n in i["content"][0]["annotations"]}
    result, _ = _run_responses(body)
    shown = {s["url"]: s["title"] for s in json.loads(result.text)["sources"]}
    assert cited and all(shown[url] == title for url, title in cited.items())


def test_a_responses_stream_cut_before_it_completed_is_an_error_without_token_usage() -> None:
    body = _responses_stream()
    cut = body[: body.index(b"event: response.completed")]
    result, seen = _run_responses(cut, fail_after=True)
    assert result.is_error and "ended before the response completed" in result.text
    assert [(u.input_tokens, u.output_tokens, u.http_requests) for u in seen] == [(0, 0, 1)]


def test_a_responses_stream_whose_completed_event_arrived_before_the_cut_is_read() -> None:
    result, seen = _run_responses(_responses_stream(), fail_after=True)  # whole body, then the break
    assert not result.is_error and seen[0].input_tokens > 0 and seen[0].output_tokens > 0


def test_a_failed_responses_stream_reports_its_usage() -> None:
    final = {"id": "r", "status": "failed", "output": [], "error": {"code": "server_error", "message": "x"},
             "usage": {"input_tokens": 9, "output_tokens": 2}}
    body = render_sse([("response.failed", {"type": "response.failed", "response": final})])
    result, seen = _run_responses(body)
    assert result.is_error and [(u.input_tokens, u.output_tokens) for u in seen] == [(9, 2)]


def _cut_at(emulator: Emulator, key: str, marker: bytes) -> tuple[ToolResult, list[StandaloneUsage], dict[str, Any]]:
    """Stream once whole, then again cut just before ``marker`` (the emulator answers equal requests
    with equal bytes)."""
    whole, _ = _search(emulator, key, "messages", stream=True)
    assert not whole.is_error
    body = emulator.log.for_route("messages")[0].response_body
    delta = next(e for e in parse_events(body) if e["type"] == "message_delta")
    emulator.inject("messages", CutBody(keep=body.index(marker)))
    result, seen = _search(emulator, key, "messages", stream=True)
    return result, seen, delta["usage"]


def test_a_messages_stream_cut_after_its_usage_event_reports_that_usage(emulator: Emulator,
                                                                       emulator_api_key: str) -> None:
    result, seen, usage = _cut_at(emulator, emulator_api_key, b"event: message_stop")
    assert result.is_error and "ended before message_stop" in result.text
    (got,) = seen
    assert (got.input_tokens, got.output_tokens, got.web_search_requests) == (
        usage["input_tokens"], usage["output_tokens"], usage["server_tool_use"]["web_search_requests"])
    assert (got.connection, got.model) == ("conn", "deepseek-v4-flash")


def test_a_messages_stream_cut_before_its_usage_event_reports_the_opening_usage(emulator: Emulator,
                                                                               emulator_api_key: str) -> None:
    result, seen, usage = _cut_at(emulator, emulator_api_key, b"event: message_delta")
    assert result.is_error
    (got,) = seen
    assert got.input_tokens == usage["input_tokens"] and got.output_tokens == 1  # message_start's count


def test_a_streamed_in_band_search_error_reports_its_usage(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("messages", ToolError("too_many_requests"))
    result, seen = _search(emulator, emulator_api_key, "messages", stream=True)
    assert result.is_error and "error_code too_many_requests" in result.text
    assert seen[0].input_tokens > 0 and seen[0].output_tokens > 0


def test_a_json_answer_to_a_stream_request_is_read_as_json() -> None:
    body = {"content": [{"type": "web_search_tool_result", "tool_use_id": "t",
                         "content": [{"type": "web_search_result", "url": "https://a.test/", "title": "A"}]},
                        {"type": "text", "text": "S."}], "usage": {"input_tokens": 4, "output_tokens": 5}}
    backend = MessagesStandaloneSearch("https://relay.test/v1/messages", "m", "K", environ={"K": "k-0001"},
                                       transport=httpx.MockTransport(lambda r: httpx.Response(200, json=body)),
                                       stream=True)
    result = asyncio.run(StandaloneSearchTool(backend).execute({"query": "q"}))
    assert json.loads(result.text)["sources"] == [{"title": "A", "url": "https://a.test/"}]


@pytest.mark.parametrize(
    ("body", "expected"),
    [(b'event: a\ndata: {"type":"a"}\n\nevent: b\ndata: {"ty', [{"type": "a"}]),
     (b'data: {"type":"a"}\r\n\r\ndata: [DONE]\r\n\r\n: comment\r\n\r\n', [{"type": "a"}]),
     (b'data: {"type":\ndata: "split"}\n\n', [{"type": "split"}]),
     (b"", [])],
    ids=["cut-event-dropped", "crlf-done-comment", "multi-line-data", "empty"],
)
def test_parse_events(body: bytes, expected: list[dict[str, Any]]) -> None:
    assert parse_events(body) == expected


@pytest.mark.parametrize("body", [b"data: [1, 2]\n\n", b"data: {not json\n\n", b"data: NaN\n\n"])
def test_an_event_that_is_not_a_json_object_is_refused(body: bytes) -> None:
    with pytest.raises(ValueError):
        parse_events(body)
    result, _ = _run_responses(body)
    assert result.is_error and "unreadable event stream" in result.text
