"""Settings saved while the tools run (seed 001, capability live-settings): "The switch defaults off and takes
effect after saving, because the web service reads both selections for each operation", and "Each operation
resolves one settings snapshot, including its endpoint and credentials."

Every other check configures the target afresh (``configure`` rebuilds it), so an implementation that reads its
credential, its base or its provider selection once (at construction, per process, per provider instance)
certifies there, and so does one that reads the settings again for each HTTP request of one operation. Here the
protocol's ``settings_save`` changes settings while the target runs, and each row reads off the wire what the next
operation, or the one under way, resolved: its key, base and selection, and (a hunt found options read once beside
an endpoint and credential read per operation) the Search API's sendOriginalQuestion and count and the Messages
max_uses, and (a hunt found a retry and pacing policy built once, and a credential route chosen once) the retries, the
pacing and the account route.

Which key a request carried is read from the emulator's log, which holds credentials masked (their last four
characters): the configured key and the saved one differ there, and a report names them "the configured key" and
"the saved key", never by value. Accepted, as the seed leaves them open: a target that rebuilds its clients on
save, one that pools clients per key and base, one that reads the settings afresh for each operation; what a
target does for an operation that starts before the save is answered (no row starts one then, but the one it
holds across the save).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from urllib.parse import urlsplit

from ...emulator import DEFAULT_ACCOUNT_TOKEN, DEFAULT_API_KEY, Gate, Hold, Status, mask
from ...emulator.log import RequestRecord
from ...emulator.server import OTHER_TOOLS_PREFIXES
from ..adapter_protocol import (
    CAP_ACCOUNT_ROUTE,
    CAP_FETCH_API,
    CAP_LIVE_SETTINGS,
    CAP_MESSAGES_SEARCH,
    CAP_PACING,
    CAP_RETRY,
    CAP_WEB_FETCH,
)
from ..calibration import NOT_SHOWN
from ..cases import SCOPE, Case
from ..targets import CallOutcome, PendingCall, TargetError
from ._base import CALL_TIMEOUT, CheckContext, CheckFailed, check, expect_success, require
from ._fakes import SAVED_KEY
from .batch import wait_held

WS, API = "web_search", "search-api"
QUERY = "markdown tables"
OTHER_PREFIX = OTHER_TOOLS_PREFIXES[0]  # /deepseek/tools: another deployment's complete base
# The page the Fetch API is asked for: a loopback URL, so that a target whose fetch stayed on its own HTTP fetcher
# (the wrong reading) refuses it or reaches the emulator, never a name outside this machine.
PAGE_PATH = "/live-settings/page"
PAGE = json.dumps({"title": "Saved settings", "content": "# Saved settings\n\nThe switch took effect."}).encode()
RETRYABLE = Status(503, headers={"Retry-After": "0"})  # the held request's answer: retried at once
# How long the held search waits for the save's answer before it is released anyway: a target may answer a save
# only once the operations under way end (the seed does not say when a save is answered), and then holding the
# search until the answer would deadlock. A save answered later is judged as one made during the search all the same.
SAVE_ANSWER_WAIT = 3.0

KEY = Case("a key saved between two operations", "the credential read once (at construction, per process or per "
           "provider instance), so the search after a saved key still carries the configured one; or read afresh by "
           "one API or protocol only (the Fetch API's, with fetch-api, or Messages search's, with messages-search, "
           "still the configured one)", {"row": "key"})
SWITCH = Case("the switch saved between two operations", "the provider selection read at construction (the switch "
              "takes effect only after a restart), or the switch moving the search selection only: saved on, "
              "web_fetch stays on the local HTTP fetcher, or saved off again, web_fetch stays on the Fetch API "
              "(with messages-search; the web_fetch steps with fetch-api)",
              {"row": "switch"}, family=SCOPE)
BASE = Case("a base saved between two operations", "the API base read once (at construction, or per client made), "
            "so the search after a saved base goes to the configured one; or read afresh for search only (the Fetch "
            "API request, with fetch-api, still goes to the configured base)", {"row": "base"})
IN_FLIGHT = Case("a save while a search is under way", "the settings read again for each HTTP request of one "
                 "operation: the retry of a search held across a save of key and base carries the saved key, or "
                 "goes to the saved base; or the save made while busy lost, so the next search still carries the "
                 "configured key to the configured base (with retry)", {"row": "in_flight"}, family=SCOPE)
PACED = Case("a save while a paced query waits for its slot", "the endpoint and credential resolved when the request "
             "is sent, the rest at the operation's start (a queue-style limiter that builds the request when its slot "
             "comes): a query of a batch that waits for its pacing slot across a save of key, base and count carries "
             "the saved key to the saved base with the configured count, one request from two snapshots (with pacing)",
             {"row": "paced"}, family=SCOPE)
# From a hunt (P-B1): a Search API provider that read sendOriginalQuestion and count once (at its first operation) and
# its key and base per operation certified: every row saved only a key, a base or the switch, so a user who turned
# the prompt off for privacy kept sending it to the search service until a restart. So did a Messages provider that
# read its own options once beside a credential and base read per operation.
OPTIONS = Case("sendOriginalQuestion and count saved between two operations", "the Search API options read once (at "
               "construction, or at the provider's first operation) while key and base are read per operation: after "
               "saving sendOriginalQuestion off and count 3, the next search with a prompt still sends ori_question, "
               "or still the configured count (min(10, 8) = 8)", {"row": "options"}, family=SCOPE)
MESSAGES_OPTIONS = Case("max_uses saved between two Messages operations", "the Messages options (model, max_tokens, "
                        "max_uses) read once while key and base are read per operation: after saving max_uses 2 the "
                        "next Messages search still sends the configured 5 (with messages-search)",
                        {"row": "messages_options"}, family=SCOPE)
# From a hunt (T1-1): a target whose retry and pacing policy was built once (at configure: a retry decorator or a
# limiter made with the runtime) while key, base, count and ori_question were read per operation certified: no row
# saved retries or a pacing rate, so a saved one did nothing until the next configure. Both rows are judged by request
# counts: the pacing row's rate (a slot every 100 s) puts a still-paced second request past the search's deadline and
# the suite's wait for the call, whatever the machine's load.
SLOW_QPS = 0.01  # a slot every 100 s: past the search's deadline (timeout_s 30 s) and the suite's wait for a call
RETRIES = Case("retries saved between two operations", "the retry policy built once (at configure, a retry "
               "decorator made with the runtime) while key, base and options are read per operation: after saving "
               "retries 2 over the configured 0, a search answered 503 (Retry-After 0) then 200 still sends one "
               "request and fails; or, saved 0 again, still retries (with retry)", {"row": "retries"}, family=SCOPE)
PACING_OFF = Case("pacing saved off between two operations", "the pacer built once (at configure, a limiter made with "
                  f"the runtime): after saving pacing off over a configured {SLOW_QPS:g} QPS, a two-query search "
                  "still waits 100 s for the second query's slot, so it sends one request or none, not one per query "
                  "at once (with pacing)", {"row": "pacing_off"}, family=SCOPE)
# From a hunt (T1-5): a target that chose its credential route (API key or account token) at construction while it
# read the key and token values per operation certified: a saved key reached the next search, a saved auth: account
# never did, and no row saved the route.
ACCOUNT = Case("the account route saved between two operations", "the credential route chosen at construction while "
               "the key and token values are read per operation: after saving auth account, the next Search (and, with "
               "fetch-api, Fetch) API request still carries the API key, not the account token (with account-route)",
               {"row": "account"})
CASES = (KEY, SWITCH, BASE, OPTIONS, MESSAGES_OPTIONS, IN_FLIGHT, PACED, RETRIES, PACING_OFF, ACCOUNT)
SHOWN = {DEFAULT_API_KEY: "the configured key", SAVED_KEY: "the saved key"}


def key_of(record: RequestRecord) -> str:
    """Which key a request carried, in words ("the configured key", "the saved key", "the account token"), read from
    its masked header; otherwise what the emulator made of its credential."""
    if record.credential == "account_token":
        return "the account token"
    if record.credential != "api_key":
        return f"a credential the emulator took as {record.credential}"
    header = record.header(record.credential_source or "authorization") or ""
    return next((shown for key, shown in SHOWN.items() if header.endswith(mask(key))), "another key")


def path_of(base: str, route: str) -> str:
    return urlsplit(base).path + "/" + route


async def save(ctx: CheckContext, case: Case, **keys: object) -> None:
    """``settings_save`` of ``keys``, answered ``{}`` (a failure names the keys, never their values)."""
    what = f"{case.name}: settings_save of {', '.join(sorted(keys))}"
    try:
        outcome = await ctx.target.start_call("settings_save", dict(keys)).outcome(CALL_TIMEOUT)
    except TargetError as exc:  # its text may quote the answer line: only its kind is shown
        raise CheckFailed(f"{what} got no valid answer ({type(exc).__name__})", catches=case.catches) from None
    if outcome.ok and outcome.value != {}:  # the shape of what came, never its values (a key may be among them)
        got = sorted(outcome.value) if isinstance(outcome.value, dict) else type(outcome.value).__name__
        raise CheckFailed(f"{what} answered a result of {got}, expected {{}}", catches=case.catches)
    require(outcome.ok, f"{what} answered {outcome.brief()}, expected {{}}", catches=case.catches)


async def searched(ctx: CheckContext, case: Case, step: str) -> RequestRecord:
    """One search of :data:`QUERY` afresh; its one request (to either route)."""
    ctx.fresh()
    expect_success(await ctx.search([QUERY]), f"{case.name}: {step}: web_search", case.catches)
    records = [r for r in ctx.records() if r.route in ("search", "messages")]
    require(len(records) == 1, f"{case.name}: {step}: {len(records)} search request(s), expected one",
            catches=case.catches)
    return records[0]


async def fetched(ctx: CheckContext) -> list[RequestRecord]:
    """One web_fetch of the loopback page afresh (the Fetch API answers it); the requests it sent the emulator.
    Its outcome is not judged here: the rows read where it went and what it carried."""
    ctx.fresh()
    ctx.emu.inject("fetch", Status(200, body=PAGE))
    await ctx.fetch(ctx.emu.base_url + PAGE_PATH)
    await ctx.settle()
    return ctx.records()


def fetches(ctx: CheckContext) -> bool:
    return {CAP_WEB_FETCH, CAP_FETCH_API} <= ctx.hello.capabilities


async def carried(ctx: CheckContext, case: Case, step: str, shown: str, why: str = "") -> None:
    """The next search's Search API request carried the credential ``shown`` (in words, :func:`key_of`), and so did
    its Fetch API request when the target fetches through the Fetch API."""
    got = key_of(await searched(ctx, case, step))
    require(got == shown, f"{case.name}: {step}: the Search API request carried {got}, expected {shown}",
            catches=case.catches)
    if fetches(ctx):
        keys = [key_of(r) for r in await fetched(ctx) if r.route == "fetch"]
        require(keys == [shown], f"{case.name}: {step}: the Fetch API request(s) carried {keys or 'nothing'}, "
                f"expected {shown}{why}", catches=case.catches)


async def key_row(ctx: CheckContext, case: Case) -> None:
    # Seed 001: "Both APIs read one credential and one API base": the Fetch API's request is judged like the search's.
    await ctx.configure(provider="api", api_key=DEFAULT_API_KEY, tools_base=ctx.emu.tools_base, retries=0)
    for step, shown in (("before the save", "the configured key"), ("after saving another key", "the saved key")):
        if step != "before the save":
            await save(ctx, case, api_key=SAVED_KEY)
        await carried(ctx, case, step, shown, " (both APIs read one credential)")
    if CAP_MESSAGES_SEARCH not in ctx.hello.capabilities:
        return
    await ctx.configure(provider="messages", api_key=DEFAULT_API_KEY, tools_base=ctx.emu.tools_base, retries=0)
    for step, shown in (("Messages search before the save", "the configured key"),
                        ("Messages search after saving another key", "the saved key")):
        if shown == "the saved key":
            await save(ctx, case, api_key=SAVED_KEY)
        got = key_of(await searched(ctx, case, step))
        require(got == shown, f"{case.name}: {step}: the Messages request carried {got}, expected {shown}",
                catches=case.catches)


async def switch_row(ctx: CheckContext, case: Case) -> None:
    fetch = {CAP_WEB_FETCH, CAP_FETCH_API} <= ctx.hello.capabilities
    await ctx.configure(provider="messages", api_key=DEFAULT_API_KEY, tools_base=ctx.emu.tools_base, retries=0)
    for step, provider, route in (("switch off", None, "messages"), ("after saving the switch on", "api", "search"),
                                  ("after saving it off again", "messages", "messages")):
        if provider is not None:
            await save(ctx, case, provider=provider)
        got = (await searched(ctx, case, step)).route
        require(got == route, f"{case.name}: {step}: web_search went to {got}, expected {route} (the web service "
                "reads the selection for each operation)", catches=case.catches)
        if not fetch or provider is None:  # before any save the fetch selection is the configure's, judged elsewhere
            continue
        if route != "search":
            # Off again, web_fetch is the local HTTP fetcher's ("off restores Messages search with local HTTP fetch"):
            # the page is a loopback literal, so that fetcher refuses it (or, without an address policy, reaches the
            # emulator's page route); either way no Fetch API request.
            routes = [r.route for r in await fetched(ctx)]
            require("fetch" not in routes, f"{case.name}: {step}: web_fetch sent a Fetch API request, expected none "
                    "(saved off, the switch restores local HTTP fetch)", catches=case.catches)
            continue
        ctx.fresh()
        ctx.emu.inject("fetch", Status(200, body=PAGE))
        outcome = await ctx.fetch(ctx.emu.base_url + PAGE_PATH)
        routes = [r.route for r in ctx.records()]
        require(routes == ["fetch"], f"{case.name}: {step}: web_fetch sent {routes or 'no request'} to the "
                "emulator, expected one Fetch API request (the switch writes both selections)", catches=case.catches)
        expect_success(outcome, f"{case.name}: {step}: web_fetch", case.catches)


async def base_row(ctx: CheckContext, case: Case) -> None:
    other = ctx.emu.base_url + OTHER_PREFIX
    await ctx.configure(provider="api", api_key=DEFAULT_API_KEY, tools_base=ctx.emu.tools_base, retries=0)
    for step, base in (("before the save", ctx.emu.tools_base), ("after saving another base", other)):
        if base == other:
            await save(ctx, case, tools_base=other)
        got, want = (await searched(ctx, case, step)).path, path_of(base, "search")
        require(got == want, f"{case.name}: {step}: the Search API request went to {got}, expected {want}",
                catches=case.catches)
        if fetches(ctx):
            paths, want = [r.path for r in await fetched(ctx) if r.route == "fetch"], path_of(base, "fetch")
            require(paths == [want], f"{case.name}: {step}: the Fetch API request(s) went to {paths or 'nowhere'}, "
                    f"expected {want} (both APIs read one API base)", catches=case.catches)


PROMPT = "which   markdown table syntax\tdo I need?"  # a usable latest prompt: ori_question is sent while it is on
SAVED_COUNT = 3  # the configured count is 10: the request body shows which snapshot its count came from
SAVED_MAX_USES = 2  # the configured max_uses is 5


async def options_row(ctx: CheckContext, case: Case) -> None:
    """A search with a prompt before and after saving sendOriginalQuestion off and count 3 (the bound stays 8): the
    first sends ori_question and count 8, the next none and count 3."""
    await ctx.configure(provider="api", api_key=DEFAULT_API_KEY, tools_base=ctx.emu.tools_base, retries=0,
                        send_original_question=True, count=10, search_max_results=8)
    for step, question, count in (("before the save", True, 8),
                                  (f"after saving sendOriginalQuestion off and count {SAVED_COUNT}", False,
                                   SAVED_COUNT)):
        if not question:
            await save(ctx, case, send_original_question=False, count=SAVED_COUNT)
        ctx.fresh()
        expect_success(await ctx.search([QUERY], PROMPT), f"{case.name}: {step}: web_search", case.catches)
        records = ctx.records("search")
        require(len(records) == 1, f"{case.name}: {step}: {len(records)} Search API request(s), expected one",
                catches=case.catches)
        body = records[0].json if isinstance(records[0].json, dict) else {}
        sent = "ori_question" in body
        require(sent == question, f"{case.name}: {step}: the Search API request " + (
            "sent no ori_question, expected the prompt (sendOriginalQuestion is on)" if question else
            "still sent ori_question (saved off, sendOriginalQuestion: false disables it)"), catches=case.catches)
        got = body.get("count", "none")
        require(got == count, f"{case.name}: {step}: the Search API request sent count {got}, expected {count} (the "
                "count setting the operation resolved, unless the bound of 8 is smaller)", catches=case.catches)


async def messages_options_row(ctx: CheckContext, case: Case) -> None:
    await ctx.configure(provider="messages", api_key=DEFAULT_API_KEY, tools_base=ctx.emu.tools_base, retries=0,
                        max_uses=5)
    for step, uses in (("before the save", 5), (f"after saving max_uses {SAVED_MAX_USES}", SAVED_MAX_USES)):
        if uses == SAVED_MAX_USES:
            await save(ctx, case, max_uses=SAVED_MAX_USES)
        body = (await searched(ctx, case, step)).json
        tools = body.get("tools") if isinstance(body, dict) else None
        got = [t.get("max_uses", "none") for t in tools if isinstance(t, dict) and t.get("name") == WS] if isinstance(
            tools, list) else []  # the web_search server tool's (search.messages.wire judges the rest of the list)
        require(got == [uses], f"{case.name}: {step}: the Messages request's web_search tool carried max_uses "
                f"{got or 'nowhere'}, expected [{uses}] (the max_uses the operation resolved)", catches=case.catches)


async def in_flight_row(ctx: CheckContext, case: Case) -> None:
    """The first Search request held at the emulator while key and base are saved, then answered 503: its retry
    belongs to the same operation (the same search of the same query), so it resolves nothing anew."""
    want = path_of(ctx.emu.tools_base, "search")
    await ctx.configure(provider="api", api_key=DEFAULT_API_KEY, tools_base=ctx.emu.tools_base, retries=1)
    ctx.fresh()
    gate = ctx.emu.gate("live-settings")
    ctx.emu.inject("search", Hold(gate, then=RETRYABLE))
    call = ctx.start_search([QUERY])
    other = ctx.emu.base_url + OTHER_PREFIX
    outcome, _ = await save_while_held(ctx, case, gate, call, api_key=SAVED_KEY, tools_base=other)
    await ctx.settle()
    records = ctx.records("search")
    # A target that closes its old clients on save may fail the search under way: the seed does not say a save
    # must spare it, so only what it sent is judged; answered, it sent the held request and its retry.
    require(len(records) == 2 or (not outcome.ok and len(records) == 1), f"{case.name}: {len(records)} Search API "
            f"request(s) and {outcome.brief()}, expected the held one and its one retry", catches=case.catches)
    for record, which in zip(records, ("the held request", "its retry"), strict=False):
        got = (key_of(record), record.path)
        require(got == ("the configured key", want), f"{case.name}: {which} carried {got[0]} to {got[1]}; the "
                f"operation resolved the configured key and {want} at its start, and keeps them for every request",
                catches=case.catches)
    # The save was made while the target was busy: it still takes effect for the next operation.
    record = await searched(ctx, case, "the search after the held one")
    after, saved = (key_of(record), record.path), ("the saved key", path_of(other, "search"))
    require(after == saved, f"{case.name}: the search after the held one carried {after[0]} to {after[1]}, "
            f"expected {saved[0]} to {saved[1]} (a save made while a search was under way takes effect after it)",
            catches=case.catches)


async def save_while_held(
    ctx: CheckContext, case: Case, gate: Gate, call: PendingCall, **keys: object
) -> tuple[CallOutcome, float]:
    """Once the call's first Search request is held at ``gate``, save ``keys``; release the request once the save
    is answered (or after :data:`SAVE_ANSWER_WAIT` without an answer: a target may answer only once the search
    ends). The call's outcome, and the monotonic time the save was answered (a save that failed raises)."""
    try:
        await wait_held(ctx, gate, 1, f"{case.name}: the first Search request", catches=case.catches)
    except BaseException:
        gate.release()
        raise
    answered = [math.inf]

    def done(task: asyncio.Task[None]) -> None:  # the exception retrieved even if the search raises
        if not task.cancelled() and task.exception() is None:
            answered[0] = time.monotonic()

    saving = asyncio.ensure_future(save(ctx, case, **keys))
    saving.add_done_callback(done)
    try:
        await asyncio.wait({saving}, timeout=SAVE_ANSWER_WAIT)  # answered now, or once the search ends
        gate.release()
        outcome = await call.outcome(CALL_TIMEOUT)
        await saving  # its own failure (no answer, not {}) is reported as the save's
    finally:
        gate.release()
        saving.cancel()  # a no-op once it ended; never left running past the row
    return outcome, answered[0]


