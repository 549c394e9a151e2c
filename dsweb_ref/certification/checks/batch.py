"""Multi-query orchestration (seed 000): concurrency, all-or-nothing failure, quiescence, cancellation.

Ordering is proven with emulator gates, never with sleeps. Quiescence is read from the request log:
when the answer arrives no upstream request of the call may still be open. The emulator learns of
a client's disconnect on its own loop a moment after the socket closes, so the check first waits
(bounded) for the emulator to go idle while the gates stay shut - an implementation that left a
search running keeps it parked and never gets there - and then allows LAG seconds between the
answer and the last request's end.
"""

from __future__ import annotations

from ..emulator import Gate, Hold, Status
from ..targets import CallOutcome
from ._base import CALL_TIMEOUT, CheckContext, CheckFailed, check, expect_error, expect_success, require
from ._oracle import query_match

WS = "web_search"
QUERIES = ["markdown", "coffee", "asyncio cancellation", "http redirect"]
HELD_BOUND = 5.0  # seconds for every search of a batch to reach the emulator
IDLE_BOUND = 2.0  # seconds for the emulator to see every connection of an answered call gone
LAG = 0.5  # seconds the emulator may take to notice a closed connection


async def wait_held(ctx: CheckContext, gate: Gate, count: int, what: str) -> None:
    try:
        await ctx.blocking(gate.wait_held, count, HELD_BOUND)
    except TimeoutError:
        raise CheckFailed(f"{what}: only {gate.held} of {count} upstream searches were in flight at once") from None


async def require_quiescent(ctx: CheckContext, outcome: CallOutcome, what: str) -> None:
    try:
        await ctx.blocking(ctx.emu.wait_until_idle, IDLE_BOUND)
    except TimeoutError:
        still = len([r for r in ctx.records() if not r.done])
        raise CheckFailed(f"{what}: answered while {still} upstream request(s) were still open") from None
    late = [r.seq for r in ctx.records() if r.finished is not None and r.finished > outcome.answered_at + LAG]
    require(not late, f"{what}: upstream requests {late} ended after the answer", late=late)


@check(
    "search.batch.concurrent",
    "Every search of a 4-query batch is in flight at once",
    seed="000",
    requires=(WS,),
)
async def batch_concurrent(ctx: CheckContext) -> None:
    gate = ctx.emu.gate("batch")
    ctx.emu.inject(ctx.search_route, Hold(gate, timeout=30), times=4)
    call = ctx.start_search(QUERIES)
    try:
        await wait_held(ctx, gate, 4, "4-query batch")
    finally:
        gate.release()
    expect_success(await call.outcome(CALL_TIMEOUT), "4-query batch")


@check(
    "search.batch.all_or_nothing",
    "One failing query fails the whole call with a WEB_* error and no partial value",
    seed="000",
    requires=(WS,),
)
async def all_or_nothing(ctx: CheckContext) -> None:
    ctx.emu.inject(ctx.search_route, Status(500), when=query_match(ctx.search_route, QUERIES[1]))
    expect_error(await ctx.search(QUERIES[:3]), "batch with one failing query")


@check(
    "search.batch.quiescence",
    "A failing batch answers only after every sibling's upstream request is closed",
    seed="000",
    requires=(WS,),
)
async def batch_quiescence(ctx: CheckContext) -> None:
    route = ctx.search_route
    siblings, failing = ctx.emu.gate("siblings"), ctx.emu.gate("failing")
    ctx.emu.inject(route, Hold(failing, timeout=30, then=Status(500)), when=query_match(route, QUERIES[1]))
    ctx.emu.inject(route, Hold(siblings, timeout=30), times=2)
    call = ctx.start_search(QUERIES[:3])
    try:
        await wait_held(ctx, siblings, 2, "siblings")
        await wait_held(ctx, failing, 1, "failing query")
        failing.release()  # the failure now happens while both siblings are parked
        outcome = await call.outcome(CALL_TIMEOUT)
        expect_error(outcome, "batch with one failing query")
        await require_quiescent(ctx, outcome, "failed batch")
    finally:
        siblings.release()
        failing.release()


@check(
    "search.cancel.quiescence",
    "Cancelling an in-flight batch reaches every search and answers only after all are closed",
    seed="000",
    requires=(WS, "cancel"),
)
async def cancel_quiescence(ctx: CheckContext) -> None:
    gate = ctx.emu.gate("cancel")
    ctx.emu.inject(ctx.search_route, Hold(gate, timeout=30), times=3)
    call = ctx.start_search(QUERIES[:3])
    try:
        await wait_held(ctx, gate, 3, "3-query batch")
        await call.cancel()
        outcome = await call.outcome(CALL_TIMEOUT)
        require(
            outcome.cancelled or outcome.error_code == "WEB_ABORTED",
            f"a cancelled call must answer cancelled or WEB_ABORTED, got {outcome.brief()}",
        )
        require(outcome.value is None, "a cancelled call must carry no value")
        await require_quiescent(ctx, outcome, "cancelled batch")
    finally:
        gate.release()
