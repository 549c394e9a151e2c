"""Provider behaviours that survived mutation testing (issue 14, "unit-test gaps"): each test
fails if the pinned line is mutated (an error handler, a status bound, ``continue`` -> ``break``,
a type check, a scrubbed secret, an exact message)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from dsweb_ref import CallContext, SearchRequest, SearchResult, WebError, WebErrorCode
from dsweb_ref.providers.deepseek_official import DeepSeekMessagesSearch
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi, map_results, original_question
from dsweb_ref.settings import Settings

from ._helpers import ENV, KEY, Mock, messages_reply, result_block, result_item

SNAPSHOT = Settings().updated(
    {"deepseek_api.base_url": "https://tools.test/v1/tools", "deepseek_messages.base_url": "https://m.test/v1"}
)
PROVIDERS = {"search-api": DeepSeekSearchApi, "messages": DeepSeekMessagesSearch}


def _run(kind: str, mock: Mock, query: Any = "q") -> SearchResult:
    provider = PROVIDERS[kind](lambda: SNAPSHOT, transport=mock.transport, environ=ENV)
    return asyncio.run(provider.search(SearchRequest(query), CallContext()))


def _error(kind: str, mock: Mock, query: Any = "q") -> WebError:
    with pytest.raises(WebError) as info:
        _run(kind, mock, query)
    return info.value


def test_original_question_replaces_a_lone_surrogate() -> None:
    # "replace", not "ignore" or "strict": the character is visibly replaced and the search goes on.
    assert original_question("a\ud800b  c") == "a?b c"


@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_lone_surrogate_in_the_query_is_invalid_arguments_before_sending(kind: str) -> None:
    mock = Mock.json(200, {"results": []})
    error = _error(kind, mock, "a\ud800")
    assert (error.code, error.message) == (WebErrorCode.INVALID_ARGUMENTS, "query is not valid Unicode text")
    assert mock.requests == []


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize("query", [None, 3, b"q", ["q"]])
def test_a_non_string_query_has_its_own_code_and_message(kind: str, query: object) -> None:
    mock = Mock.json(200, {"results": []})
    error = _error(kind, mock, query)
    assert (error.code, error.message) == (WebErrorCode.INVALID_ARGUMENTS, "query must be a string")
    assert mock.requests == []


@pytest.mark.parametrize(("kind", "label"), [("search-api", "DeepSeek Search API"), ("messages", "DeepSeek search")])
def test_http_300_is_a_refused_redirect(kind: str, label: str) -> None:
    error = _error(kind, Mock.raw(300, b"", {"Location": "https://elsewhere.test/"}))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert error.message == f"{label} request was redirected (HTTP 300); redirects are not followed"


def test_messages_a_null_result_block_does_not_stop_later_blocks() -> None:
    null_block = {"type": "web_search_tool_result", "tool_use_id": "x", "content": None}
    reply = messages_reply(null_block, result_block(result_item("https://b.test/", "B")))
    assert [s.url for s in _run("messages", Mock.json(200, reply)).sources] == ["https://b.test/"]


def test_messages_a_duplicate_url_does_not_stop_later_results() -> None:
    items = [result_item("https://a.test/", "A"), result_item("https://a.test/", "A2"), result_item("https://c.test/")]
    reply = messages_reply(result_block(*items))
    assert [s.url for s in _run("messages", Mock.json(200, reply)).sources] == ["https://a.test/", "https://c.test/"]


def test_search_api_a_duplicate_url_does_not_stop_later_results() -> None:
    data = {"results": [{"url": "https://a.test/"}, {"url": "https://a.test/"}, {"url": "https://c.test/"}]}
    assert [s.url for s in map_results(data)] == ["https://a.test/", "https://c.test/"]


@pytest.mark.parametrize(("score", "kept"), [(3, True), (0, True), (2.5, True), (True, False), (False, False)])
def test_rerank_score_keeps_integral_numbers_but_not_booleans(score: object, kept: bool) -> None:
    (source,) = map_results({"results": [{"url": "https://a.test/", "rerank_score": score}]})
    assert ("rerank_score" in source.metadata) is kept
    if kept:
        assert source.metadata["rerank_score"] == score and type(source.metadata["rerank_score"]) is type(score)


def test_the_messages_provider_scrubs_its_key_from_a_network_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"proxy said no to {KEY}", request=request)

    error = _error("messages", Mock(refuse))
    assert error.message == "DeepSeek search request failed: ConnectError: proxy said no to <credential>"


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, {"error": {"message": "Authentication Fails"}}, "DeepSeek API error (HTTP 401): Authentication Fails"),
        (400, {"error": "  bad\n\tmodel  "}, "DeepSeek API error (HTTP 400): bad model"),
        (500, {"error": {"message": None}, "message": "top"}, "DeepSeek API error (HTTP 500): top"),
        (503, {"error": {"message": "x" * 600}}, "DeepSeek API error (HTTP 503): " + "x" * 497 + "..."),
    ],
)
def test_messages_error_detail_texts_exactly(status: int, body: object, expected: str) -> None:
    assert _error("messages", Mock.json(status, body)).message == expected


@pytest.mark.parametrize(
    ("status", "body", "headers", "expected"),
    [
        (
            401,
            {"error": {"message": "Authentication Fails"}},
            {},
            "DeepSeek Search API authentication failed (HTTP 401): Authentication Fails; check the credential in "
            '"DEEPSEEK_API_KEY"',
        ),
        (
            402,
            {"error": {"message": "Insufficient Balance"}},
            {},
            "DeepSeek Search API reports insufficient balance (HTTP 402): Insufficient Balance; top up the DeepSeek "
            "account before retrying",
        ),
        (
            429,
            {"message": "slow down"},
            {"Retry-After": "7"},
            "DeepSeek Search API rate limit reached (HTTP 429): slow down; retry after 7 seconds",
        ),
        (418, {"error": "teapot"}, {}, "DeepSeek Search API error (HTTP 418): teapot"),
        (502, b"<html>bad gateway</html>", {}, "DeepSeek Search API service error (HTTP 502); retry later"),
    ],
)
def test_search_api_error_texts_exactly(status: int, body: object, headers: dict[str, str], expected: str) -> None:
    mock = Mock.raw(status, body, headers) if isinstance(body, bytes) else Mock.json(status, body, headers)
    assert _error("search-api", mock).message == expected


def test_a_transport_error_quoting_a_long_server_text_is_cut() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.RemoteProtocolError("illegal header line: " + "h" * 100_000, request=request)

    message = _error("search-api", Mock(refuse)).message
    prefix = "DeepSeek Search API request failed: RemoteProtocolError: illegal header line: "
    assert message.startswith(prefix + "hhh") and message.endswith("...")
    assert len(message) == len("DeepSeek Search API request failed: ") + 500
