"""The wire layer: an ASGI middleware that sees every request before the routes do.

It reads and logs the request, checks credentials, applies the scripted fault, runs the route,
and then sends the route's answer itself, so that faults can delay, slice or cut it. A task
listens for ``http.disconnect`` for the whole exchange, which is how a client that gives up on a
held or slow request shows up in the log as ``disconnected``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from .auth import AuthResult, Credentials, Scrubber, authenticate, mask_header
from .errors import ApiError, default_error
from .faults import (
    AsAnswer,
    CutBody,
    Delay,
    Fault,
    FaultQueue,
    Flush,
    Hold,
    HugeSummary,
    Malformed,
    NoSources,
    Pad,
    ProseOnly,
    RateLimited,
    Redirect,
    SlowBody,
    Status,
    ToolError,
    describe,
)
from .gate import wait_first
from .log import RequestLog
from .messages import MessagesMode
from .retold import tell
from .scripted import ScriptedStore
from .streaming import wants_stream

__all__ = ["MESSAGES_MODE_KEY", "EmulatorState", "RouteTable", "Wire"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MESSAGES_MODE_KEY = "dsweb.messages_mode"  # scope key through which a fault reaches the messages route
MAX_BODY = 4 * 1024 * 1024
API_ROUTES = ("search", "fetch", "messages", "responses")
REMEMBERED_CREDENTIALS = 32


@dataclass(frozen=True, slots=True)
class RouteTable:
    """Where each API route lives. A new API route is one line in :meth:`api_paths`, its name in
    :data:`API_ROUTES` (credentials and faults apply) and its answer in ``app.ANSWERS``."""

    tools_prefix: str | None = "/v1/tools"  # None: no tools routes, like a Messages-only gateway
    # Other deployments' complete bases, served beside tools_prefix (never without it): one emulator
    # can then tell a client that uses the base it is given from one that appends a fixed path.
    other_tools_prefixes: tuple[str, ...] = ()
    _names: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_names", {path: name for name, path in self.api_paths()})

    def api_paths(self) -> list[tuple[str, str]]:
        """(route name, path) of every API route (all POST)."""
        paths = [
            ("messages", "/anthropic/v1/messages"),
            ("messages", "/anthropic/messages"),
            ("responses", "/v1/responses"),
        ]
        for prefix in self.tools_prefixes:
            paths += [("search", f"{prefix}/search"), ("fetch", f"{prefix}/fetch")]
        return paths

    @property
    def tools_prefixes(self) -> tuple[str, ...]:
        """Every prefix the Search/Fetch routes live under, ``tools_prefix`` first (none without it)."""
        if self.tools_prefix is None:
            return ()
        return tuple(dict.fromkeys((self.tools_prefix, *self.other_tools_prefixes)))

    def name_for(self, path: str) -> str | None:
        name = self._names.get(path)
        if name is None and path.startswith("/trap/"):
            return "trap"
        if name is None and path.startswith("/scripted/"):
            return "scripted"
        return name


@dataclass(slots=True)
class EmulatorState:
    """Everything the app shares with the Emulator object in the test thread."""

    credentials: Credentials
    routes: RouteTable
    faults: FaultQueue = field(default_factory=FaultQueue)
    log: RequestLog = field(default_factory=RequestLog)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)  # set on the server loop at stop()
    base_url: str = ""
    scripted: ScriptedStore = field(default_factory=ScriptedStore)  # the conformance search scenarios
    # Built once. Besides the configured credentials it remembers the most recent credential values
    # presented, valid or not (a "wrong" key may be someone's real one), and scrubs them from later
    # records too; bounded, so a stream of distinct wrong keys costs neither memory nor speed.
    # Touched only on the server loop.
    scrubber: Scrubber = field(init=False)

    def __post_init__(self) -> None:
        secrets = [*self.credentials.api_keys, *self.credentials.account_tokens]
        self.scrubber = Scrubber(secrets, remember_limit=REMEMBERED_CREDENTIALS)

    @property
    def presented(self) -> tuple[str, ...]:
        """The presented credential values currently remembered (at most REMEMBERED_CREDENTIALS)."""
        return self.scrubber.remembered


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


@dataclass(slots=True)
class Exchange:
    seq: int
    scrub: Scrubber
    route: str | None
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)
    completing: bool = False  # set just before the last body chunk: a later disconnect is normal close
    oversized: bool = False  # the body exceeded MAX_BODY; only its start was kept


def _answer(status: int, body: bytes, content_type: str = "application/json", **extra: str) -> Answer:
    headers = [(b"content-type", content_type.encode("latin-1")), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
    return Answer(status, headers, body)


def _padded(send: Send, size: int) -> Send:
    """``send`` with ``size`` spaces after the last body chunk, its Content-Length grown to match."""

    async def padded(message: Message) -> None:
        if message["type"] == "http.response.start":
            grown = [(k, str(int(v) + size).encode() if k.lower() == b"content-length" else v)
                     for k, v in message.get("headers", [])]
            message = {**message, "headers": grown}
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            message = {**message, "body": message.get("body", b"") + b" " * size}
        await send(message)

    return padded


def _error_answer(error: ApiError, route: str | None) -> Answer:
    body = error.body(route)  # each route answers in its own error envelope
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in error.headers.items()]
    return Answer(error.status, headers, body)


def _split(body: bytes, size: int, pieces: int | None) -> list[bytes]:
    """``body`` in ``size``-byte pieces, or with ``pieces`` in that many of equal size (within a byte; fewer only
    when the body has fewer bytes); never no piece at all."""
    if pieces is None:
        return [body[i : i + size] for i in range(0, len(body), size)] or [b""]
    count = max(1, min(pieces, len(body)))
    return [body[len(body) * k // count : len(body) * (k + 1) // count] for k in range(count)]


def _parse_json(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested too deeply
        return None


# An API route's answer: request body and fault mode -> JSON value (or ApiError), as a response.
Responder = Callable[[bytes, MessagesMode | None], Any]


class Wire:
    """``answers`` (route name -> responder) lets a POST to an API route skip Starlette's routing;
    anything else (other methods, the trap, unknown paths) runs through the wrapped app."""

    def __init__(self, app: ASGIApp, state: EmulatorState, answers: Mapping[str, Responder] | None = None) -> None:
        self.app = app
        self.state = state
        self.answers = dict(answers or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = self.state
        route = state.routes.name_for(scope["path"])
        headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"]]
        auth = None
        if route in API_ROUTES:
            first: dict[str, str] = {}
            for name, value in headers:
                first.setdefault(name, value)
            auth = authenticate(first, state.credentials, accept_x_api_key=route == "messages")
            if auth.presented:
                state.scrubber.remember(auth.presented)
        scrub = state.scrubber
        held = state.credentials  # one set for the whole request, as accept_* swaps it whole
        url = f"{scope['path']}?{scope.get('query_string', b'').decode('latin-1')}"
        carried = tuple((where, kind) for where, value in (*headers, ("url", url)) for kind in held.found_in(value))
        client = scope.get("client")
        seq = state.log.begin(
            method=scope["method"],
            path=scrub.text(scope["path"]),
            query=scrub.text(scope.get("query_string", b"").decode("latin-1")),
            route=route,
            client=(client[0], client[1]) if client else None,
            headers=tuple((name, scrub.text(mask_header(name, value))) for name, value in headers),
            credential=auth.kind if auth else "not_required",
            credential_source=auth.source if auth else None,
            carried=carried,
        )
        exchange = Exchange(seq, scrub, route)
        try:
            body = await self._read_body(receive, exchange)
            if body is None:
                return
            carried += tuple(("body", kind) for kind in held.found_in(body.decode("utf-8", "replace")))
            state.log.update(seq, body=scrub.bytes(body), carried=carried)
            watcher = asyncio.ensure_future(self._watch_disconnect(receive, exchange))
            try:
                await self._serve(scope, body, route, auth, exchange, send)
            finally:
                watcher.cancel()
        finally:
            state.log.finish(seq, disconnected=exchange.disconnected.is_set())

    async def _read_body(self, receive: Receive, exchange: Exchange) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                exchange.disconnected.set()
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size <= MAX_BODY:
                chunks.append(chunk)
            else:
                exchange.oversized = True
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _watch_disconnect(self, receive: Receive, exchange: Exchange) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                if not exchange.completing:
                    exchange.disconnected.set()
                return

    async def _serve(
        self, scope: Scope, body: bytes, route: str | None, auth: AuthResult | None, exchange: Exchange, send: Send
    ) -> None:
        if exchange.oversized:
            await self._send_error(send, exchange, ApiError(413, "request body too large"))
            return
        if auth is not None and not auth.ok:
            await self._send_error(send, exchange, auth.error())
            return
        fault = self.state.faults.take(route, _parse_json(body)) if route in API_ROUTES else None
        if fault is not None:
            self.state.log.update(exchange.seq, fault=describe(fault))
        await self._apply(fault, scope, body, exchange, send)

    async def _apply(self, fault: Fault | None, scope: Scope, body: bytes, exchange: Exchange, send: Send) -> None:
        aborts = {"disconnected": exchange.disconnected, "stopping": self.state.stopping}
        match fault:
            case Delay(seconds, then):
                if await wait_first(aborts, seconds) is None:
                    await self._apply(then, scope, body, exchange, send)
                elif not exchange.disconnected.is_set():
                    await self._send_error(send, exchange, default_error(503, "emulator is stopping"))
            case Hold(gate, timeout, then):
                outcome = await gate.park(aborts, timeout)
                if outcome == "released":
                    await self._apply(then, scope, body, exchange, send)
                elif outcome == "timeout":
                    message = f"emulator hold at gate {gate.name!r} timed out after {timeout}s"
                    await self._send_error(send, exchange, default_error(504, message))
                elif not exchange.disconnected.is_set():
                    await self._send_error(send, exchange, default_error(503, "emulator is stopping"))
            case Pad(size, then):
                await self._apply(then, scope, body, exchange, _padded(send, size))
            case Flush(burst, rank, then, timeout):
                messages: list[Message] = []

                async def held_back(message: Message) -> None:
                    messages.append(message)

                await self._apply(then, scope, body, exchange, held_back)
                exchange.completing = False  # not yet: the answer is still held back

                async def finishing(message: Message) -> None:
                    if message["type"] == "http.response.body" and not message.get("more_body", False):
                        exchange.completing = True
                    await send(message)

                await burst.join(rank, messages, finishing, timeout)
            case Status(body=bytes() as raw):
                await self._send(send, exchange, _answer(fault.status, raw, fault.content_type, **fault.headers))
            case Status():
                error = default_error(fault.status, fault.message, fault.headers)
                await self._send_error(send, exchange, error)
            case RateLimited(retry_after):
                extra = {} if retry_after is None else {"Retry-After": str(retry_after)}
                await self._send_error(send, exchange, default_error(429, None, extra))
            case Malformed(raw, status, content_type):
                await self._send(send, exchange, _answer(status, raw, content_type))
            case Redirect(status, location):
                target = location or f"{self.state.base_url}/trap/{exchange.seq}"
                await self._send(send, exchange, _answer(status, b"", "text/plain", Location=target))
            case SlowBody(chunk_size, delay, pieces):
                answer = await self._run_route(scope, body, exchange, None)
                await self._send_slowly(send, exchange, answer, _split(answer.body, chunk_size, pieces), delay)
            case CutBody(keep):
                answer = await self._run_route(scope, body, exchange, None)
                await self._send_cut(send, exchange, answer, len(answer.body) // 2 if keep is None else keep)
            case ProseOnly(text):
                answer = await self._run_route(scope, body, exchange, MessagesMode(prose_only=text))
                await self._send(send, exchange, answer)
            case ToolError(error_code):
                answer = await self._run_route(scope, body, exchange, MessagesMode(tool_error=error_code))
                await self._send(send, exchange, answer)
            case NoSources():
                answer = await self._run_route(scope, body, exchange, MessagesMode(no_sources=True))
                await self._send(send, exchange, answer)
            case HugeSummary(chars):
                answer = await self._run_route(scope, body, exchange, MessagesMode(summary_chars=chars))
                await self._send(send, exchange, answer)
            case AsAnswer():
                await self._tell(send, exchange, fault, wants_stream(body))
            case _:
                await self._send(send, exchange, await self._run_route(scope, body, exchange, None))

    async def _run_route(self, scope: Scope, body: bytes, exchange: Exchange, mode: MessagesMode | None) -> Answer:
        """Run the route and capture its answer instead of sending it."""
        direct = self.answers.get(exchange.route or "") if scope["method"] == "POST" else None
        if direct is not None:
            try:
                response = direct(body, mode)
            except Exception as exc:  # an emulator bug; answer it plainly instead of hanging the client
                return _error_answer(
                    ApiError(500, f"emulator internal error: {type(exc).__name__}", "server_error"), exchange.route
                )
            return Answer(response.status_code, list(response.raw_headers), bytes(response.body))
        delivered = False
        start: Message = {}
        chunks: list[bytes] = []

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await exchange.disconnected.wait()
            return {"type": "http.disconnect"}

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        inner_scope = dict(scope)
        inner_scope[MESSAGES_MODE_KEY] = mode
        try:
            await self.app(inner_scope, replay, capture)
        except Exception as exc:  # an emulator bug; answer it plainly instead of hanging the client
            error = ApiError(500, f"emulator internal error: {type(exc).__name__}", "server_error")
            return _error_answer(error, exchange.route)
        return Answer(int(start.get("status", 500)), list(start.get("headers", [])), b"".join(chunks))

    async def _tell(self, send: Send, exchange: Exchange, fault: AsAnswer, stream: bool) -> None:
        """The scripted answer, plain or streamed (retold.py)."""
        try:
            told = tell(exchange.route or "", fault, stream)
        except Exception as exc:  # a body the route's events cannot tell: a test bug, answered plainly
            told = ApiError(500, f"emulator internal error: {type(exc).__name__}", "server_error")
        if isinstance(told, ApiError):
            await self._send_error(send, exchange, told)
        elif told.keep is None:
            await self._send(send, exchange, _answer(200, told.body, told.content_type))
        else:
            await self._send_cut(send, exchange, _answer(200, told.body, told.content_type), told.keep)

    def _record(self, exchange: Exchange, answer: Answer) -> None:
        # An answer may echo request text, such as a key pasted into a prompt.
        body = exchange.scrub.bytes(answer.body)
        self.state.log.update(exchange.seq, status=answer.status, response_body=body)

    async def _send_error(self, send: Send, exchange: Exchange, error: ApiError) -> None:
        await self._send(send, exchange, _error_answer(error, exchange.route))

    async def _send(self, send: Send, exchange: Exchange, answer: Answer) -> None:
        self._record(exchange, answer)
        await send({"type": "http.response.start", "status": answer.status, "headers": answer.headers})
        exchange.completing = True
        await send({"type": "http.response.body", "body": answer.body, "more_body": False})

    async def _send_slowly(
        self, send: Send, exchange: Exchange, answer: Answer, pieces: list[bytes], delay: float
    ) -> None:
        self._record(exchange, answer)
        await send({"type": "http.response.start", "status": answer.status, "headers": answer.headers})
        aborts = {"disconnected": exchange.disconnected, "stopping": self.state.stopping}
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            if last:
                exchange.completing = True
            await send({"type": "http.response.body", "body": piece, "more_body": not last})
            # Returning early leaves the response incomplete; the server then closes the connection.
            if not last and await wait_first(aborts, delay) is not None:
                return

    async def _send_cut(self, send: Send, exchange: Exchange, answer: Answer, keep: int) -> None:
        self._record(exchange, answer)
        await send({"type": "http.response.start", "status": answer.status, "headers": answer.headers})
        await send(
            {"type": "http.response.body", "body": answer.body[: min(keep, len(answer.body))], "more_body": True}
        )
        # Returning without the final chunk makes the server close the connection mid-body.