PACED_QUERIES = ("markdown tables", "markdown footnotes")
PACED_QPS = 1.0  # the second query's slot comes 1 s (a pacer's margin more) after the first's: the save lands between
PACED_ATTEMPTS = 3  # runs of the paced row until one holds the second query's wait across the save


def snapshot_of(record: RequestRecord, configured: str, saved: str) -> tuple[str, str, str]:
    """Which snapshot each part of a Search API request came from, in words: (key, base, count), given the two
    bases; a key or base that is neither is named as the log shows it."""
    key = key_of(record)
    base = {path_of(configured, "search"): "configured", path_of(saved, "search"): "saved"}.get(record.path,
                                                                                                record.path)
    body = record.json if isinstance(record.json, dict) else {}
    count = "saved" if body.get("count") == SAVED_COUNT else "configured"
    return {SHOWN[DEFAULT_API_KEY]: "configured", SHOWN[SAVED_KEY]: "saved"}.get(key, key), base, count


async def paced_row(ctx: CheckContext, case: Case) -> None:
    """Two queries at 1 QPS: the first request is held at the emulator while key, base and count are saved, so the
    second query waits for its slot across the save. Each request must come from one snapshot. Whether the second
    query's operation resolved its snapshot before the wait (the configured one) or after it (the saved one) is
    the target's: its search may start when the batch does or when its slot comes. A run whose second request
    went out before the save was answered (a stalled machine) shows nothing of the wait and is run again."""
    for attempt in range(1, PACED_ATTEMPTS + 1):
        await ctx.configure(provider="api", api_key=DEFAULT_API_KEY, tools_base=ctx.emu.tools_base, retries=0,
                            pacing_qps=PACED_QPS)  # the settings the last attempt saved, configured away
        ctx.fresh()
        gate = ctx.emu.gate(f"live-settings-paced-{attempt}")
        ctx.emu.inject("search", Hold(gate))  # then the route's own answer
        call = ctx.start_search(list(PACED_QUERIES))
        other = ctx.emu.base_url + OTHER_PREFIX
        outcome, saved_at = await save_while_held(ctx, case, gate, call, api_key=SAVED_KEY, tools_base=other,
                                                  count=SAVED_COUNT)
        await ctx.settle()
        records = ctx.records("search")
        # As in the in-flight row, a target that closes its old clients on save may fail the search under way (and
        # then never send the second query): only what it sent is judged; answered, it sent one request per query.
        require(len(records) == 2 or (not outcome.ok and len(records) <= 2), f"{case.name}: {len(records)} Search "
                f"API request(s) and {outcome.brief()}, expected one request per query", catches=case.catches)
        for index, record in enumerate(records):
            got = snapshot_of(record, ctx.emu.tools_base, other)
            if index == 0:  # held at the emulator before the save was made
                require(got == ("configured",) * 3, f"{case.name}: the first request, sent before the save, carried "
                        f"the {got[0]} key to the {got[1]} base with the {got[2]} count", catches=case.catches)
                continue
            require(len(set(got)) == 1, f"{case.name}: the query that waited for its slot across the save carried "
                    f"the {got[0]} key to the {got[1]} base with the {got[2]} count: one request from two settings "
                    "snapshots (an operation resolves one snapshot, endpoint and credential included)",
                    catches=case.catches)
        if len(records) < 2 or records[1].started >= saved_at:
            return
        # Not shown: a stalled machine, or a target that answers a save only once its operations end (allowed).
        ctx.note(case.name, f"{NOT_SHOWN}: attempt {attempt}'s second request went out "
                 f"{saved_at - records[1].started:.2f} s before the save was answered")


