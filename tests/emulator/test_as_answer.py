"""The ``AsAnswer`` fault (issue 24 item 5): a scripted model answer told as JSON to a plain request and as
the route's server-sent events to a streamed one, the same content either way; and the bends that spoil
a stream near its end (ended early, cut mid-event, an ``error`` event), with what a plain request gets then."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from dsweb_ref.emulator import AsAnswer, Emulator
from dsweb_ref.emulator.responses import responses_events
from dsweb_ref.emulator.retold import error_event
from dsweb_ref.providers._sse import parse_events

from ._support import MESSAGES, messages_body

RESPONSES = "/v1/responses"
MESSAGE = {"id": "msg_t", "type": "message", "role": "assistant", "model": "deepseek-v4-flash",
           "content": [{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_t",
                        "content": [{"type": "web_search_result", "url": "https://a.example.test/", "title": "A"}]},
                       {"type": "text", "text": "An answer long enough for several text deltas to carry it."}],
           "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 4}}
RESPONSE = {"id": "resp_t", "object": "response", "status": "completed", "model": "deepseek-v4-flash",
            "output": [{"id": "ws_t", "type": "web_search_call", "status": "completed",
                        "action": {"type": "search", "query": "q"}},
                       {"id": "msg_t", "type": "message", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": "Answer.", "annotations": []}]}],
            "usage": {"input_tokens": 3, "output_tokens": 4}}
ROUTES = {"messages": (MESSAGES, MESSAGE), "responses": (RESPONSES, RESPONSE)}


def _request(route: str, stream: bool) -> dict[str, Any]:
    if route == "messages":
        return messages_body("coffee", **({"stream": True} if stream else {}))
    body: dict[str, Any] = {"model": "deepseek-v4-flash", "input": "coffee", "tools": [{"type": "web_search"}]}
    return {**body, "stream": True} if stream else body


def _post(client: httpx.Client, route: str, stream: bool) -> httpx.Response:
    return client.post(ROUTES[route][0], json=_request(route, stream))


def _rebuilt_messages(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The content blocks a Messages stream tells, each text block's deltas joined."""
    blocks: dict[int, dict[str, Any]] = {}
    for event in events:
        if event["type"] == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta":
            blocks[event["index"]]["text"] += event["delta"]["text"]
    return {"content": [blocks[i] for i in sorted(blocks)]}


def _scripted(emulator: Emulator, route: str, bend: Any = None, last: int = 1) -> None:
    emulator.inject(route, AsAnswer(json.dumps(ROUTES[route][1]).encode(), bend, last))  # type: ignore[arg-type]


def _whole_stream(emulator: Emulator, client: httpx.Client, route: str) -> list[dict[str, Any]]:
    """The events of the scripted answer told whole."""
    _scripted(emulator, route)
    return parse_events(_post(client, route, stream=True).content)


def _unnumbered(event: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k != "sequence_number"}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_plain_request_gets_the_scripted_json(emulator: Emulator, client: httpx.Client, route: str) -> None:
    body = json.dumps(ROUTES[route][1]).encode()
    emulator.inject(route, AsAnswer(body))  # type: ignore[arg-type]
    response = _post(client, route, stream=False)
    assert (response.status_code, response.headers["content-type"], response.content) == (
        200, "application/json", body)


