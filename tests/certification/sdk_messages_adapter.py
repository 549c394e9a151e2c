#!/usr/bin/env python3
"""A certification adapter whose Messages search is the official `anthropic` SDK with strict parsing
(issue 24 item 3): ``dsweb certify --adapter "python tests/certification/sdk_messages_adapter.py"
--profile seed-001-messages``.

The SDK sends the request and validates the answer against its own types
(``_strict_response_validation=True``); this file only maps the parsed Message onto sources. The
model-facing tool on top (queries, merge, text) is the reference's, as the pytest plugin does for a
provider. Any SDK failure is WEB_PROVIDER_ERROR, never the SDK's message (it quotes the body, which may
echo the key).
"""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
from _adapter_loop import serve, tool_answer  # run as a script: this folder is sys.path[0]
from anthropic.types import Message, TextBlock, WebSearchToolResultBlock

from dsweb_ref import CallContext, SearchRequest, SearchResult, Source, WebError, WebErrorCode, __version__
from dsweb_ref._service import ProviderSelection, WebService
from dsweb_ref.certification.targets import TargetConfig
from dsweb_ref.tools.web_search import SearchToolSettings, WebSearchTool

CAPABILITIES = ("web_search", "messages-search")
PROMPT = "Perform a web search for the query: "


def sources_of(message: Message) -> tuple[Source, ...]:
    """Every web_search_result in order (a URL once), each with the first citation excerpt naming it."""
    excerpts: dict[str, str] = {}
    for block in message.content:
        if isinstance(block, TextBlock):
            for citation in block.citations or ():
                if citation.type == "web_search_result_location" and citation.cited_text:
                    excerpts.setdefault(citation.url, citation.cited_text)
    results = [b for b in message.content if isinstance(b, WebSearchToolResultBlock)]
    if not results:
        raise WebError(WebErrorCode.PROVIDER_ERROR, "the answer holds no web_search_tool_result")
    found: dict[str, Source] = {}
    for block in results:
        if not isinstance(block.content, list):
            raise WebError(WebErrorCode.PROVIDER_ERROR, f"web search failed: {block.content.error_code}")
        for item in block.content:
            if item.url and item.url not in found:
                found[item.url] = Source(item.url, item.title or None, excerpts.get(item.url), item.page_age or None)
    return tuple(found.values())


class SdkMessagesSearch:
    """A seam search provider built on ``anthropic.AsyncAnthropic``."""

    id = "sdk-messages"

    def __init__(self, config: TargetConfig) -> None:
        self.config = config
        # The configured base is complete (seed 001): the request goes to {messages_base}/messages, so the
        # SDK's own /v1/messages path is not used. No redirect is followed.
        self.client = anthropic.AsyncAnthropic(
            base_url=config.messages_base, api_key=config.api_key,
            max_retries=0, timeout=config.timeout_s, _strict_response_validation=True,
            http_client=anthropic.DefaultAsyncHttpxClient(follow_redirects=False),
        )

    def available(self) -> bool:
        return True

    async def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult:
        c = self.config
        try:
            message = await self.client.post("/messages", cast_to=Message, body={
                "model": c.model, "max_tokens": c.max_tokens,
                "messages": [{"role": "user", "content": PROMPT + request.query}],
                "thinking": {"type": "disabled"},
                "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": c.max_uses}],
            })
        except anthropic.APIError as exc:
            status = getattr(exc, "status_code", None)
            raise WebError(WebErrorCode.PROVIDER_ERROR, f"Messages search failed: {type(exc).__name__}"
                           + (f" (HTTP {status})" if status else "")) from None
        return SearchResult(sources=sources_of(message))


class Adapter:
    tool: WebSearchTool | None = None

    def configure(self, params: dict[str, Any]) -> dict[str, Any]:
        config = TargetConfig.from_json(params)
        web = WebService(ProviderSelection(search=SdkMessagesSearch.id))
        web.register_search(SdkMessagesSearch(config))
        settings = SearchToolSettings(config.search_max_queries, config.search_max_results)
        self.tool = WebSearchTool(web, settings)
        return {}

    async def answer(self, method: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "hello":
            return {"name": "anthropic SDK adapter", "version": __version__, "capabilities": list(CAPABILITIES)}
        if method == "configure":
            return self.configure(params)
        if method == "web_search" and self.tool is not None:
            ctx = CallContext(latest_prompt=params.get("latest_prompt"))
            return tool_answer(await self.tool.execute(params.get("arguments"), ctx))
        return None


if __name__ == "__main__":
    asyncio.run(serve(Adapter().answer))
