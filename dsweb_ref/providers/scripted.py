"""``scripted``: the conformance search route of the emulator (``POST {base}/search``).

A test double, not a search engine: the route answers in the seam's own result shape, so this
provider only carries the query out and the result back unchanged. Certification wires the
reference's ``web_search`` to it to compare merges whose answers, truncation flags and failures
are scripted (see :mod:`dsweb_ref.emulator.scripted` for the protocol).

A non-success answer ``{"error": {"code": "WEB_...", "message"}}`` fails the search with that
code, so which failure a batch reports is visible; anything else is ``WEB_PROVIDER_ERROR``.
"""

from __future__ import annotations

import functools
import re
import ssl
from typing import Any

import httpx

from .._context import CallContext, OutgoingRequest
from .._exceptions import WebError, WebErrorCode
from .._types import SearchRequest, SearchResult, Source
from ._deepseek_http import encode_json, parse_json, post, unprocessable, usable_base_url

__all__ = ["PROVIDER_ID", "ScriptedSearch", "map_result"]

PROVIDER_ID = "scripted"
_LABEL = "Scripted search"
_CODE = re.compile(r"WEB_[A-Z_]{1,60}")
_FIELDS = ("title", "snippet", "published_at")


class ScriptedSearch:
    """Search provider over ``{base}/search``; ``base`` is the ``scripted_base`` of a loaded scenario."""

    def __init__(
        self, base: str, *, timeout_s: float = 30.0, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self._base = base
        self._timeout_s = timeout_s
        self._transport = transport

    @property
    def id(self) -> str:
        return PROVIDER_ID

    def available(self) -> bool:
        return usable_base_url(self._base) is not None

    async def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult:
        base = usable_base_url(self._base)
        if base is None:
            raise WebError(WebErrorCode.CONFIG_INVALID, "scripted_base is blank or not an http(s) URL")
        payload: dict[str, Any] = {"query": request.query}
        if request.max_results is not None:
            payload["max_results"] = request.max_results
        try:
            body = encode_json(payload)
        except UnicodeEncodeError as exc:
            raise WebError(WebErrorCode.INVALID_ARGUMENTS, "query is not valid Unicode text", cause=exc) from exc
        url = f"{base}/search"
        ctx.record(OutgoingRequest(provider=PROVIDER_ID, method="POST", url=url, body=body, json=payload))
        # One transport per search, closed after it; the TLS context is built once (loading the CA
        # store per request would cost more than the loopback exchange itself).
        transport = self._transport or httpx.AsyncHTTPTransport(verify=_tls())
        try:
            reply = await post(
                url, body, {"Content-Type": "application/json"}, label=_LABEL, timeout_s=self._timeout_s,
                transport=transport,
            )
        finally:
            if self._transport is None:
                await transport.aclose()
        try:
            data = parse_json(reply.body)
        except ValueError as exc:
            if 200 <= reply.status < 300:
                raise unprocessable(_LABEL, f"not JSON ({exc})") from exc
            data = None
        if not 200 <= reply.status < 300:
            raise _failure(reply.status, data)
        return map_result(data)


@functools.cache
def _tls() -> ssl.SSLContext:
    return ssl.create_default_context()


def _failure(status: int, data: object) -> WebError:
    error = data.get("error") if isinstance(data, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    detail = f": {' '.join(message.split())[:300]}" if isinstance(message, str) and message.strip() else ""
    if not isinstance(code, str) or not _CODE.fullmatch(code):
        code = WebErrorCode.PROVIDER_ERROR
    return WebError(code, f"{_LABEL} failed (HTTP {status}){detail}")


def _text(item: dict[str, Any], name: str, where: str) -> str | None:
    value = item.get(name)
    if value is not None and not isinstance(value, str):
        raise unprocessable(_LABEL, f"{where}.{name} is not a string")
    return value


def map_result(data: object) -> SearchResult:
    """The seam result the route sent, unchanged; a shape it does not have is unprocessable."""
    if not isinstance(data, dict):
        raise unprocessable(_LABEL, "expected a JSON object")
    items = data.get("sources")
    truncated = data.get("truncated", False)
    if not isinstance(items, list) or not isinstance(truncated, bool):
        raise unprocessable(_LABEL, "expected sources (a list) and truncated (a boolean)")
    sources: list[Source] = []
    for i, item in enumerate(items):
        where = f"sources[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("url"), str) or not item["url"]:
            raise unprocessable(_LABEL, f"{where} has no url")
        title, snippet, published_at = (_text(item, name, where) for name in _FIELDS)
        sources.append(Source(url=item["url"], title=title, snippet=snippet, published_at=published_at))
    return SearchResult(sources=tuple(sources), content=_text(data, "content", "result"), truncated=truncated)
