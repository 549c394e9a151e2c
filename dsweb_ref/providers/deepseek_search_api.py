"""``deepseek-search-api``: DeepSeek's dedicated Search API (``POST {tools base}/search``).

No model request is involved: the API returns structured results directly. The
query passes through unchanged (search operators included; the service enforces
its 1-128 character limit). ``ori_question`` is the conversation's latest prompt,
whitespace-collapsed and cut to 128 code points, unless disabled by settings.

Only ``Authorization`` and ``Content-Type`` are added to the request; httpx's own
defaults (User-Agent, Accept, Accept-Encoding, Connection) are removed so the
request carries exactly the documented headers plus the framing headers HTTP/1.1
needs (Host, Content-Length).
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any

from .._context import CallContext
from .._exceptions import WebError, WebErrorCode
from .._types import SearchRequest, SearchResult, Source
from .._validate import ip_literal, is_int_at_least
from ._deepseek_http import SettingsBoundProvider, call_tools_api, unprocessable

__all__ = ["ORI_QUESTION_LIMIT", "DeepSeekSearchApi", "original_question"]

PROVIDER_ID = "deepseek-search-api"
ORI_QUESTION_LIMIT = 128
_LABEL = "DeepSeek Search API"


def original_question(prompt: str | None) -> str | None:
    """``prompt`` with whitespace runs collapsed to one space, trimmed and cut to 128 code
    points (a trailing space left by the cut is dropped); None when nothing is left."""
    if not isinstance(prompt, str):
        return None
    # Lone surrogates cannot be sent as UTF-8; replace them rather than fail the search.
    text = prompt.encode("utf-8", "replace").decode("utf-8")
    text = " ".join(text.split())[:ORI_QUESTION_LIMIT].rstrip()
    return text or None


class DeepSeekSearchApi(SettingsBoundProvider):
    """Search provider. ``settings`` is called exactly once per search; the credential is
    read from ``environ`` (default: the live ``os.environ``) under the snapshot's variable."""

    provider_id = PROVIDER_ID
    section = "deepseek_api"
    label = _LABEL

    async def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult:
        snapshot = self._settings()
        conf = snapshot.deepseek_api
        self._base(snapshot)  # a bad base is a config error before any argument is looked at
        if not isinstance(request.query, str):
            raise WebError(WebErrorCode.INVALID_ARGUMENTS, "query must be a string")
        count = conf.count
        limit = request.max_results
        if limit is not None:
            if not is_int_at_least(limit):
                raise WebError(WebErrorCode.INVALID_ARGUMENTS, "max_results must be a positive integer")
            count = min(count, limit)
        payload: dict[str, Any] = {"query": request.query, "count": count, "need_content": False}
        question = original_question(ctx.latest_prompt) if conf.send_original_question else None
        if question is not None:
            payload["ori_question"] = question
        where = _localization(conf.localization, ctx.localization)
        if where is not None:
            payload["localization"] = where
        data = await call_tools_api(
            self,
            snapshot,
            ctx,
            "search",
            payload,
            statuses=_SEARCH_STATUSES,
            bad_text=(WebErrorCode.INVALID_ARGUMENTS, "query is not valid Unicode text"),
        )
        return SearchResult(sources=map_results(data))


def _localization(setting: str, override: object) -> str | None:
    """The IP literal to send: the call's override, else the setting; None (omitted) when neither is set.
    Anything but an IP address literal is an error and is never forwarded."""
    if override is not None:
        found = ip_literal(override)
        if found is None:
            raise WebError(
                WebErrorCode.INVALID_ARGUMENTS,
                "call context localization must be an IPv4 or IPv6 address literal "
                "(no host names, places or languages)",
            )
        return found
    if setting == "":
        return None
    found = ip_literal(setting)
    if found is None:  # a snapshot built around the settings checks
        raise WebError(
            WebErrorCode.CONFIG_INVALID,
            "deepseek_api.localization must be blank or an IPv4 or IPv6 address literal",
        )
    return found


_SEARCH_STATUSES = {
    400: ("rejected the request", "queries must be 1-128 characters and not blank; check search operators"),
}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: object) -> bool:
    """A finite JSON number (never NaN or an infinity, which would make the structured value invalid JSON)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool)


def map_results(data: object) -> tuple[Source, ...]:
    """Sources in service order, first occurrence of a URL kept; every field is type-checked."""
    if not isinstance(data, dict):
        raise unprocessable(_LABEL, "expected a JSON object")
    results = data.get("results")
    if not isinstance(results, list):
        raise unprocessable(_LABEL, "results is not a list")
    sources: list[Source] = []
    seen: set[str] = set()
    for i, item in enumerate(results):
        if not isinstance(item, dict):
            raise unprocessable(_LABEL, f"results[{i}] is not an object")
        url = item.get("url")
        if not isinstance(url, str) or not url:
            raise unprocessable(_LABEL, f"results[{i}] has no url")
        if url in seen:
            continue
        seen.add(url)
        metadata: dict[str, Any] = {}
        for name in ("summary", "site_name"):
            if _text(item.get(name)):
                metadata[name] = item[name]
        if _number(item.get("rerank_score")):
            metadata["rerank_score"] = item["rerank_score"]
        authority = item.get("authority")
        if isinstance(authority, int) and not isinstance(authority, bool):
            metadata["authority"] = authority
        sources.append(
            Source(
                url=url,
                title=_text(item.get("title")),
                snippet=_text(item.get("snippet")),
                published_at=_text(item.get("date")),
                metadata=MappingProxyType(metadata),
            )
        )
    return tuple(sources)
