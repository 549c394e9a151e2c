"""Concurrency, cancellation and connections, proven by ordering (hold gates), never by sleeping."""

from __future__ import annotations

import asyncio
import contextlib
import threading

import httpx
import pytest

from dsweb_ref.emulator import Emulator, Hold, SlowBody
from dsweb_ref.emulator.fixtures import EmulatorFactory

from ._support import SEARCH


def test_four_concurrent_requests_overlap(emulator: Emulator, auth: dict[str, str]) -> None:
    gate = emulator.gate("batch")
    emulator.inject("search", Hold(gate), times=4)

    async def batch() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=emulator.base_url, headers=auth, timeout=10.0) as client:
            tasks = [asyncio.create_task(client.post(SEARCH, json={"query": f"query {i}"})) for i in range(4)]
            await asyncio.to_thread(gate.wait_held, 4, 10.0)
            assert emulator.log.in_flight == 4
            gate.release()
            return await asyncio.gather(*tasks)

    responses = asyncio.run(batch())
    assert [r.status_code for r in responses] == [200] * 4
    emulator.wait_until_idle()
    assert emulator.log.max_in_flight == 4
    assert gate.arrived == 4 and gate.held == 0
    records = emulator.log.records()
    assert max(r.started for r in records) < min(r.finished or 0.0 for r in records), "all four were open at once"
    assert len({r.client for r in records}) == 4, "four connections"


def test_sequential_requests_never_overlap(emulator: Emulator, client: httpx.Client) -> None:
    for query in ("a", "b", "c"):
        client.post(SEARCH, json={"query": query})
    assert emulator.log.max_in_flight == 1


def test_cancelled_request_is_seen_as_disconnected(emulator: Emulator, auth: dict[str, str]) -> None:
    gate = emulator.gate("cancel")
    emulator.inject("search", Hold(gate))

    async def cancel_while_held() -> None:
        async with httpx.AsyncClient(base_url=emulator.base_url, headers=auth, timeout=10.0) as client:
            task = asyncio.create_task(client.post(SEARCH, json={"query": "coffee"}))
            await asyncio.to_thread(gate.wait_held, 1, 10.0)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    asyncio.run(cancel_while_held())
    emulator.wait_until_idle(10.0)
    (record,) = emulator.log.records()
    assert record.disconnected
    assert record.status is None, "no answer was started"
    assert gate.held == 0
    emulator.log.wait_connections_closed(10.0)


def test_completed_requests_are_not_disconnected(emulator: Emulator, client: httpx.Client) -> None:
    client.post(SEARCH, json={"query": "coffee"})
    client.close()
    emulator.log.wait_connections_closed(10.0)
    (record,) = emulator.log.records()
    assert not record.disconnected and record.status == 200


def test_connections_are_counted(emulator: Emulator, auth: dict[str, str]) -> None:
    with httpx.Client(base_url=emulator.base_url, headers=auth) as pooled:
        for _ in range(3):
            pooled.post(SEARCH, json={"query": "x"})
        assert emulator.log.connections_open == 1
    for _ in range(2):
        httpx.post(emulator.tools_base + "/search", json={"query": "x"}, headers=auth)
    emulator.log.wait_connections_closed(10.0)
    assert (emulator.log.connections_opened, emulator.log.connections_closed) == (3, 3)
    assert len({r.client for r in emulator.log.records()}) == 3


def test_release_lets_later_requests_pass(emulator: Emulator, client: httpx.Client) -> None:
    gate = emulator.gate()
    gate.release()
    emulator.inject("search", Hold(gate))
    assert client.post(SEARCH, json={"query": "x"}).status_code == 200
    assert gate.arrived == 1


def test_stop_ends_held_requests(emulator_factory: EmulatorFactory, emulator_api_key: str) -> None:
    emu: Emulator = emulator_factory(api_keys=(emulator_api_key,))
    gate = emu.gate()
    emu.inject("search", Hold(gate, timeout=60))
    outcome: list[object] = []

    def call() -> None:
        try:
            outcome.append(
                httpx.post(
                    emu.tools_base + "/search",
                    json={"query": "x"},
                    headers={"Authorization": f"Bearer {emulator_api_key}"},
                    timeout=30,
                ).status_code
            )
        except httpx.HTTPError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    gate.wait_held(1, 10.0)
    emu.stop()
    caller.join(30)
    assert not caller.is_alive()
    assert outcome and outcome[0] in (200, 503)


def test_reset_clears_faults_and_log(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("search", Hold(emulator.gate(), timeout=60), times=None)
    emulator.reset()
    assert client.post(SEARCH, json={"query": "x"}).status_code == 200
    assert len(emulator.log) == 1 and emulator.log.max_in_flight == 1


def test_client_leaving_a_slow_body_is_seen_as_disconnected(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("search", SlowBody(chunk_size=16, delay=30.0))
    with client.stream("POST", SEARCH, json={"query": "coffee"}) as response:
        assert response.status_code == 200
        next(response.iter_raw())  # the first piece arrives; the next would take 30 s
    emulator.wait_until_idle(10.0)
    (record,) = emulator.log.records()
    assert record.disconnected and record.status == 200


def test_waiting_for_held_requests_is_bounded(emulator: Emulator) -> None:
    with pytest.raises(TimeoutError):
        emulator.gate("empty").wait_held(1, timeout=0.01)
