"""The credential a request carries on each route (seed 001): a Session on the DeepSeek account route
sends its account token instead of the API key, to the Search and Fetch APIs as to Messages search;
on the API-key route the key, even when an account token is at hand.

Each row gives the target both credentials (configure's ``api_key`` and ``account_token``) and a route
(``auth``), and reads which one the emulator saw: the request log tells an API key from an account
token by value (both are masked there), and where it travelled.
"""

from __future__ import annotations

import json

from ...emulator import DEFAULT_ACCOUNT_TOKEN, Status
from ...emulator.log import RequestRecord
from ..cases import SCOPE, Case
from ..targets import CallOutcome
from ._base import PROVIDER_ERROR, CheckContext, check, expect_error, expect_success, require
from ._leaks import leak
from .search import only_record

WS, API, ROUTE = "web_search", "search-api", "account-route"
QUERY = "markdown"
PAGE = "https://docs.example.test/api/search"

CASES = (
    Case("the account route, Search API", "the API key sent whatever the route (the account token ignored, or "
         "sent in a header of its own beside the key)", {"auth": "account", "route": "search", "provider": "api"}),
    Case("the account route, Fetch API", "the account token sent to the Search API only, the Fetch API still "
         "given the key", {"auth": "account", "route": "fetch", "provider": "api"}, family=SCOPE),
    Case("the account route, Messages search", "the account token sent to the new APIs only, Messages search "
         "still given the key (the seed: 'as Messages search does')",
         {"auth": "account", "route": "messages", "provider": "messages"}, family=SCOPE),
    Case("the account route, an error quoting the token", "the API key scrubbed from what the model sees, the "
         "account token an upstream error quotes (percent-encoded) shown",
         {"auth": "account", "route": "search", "provider": "api", "echo": True}, family=SCOPE),
    Case("the API-key route beside a token", "the account token preferred whenever one is at hand, whatever the "
         "route", {"auth": "api_key", "route": "search", "provider": "api"}),
)
SOURCES = {"search": ("authorization",), "fetch": ("authorization",), "messages": ("authorization", "x-api-key")}


def _require_credential(record: RequestRecord, case: Case) -> None:
    want = "account_token" if case["auth"] == "account" else "api_key"
    shown = {"account_token": "the account token", "api_key": "the API key"}
    require(record.credential == want,
            f"{case.name}: the {case['route']} request carried {shown.get(record.credential, record.credential)}, "
            f"expected {shown[want]}", credential=record.credential)
    sources = SOURCES[case["route"]]
    require(record.credential_source in sources,
            f"{case.name}: the credential travelled in {record.credential_source}, expected {' or '.join(sources)}")


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
    rule="Seed 001: 'The guide specifies API-key Bearer authentication ... A Session on the DeepSeek account "
    "route sends its account token instead, as Messages search does.' Given both an API key and an account "
    "token, a web_search on the account route sends the Search API request with Authorization: Bearer <account "
    "token>, a web_fetch (with fetch-api) sends the Fetch API request so too, and a Messages search (with "
    "messages-search) carries the account token where it carries a key (Authorization: Bearer or x-api-key). On "
    "the API-key route the key is sent although a token is at hand. An upstream error quoting the account token on "
    "the account route fails with WEB_PROVIDER_ERROR and never shows it (the project's rule that no secret reaches "
    "the model, as errors.secret_echo holds for the key). What a target does on the account route with "
    "no token configured is not tried: the seed does not say.",
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
            _require_scrubbed(case, await ctx.under_fault("search", _ECHO, lambda: ctx.search([QUERY])))
            continue
        if case["route"] == "fetch":
            expect_success(await ctx.fetch(PAGE), f"{case.name}: web_fetch", case.catches)
        else:
            expect_success(await ctx.search([QUERY]), f"{case.name}: web_search", case.catches)
        _require_credential(only_record(ctx, case["route"], case.name), case)
