"""Real local servers for the fetch tests: plain HTTP, TLS, and listeners that count connections.

Everything binds to loopback with an ephemeral port and runs in daemon threads.
Handlers that must wait do so on ``threading.Event``s the test controls, never
on sleeps, so ordering is proven rather than hoped for.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from dsweb_ref.netguard import AddressPolicy

# The only exception the tests make to the strict policy: the loopback test servers.
LOOPBACK_ONLY = AddressPolicy.allowing("127.0.0.1/32")
WAIT = 10.0  # generous upper bound for events; a passing test never waits this long


@dataclass(frozen=True)
class Seen:
    path: str
    headers: dict[str, str]


Route = Callable[["Handler"], None]


class Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.0"  # one request per connection: each hop dials anew

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()
        super().setup()

    def do_GET(self) -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0]
        owner.record(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}))
        route = owner.routes.get(path)
        if route is None:
            reply(self, 404, b"no route", content_type="text/plain")
        else:
            route(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def reply(
    h: BaseHTTPRequestHandler,
    status: int = 200,
    body: bytes = b"",
    *,
    content_type: str | None = "text/plain; charset=utf-8",
    headers: Mapping[str, str] | None = None,
    length: bool = True,
) -> None:
    h.send_response(status)
    if content_type is not None:
        h.send_header("Content-Type", content_type)
    if length:
        h.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        h.send_header(name, value)
    h.end_headers()
    if body:
        h.wfile.write(body)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: LocalServer, host: str, tls: ssl.SSLContext | None) -> None:
        self.owner = owner
        self.tls = tls
        super().__init__((host, 0), Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, addr = super().get_request()
        self.owner.connections += 1
        if self.tls is not None:
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # client aborts (timeouts, failed TLS) are expected in these tests


@dataclass
class LocalServer:
    """An HTTP(S) server on loopback. ``routes`` maps a path to a handler."""

    host: str = "127.0.0.1"
    tls: ssl.SSLContext | None = None
    routes: dict[str, Route] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    sni: list[str | None] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        if self.tls is not None:
            self.tls.sni_callback = self._on_sni
        self._server = _HTTPServer(self, self.host, self.tls)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self._thread.start()

    def _on_sni(self, _sock: Any, name: str | None, _ctx: Any) -> None:
        with self._lock:
            self.sni.append(name)

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)

    def url(self, path: str = "/", host: str | None = None) -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{host or self.host}:{self.port}{path}"

    def paths(self) -> list[str]:
        with self._lock:
            return [s.path for s in self.seen]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Listener:
    """A socket that listens but never accepts: the kernel still completes the
    handshake and queues the connection, so ``connections()`` counts every
    connect that reached it without ever answering."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((host, port))
        self.sock.listen(64)
        self.sock.setblocking(False)
        self.host = host
        self.port: int = self.sock.getsockname()[1]
        self._count = 0

    def connections(self) -> int:
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return self._count
            conn.close()
            self._count += 1

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FakeDNS:
    """An injectable resolver. Each entry is a list of answers, or a function of
    the lookup number (1-based) for answers that change between lookups."""

    def __init__(self, answers: Mapping[str, list[str] | Callable[[int], list[str]]]) -> None:
        self.answers = dict(answers)
        self.calls: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.calls.append(host)
        entry = self.answers.get(host)
        if entry is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if callable(entry):
            return entry(self.calls.count(host))
        return list(entry)