SAVED_RETRIES = 2  # over the configured 0: a search answered 503 (Retry-After 0) once sends its retry too


async def retries_row(ctx: CheckContext, case: Case) -> None:
    """A search whose first request is answered 503 (Retry-After 0), before the save (retries 0: that one request),
    after saving retries 2 (it and its retry, answered) and after saving 0 again (that one request): judged by the
    requests sent, never by time."""
    await ctx.configure(provider="api", api_key=DEFAULT_API_KEY, tools_base=ctx.emu.tools_base, retries=0,
                        pacing_qps=None)
    for step, retries, sent in (("before the save (retries 0)", None, 1),
                                (f"after saving retries {SAVED_RETRIES}", SAVED_RETRIES, 2),
                                ("after saving retries 0 again", 0, 1)):
        if retries is not None:
            await save(ctx, case, retries=retries)
        ctx.fresh()
        ctx.emu.inject("search", RETRYABLE)
        outcome = await ctx.search([QUERY])
        await ctx.settle()
        got = len(ctx.records("search"))
        require(got == sent, f"{case.name}: {step}: a search answered 503 (Retry-After 0) sent {got} Search API "
                f"request(s) ({outcome.brief()}), expected {sent} (the retries the operation resolved)",
                catches=case.catches)
        if sent > 1:
            expect_success(outcome, f"{case.name}: {step}: web_search, its retry answered 200", case.catches)


