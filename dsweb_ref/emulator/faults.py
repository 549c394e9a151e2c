"""Scripted faults: what a test asks the emulator to do wrong, and for which requests.

A rule pairs a fault with a route (``"search"``, ``"fetch"``, ``"messages"`` or ``"*"``), an
optional match on the parsed JSON body, and a number of uses. The first rule, in the order added,
that matches a request and has uses left is consumed; authentication runs first, so a rejected
request never uses a fault.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from .gate import Burst, Gate

__all__ = [
    "ROUTES",
    "AsAnswer",
    "CutBody",
    "Delay",
    "Fault",
    "FaultQueue",
    "FaultRule",
    "Flush",
    "Hold",
    "HugeSummary",
    "Malformed",
    "NoSources",
    "Pad",
    "ProseOnly",
    "RateLimited",
    "Redirect",
    "RouteName",
    "SlowBody",
    "Status",
    "ToolError",
    "describe",
]

RouteName = Literal["search", "fetch", "messages", "responses", "*"]
ROUTES: tuple[str, ...] = ("search", "fetch", "messages", "responses", "*")
_MODEL_ROUTES = ("messages", "responses", "*")
MAX_WAIT = 300.0  # seconds; bounds every delay and hold
MAX_PAD = 16 * 1024 * 1024  # bytes; bounds a padded answer


@dataclass(frozen=True, slots=True)
class Delay:
    """Wait ``seconds`` before answering (the wait ends early if the client goes away)."""

    seconds: float
    then: Fault | None = None


@dataclass(frozen=True, slots=True)
class Hold:
    """Park the request at ``gate`` until the test releases it; after ``timeout`` answer 504."""

    gate: Gate
    timeout: float = 30.0
    then: Fault | None = None


@dataclass(frozen=True, slots=True)
class Flush:
    """Answer as ``then`` would (None: the route's own answer), written with the other members of ``burst``
    in one write burst, at position ``rank`` (see :class:`Burst`)."""

    burst: Burst
    rank: int = 0
    then: Fault | None = None
    timeout: float = 30.0


@dataclass(frozen=True, slots=True)
class Pad:
    """Answer as ``then`` would (None: the route's own answer) with ``size`` spaces after the body: the same
    JSON, which a client reading in bounded chunks (httpcore: 64 KiB) takes more event-loop steps to read."""

    size: int
    then: Fault | None = None


@dataclass(frozen=True, slots=True)
class Status:
    """Answer ``status`` with the platform's error envelope, or with ``body`` verbatim if given."""

    status: int
    message: str | None = None
    body: bytes | None = None
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RateLimited:
    """429 with ``Retry-After`` (seconds or an HTTP date); None sends no Retry-After."""

    retry_after: str | int | None = 1


@dataclass(frozen=True, slots=True)
class Malformed:
    """A success status whose body is not the JSON the client expects."""

    body: bytes = b'{"results": [{"url": "https://docs.example.test/api/search", "title": '
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True, slots=True)
class Redirect:
    """A 3xx whose Location, by default, is this emulator's trap route, which records any visit."""

    status: int = 302
    location: str | None = None


@dataclass(frozen=True, slots=True)
class SlowBody:
    """Send the normal answer in ``chunk_size``-byte pieces, ``delay`` seconds apart (the status, headers and
    first piece at once). With ``pieces``, the answer in that many pieces of equal size instead (within a
    byte; fewer only when the body has fewer bytes), whatever its length: a caller that cannot know the
    answer's size still knows when its last piece comes, ``(pieces - 1) * delay`` after the first."""

    chunk_size: int = 64
    delay: float = 0.05
    pieces: int | None = None


@dataclass(frozen=True, slots=True)
class CutBody:
    """Declare the full Content-Length, send ``keep`` bytes (default: half), then close."""

    keep: int | None = None


@dataclass(frozen=True, slots=True)
class ProseOnly:
    """Messages only: a text answer without server_tool_use or web_search_tool_result blocks."""

    text: str = ""


@dataclass(frozen=True, slots=True)
class ToolError:
    """Messages only: web_search_tool_result whose content is a web_search_tool_result_error."""

    error_code: str = "max_uses_exceeded"


@dataclass(frozen=True, slots=True)
class NoSources:
    """Messages/Responses: the search completes but returns no structured sources."""


@dataclass(frozen=True, slots=True)
class HugeSummary:
    """Messages/Responses: a completed search whose answer text is ``chars`` characters long."""

    chars: int = 100_000


@dataclass(frozen=True, slots=True)
class AsAnswer:
    """Messages/Responses: ``body``, one complete JSON answer of the route, instead of the route's own. A
    plain request gets it as JSON; a request asking for ``"stream": true`` gets the same answer told as
    the route's server-sent events (streaming.py), so both carry the same content.

    ``bend`` spoils the stream near its end, ``last`` counting its final events: ``"early"`` ends it
    cleanly without them; ``"cut"`` sends the events before them and half of the next one, then breaks
    the connection mid-body; ``"error"`` tells an ``error`` event before them, then the rest. A plain
    request to a bent answer gets what a failed upstream sends: the JSON cut the same way for ``"early"``
    and ``"cut"`` (half of it, then a broken connection), an HTTP 500 error for ``"error"``.

    ``stream`` replaces the retelling: these event-stream bytes go to a streamed request as given (a
    test's own stream, a hostile one included), ``body`` still to a plain one. ``ignores_stream``
    answers a streamed request as a plain one (an upstream that does not stream)."""

    body: bytes
    bend: Literal["early", "cut", "error"] | None = None
    last: int = 1
    stream: bytes | None = None
    ignores_stream: bool = False

    def __repr__(self) -> str:  # the bend first: the body is long, and shown cut where cases are listed
        shown = [f"bend={self.bend!r}, last={self.last}"] if self.bend else []
        shown += ["ignores_stream=True"] if self.ignores_stream else []
        shown += [f"stream={self.stream!r}"] if self.stream is not None else []
        return f"AsAnswer({', '.join([*shown, f'body={self.body!r}'])})"


Fault: TypeAlias = (
    Delay | Hold | Flush | Pad | Status | RateLimited | Malformed | Redirect | SlowBody | CutBody | ProseOnly
    | ToolError | NoSources | HugeSummary | AsAnswer
)
BodyMatch: TypeAlias = Callable[[Any], bool] | Mapping[str, Any]


def describe(fault: Fault) -> str:
    """A short label for the request log."""
    match fault:
        case Delay(seconds, then):
            return f"Delay({seconds}s)" + (f" -> {describe(then)}" if then else "")
        case Hold(gate, _, then):
            return f"Hold({gate.name})" + (f" -> {describe(then)}" if then else "")
        case Pad(size, then):
            return f"Pad({size})" + (f" -> {describe(then)}" if then else "")
        case Flush(burst, rank, then):
            return f"Flush({burst.name}#{rank})" + (f" -> {describe(then)}" if then else "")
        case Status(status):
            return f"Status({status})"
        case RateLimited(retry_after):
            return f"RateLimited(retry_after={retry_after})"
        case Malformed(status=status):
            return f"Malformed({status})"
        case Redirect(status, location):
            return f"Redirect({status})" + (f" -> {location}" if location else "")
        case SlowBody(chunk_size, delay, None):
            return f"SlowBody({chunk_size}B/{delay}s)"
        case SlowBody(_, delay, pieces):
            return f"SlowBody({pieces} pieces/{delay}s)"
        case CutBody(keep):
            return f"CutBody(keep={keep})"
        case ProseOnly():
            return "ProseOnly"
        case ToolError(error_code):
            return f"ToolError({error_code})"
        case NoSources():
            return "NoSources"
        case HugeSummary(chars):
            return f"HugeSummary({chars})"
        case AsAnswer(_, bend, last, stream, ignores_stream):
            told = [f"{bend}, last={last}"] if bend else []
            told += ["own stream"] if stream is not None else []
            told += ["ignores stream"] if ignores_stream else []
            return "AsAnswer" + (f"({', '.join(told)})" if told else "")


def _check(fault: Fault, route: str) -> None:
    match fault:
        case Delay(seconds) if not 0 <= seconds <= MAX_WAIT:
            raise ValueError(f"Delay seconds must be within 0..{MAX_WAIT}")
        case Hold(_, timeout, _) if not 0 < timeout <= MAX_WAIT:
            raise ValueError(f"Hold timeout must be within 0..{MAX_WAIT}")
        case Flush(_, _, _, timeout) if not 0 < timeout <= MAX_WAIT:
            raise ValueError(f"Flush timeout must be within 0..{MAX_WAIT}")
        case Pad(size) if not 0 <= size <= MAX_PAD:
            raise ValueError(f"Pad size must be within 0..{MAX_PAD}")
        case Status(status) | Malformed(status=status) if not 100 <= status <= 599:
            raise ValueError("status must be an HTTP status code")
        case Redirect(status) if not 300 <= status <= 399:
            raise ValueError("Redirect status must be 3xx")
        case SlowBody(chunk_size, delay) if chunk_size < 1 or not 0 <= delay <= MAX_WAIT:
            raise ValueError("SlowBody needs chunk_size >= 1 and a bounded delay")
        case SlowBody(pieces=pieces) if pieces is not None and pieces < 1:
            raise ValueError("SlowBody pieces must be >= 1")
        case CutBody(keep) if keep is not None and keep < 0:
            raise ValueError("CutBody keep must be >= 0")
        case ProseOnly() | ToolError() | NoSources() | HugeSummary() | AsAnswer() if route not in _MODEL_ROUTES:
            raise ValueError(f"{describe(fault)} applies to the messages and responses routes only")
        case HugeSummary(chars) if not 0 <= chars <= 10_000_000:
            raise ValueError("HugeSummary chars must be within 0..10000000")
        case AsAnswer(last=last) if last < 1:
            raise ValueError("AsAnswer last must be >= 1")
    if isinstance(fault, Delay | Hold | Flush | Pad) and fault.then is not None:
        _check(fault.then, route)


def _gates(fault: Fault | None) -> list[Gate]:
    if isinstance(fault, Hold):
        return [fault.gate, *_gates(fault.then)]
    if isinstance(fault, Delay | Flush | Pad):
        return _gates(fault.then)
    return []


class FaultRule:
    """One scripted fault; ``times=None`` applies it to every matching request until cleared."""

    def __init__(self, route: str, fault: Fault, *, times: int | None = 1, when: BodyMatch | None = None) -> None:
        if route not in ROUTES:
            raise ValueError(f"route must be one of {ROUTES}, not {route!r}")
        if times is not None and times < 1:
            raise ValueError("times must be >= 1 or None")
        _check(fault, route)
        self.route = route
        self.fault = fault
        self.times = times
        self.when = when
        self.used = 0

    def __repr__(self) -> str:
        return f"FaultRule({self.route!r}, {describe(self.fault)}, used={self.used}, times={self.times})"

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.used >= self.times

    def matches(self, route: str, body: Any) -> bool:
        if self.exhausted or self.route not in ("*", route):
            return False
        if self.when is None:
            return True
        if isinstance(self.when, Mapping):
            return isinstance(body, dict) and all(k in body and body[k] == v for k, v in self.when.items())
        try:
            return bool(self.when(body))
        except Exception:  # a predicate that cannot read this body does not match it
            return False


class FaultQueue:
    """The scripted faults of one emulator; safe to use from the test thread while it serves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []
        self._gates: list[Gate] = []

    def add(self, route: RouteName, fault: Fault, *, times: int | None = 1, when: BodyMatch | None = None) -> FaultRule:
        """Queue ``fault`` for the next ``times`` requests to ``route`` whose JSON body matches ``when``
        (a predicate, or a mapping of top-level fields that must be equal)."""
        rule = FaultRule(route, fault, times=times, when=when)
        with self._lock:
            self._rules.append(rule)
            self._gates.extend(_gates(fault))
        return rule

    def take(self, route: str, body: Any) -> Fault | None:
        """Consume the first matching rule's fault, if any (the server calls this once per request)."""
        with self._lock:
            for rule in self._rules:
                if rule.matches(route, body):
                    rule.used += 1
                    return rule.fault
        return None

    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def pending(self) -> list[FaultRule]:
        """Rules with uses left: a test that expected them all consumed can assert this is empty."""
        with self._lock:
            return [r for r in self._rules if not r.exhausted]

    def release_gates(self) -> None:
        with self._lock:
            gates = list(self._gates)
        for gate in gates:
            gate.release()

    def clear(self) -> None:
        """Drop every rule and release every gate they used, so nothing stays parked."""
        self.release_gates()
        with self._lock:
            self._rules.clear()
            self._gates.clear()
