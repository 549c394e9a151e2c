"""deepseek-search-api: the dedicated Search API provider."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion

from dsweb_ref._context import CallContext
from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref._types import SearchRequest, SearchResult, Source
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi, map_results, original_question
from dsweb_ref.settings import Settings

from ._helpers import ENV, KEY, TOKEN, Mock, Recorder
from ._loopback import Hold, Loopback, Reply

BASE = "https://tools.test/v1/tools"
EMPTY: dict[str, Any] = {"results": []}


def _settings(**values: object) -> Settings:
    return Settings().updated({"deepseek_api.base_url": BASE, **values})


def _search(
    mock: Mock,
    query: str = "deepseek v4",
    *,
    max_results: int | None = None,
    prompt: str | None = None,
    settings: Settings | None = None,
    env: dict[str, str] = ENV,
) -> SearchResult:
    snapshot = settings or _settings()
    provider = DeepSeekSearchApi(lambda: snapshot, transport=mock.transport, environ=env)
    return asyncio.run(provider.search(SearchRequest(query, max_results), CallContext(latest_prompt=prompt)))


def _sent(prompt: str | None = None, **kwargs: Any) -> dict[str, Any]:
    mock = Mock.json(200, EMPTY)
    _search(mock, prompt=prompt, **kwargs)
    body: dict[str, Any] = json.loads(mock.only.content)
    return body


def _error(mock: Mock, **kwargs: Any) -> WebError:
    with pytest.raises(WebError) as info:
        _search(mock, **kwargs)
    return info.value


# -- request body ---------------------------------------------------------------------------------

def test_body_bytes_are_exact(wire_snapshot: SnapshotAssertion, json_snapshot: SnapshotAssertion) -> None:
    mock = Mock.json(200, EMPTY)
    recorder = Recorder()
    provider = DeepSeekSearchApi(_settings, transport=mock.transport, environ=ENV)
    ctx = recorder.context(mock, prompt="  Which  DeepSeek\tmodel\n\nwas released — 最近?  ")
    asyncio.run(provider.search(SearchRequest('site:api-docs.deepseek.com "search api" -beta lang:en'), ctx))
    assert mock.only.content == wire_snapshot
    assert json.loads(mock.only.content) == json_snapshot
    assert recorder.sent_before == [0]
    assert recorder.records[0].body == mock.only.content
    assert recorder.records[0].url == BASE + "/search"


ORI_QUESTION_CASES: dict[str, dict[str, Any]] = {
    "no-prompt": {"prompt": None},
    "blank-prompt": {"prompt": " \t\n\u3000 "},
    "whitespace-runs": {"prompt": "\n  what  is\t\tthe\n\nnew   API?  "},
    "over-128-non-ascii": {"prompt": "搜索接口 — " * 20 + "über 128?"},
    "send-original-question-off": {
        "prompt": "a real question",
        "settings": {"deepseek_api.send_original_question": False},
    },
}


@pytest.mark.parametrize("case", list(ORI_QUESTION_CASES))
def test_body_snapshot_per_ori_question_case(
    case: str, wire_snapshot: SnapshotAssertion, json_snapshot: SnapshotAssertion
) -> None:
    spec = ORI_QUESTION_CASES[case]
    mock = Mock.json(200, EMPTY)
    _search(mock, prompt=spec["prompt"], settings=_settings(**spec.get("settings", {})))
    body = mock.only.content
    assert body == wire_snapshot  # exact bytes: key order, separators, unescaped non-ASCII
    assert json.loads(body) == json_snapshot
    question = json.loads(body).get("ori_question")
    assert question is None or len(question) <= 128


def test_no_prompt_omits_ori_question() -> None:
    assert _sent(None) == {"query": "deepseek v4", "count": 10, "need_content": False}


def test_blank_prompt_omits_ori_question() -> None:
    assert "ori_question" not in _sent(" \t\n\u3000 ")


def test_prompt_whitespace_runs_are_collapsed_and_trimmed() -> None:
    assert _sent("\n  what  is\t\tthe\n\nnew   API?  ")["ori_question"] == "what is the new API?"


def test_long_non_ascii_prompt_is_cut_at_128_code_points() -> None:
    prompt = "深度求索" * 40 + "🙂 tail"
    question = _sent(prompt)["ori_question"]
    assert question == ("深度求索" * 40)[:128]
    assert len(question) == 128


def test_cut_never_splits_an_astral_character() -> None:
    prompt = "a" * 127 + "🙂🙂"
    question = _sent(prompt)["ori_question"]
    assert question == "a" * 127 + "🙂"
    assert len(question.encode("utf-16-le")) == 2 * 127 + 4


def test_send_original_question_off_omits_it() -> None:
    body = _sent("a real question", settings=_settings(**{"deepseek_api.send_original_question": False}))
    assert "ori_question" not in body


def test_key_order_is_query_count_need_content_ori_question() -> None:
    assert list(_sent("q?")) == ["query", "count", "need_content", "ori_question"]


def test_query_passes_through_unchanged() -> None:
    query = '  -site:x.com "exact phrase" after:2026-01-01 OR lang:zh,en  '
    assert _sent(query=query)["query"] == query


def test_count_uses_the_configured_value() -> None:
    assert _sent(settings=_settings(**{"deepseek_api.count": 25}))["count"] == 25


def test_count_is_lowered_to_max_results() -> None:
    assert _sent(max_results=3)["count"] == 3


def test_count_is_not_raised_by_a_larger_max_results() -> None:
    assert _sent(max_results=40)["count"] == 10


def test_invalid_max_results_is_rejected_before_dispatch() -> None:
    mock = Mock.json(200, EMPTY)
    error = _error(mock, max_results=0)
    assert error.code == WebErrorCode.INVALID_ARGUMENTS
    assert mock.requests == []


@given(st.text(alphabet=st.sampled_from([" ", "\t", "\n", "\u3000", "a", "é", "深", "🙂"]), max_size=300))
@hypothesis_settings(max_examples=60, deadline=None)
def test_original_question_is_normalised(prompt: str) -> None:
    question = original_question(prompt)
    if question is None:
        assert prompt.split() == []
        return
    assert 1 <= len(question) <= 128
    assert question == question.strip()
    assert "  " not in question and not any(c in question for c in "\t\n\u3000")
    assert " ".join(prompt.split()).startswith(question)


# -- headers and transport ------------------------------------------------------------------------

def test_only_documented_headers_are_sent_over_the_wire(loopback: Loopback) -> None:
    loopback.routes["/v1/tools/search"] = Reply(200, json.dumps(EMPTY).encode())
    snapshot = Settings().updated({"deepseek_api.base_url": loopback.url("/v1/tools")})
    provider = DeepSeekSearchApi(lambda: snapshot, environ=ENV)
    asyncio.run(provider.search(SearchRequest("q"), CallContext()))
    (seen,) = loopback.seen
    # Host and Content-Length frame the HTTP/1.1 request; nothing else is added.
    assert seen.header_names == {"host", "content-length", "authorization", "content-type"}
    assert seen.header("authorization") == f"Bearer {KEY}"
    assert seen.header("content-type") == "application/json"


def test_account_route_sends_the_account_token() -> None:
    mock = Mock.json(200, EMPTY)
    _search(mock, settings=_settings(**{"credentials.auth": "account"}), env={"DEEPSEEK_ACCOUNT_TOKEN": TOKEN})
    assert mock.only.headers["authorization"] == f"Bearer {TOKEN}"


def test_missing_credential_is_coded() -> None:
    mock = Mock.json(200, EMPTY)
    error = _error(mock, env={"DEEPSEEK_API_KEY": "   "})
    assert error.code == WebErrorCode.PROVIDER_CREDENTIAL_MISSING
    assert '"DEEPSEEK_API_KEY"' in error.message
    assert mock.requests == []


def test_success_over_loopback(loopback: Loopback) -> None:
    payload = {"results": [{"url": "https://a.test/", "title": "A", "snippet": "s", "date": None}]}
    loopback.routes["/api/v1/tools/search"] = Reply(200, json.dumps(payload).encode())
    snapshot = Settings().updated({"deepseek_api.base_url": loopback.url("/api/v1/tools")})
    result = asyncio.run(DeepSeekSearchApi(lambda: snapshot, environ=ENV).search(SearchRequest("q"), CallContext()))
    assert result.sources == (Source("https://a.test/", "A", "s"),)


def test_redirect_is_never_followed_over_loopback(loopback: Loopback) -> None:
    loopback.routes["/v1/tools/search"] = Reply(308, b"", {"Location": loopback.url("/target")})
    loopback.routes["/target"] = Reply(200, json.dumps(EMPTY).encode())
    snapshot = Settings().updated({"deepseek_api.base_url": loopback.url("/v1/tools")})
    with pytest.raises(WebError) as info:
        asyncio.run(DeepSeekSearchApi(lambda: snapshot, environ=ENV).search(SearchRequest("q"), CallContext()))
    assert info.value.code == WebErrorCode.PROVIDER_ERROR
    assert "redirect" in info.value.message
    assert loopback.paths() == ["/v1/tools/search"]


def test_cancellation_propagates_and_closes_the_connection(loopback: Loopback) -> None:
    hold = Hold()
    loopback.routes["/v1/tools/search"] = hold
    snapshot = Settings().updated({"deepseek_api.base_url": loopback.url("/v1/tools")})
    provider = DeepSeekSearchApi(lambda: snapshot, environ=ENV)

    async def scenario() -> None:
        task = asyncio.create_task(provider.search(SearchRequest("q"), CallContext()))
        assert await asyncio.to_thread(hold.received.wait, 20), "server never saw the request"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert hold.closed.wait(20), "connection was left open"


def test_network_error_is_a_provider_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    error = _error(Mock(refuse))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert error.message.startswith("DeepSeek Search API request failed")


# -- response mapping -----------------------------------------------------------------------------

FULL = {
    "rerank_score": 2.4,
    "title": "DeepSeek V4",
    "url": "https://example.test/deepseek-v4",
    "snippet": "Short excerpt.",
    "summary": "A longer summary for models.",
    "content": "",
    "site_name": "Example News",
    "site_icon": "https://example.test/favicon.ico",
    "date": "2026-06-01T00:00:00+00:00",
    "authority": 3,
}


def test_maps_fields_and_keeps_metadata() -> None:
    (source,) = _search(Mock.json(200, {"results": [FULL]})).sources
    assert (source.url, source.title, source.snippet, source.published_at) == (
        "https://example.test/deepseek-v4", "DeepSeek V4", "Short excerpt.", "2026-06-01T00:00:00+00:00",
    )
    assert dict(source.metadata) == {
        "summary": "A longer summary for models.", "site_name": "Example News", "rerank_score": 2.4, "authority": 3,
    }


def test_keeps_service_order() -> None:
    urls = [f"https://{c}.test/" for c in "zbxa"]
    result = _search(Mock.json(200, {"results": [{"url": u} for u in urls]}))
    assert [s.url for s in result.sources] == urls
    assert result.content is None and result.truncated is False


def test_duplicate_urls_keep_the_first() -> None:
    results = [{"url": "https://a.test/", "title": "one"}, {"url": "https://a.test/", "title": "two"}]
    assert [s.title for s in _search(Mock.json(200, {"results": results})).sources] == ["one"]


def test_null_date_and_missing_fields_are_none() -> None:
    item = {"url": "https://a.test/", "title": None, "snippet": "", "date": None, "authority": -1}
    (source,) = _search(Mock.json(200, {"results": [item]})).sources
    assert (source.title, source.snippet, source.published_at) == (None, None, None)
    assert dict(source.metadata) == {"authority": -1}


def test_wrongly_typed_metadata_is_dropped() -> None:
    item = {"url": "https://a.test/", "rerank_score": "high", "authority": True, "summary": 3, "site_name": ["x"]}
    (source,) = _search(Mock.json(200, {"results": [item]})).sources
    assert dict(source.metadata) == {}


def test_empty_results_is_success() -> None:
    assert _search(Mock.json(200, EMPTY)) == SearchResult()


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="results-missing"),
        pytest.param({"results": None}, id="results-null"),
        pytest.param({"results": {"url": "x"}}, id="results-object"),
        pytest.param(["https://a.test/"], id="top-level-list"),
        pytest.param({"results": ["https://a.test/"]}, id="item-string"),
        pytest.param({"results": [{"title": "no url"}]}, id="item-without-url"),
        pytest.param({"results": [{"url": 42}]}, id="url-number"),
    ],
)
def test_wrong_shape_body_is_a_provider_error(body: object) -> None:
    error = _error(Mock.json(200, body))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert "unprocessable" in error.message


def test_non_json_body_is_a_provider_error() -> None:
    error = _error(Mock.raw(200, b"<html>gateway</html>"))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert error.message.startswith("DeepSeek Search API returned an unprocessable response body")


# -- status errors --------------------------------------------------------------------------------

def test_400_mentions_the_query_limit_and_provider_message() -> None:
    error = _error(Mock.json(400, {"error": {"message": "query too long", "type": "invalid_request_error"}}))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert "HTTP 400" in error.message and "query too long" in error.message
    assert "1-128 characters" in error.message


def test_401_is_an_authentication_failure_naming_the_variable() -> None:
    error = _error(Mock.json(401, {"error": {"message": "Authentication Fails"}}))
    assert error.message == (
        'DeepSeek Search API authentication failed (HTTP 401): Authentication Fails; '
        'check the credential in "DEEPSEEK_API_KEY"'
    )
    assert KEY not in error.message


def test_402_is_insufficient_balance() -> None:
    error = _error(Mock.raw(402, b""))
    assert error.message == (
        "DeepSeek Search API reports insufficient balance (HTTP 402); top up the DeepSeek account before retrying"
    )


def test_429_mentions_rate_limit_and_retry_after() -> None:
    error = _error(Mock.raw(429, b"", {"Retry-After": "7"}))
    assert error.message == "DeepSeek Search API rate limit reached (HTTP 429); retry after 7 seconds"


def test_429_without_retry_after_says_to_wait() -> None:
    error = _error(Mock.raw(429, b'{"error":{"message":"Rate limit reached"}}'))
    assert error.message == (
        "DeepSeek Search API rate limit reached (HTTP 429): Rate limit reached; wait before retrying"
    )


def test_429_with_http_date_retry_after() -> None:
    error = _error(Mock.raw(429, b"", {"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}))
    assert error.message.endswith("retry after Wed, 21 Oct 2026 07:28:00 GMT")


@pytest.mark.parametrize("status", [500, 503])
def test_5xx_is_a_service_error(status: int) -> None:
    error = _error(Mock.raw(status, b"upstream exploded"))
    assert error.message == f"DeepSeek Search API service error (HTTP {status}); retry later"


def test_status_messages_are_distinct() -> None:
    messages = {_error(Mock.raw(status, b"")).message for status in (400, 401, 402, 418, 429, 500)}
    assert len(messages) == 6


# -- availability and snapshots -------------------------------------------------------------------

@pytest.mark.parametrize("base", ["", "  ", "api.deepseek.com/v1/tools", "http://", "https://[::1/v1", "mailto:x@y"])
def test_blank_or_unparseable_base_is_unavailable(base: str) -> None:
    snapshot = Settings().updated({"deepseek_api.base_url": base})
    assert not DeepSeekSearchApi(lambda: snapshot).available()


def test_unavailable_base_fails_a_direct_call_as_config_invalid() -> None:
    mock = Mock.json(200, EMPTY)
    error = _error(mock, settings=Settings().updated({"deepseek_api.base_url": ""}))
    assert error.code == WebErrorCode.CONFIG_INVALID
    assert mock.requests == []


def test_one_settings_snapshot_per_search() -> None:
    mock = Mock.json(200, EMPTY)
    snapshots = iter([
        _settings(**{"credentials.api_key_env": "KEY_A"}),
        Settings().updated({"deepseek_api.base_url": "https://b.test/v1/tools", "credentials.api_key_env": "KEY_B"}),
    ])
    calls = 0

    def source() -> Settings:
        nonlocal calls
        calls += 1
        return next(snapshots)

    provider = DeepSeekSearchApi(source, transport=mock.transport, environ={"KEY_A": "key-a", "KEY_B": "key-b"})
    asyncio.run(provider.search(SearchRequest("q"), CallContext()))
    assert calls == 1
    assert str(mock.only.url) == BASE + "/search"
    assert mock.only.headers["authorization"] == "Bearer key-a"


# -- hardening: non-finite numbers, credentials in provider text ----------------------------------

@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_number_in_the_body_is_unprocessable(number: str) -> None:
    body = b'{"results":[{"url":"https://a.test/","rerank_score":' + number.encode() + b"}]}"
    error = _error(Mock.raw(200, body))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert error.message.startswith("DeepSeek Search API returned an unprocessable response body")


@pytest.mark.parametrize("score", [float("nan"), float("inf"), float("-inf")])
def test_metadata_keeps_finite_numbers_only(score: float) -> None:
    (source,) = map_results({"results": [{"url": "https://a.test/", "rerank_score": score, "authority": 10**30}]})
    assert dict(source.metadata) == {"authority": 10**30}
    json.dumps(dict(source.metadata), allow_nan=False)  # the structured value stays valid JSON


@pytest.mark.parametrize("status", [400, 401, 403, 429, 500])
def test_an_echoed_key_never_reaches_the_message(status: int) -> None:
    error = _error(Mock.json(status, {"error": {"message": f"Your api key {KEY} is invalid"}}))
    assert KEY not in error.message
    if status < 500:
        assert "Your api key <credential> is invalid" in error.message


def test_an_echoed_account_token_never_reaches_the_message() -> None:
    mock = Mock.json(401, {"error": f"token {TOKEN} expired"})
    error = _error(mock, settings=_settings(**{"credentials.auth": "account"}), env={"DEEPSEEK_ACCOUNT_TOKEN": TOKEN})
    assert TOKEN not in error.message and "token <credential> expired" in error.message


def test_credential_shaped_text_is_scrubbed() -> None:
    body = {"message": "other key sk-" "abcdefghijklmnopqrstuvwx and Authorization: Bearer some.jwt.value refused"}
    error = _error(Mock.json(400, body))
    assert "sk-" "abcdefghijklmnopqrstuvwx" not in error.message and "some.jwt.value" not in error.message
    assert "other key <credential> and Authorization: Bearer <credential> refused" in error.message
