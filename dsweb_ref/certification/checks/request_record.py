"""What the Messages path records (seed 001, capability request-record): "The retained Messages path explicitly
sends thinking: {type: 'disabled'} and records that same body before dispatch."

search.messages.thinking_disabled judges what the emulator receives, and no other check reads what a target
records, so an outside hunt found two wrong readings certified: ``thinking`` added to the payload after the
request is recorded (the record lacks it, the wire has it), and the request recorded after the reply arrives (a
request in flight, or one whose dispatch fails, has no record). Here the protocol's ``recorded_requests`` reads
the target's record: after a Messages search is answered (one query, and a batch of two: a hunt found a batch's
requests sent unrecorded, their queries searched without the recorder), while the emulator holds the Messages request,
and after a dispatch to a loopback listener that closes every connection unanswered.

The batch, held and failed-dispatch rows each search queries of their own (a nonce per run), so a record left from an
earlier row, configure or run never stands in for theirs; the held row compares the record with the body the
emulator holds, and the failed-dispatch row, whose body never arrives anywhere, requires thinking disabled in it
(the seed puts it in the body the path sends). A record may land a moment after it is handed over (a log writer):
each row reads ``recorded_requests`` until the record it wants is there or a short bound passes.

Accepted, as the seed leaves them open: a record re-serialised (any spacing, key order or escaping: bodies are
compared as parsed JSON), a body given as a JSON object instead of JSON text, records of the Search and Fetch API
requests present or absent, extra records (replies, events), extra fields, and the order of records across
requests. Only the Messages request is judged, and a record is taken for it by holding the query; its URL and
provider name are not judged. No seed says whether a record may hold a credential, so none is judged; a report
never quotes a record's text (a value or a key name) that shows the configured key.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ...emulator import Hold
from ..adapter_protocol import CAP_MESSAGES_SEARCH, CAP_REQUEST_RECORD
from ..cases import ORDER, SCOPE, Case
from ..sandbox import ConnectionTrap
from ..targets import CallStalled, TargetError
from ._base import CALL_TIMEOUT, CheckContext, CheckFailed, check, expect_success, require
from ._leaks import leak
from .batch import wait_held

WS = "web_search"
QUERY = "markdown tables"  # the emulator's corpus answers it; a record holding it is a record of the search
BATCH_QUERY = "coffee brewing"  # the batch row's second query (the corpus answers it too)
THINKING_OFF = {"type": "disabled"}
POLL_BOUND = 2.0  # seconds a record may take to land after it is handed over (a log writer, a flush)
POLL_EVERY = 0.02

SAME_BODY = Case("same-body", "thinking added to the payload after the request is recorded (the record lacks "
                 "thinking {type: disabled}, the wire has it), or any other body recorded than the one sent",
                 {"row": "same_body"}, family=ORDER)
HELD = Case("held", "the request recorded after the reply arrives, or in a finally once the exchange ends (while "
            "the Messages request is in flight there is no record of it yet), or a record made before dispatch "
            "that is not the body sent (thinking added after it, or a stub beside the exchange recorded later)",
            {"row": "held"}, family=ORDER)
FAILED_DISPATCH = Case("failed-dispatch", "the request recorded only once a reply arrives: a dispatch that fails "
                       "(the connection closed unanswered) leaves no record, or one without thinking {type: "
                       "disabled}", {"row": "failed_dispatch"}, family=ORDER)
# From a hunt (P-B4): a batch's Messages searches went out without a record. The tool handed each query of a batch a
# call context of its own that dropped the recorder, so one-query calls were recorded and a batch's requests never
# were, and every row searched one query. The path records every Messages request it sends, one per query.
SAME_BODY_BATCH = Case("same-body-batch", "only one-query calls recorded: the queries of a batch searched without "
                       "the recorder (a call context made afresh for each), so their Messages requests go out with no "
                       "record", {"row": "same_body", "batch": True}, family=SCOPE)
CASES = (SAME_BODY, SAME_BODY_BATCH, HELD, FAILED_DISPATCH)


def parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def body_of(record: dict[str, Any]) -> Any:
    """A record's body as parsed JSON: JSON text read, a JSON object taken as it is (already parsed), else None."""
    body = record.get("body")
    if isinstance(body, str):
        return parsed(body)
    return body if isinstance(body, dict) else None


