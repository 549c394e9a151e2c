"""What the standalone search backends (seed 003) share: the credential, one recorded POST that
never follows a redirect, the error mapping, and reading counters out of an untrusted body.

Built on the public helpers of ``_deepseek_http`` (one deadline over the whole exchange, bounded
body, no redirects, credential scrubbing); the wire shapes stay in each backend module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from .._context import CallContext, OutgoingRequest
from .._exceptions import WebError, WebErrorCode
from ..settings import CredentialSettings
from ._deepseek_http import encode_json, error_detail, parse_json, post, resolve_credential, usable_base_url
from ._sse import KeepPartial, parse_events

__all__ = ["StandaloneEndpoint", "Streamed", "count", "mapping", "unprocessable"]


def unprocessable(label: str, why: str) -> WebError:
    return WebError(WebErrorCode.PROVIDER_ERROR, f"{label} returned an unprocessable response body: {why}")


def count(value: object) -> int:
    """A non-negative integer counter from an untrusted body; anything else counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def mapping(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (for optional parts such as usage)."""
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class Streamed:
    """The complete events of a streamed answer, and whether the connection broke before its end."""

    events: list[dict[str, Any]]
    cut: bool


class StandaloneEndpoint:
    """One account's endpoint: the exact request URL, the model and the environment variable
    holding its key (read per search). ``stream=True`` asks for server-sent events (``"stream":
    true``); the answer is read from the events, and a stream cut after some events still yields
    what they said (usage included).

    A fresh HTTP client per search (inside ``post``), so concurrent searches share nothing."""

    provider_id: str
    label: str

    def __init__(
        self,
        url: str,
        model: str,
        api_key_env: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        environ: Mapping[str, str] | None = None,
        stream: bool = False,
    ) -> None:
        self.url = url
        self.model = model
        self.api_key_env = api_key_env
        self.stream = stream
        self._transport = transport
        self._environ = environ

    @property
    def id(self) -> str:
        return self.provider_id

    def _key(self) -> str:
        environ = os.environ if self._environ is None else self._environ
        return resolve_credential(CredentialSettings(api_key_env=self.api_key_env), environ, self.label)

    def _url(self) -> str:
        url = usable_base_url(self.url)
        if url is None:
            raise WebError(WebErrorCode.CONFIG_INVALID, f"{self.label} URL is blank or not an http(s) URL")
        return url

    async def _exchange(
        self, payload: dict[str, Any], headers: dict[str, str], key: str, ctx: CallContext, timeout_s: float
    ) -> dict[str, Any] | Streamed:
        """The JSON answer, or with ``stream`` the events of an event-stream answer."""
        url = self._url()
        if self.stream:
            payload = {**payload, "stream": True}
            headers = {**headers, "accept": "text/event-stream"}
        try:
            body = encode_json(payload)
        except UnicodeEncodeError as exc:
            raise WebError(WebErrorCode.INVALID_ARGUMENTS, "query is not valid Unicode text", cause=exc) from exc
        # Recorded before dispatch; a recorder failure propagates and nothing is sent.
        ctx.record(OutgoingRequest(provider=self.provider_id, method="POST", url=url, body=body, json=payload))
        partial = KeepPartial(self._transport) if self.stream else None
        try:
            reply = await post(
                url, body, headers, label=self.label, timeout_s=timeout_s, transport=partial or self._transport,
                secrets=(key,),
            )
        finally:
            if partial is not None:
                await partial.aclose()
        if partial is not None and 200 <= reply.status < 300 and _is_event_stream(reply.headers):
            try:
                return Streamed(parse_events(reply.body), partial.cut)
            except ValueError as exc:
                raise unprocessable(self.label, f"unreadable event stream ({exc})") from exc
        if partial is not None and partial.cut:
            raise WebError(WebErrorCode.PROVIDER_ERROR, f"{self.label} response was cut off")
        if not 200 <= reply.status < 300:
            detail = error_detail(reply.body, (key,))
            suffix = f": {detail}" if detail else ""
            raise WebError(WebErrorCode.PROVIDER_ERROR, f"{self.label} error (HTTP {reply.status}){suffix}")
        try:
            data = parse_json(reply.body)
        except ValueError as exc:
            raise unprocessable(self.label, f"not JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise unprocessable(self.label, "expected a JSON object")
        return data


def _is_event_stream(headers: httpx.Headers) -> bool:
    kind: str = headers.get("content-type", "")
    return kind.split(";")[0].strip().lower() == "text/event-stream"
