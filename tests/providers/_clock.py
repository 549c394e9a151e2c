"""A virtual clock for the scheduler: sleeps park until the test moves time on, so ordering is
proven by steps, never by real waiting."""

from __future__ import annotations

import asyncio

WALL_EPOCH = 1_800_000_000.0  # a whole second, so HTTP-date Retry-After values give exact waits


class ManualClock:
    """``now()`` starts at 0. With ``auto`` every sleep moves time on by its own length at once (for
    one call at a time); otherwise sleepers park until :meth:`advance` passes their wake time."""

    def __init__(self, *, auto: bool = False) -> None:
        self.auto = auto
        self.slept: list[float] = []  # every wait asked for, in order
        self._now = 0.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []
        self._watchers: list[asyncio.Future[None]] = []

    def now(self) -> float:
        return self._now

    def wall(self) -> float:
        return WALL_EPOCH + self._now

    @property
    def sleeping(self) -> int:
        return len(self._sleepers)

    def _poke(self) -> None:
        watchers, self._watchers = self._watchers, []
        for watcher in watchers:
            if not watcher.done():
                watcher.set_result(None)

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        if self.auto:
            self._now += seconds
            await asyncio.sleep(0)
            return
        entry = (self._now + seconds, asyncio.get_running_loop().create_future())
        self._sleepers.append(entry)
        self._poke()
        try:
            await entry[1]
        finally:
            self._sleepers.remove(entry)
            self._poke()

    def advance(self, seconds: float) -> None:
        self._now += seconds
        for wake_at, future in self._sleepers:
            if wake_at <= self._now + 1e-9 and not future.done():
                future.set_result(None)

    async def wait_sleeping(self, count: int) -> None:
        """Until exactly ``count`` callers are parked in :meth:`sleep` (bounded at 10 s)."""
        async with asyncio.timeout(10.0):
            while self.sleeping != count:
                watcher = asyncio.get_running_loop().create_future()
                self._watchers.append(watcher)
                await watcher
