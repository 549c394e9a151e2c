"""The official Anthropic SDK against the emulator: plain and streamed answers parse strictly."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from dsweb_ref.emulator import CutBody, Emulator, SlowBody

from ._fakes import TRANSPORT_ERRORS, without

TOOLS: Any = [{"type": "web_search_20250305", "name": "web_search"}]
MESSAGES: Any = [{"role": "user", "content": "Perform a web search for the query: search api"}]
# Hashes or lengths of the request body (which differs by "stream"), not content.
HASHED = {"id", "signature", "encrypted_content", "encrypted_index", "tool_use_id", "input_tokens"}


def _content(value: Any) -> Any:
    return without(value, HASHED)


@pytest.fixture
def sdk(emulator: Emulator, emulator_api_key: str) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        base_url=emulator.anthropic_base, api_key=emulator_api_key, max_retries=0, timeout=10.0,
        _strict_response_validation=True,
    ) as client:
        yield client


def _plain(sdk: anthropic.Anthropic) -> anthropic.types.Message:
    return sdk.messages.create(model="deepseek-v4-flash", max_tokens=8192, messages=MESSAGES, tools=TOOLS)


def test_sdk_base_url_reaches_the_messages_route(sdk: anthropic.Anthropic, emulator: Emulator) -> None:
    _plain(sdk)
    assert [r.path for r in emulator.log.records()] == ["/anthropic/v1/messages"]


def test_plain_answer_parses_strictly_with_search_blocks(sdk: anthropic.Anthropic) -> None:
    message = _plain(sdk)
    kinds = [block.type for block in message.content]
    assert kinds[:3] == ["thinking", "server_tool_use", "web_search_tool_result"] and "text" in kinds
    result = message.content[2]
    assert isinstance(result, anthropic.types.WebSearchToolResultBlock) and isinstance(result.content, list)
    assert message.usage.server_tool_use is not None and message.usage.server_tool_use.web_search_requests == 1


def test_streamed_answer_accumulates_to_the_plain_answer(sdk: anthropic.Anthropic) -> None:
    plain = _plain(sdk)
    with sdk.messages.stream(model="deepseek-v4-flash", max_tokens=8192, messages=MESSAGES, tools=TOOLS) as stream:
        final = stream.get_final_message()
    assert _content(final.model_dump(exclude_none=True)) == _content(plain.model_dump(exclude_none=True))
    assert len(final.content) == len(plain.content) > 3


def test_raw_stream_event_order(sdk: anthropic.Anthropic) -> None:
    events = list(sdk.messages.create(model="deepseek-v4-flash", max_tokens=64, messages=MESSAGES, tools=TOOLS,
                                      stream=True))
    names = [e.type for e in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    starts = [i for i, n in enumerate(names) if n == "content_block_start"]
    stops = [i for i, n in enumerate(names) if n == "content_block_stop"]
    assert len(starts) == len(stops) and all(a < b for a, b in zip(starts, stops, strict=True))
    assert any(e.type == "content_block_delta" and e.delta.type == "text_delta" for e in events)


def test_slow_stream_still_parses(sdk: anthropic.Anthropic, emulator: Emulator) -> None:
    emulator.inject("messages", SlowBody(chunk_size=256, delay=0.0))
    with sdk.messages.stream(model="deepseek-v4-flash", max_tokens=64, messages=MESSAGES, tools=TOOLS) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "end_turn"


def test_cut_stream_is_an_sdk_error_not_a_partial_message(sdk: anthropic.Anthropic, emulator: Emulator) -> None:
    emulator.inject("messages", CutBody())
    with (
        pytest.raises((anthropic.APIError, *TRANSPORT_ERRORS)),
        sdk.messages.stream(model="deepseek-v4-flash", max_tokens=64, messages=MESSAGES, tools=TOOLS) as stream,
    ):
        stream.get_final_message()


def test_unknown_deepseek_model_is_a_400(sdk: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError) as info:
        sdk.messages.create(model="deepseek-v9-imaginary", max_tokens=64, messages=MESSAGES)
    assert info.value.status_code == 400


@pytest.mark.parametrize("model", ["deepseek-v4-flash", "deepseek-v4-pro", "deepseek-flash", "claude-opus-4-1"])
def test_known_models_are_accepted(sdk: anthropic.Anthropic, model: str) -> None:
    assert sdk.messages.create(model=model, max_tokens=64, messages=MESSAGES).type == "message"
