"""What the Messages path records (seed 001, capability request-record): "The retained Messages path explicitly
sends thinking: {type: 'disabled'} and records that same body before dispatch."

search.messages.thinking_disabled judges what the emulator receives, and no other check reads what a target
records, so an outside hunt found two wrong readings certified: ``thinking`` added to the payload after the
request is recorded (the record lacks it, the wire has it), and the request recorded after the reply arrives (a
request in flight, or one whose dispatch fails, has no record). Here the protocol's ``recorded_requests`` reads
the target's record: while the emulator holds the Messages request, after it is answered, and after a dispatch
to a port that refuses the connection.

Accepted, as the seed leaves them open: a record re-serialised (any spacing, key order or escaping: bodies are
compared as parsed JSON), records of the Search and Fetch API requests present or absent, extra records (replies,
events), extra fields, and the order of records across requests. Only the Messages request is judged, and a record
is taken for it by holding the query; its URL and provider name are not judged. No seed says whether a record may
hold a credential, so none is judged; a report never quotes a record's text that shows the configured key.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ...emulator import Hold
from ..adapter_protocol import CAP_MESSAGES_SEARCH, CAP_REQUEST_RECORD
from ..cases import ORDER, Case
from ..targets import CallStalled, TargetError
from ._base import CALL_TIMEOUT, CheckContext, CheckFailed, check, expect_success, require
from ._leaks import leak
from .batch import wait_held

WS = "web_search"
QUERY = "markdown tables"  # the emulator's corpus answers it; a record holding it is a record of the search

SAME_BODY = Case("same-body", "thinking added to the payload after the request is recorded (the record lacks "
                 "thinking {type: disabled}, the wire has it), or any other body recorded than the one sent",
                 {"row": "same_body"}, family=ORDER)
HELD = Case("held", "the request recorded after the reply arrives, or in a finally once the exchange ends: while "
            "the Messages request is in flight there is no record of it yet", {"row": "held"}, family=ORDER)
FAILED_DISPATCH = Case("failed-dispatch", "the request recorded only once a reply arrives: a dispatch that fails "
                       "(the connection refused) leaves no record", {"row": "failed_dispatch"}, family=ORDER)
CASES = (SAME_BODY, HELD, FAILED_DISPATCH)


def parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def holds_query(record: dict[str, Any]) -> bool:
    """A record of this check's search: its body holds the query (as written, or once its JSON is read)."""
    body = record.get("body")
    if not isinstance(body, str):
        return False
    return QUERY in body or QUERY in json.dumps(parsed(body), ensure_ascii=False)


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


_ABSENT = object()  # a key the body does not hold


def shown(value: Any, secret: str) -> str:
    """``value`` for a report: absent, or its JSON cut short, unless it shows ``secret``."""
    if value is _ABSENT:
        return "absent"
    text = json.dumps(value, ensure_ascii=False)[:80]
    return "a value that shows the configured key" if leak(text, secret) else text


def differences(recorded_body: Any, sent: dict[str, Any], secret: str) -> str:
    """How a recorded body differs from the sent one, key by key (top level)."""
    if not isinstance(recorded_body, dict):
        return "the recorded body is not a JSON object"
    keys = sorted(k for k in recorded_body.keys() | sent.keys()
                  if recorded_body.get(k, _ABSENT) != sent.get(k, _ABSENT))
    return "; ".join(f"{k}: recorded {shown(recorded_body.get(k, _ABSENT), secret)}, sent "
                     f"{shown(sent.get(k, _ABSENT), secret)}" for k in keys[:4])


