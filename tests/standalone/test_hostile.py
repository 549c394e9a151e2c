"""Hostile backend bodies and hostile text: a WebError or a bounded, valid result, never a raw
exception, invalid UTF-8 or an oversized result (hypothesis, derandomized)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsweb_ref._exceptions import WebError
from dsweb_ref._protocols import StandaloneAnswer, StandaloneSource
from dsweb_ref.providers._sse import parse_events
from dsweb_ref.providers._standalone import Streamed
from dsweb_ref.providers.standalone_messages import read_answer
from dsweb_ref.providers.standalone_messages import read_events as read_message_events
from dsweb_ref.providers.standalone_responses import read_events as read_response_events
from dsweb_ref.providers.standalone_responses import read_response
from dsweb_ref.tools.standalone_search import MAX_RESULT_BYTES, MAX_SOURCES, StandaloneSearchTool

from ._fakes import ScriptedBackend

SETTINGS = settings(max_examples=150, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=15,
)
BLOCK_TYPES = st.sampled_from(["text", "thinking", "server_tool_use", "web_search_tool_result", "tool_use", "x"])
BLOCK = st.fixed_dictionaries({"type": BLOCK_TYPES}, optional={"text": JSON, "content": JSON, "citations": JSON})
ITEM_TYPES = st.sampled_from(["message", "reasoning", "web_search_call", "function_call", "x"])
ITEM = st.fixed_dictionaries({"type": ITEM_TYPES}, optional={"status": JSON, "action": JSON, "content": JSON})
# Text with controls, quotes, backslashes, lone surrogates and astral characters.
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=3000)


@SETTINGS
@given(content=st.one_of(JSON, st.lists(BLOCK, max_size=6)), usage=JSON)
def test_any_messages_body_is_an_answer_or_a_web_error(content: Any, usage: Any) -> None:
    try:
        answer = read_answer({"content": content, "usage": usage}, "t")
    except WebError:
        return
    assert isinstance(answer.summary, str) and all(isinstance(s.url, str) for s in answer.sources)


@SETTINGS
@given(output=st.one_of(JSON, st.lists(ITEM, max_size=6)), status=JSON, usage=JSON)
def test_any_responses_body_is_an_answer_or_a_web_error(output: Any, status: Any, usage: Any) -> None:
    try:
        answer = read_response({"output": output, "status": status, "usage": usage}, "t")
    except WebError:
        return
    assert isinstance(answer.summary, str) and all(isinstance(s.url, str) for s in answer.sources)


@SETTINGS
@given(summary=TEXT, sources=st.lists(st.tuples(TEXT, TEXT), max_size=12), repeat=st.integers(1, 12))
def test_any_text_gives_valid_bounded_json(summary: str, sources: list[tuple[str, str]], repeat: int) -> None:
    pairs = [("https://a.test/" + url[:50].replace(" ", ""), title) for url, title in sources]
    answer = StandaloneAnswer(summary * repeat, tuple(StandaloneSource(u, t * repeat) for u, t in pairs), True)
    result = asyncio.run(StandaloneSearchTool(ScriptedBackend(answer)).execute({"query": "q"}))
    assert not result.is_error
    encoded = result.text.encode("utf-8")  # raises on a lone surrogate
    assert len(encoded) <= MAX_RESULT_BYTES
    value = json.loads(result.text)
    assert set(value) <= {"summary", "sources", "truncated"} and len(value["sources"]) <= MAX_SOURCES


MESSAGE_EVENTS = st.sampled_from(["message_start", "content_block_start", "content_block_delta", "message_delta",
                                  "message_stop", "error", "ping", "x"])
RESPONSE_EVENTS = st.sampled_from(["response.completed", "response.failed", "response.incomplete",
                                   "response.output_item.done", "error", "x"])
EVENT_FIELDS = {"index": JSON | st.integers(0, 3), "message": JSON, "content_block": JSON | BLOCK, "delta": JSON,
                "usage": JSON, "response": JSON, "item": JSON | ITEM, "output_index": JSON | st.integers(0, 3)}


@SETTINGS
@given(events=st.lists(st.fixed_dictionaries({"type": MESSAGE_EVENTS}, optional=EVENT_FIELDS), max_size=8),
       cut=st.booleans())
def test_any_messages_event_stream_is_an_answer_or_a_web_error(events: list[dict[str, Any]], cut: bool) -> None:
    try:
        answer = read_message_events(Streamed(events, cut), "t")
    except WebError:
        return
    assert isinstance(answer.summary, str) and all(isinstance(s.url, str) for s in answer.sources)
    assert answer.failure is not None or not cut


@SETTINGS
@given(events=st.lists(st.fixed_dictionaries({"type": RESPONSE_EVENTS}, optional=EVENT_FIELDS), max_size=8),
       cut=st.booleans())
def test_any_responses_event_stream_is_an_answer_or_a_web_error(events: list[dict[str, Any]], cut: bool) -> None:
    try:
        answer = read_response_events(Streamed(events, cut), "t")
    except WebError:
        return
    assert isinstance(answer.summary, str) and all(isinstance(s.url, str) for s in answer.sources)


@SETTINGS
@given(body=st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_any_event_stream_body_parses_or_is_refused_with_value_error(body: bytes) -> None:
    try:
        events = parse_events(body)
    except ValueError:
        return
    assert all(isinstance(e, dict) for e in events)
