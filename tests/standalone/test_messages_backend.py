"""The standalone tool over the Messages protocol, against the real emulator on loopback."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from dsweb_ref._context import CallContext, OutgoingRequest
from dsweb_ref._exceptions import WebError
from dsweb_ref._protocols import StandaloneUsage
from dsweb_ref.emulator import (
    CutBody,
    Emulator,
    Hold,
    HugeSummary,
    NoSources,
    ProseOnly,
    Redirect,
    SlowBody,
    Status,
    ToolError,
)
from dsweb_ref.providers.standalone_messages import PROMPT_PREFIX, MessagesStandaloneSearch, read_answer
from dsweb_ref.tools._result import ToolResult
from dsweb_ref.tools.standalone_search import MAX_RESULT_BYTES, MAX_SUMMARY_BYTES, StandaloneSearchTool

ENV_NAME = "STANDALONE_TEST_KEY"


def _tool(emulator: Emulator, key: str, **kwargs: Any) -> StandaloneSearchTool:
    url = emulator.messages_base + "/messages"
    backend = MessagesStandaloneSearch(url, "deepseek-v4-flash", ENV_NAME, environ={ENV_NAME: key})
    return StandaloneSearchTool(backend, **kwargs)


def _run(tool: StandaloneSearchTool, query: str = "search api") -> ToolResult:
    return asyncio.run(tool.execute({"query": query}))


def test_request_holds_only_the_query_and_the_native_tool_with_the_8192_budget(
    emulator: Emulator, emulator_api_key: str
) -> None:
    result = _run(_tool(emulator, emulator_api_key))
    assert not result.is_error, result.text
    (record,) = emulator.log.for_route("messages")
    assert record.json == {
        "model": "deepseek-v4-flash",
        "max_tokens": 8192,
        "messages": [{"role": "user", "content": [{"type": "text", "text": PROMPT_PREFIX + "search api"}]}],
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
    }


def test_answer_becomes_bounded_json_without_thinking_or_encrypted_content(
    emulator: Emulator, emulator_api_key: str
) -> None:
    result = _run(_tool(emulator, emulator_api_key))
    value = json.loads(result.text)
    assert set(value) == {"summary", "sources"} and 1 <= len(value["sources"]) <= 8
    assert all(set(s) == {"title", "url"} and s["url"].startswith("https://") for s in value["sources"])
    (record,) = emulator.log.for_route("messages")
    raw = json.loads(record.response_body)
    thinking = [b["thinking"] for b in raw["content"] if b["type"] == "thinking"]
    encrypted = [i["encrypted_content"] for b in raw["content"] if b["type"] == "web_search_tool_result"
                 for i in b["content"]]
    assert thinking and encrypted
    assert not any(t in result.text for t in thinking) and not any(e in result.text for e in encrypted)


def test_usage_comes_from_the_answer_under_web_search(emulator: Emulator, emulator_api_key: str) -> None:
    result = _run(_tool(emulator, emulator_api_key))
    assert result.value is not None
    raw = json.loads(emulator.log.for_route("messages")[0].response_body)["usage"]
    assert result.value["usage"] == {
        "source": "web-search",
        "connection": "",
        "model": "",
        "input_tokens": raw["input_tokens"],
        "output_tokens": raw["output_tokens"],
        "http_requests": 1,
        "web_search_requests": 1,
    }


def test_prose_only_answer_is_a_tool_error(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("messages", ProseOnly("I know this: https://guess.test/"))
    result = _run(_tool(emulator, emulator_api_key))
    assert result.is_error and "without completing a native web search" in result.text


def test_in_band_search_error_is_a_tool_error(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("messages", ToolError("too_many_requests"))
    result = _run(_tool(emulator, emulator_api_key))
    assert result.is_error and "error_code too_many_requests" in result.text


def test_redirect_is_not_followed(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("messages", Redirect(307))
    result = _run(_tool(emulator, emulator_api_key))
    assert result.is_error and "redirect" in result.text
    assert emulator.log.trap_hits() == []


def test_a_slow_answer_past_the_deadline_is_a_tool_error(emulator: Emulator, emulator_api_key: str) -> None:
    gate = emulator.gate("slow")
    emulator.inject("messages", Hold(gate, timeout=30))
    result = _run(_tool(emulator, emulator_api_key, timeout_s=0.2))
    gate.release()
    assert result.is_error and "timed out" in result.text


def test_concurrent_searches_are_isolated_requests(emulator: Emulator, emulator_api_key: str) -> None:
    gate = emulator.gate("both")
    emulator.inject("messages", Hold(gate), times=2)
    tool = _tool(emulator, emulator_api_key)

    async def both() -> list[ToolResult]:
        tasks = [asyncio.create_task(tool.execute({"query": q})) for q in ("first topic", "second topic")]
        await asyncio.to_thread(gate.wait_held, 2, 5)
        gate.release()
        return list(await asyncio.gather(*tasks))

    results = asyncio.run(both())
    assert not any(r.is_error for r in results)
    records = emulator.log.for_route("messages")
    assert emulator.log.max_in_flight == 2
    assert sorted(r.json["messages"][0]["content"][0]["text"] for r in records) == [
        PROMPT_PREFIX + "first topic",
        PROMPT_PREFIX + "second topic",
    ]
    assert all(len(r.json["messages"]) == 1 and len(r.json["tools"]) == 1 for r in records)


def test_slow_body_within_the_deadline_still_answers(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("messages", SlowBody(chunk_size=512, delay=0.0))
    assert not _run(_tool(emulator, emulator_api_key)).is_error


def test_started_search_without_result_block_is_not_a_completed_search() -> None:
    body = {"content": [{"type": "server_tool_use", "id": "s", "name": "web_search", "input": {"query": "q"}},
                        {"type": "text", "text": "prose"}]}
    answer = read_answer(body, "t")
    assert not answer.searched and answer.sources == ()


def test_empty_result_list_is_a_completed_search_without_sources() -> None:
    body = {"content": [{"type": "web_search_tool_result", "tool_use_id": "s", "content": []},
                        {"type": "text", "text": "See https://x.test/", "citations": [
                            {"type": "web_search_result_location", "url": "https://c.test/", "cited_text": "c"}]}]}
    answer = read_answer(body, "t")
    assert answer.searched and answer.sources == () and answer.summary == "See https://x.test/"


def test_client_tool_call_from_the_search_model_is_an_error() -> None:
    answer = read_answer({"content": [{"type": "tool_use", "id": "t", "name": "bash", "input": {}}]}, "t")
    assert answer.failure is not None and "client tool" in answer.failure and not answer.searched


def test_missing_key_is_a_credential_error_and_nothing_is_sent(emulator: Emulator) -> None:
    backend = MessagesStandaloneSearch(emulator.messages_base + "/messages", "deepseek-v4-flash", ENV_NAME, environ={})
    result = _run(StandaloneSearchTool(backend))
    assert result.error_code == "WEB_PROVIDER_CREDENTIAL_MISSING" and ENV_NAME in result.text
    assert emulator.log.for_route("messages") == []


def test_search_completed_without_sources_gives_empty_sources(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("messages", NoSources())
    value = json.loads(_run(_tool(emulator, emulator_api_key)).text)
    assert value["sources"] == []


def test_huge_summary_is_cut_and_flagged(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("messages", HugeSummary(300_000))
    result = _run(_tool(emulator, emulator_api_key))
    value = json.loads(result.text)
    assert value["truncated"] is True and len(value["summary"].encode()) == MAX_SUMMARY_BYTES
    assert len(result.text.encode()) <= MAX_RESULT_BYTES


def test_cut_body_is_a_tool_error(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("messages", CutBody())
    assert _run(_tool(emulator, emulator_api_key)).error_code == "WEB_PROVIDER_ERROR"


def test_a_failed_request_still_counts_as_one_http_request(emulator: Emulator, emulator_api_key: str) -> None:
    seen: list[StandaloneUsage] = []
    emulator.inject("messages", Status(500))
    result = _run(_tool(emulator, emulator_api_key, on_usage=seen.append))
    assert result.is_error and seen == [StandaloneUsage(http_requests=1)]


def test_nothing_sent_means_no_usage(emulator: Emulator) -> None:
    seen: list[StandaloneUsage] = []
    backend = MessagesStandaloneSearch(emulator.messages_base + "/messages", "m", ENV_NAME, environ={})
    assert _run(StandaloneSearchTool(backend, on_usage=seen.append)).is_error and seen == []


def test_the_callers_recorder_sees_the_exact_body_before_dispatch(emulator: Emulator, emulator_api_key: str) -> None:
    recorded: list[OutgoingRequest] = []
    tool = _tool(emulator, emulator_api_key)
    asyncio.run(tool.execute({"query": "search api"}, CallContext(record_request=recorded.append)))
    (record,) = emulator.log.for_route("messages")
    assert [r.body for r in recorded] == [record.body]


def test_a_refusing_recorder_stops_the_request(emulator: Emulator, emulator_api_key: str) -> None:
    def refuse(_: OutgoingRequest) -> None:
        raise WebError("WEB_CONFIG_INVALID", "recording refused")

    tool = _tool(emulator, emulator_api_key)
    result = asyncio.run(tool.execute({"query": "q"}, CallContext(record_request=refuse)))
    assert result.error_code == "WEB_CONFIG_INVALID" and emulator.log.for_route("messages") == []
