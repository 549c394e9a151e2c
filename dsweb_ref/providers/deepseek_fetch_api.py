"""``deepseek-fetch-api``: DeepSeek's dedicated Fetch API (``POST {tools base}/fetch``).

The service retrieves the page and returns Markdown; it reports neither the final
URL nor the target's status. So a success keeps the requested URL and reports
HTTP 200, meaning "the service retrieved the page", not that we saw the target
respond (seed 001). Every non-success status is a retrieval failure. Header
policy is the Search API's: only Authorization and Content-Type are added.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from .._context import CallContext, OutgoingRequest
from .._exceptions import WebError, WebErrorCode
from .._types import FetchBody, FetchRequest, FetchResult
from ..settings import Settings
from ._deepseek_http import (
    Reply,
    encode_json,
    error_detail,
    parse_json,
    post,
    resolve_credential,
    retry_after,
    usable_base_url,
)

__all__ = ["DeepSeekFetchApi"]

PROVIDER_ID = "deepseek-fetch-api"
_LABEL = "DeepSeek Fetch API"


class DeepSeekFetchApi:
    """Fetch provider. ``settings`` is called exactly once per fetch; the credential is
    read from ``environ`` (default: the live ``os.environ``) under the snapshot's variable."""

    def __init__(
        self,
        settings: Callable[[], Settings] = Settings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._settings = settings
        self._transport = transport
        self._environ = environ

    @property
    def id(self) -> str:
        return PROVIDER_ID

    def available(self) -> bool:
        return usable_base_url(self._settings().deepseek_api.base_url) is not None

    async def fetch(self, request: FetchRequest, ctx: CallContext) -> FetchResult:
        snapshot = self._settings()
        conf = snapshot.deepseek_api
        base = usable_base_url(conf.base_url)
        if base is None:
            raise WebError(WebErrorCode.CONFIG_INVALID, "deepseek_api.base_url is blank or not an http(s) URL")
        if not isinstance(request.url, str) or not request.url:
            raise WebError(WebErrorCode.INVALID_URL, "url must be a non-empty string")
        key = resolve_credential(snapshot.credentials, os.environ if self._environ is None else self._environ, _LABEL)
        url = f"{base}/fetch"
        payload: dict[str, Any] = {"url": request.url}
        try:
            body = encode_json(payload)
        except UnicodeEncodeError as exc:
            raise WebError(WebErrorCode.INVALID_URL, "url is not valid Unicode text", cause=exc) from exc
        ctx.record(OutgoingRequest(provider=PROVIDER_ID, method="POST", url=url, body=body, json=payload))
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        reply = await post(url, body, headers, label=_LABEL, timeout_s=conf.timeout_s, transport=self._transport)
        if not 200 <= reply.status < 300:
            raise _status_error(reply, snapshot.credentials.env_name)
        try:
            data = parse_json(reply.body)
        except ValueError as exc:
            raise _unprocessable(f"not JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise _unprocessable("expected a JSON object")
        content = data.get("content")
        if not isinstance(content, str):
            raise _unprocessable("content is not a string")
        title = data.get("title")
        return FetchResult(
            url=request.url,
            status_code=200,
            body=FetchBody("markdown", content),
            truncated=False,
            title=title if isinstance(title, str) and title.strip() else None,
        )


def _status_error(reply: Reply, credential_env: str) -> WebError:
    status = reply.status
    if status == 400:
        lead, hint = "rejected the URL", "it must be an http(s) URL with a host and no credentials"
    elif status == 401:
        lead, hint = "authentication failed", f'check the credential in "{credential_env}"'
    elif status == 402:
        lead, hint = "reports insufficient balance", "top up the DeepSeek account before retrying"
    elif status == 403:
        lead, hint = "refused the page under its crawler policy", "the site cannot be fetched through this service"
    elif status == 404:
        lead, hint = "found no usable content", "the page is unavailable, blocked, or has no extractable text"
    elif status == 429:
        lead, hint = "rate limit reached", retry_after(reply.headers) or "wait before retrying"
    elif status >= 500:
        lead, hint = "service error", "the page could not be retrieved; retry later"
    else:
        lead, hint = "could not retrieve the page", ""
    detail = error_detail(reply.body)
    text = f"{_LABEL} {lead} (HTTP {status})" + (f": {detail}" if detail else "") + (f"; {hint}" if hint else "")
    return WebError(WebErrorCode.PROVIDER_ERROR, text)


def _unprocessable(why: str) -> WebError:
    return WebError(WebErrorCode.PROVIDER_ERROR, f"{_LABEL} returned an unprocessable response body: {why}")
