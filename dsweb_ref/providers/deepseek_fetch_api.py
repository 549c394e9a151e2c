"""``deepseek-fetch-api``: DeepSeek's dedicated Fetch API (``POST {tools base}/fetch``).

The service retrieves the page and returns Markdown; it reports neither the final
URL nor the target's status. So a success keeps the requested URL and reports
HTTP 200, meaning "the service retrieved the page", not that we saw the target
respond (seed 001). Every non-success status is a retrieval failure. Header
policy is the Search API's: only Authorization and Content-Type are added.
"""

from __future__ import annotations

from .._context import CallContext
from .._exceptions import WebError, WebErrorCode
from .._types import FetchBody, FetchRequest, FetchResult
from ._deepseek_http import SettingsBoundProvider, call_tools_api, unprocessable

__all__ = ["DeepSeekFetchApi"]

PROVIDER_ID = "deepseek-fetch-api"
_LABEL = "DeepSeek Fetch API"


class DeepSeekFetchApi(SettingsBoundProvider):
    """Fetch provider. ``settings`` is called exactly once per fetch; the credential is
    read from ``environ`` (default: the live ``os.environ``) under the snapshot's variable."""

    provider_id = PROVIDER_ID
    section = "deepseek_api"
    label = _LABEL

    async def fetch(self, request: FetchRequest, ctx: CallContext) -> FetchResult:
        snapshot = self._settings()
        if not isinstance(request.url, str) or not request.url:
            raise WebError(WebErrorCode.INVALID_URL, "url must be a non-empty string")
        data = await call_tools_api(
            self,
            snapshot,
            ctx,
            "fetch",
            {"url": request.url},
            statuses=_FETCH_STATUSES,
            other="could not retrieve the page",
            bad_text=(WebErrorCode.INVALID_URL, "url is not valid Unicode text"),
        )
        if not isinstance(data, dict):
            raise unprocessable(_LABEL, "expected a JSON object")
        content = data.get("content")
        if not isinstance(content, str):
            raise unprocessable(_LABEL, "content is not a string")
        # The unchanged shared result (seed 001): requested URL, 200, the Markdown as a text body; the
        # API's title is dropped (the shared result has no title field, and the Markdown carries the heading).
        return FetchResult(url=request.url, status_code=200, body=FetchBody("text", content), truncated=False)


# Statuses whose meaning is specific to the Fetch route (the guide: 403 = crawler policy, 404 = no usable content).
_FETCH_STATUSES = {
    400: ("rejected the URL", "it must be an http(s) URL with a host and no credentials"),
    403: ("refused the page under its crawler policy", "the site cannot be fetched through this service"),
    404: ("found no usable content", "the page is unavailable, blocked, or has no extractable text"),
    500: ("service error", "the page could not be retrieved; retry later"),
}


