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

from .errors import ApiError, anthropic_envelope, envelope, render_json
from .messages import MessagesMode, messages_answer
from .pages import routes as page_routes
from .responses import responses_answer, responses_events
from .scripted import PATH as SCRIPTED_PATH
from .streaming import Event, messages_events, render_sse, wants_stream
from .tools import fetch_answer, search_answer
from .wire import MESSAGES_MODE_KEY, EmulatorState, Responder, Wire

__all__ = ["build_app"]

_ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def _json(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(render_json(value), status_code=status, media_type="application/json", headers=headers)


def _responder(
    route: str,
    answer: Callable[[bytes, MessagesMode | None], dict[str, Any]],
    events: Callable[[dict[str, Any]], list[Event]] | None = None,
) -> Responder:
    """JSON, or with ``events`` and ``"stream": true`` the same answer as server-sent events; a
    validation error is a plain JSON error either way, as upstream, in ``route``'s envelope."""

    def respond(body: bytes, mode: MessagesMode | None) -> Response:
        try:
            value = answer(body, mode)
        except ApiError as error:
            return Response(
                error.body(route), status_code=error.status, media_type="application/json", headers=error.headers
            )
        if events is not None and wants_stream(body):
            return Response(
                render_sse(events(value)), media_type="text/event-stream", headers={"cache-control": "no-cache"}
            )
        return _json(value)

    return respond


def _endpoint(respond: Responder) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        mode = request.scope.get(MESSAGES_MODE_KEY)
        response: Response = respond(await request.body(), mode if isinstance(mode, MessagesMode) else None)
        return response

    return endpoint


# Route name (see RouteTable.api_paths) -> its answer: the request body (and a fault's mode) -> JSON;
# routes given event builders answer ``"stream": true`` as server-sent events (streaming.py).
ANSWERS: dict[str, Responder] = {
    "search": _responder("search", lambda body, _mode: search_answer(body)),
    "fetch": _responder("fetch", lambda body, _mode: fetch_answer(body)),
    "messages": _responder("messages", messages_answer, messages_events),
    "responses": _responder("responses", responses_answer, responses_events),
}


async def _trap(request: Request) -> Response:
    # Parsable JSON shaped like an empty search, so a client that follows the redirect "succeeds"
    # and only the request log shows that it did.
    return _json({"results": [], "trap": request.path_params["token"]})


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if request.url.path.startswith("/anthropic/"):  # an Anthropic client reads the Anthropic envelope
        return _json(anthropic_envelope(exc.status_code, str(exc.detail)), exc.status_code, dict(exc.headers or {}))
    type_ = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
    return _json(envelope(str(exc.detail), type_), exc.status_code, dict(exc.headers or {}))


def build_app(state: EmulatorState) -> Starlette:
    routes = [Route(path, _endpoint(ANSWERS[name]), methods=["POST"]) for name, path in state.routes.api_paths()]
    routes.append(Route("/trap/{token}", _trap, methods=_ANY_METHOD))
    routes += page_routes()  # pages for fetchers under test (emulator/pages.py)
    routes.append(Route(SCRIPTED_PATH, state.scripted, methods=["POST"]))  # conformance search (emulator/scripted.py)
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Wire, state=state, answers=ANSWERS)],
        exception_handlers={HTTPException: _http_error},
    )
    # The emulator itself must never redirect: a client's redirect handling is under test.
    app.router.redirect_slashes = False
    return app
