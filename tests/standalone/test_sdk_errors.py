"""Emulator error bodies per route, read by the official SDKs: the Anthropic envelope on
``/anthropic/...``, the OpenAI envelope on ``/v1/responses`` and ``/v1/chat/...``, and the
documented ``{"error": {...}}`` bodies on the Search/Fetch API routes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from dsweb_ref.emulator import Emulator, Fault, RateLimited, Status

MESSAGES: Any = [{"role": "user", "content": "Perform a web search for the query: search api"}]
TOOLS: Any = [{"type": "web_search_20250305", "name": "web_search"}]


def _anthropic(emulator: Emulator, key: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=emulator.anthropic_base, api_key=key, max_retries=0, timeout=10.0,
                               _strict_response_validation=True)


def _openai(emulator: Emulator, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=emulator.openai_base, api_key=key, max_retries=0, timeout=10.0,
                         _strict_response_validation=True)


@pytest.fixture
def claude(emulator: Emulator, emulator_api_key: str) -> Iterator[anthropic.Anthropic]:
    with _anthropic(emulator, emulator_api_key) as client:
        yield client


@pytest.fixture
def gpt(emulator: Emulator, emulator_api_key: str) -> Iterator[openai.OpenAI]:
    with _openai(emulator, emulator_api_key) as client:
        yield client


def _anthropic_error(raised: pytest.ExceptionInfo[anthropic.APIStatusError]) -> tuple[str, str]:
    """The error's type and message, parsed strictly as the SDK's own ErrorResponse type."""
    parsed = anthropic.types.ErrorResponse.model_validate(raised.value.body, strict=True)
    assert parsed.type == "error"
    return parsed.error.type, parsed.error.message


# (fault, the SDK's exception class, the Anthropic error type, a fragment of the message)
ANTHROPIC_ROWS: list[tuple[Fault, type[anthropic.APIStatusError], str, str]] = [
    (Status(400), anthropic.BadRequestError, "invalid_request_error", "Invalid request body"),
    (Status(402), anthropic.APIStatusError, "billing_error", "Insufficient Balance"),
    (Status(403), anthropic.PermissionDeniedError, "permission_error", "Forbidden"),
    (RateLimited(retry_after=1), anthropic.RateLimitError, "rate_limit_error", "Rate Limit Reached"),
    (Status(500), anthropic.InternalServerError, "api_error", "Internal Server Error"),
    (Status(503), anthropic.InternalServerError, "overloaded_error", "Server Overloaded"),
]


@pytest.mark.parametrize(("fault", "kind", "type_", "fragment"), ANTHROPIC_ROWS,
                         ids=[f"{r[1].__name__}-{r[2]}" for r in ANTHROPIC_ROWS])
def test_anthropic_sdk_reads_the_anthropic_envelope_on_messages(
    claude: anthropic.Anthropic, emulator: Emulator, fault: Fault, kind: type[anthropic.APIStatusError],
    type_: str, fragment: str,
) -> None:
    emulator.inject("messages", fault)
    with pytest.raises(kind) as raised:
        claude.messages.create(model="deepseek-v4-flash", max_tokens=64, messages=MESSAGES, tools=TOOLS)
    assert _anthropic_error(raised) == (type_, fragment)


def test_anthropic_sdk_reads_validation_and_auth_errors(claude: anthropic.Anthropic, emulator: Emulator) -> None:
    with pytest.raises(anthropic.BadRequestError) as bad:
        claude.messages.create(model="deepseek-v4-flash-typo", max_tokens=64, messages=MESSAGES, stream=True)
    assert _anthropic_error(bad) == ("invalid_request_error", "Model Not Exist")
    with _anthropic(emulator, "wrong-key-0000") as wrong, pytest.raises(anthropic.AuthenticationError) as denied:
        wrong.messages.create(model="deepseek-v4-flash", max_tokens=64, messages=MESSAGES)
    type_, message = _anthropic_error(denied)
    assert type_ == "authentication_error" and "is invalid" in message and "wrong-key-0000" not in message


def test_an_unknown_anthropic_path_answers_in_the_anthropic_envelope(emulator: Emulator) -> None:
    reply = httpx.post(emulator.base_url + "/anthropic/v1/complete", json={})
    assert reply.status_code == 404
    assert reply.json() == {"type": "error", "error": {"type": "not_found_error", "message": "Not Found"}}


OPENAI_ROWS: list[tuple[Fault, type[openai.APIStatusError], str]] = [
    (Status(400), openai.BadRequestError, "invalid_request_error"),
    (RateLimited(retry_after=1), openai.RateLimitError, "rate_limit_error"),
    (Status(500), openai.InternalServerError, "server_error"),
]


@pytest.mark.parametrize(("fault", "kind", "type_"), OPENAI_ROWS, ids=[r[1].__name__ for r in OPENAI_ROWS])
def test_openai_sdk_reads_the_openai_envelope_on_responses(
    gpt: openai.OpenAI, emulator: Emulator, fault: Fault, kind: type[openai.APIStatusError], type_: str
) -> None:
    emulator.inject("responses", fault)
    with pytest.raises(kind) as raised:
        gpt.responses.create(model="deepseek-v4-flash", input="search api", tools=[{"type": "web_search"}])
    assert raised.value.type == type_ and isinstance(raised.value.body, dict)
    assert raised.value.body["message"] and raised.value.body["message"] in raised.value.message


def test_openai_sdk_reads_validation_auth_and_chat_path_errors(gpt: openai.OpenAI, emulator: Emulator) -> None:
    with pytest.raises(openai.BadRequestError) as bad:
        gpt.responses.create(model="deepseek-v4-flash-typo", input="x")
    assert (bad.value.type, bad.value.param, bad.value.code) == ("invalid_request_error", "model",
                                                                  "invalid_request_error")
    assert isinstance(bad.value.body, dict) and bad.value.body["message"] == "Model Not Exist"
    with _openai(emulator, "wrong-key-0000") as wrong, pytest.raises(openai.AuthenticationError) as denied:
        wrong.responses.create(model="deepseek-v4-flash", input="x")
    assert denied.value.type == "authentication_error" and "wrong-key-0000" not in str(denied.value.body)
    with pytest.raises(openai.NotFoundError) as missing:  # no chat route: still the OpenAI envelope
        gpt.chat.completions.create(model="deepseek-v4-flash", messages=[{"role": "user", "content": "x"}])
    assert missing.value.type == "not_found_error" and isinstance(missing.value.body, dict)


@pytest.mark.parametrize(("path", "body"), [("/search", {"query": "x" * 200}), ("/fetch", {"url": "not a url"})])
def test_the_tools_routes_keep_their_documented_error_body(
    emulator: Emulator, emulator_api_key: str, path: str, body: dict[str, Any]
) -> None:
    reply = httpx.post(emulator.tools_base + path, json=body, headers={"authorization": f"Bearer {emulator_api_key}"})
    assert reply.status_code == 400
    data = reply.json()
    assert set(data) == {"error"} and set(data["error"]) == {"message", "type", "param", "code"}
    assert data["error"]["type"] == "invalid_request_error" and data["error"]["message"]
