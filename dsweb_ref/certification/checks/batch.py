"""Multi-query orchestration (seed 000): concurrency, all-or-nothing failure, quiescence, cancellation.

Ordering is proven with emulator gates and with what the kernel says at the moment the answer
arrives, never with sleeps or time tolerances.

Quiescence: the call carries a probe that runs the instant its answer line is read (see
``CallOutcome.at_answer``). It lists the requests the emulator has not begun to answer (parked at
a gate, so only the client can end them) and asks the kernel whether each one's TCP connection is
still ESTABLISHED on the server side (``_tcp``). On loopback a client's close has turned it into
CLOSE_WAIT before the close call returns, so an implementation that closes its upstream requests
and then answers is never flagged; one that answers first is flagged unless it happens to close
them in the instant between writing the answer and the suite reading it (the example adapter's
subtle break modes make that window deterministic). The check then waits (bounded) for the
emulator to go idle while the gates stay shut: a search left running stays parked and never gets
there. Where the kernel table is unavailable (not Linux) only that idle wait remains.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...emulator import Gate, Hold, Status
from ..targets import CallOutcome
from ._base import (
    ABORTED,
    CALL_TIMEOUT,
    PROVIDER_ERROR,
    CheckContext,
    CheckFailed,
    check,
    expect_error,
    expect_success,
    require,
)
from ._oracle import query_match
from ._tcp import established_peers

WS = "web_search"
QUERIES = ["markdown", "coffee", "asyncio cancellation", "http redirect"]
HELD_BOUND = 5.0  # seconds for every search of a batch to reach the emulator
IDLE_BOUND = 2.0  # seconds for the emulator to see every connection of an answered call gone


async def wait_held(ctx: CheckContext, gate: Gate, count: int, what: str) -> None:
    try:
        await ctx.blocking(gate.wait_held, count, HELD_BOUND)
    except TimeoutError:
        raise CheckFailed(f"{what}: only {gate.held} of {count} upstream searches were in flight at once") from None


@dataclass(frozen=True, slots=True)
class AtAnswer:
    """The upstream requests at the instant the answer arrived."""

    unfinished: tuple[int, ...]  # seqs the emulator had not begun to answer (held at a gate)
    established: tuple[int, ...] | None  # of those, seqs whose connection the client had not closed; None: unknown


def answer_probe(ctx: CheckContext) -> Callable[[], AtAnswer]:
    """A probe for ``start_search``: which upstream requests were still open when the answer arrived."""

    def probe() -> AtAnswer:
        # Only requests the emulator has not begun to answer: one whose response is (being) sent may
        # still await the emulator's own bookkeeping, and its client may keep the connection alive.
        open_records = [r for r in ctx.emu.log.records() if not r.done and r.status is None]
        peers = {r.seq: r.client[1] for r in open_records if r.client is not None}
        live = established_peers(ctx.emu.port, set(peers.values()))
        unfinished = tuple(r.seq for r in open_records)
        if live is None:
            return AtAnswer(unfinished, None)
        return AtAnswer(unfinished, tuple(seq for seq, port in peers.items() if port in live))

    return probe


async def require_quiescent(ctx: CheckContext, outcome: CallOutcome, what: str) -> None:
    seen = outcome.at_answer
    if isinstance(seen, Exception):
        raise seen
    if isinstance(seen, AtAnswer) and seen.established:
        raise CheckFailed(
            f"{what}: answered while {len(seen.established)} upstream request(s) were still open "
            f"(their connections were not closed when the answer arrived)",
            open_at_answer=list(seen.established),
        )
    try:
        await ctx.blocking(ctx.emu.wait_until_idle, IDLE_BOUND)
    except TimeoutError:
        still = [r.seq for r in ctx.records() if not r.done]
        raise CheckFailed(
            f"{what}: answered while {len(still)} upstream request(s) were still open", still_open=still
        ) from None


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
    expect_error(await ctx.search(QUERIES[:3]), "batch with one failing query", PROVIDER_ERROR)


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
    call = ctx.start_search(QUERIES[:3], probe=answer_probe(ctx))
    try:
        await wait_held(ctx, siblings, 2, "siblings")
        await wait_held(ctx, failing, 1, "failing query")
        failing.release()  # the failure now happens while both siblings are parked
        outcome = await call.outcome(CALL_TIMEOUT)
        expect_error(outcome, "batch with one failing query", PROVIDER_ERROR)
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
    call = ctx.start_search(QUERIES[:3], probe=answer_probe(ctx))
    try:
        await wait_held(ctx, gate, 3, "3-query batch")
        await call.cancel()
        outcome = await call.outcome(CALL_TIMEOUT)
        require(
            outcome.cancelled or outcome.error_code == ABORTED,
            f"a cancelled call must answer cancelled or WEB_ABORTED, got {outcome.brief()}",
        )
        require(outcome.value is None, "a cancelled call must carry no value")
        await require_quiescent(ctx, outcome, "cancelled batch")
    finally:
        gate.release()
