"""Cancelling an evidence call (seed 002's web_search) while its Search or Fetch API requests are in flight.

The adapter protocol's ``cancel`` names any in-flight call, and the pipeline searches and fetches through the
same Search and Fetch API providers as web_search and web_fetch, whose cancellation search.cancel.quiescence and
fetch.cancel.quiescence already hold to seed 000's meaning. This check reads that meaning on the pipeline's own
requests, with the same probe: the emulator parks the requests at a gate, the cancel lands while they are parked,
and the answer must say cancelled (or WEB_ABORTED) and arrive only once the kernel no longer sees any of their
connections open (``batch.require_cancelled``). Ordering comes from the gate, never from sleeps.

Left open (accepted): how many searches or pages the pipeline runs at once (the cancel lands once one search of
the batch is parked; the page row parks the one page of a one-result query), WEB_ABORTED instead of cancelled, and
anything the pipeline does after its requests are closed.
"""

from __future__ import annotations

from typing import Any

from ...emulator import Hold
from ..cases import Case
from ..targets import PendingCall
from ._base import CheckContext, check
from ._script import row, script
from .batch import answer_probe, require_cancelled
from .evidence import REQUIRES
from .fetch import CANCEL_BOUND

SEARCH_QUERIES = ("harbour tug booking hours", "lumen bay pilot fees", "quay crane permit office", "marina berth rates")
PAGE_QUERY = "gull island lighthouse tours"
PAGE_URL = "https://gull-lighthouse.example.org/tours"

CANCEL = (
    Case("searches-held", "the pipeline's searches shielded from the cancel (the call answers cancelled while its "
         "Search API requests run on), or the cancel ignored until the searches answer",
         {"stage": "search", "queries": list(SEARCH_QUERIES)}),
    Case("page-fetch-held", "the pipeline's page fetches shielded from the cancel (the call answers cancelled while "
         "its Fetch API request runs on), or the cancel ignored until the page arrives (or until a page timeout of "
         "the pipeline's own ends the fetch, when that comes later than the 10 s a cancel may take)",
         {"stage": "fetch", "queries": [PAGE_QUERY]}),
)


@check(
    "evidence.cancel.quiescence",
    "Cancelling an evidence call answers cancelled, after every Search and Fetch API request it opened is closed",
    seed="002",
    requires=(*REQUIRES, "cancel"),
    provider="api",
    rule="Seed 002: the evidence tool is a web_search whose batch runs its searches concurrently in the tool's own "
    "code ('concurrency stays in code that can be controlled'), then fetches the pages it selected. Seed 000 fixes "
    "what cancelling a web_search is (caller cancellation propagates to every search, and the call does not return "
    "before quiescence), and seed 001's Harness 'retains cancellation' for the Search and Fetch API providers the "
    "pipeline uses. So an evidence call cancelled while its Search API requests, or its page's Fetch API request, "
    "are in flight answers cancelled (or WEB_ABORTED) with no value, and only once every upstream request it "
    "opened is closed. A cancel ignored until the server answers is not a cancel.",
    cases=CANCEL,
)
async def evidence_cancel(ctx: CheckContext) -> None:
    for case in CANCEL:
        ctx.fresh()
        gate = ctx.emu.gate(f"evidence cancel {case.name}")
        queries: list[str] = case["queries"]
        if case["stage"] == "search":
            # Every search is parked, the cancel lands once one is: how many run at once is evidence.batch's
            # business. A search the emulator reads after the cancel is parked too, so it must be closed as well.
            count, noun = 1, "searches"
            ctx.emu.inject(ctx.search_route, Hold(gate, timeout=30), times=len(queries))
        else:
            script(ctx, PAGE_QUERY, [row(PAGE_URL, "Gull Island lighthouse tours",
                                         "Gull Island lighthouse tours leave the pier at ten.")])
            count, noun = 1, "fetches"  # how many pages go at once is the pipeline's own: one is enough
            ctx.emu.inject("fetch", Hold(gate, timeout=30), times=count)
        call = _start(ctx, queries, case.name)
        await require_cancelled(ctx, call, gate, count, case.name, limit=CANCEL_BOUND, noun=noun,
                                catches=case.catches)


def _start(ctx: CheckContext, queries: list[str], name: str) -> PendingCall:
    """The call with :func:`answer_probe`; a conversation of its own, so no retry memory is in the way."""
    params: dict[str, Any] = {"arguments": {"query": queries},
                              "context": {"id": f"evidence-cancel-{name}", "local_names": []}}
    return ctx.target.start_call("evidence_search", params, answer_probe(ctx))