def holds_query(record: dict[str, Any], query: str = QUERY) -> bool:
    """A record of a search for ``query``: its body holds it (as written, or once its JSON is read)."""
    body = record.get("body")
    if isinstance(body, str) and query in body:
        return True
    value = body_of(record)
    if value is None:
        return False
    try:
        return query in json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return False


def thinking_off(record: dict[str, Any]) -> bool:
    body = body_of(record)
    return isinstance(body, dict) and body.get("thinking") == THINKING_OFF


async def recorded(ctx: CheckContext, case: Case, when: str) -> list[dict[str, Any]]:
    """``recorded_requests``' list (each entry an object); a failure names what came, never a record's text."""
    what = f"{case.name}: recorded_requests {when}"
    try:
        outcome = await ctx.target.start_call("recorded_requests", {}).outcome(CALL_TIMEOUT)
    except CallStalled:
        raise CheckFailed(f"{what} got no answer in time (it is answered at once, beside the calls in flight)",
                          catches=case.catches) from None
    except TargetError as exc:  # its text may quote the answer line (a key among the records): its kind only
        raise CheckFailed(f"{what} got no valid answer ({type(exc).__name__})", catches=case.catches) from None
    require(outcome.ok, f"{what} answered {outcome.brief()}, expected {{\"requests\": [...]}}", catches=case.catches)
    value = outcome.value
    requests = value.get("requests") if isinstance(value, dict) else None
    require(isinstance(requests, list) and all(isinstance(r, dict) for r in requests),
            f"{what} answered no list of request objects under \"requests\"", catches=case.catches)
    assert isinstance(requests, list)
    return requests


