"""A check that ends in an error while an interrupt cancels it (its adapter was ended first) is not reported by the
event loop as "Task exception was never retrieved" (CI of 3d82b60: a traceback after an interrupted certify's one
line, from Python 3.11's wait_for, which drops such an error)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest

from dsweb_ref.certification import suite
from dsweb_ref.certification.targets import TargetError


async def _ends_in_an_error_when_cancelled() -> None:
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        raise TargetError("adapter exited with status -15") from None


def _logged(wait: Callable[[Coroutine[Any, Any, None], float], Awaitable[None]]) -> list[str]:
    """What the loop's exception handler got once a run waiting with ``wait`` was cancelled and collected."""
    logged: list[str] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, context: logged.append(context["message"]))
        started = asyncio.Event()

        async def run() -> None:
            started.set()
            await wait(_ends_in_an_error_when_cancelled(), 30.0)

        outer = asyncio.ensure_future(run())
        await started.wait()
        await asyncio.sleep(0)  # the check under way
        outer.cancel()
        with pytest.raises((asyncio.CancelledError, TargetError)):
            await outer
        gc.collect()
        await asyncio.sleep(0)

    asyncio.run(main())
    gc.collect()
    return logged


def test_plain_wait_for_drops_the_error_the_loop_then_logs() -> None:
    # the Python behaviour the helper exists for: without it, the error is logged as never retrieved
    assert any("never retrieved" in m for m in _logged(asyncio.wait_for)), "wait_for no longer drops it"


def test_within_retrieves_the_error_of_a_check_ending_as_it_is_cancelled() -> None:
    assert _logged(suite.within) == []
