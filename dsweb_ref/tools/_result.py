"""What a tool execution hands back to the runtime."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .._exceptions import WebError, WebErrorCode

__all__ = ["ToolResult", "error_result", "visible"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def visible(text: str) -> str:
    """``text`` as a model may receive it: a lone surrogate (not Unicode, so it cannot be encoded
    as UTF-8) becomes U+FFFD. Provider strings are checked at the seam; this covers what the
    model itself sent and a tool echoes back (a URL or query in an error, a query heading)."""
    return _SURROGATE.sub("\ufffd", text)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """``text`` is what the model sees; ``value`` is the structured value (JSON-serialisable,
    validated by schemas/) or ``None`` on error; ``error_code`` keeps the WEB_* code for the caller."""

    text: str
    value: dict[str, Any] | None = None
    error_code: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", visible(self.text))  # every model-visible text encodes as UTF-8

    @property
    def is_error(self) -> bool:
        return self.error_code is not None

    def to_json(self) -> dict[str, Any]:
        if self.error_code is not None:
            return {"is_error": True, "text": self.text, "error": {"code": self.error_code}}
        return {"is_error": False, "text": self.text, "value": self.value}


def error_result(error: WebError, max_chars: int | None = None) -> ToolResult:
    """``Error: <message>``, cut to ``max_chars`` (ending in "…") so an error obeys the tool's output cap too."""
    text = f"Error: {error.message}"
    if max_chars is not None and len(text) > max_chars:
        text = text[: max(0, max_chars - 1)] + "…"
        text = text[:max_chars]
    return ToolResult(text=text, error_code=error.code or WebErrorCode.PROVIDER_ERROR)
