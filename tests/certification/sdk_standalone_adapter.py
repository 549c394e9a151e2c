#!/usr/bin/env python3
"""A certification adapter for the standalone search (seed 003) whose model requests are made by the
official SDKs with strict parsing (issue 24 item 3): `openai` for Responses, `anthropic` for Messages.
``dsweb certify --adapter "python tests/certification/sdk_standalone_adapter.py" --profile seed-003-standalone``.

Each SDK sends the request and validates the answer against its own types; the validated answer is
read by the reference's readers and tool (result bounds, source filter), and the account selection
is the reference's. Any SDK failure is WEB_PROVIDER_ERROR, never the SDK's message (it quotes the body).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import openai
from _adapter_loop import serve, tool_answer  # run as a script: this folder is sys.path[0]

from dsweb_ref import CallContext, WebError, WebErrorCode, __version__
from dsweb_ref._protocols import StandaloneAnswer
from dsweb_ref.certification.targets import TargetConfig, reference_resolve
from dsweb_ref.providers.standalone_messages import PROMPT_PREFIX, read_answer
from dsweb_ref.providers.standalone_responses import read_response
from dsweb_ref.tools.standalone_search import StandaloneSearchTool

CAPABILITIES = ("standalone-search", "standalone-resolve")
MODEL = "deepseek-v4-flash"


def _failed(exc: Exception) -> WebError:
    status = getattr(exc, "status_code", None)
    return WebError(WebErrorCode.PROVIDER_ERROR,
                    f"search request failed: {type(exc).__name__}" + (f" (HTTP {status})" if status else ""))


class OpenAIResponses:
    id = "sdk-responses"

    def __init__(self, config: TargetConfig) -> None:
        self.client = openai.AsyncOpenAI(
            base_url=config.openai_base, api_key=config.api_key, max_retries=0, _strict_response_validation=True,
            http_client=openai.DefaultAsyncHttpxClient(follow_redirects=False),
        )

    async def standalone_search(self, query: str, ctx: CallContext, *, max_tokens: int,
                                timeout_s: float) -> StandaloneAnswer:
        try:
            response = await self.client.responses.create(
                model=MODEL, tools=[{"type": "web_search"}], max_output_tokens=max_tokens, store=False,
                input=[{"role": "user", "content": [{"type": "input_text", "text": PROMPT_PREFIX + query}]}],
                timeout=timeout_s,
            )
        except openai.APIError as exc:
            raise _failed(exc) from None
        return read_response(response.to_dict(), "Responses web search")


class AnthropicMessages:
    id = "sdk-messages"

    def __init__(self, config: TargetConfig) -> None:
        self.client = anthropic.AsyncAnthropic(
            base_url=config.standalone_url("messages").removesuffix("/messages").removesuffix("/v1"),
            api_key=config.api_key, max_retries=0, _strict_response_validation=True,
            http_client=anthropic.DefaultAsyncHttpxClient(follow_redirects=False),
        )

    async def standalone_search(self, query: str, ctx: CallContext, *, max_tokens: int,
                                timeout_s: float) -> StandaloneAnswer:
        try:
            message = await self.client.messages.create(
                model=MODEL, max_tokens=max_tokens, tools=[{"type": "web_search_20250305", "name": "web_search"}],
                messages=[{"role": "user", "content": [{"type": "text", "text": PROMPT_PREFIX + query}]}],
                timeout=timeout_s,
            )
        except anthropic.APIError as exc:
            raise _failed(exc) from None
        return read_answer(message.to_dict(), "Messages web search")


class Adapter:
    config: TargetConfig | None = None

    async def answer(self, method: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "hello":
            return {"name": "official SDK standalone adapter", "version": __version__,
                    "capabilities": list(CAPABILITIES)}
        if method == "configure":
            self.config = TargetConfig.from_json(params)
            return {}
        if method == "standalone_resolve":
            value = reference_resolve(params.get("document"), list(params.get("environ_set") or []))
            return {"text": json.dumps(value), "value": value}
        if method == "standalone_search" and self.config is not None:
            kind = OpenAIResponses if params.get("protocol") == "responses" else AnthropicMessages
            tool = StandaloneSearchTool(kind(self.config))
            return tool_answer(await tool.execute(params.get("arguments"), CallContext()))
        return None


if __name__ == "__main__":
    asyncio.run(serve(Adapter().answer))
