"""Error bodies per route, and JSON rendering shared by every route.

- ``/anthropic/...`` (route ``messages``): the Anthropic envelope
  ``{"type": "error", "error": {"type", "message"}}``, with Anthropic's error type for the status,
  so an Anthropic client parses the error it was built for;
- ``/v1/responses`` and any other route: the OpenAI-style envelope
  ``{"error": {"message", "type", "param", "code"}}``, which is also what the Search and Fetch
  APIs (``/v1/tools/...``) are documented with here (README "Upstream wire facts").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

__all__ = ["ApiError", "anthropic_envelope", "default_error", "envelope", "render_json"]

# Messages and types for statuses a fault may ask for. 401/402/429/503 follow wording reported for
# the platform; the rest are the emulator's own plausible choices.
_DEFAULTS: dict[int, tuple[str, str, str | None]] = {
    400: ("Invalid request body", "invalid_request_error", "invalid_request_error"),
    401: ("Authentication Fails, Your api key: **** is invalid", "authentication_error", "invalid_request_error"),
    402: ("Insufficient Balance", "unknown_error", "invalid_request_error"),
    403: ("Forbidden", "permission_error", None),
    404: ("Not Found", "not_found_error", None),
    408: ("Request Timeout", "timeout_error", None),
    422: ("Invalid Parameters", "invalid_request_error", "invalid_request_error"),
    429: ("Rate Limit Reached", "rate_limit_error", None),
    500: ("Internal Server Error", "server_error", None),
    502: ("Bad Gateway", "server_error", None),
    503: ("Server Overloaded", "server_error", None),
    504: ("Gateway Timeout", "server_error", None),
}


# Anthropic's error type per status (its documented set); other 5xx are api_error.
_ANTHROPIC_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}
ANTHROPIC_ROUTES = frozenset({"messages"})


def render_json(value: Any) -> bytes:
    """Compact UTF-8 JSON; key order is the dict's, so equal inputs give equal bytes."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def envelope(message: str, type_: str, *, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def anthropic_envelope(status: int, message: str) -> dict[str, Any]:
    type_ = _ANTHROPIC_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": type_, "message": message}}


class ApiError(Exception):
    """An error answer: raised by request handlers, turned into a response by the app."""

    def __init__(
        self,
        status: int,
        message: str,
        type_: str = "invalid_request_error",
        *,
        param: str | None = None,
        code: str | None = "invalid_request_error",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type_
        self.param = param
        self.code = code
        self.headers = dict(headers or {})

    def body(self, route: str | None = None) -> bytes:
        """The error as ``route`` answers it (see the module docstring)."""
        if route in ANTHROPIC_ROUTES:
            return render_json(anthropic_envelope(self.status, self.message))
        return render_json(envelope(self.message, self.type, param=self.param, code=self.code))


def default_error(status: int, message: str | None = None, headers: Mapping[str, str] | None = None) -> ApiError:
    """A realistic error for ``status``, as the Status fault sends it."""
    default_message, type_, code = _DEFAULTS.get(status, (_phrase(status), "api_error", None))
    return ApiError(status, message or default_message, type_, code=code, headers=headers)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return f"HTTP {status}"
