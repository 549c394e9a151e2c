"""The call context a tool execution hands to providers.

It carries what a provider may need from the conversation without widening the
model-facing schema or the single-query request: the initiating conversation's
latest human prompt (the Search API derives ``ori_question`` from it) and a hook
that records each outgoing request body before it is dispatched. Cancellation
is plain asyncio cancellation and needs no field here.

``localization`` overrides the deployment's Search API localization for one call:
None keeps the setting; otherwise it must be an IPv4 or IPv6 address literal
(the API's localization is an IP address, never a guessed place or language).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CallContext", "OutgoingRequest", "RequestRecorder"]


@dataclass(frozen=True, slots=True)
class OutgoingRequest:
    """What a provider is about to send. Never holds headers or credentials."""

    provider: str
    method: str
    url: str
    body: bytes
    json: Mapping[str, Any] | None = None


RequestRecorder = Callable[[OutgoingRequest], None]


@dataclass(frozen=True, slots=True)
class CallContext:
    latest_prompt: str | None = None
    record_request: RequestRecorder | None = None
    localization: str | None = None

    def record(self, request: OutgoingRequest) -> None:
        """Hand ``request`` to the recorder. A recorder failure propagates, so the
        provider must call this before dispatch and must not send if it raises."""
        if self.record_request is not None:
            self.record_request(request)
