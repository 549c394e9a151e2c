"""POST /anthropic/v1/messages with and without the web_search server tool."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from dsweb_ref.emulator import Emulator
from dsweb_ref.emulator.fixtures import EmulatorFactory

from ._support import MESSAGES, messages_body


def blocks(payload: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [b for b in payload["content"] if b["type"] == kind]


def test_web_search_answer_shape(client: httpx.Client) -> None:
    response = client.post(MESSAGES, json=messages_body("Perform a web search for the query: asyncio cancellation"))
    assert response.status_code == 200
    payload = response.json()
    assert payload["type"] == "message" and payload["role"] == "assistant"
    assert payload["model"] == "deepseek-v4-flash"
    assert payload["stop_reason"] == "end_turn"
    assert payload["id"].startswith("msg_")

    (tool_use,) = blocks(payload, "server_tool_use")
    assert tool_use["name"] == "web_search"
    assert tool_use["input"] == {"query": "asyncio cancellation"}
    (result,) = blocks(payload, "web_search_tool_result")
    assert result["tool_use_id"] == tool_use["id"]
    assert result["content"], "the query matches documents"
    for item in result["content"]:
        assert set(item) == {"type", "url", "title", "encrypted_content", "page_age"}
        assert item["type"] == "web_search_result"
    assert result["content"][0]["url"] == "https://blog.example.test/python/asyncio-cancellation"
    assert result["content"][0]["page_age"] == "2025-11-20"

    cited = [b for b in blocks(payload, "text") if b.get("citations")]
    assert cited
    result_urls = {item["url"] for item in result["content"]}
    for block in cited:
        for citation in block["citations"]:
            assert set(citation) == {"type", "url", "title", "cited_text", "encrypted_index"}
            assert citation["type"] == "web_search_result_location"
            assert citation["url"] in result_urls
            assert citation["cited_text"]
    assert payload["usage"]["server_tool_use"]["web_search_requests"] == 1
    assert payload["usage"]["input_tokens"] > 0 and payload["usage"]["output_tokens"] > 0


def test_alternate_path_and_sdk_base(client: httpx.Client, emulator: Emulator) -> None:
    body = messages_body("coffee")
    assert client.post("/anthropic/messages", json=body).content == client.post(MESSAGES, json=body).content
    assert emulator.anthropic_base + "/v1/messages" == emulator.messages_base + "/messages"


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("Perform a web search for the query: rust async runtimes", "rust async runtimes"),
        ("rust async runtimes", "rust async runtimes"),
        ("  Search the web for   'spring tides'  ", "spring tides"),
        ("search api pricing", "search api pricing"),
        ("Query: 上海天气", "上海天气"),
    ],
)
def test_query_extraction(client: httpx.Client, text: str, query: str) -> None:
    payload = client.post(MESSAGES, json=messages_body(text)).json()
    assert blocks(payload, "server_tool_use")[0]["input"]["query"] == query


def test_plain_string_content_and_long_text(client: httpx.Client) -> None:
    body = messages_body("x")
    body["messages"] = [{"role": "user", "content": "why " * 100}]
    query = blocks(client.post(MESSAGES, json=body).json(), "server_tool_use")[0]["input"]["query"]
    assert len(query) <= 128


def test_no_results_still_has_a_result_block(client: httpx.Client) -> None:
    payload = client.post(MESSAGES, json=messages_body("xylophone marmalade")).json()
    (result,) = blocks(payload, "web_search_tool_result")
    assert result["content"] == []
    assert not any(b.get("citations") for b in blocks(payload, "text"))


def test_without_web_search_tool_answers_plain_text(client: httpx.Client) -> None:
    payload = client.post(MESSAGES, json=messages_body("hello there", tools=False)).json()
    assert not blocks(payload, "server_tool_use") and not blocks(payload, "web_search_tool_result")
    assert blocks(payload, "text")
    assert payload["usage"]["server_tool_use"]["web_search_requests"] == 0


def test_thinking_block_unless_disabled(client: httpx.Client) -> None:
    default = client.post(MESSAGES, json=messages_body("coffee")).json()
    assert blocks(default, "thinking")
    disabled = client.post(MESSAGES, json=messages_body("coffee", thinking={"type": "disabled"})).json()
    assert not blocks(disabled, "thinking")


def test_allowed_domains_narrow_the_search(client: httpx.Client) -> None:
    body = messages_body("markdown")
    body["tools"] = [{**body["tools"][0], "allowed_domains": ["wiki.example.test"]}]
    (result,) = blocks(client.post(MESSAGES, json=body).json(), "web_search_tool_result")
    assert [item["url"] for item in result["content"]] == ["https://wiki.example.test/Markdown"]


def test_same_request_gives_identical_bytes_across_servers(
    emulator_factory: EmulatorFactory, emulator_api_key: str
) -> None:
    body = messages_body("Perform a web search for the query: redirects")
    answers = []
    for _ in range(2):
        emu = emulator_factory(api_keys=(emulator_api_key,))
        answers.append(httpx.post(emu.messages_base + "/messages", json=body, headers={"x-api-key": emulator_api_key}))
    assert answers[0].status_code == 200
    assert answers[0].content == answers[1].content


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"model": "gpt-4o"}, "model"),
        ({"model": None}, "model"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "system", "content": "x"}]}, "messages"),
        ({"stream": "yes"}, "stream"),
        ({"thinking": {"type": "sometimes"}}, "thinking"),
        ({"tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 0}]}, "tools"),
    ],
)
def test_validation_errors(client: httpx.Client, change: dict[str, Any], param: str) -> None:
    response = client.post(MESSAGES, json={**messages_body("coffee"), **change})
    assert response.status_code == 400
    body = response.json()  # the Anthropic envelope: no param field, the message names the field
    assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["message"].startswith(f"{param}:") or body["error"]["message"] == "Model Not Exist"


@pytest.mark.parametrize("model", ["deepseek-v4-pro", "deepseek-flash", "claude-opus-4-1", "claude-sonnet-4-5"])
def test_accepted_models(client: httpx.Client, model: str) -> None:
    assert client.post(MESSAGES, json=messages_body("coffee", model=model)).status_code == 200
