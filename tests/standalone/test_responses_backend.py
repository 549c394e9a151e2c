"""The standalone tool over the Responses protocol: request shape and what is read from the answer."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from dsweb_ref.providers.standalone_messages import PROMPT_PREFIX
from dsweb_ref.providers.standalone_responses import ResponsesStandaloneSearch, read_response
from dsweb_ref.tools.standalone_search import StandaloneSearchTool

KEY = "resp-test-key-0001"
SEARCH_CALL = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "q", "sources": [{"type": "url", "url": "https://a.test/"}]},
}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENCRYPTED-REASONING"}
MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [
        {
            "type": "output_text",
            "text": "Summary citing B and https://prose.test/.",
            "annotations": [
                {"type": "url_citation", "url": "https://b.test/", "title": "B", "start_index": 0, "end_index": 7}
            ],
        }
    ],
}


def _body(*output: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "status": "completed", "output": list(output),
            "usage": {"input_tokens": 5, "output_tokens": 6, "total_tokens": 11}, **extra}


def test_request_is_stateless_with_only_the_query_and_the_web_search_tool() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=_body(REASONING, SEARCH_CALL, MESSAGE))

    backend = ResponsesStandaloneSearch(
        "https://relay.test/v1/responses", "gpt-x", "K", transport=httpx.MockTransport(handler), environ={"K": KEY}
    )
    result = asyncio.run(StandaloneSearchTool(backend).execute({"query": "q"}))
    assert not result.is_error, result.text
    (request,) = seen
    assert str(request.url) == "https://relay.test/v1/responses"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(request.content) == {
        "model": "gpt-x",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": PROMPT_PREFIX + "q"}]}],
        "tools": [{"type": "web_search"}],
        "max_output_tokens": 8192,
        "store": False,
    }
    value = json.loads(result.text)
    assert value == {
        "summary": "Summary citing B and https://prose.test/.",
        "sources": [{"title": "", "url": "https://a.test/"}, {"title": "B", "url": "https://b.test/"}],
    }
    assert "ENCRYPTED-REASONING" not in result.text and "ws_1" not in result.text


def test_completed_search_call_without_sources_or_annotations_gives_no_sources() -> None:
    bare = {**SEARCH_CALL, "action": {"type": "search", "query": "q"}}
    plain = {**MESSAGE, "content": [{"type": "output_text", "text": "see https://x.test/", "annotations": []}]}
    answer = read_response(_body(bare, plain), "t")
    assert answer.searched and answer.sources == ()


@pytest.mark.parametrize("status", ["in_progress", "searching", None])
def test_a_search_call_that_did_not_complete_is_not_a_search(status: str | None) -> None:
    answer = read_response(_body({**SEARCH_CALL, "status": status}, MESSAGE), "t")
    assert not answer.searched


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (_body({**SEARCH_CALL, "status": "failed"}), "native web search failed"),
        (_body({"type": "function_call", "name": "bash", "arguments": "{}", "call_id": "c"}), "client tool"),
        (_body(status="failed", error={"code": "server_error", "message": "x"}), "response failed"),
    ],
    ids=["search-failed", "client-tool-call", "response-failed"],
)
def test_failures_are_errors(body: dict[str, Any], needle: str) -> None:
    answer = read_response(body, "t")
    assert answer.failure is not None and needle in answer.failure and not answer.searched
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (5, 6)  # still counted


def test_usage_counts_completed_search_calls() -> None:
    answer = read_response(_body(SEARCH_CALL, {**SEARCH_CALL, "id": "ws_2"}, MESSAGE), "t")
    assert (answer.usage.input_tokens, answer.usage.output_tokens, answer.usage.web_search_requests) == (5, 6, 2)
