"""``deepseek-official``: web search through DeepSeek's Anthropic-compatible Messages API.

One auxiliary Messages request per query carries the ``web_search_20250305`` server
tool. Only structured ``web_search_tool_result`` blocks become sources; snippets
come from text-block citations (``cited_text``, first per URL wins). The model's
prose is never returned and never mined for URLs (it is untrusted output).

The user message is ``Perform a web search for the query: <query>`` (the upstream
wording, kept so recorded requests stay comparable). ``thinking`` is disabled
because the generated answer is discarded; ``tool_choice`` is omitted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .._context import CallContext, OutgoingRequest
from .._exceptions import WebError, WebErrorCode
from .._types import SearchRequest, SearchResult, Source
from ._deepseek_http import (
    SettingsBoundProvider,
    encode_json,
    error_detail,
    parse_json,
    scrub_prefix,
    scrub_secrets,
)

__all__ = ["PROMPT_PREFIX", "DeepSeekMessagesSearch"]

PROVIDER_ID = "deepseek-official"
PROMPT_PREFIX = "Perform a web search for the query: "
_LABEL = "DeepSeek search"
# What an in-band error_code may look like to be shown as is (upstream codes are snake_case words).
_ERROR_CODE = re.compile(r"[a-z0-9_]{1,64}")
_EXCERPT_CHARS = 32


class DeepSeekMessagesSearch(SettingsBoundProvider):
    """Search provider. ``settings`` is called exactly once per search; the credential is
    read from ``environ`` (default: the live ``os.environ``) under the snapshot's variable."""

    provider_id = PROVIDER_ID
    section = "deepseek_messages"
    label = _LABEL

    async def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult:
        snapshot = self._settings()
        conf = snapshot.deepseek_messages
        base = self._base(snapshot)
        if not isinstance(request.query, str):
            raise WebError(WebErrorCode.INVALID_ARGUMENTS, "query must be a string")
        key = self._credential(snapshot)
        url = f"{base}/messages"
        payload: dict[str, Any] = {
            "model": conf.model,
            "max_tokens": conf.max_tokens,
            "messages": [{"role": "user", "content": [{"type": "text", "text": PROMPT_PREFIX + request.query}]}],
            "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": conf.max_uses}],
            "thinking": {"type": "disabled"},
        }
        try:
            body = encode_json(payload)
        except UnicodeEncodeError as exc:
            raise WebError(WebErrorCode.INVALID_ARGUMENTS, "query is not valid Unicode text", cause=exc) from exc
        # Recorded before dispatch; a recorder failure propagates and nothing is sent.
        ctx.record(OutgoingRequest(provider=PROVIDER_ID, method="POST", url=url, body=body, json=payload))
        headers = {
            # Both forms carry the same credential: DeepSeek reads either (Authorization wins) and
            # Anthropic-compatible gateways often read only x-api-key.
            "x-api-key": key,
            "authorization": f"Bearer {key}",
            "anthropic-version": conf.api_version,
            "content-type": "application/json",
            "accept": "application/json",
        }
        reply = await self._post(base, key, conf.timeout_s, url, body, headers)
        if not 200 <= reply.status < 300:
            # The provider's text may echo the credential it rejected: scrubbed before use.
            detail = error_detail(reply.body, (key,))
            suffix = f": {detail}" if detail else ""
            raise WebError(WebErrorCode.PROVIDER_ERROR, f"DeepSeek API error (HTTP {reply.status}){suffix}")
        try:
            data = parse_json(reply.body)
        except ValueError as exc:
            raise _unprocessable(f"not JSON ({exc})") from exc
        return SearchResult(sources=map_sources(data, secrets=(key,)))


def _unprocessable(why: str) -> WebError:
    return WebError(WebErrorCode.PROVIDER_ERROR, f"DeepSeek returned an unprocessable response body: {why}")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _citations(blocks: list[Any]) -> dict[str, str]:
    snippets: dict[str, str] = {}
    for i, block in enumerate(blocks):
        if block.get("type") != "text":
            continue
        citations = block.get("citations")
        if citations is None:
            continue
        if not isinstance(citations, list):
            raise _unprocessable(f"content[{i}].citations is not a list")
        for citation in citations:
            if not isinstance(citation, dict):
                raise _unprocessable(f"content[{i}].citations holds a non-object")
            url, cited = _text(citation.get("url")), _text(citation.get("cited_text"))
            if url and cited and url not in snippets:
                snippets[url] = cited
    return snippets


def _tool_error(code: object, secrets: Iterable[str]) -> WebError:
    """An in-band web_search_tool_result_error. Only a plain code ([a-z0-9_]{1,64}) is named as is;
    anything else is an unknown code with at most a short excerpt of safe characters."""
    if isinstance(code, str) and _ERROR_CODE.fullmatch(code) and scrub_secrets(code, secrets) == code:
        return WebError(WebErrorCode.PROVIDER_ERROR, f"DeepSeek web search failed: error_code {code}")
    message = "DeepSeek web search failed: unknown error code"
    if isinstance(code, str) and code.strip():
        text = scrub_prefix(code, _EXCERPT_CHARS, secrets)
        excerpt = re.sub(r"[^A-Za-z0-9 _.:/<>-]", "?", text[:_EXCERPT_CHARS])
        message += f' (starts "{excerpt}"' + ("...)" if len(text) > _EXCERPT_CHARS else ")")
    return WebError(WebErrorCode.PROVIDER_ERROR, message)


def map_sources(data: object, *, secrets: Iterable[str] = ()) -> tuple[Source, ...]:
    """Sources from a Messages response body; every field is checked before use. ``secrets`` are
    kept out of any provider text an error message quotes."""
    if not isinstance(data, dict):
        raise _unprocessable("expected a JSON object")
    blocks = data.get("content")
    if blocks is None:
        blocks = []
    if not isinstance(blocks, list):
        raise _unprocessable("content is not a list")
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise _unprocessable(f"content[{i}] is not an object")
    results = [(i, b) for i, b in enumerate(blocks) if b.get("type") == "web_search_tool_result"]
    if not results:
        raise WebError(
            WebErrorCode.PROVIDER_ERROR,
            "DeepSeek returned no web_search_tool_result blocks; the request may not have triggered native web search",
        )
    snippets = _citations(blocks)
    sources: list[Source] = []
    seen: set[str] = set()
    for i, block in results:
        items = block.get("content")
        if items is None:
            continue
        if isinstance(items, dict):
            if items.get("type") == "web_search_tool_result_error":
                raise _tool_error(items.get("error_code"), secrets)
            raise _unprocessable(f"content[{i}].content is neither a result list nor a web search error")
        if not isinstance(items, list):
            raise _unprocessable(f"content[{i}].content is not a list")
        for j, item in enumerate(items):
            if not isinstance(item, dict):
                raise _unprocessable(f"content[{i}].content[{j}] is not an object")
            if item.get("type") != "web_search_result":
                continue
            url = item.get("url")
            if not isinstance(url, str):
                raise _unprocessable(f"content[{i}].content[{j}] has no url")
            if not url or url in seen:
                continue
            seen.add(url)
            sources.append(
                Source(
                    url=url,
                    title=_text(item.get("title")),
                    snippet=snippets.get(url),
                    published_at=_text(item.get("page_age")),
                )
            )
    return tuple(sources)
