"""Helpers for the DeepSeek provider tests: a recording mock transport and recorder."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from dsweb_ref._context import CallContext, OutgoingRequest

KEY = "test-key-123"
TOKEN = "test-account-token-456"
ENV = {"DEEPSEEK_API_KEY": KEY}


@dataclass
class Recorder:
    """A CallContext recorder that also notes how many requests had been sent when it ran."""

    sent_before: list[int] = field(default_factory=list)
    records: list[OutgoingRequest] = field(default_factory=list)

    def context(self, mock: Mock | None = None, prompt: str | None = None) -> CallContext:
        def record(request: OutgoingRequest) -> None:
            self.sent_before.append(len(mock.requests) if mock else 0)
            self.records.append(request)

        return CallContext(latest_prompt=prompt, record_request=record)


class Mock:
    """httpx.MockTransport that answers from ``respond`` and keeps every request it saw."""

    def __init__(self, respond: Callable[[httpx.Request], httpx.Response]) -> None:
        self.requests: list[httpx.Request] = []

        def handler(request: httpx.Request) -> httpx.Response:
            request.read()
            self.requests.append(request)
            return respond(request)

        self.transport = httpx.MockTransport(handler)

    @classmethod
    def json(cls, status: int, payload: Any, headers: dict[str, str] | None = None) -> Mock:
        return cls(lambda _r: httpx.Response(status, content=json.dumps(payload).encode(), headers=headers))

    @classmethod
    def raw(cls, status: int, body: bytes, headers: dict[str, str] | None = None) -> Mock:
        return cls(lambda _r: httpx.Response(status, content=body, headers=headers))

    @property
    def only(self) -> httpx.Request:
        assert len(self.requests) == 1, self.requests
        return self.requests[0]


def messages_reply(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "deepseek-v4-flash",
        "content": list(blocks),
        "stop_reason": "end_turn",
    }


def result_block(*items: dict[str, Any], content: Any = None) -> dict[str, Any]:
    return {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_test",
        "content": list(items) if content is None else content,
    }


def result_item(url: str, title: str | None = None, page_age: str | None = None) -> dict[str, Any]:
    return {
        "type": "web_search_result", "url": url, "title": title, "encrypted_content": "opaque", "page_age": page_age,
    }


def text_block(text: str, *citations: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": "text",
        "text": text,
        "citations": [
            {"type": "web_search_result_location", "url": u, "title": None, "cited_text": c, "encrypted_index": "i"}
            for u, c in citations
        ],
    }
