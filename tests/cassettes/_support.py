"""Helpers shared by the cassette tests."""

from __future__ import annotations

from typing import Any

from dsweb_ref import WebError
from dsweb_ref.tools import ToolResult


def outcome_json(outcome: object) -> dict[str, Any]:
    """A JSON form of a probe outcome: a result's value, a tool result, or a coded error."""
    if isinstance(outcome, WebError):
        return {"error": {"code": str(outcome.code), "message": outcome.message}}
    if isinstance(outcome, ToolResult):
        return {"tool": {"text": outcome.text, "value": outcome.value, "error_code": outcome.error_code}}
    to_json = getattr(outcome, "to_json", None)
    assert callable(to_json), f"unexpected outcome {outcome!r}"
    value: dict[str, Any] = to_json()
    return {"result": value}
