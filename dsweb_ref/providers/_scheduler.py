"""Pacing and bounded retries for the Search and Fetch APIs: the one layer that retries.

Seed 001 ships fail-fast (no scheduler, no retries) and lists both as remaining work: the account
has a per-API QPS limit shared by all its keys, and the guide says to wait before retrying 408,
429 and 5xx, to top up on 402 and to change the request on any other 4xx. Both stay off until the
``deepseek_api.pacing`` / ``deepseek_api.retries`` settings turn them on.

- One :class:`AccountScheduler` per account (tools base + credential) in the process, shared by
  every Search/Fetch API call, with one pacer per API (``search`` and ``fetch`` are limited
  separately). Pacing spaces request starts :func:`spacing` apart (``1/qps`` plus 5 %), so a
  burst of four is spread out, not fired at once, and no one-second window holds more than the
  configured rate even when a wake-up runs late or the network delays one request more than the
  next (without the slack, the emulator saw 6 starts in one second at 5 QPS).
- The whole operation (slot waits, every attempt, every retry wait) runs inside ONE deadline,
  the operation's ``timeout_s``; a slot or a retry that would land past it is not taken.
- A retry waits ``Retry-After`` (delay-seconds or an HTTP date) when the reply has one; a wait
  longer than ``retry_max_wait_s`` is not shortened (that would retry too early) but ends the
  retries. Without the header it backs off exponentially with jitter.
- Everything runs in the caller's task: no background task, no queue. Cancelling a call while it
  waits for a slot or a retry ends it at once with nothing in flight, and a reserved slot that
  was never used is handed back (any of them, not only the newest): the next caller that fits it
  takes it. Calls already waiting keep the slot they reserved.

Hand-written rather than aiolimiter/tenacity/stamina: the pacer must answer "when is my slot?"
before waiting (to honour the one deadline), be shared across event loops and threads (plain
numbers under a lock, no loop-bound futures), and take an injected clock and random source so
tests prove ordering without sleeping.
"""

from __future__ import annotations

import asyncio
import bisect
import contextvars
import email.utils
import hashlib
import math
import random
import re
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

from .._exceptions import WebError, WebErrorCode
from ..settings import DeepSeekApiSettings

__all__ = [
    "BACKOFF_FIRST_S",
    "PACING_SLACK",
    "AccountScheduler",
    "Clock",
    "MonotonicClock",
    "Policy",
    "SchedulerRegistry",
    "process_schedulers",
    "retry_after_seconds",
    "retryable",
    "scheduled",
    "spacing",
    "wire_hook",
]

# Ceiling of the first backoff wait; it doubles per retry, capped by retry_max_wait_s.
BACKOFF_FIRST_S = 0.5
# Clock readings closer than this count as equal (float sums of the same interval may differ by ulps).
_CLOCK_EPSILON = 1e-6
# Extra spacing between paced starts, as a share of 1/qps: room for late wake-ups and transport
# jitter (a 5 QPS pacer tolerates 50 ms of it per second) at the cost of 5 % of the rate.
PACING_SLACK = 0.05
_DELAY_SECONDS = re.compile(r"\d+")
# Ten digits or more ask for at least this long: more than any retry may wait, so they end the retries
# (read as unreadable, they got a short backoff: a longer wait asked for, an earlier retry).
_AT_LEAST_TEN_DIGITS = 1e9


