"""Seed 001: the fetch provider selected alone, beside the switch.

Enforced (capability ``fetch-selection``: ``configure`` ``fetch_provider`` is the fetch selection configured
alone, ``"http"`` or ``"api"``, null as the switch selects): the switch writes both selections when it is saved,
and "configuration can still select either fetch provider alone", so an explicit HTTP fetch stays HTTP while the
switch is on and an explicit Fetch API selection is used while it is off; without one, the switch's selection
holds (on: the Fetch API; off: "HTTP fetch ... remains the selection whenever the switch is off"). Each
``configure`` replaces the last, so a selection made alone lasts only while configured.

A fetch selection made alone leaves the search selection where the switch put it: in the rows that select one, a
search (for a target that declares web_search and the switch's search provider) reaches the switch's search route,
the Search API with the switch on and Messages with it off.

Left open (accepted either way): how the selection is stored or named.
"""

from __future__ import annotations

from ..adapter_protocol import (
    CAP_FETCH_API,
    CAP_FETCH_SELECTION,
    CAP_MESSAGES_SEARCH,
    CAP_SEARCH_API,
    CAP_SSRF_TEST_MODE,
    CAP_WEB_FETCH,
    CAP_WEB_SEARCH,
)
from ..cases import Case
from ._base import CheckContext, check, require
from .ssrf import PAGE_TEXT, PUBLIC, _network

__all__ = ["SELECTION_CASES"]

HOST = "selection.ssrf.test"  # resolves to the page server's public address on the test network
SEARCH_ROUTE = {"api": ("search", CAP_SEARCH_API), "messages": ("messages", CAP_MESSAGES_SEARCH)}


def _case(name: str, catches: str, provider: str, fetch: str | None, via: str) -> Case:
    return Case(name, catches, {"provider": provider, "fetch_provider": fetch, "via": via})


SELECTION_CASES = (
    _case("switch-on-http-fetch-alone", "the switch read as forcing both selections while on: an explicit HTTP "
          "fetch selection ignored (the page fetched through the Fetch API)", "api", "http", "http"),
    _case("switch-on-no-fetch-selection", "a fetch selection kept from an earlier configure (each configure "
          "replaces the last: with none, the switch's Fetch API holds)", "api", None, "api"),
    _case("switch-off-fetch-api-alone", "the switch read as forcing local HTTP fetch while off: an explicit Fetch "
          "API selection ignored", "messages", "api", "api"),
    _case("switch-off-no-fetch-selection", "the Fetch API selection kept from the earlier configure, or the "
          "switch off not restoring local HTTP fetch", "messages", None, "http"),
)


@check(
    "fetch.selection.alone",
    "Either fetch provider can be selected alone, whichever way the switch is set",
    seed="001",
    requires=(CAP_WEB_FETCH, CAP_FETCH_API, CAP_SSRF_TEST_MODE, CAP_FETCH_SELECTION),
    provider="api",
    rule="Seed 001: the switch writes web.searchProvider and web.fetchProvider together (on: both APIs; off: "
    "Messages search with local HTTP fetch), and 'HTTP fetch, with its own access policy, remains the selection "
    "whenever the switch is off, and configuration can still select either fetch provider alone'. So a fetch "
    "selection configured alone is used whichever way the switch is set (HTTP fetch while it is on, the Fetch "
    "API while it is off), and without one the switch's selection holds. A page fetched through HTTP reaches the "
    "test network's page server and sends nothing to the Fetch API; one fetched through the Fetch API reaches "
    "the Fetch API only. A fetch selection made alone leaves the search where the switch put it (judged for a "
    "target that declares web_search and that search provider). How the selection is stored is the "
    "implementation's.",
    cases=SELECTION_CASES,
    profiles=("seed-001-fetch-selection",),
)
async def fetch_alone(ctx: CheckContext) -> None:
    wrong: list[str] = []
    with _network() as net:
        network = net.config({HOST: [[PUBLIC]]}, [])
        for case in SELECTION_CASES:
            await ctx.configure(provider=case["provider"], fetch_provider=case["fetch_provider"],
                                test_network=network)
            ctx.fresh()
            path = f"/{case.name}"
            served_before = len(net.pages.served)
            outcome = await ctx.fetch(f"http://{HOST}{path}")
            await ctx.settle()
            api = [str(r.path) for r in ctx.records("fetch")]
            page = path in net.pages.served[served_before:]
            if case["via"] == "http":
                if api or not page or not outcome.ok or PAGE_TEXT not in (outcome.text or ""):
                    wrong.append(f"{case.name}: expected the page through local HTTP fetch; the Fetch API got "
                                 f"{len(api)} request(s), the page server {'did' if page else 'did not'} see it "
                                 f"({outcome.brief()})")
            elif not api or page:
                wrong.append(f"{case.name}: expected the page through the Fetch API; it got {len(api)} request(s), "
                             f"the page server {'did' if page else 'did not'} see it ({outcome.brief()})")
            route, searches = SEARCH_ROUTE[case["provider"]]
            declared = {CAP_WEB_SEARCH, searches} <= ctx.hello.capabilities
            if case["fetch_provider"] is not None and declared:
                ctx.fresh()
                found = await ctx.search([f"fetch selection {case.name}"])
                await ctx.settle()
                other = next(r for r, _ in SEARCH_ROUTE.values() if r != route)
                here, there = len(ctx.records(route)), len(ctx.records(other))
                if not here or there:
                    wrong.append(f"{case.name}: a search after the fetch selection made alone did not reach only the "
                                 f"switch's {route} route: it sent {here} request(s) there and {there} to {other} "
                                 f"({found.brief()})")
    require(not wrong, "; ".join(wrong)[:1500], rows=wrong)
