"""``POST /anthropic/v1/messages``: an Anthropic-compatible answer that runs one web search.

The search query is the text of the last user message (its text blocks joined by newlines). A
leading instruction such as "Perform a web search for the query: …" (what the reference client
sends), "Search the web for …", "Search for …" or "Query: …" is stripped, as are quotes around the
rest; otherwise the whole text is the query. Whitespace is collapsed and the result cut to 128
characters, standing in for the query a real model would write. No user text means no search.

Ids, encrypted fields and token counts are hashes or lengths of the request, never random, so
equal requests give byte-identical answers.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from typing import Any

from .errors import ApiError
from .models import check_model
from .search import Hit, search
from .tools import MAX_QUERY_CHARS, parse_json_object

__all__ = ["MessagesMode", "extract_query", "messages_answer"]

RESULTS_PER_SEARCH = 5
CITED_RESULTS = 3
_INSTRUCTION = re.compile(
    r"^(?:please\s+)?(?:"
    r"perform\s+an?\s+web\s+search(?:\s+for)?(?:\s+the)?(?:\s+query)?\s*[:：]?"
    r"|(?:search\s+the\s+web|web\s+search|search)\s+for(?:\s+the)?(?:\s+query)?\s*[:：]?"
    r"|(?:search|query|web\s+search)\s*[:：]"
    r")\s*",
    re.IGNORECASE,
)
_QUOTES = "\"'“”‘’「」"


@dataclass(frozen=True, slots=True)
class MessagesMode:
    """How a fault bends the answer: prose without result blocks, an in-band tool error, a
    completed search without sources, or a summary of ``summary_chars`` characters."""

    prose_only: str | None = None
    tool_error: str | None = None
    no_sources: bool = False
    summary_chars: int | None = None


def _hash(*parts: str | bytes, size: int = 24) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:size]


def _opaque(*parts: str) -> str:
    return base64.b64encode(hashlib.sha256("\0".join(parts).encode()).digest() * 2).decode()


def _user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
    return ""


def extract_query(text: str) -> str:
    """The search query a user message asks for (see the module docstring)."""
    collapsed = " ".join(text.split())
    match = _INSTRUCTION.match(collapsed)
    stripped = collapsed[match.end() :] if match and match.end() < len(collapsed) else collapsed
    stripped = stripped.strip().strip(_QUOTES).strip()
    return (stripped or collapsed)[:MAX_QUERY_CHARS].strip()


def _validate(request: dict[str, Any]) -> None:
    check_model(request)
    max_tokens = request.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ApiError(400, "max_tokens: must be a positive integer", param="max_tokens")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "messages: must be a non-empty list", param="messages")
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise ApiError(400, "messages: each message needs role 'user' or 'assistant'", param="messages")
        if not isinstance(message.get("content"), str | list):
            raise ApiError(400, "messages: content must be a string or a list of blocks", param="messages")
    if not isinstance(request.get("stream", False), bool):
        raise ApiError(400, "stream: must be a boolean", param="stream")
    thinking = request.get("thinking")
    if thinking is not None and (
        not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled", "adaptive")
    ):
        raise ApiError(400, "thinking: type must be 'enabled', 'disabled' or 'adaptive'", param="thinking")
    tools = request.get("tools", [])
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise ApiError(400, "tools: must be a list of objects", param="tools")


def _web_search_tool(request: dict[str, Any]) -> dict[str, Any] | None:
    for tool in request.get("tools") or []:
        if str(tool.get("type", "")).startswith("web_search_") and tool.get("name") == "web_search":
            max_uses = tool.get("max_uses")
            if max_uses is not None and (isinstance(max_uses, bool) or not isinstance(max_uses, int) or max_uses < 1):
                raise ApiError(400, "tools: max_uses must be a positive integer", param="tools")
            return dict(tool)
    return None


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _scoped_query(query: str, tool: dict[str, Any]) -> str:
    """allowed_domains / blocked_domains become site: operators, so they narrow the same ranking."""
    allowed = [f"site:{d}" for d in _strings(tool.get("allowed_domains"))]
    blocked = [f"-site:{d}" for d in _strings(tool.get("blocked_domains"))]
    return " ".join([query, *allowed, *blocked])


def _citation(hit: Hit, request_hash: str) -> dict[str, Any]:
    snippet = hit.document.snippet or hit.document.summary
    return {
        "type": "web_search_result_location",
        "url": hit.document.url,
        "title": hit.document.title or None,
        "cited_text": snippet[:150],
        "encrypted_index": _opaque("index", request_hash, hit.document.url),
    }


def _result(hit: Hit, request_hash: str) -> dict[str, Any]:
    return {
        "type": "web_search_result",
        "url": hit.document.url,
        "title": hit.document.title,
        "encrypted_content": _opaque("content", request_hash, hit.document.url),
        "page_age": hit.document.date[:10] if hit.document.date else None,
    }


def _search_blocks(query: str, tool: dict[str, Any], mode: MessagesMode, request_hash: str) -> list[dict[str, Any]]:
    tool_use_id = "srvtoolu_" + _hash("tool", request_hash)
    blocks: list[dict[str, Any]] = [
        {"type": "server_tool_use", "id": tool_use_id, "name": "web_search", "input": {"query": query}}
    ]
    if mode.tool_error is not None:
        error = {"type": "web_search_tool_result_error", "error_code": mode.tool_error}
        blocks.append({"type": "web_search_tool_result", "tool_use_id": tool_use_id, "content": error})
        blocks.append({"type": "text", "text": f"The web search failed ({mode.tool_error}), so I cannot cite sources."})
        return blocks
    hits = [] if mode.no_sources else search(_scoped_query(query, tool), RESULTS_PER_SEARCH)
    results = [_result(hit, request_hash) for hit in hits]
    blocks.append({"type": "web_search_tool_result", "tool_use_id": tool_use_id, "content": results})
    if mode.summary_chars is not None:
        blocks.append({"type": "text", "text": ("Summary. " * (mode.summary_chars // 9 + 1))[: mode.summary_chars]})
        return blocks
    if not hits:
        blocks.append({"type": "text", "text": f"I found no web results for “{query}”."})
        return blocks
    blocks.append({"type": "text", "text": f"Here is what I found about “{query}”:\n\n"})
    for number, hit in enumerate(hits[:CITED_RESULTS], start=1):
        if number > 1:
            blocks.append({"type": "text", "text": "\n\n"})
        blocks.append(
            {
                "type": "text",
                "text": f"{number}. {hit.document.snippet or hit.document.title}",
                "citations": [_citation(hit, request_hash)],
            }
        )
    return blocks


def _thinking_wanted(request: dict[str, Any]) -> bool:
    # DeepSeek thinks unless told not to, so an absent parameter still yields a thinking block.
    thinking = request.get("thinking")
    return not (isinstance(thinking, dict) and thinking.get("type") == "disabled")


def messages_answer(body: bytes, mode: MessagesMode | None = None) -> dict[str, Any]:
    mode = mode or MessagesMode()
    request = parse_json_object(body)
    _validate(request)
    tool = _web_search_tool(request)
    request_hash = _hash(body, size=64)
    query = extract_query(_user_text(request["messages"]))
    content: list[dict[str, Any]] = []
    if _thinking_wanted(request):
        content.append(
            {
                "type": "thinking",
                "thinking": f"The user asks about: {query}" if query else "The user sent no text.",
                "signature": _opaque("signature", request_hash),
            }
        )
    searches = 0
    if mode.prose_only is not None:
        content.append({"type": "text", "text": mode.prose_only or f"From memory, without searching: {query}."})
    elif tool is not None and query:
        content.extend(_search_blocks(query, tool, mode, request_hash))
        searches = 0 if mode.tool_error else 1
    else:
        content.append({"type": "text", "text": f"This is the emulator's answer to: {query}" if query else "Hello."})
    output_chars = sum(len(block.get("text", "")) + len(block.get("thinking", "")) for block in content)
    return {
        "id": "msg_" + _hash("message", request_hash),
        "type": "message",
        "role": "assistant",
        "model": request["model"],
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": max(1, len(body) // 4),
            "output_tokens": max(1, output_chars // 4),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "server_tool_use": {"web_search_requests": searches, "web_fetch_requests": 0},
        },
    }