class Clock(Protocol):
    """Monotonic seconds, a wall clock (for Retry-After dates) and a sleep that honours cancellation."""

    def now(self) -> float: ...

    def wall(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class MonotonicClock:
    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class _Reply(Protocol):
    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...


R = TypeVar("R", bound=_Reply)
Send = Callable[[float], Awaitable[R]]


@dataclass(frozen=True, slots=True)
class Policy:
    """What one operation may do: pace at ``qps`` and retry up to ``retries`` times."""

    pacing: bool = False
    qps: float = 5.0
    retries: int = 0
    max_wait_s: float = 10.0

    @property
    def active(self) -> bool:
        return self.pacing or self.retries > 0

    @classmethod
    def of(cls, conf: DeepSeekApiSettings, api: str) -> Policy:
        qps = conf.fetch_qps if api == "fetch" else conf.search_qps
        return cls(pacing=conf.pacing, qps=qps, retries=conf.retries, max_wait_s=conf.retry_max_wait_s)


def spacing(qps: float) -> float:
    """Seconds between two paced starts of one API."""
    return (1.0 + PACING_SLACK) / qps


def retryable(status: int) -> bool:
    """408, 429 and 5xx: the guide's "wait, then retry". 402 (funding) and other 4xx never are."""
    return status in (408, 429) or 500 <= status <= 599


def retry_after_seconds(headers: Mapping[str, str], wall_now: float) -> float | None:
    """The wait a ``Retry-After`` header asks for (delay-seconds, or an HTTP date measured against
    ``wall_now``; a past date is 0; ten digits or more, at least 10**9 s), or None when absent or unreadable."""
    value = (headers.get("retry-after") or "").strip()
    if _DELAY_SECONDS.fullmatch(value):
        digits = value.lstrip("0") or "0"  # leading zeros say nothing (and would make int() slow)
        return float(int(digits)) if len(digits) < 10 else _AT_LEAST_TEN_DIGITS
    if not value or len(value) > 64:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT; a zone-less one is read as such
        return None
    return max(0.0, when.timestamp() - wall_now)


class _Pacer:
    """Start times of one API, at least ``interval`` apart as the server sees them. Plain numbers
    under a thread lock, so callers on any event loop or thread share it.

    * Callers reserve a slot up front (so each knows its wait, and the deadline, before waiting): the
      earliest time at least ``interval`` away from every slot still held and from the last start.
      A slot handed back unused (a cancelled or expired call), newest or not, is free again for the
      next caller that fits it (issue 20 item 5: only the newest used to come back).
    * Before sending, :meth:`start` checks the gap to the last *actual* start, so slots that fell
      due together after the event loop stalled still go out one interval apart, never in a burst.
    * An actual start is the moment the request reached the wire (:meth:`on_wire`, from the HTTP
      layer), not the moment it was let go: a send that spent 50 ms opening a connection must not
      leave the next one, on a warm connection, closer than ``interval`` behind it at the server
      (issue 20 item 6). Until the last one let go is on the wire (or has ended), the next waits.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: list[float] = []  # reserved slots not yet started, sorted
        self._last = -math.inf  # the last start: on the wire, else when it was let go
        self._open: object | None = None  # the start let go and not yet on the wire or ended

    def reserve(self, now: float, interval: float, latest: float) -> float | None:
        """The start time reserved for the caller, or None (nothing reserved) if it is after ``latest``."""
        with self._lock:
            slot = max(now, self._last + interval)
            for held in self._held:  # first fit: the earliest time interval away from every held slot
                if held <= slot - interval + _CLOCK_EPSILON:
                    continue
                if held >= slot + interval - _CLOCK_EPSILON:
                    break
                slot = held + interval
            if slot > latest:
                return None
            bisect.insort(self._held, slot)
            return slot

    def start(self, now: float, interval: float, slot: float) -> tuple[float, object | None]:
        """(0, a ticket) and ``slot`` is used, or (how much longer to wait, None): for ``interval``
        after the last start, or, while the last one let go is not yet on the wire, a poll step."""
        with self._lock:
            wait = self._last + interval - now
            if wait <= _CLOCK_EPSILON and self._open is not None:
                wait = interval * _POLL_SHARE
            if wait > _CLOCK_EPSILON:
                return wait, None
            self._remove(slot)
            self._last = now
            self._open = ticket = object()
            return 0.0, ticket

    def on_wire(self, ticket: object, now: float) -> None:
        """The request let go with ``ticket`` is being written now: its start, as the server sees it."""
        with self._lock:
            if self._open is ticket:
                self._last = max(self._last, now)
                self._open = None

    def ended(self, ticket: object) -> None:
        """The send of ``ticket`` is over; if it never reached the wire, its start stays when it was let go."""
        with self._lock:
            if self._open is ticket:
                self._open = None

    def give_back(self, slot: float) -> None:
        """Return an unused slot, whichever it is: the next caller that fits it takes it."""
        with self._lock:
            self._remove(slot)

    def _remove(self, slot: float) -> None:
        i = bisect.bisect_left(self._held, slot)
        if i < len(self._held) and self._held[i] == slot:
            del self._held[i]


# A send that is not on the wire yet when the next slot is due: how often (share of the interval)
# the next caller looks again.
_POLL_SHARE = 0.05
# The HTTP layer reports "on the wire" through this: set by the scheduler around one send.
_ON_WIRE: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("dsweb_on_wire", default=None)


def wire_hook() -> Callable[[], None] | None:
    """What the HTTP layer calls when the current send's request starts going out (None: unpaced)."""
    return _ON_WIRE.get()


class AccountScheduler:
    """Pacing and retries for one account; see the module docstring."""

    def __init__(self, clock: Clock, rand: random.Random) -> None:
        self._clock = clock
        self._rand = rand
        self._lock = threading.Lock()
        self._pacers: dict[str, _Pacer] = {}

    def _pacer(self, api: str) -> _Pacer:
        with self._lock:
            return self._pacers.setdefault(api, _Pacer())

    async def _slot(self, api: str, qps: float, deadline: float) -> object | None:
        """Wait for this API's next start and return its ticket; None (the slot handed back, nothing
        sent) when that start would come after ``deadline``, known up front or, after a stall, while
        waiting."""
        interval = spacing(qps)
        pacer = self._pacer(api)
        slot = pacer.reserve(self._clock.now(), interval, deadline)
        if slot is None:
            return None
        wait = slot - self._clock.now()
        try:
            while True:
                if wait > 0:
                    if self._clock.now() + wait > deadline:
                        pacer.give_back(slot)
                        return None
                    await self._clock.sleep(wait)
                now = self._clock.now()
                wait, ticket = pacer.start(now, interval, slot)
                if ticket is not None:
                    if now >= deadline:
                        # Woke at or past the deadline (a late wake-up): nothing will be sent, so the start
                        # is ended here; an open start never ended keeps every later start of this API waiting.
                        pacer.ended(ticket)
                        return None
                    return ticket
        except BaseException:  # cancelled while waiting: the slot was never used
            pacer.give_back(slot)
            raise

    async def _send(self, send: Send[R], remaining: float, api: str, ticket: object | None) -> R:
        """``send(remaining)``; a paced one tells the pacer when its request reaches the wire."""
        if ticket is None:
            return await send(remaining)
        pacer = self._pacer(api)
        hook = _ON_WIRE.set(lambda: pacer.on_wire(ticket, self._clock.now()))
        try:
            return await send(remaining)
        finally:
            _ON_WIRE.reset(hook)
            pacer.ended(ticket)

    def backoff(self, retry: int, cap: float) -> float:
        """Equal jitter: half the exponential ceiling plus a random share of the other half."""
        ceiling = min(cap, BACKOFF_FIRST_S * 2.0**retry)
        return ceiling / 2 + self._rand.uniform(0.0, ceiling / 2)

    async def run(self, api: str, policy: Policy, timeout_s: float, send: Send[R], label: str) -> R:
        """``send(remaining_seconds)`` paced and retried under ``policy`` within one deadline."""
        clock = self._clock
        deadline = clock.now() + timeout_s
        retry = 0
        reply: R | None = None
        while True:
            ticket = await self._slot(api, policy.qps, deadline) if policy.pacing else None
            if policy.pacing and ticket is None:
                if reply is not None:
                    return reply  # the retry's slot is past the deadline: report the last answer
                raise WebError(
                    WebErrorCode.PROVIDER_ERROR,
                    f"{label} request not sent: the next free {api} slot under the local limit of "
                    f"{policy.qps:g} requests per second is past the operation's {timeout_s:g} s deadline",
                )
            remaining = deadline - clock.now()
            if remaining <= 0:
                if ticket is not None:
                    # Its start was taken before the deadline (_slot), but the clock passed it since (a thread
                    # switch between the two reads): nothing is sent, so the start is ended here; an open start
                    # never ended keeps every later start of this API waiting.
                    self._pacer(api).ended(ticket)
                if reply is not None:
                    return reply
                raise WebError(WebErrorCode.PROVIDER_ERROR, f"{label} request timed out after {timeout_s:g} s")
            reply = await self._send(send, remaining, api, ticket)
            if retry >= policy.retries or not retryable(reply.status):
                return reply
            asked = retry_after_seconds(reply.headers, clock.wall())
            wait = self.backoff(retry, policy.max_wait_s) if asked is None else asked
            # Never wait longer than allowed, never retry earlier than asked, never past the deadline.
            if wait > policy.max_wait_s or clock.now() + wait >= deadline:
                return reply
            retry += 1
            await clock.sleep(wait)


class SchedulerRegistry:
    """One :class:`AccountScheduler` per account. The process shares :func:`process_schedulers`;
    tests build their own with an injected clock and random source."""

    def __init__(self, clock: Clock | None = None, rand: random.Random | None = None) -> None:
        self._clock: Clock = clock or MonotonicClock()
        self._rand = rand or random.Random()
        self._lock = threading.Lock()
        self._accounts: dict[str, AccountScheduler] = {}

    def for_account(self, base: str, credential: str) -> AccountScheduler:
        # Keyed by a digest: the registry never holds a credential value.
        key = hashlib.sha256(f"{base}\n{credential}".encode()).hexdigest()
        with self._lock:
            found = self._accounts.get(key)
            if found is None:
                found = self._accounts[key] = AccountScheduler(self._clock, self._rand)
            return found


_PROCESS = SchedulerRegistry()


def process_schedulers() -> SchedulerRegistry:
    return _PROCESS


async def scheduled(
    provider: object, conf: DeepSeekApiSettings, api: str, account: tuple[str, str], send: Send[R], label: str
) -> R:
    """The hook the Search/Fetch API request path calls. Off (the default): one ``send`` with the
    operation's timeout, exactly seed 001's fail-fast path. On: paced and retried by the account's
    scheduler from ``provider.schedulers`` if it has one, else the process registry."""
    policy = Policy.of(conf, api)
    if not policy.active:
        return await send(conf.timeout_s)
    registry = getattr(provider, "schedulers", None)
    if not isinstance(registry, SchedulerRegistry):
        registry = _PROCESS
    return await registry.for_account(*account).run(api, policy, conf.timeout_s, send, label)
