"""All three DeepSeek providers against the emulator's misbehaving server: one overall deadline,
cut bodies, non-finite numbers, and a caller's own deadline. Ordering is proven with the
emulator's log and hold gates, never with sleeps; every wait is bounded."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from dsweb_ref._context import CallContext
from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref._types import FetchRequest, SearchRequest
from dsweb_ref.emulator import CutBody, Emulator, Hold, Malformed, SlowBody
from dsweb_ref.emulator.faults import RouteName
from dsweb_ref.providers.deepseek_fetch_api import DeepSeekFetchApi
from dsweb_ref.providers.deepseek_official import DeepSeekMessagesSearch
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.settings import Settings

ROUTES: list[RouteName] = ["search", "fetch", "messages"]
# Which settings section's timeout_s governs each route.
SECTION = {"search": "deepseek_api", "fetch": "deepseek_api", "messages": "deepseek_messages"}
WAIT = 10.0  # bound on every wait for the emulator's side of an exchange
# SlowBody: one chunk every 0.3 s, sized so each route's answer (0.3-6 KB) takes about 5-8 s in all.
DELAY = 0.3
CHUNK = {"search": 256, "fetch": 16, "messages": 128}


def _operation(route: RouteName, emulator: Emulator, key: str, timeout_s: float) -> Callable[[], Awaitable[object]]:
    """A zero-argument coroutine factory running one call of the provider serving ``route``,
    with ``timeout_s`` in that route's settings section and a long timeout in the other one."""
    other = "deepseek_messages" if SECTION[route] == "deepseek_api" else "deepseek_api"
    snapshot = Settings().updated({
        "deepseek_api.base_url": emulator.tools_base,
        "deepseek_messages.base_url": emulator.messages_base,
        f"{SECTION[route]}.timeout_s": timeout_s,
        f"{other}.timeout_s": 600.0,
    })
    env = {"DEEPSEEK_API_KEY": key}
    if route == "search":
        search_api = DeepSeekSearchApi(lambda: snapshot, environ=env)
        return lambda: search_api.search(SearchRequest("deepseek search api"), CallContext())
    if route == "fetch":
        fetch_api = DeepSeekFetchApi(lambda: snapshot, environ=env)
        return lambda: fetch_api.fetch(FetchRequest("https://docs.example.test/api/fetch"), CallContext())
    messages = DeepSeekMessagesSearch(lambda: snapshot, environ=env)
    return lambda: messages.search(SearchRequest("deepseek search api"), CallContext())


def _error(operation: Callable[[], Awaitable[object]]) -> WebError:
    async def run() -> object:
        return await operation()

    with pytest.raises(WebError) as info:
        asyncio.run(run())
    return info.value


@pytest.mark.parametrize("route", ROUTES)
def test_slow_body_hits_the_overall_deadline(route: RouteName, emulator: Emulator, emulator_api_key: str) -> None:
    # Every single read arrives well within the per-read limit; only an overall deadline stops this.
    emulator.inject(route, SlowBody(chunk_size=CHUNK[route], delay=DELAY))
    error = _error(_operation(route, emulator, emulator_api_key, timeout_s=1.0))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert error.message.endswith("request timed out after 1 s"), error.message
    (record,) = emulator.log.wait_for(1, done=True, timeout=WAIT)
    assert record.fault == f"SlowBody({CHUNK[route]}B/{DELAY}s)"
    # The answer needed several seconds in all; the client hung up before its last byte.
    assert ((len(record.response_body) - 1) // CHUNK[route]) * DELAY >= 3.0
    assert record.disconnected, "the client read the whole slow body instead of giving up at its deadline"


@pytest.mark.parametrize("route", ROUTES)
def test_cut_body_is_a_provider_error(route: RouteName, emulator: Emulator, emulator_api_key: str) -> None:
    emulator.inject(route, CutBody())
    error = _error(_operation(route, emulator, emulator_api_key, timeout_s=30.0))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert "request failed" in error.message and "RemoteProtocolError" in error.message
    (record,) = emulator.log.wait_for(1, done=True, timeout=WAIT)
    assert (record.status, record.fault) == (200, "CutBody(keep=None)")


@pytest.mark.parametrize("route", ROUTES)
def test_a_callers_own_deadline_propagates_as_its_timeout(
    route: RouteName, emulator: Emulator, emulator_api_key: str
) -> None:
    gate = emulator.gate(f"caller-deadline-{route}")
    emulator.inject(route, Hold(gate, timeout=60))
    operation = _operation(route, emulator, emulator_api_key, timeout_s=60.0)

    async def scenario() -> None:
        deadlines: list[asyncio.Timeout] = []

        async def caller() -> object:
            async with asyncio.timeout(None) as deadline:
                deadlines.append(deadline)
                return await operation()

        task = asyncio.create_task(caller())
        await asyncio.to_thread(gate.wait_held, 1, WAIT)
        deadlines[0].reschedule(asyncio.get_running_loop().time())  # the caller's deadline passes now
        done, _ = await asyncio.wait({task}, timeout=WAIT)
        if not done:
            task.cancel()
            pytest.fail("the call did not end when the caller's deadline passed")
        with pytest.raises(TimeoutError) as info:
            task.result()
        assert not isinstance(info.value, WebError)
        assert deadlines[0].expired()

    asyncio.run(scenario())
    (record,) = emulator.log.wait_for(1, done=True, timeout=WAIT)
    assert record.disconnected and record.status is None


NON_FINITE = {
    "search": b'{"results":[{"url":"https://docs.example.test/api/search","title":"t","rerank_score":NaN}]}',
    "fetch": b'{"title":"t","content":"# page","score":Infinity}',
    "messages": (
        b'{"type":"message","content":[{"type":"web_search_tool_result","tool_use_id":"t","content":'
        b'[{"type":"web_search_result","url":"https://a.test/","title":"A"}]}],"usage":{"input_tokens":-Infinity}}'
    ),
}


@pytest.mark.parametrize("route", ROUTES)
def test_non_finite_numbers_from_the_emulator_are_unprocessable(
    route: RouteName, emulator: Emulator, emulator_api_key: str
) -> None:
    emulator.inject(route, Malformed(body=NON_FINITE[route]))
    error = _error(_operation(route, emulator, emulator_api_key, timeout_s=30.0))
    assert error.code == WebErrorCode.PROVIDER_ERROR
    assert "unprocessable response body" in error.message
    assert "non-finite number" in error.message
