"""The Starlette app: routes that turn request bytes into answers, wrapped by the wire layer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .errors import ApiError, envelope, render_json
from .messages import MessagesMode, messages_answer
from .pages import routes as page_routes
from .responses import responses_answer, responses_events
from .scripted import PATH as SCRIPTED_PATH
from .streaming import messages_events, streaming_endpoint
from .tools import fetch_answer, search_answer
from .wire import MESSAGES_MODE_KEY, EmulatorState, Wire

__all__ = ["build_app"]

_ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def _json(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(render_json(value), status_code=status, media_type="application/json", headers=headers)


def _endpoint(answer: Callable[[Request, bytes], dict[str, Any]]) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        body = await request.body()
        try:
            return _json(answer(request, body))
        except ApiError as error:
            return Response(
                error.body(), status_code=error.status, media_type="application/json", headers=error.headers
            )

    return endpoint


def _search(request: Request, body: bytes) -> dict[str, Any]:
    return search_answer(body)


def _responses(request: Request, body: bytes) -> dict[str, Any]:
    mode = request.scope.get(MESSAGES_MODE_KEY)
    return responses_answer(body, mode if isinstance(mode, MessagesMode) else None)


def _fetch(request: Request, body: bytes) -> dict[str, Any]:
    return fetch_answer(body)


def _messages(request: Request, body: bytes) -> dict[str, Any]:
    mode = request.scope.get(MESSAGES_MODE_KEY)
    return messages_answer(body, mode if isinstance(mode, MessagesMode) else None)


async def _trap(request: Request) -> Response:
    # Parsable JSON shaped like an empty search, so a client that follows the redirect "succeeds"
    # and only the request log shows that it did.
    return _json({"results": [], "trap": request.path_params["token"]})


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    type_ = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
    return _json(envelope(str(exc.detail), type_), exc.status_code, dict(exc.headers or {}))


def build_app(state: EmulatorState) -> Starlette:
    tools = state.routes.tools_prefix
    routes = [
        Route("/anthropic/v1/messages", streaming_endpoint(_messages, messages_events), methods=["POST"]),
        Route("/anthropic/messages", streaming_endpoint(_messages, messages_events), methods=["POST"]),
        Route("/v1/responses", streaming_endpoint(_responses, responses_events), methods=["POST"]),
        Route("/trap/{token}", _trap, methods=_ANY_METHOD),
        *page_routes(),  # pages for fetchers under test (emulator/pages.py)
        Route(SCRIPTED_PATH, state.scripted, methods=["POST"]),  # conformance search (emulator/scripted.py)
    ]
    if tools is not None:
        routes += [
            Route(f"{tools}/search", _endpoint(_search), methods=["POST"]),
            Route(f"{tools}/fetch", _endpoint(_fetch), methods=["POST"]),
        ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Wire, state=state)],
        exception_handlers={HTTPException: _http_error},
    )
    # The emulator itself must never redirect: a client's redirect handling is under test.
    app.router.redirect_slashes = False
    return app
