"""Run a batch of searches concurrently with all-or-nothing failure.

Rules (seed 000): every coroutine starts at once; the first failure *in time*
cancels every sibling; the call returns (or raises) only after every started
task has settled, whether it ended by failure, by caller cancellation or by
success. Completion order is taken from done-callbacks, which the loop runs in
the order tasks finish, so "first" never depends on set iteration order; the
same callbacks wake the batch, so no completion is seen before it is recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from .._exceptions import WebError, WebErrorCode

T = TypeVar("T")

__all__ = ["run_all_or_nothing"]


async def run_all_or_nothing(coros: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Results in input order, or the first failure after the batch is quiescent."""
    tasks = [asyncio.create_task(c) for c in coros]
    finished: list[asyncio.Task[T]] = []
    # The batch wakes from the same callback that records a completion, so a failure is always
    # recorded before the batch looks for one. (asyncio.wait wakes from its own callback: a task
    # finishing in the step between that wake-up and ours was done but not yet recorded, and its
    # failure was missed; issue 14.)
    wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def record(task: asyncio.Task[T]) -> None:
        finished.append(task)
        if not wake.done() and (len(finished) == len(tasks) or _failed(task)):
            wake.set_result(None)

    for task in tasks:
        task.add_done_callback(record)
    if not tasks:
        wake.set_result(None)
    try:
        await wake
    except asyncio.CancelledError:
        # Caller cancellation: pass it to every sibling, wait for all of them, then re-raise.
        await _cancel_and_settle(tasks)
        raise
    failure = _first_failure(finished)
    if failure is not None:
        await _cancel_and_settle(tasks)
        raise failure
    return [t.result() for t in tasks]


def _failed(task: asyncio.Task[Any]) -> bool:
    # A sibling cancelled by someone else is a failure too.
    return task.cancelled() or task.exception() is not None


def _first_failure(finished: list[asyncio.Task[Any]]) -> BaseException | None:
    # Only called before this function cancels anything, so a cancelled task here was
    # cancelled by something else (e.g. a provider's own task group tearing down).
    for task in finished:
        if task.cancelled():
            return WebError(WebErrorCode.ABORTED, "a search of the batch was cancelled")
        if task.exception() is not None:
            return task.exception()
    return None


async def _cancel_and_settle(tasks: list[asyncio.Task[Any]]) -> None:
    for task in tasks:
        task.cancel()
    cancelled_again = False
    while True:
        pending = [t for t in tasks if not t.done()]
        if not pending:
            break
        try:
            await asyncio.wait(pending)
        except asyncio.CancelledError:
            # Quiescence beats a repeated cancel: keep waiting, re-raise afterwards.
            cancelled_again = True
    for task in tasks:  # mark exceptions as retrieved; the caller gets the first one
        if not task.cancelled():
            task.exception()
    if cancelled_again:
        raise asyncio.CancelledError
