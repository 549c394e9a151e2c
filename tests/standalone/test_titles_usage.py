"""Seed 003: a source is its title and URL (Responses titles merged from url_citation), and the
search's usage is reported on every outcome that carried it, to the connection and model used."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from dsweb_ref._protocols import StandaloneSource, StandaloneUsage
from dsweb_ref.emulator import Emulator, ProseOnly, Status, ToolError
from dsweb_ref.providers.standalone_messages import read_answer
from dsweb_ref.providers.standalone_responses import merge_titles
from dsweb_ref.runtime import standalone_search_tool
from dsweb_ref.standalone_accounts import Resolution, SearchRoute

S = StandaloneSource
TITLE_ROWS = [
    # (name, sources in backend order, expected (url, title) pairs in the same order)
    ("citation-names-an-untitled-source", [S("https://a.test/"), S("https://a.test/", "A")],
     [("https://a.test/", "A"), ("https://a.test/", "A")]),
    ("first-non-empty-title-wins", [S("https://a.test/"), S("https://a.test/", "A1"), S("https://a.test/", "A2")],
     [("https://a.test/", "A1"), ("https://a.test/", "A1"), ("https://a.test/", "A2")]),
    ("an-own-title-is-kept", [S("https://a.test/", "own"), S("https://a.test/", "cited")],
     [("https://a.test/", "own"), ("https://a.test/", "cited")]),
    ("order-kept-titles-by-exact-url", [S("https://b.test/"), S("https://a.test/"), S("https://A.test/", "x"),
                                        S("https://a.test/", "A")],
     [("https://b.test/", ""), ("https://a.test/", "A"), ("https://A.test/", "x"), ("https://a.test/", "A")]),
    ("no-title-anywhere-stays-empty", [S("https://a.test/"), S("https://a.test/")],
     [("https://a.test/", ""), ("https://a.test/", "")]),
]


@pytest.mark.parametrize(("sources", "expected"), [r[1:] for r in TITLE_ROWS], ids=[r[0] for r in TITLE_ROWS])
def test_merge_titles_table(sources: list[StandaloneSource], expected: list[tuple[str, str]]) -> None:
    assert [(s.url, s.title) for s in merge_titles(sources)] == expected


def _responses(*urls_cited: tuple[str, str]) -> dict[str, Any]:
    call = {"type": "web_search_call", "id": "ws_1", "status": "completed",
            "action": {"type": "search", "query": "q",
                       "sources": [{"type": "url", "url": "https://a.test/"}, {"type": "url", "url": "https://b.test/"}]}}
    notes = [{"type": "url_citation", "url": u, "title": t, "start_index": 0, "end_index": 1} for u, t in urls_cited]
    message = {"type": "message", "id": "m", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "S.", "annotations": notes}]}
    return {"id": "r", "object": "response", "status": "completed", "output": [call, message],
            "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}}


def _tool(handler: Any, protocol: str = "responses", on_usage: Any = None) -> Any:
    url = "https://relay.test/v1/responses" if protocol == "responses" else "https://relay.test/v1/messages"
    route = SearchRoute("my-search-connection", protocol, url, "deepseek-v4-flash", "K")  # type: ignore[arg-type]
    return standalone_search_tool(
        Resolution("selected", route=route), transport=httpx.MockTransport(handler), environ={"K": "key-0001"},
        on_usage=on_usage,
    )


def test_a_responses_source_keeps_the_title_its_citation_carried() -> None:
    """The defect: action.sources come first, untitled; the exact-URL dedupe dropped the cited title."""
    body = _responses(("https://b.test/", "Page B"))
    result = asyncio.run(_tool(lambda r: httpx.Response(200, json=body)).execute({"query": "q"}))
    assert json.loads(result.text)["sources"] == [
        {"title": "", "url": "https://a.test/"}, {"title": "Page B", "url": "https://b.test/"}]


def test_messages_sources_are_unchanged_titles_come_only_from_the_results() -> None:
    body = {"content": [
        {"type": "web_search_tool_result", "tool_use_id": "t",
         "content": [{"type": "web_search_result", "url": "https://a.test/", "title": ""}]},
        {"type": "text", "text": "S.", "citations": [
            {"type": "web_search_result_location", "url": "https://a.test/", "title": "Cited", "cited_text": "x"}]}]}
    assert [(s.url, s.title) for s in read_answer(body, "t").sources] == [("https://a.test/", "")]


# -- usage on every outcome --------------------------------------------------------------------------

OWNED = {"connection": "my-search-connection", "model": "deepseek-v4-flash"}


def _messages_route(emulator: Emulator, key: str, seen: list[StandaloneUsage]) -> Any:
    route = SearchRoute("my-search-connection", "messages", emulator.messages_base + "/messages",
                        "deepseek-v4-flash", "K")
    return standalone_search_tool(Resolution("selected", route=route), environ={"K": key}, on_usage=seen.append)


@pytest.mark.parametrize(
    ("fault", "is_error", "searches"),
    [(None, False, 1), (ProseOnly("From memory."), True, 0), (ToolError("too_many_requests"), True, 0)],
    ids=["success", "prose-only", "in-band-error"],
)
def test_messages_usage_is_reported_on_every_answer_and_owned_by_the_route(
    emulator: Emulator, emulator_api_key: str, fault: Any, is_error: bool, searches: int
) -> None:
    if fault is not None:
        emulator.inject("messages", fault)
    seen: list[StandaloneUsage] = []
    result = asyncio.run(_messages_route(emulator, emulator_api_key, seen).execute({"query": "search api"}))
    assert result.is_error is is_error
    raw = json.loads(emulator.log.for_route("messages")[0].response_body)["usage"]
    (usage,) = seen
    assert usage.to_json() == {"source": "web-search", **OWNED, "input_tokens": raw["input_tokens"],
                               "output_tokens": raw["output_tokens"], "http_requests": 1,
                               "web_search_requests": searches}
    assert usage.input_tokens > 0 and usage.output_tokens > 0


def test_a_failed_request_counts_its_http_request_for_the_route(emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject("messages", Status(500))
    seen: list[StandaloneUsage] = []
    result = asyncio.run(_messages_route(emulator, emulator_api_key, seen).execute({"query": "search api"}))
    assert result.is_error and [u.to_json() for u in seen] == [
        {"source": "web-search", **OWNED, "input_tokens": 0, "output_tokens": 0, "http_requests": 1,
         "web_search_requests": 0}]


@pytest.mark.parametrize(
    "output",
    [
        [{"type": "web_search_call", "id": "w", "status": "failed", "action": {"type": "search", "query": "q"}}],
        [{"type": "function_call", "name": "bash", "arguments": "{}", "call_id": "c"}],
        [{"type": "message", "id": "m", "role": "assistant", "status": "completed",
          "content": [{"type": "output_text", "text": "From memory.", "annotations": []}]}],
    ],
    ids=["failed-search-call", "client-tool-call", "prose-only"],
)
def test_responses_usage_is_reported_on_in_band_errors(output: list[dict[str, Any]]) -> None:
    body = {"id": "r", "object": "response", "status": "completed", "output": output,
            "usage": {"input_tokens": 11, "output_tokens": 13, "total_tokens": 24}}
    seen: list[StandaloneUsage] = []
    result = asyncio.run(_tool(lambda r: httpx.Response(200, json=body), on_usage=seen.append).execute({"query": "q"}))
    assert result.is_error and result.error_code == "WEB_PROVIDER_ERROR"
    assert [(u.input_tokens, u.output_tokens, u.connection, u.model) for u in seen] == [
        (11, 13, "my-search-connection", "deepseek-v4-flash")]


def test_a_failed_response_reports_its_usage() -> None:
    body = {"id": "r", "status": "failed", "error": {"code": "server_error", "message": "x"}, "output": [],
            "usage": {"input_tokens": 2, "output_tokens": 1}}
    seen: list[StandaloneUsage] = []
    result = asyncio.run(_tool(lambda r: httpx.Response(200, json=body), on_usage=seen.append).execute({"query": "q"}))
    assert result.is_error and "response failed" in result.text
    assert [(u.input_tokens, u.output_tokens) for u in seen] == [(2, 1)]
