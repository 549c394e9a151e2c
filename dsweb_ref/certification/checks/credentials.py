"""The credential a request carries on each route (seed 001): a Session on the DeepSeek account route
sends its account token instead of the API key, to the Search and Fetch APIs as to Messages search;
on the API-key route the key, even when an account token is at hand.

Each row gives the target both credentials (configure's ``api_key`` and ``account_token``) and a route
(``auth``), and reads which one the emulator saw: the request log tells an API key from an account
token by value (both are masked there), where it travelled, and every other place (a header of any name,
the URL, the body) either credential appears, so the one the route does not send shows wherever it rides.
"""

from __future__ import annotations

import json

from ...emulator import DEFAULT_ACCOUNT_TOKEN, Status
from ...emulator.log import RequestRecord
from ..cases import SCOPE, Case
from ..targets import CallOutcome
from ._base import PROVIDER_ERROR, CheckContext, check, expect_error, expect_success, require
from ._leaks import leak
from .search import added_headers, media_type, only_record

WS, API, ROUTE = "web_search", "search-api", "account-route"
QUERY = "markdown"
PAGE = "https://docs.example.test/api/search"

CASES = (
    # From an outside hunt (hunt L): the rows read only which credential Authorization carried, so the API key sent
    # beside the token in a header of its own ("so either works") certified; each request is now read whole.
    Case("the account route, Search API", "the API key sent whatever the route (the account token ignored, or "
         "sent in a header of its own beside the key), or the key sent along beside the token (in x-api-key, "
         "so either works)", {"auth": "account", "route": "search", "provider": "api"}),
    Case("the account route, Fetch API", "the account token sent to the Search API only, the Fetch API still "
         "given the key (or given it too, beside the token)", {"auth": "account", "route": "fetch",
                                                                "provider": "api"}, family=SCOPE),
    Case("the account route, Messages search", "the account token sent to the new APIs only, Messages search "
         "still given the key (the seed: 'as Messages search does'), or the token put in Authorization with the "
         "key kept in x-api-key", {"auth": "account", "route": "messages", "provider": "messages"}, family=SCOPE),
    Case("the account route, an error quoting the token", "the API key scrubbed from what the model sees, the "
         "account token an upstream error quotes (percent-encoded) shown",
         {"auth": "account", "route": "search", "provider": "api", "echo": True}, family=SCOPE),
    Case("the API-key route beside a token", "the account token preferred whenever one is at hand, whatever the "
         "route, or sent along beside the key (a header of its own, a body value)",
         {"auth": "api_key", "route": "search", "provider": "api"}),
    # From an outside hunt (hunt L): the echo row above tried the Search API's errors only.
    Case("the account route, a Fetch API error quoting the token", "the Search API's errors scrubbed of the "
         "credential sent, the Fetch API's of the API key only: the account token a Fetch API error quotes shown",
         {"auth": "account", "route": "fetch", "provider": "api", "echo": True}, family=SCOPE),
    # From a hunt (P-B5): the API-key route was tried on the Search API only, so the account token sent beside the
    # key to the Fetch API alone (a header of its own) was certified.
    Case("the API-key route beside a token, Fetch API", "the account token sent along beside the key to the Fetch "
         "API only (a header of its own), the Search API given the key alone",
         {"auth": "api_key", "route": "fetch", "provider": "api"}, family=SCOPE),
)
SOURCES = {"search": ("authorization",), "fetch": ("authorization",), "messages": ("authorization", "x-api-key")}
SHOWN = {"account_token": "the account token", "api_key": "the API key"}


def require_only_credential(record: RequestRecord, want: str, what: str, catches: str) -> None:
    """The credential the route does not send appears nowhere in the request: in no header (whatever its name,
    the one the emulator reads or another), not in the URL, not in the body."""
    other = "api_key" if want == "account_token" else "account_token"
    places = sorted({where for where, kind in record.carried if kind == other})
    require(not places, f"{what}: {SHOWN[other]} sent too, in {', '.join(places)}", carried=places, catches=catches)


def require_tools_api_request(record: RequestRecord, want: str, what: str, catches: str) -> None:
    """search.api.wire's and fetch.api.wire's header rule on either route: beyond framing exactly Authorization
    (Bearer, carrying ``want``) and a JSON Content-Type; and the other credential nowhere in the request."""
    added = added_headers(record)
    require(added == ["authorization", "content-type"],
            f"{what}: headers {added}, expected exactly authorization and content-type (plus HTTP framing)",
            headers=added, catches=catches)
    require(record.credential == want and record.credential_source == "authorization",
            f"{what}: carried {SHOWN.get(record.credential, record.credential)} in {record.credential_source}, "
            f"expected {SHOWN[want]} as Authorization: Bearer", credential=record.credential, catches=catches)
    require(media_type(record) == "application/json", f"{what}: Content-Type {record.header('content-type')!r}",
            catches=catches)
    require_only_credential(record, want, what, catches)