async def same_body_row(ctx: CheckContext, case: Case) -> None:
    await ctx.configure(provider="messages", retries=0)
    ctx.fresh()
    expect_success(await ctx.search([QUERY]), f"{case.name}: Messages search", case.catches)
    await ctx.settle()
    sent = [r.json for r in ctx.records("messages")]
    require(sent and all(isinstance(body, dict) for body in sent), f"{case.name}: {len(sent)} Messages request(s) "
            "reached the emulator, each with a JSON object body, expected at least one", catches=case.catches)
    requests = await recorded(ctx, case, "after the search")
    bodies = [parsed(r["body"]) if isinstance(r.get("body"), str) else None for r in requests]
    for body in sent:  # each request sent has a record of its body, parsed alike (spacing, key order, escaping free)
        if body in bodies:
            continue
        ours = [got for record, got in zip(requests, bodies, strict=True) if holds_query(record)]
        near = f"; the record of it differs: {differences(ours[0], body, ctx.config.api_key)}" if ours else (
            "; none holds the query")
        raise CheckFailed(f"{case.name}: none of {len(requests)} record(s) holds the body the Messages request was "
                          f"sent with{near} (seed 001: the Messages path records that same body before dispatch)",
                          catches=case.catches)


async def held_row(ctx: CheckContext, case: Case) -> None:
    """The Messages request parked at the emulator; its record must be there already, and the request is
    released as soon as the record is read."""
    await ctx.configure(provider="messages", retries=0)
    ctx.fresh()
    gate = ctx.emu.gate("request-record")
    ctx.emu.inject("messages", Hold(gate))
    call = ctx.start_search([QUERY])
    try:
        await wait_held(ctx, gate, 1, f"{case.name}: the Messages request", noun="Messages requests",
                        catches=case.catches)
        requests = await recorded(ctx, case, "while the Messages request is held")
    finally:
        gate.release()
    outcome = await call.outcome(CALL_TIMEOUT)
    await ctx.settle()
    require(any(holds_query(r) for r in requests), f"{case.name}: while the Messages request was in flight, none "
            f"of {len(requests)} record(s) held it (the search then answered {outcome.brief()}); seed 001 records "
            "the body before dispatch", catches=case.catches)


@contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port this check owns that refuses every connection: bound, never listening (the kernel
    answers a connect with a reset), so no other process can take it while the row runs."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])
    finally:
        sock.close()


async def failed_dispatch_row(ctx: CheckContext, case: Case) -> None:
    parts = urlsplit(ctx.emu.messages_base)
    with refused_port() as port:
        base = urlunsplit(parts._replace(netloc=f"127.0.0.1:{port}"))
        await ctx.configure(provider="messages", messages_base=base, retries=0)
        ctx.fresh()
        outcome = await ctx.search([QUERY])
        requests = await recorded(ctx, case, "after a Messages request whose connection was refused")
    require(any(holds_query(r) for r in requests), f"{case.name}: the Messages request to a port that refuses the "
            f"connection left none of {len(requests)} record(s) holding it (the search answered {outcome.brief()}); "
            "seed 001 records the body before dispatch, whatever the dispatch then does", catches=case.catches)


ROWS = {"same_body": same_body_row, "held": held_row, "failed_dispatch": failed_dispatch_row}


@check(
    "search.messages.recorded",
    "Messages search records the body it sends, before dispatch",
    seed="001",
    requires=(WS, CAP_MESSAGES_SEARCH, CAP_REQUEST_RECORD),
    provider="messages",
    profiles=("seed-001-request-record",),
    rule="Seed 001: 'The retained Messages path explicitly sends thinking: {type: 'disabled'} and records that same "
    "body before dispatch.' Read through recorded_requests: after a Messages search, each Messages request the "
    "emulator received has a record whose body is, as parsed JSON, the body it received, thinking {type: disabled} "
    "included (spacing, key order and escaping are the target's); while the emulator holds the Messages request, "
    "a record of it (its body holds the query) is there already; and after a Messages request to a loopback port "
    "that refuses the connection, its record is there too. Records of other requests (the Search and Fetch APIs), "
    "extra records or fields, the record's URL and provider name, and the order across requests are the target's.",
    cases=CASES,
)
async def messages_recorded(ctx: CheckContext) -> None:
    for case in CASES:
        await ROWS[case["row"]](ctx, case)