async def pacing_off_row(ctx: CheckContext, case: Case) -> None:
    """Pacing configured at :data:`SLOW_QPS`, then saved off: the next two-query search sends one request per query
    (a batch's queries start together), answered. Still paced, its second query could not be sent before its
    deadline: the row is judged by the requests sent, never by when they came."""
    await ctx.configure(provider="api", api_key=DEFAULT_API_KEY, tools_base=ctx.emu.tools_base, retries=0,
                        pacing_qps=None)
    if not await ctx.configure_if_accepted(pacing_qps=SLOW_QPS):
        # No seed names a range of rates: a target may refuse one this slow (a review found a floor of 1 QPS).
        ctx.note(case.name, f"pacing_qps {SLOW_QPS:g} refused at configure: not judged")
        return
    await save(ctx, case, pacing_qps=None)
    ctx.fresh()
    outcome = await ctx.search(list(PACED_QUERIES))
    await ctx.settle()
    got = len(ctx.records("search"))
    require(got == len(PACED_QUERIES), f"{case.name}: after saving pacing off over {SLOW_QPS:g} QPS, a "
            f"{len(PACED_QUERIES)}-query search sent {got} Search API request(s) ({outcome.brief()}), expected one "
            "per query (the pacing the operation resolved is off)", catches=case.catches)
    expect_success(outcome, f"{case.name}: after saving pacing off: web_search", case.catches)