def _require_credential(record: RequestRecord, case: Case) -> None:
    want = "account_token" if case["auth"] == "account" else "api_key"
    if case["route"] != "messages":
        require_tools_api_request(record, want, f"{case.name}: the {case['route']} request", case.catches)
        return
    # Messages search reads x-api-key or Authorization: the token may ride in either or both (the reference
    # sends both); which other headers a Messages request carries is search.messages.wire's to judge.
    require(record.credential == want,
            f"{case.name}: the {case['route']} request carried {SHOWN.get(record.credential, record.credential)}, "
            f"expected {SHOWN[want]}", credential=record.credential)
    sources = SOURCES[case["route"]]
    require(record.credential_source in sources,
            f"{case.name}: the credential travelled in {record.credential_source}, expected {' or '.join(sources)}")
    require_only_credential(record, want, f"{case.name}: the {case['route']} request", case.catches)


# Percent-encoded whole: plain, the token is credential-shaped text that a scrubber may hide by its shape alone,
# whichever credential it was told about; encoded, only scrubbing the token itself hides it.
_QUOTED = "".join(f"%{b:02X}" for b in DEFAULT_ACCOUNT_TOKEN.encode())
_ECHO = Status(401, body=json.dumps({"error": {"message": f"token {_QUOTED} is not valid here",
                                                 "type": "authentication_error"}}).encode())


def _require_scrubbed(case: Case, outcome: CallOutcome) -> None:
    expect_error(outcome, case.name, PROVIDER_ERROR)
    shown = leak(f"{outcome.text or ''}\n{outcome.error_message}\n{json.dumps(outcome.value)}", DEFAULT_ACCOUNT_TOKEN)
    require(shown is None, f"{case.name}: the failure shows the account token ({shown})")


@check(
    "search.api.account_route",
    "On the account route every DeepSeek request carries the account token; on the key route, the key",
    seed="001",
    requires=(WS, API, ROUTE),
    provider="api",
    profiles=("seed-001-account-route",),
    rule="Seed 001: 'The guide specifies API-key Bearer authentication, and requests send only the documented "
    "authorization and JSON content type. A Session on the DeepSeek account route sends its account token instead, "
    "as Messages search does.' Given both an API key and an account token, a web_search on the account route sends "
    "the Search API request with, beyond HTTP framing, exactly Authorization: Bearer <account token> and "
    "Content-Type: application/json (search.api.wire's rule), a web_fetch (with fetch-api) sends the Fetch API "
    "request so too, and a Messages search (with messages-search) carries the account token where it carries a key "
    "(Authorization: Bearer, x-api-key, or both). 'Instead': the API key appears in none of these requests, in no "
    "header of any name, nor in the URL or the body. On the API-key route the key is sent although a token is at "
    "hand, with the same two headers, and the token appears nowhere in the request, to the Search API and (with "
    "fetch-api) the Fetch API alike. An upstream error quoting the "
    "account token on the account route, of the Search API or the Fetch API, fails with WEB_PROVIDER_ERROR and never "
    "shows it (the project's rule that no secret reaches the model, as errors.secret_echo holds for the key). What "
    "a target does on the account route with no token configured is not tried: the seed does not say.",
    cases=CASES,
)
async def account_route(ctx: CheckContext) -> None:
    ctx.emu.accept_account_token(DEFAULT_ACCOUNT_TOKEN)
    fetch = {"web_fetch", "fetch-api"} <= ctx.hello.capabilities
    messages = "messages-search" in ctx.hello.capabilities
    for case in CASES:
        if (case["route"] == "fetch" and not fetch) or (case["route"] == "messages" and not messages):
            continue
        await ctx.configure(provider=case["provider"], auth=case["auth"], account_token=DEFAULT_ACCOUNT_TOKEN)
        ctx.fresh()
        if case.params.get("echo"):
            call = (lambda: ctx.fetch(PAGE)) if case["route"] == "fetch" else (lambda: ctx.search([QUERY]))
            _require_scrubbed(case, await ctx.under_fault(case["route"], _ECHO, call))
            continue
        if case["route"] == "fetch":
            expect_success(await ctx.fetch(PAGE), f"{case.name}: web_fetch", case.catches)
        else:
            expect_success(await ctx.search([QUERY]), f"{case.name}: web_search", case.catches)
        _require_credential(only_record(ctx, case["route"], case.name), case)
