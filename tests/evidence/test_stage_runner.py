"""The pipeline's stage runner (``_settle_until``): a stage call whose task is cancelled before its first step
never ran, and is closed, never left for Python to warn about at garbage collection ("coroutine 'to_thread' was
never awaited", seen in a CI run of a reading test that cancels evidence searches)."""

from __future__ import annotations

import asyncio
import gc
import inspect
import warnings
from collections.abc import Coroutine
from typing import Any

import pytest

from dsweb_ref.tools import evidence_search


def _cancelled_before_the_stage_ran(*, again: bool) -> list[str]:
    """The runner and its stage tasks cancelled together, as a loop's shutdown cancels every task at once: asyncio
    runs ready callbacks in the order they were queued, so the stage's tasks, queued by the runner's first step,
    are still behind this task when it cancels them. ``again``: the runner cancelled a second time while it awaits
    its cancelled tasks. Asserts that no never-awaited warning was raised; returns the calls' states."""
    calls: list[Coroutine[Any, Any, int]] = []

    async def main() -> None:
        calls.extend(asyncio.sleep(0, result=n) for n in range(3))
        loop = asyncio.get_running_loop()
        runner = asyncio.ensure_future(evidence_search._settle_until(calls, loop.time() + 30, "the stage"))
        await asyncio.sleep(0)  # the runner took its first step: its stage tasks are queued behind this task
        stage = asyncio.all_tasks() - {runner, asyncio.current_task()}
        assert len(stage) == 3
        for task in (runner, *stage):
            task.cancel()
        if again:
            await asyncio.sleep(0)  # the runner took its cancel and now awaits its cancelled tasks
            await asyncio.sleep(0)
            runner.cancel()
        with pytest.raises(asyncio.CancelledError):
            await runner

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())
        states = [inspect.getcoroutinestate(c) for c in calls]
        calls.clear()
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)], [str(w.message) for w in caught]
    return states


def test_calls_whose_tasks_are_cancelled_before_their_first_step_are_closed() -> None:
    assert _cancelled_before_the_stage_ran(again=False) == [inspect.CORO_CLOSED] * 3


def test_calls_are_closed_also_when_a_second_cancel_ends_the_runner_while_it_awaits_its_tasks() -> None:
    """A caller cancelled twice (a timeout, then the loop's shutdown): the second cancel ends the runner's wait for
    its cancelled tasks early; the calls that never ran are closed all the same (a review's reproducer)."""
    assert _cancelled_before_the_stage_ran(again=True) == [inspect.CORO_CLOSED] * 3


def test_calls_that_ran_are_left_as_they_ended() -> None:
    """The ordinary path: every call ran to its end and is answered; closing touches none of them."""

    async def main() -> list[object]:
        loop = asyncio.get_running_loop()
        return await evidence_search._settle_until([asyncio.sleep(0, result=n) for n in range(3)],
                                                   loop.time() + 30, "the stage")

    assert asyncio.run(main()) == [0, 1, 2]
