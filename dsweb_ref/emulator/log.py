"""What the emulator saw on the wire, for tests and the certification suite to read.

The server thread writes, test threads read; one condition variable guards everything and lets
readers wait for "n requests", "idle" or "all connections closed" without sleeping. Records hold
masked headers and scrubbed bodies only: no secret value is ever stored.

Writing is cheap: a request in flight is one mutable draft updated in place, frozen into its
:class:`RequestRecord` once when it finishes (or when a reader asks for it earlier); the logged
body is parsed as JSON at that moment, not on every update.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["RequestLog", "RequestRecord"]


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as received. Times are ``time.monotonic()`` seconds in the emulator's process."""

    seq: int
    method: str
    path: str
    query: str
    route: str | None  # "search" | "fetch" | "messages" | "trap" | None (unknown path)
    client: tuple[str, int] | None  # the peer address; one port is one TCP connection
    headers: tuple[tuple[str, str], ...]  # lower-case names, credential values masked
    credential: str  # "api_key" | "account_token" | "invalid" | "missing" | "not_required"
    credential_source: str | None  # "authorization" | "x-api-key" | None
    started: float
    # Every place a configured credential appears, whichever header the route reads: (where, kind), where a
    # header's lower-case name, "url" (path and query) or "body", kind "api_key" or "account_token".
    carried: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    json: Any = None  # the parsed body, or None when absent or not JSON
    fault: str | None = None
    status: int | None = None  # None: no response was started
    response_body: bytes = b""
    finished: float | None = None
    disconnected: bool = False  # the client went away before the response completed

    @property
    def done(self) -> bool:
        return self.finished is not None

    @property
    def duration(self) -> float | None:
        return None if self.finished is None else self.finished - self.started

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)


def _parse_json(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested too deeply
        return None


class _Draft:
    """A request being served: its fields change in place; :meth:`freeze` makes the record."""

    __slots__ = ("fields", "frozen")

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields
        self.frozen: RequestRecord | None = None

    def update(self, changes: dict[str, Any]) -> None:
        self.fields.update(changes)
        self.frozen = None

    def freeze(self) -> RequestRecord:
        if self.frozen is None:
            fields = self.fields
            self.frozen = RequestRecord(**fields, json=_parse_json(fields.get("body", b"")))
        return self.frozen


def _view(entry: RequestRecord | _Draft) -> RequestRecord:
    return entry.freeze() if isinstance(entry, _Draft) else entry


class RequestLog:
    """``limit`` keeps only the newest records (for a long-running server); counters are unaffected."""

    def __init__(self, limit: int | None = None) -> None:
        if limit is not None and limit < 1:
            raise ValueError("limit must be >= 1 or None")
        self._limit = limit
        self._cond = threading.Condition()
        self._records: dict[int, RequestRecord | _Draft] = {}
        self._seq = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._epoch = 0
        self._connections: dict[int, int] = {}  # live connection id -> epoch it opened in
        self._next_connection = 0
        self._opened = 0
        self._closed = 0

    # --- written by the server ---------------------------------------------------------------

    def begin(self, **fields: Any) -> int:
        with self._cond:
            self._seq += 1
            self._records[self._seq] = _Draft({"seq": self._seq, "started": time.monotonic(), **fields})
            if self._limit is not None and len(self._records) > self._limit:
                del self._records[next(iter(self._records))]
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            self._cond.notify_all()
            return self._seq

    def update(self, seq: int, **changes: Any) -> None:
        with self._cond:
            draft = self._records.get(seq)
            if isinstance(draft, _Draft):  # cleared meanwhile: the in-flight count still settles in finish()
                draft.update(changes)
            self._cond.notify_all()

    def finish(self, seq: int, **changes: Any) -> None:
        with self._cond:
            draft = self._records.get(seq)
            if isinstance(draft, _Draft):
                draft.update({"finished": time.monotonic(), **changes})
                self._records[seq] = draft.freeze()
            self._in_flight -= 1
            self._cond.notify_all()

    def connection_opened(self) -> int:
        with self._cond:
            self._next_connection += 1
            self._connections[self._next_connection] = self._epoch
            self._opened += 1
            self._cond.notify_all()
            return self._next_connection

    def connection_closed(self, connection: int) -> None:
        with self._cond:
            if self._connections.pop(connection, None) == self._epoch:
                self._closed += 1
            self._cond.notify_all()

    # --- read by tests -----------------------------------------------------------------------

    def records(self) -> list[RequestRecord]:
        with self._cond:
            return [_view(entry) for entry in self._records.values()]

    def __len__(self) -> int:
        with self._cond:
            return len(self._records)

    def get(self, seq: int) -> RequestRecord:
        with self._cond:
            return _view(self._records[seq])

    def for_route(self, route: str) -> list[RequestRecord]:
        return [r for r in self.records() if r.route == route]

    def trap_hits(self) -> list[RequestRecord]:
        """Requests that reached the redirect trap: a client followed a Location it should not have."""
        return self.for_route("trap")

    def glance(self, timeout: float = 1.0) -> tuple[list[RequestRecord], int] | None:
        """(unfinished requests, open connections), or None when the lock stays held ``timeout`` seconds:
        a report on a stuck server must not get stuck itself."""
        if not self._cond.acquire(timeout=timeout):
            return None
        try:
            unfinished = [_view(e) for e in self._records.values() if isinstance(e, _Draft)]
            return unfinished, len(self._connections)
        finally:
            self._cond.release()

    @property
    def in_flight(self) -> int:
        with self._cond:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most requests being served at one moment since the last clear()."""
        with self._cond:
            return self._max_in_flight

    @property
    def connections_opened(self) -> int:
        with self._cond:
            return self._opened

    @property
    def connections_closed(self) -> int:
        with self._cond:
            return self._closed

    @property
    def connections_open(self) -> int:
        with self._cond:
            return len(self._connections)

    def wait_until(self, predicate: Callable[[RequestLog], bool], timeout: float = 5.0, what: str = "") -> None:
        """Block until ``predicate(log)`` holds; TimeoutError after ``timeout`` seconds.

        The predicate runs with the log's lock held (the lock is re-entrant), so it sees one
        consistent state and must not block."""
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(self), timeout):
                raise TimeoutError(f"emulator log: {what or 'condition'} not reached within {timeout}s")

    def wait_for(
        self, count: int, timeout: float = 5.0, *, route: str | None = None, done: bool = False
    ) -> list[RequestRecord]:
        """Wait until ``count`` requests (to ``route``, if given; finished ones only if ``done``) are
        logged, and return those records."""

        def matching() -> list[RequestRecord]:
            return [
                r
                for r in map(_view, self._records.values())
                if (route is None or r.route == route) and (not done or r.finished is not None)
            ]

        self.wait_until(lambda _: len(matching()) >= count, timeout, f"{count} requests")
        with self._cond:
            return matching()

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Wait until no request is being served (every response finished or abandoned)."""
        self.wait_until(lambda log: log._in_flight == 0, timeout, "idle")

    def wait_connections_closed(self, timeout: float = 5.0) -> None:
        self.wait_until(lambda log: not log._connections, timeout, "all connections closed")

    def clear(self) -> None:
        """Forget records and counters; requests still in flight keep counting until they finish."""
        with self._cond:
            self._records.clear()
            self._max_in_flight = self._in_flight
            self._epoch += 1
            self._opened = 0
            self._closed = 0
            self._cond.notify_all()