def test_a_streamed_messages_request_gets_the_same_answer_as_events(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("messages", AsAnswer(json.dumps(MESSAGE).encode()))
    response = _post(client, "messages", stream=True)
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_events(response.content)
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    assert sum(e["type"] == "content_block_delta" for e in events) > 2, "the text comes in several deltas"
    assert _rebuilt_messages(events)["content"] == MESSAGE["content"]
    assert emulator.log.records()[0].fault == "AsAnswer"


def test_a_streamed_responses_request_gets_the_same_answer_as_events(emulator: Emulator, client: httpx.Client
                                                                      ) -> None:
    emulator.inject("responses", AsAnswer(json.dumps(RESPONSE).encode()))
    events = parse_events(_post(client, "responses", stream=True).content)
    assert events[-1] == {"type": "response.completed", "sequence_number": len(events) - 1, "response": RESPONSE}
    assert [e["sequence_number"] for e in events] == list(range(len(events)))


@pytest.mark.parametrize(("status", "final"), [("completed", "response.completed"), ("failed", "response.failed"),
                                               ("incomplete", "response.incomplete")])
def test_a_responses_stream_ends_with_the_event_its_status_names(status: str, final: str) -> None:
    assert responses_events({**RESPONSE, "status": status})[-1][0] == final


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_stream_ended_early_lacks_only_its_last_events(emulator: Emulator, client: httpx.Client, route: str) -> None:
    whole = _whole_stream(emulator, client, route)
    _scripted(emulator, route, "early", 2)
    assert parse_events(_post(client, route, stream=True).content) == whole[:-2]


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_cut_stream_breaks_inside_the_event_before_its_last_ones(emulator: Emulator, client: httpx.Client,
                                                                   route: str) -> None:
    whole = _whole_stream(emulator, client, route)
    _scripted(emulator, route, "cut", 1)
    received = b""
    with pytest.raises(httpx.RemoteProtocolError), client.stream("POST", ROUTES[route][0],
                                                                 json=_request(route, True)) as response:
        for chunk in response.iter_raw():
            received += chunk
    assert parse_events(received) == whole[:-1], "every event before the last arrives whole, the last one cut"
    assert received.endswith(b"\n\n") is False


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_an_error_event_comes_before_the_last_events_and_the_rest_follow(emulator: Emulator, client: httpx.Client,
                                                                         route: str) -> None:
    whole = _whole_stream(emulator, client, route)
    _scripted(emulator, route, "error", 2)
    told = parse_events(_post(client, route, stream=True).content)
    assert [_unnumbered(e) for e in told] == [
        _unnumbered(e) for e in [*whole[:-2], error_event(route)[1], *whole[-2:]]]
    if route == "responses":
        assert [e["sequence_number"] for e in told] == list(range(len(told)))


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_plain_request_to_a_bent_stream_fails_as_a_failed_upstream(emulator: Emulator, client: httpx.Client,
                                                                     route: str) -> None:
    body = json.dumps(ROUTES[route][1]).encode()
    emulator.inject(route, AsAnswer(body, "error"))  # type: ignore[arg-type]
    assert _post(client, route, stream=False).status_code == 500
    for bend in ("early", "cut"):
        emulator.inject(route, AsAnswer(body, bend))  # type: ignore[arg-type]
        with pytest.raises(httpx.RemoteProtocolError):
            _post(client, route, stream=False)


def test_an_answer_the_route_cannot_tell_as_events_is_a_500(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("messages", AsAnswer(b'{"content": "not blocks"}'))
    assert _post(client, "messages", stream=True).status_code == 500


def test_as_answer_is_for_the_model_routes_and_counts_its_last_events_from_one(emulator: Emulator) -> None:
    with pytest.raises(ValueError, match="messages and responses routes only"):
        emulator.inject("search", AsAnswer(b"{}"))
    with pytest.raises(ValueError, match="last must be >= 1"):
        emulator.inject("messages", AsAnswer(b"{}", "early", 0))


def test_an_own_stream_goes_to_a_streamed_request_as_given_and_the_body_to_a_plain_one(emulator: Emulator,
                                                                                      client: httpx.Client) -> None:
    body, stream = json.dumps(MESSAGE).encode(), b'event: x\ndata: {"type": "x"}\n\n'
    emulator.inject("messages", AsAnswer(body, stream=stream), times=2)
    assert _post(client, "messages", stream=True).content == stream
    assert _post(client, "messages", stream=False).content == body
    assert emulator.log.records()[0].fault == "AsAnswer(own stream)"


def test_an_upstream_ignoring_the_stream_answers_a_streamed_request_plainly(emulator: Emulator,
                                                                           client: httpx.Client) -> None:
    body = json.dumps(MESSAGE).encode()
    emulator.inject("messages", AsAnswer(body, ignores_stream=True))
    response = _post(client, "messages", stream=True)
    assert (response.headers["content-type"], response.content) == ("application/json", body)
    emulator.inject("messages", AsAnswer(body, "cut", ignores_stream=True))
    with pytest.raises(httpx.RemoteProtocolError):
        _post(client, "messages", stream=True)
