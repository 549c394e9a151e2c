"""``POST /v1/tools/search`` and ``/v1/tools/fetch``: request validation and answer bodies.

Pure functions of the request bytes, so equal requests give equal answers. Validation follows
README "Upstream wire facts"; the wording of messages the guide does not give is the emulator's own.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any
from urllib.parse import urlsplit

from .corpus import find_document
from .errors import ApiError
from .search import search

__all__ = ["fetch_answer", "parse_json_object", "search_answer"]

MAX_QUERY_CHARS = 128
MAX_URL_CHARS = 8192
_BAD_URL = "'url' must be a valid HTTP or HTTPS URL"


def parse_json_object(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body)
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, or nested too deeply
        raise ApiError(400, f"Failed to parse the request body as JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return value


def _bad(param: str, message: str) -> ApiError:
    return ApiError(400, message, param=param)


def _optional_text(body: dict[str, Any], name: str) -> str | None:
    """A 1-128 character string, or None when absent or null (null means not provided)."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _bad(name, f"invalid type for '{name}': expected a string")
    if not value.strip():
        raise _bad(name, f"'{name}' must not be blank")
    if len(value) > MAX_QUERY_CHARS:
        raise _bad(name, f"'{name}' must be at most {MAX_QUERY_CHARS} characters")
    return value


def _count(body: dict[str, Any]) -> int:
    value = body.get("count")
    if value is None:
        return 10
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad("count", "invalid type for 'count': expected an integer")
    if not 1 <= value <= 50:
        raise _bad("count", "'count' must be between 1 and 50")
    return value


def _localization(body: dict[str, Any]) -> None:
    value = body.get("localization")
    if value is None or value == "":
        return
    if not isinstance(value, str):
        raise _bad("localization", "invalid type for 'localization': expected a string")
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise _bad("localization", "'localization' must be an IP address") from None


def _need_content(body: dict[str, Any]) -> bool:
    value = body.get("need_content")
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _bad("need_content", "invalid type for 'need_content': expected a boolean")
    return value


def search_answer(body: bytes) -> dict[str, Any]:
    """The Search answer. ``ori_question`` and ``localization`` are validated but, as probes of the
    real service found, leave order, scores and summaries unchanged."""
    request = parse_json_object(body)
    if "query" not in request:
        raise _bad("query", "missing field 'query'")
    query = _optional_text(request, "query")
    if query is None:
        raise _bad("query", "invalid type for 'query': expected a string")
    count = _count(request)
    _optional_text(request, "ori_question")
    _localization(request)
    need_content = _need_content(request)
    results = [
        {
            "url": hit.document.url,
            "title": hit.document.title,
            "snippet": hit.document.snippet,
            "summary": hit.document.summary,
            "content": hit.document.content if need_content else "",
            "date": hit.document.date,
            "site_name": hit.document.site_name,
            "site_icon": hit.document.site_icon,
            "rerank_score": hit.rerank_score,
            "authority": hit.document.authority,
        }
        for hit in search(query, count)
    ]
    return {"results": results}


def _check_url(value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_URL_CHARS:
        raise _bad("url", _BAD_URL)
    if any(ch.isspace() or ord(ch) < 0x20 for ch in value):
        raise _bad("url", _BAD_URL)
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise _bad("url", _BAD_URL) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        raise _bad("url", _BAD_URL)
    return value


def fetch_answer(body: bytes) -> dict[str, Any]:
    """The Fetch answer. Hosts under ``.invalid`` answer 500, as an unresolvable host did upstream;
    any other URL outside the corpus answers 404."""
    request = parse_json_object(body)
    if "url" not in request:
        raise _bad("url", "missing field 'url'")
    url = _check_url(request["url"])
    host = (urlsplit(url).hostname or "").rstrip(".")
    if host == "invalid" or host.endswith(".invalid"):
        raise ApiError(500, "failed to resolve host", "server_error", code=None)
    document = find_document(url)
    if document is None or document.fetch == "unreadable":
        raise ApiError(404, "failed to fetch URL", "not_found_error", code=None)
    if document.fetch == "refused":
        raise ApiError(
            403, "fetching this URL is disallowed by the site's crawler policy", "permission_error", code=None
        )
    return {"title": document.title, "content": document.content}
