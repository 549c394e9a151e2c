"""deepseek-fetch-api: the dedicated Fetch API provider."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from syrupy.assertion import SnapshotAssertion

from dsweb_ref._context import CallContext
from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref._types import FetchBody, FetchRequest, FetchResult
from dsweb_ref.emulator import Emulator, Hold
from dsweb_ref.providers.deepseek_fetch_api import DeepSeekFetchApi
from dsweb_ref.settings import Settings

from ._helpers import ENV, KEY, TOKEN, Mock, Recorder
from ._loopback import Loopback, Reply

BASE = "https://tools.test/v1/tools"
PAGE = {"title": "Your First API Call | DeepSeek API Docs", "content": "# Your First API Call\n\nBody."}
TARGET = "https://docs.test/first-call?lang=en#top"


def _settings(**values: object) -> Settings:
    return Settings().updated({"deepseek_api.base_url": BASE, **values})


def _fetch(mock: Mock, url: str = TARGET, *, settings: Settings | None = None, env: dict[str, str] = ENV,
           ctx: CallContext | None = None) -> FetchResult:
    snapshot = settings or _settings()
    provider = DeepSeekFetchApi(lambda: snapshot, transport=mock.transport, environ=env)
    return asyncio.run(provider.fetch(FetchRequest(url), ctx or CallContext()))


def _error(mock: Mock, **kwargs: Any) -> WebError:
    with pytest.raises(WebError) as info:
        _fetch(mock, **kwargs)
    return info.value


def test_body_bytes_are_exact(wire_snapshot: SnapshotAssertion) -> None:
    mock = Mock.json(200, PAGE)
    recorder = Recorder()
    _fetch(mock, ctx=recorder.context(mock))
    assert mock.only.content == wire_snapshot
    assert recorder.sent_before == [0] and recorder.records[0].body == mock.only.content
    assert str(mock.only.url) == BASE + "/fetch"


def test_success_maps_markdown_onto_the_unchanged_shared_result() -> None:
    """Seed 001: requested URL, HTTP 200, the Markdown as the body; the shared result's body kind is the closed
    union html|text, so Markdown is "text", and it has no title field (the API's title is dropped)."""
    result = _fetch(Mock.json(200, PAGE))
    assert result == FetchResult(url=TARGET, status_code=200, body=FetchBody("text", PAGE["content"]), truncated=False)
    assert result.to_json() == {
        "url": TARGET,
        "status_code": 200,
        "body": {"kind": "text", "content": PAGE["content"]},
        "truncated": False,
    }


@pytest.mark.parametrize("title", ["", "   ", None, 7, "A title"], ids=["empty", "blank", "null", "number", "text"])
def test_the_api_title_never_reaches_the_shared_result(title: object) -> None:
    result = _fetch(Mock.json(200, {"title": title, "content": "x"}))
    assert "title" not in result.to_json() and not hasattr(result, "title")


def test_only_documented_headers_are_sent() -> None:
    mock = Mock.json(200, PAGE)
    _fetch(mock)
    assert set(mock.only.headers) == {"host", "content-length", "authorization", "content-type"}
    assert mock.only.headers["authorization"] == f"Bearer {KEY}"


def test_account_route_sends_the_account_token() -> None:
    mock = Mock.json(200, PAGE)
    _fetch(mock, settings=_settings(**{"credentials.auth": "account"}), env={"DEEPSEEK_ACCOUNT_TOKEN": TOKEN})
    assert mock.only.headers["authorization"] == f"Bearer {TOKEN}"


def test_missing_credential_is_coded() -> None:
    mock = Mock.json(200, PAGE)
    error = _error(mock, env={})
    assert error.code == WebErrorCode.PROVIDER_CREDENTIAL_MISSING
    assert mock.requests == []


def test_recorder_failure_prevents_dispatch() -> None:
    mock = Mock.json(200, PAGE)

    def broken(_request: object) -> None:
        raise RuntimeError("recorder down")

    with pytest.raises(RuntimeError):
        _fetch(mock, ctx=CallContext(record_request=broken))
    assert mock.requests == []


@pytest.mark.parametrize(
    ("status", "phrase"),
    [
        (400, "rejected the URL (HTTP 400)"),
        (401, "authentication failed (HTTP 401)"),
        (402, "insufficient balance (HTTP 402)"),
        (403, "crawler policy (HTTP 403)"),
        (404, "no usable content (HTTP 404)"),
        (429, "rate limit reached (HTTP 429)"),
        (500, "service error (HTTP 500)"),
        (504, "service error (HTTP 504)"),
        (418, "could not retrieve the page (HTTP 418)"),
    ],
)
def test_each_status_class_is_a_retrieval_failure(status: int, phrase: str) -> None:
    error = _error(Mock.raw(status, b""))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert error.message.startswith("DeepSeek Fetch API ")
    assert phrase in error.message


def test_status_messages_are_distinct() -> None:
    statuses = (400, 401, 402, 403, 404, 429, 500)
    assert len({_error(Mock.raw(s, b"")).message for s in statuses}) == len(statuses)


def test_provider_message_is_carried() -> None:
    error = _error(Mock.json(404, {"error": {"message": "failed to fetch URL"}}))
    assert "failed to fetch URL" in error.message


def test_429_mentions_retry_after() -> None:
    assert "retry after 2 seconds" in _error(Mock.raw(429, b"", {"Retry-After": "2"})).message


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[]", b'{"title": "t"}', b'{"content": null}', b'{"content": ["x"]}'],
    ids=["text", "list", "content-missing", "content-null", "content-list"],
)
def test_wrong_shape_success_body_is_a_provider_error(body: bytes) -> None:
    error = _error(Mock.raw(200, body))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert "unprocessable" in error.message


