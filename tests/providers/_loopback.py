"""A tiny real HTTP server on 127.0.0.1 for tests that must cross a socket.

Routes map a path to a canned reply or to a ``Hold`` that keeps the request open
until the client goes away (cancellation tests). Every request is recorded, so a
test can assert that some path was never contacted.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes

    @property
    def header_names(self) -> set[str]:
        return {name.lower() for name, _ in self.headers}

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hold:
    """Reads the request, then waits (up to 30 s) for the client to close the connection."""

    received: threading.Event = field(default_factory=threading.Event)
    closed: threading.Event = field(default_factory=threading.Event)


class Loopback:
    def __init__(self) -> None:
        self.routes: dict[str, Reply | Hold] = {}
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str) -> str:
        return self.base + path

    def paths(self) -> list[str]:
        with self._lock:
            return [s.path for s in self.seen]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        loop = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return None

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with loop._lock:
                    loop.seen.append(Seen(self.command, self.path, list(self.headers.items()), body))
                route = loop.routes.get(self.path, Reply(404, b'{"error":{"message":"no route"}}'))
                if isinstance(route, Hold):
                    route.received.set()
                    self._wait_for_close()
                    route.closed.set()
                    self.close_connection = True
                    return
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                self.wfile.write(route.body)

            def _wait_for_close(self) -> None:
                conn: socket.socket = self.connection
                conn.settimeout(30)
                try:
                    while conn.recv(1024):
                        pass
                except OSError:
                    pass

            do_GET = _serve
            do_POST = _serve

        return Handler

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


@contextmanager
def running() -> Iterator[Loopback]:
    server = Loopback()
    server.start()
    try:
        yield server
    finally:
        server.stop()
