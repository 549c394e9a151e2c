"""A gate parks requests until a test releases them: ordering instead of sleeps.

Requests park on the server's event loop; the test waits and releases from its own thread. Every
wait has a bound, so a forgotten release ends in a timeout, never a hang.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Literal

__all__ = ["Burst", "Gate", "wait_first"]

ParkOutcome = Literal["released", "aborted", "timeout"]


async def wait_first(events: Mapping[str, asyncio.Event], limit: float | None) -> str | None:
    """The name of the first event set (in mapping order if several are), or None after ``limit`` seconds."""
    for name, event in events.items():
        if event.is_set():
            return name
    waiters = [asyncio.ensure_future(event.wait()) for event in events.values()]
    try:
        await asyncio.wait(waiters, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
    return next((name for name, event in events.items() if event.is_set()), None)


class Gate:
    """Closed until :meth:`release`; then every parked and later request passes.

    ``held`` counts requests parked right now, ``arrived`` every request that reached the gate.
    """

    def __init__(self, name: str = "gate") -> None:
        self.name = name
        self._cond = threading.Condition()
        self._open = False
        self._held = 0
        self._arrived = 0
        self._wakers: set[Callable[[], None]] = set()

    def __repr__(self) -> str:
        return f"Gate({self.name!r}, held={self.held}, open={self.is_open})"

    @property
    def held(self) -> int:
        with self._cond:
            return self._held

    @property
    def arrived(self) -> int:
        with self._cond:
            return self._arrived

    @property
    def is_open(self) -> bool:
        with self._cond:
            return self._open

    def wait_held(self, count: int, timeout: float = 5.0) -> None:
        """Block until at least ``count`` requests are parked at once; TimeoutError otherwise."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._held >= count, timeout):
                raise TimeoutError(f"{self.name}: {self._held} of {count} requests held after {timeout}s")

    def release(self) -> None:
        """Open the gate for good: parked requests continue, later ones pass straight through."""
        with self._cond:
            self._open = True
            wakers = list(self._wakers)
            self._cond.notify_all()
        for wake in wakers:
            wake()

    async def park(self, abort: Mapping[str, asyncio.Event], limit: float) -> ParkOutcome:
        """Wait on the server loop until released, an ``abort`` event is set, or ``limit`` seconds pass."""
        loop = asyncio.get_running_loop()
        opened = asyncio.Event()

        def wake() -> None:
            try:
                loop.call_soon_threadsafe(opened.set)
            except RuntimeError:  # the loop already closed: nothing is parked any more
                pass

        with self._cond:
            self._arrived += 1
            if self._open:
                return "released"
            self._held += 1
            self._wakers.add(wake)
            self._cond.notify_all()
        try:
            first = await wait_first({**abort, "released": opened}, limit)
        finally:
            with self._cond:
                self._held -= 1
                self._wakers.discard(wake)
                self._cond.notify_all()
        if first is None:
            return "timeout"
        return "released" if first == "released" else "aborted"


Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]


class Burst:
    """Answers held back until ``size`` requests have theirs ready, then written from one step of the
    server loop, back to back: every answer's head (status line and headers) in rank order, then every
    body in rank order. A client then sees the bodies land together, in a known order, while it is still
    busy with the heads. A member kept waiting ``limit`` seconds (a sibling never came) writes alone.
    Used on the server loop only."""

    def __init__(self, size: int, name: str = "burst") -> None:
        if size < 1:
            raise ValueError("a burst needs at least one member")
        self.size = size
        self.name = name
        self._members: list[tuple[int, list[Message], Send, asyncio.Future[None]]] = []

    def __repr__(self) -> str:
        return f"Burst({self.name!r}, {len(self._members)} of {self.size} ready)"

    async def join(self, rank: int, messages: list[Message], send: Send, limit: float) -> None:
        """Hand over one answer (its ASGI messages) and return once it is written."""
        written: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        member = (rank, messages, send, written)
        self._members.append(member)
        if len(self._members) >= self.size:
            members = sorted(self._members, key=lambda m: m[0])
            self._members = []
            await _write_all(members)
        try:
            await asyncio.wait_for(asyncio.shield(written), limit)
        except TimeoutError:
            if member in self._members:  # not yet taken by a flush that is still writing
                self._members.remove(member)
                await _write_all([member])
            await written


async def _write_all(members: list[tuple[int, list[Message], Send, asyncio.Future[None]]]) -> None:
    steps = max(len(m[1]) for m in members)
    for step in range(steps):
        for _, messages, send, written in members:
            if step >= len(messages) or written.done():
                continue
            try:
                await send(messages[step])
            except Exception as exc:  # that member's own failure (its client gone), handed to it
                written.set_exception(exc)
    for *_, written in members:
        if not written.done():
            written.set_result(None)