def test_network_error_is_a_provider_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    assert _error(Mock(refuse)).code == WebErrorCode.PROVIDER_ERROR


def test_blank_base_is_unavailable() -> None:
    assert not DeepSeekFetchApi(lambda: Settings().updated({"deepseek_api.base_url": " "})).available()
    assert DeepSeekFetchApi(_settings).available()


def test_success_over_loopback(loopback: Loopback) -> None:
    loopback.routes["/v1/tools/fetch"] = Reply(200, json.dumps(PAGE).encode(), {"Content-Type": "application/json"})
    snapshot = Settings().updated({"deepseek_api.base_url": loopback.url("/v1/tools")})
    result = asyncio.run(DeepSeekFetchApi(lambda: snapshot, environ=ENV).fetch(FetchRequest(TARGET), CallContext()))
    assert result.body == FetchBody("text", PAGE["content"])
    (seen,) = loopback.seen
    assert json.loads(seen.body) == {"url": TARGET}
    assert seen.header_names == {"host", "content-length", "authorization", "content-type"}


def test_redirect_is_never_followed_over_loopback(loopback: Loopback) -> None:
    loopback.routes["/v1/tools/fetch"] = Reply(301, b"", {"Location": loopback.url("/target")})
    loopback.routes["/target"] = Reply(200, json.dumps(PAGE).encode())
    snapshot = Settings().updated({"deepseek_api.base_url": loopback.url("/v1/tools")})
    with pytest.raises(WebError) as info:
        asyncio.run(DeepSeekFetchApi(lambda: snapshot, environ=ENV).fetch(FetchRequest(TARGET), CallContext()))
    assert info.value.code == WebErrorCode.PROVIDER_ERROR
    assert loopback.paths() == ["/v1/tools/fetch"]


def test_cancellation_propagates_and_closes_the_connection(emulator: Emulator, emulator_api_key: str) -> None:
    gate = emulator.gate("fetch-cancel")
    emulator.inject("fetch", Hold(gate, timeout=60))
    snapshot = Settings().updated({"deepseek_api.base_url": emulator.tools_base})
    provider = DeepSeekFetchApi(lambda: snapshot, environ={"DEEPSEEK_API_KEY": emulator_api_key})

    async def scenario() -> None:
        task = asyncio.create_task(provider.fetch(FetchRequest(TARGET), CallContext()))
        await asyncio.to_thread(gate.wait_held, 1, 10.0)  # the emulator holds the request now
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=10.0)
        assert done, "the cancelled fetch did not end"
        with pytest.raises(asyncio.CancelledError):
            task.result()

    asyncio.run(scenario())
    (record,) = emulator.log.wait_for(1, done=True, timeout=10.0)
    assert record.disconnected and record.status is None
    assert gate.held == 0


def test_one_settings_snapshot_per_fetch() -> None:
    mock = Mock.json(200, PAGE)
    snapshots = [
        _settings(**{"credentials.auth": "account"}),
        Settings().updated({"deepseek_api.base_url": "https://b.test/v1/tools"}),
    ]
    calls: list[int] = []

    def source() -> Settings:
        calls.append(1)
        return snapshots[min(len(calls), 2) - 1]

    env = {"DEEPSEEK_API_KEY": "key-from-second", "DEEPSEEK_ACCOUNT_TOKEN": "token-from-first"}
    provider = DeepSeekFetchApi(source, transport=mock.transport, environ=env)
    asyncio.run(provider.fetch(FetchRequest(TARGET), CallContext()))
    assert len(calls) == 1
    assert str(mock.only.url) == BASE + "/fetch"
    assert mock.only.headers["authorization"] == "Bearer token-from-first"


# -- hardening: non-finite numbers, credentials in provider text ----------------------------------

@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_number_in_the_body_is_unprocessable(number: str) -> None:
    error = _error(Mock.raw(200, b'{"title":"t","content":"x","score":' + number.encode() + b"}"))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert "unprocessable response body" in error.message


@pytest.mark.parametrize("status", [400, 401, 403, 404, 429])
def test_an_echoed_key_never_reaches_the_message(status: int) -> None:
    error = _error(Mock.json(status, {"error": {"message": f"Your api key {KEY} is invalid"}}))
    assert KEY not in error.message
    assert "Your api key <credential> is invalid" in error.message


def test_an_echoed_account_token_never_reaches_the_message() -> None:
    mock = Mock.json(401, {"message": f"Bearer {TOKEN} rejected"})
    error = _error(mock, settings=_settings(**{"credentials.auth": "account"}), env={"DEEPSEEK_ACCOUNT_TOKEN": TOKEN})
    assert TOKEN not in error.message and "Bearer <credential> rejected" in error.message
