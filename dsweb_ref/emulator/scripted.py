"""The conformance search route: a search backend whose every answer a test scripts in advance.

The DeepSeek routes carry no answer text and never flag a result truncated, so some seed-000 rules
(answers labelled ``### <query>``, content passed through, a per-query ``truncated``) cannot be seen
through them. This route answers in the seam's own result shape instead, so any implementation can
wire a small provider to it and be compared against the reference merge.

Protocol (``{scripted_base}`` is ``{emulator}/scripted/<scenario>``; no credential)::

    POST {scripted_base}/search   {"query": str, "max_results": int}      (max_results optional)
    200 {"content"?: str, "sources": [{"url", "title"?, "snippet"?, "published_at"?}], "truncated": bool}
    4xx/5xx {"error": {"code": "WEB_...", "message": str}}   -> the search fails with that code

A test loads a :class:`Script` (per query: a result or a failure, plus the completion order) and
gets the scenario's id. Timing is ordering, never sleeping: a scenario's searches are answered only
once every one of its queries is in flight, then one at a time in the scripted order. After the first
failure is answered nothing more is: the rest wait for the client to abort them. A search still
waiting after ``hold_limit`` seconds is answered anyway and counted *late*, so a client that runs
searches one by one, or does not abort its siblings, finishes and is told why.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from .errors import render_json
from .gate import wait_first

__all__ = ["PATH", "Failure", "Script", "ScriptedStore", "Seen", "scripted_base"]

PATH = "/scripted/{scenario}/search"
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Failure:
    """A scripted failure: HTTP ``status`` with the error body ``{"error": {"code", "message"}}``."""

    status: int
    code: str
    message: str = "scripted failure"

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


Answer = Failure | Mapping[str, Any]  # a failure, or a seam search result as JSON


@dataclass(frozen=True, slots=True)
class Script:
    """Per query its answer; ``order`` is the completion order (default: the answers' order)."""

    answers: Mapping[str, Answer]
    order: tuple[str, ...] = ()
    hold_limit: float = 2.0

    def __post_init__(self) -> None:
        order = self.order or tuple(self.answers)
        if sorted(order) != sorted(self.answers):
            raise ValueError("order must list every scripted query exactly once")
        object.__setattr__(self, "order", tuple(order))


@dataclass(slots=True)
class Seen:
    """What one scenario's searches did, for the test to read after the call."""

    arrivals: list[tuple[str, object]] = field(default_factory=list)  # (query, max_results) in arrival order
    answered: list[tuple[str, int]] = field(default_factory=list)  # (query, status) in answer order
    late: list[str] = field(default_factory=list)  # answered only because hold_limit ran out
    aborted: list[str] = field(default_factory=list)  # the client went away before an answer
    unknown: list[str] = field(default_factory=list)  # queries the script does not know


class _Run:
    """One scenario on the server loop (touched only there): who arrived, how far the order got."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.seen = Seen()
        self.arrived: set[str] = set()
        self.next = 0  # index into script.order of the next search to answer
        self.failed = False  # a failure was answered: the rest wait to be aborted
        self.changed = asyncio.Event()

    def poke(self) -> None:
        """Wake every waiting search of this scenario to look at the state again."""
        self.changed.set()
        self.changed = asyncio.Event()

    def ready(self, query: str) -> bool:
        order = self.script.order
        if self.seen.unknown or query in order[: self.next]:
            return True  # a broken scenario, or a repeated search of an answered query: no ordering left
        return not self.failed and len(self.arrived) == len(order) and order[self.next] == query


class ScriptedStore:
    """Scenarios by id. Loaded from any thread; served on the emulator's loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scripts: dict[str, Script] = {}
        self._runs: dict[str, _Run] = {}
        self._ids = itertools.count(1)

    def load(self, script: Script) -> str:
        with self._lock:
            scenario = f"s{next(self._ids)}"
            self._scripts[scenario] = script
        return scenario

    def seen(self, scenario: str) -> Seen:
        """A copy of what the scenario's searches did so far."""
        with self._lock:
            run = self._runs.get(scenario)
            if run is None:
                return Seen()
            s = run.seen
            return Seen(list(s.arrivals), list(s.answered), list(s.late), list(s.aborted), list(s.unknown))

    def drop(self, scenario: str) -> None:
        with self._lock:
            self._scripts.pop(scenario, None)
            self._runs.pop(scenario, None)

    def _run(self, scenario: str) -> _Run | None:
        with self._lock:
            script = self._scripts.get(scenario)
            if script is None:
                return None
            return self._runs.setdefault(scenario, _Run(script))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The route as a raw ASGI app, so it can wait for the client to go away."""
        body = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        run = self._run(str(scope.get("path_params", {}).get("scenario", "")))
        if run is None:
            await _reply(send, 404, Failure(404, "WEB_PROVIDER_ERROR", "no such scripted scenario").body())
            return
        query, max_results = _request(body)
        if query is None:
            await _reply(send, 400, Failure(400, "WEB_INVALID_ARGUMENTS", "expected {query, max_results}").body())
            return
        gone = asyncio.Event()
        watcher = asyncio.ensure_future(_watch(receive, gone))
        try:
            answer = await self._turn(run, query, max_results, gone)
        finally:
            watcher.cancel()
        if answer is not None:
            status, payload = answer
            await _reply(send, status, payload)

    async def _turn(self, run: _Run, query: str, max_results: object, gone: asyncio.Event) -> tuple[int, Any] | None:
        deadline = time.monotonic() + run.script.hold_limit
        scripted = run.script.answers.get(query)
        with self._lock:
            run.seen.arrivals.append((query, max_results))
            if scripted is None:
                run.seen.unknown.append(query)
        run.arrived.add(query)
        run.poke()
        late = False
        while not run.ready(query):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                late = True
                break
            if await wait_first({"gone": gone, "changed": run.changed}, remaining) == "gone":
                with self._lock:
                    run.seen.aborted.append(query)
                return None
        answer: tuple[int, Any]
        if scripted is None:
            answer = 404, Failure(404, "WEB_PROVIDER_ERROR", f"query {query!r} is not in the scenario").body()
        elif isinstance(scripted, Failure):
            run.failed = True
            answer = scripted.status, scripted.body()
        else:
            answer = 200, dict(scripted)
        order = run.script.order
        if run.next < len(order) and order[run.next] == query:
            run.next += 1
        with self._lock:
            run.seen.answered.append((query, answer[0]))
            if late:
                run.seen.late.append(query)
        run.poke()
        return answer


async def _watch(receive: Receive, gone: asyncio.Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.set()


async def _reply(send: Send, status: int, payload: Any) -> None:
    body = render_json(payload)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _request(body: bytes) -> tuple[str | None, object]:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(data, dict) or not isinstance(data.get("query"), str):
        return None, None
    return data["query"], data.get("max_results")


def scripted_base(base_url: str, scenario: str) -> str:
    """The ``scripted_base`` of a loaded scenario: ``{scripted_base}/search`` is its route."""
    return f"{base_url}/scripted/{scenario}"