async def account_row(ctx: CheckContext, case: Case) -> None:
    # Seed 001: "A Session on the DeepSeek account route sends its account token instead" (to the Search and the
    # Fetch API alike: search.api.account_route), and "Each operation resolves one settings snapshot, including its
    # endpoint and credentials": the route is part of the credential an operation resolves.
    ctx.emu.accept_account_token(DEFAULT_ACCOUNT_TOKEN)
    await ctx.configure(provider="api", api_key=DEFAULT_API_KEY, tools_base=ctx.emu.tools_base, retries=0,
                        pacing_qps=None, auth="api_key", account_token=DEFAULT_ACCOUNT_TOKEN)
    for step, auth, shown in (("before the save (the API-key route)", None, "the configured key"),
                              ("after saving the account route", "account", "the account token")):
        if auth is not None:
            await save(ctx, case, auth=auth)
        await carried(ctx, case, step, shown)


ROWS = {"key": key_row, "switch": switch_row, "base": base_row, "options": options_row,
        "messages_options": messages_options_row, "in_flight": in_flight_row, "paced": paced_row,
        "retries": retries_row, "pacing_off": pacing_off_row, "account": account_row}


@check(
    "settings.snapshot.per_operation",
    "A saved key, base, route, option or switch reaches the next operation; one under way keeps the snapshot it "
    "resolved",
    seed="001",
    requires=(WS, API, CAP_LIVE_SETTINGS),
    provider="api",
    profiles=("seed-001-live-settings",),
    rule="Seed 001: 'The switch defaults off and takes effect after saving, because the web service reads both "
    "selections for each operation', and 'Each operation resolves one settings snapshot, including its endpoint and "
    "credentials.' With the target running (settings_save, no new configure): a web_search after a saved API key "
    "carries the saved key, and so do (with fetch-api) a web_fetch's Fetch API request and (with messages-search) a "
    "Messages search, since 'Both APIs read one credential and one API base'; after a saved base the Search (and "
    "Fetch) API request goes to that base plus /search (/fetch); after saving the switch on a web_search goes to "
    "the Search API and (with fetch-api) a web_fetch to the Fetch API, since the switch writes both selections, and "
    "saved off again web_search goes back to Messages and web_fetch sends no Fetch API request ('off restores "
    "Messages search with local HTTP fetch'; the page is a loopback literal the local fetcher refuses or reaches "
    "on this machine; with messages-search). A search under way when key and base are saved keeps "
    "the snapshot it resolved for every request it sends: a retry (with retry) repeats the same search of the same "
    "query, in the same operation, so it carries the configured key to the configured base, and the search after "
    "it carries the saved key to the saved base (a save may be answered while the search is held or only once it "
    "ends: the search is released after 3 s without an answer; a search that fails, its clients closed by the save, "
    "is judged on the requests it sent). The options an operation resolves are the saved ones too, not only its "
    "endpoint and credential: after saving sendOriginalQuestion off and count 3 (bound 8), a web_search with a usable "
    "prompt sends no ori_question ('sendOriginalQuestion: false disables it') and count 3 (the configured count "
    "unless the request's bound is smaller), where before the save it sent ori_question and count 8; and (with "
    "messages-search) after saving max_uses 2 a Messages search's web_search tool carries max_uses 2, not the "
    "configured 5. So too the retries and the pacing (with retry, with pacing): after saving retries 2 over the "
    "configured 0, a web_search whose first request is answered 503 with Retry-After 0 sends its retry and is "
    "answered, where before the save it sent that one request, and saved 0 again it sends one; after saving pacing "
    f"off over a configured {SLOW_QPS:g} QPS, a two-query web_search sends one request per query and is answered "
    "(still paced, its second slot would come 100 s later, past the search's deadline: both rows are judged by the "
    "requests sent, not their times; no seed names a range of rates, so a target refusing that slow a rate at "
    "configure is not judged by that row). And the credential route (with account-route; 'A Session on the DeepSeek "
    "account route sends its account token instead'): configured with both an API key and an account token on the "
    "API-key route, after saving auth account the next Search API request (and with fetch-api the Fetch API "
    "request) carries the account token where before the save it carried the key. A query of a batch that waits "
    "for its pacing slot (with pacing, 1 QPS) "
    "while key, base and count are saved goes out from one snapshot: the configured key, base and count, or, its "
    "search started only when its slot came, the saved ones; never a mix (a run whose second request went out "
    "before the save was answered shows nothing of the wait and is run again, three runs at most). "
    "Only operations started after the save's answer are held to the saved values; how a target applies a save "
    "(clients rebuilt, pooled per key and base, settings read per operation) is its own.",
    cases=CASES,
)
async def per_operation(ctx: CheckContext) -> None:
    ctx.emu.accept_api_key(SAVED_KEY)
    capabilities = ctx.hello.capabilities
    for case in CASES:
        if (case["row"] in ("switch", "messages_options") and CAP_MESSAGES_SEARCH not in capabilities) or (
            case["row"] in ("in_flight", "retries") and CAP_RETRY not in capabilities
        ) or (case["row"] in ("paced", "pacing_off") and CAP_PACING not in capabilities) or (
            case["row"] == "account" and CAP_ACCOUNT_ROUTE not in capabilities
        ):
            continue
        await ROWS[case["row"]](ctx, case)
