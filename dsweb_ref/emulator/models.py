"""Which model names the emulator's Messages route accepts (the DeepSeek Anthropic API's rules).

DeepSeek documents ``deepseek-flash`` and ``deepseek-v4-pro`` (and the reference client sends
``deepseek-v4-flash``); ``claude-opus*`` maps to the pro model and any other ``claude*`` name to
the flash one; any other name, ``deepseek-*`` look-alikes included, is a 400.
"""

from __future__ import annotations

from typing import Any

from .errors import ApiError

__all__ = ["KNOWN_MODELS", "check_model", "known_model"]

KNOWN_MODELS = frozenset({"deepseek-flash", "deepseek-v4-flash", "deepseek-v4-pro"})


def known_model(name: str) -> bool:
    return name in KNOWN_MODELS or name.startswith("claude")


def check_model(request: dict[str, Any]) -> None:
    """400 for a missing or unknown ``model`` (the message DeepSeek sends for an unknown one)."""
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "model: field required", param="model")
    if not known_model(model):
        raise ApiError(400, "Model Not Exist", param="model")
