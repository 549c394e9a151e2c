"""Request builders shared by the emulator tests."""

from __future__ import annotations

from typing import Any

SEARCH = "/v1/tools/search"
FETCH = "/v1/tools/fetch"
MESSAGES = "/anthropic/v1/messages"
WEB_SEARCH_TOOL = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}


def messages_body(text: str, *, tools: bool = True, **extra: Any) -> dict[str, Any]:
    """The body the reference client sends: one user message carrying the query."""
    body: dict[str, Any] = {
        "model": "deepseek-v4-flash",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    }
    if tools:
        body["tools"] = [WEB_SEARCH_TOOL]
    body.update(extra)
    return body


def error_of(response: Any) -> dict[str, Any]:
    """The ``error`` object of an OpenAI-style envelope, checking the envelope's shape."""
    payload = response.json()
    assert set(payload) == {"error"}
    assert set(payload["error"]) == {"message", "type", "param", "code"}
    error: dict[str, Any] = payload["error"]
    return error
