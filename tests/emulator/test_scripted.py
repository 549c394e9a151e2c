"""The conformance search route: scripted seam results, answered in the scripted order once every
query is in flight; after a failure the rest wait to be aborted; a search left waiting is late."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from dsweb_ref.emulator import Emulator
from dsweb_ref.emulator.scripted import Failure, Script, scripted_base

A = {"content": "answer a", "sources": [{"url": "https://a.test/", "title": "A"}], "truncated": False}
B = {"sources": [{"url": "https://b.test/"}], "truncated": True}


async def _post(client: httpx.AsyncClient, url: str, query: str) -> httpx.Response:
    return await client.post(url, json={"query": query, "max_results": 3})


def _url(emu: Emulator, script: Script) -> tuple[str, str]:
    scenario = emu.scripted.load(script)
    return scenario, scripted_base(emu.base_url, scenario) + "/search"


def test_scripted_route_answers_the_seam_result_shape_unchanged(emulator: Emulator) -> None:
    scenario, url = _url(emulator, Script({"a": A}))
    reply = httpx.post(url, json={"query": "a", "max_results": 3})
    assert reply.status_code == 200 and reply.json() == A
    seen = emulator.scripted.seen(scenario)
    assert seen.arrivals == [("a", 3)] and seen.answered == [("a", 200)] and not seen.late
    assert emulator.log.records()[-1].route == "scripted"


def test_answers_wait_for_every_query_then_follow_the_scripted_order(emulator: Emulator) -> None:
    scenario, url = _url(emulator, Script({"a": A, "b": B}, order=("b", "a"), hold_limit=10.0))

    async def run() -> list[httpx.Response]:
        async with httpx.AsyncClient() as client:
            first = asyncio.ensure_future(_post(client, url, "a"))
            await asyncio.to_thread(emulator.log.wait_for, 1, route="scripted")
            second = asyncio.ensure_future(_post(client, url, "b"))
            return list(await asyncio.gather(first, second))

    ra, rb = asyncio.run(run())
    assert ra.json() == A and rb.json() == B
    seen = emulator.scripted.seen(scenario)
    # a arrived first but was answered second: it waited for b to arrive, then for its turn.
    assert [q for q, _ in seen.arrivals] == ["a", "b"]
    assert seen.answered == [("b", 200), ("a", 200)] and not seen.late


def test_after_a_failure_the_remaining_searches_wait_until_the_client_aborts_them(emulator: Emulator) -> None:
    failure = Failure(503, "WEB_PROVIDER_UNAVAILABLE", "down")
    script = Script({"a": A, "b": failure, "c": B}, order=("a", "b", "c"), hold_limit=10.0)
    scenario, url = _url(emulator, script)

    async def run() -> tuple[httpx.Response, httpx.Response, bool]:
        async with httpx.AsyncClient() as client:
            tasks = [asyncio.ensure_future(_post(client, url, q)) for q in ("a", "b", "c")]
            ra, rb = await asyncio.gather(*tasks[:2])
            held = not tasks[2].done()
            tasks[2].cancel()
            await asyncio.gather(tasks[2], return_exceptions=True)
            return ra, rb, held

    ra, rb, held = asyncio.run(run())
    assert ra.status_code == 200 and held
    assert rb.status_code == 503 and rb.json() == {"error": {"code": "WEB_PROVIDER_UNAVAILABLE", "message": "down"}}
    emulator.wait_until_idle()
    seen = emulator.scripted.seen(scenario)
    assert seen.answered == [("a", 200), ("b", 503)] and seen.aborted == ["c"] and not seen.late


def test_a_search_left_waiting_is_answered_after_the_hold_limit_and_counted_late(emulator: Emulator) -> None:
    scenario, url = _url(emulator, Script({"a": A, "b": B}, hold_limit=0.2))
    reply = httpx.post(url, json={"query": "a"})  # b never comes: a client that searches one at a time
    assert reply.json() == A
    seen = emulator.scripted.seen(scenario)
    assert seen.late == ["a"] and seen.arrivals == [("a", None)]


def test_an_unknown_query_is_a_404_failure_and_releases_the_scenario(emulator: Emulator) -> None:
    scenario, url = _url(emulator, Script({"a": A, "b": B}, hold_limit=10.0))
    reply = httpx.post(url, json={"query": "A"})
    assert reply.status_code == 404 and reply.json()["error"]["code"] == "WEB_PROVIDER_ERROR"
    assert httpx.post(url, json={"query": "a"}).json() == A  # no ordering left to wait for
    assert emulator.scripted.seen(scenario).unknown == ["A"]


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [("/scripted/nope/search", {"query": "a"}, 404), (None, {"q": "a"}, 400), (None, [1], 400)],
)
def test_unknown_scenarios_and_malformed_requests_are_refused(
    emulator: Emulator, path: str | None, body: Any, status: int
) -> None:
    _, url = _url(emulator, Script({"a": A}))
    reply = httpx.post(emulator.base_url + path if path else url, json=body)
    assert reply.status_code == status and reply.json()["error"]["code"].startswith("WEB_")


def test_a_script_must_order_every_query_once() -> None:
    with pytest.raises(ValueError, match="every scripted query"):
        Script({"a": A, "b": B}, order=("a", "a"))
    assert Script({"a": A, "b": B}).order == ("a", "b")


def test_dropped_scenarios_are_forgotten(emulator: Emulator) -> None:
    scenario, url = _url(emulator, Script({"a": A}))
    assert httpx.post(url, json={"query": "a"}).status_code == 200
    emulator.scripted.drop(scenario)
    assert emulator.scripted.seen(scenario).arrivals == []
    assert httpx.post(url, json={"query": "a"}).status_code == 404
