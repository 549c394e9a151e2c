"""Errors raised by the web seam, its providers and the tools.

Every failure that crosses the seam is a ``WebError`` carrying one stable code
from the catalogue below. Callers branch on ``error.code``; the message is for
people and models. Codes are open strings (an implementation may add its own),
so consumers must tolerate codes they do not know.

    WebError
    ├── selection (raised by the seam at every call)
    │   ├── WEB_DUPLICATE_PROVIDER              id already registered for that kind
    │   ├── WEB_PROVIDER_CONFIGURED_MISSING     configured id is not registered
    │   ├── WEB_PROVIDER_CONFIGURED_UNAVAILABLE configured id is registered, available() is false
    │   ├── WEB_PROVIDER_UNAVAILABLE            nothing configured, no available provider
    │   └── WEB_PROVIDER_AMBIGUOUS              nothing configured, several available
    ├── provider
    │   ├── WEB_PROVIDER_ERROR                  HTTP/transport failure, bad body, redirect, strict mode
    │   ├── WEB_PROVIDER_CREDENTIAL_MISSING     no key or token resolved for this operation
    │   └── WEB_ABORTED                         cancelled by the caller (not the provider's own deadline)
    ├── fetch (local HTTP fetch provider)
    │   ├── WEB_INVALID_URL                     too long, unparseable, not http(s), ambiguous form
    │   ├── WEB_BLOCKED_URL                     userinfo, or a non-public address
    │   ├── WEB_REDIRECT_BLOCKED                hop limit or cross-origin rule
    │   ├── WEB_FETCH_TOO_LARGE                 declared Content-Length over the cap
    │   ├── WEB_FETCH_TIMEOUT                   the provider's own deadline fired
    │   └── WEB_UNSUPPORTED_CONTENT_TYPE        binary or unknown type, unknown charset
    └── added here (not in the upstream catalogue)
        ├── WEB_INVALID_ARGUMENTS               model-supplied tool arguments rejected; upstream
        │                                       leaves these uncoded, our standard wants a code
        └── WEB_CONFIG_INVALID                  a deployment setting is not acceptable, so a bad
                                                config file fails with a code, not a TypeError
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["WebError", "WebErrorCode"]


class WebErrorCode(StrEnum):
    DUPLICATE_PROVIDER = "WEB_DUPLICATE_PROVIDER"
    PROVIDER_CONFIGURED_MISSING = "WEB_PROVIDER_CONFIGURED_MISSING"
    PROVIDER_CONFIGURED_UNAVAILABLE = "WEB_PROVIDER_CONFIGURED_UNAVAILABLE"
    PROVIDER_UNAVAILABLE = "WEB_PROVIDER_UNAVAILABLE"
    PROVIDER_AMBIGUOUS = "WEB_PROVIDER_AMBIGUOUS"
    PROVIDER_ERROR = "WEB_PROVIDER_ERROR"
    PROVIDER_CREDENTIAL_MISSING = "WEB_PROVIDER_CREDENTIAL_MISSING"
    ABORTED = "WEB_ABORTED"
    INVALID_URL = "WEB_INVALID_URL"
    BLOCKED_URL = "WEB_BLOCKED_URL"
    REDIRECT_BLOCKED = "WEB_REDIRECT_BLOCKED"
    FETCH_TOO_LARGE = "WEB_FETCH_TOO_LARGE"
    FETCH_TIMEOUT = "WEB_FETCH_TIMEOUT"
    UNSUPPORTED_CONTENT_TYPE = "WEB_UNSUPPORTED_CONTENT_TYPE"
    INVALID_ARGUMENTS = "WEB_INVALID_ARGUMENTS"
    CONFIG_INVALID = "WEB_CONFIG_INVALID"


class WebError(Exception):
    """A web failure with a stable ``code``, a ``message`` and an optional ``cause``."""

    def __init__(self, code: str, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"WebError({self.code!r}, {self.message!r})"