async def polled(ctx: CheckContext, case: Case, when: str,
                 done: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
    """``recorded_requests`` read until ``done`` holds of its list or POLL_BOUND passes (the last list then): a
    record handed to a log writer before dispatch may land a moment later, and is still made before dispatch.
    Waiting lets no wrong reading through: while the emulator holds the request no reply can arrive, and a
    connection closed unanswered never brings one, so a record made once the reply came (or in a finally) is
    still missing; and the same-body row judges what the record holds, not when it was made."""
    loop = asyncio.get_running_loop()
    end = loop.time() + POLL_BOUND
    while True:
        requests = await recorded(ctx, case, when)
        if done(requests) or loop.time() >= end:
            return requests
        await asyncio.sleep(POLL_EVERY)


def unread(requests: list[dict[str, Any]]) -> str:
    """A note on records whose body is neither text nor a JSON object (base64, a byte list): never matched."""
    count = sum(1 for r in requests if not isinstance(r.get("body"), (str, dict)))
    return (f"; {count} record(s) have a body that is neither text nor a JSON object (the protocol asks for JSON "
            "text)") if count else ""


_ABSENT = object()  # a key the body does not hold


def shown(value: Any, secret: str) -> str:
    """``value`` for a report: absent, or its JSON cut short, unless it shows ``secret``."""
    if value is _ABSENT:
        return "absent"
    try:
        text = json.dumps(value, ensure_ascii=False)[:80]
    except (TypeError, ValueError, RecursionError):
        return "a value that is not JSON"
    return "a value that shows the configured key" if leak(text, secret) else text


def differences(recorded_body: Any, sent: dict[str, Any], secret: str) -> str:
    """How a recorded body differs from the sent one, key by key (top level). A key name is the target's text
    too: cut short, and left out (counted) when it shows ``secret``."""
    if not isinstance(recorded_body, dict):
        return "the recorded body is not a JSON object"
    keys = sorted((k for k in recorded_body.keys() | sent.keys()
                   if recorded_body.get(k, _ABSENT) != sent.get(k, _ABSENT)), key=str)
    named = [(k, json.dumps(str(k), ensure_ascii=False)[:40].strip('"')) for k in keys]
    hidden = sum(1 for _, name in named if leak(name, secret))
    parts = [f"{name}: recorded {shown(recorded_body.get(k, _ABSENT), secret)}, sent "
             f"{shown(sent.get(k, _ABSENT), secret)}" for k, name in named if not leak(name, secret)][:4]
    if hidden:
        parts.append(f"{hidden} key(s) whose name shows the configured key")
    return "; ".join(parts)


async def same_body_row(ctx: CheckContext, case: Case) -> None:
    """One search, or with ``batch`` a batch of two queries of the row's own (a record an earlier row or run left of
    a like body never stands in for theirs); each Messages request the emulator received has a record of its body."""
    queries = [nonce_query(), f"{BATCH_QUERY} {secrets.token_hex(4)}"] if case.params.get("batch") else [QUERY]
    await ctx.configure(provider="messages", retries=0)
    ctx.fresh()
    search = "a batch Messages search" if len(queries) > 1 else "Messages search"
    expect_success(await ctx.search(queries), f"{case.name}: {search}", case.catches)
    await ctx.settle()
    sent = [r.json for r in ctx.records("messages")]
    require(len(sent) >= len(queries) and all(isinstance(body, dict) for body in sent), f"{case.name}: {len(sent)} "
            f"Messages request(s) reached the emulator, each with a JSON object body, expected at least "
            f"{len(queries)} (one per query)", catches=case.catches)

    def each_sent_recorded(requests: list[dict[str, Any]]) -> bool:
        bodies = [body_of(r) for r in requests]
        return all(body in bodies for body in sent)

    requests = await polled(ctx, case, "after the search", each_sent_recorded)
    bodies = [body_of(r) for r in requests]
    for body in sent:  # each request sent has a record of its body, parsed alike (spacing, key order, escaping free)
        if body in bodies:
            continue
        query = next((q for q in queries if q in json.dumps(body, ensure_ascii=False)), queries[0])
        ours = [got for record, got in zip(requests, bodies, strict=True) if holds_query(record, query)]
        near = f"; the record of it differs: {differences(ours[0], body, ctx.config.api_key)}" if ours else (
            "; none holds its query" + unread(requests))
        which = f"the Messages request of query {queries.index(query) + 1} of {len(queries)} (a batch)" if len(
            queries) > 1 else "the Messages request"
        raise CheckFailed(f"{case.name}: none of {len(requests)} record(s) holds the body {which} was sent with{near} "
                          "(seed 001: the Messages path records that same body before dispatch)", catches=case.catches)


def nonce_query() -> str:
    """A query of this row alone: a record left from an earlier row, configure or run never holds it."""
    return f"{QUERY} {secrets.token_hex(4)}"


async def held_row(ctx: CheckContext, case: Case) -> None:
    """The Messages request parked at the emulator; its record, the body the emulator holds, must be there
    already, and the request is released as soon as it is (or the bound passes)."""
    await ctx.configure(provider="messages", retries=0)
    ctx.fresh()
    gate = ctx.emu.gate("request-record")
    ctx.emu.inject("messages", Hold(gate))
    query = nonce_query()
    call = ctx.start_search([query])
    wire: list[Any] = []

    def held_body_recorded(requests: list[dict[str, Any]]) -> bool:
        return any(holds_query(r, query) and body_of(r) in wire for r in requests)

    try:
        await wait_held(ctx, gate, 1, f"{case.name}: the Messages request", noun="Messages requests",
                        catches=case.catches)
        wire = [r.json for r in ctx.records("messages") if isinstance(r.json, dict)]
        requests = await polled(ctx, case, "while the Messages request is held", held_body_recorded)
    finally:
        gate.release()
    outcome = await call.outcome(CALL_TIMEOUT)
    await ctx.settle()
    if held_body_recorded(requests):
        return
    ours = [body_of(r) for r in requests if holds_query(r, query)]
    if ours and wire:
        raise CheckFailed(f"{case.name}: while the Messages request was in flight, the record of it was not the body "
                          f"the emulator held: {differences(ours[0], wire[0], ctx.config.api_key)} (the search then "
                          f"answered {outcome.brief()}); seed 001 records that same body before dispatch",
                          catches=case.catches)
    raise CheckFailed(f"{case.name}: while the Messages request was in flight, none of {len(requests)} record(s) "
                      f"held it{unread(requests)} (the search then answered {outcome.brief()}); seed 001 records "
                      "the body before dispatch", catches=case.catches)


async def failed_dispatch_row(ctx: CheckContext, case: Case) -> None:
    parts = urlsplit(ctx.emu.messages_base)
    query = nonce_query()

    def recorded_with_thinking(requests: list[dict[str, Any]]) -> bool:
        return any(holds_query(r, query) and thinking_off(r) for r in requests)

    # A loopback listener this check owns that accepts each connection and closes it unread and unanswered: the
    # request may be written (a recorder placed after the connect still records it) but no reply ever comes.
    trap = ConnectionTrap()
    try:
        base = urlunsplit(parts._replace(netloc=f"127.0.0.1:{trap.port}"))
        await ctx.configure(provider="messages", messages_base=base, retries=0)
        ctx.fresh()
        outcome = await ctx.search([query])
        requests = await polled(ctx, case, "after a Messages request whose connection was closed unanswered",
                                recorded_with_thinking)
    finally:
        trap.close()
    if recorded_with_thinking(requests):
        return
    ours = [r for r in requests if holds_query(r, query)]
    found = (f"its record lacks thinking {json.dumps(THINKING_OFF)} (seed 001: the path sends it, and records "
             "that same body)") if ours else f"none of {len(requests)} record(s) holds it{unread(requests)}"
    raise CheckFailed(f"{case.name}: the Messages request to a port that closes the connection unanswered: {found} "
                      f"(the search answered {outcome.brief()}); seed 001 records the body before dispatch, whatever "
                      "the dispatch then does", catches=case.catches)


ROWS = {"same_body": same_body_row, "held": held_row, "failed_dispatch": failed_dispatch_row}


@check(
    "search.messages.recorded",
    "Messages search records the body it sends, before dispatch",
    seed="001",
    requires=(WS, CAP_MESSAGES_SEARCH, CAP_REQUEST_RECORD),
    provider="messages",
    profiles=("seed-001-request-record",),
    rule="Seed 001: 'The retained Messages path explicitly sends thinking: {type: 'disabled'} and records that same "
    "body before dispatch.' Read through recorded_requests: after a Messages search, and after a batch of two "
    "queries of the row's own (the path sends one request per query, each recorded alike), each Messages request the "
    "emulator received has a record whose body is, as parsed JSON, the body it received, thinking {type: disabled} "
    "included (spacing, key order and escaping are the target's; JSON text or a JSON object); while the emulator "
    "holds the Messages request (a query of the row's own), a record of it is there already, the body the emulator "
    "holds; and after a Messages request to a loopback listener that closes the connection unanswered, its record "
    "(a query of the row's own) is there too, with thinking {type: disabled}. A record may land up to 2 s after it "
    "is handed over. Records of other requests (the Search and Fetch APIs), extra records or fields, the record's "
    "URL and provider name, and the order across requests are the target's.",
    cases=CASES,
)
async def messages_recorded(ctx: CheckContext) -> None:
    for case in CASES:
        await ROWS[case["row"]](ctx, case)
