"""Scripted faults: each kind, matching, use counts, and validation of the script itself."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from dsweb_ref.emulator import (
    Burst,
    CutBody,
    Delay,
    Emulator,
    Flush,
    Gate,
    Hold,
    Malformed,
    Pad,
    ProseOnly,
    RateLimited,
    Redirect,
    SlowBody,
    Status,
    ToolError,
)
from dsweb_ref.emulator.wire import _split

from ._support import FETCH, MESSAGES, SEARCH, error_of, messages_body


def test_status_fault_sends_the_platform_envelope(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("search", Status(503))
    response = client.post(SEARCH, json={"query": "coffee"})
    assert response.status_code == 503
    assert error_of(response) == {"message": "Server Overloaded", "type": "server_error", "param": None, "code": None}
    assert client.post(SEARCH, json={"query": "coffee"}).status_code == 200, "used once by default"
    assert emulator.log.records()[0].fault == "Status(503)"


def test_status_fault_with_raw_body(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("fetch", Status(502, body=b"<html>502 Bad Gateway</html>", content_type="text/html"))
    response = client.post(FETCH, json={"url": "https://docs.example.test/api/fetch"})
    assert response.status_code == 502
    assert response.headers["content-type"] == "text/html"
    assert response.text == "<html>502 Bad Gateway</html>"


def test_rate_limited_has_retry_after(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("search", RateLimited(retry_after=2))
    response = client.post(SEARCH, json={"query": "coffee"})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert error_of(response)["type"] == "rate_limit_error"


def test_malformed_json(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("search", Malformed())
    response = client.post(SEARCH, json={"query": "coffee"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.content)


def test_delay(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("search", Delay(0.2))
    assert client.post(SEARCH, json={"query": "coffee"}).status_code == 200
    (record,) = emulator.log.wait_for(1, done=True)
    assert record.duration is not None and record.duration >= 0.2
    assert record.fault == "Delay(0.2s)"


def test_delay_then_another_fault(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("search", Delay(0.01, then=Status(500)))
    assert client.post(SEARCH, json={"query": "coffee"}).status_code == 500
    assert emulator.log.records()[0].fault == "Delay(0.01s) -> Status(500)"


def test_redirect_points_at_the_trap_and_a_careful_client_never_visits(
    emulator: Emulator, client: httpx.Client
) -> None:
    emulator.inject("search", Redirect(307))
    response = client.post(SEARCH, json={"query": "coffee"})
    assert response.status_code == 307
    assert response.headers["location"] == f"{emulator.base_url}/trap/1"
    assert emulator.log.trap_hits() == []


def test_a_client_following_redirects_is_caught(emulator: Emulator, auth: dict[str, str]) -> None:
    emulator.inject("search", Redirect(307))
    with httpx.Client(headers=auth, follow_redirects=True) as careless:
        response = careless.post(emulator.tools_base + "/search", json={"query": "coffee"})
    assert response.status_code == 200  # the trap looks like an empty search, so only the log tells
    (hit,) = emulator.log.trap_hits()
    assert hit.method == "POST" and hit.path == "/trap/1" and hit.json == {"query": "coffee"}


def test_redirect_to_custom_location(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("fetch", Redirect(301, location="https://elsewhere.example.test/"))
    response = client.post(FETCH, json={"url": "https://docs.example.test/api/fetch"})
    assert (response.status_code, response.headers["location"]) == (301, "https://elsewhere.example.test/")


@pytest.mark.parametrize(
    ("fault", "shown", "pauses"),
    [
        (SlowBody(chunk_size=256, delay=0.02), "SlowBody(256B/0.02s)", None),  # one pause per 256 bytes but the last
        # pieces: a caller that cannot know the answer's size still knows when its last piece comes
        (SlowBody(delay=0.05, pieces=3), "SlowBody(3 pieces/0.05s)", 2),
    ],
    ids=["chunk-size", "pieces"],
)
def test_slow_body_delivers_the_normal_answer(
    emulator: Emulator, client: httpx.Client, fault: SlowBody, shown: str, pauses: int | None
) -> None:
    body = {"query": "search api", "count": 3}
    normal = client.post(SEARCH, json=body).content
    emulator.inject("search", fault)
    slow = client.post(SEARCH, json=body)
    assert slow.content == normal
    record = emulator.log.wait_for(2, done=True)[1]
    assert record.fault == shown
    pauses = (len(normal) - 1) // fault.chunk_size if pauses is None else pauses
    assert record.duration is not None and record.duration >= pauses * fault.delay


@pytest.mark.parametrize(
    ("size", "pieces", "expected"),
    [(10, 4, [2, 3, 2, 3]), (9, 3, [3, 3, 3]), (2, 4, [1, 1]), (0, 3, [0])],
)
def test_slow_body_pieces_are_of_equal_size(size: int, pieces: int, expected: list[int]) -> None:
    body = bytes(range(size))
    split = _split(body, 64, pieces)
    assert [len(p) for p in split] == expected and b"".join(split) == body


def test_cut_body_closes_mid_answer(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("search", CutBody(keep=10))
    with pytest.raises(httpx.RemoteProtocolError):
        client.post(SEARCH, json={"query": "coffee"})
    (record,) = emulator.log.wait_for(1, done=True)
    assert (record.status, record.fault) == (200, "CutBody(keep=10)")
    assert client.post(SEARCH, json={"query": "coffee"}).status_code == 200, "the client recovers on a new connection"


def test_prose_only_messages_answer(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("messages", ProseOnly())
    payload = client.post(MESSAGES, json=messages_body("coffee")).json()
    kinds = {block["type"] for block in payload["content"]}
    assert "text" in kinds
    assert not kinds & {"server_tool_use", "web_search_tool_result"}
    assert payload["usage"]["server_tool_use"]["web_search_requests"] == 0


@pytest.mark.parametrize("code", ["max_uses_exceeded", "too_many_requests", "unavailable"])
def test_in_band_tool_error(emulator: Emulator, client: httpx.Client, code: str) -> None:
    emulator.inject("messages", ToolError(code))
    payload = client.post(MESSAGES, json=messages_body("coffee")).json()
    (result,) = [b for b in payload["content"] if b["type"] == "web_search_tool_result"]
    assert result["content"] == {"type": "web_search_tool_result_error", "error_code": code}


def test_pad_sends_the_same_json_with_spaces_after_it(emulator: Emulator, client: httpx.Client) -> None:
    plain = client.post(SEARCH, json={"query": "coffee"})
    emulator.inject("search", Pad(100_000))
    emulator.inject("search", Pad(70_000, Status(500, message="padded failure")))
    padded = client.post(SEARCH, json={"query": "coffee"})
    failed = client.post(SEARCH, json={"query": "coffee"})
    assert padded.status_code == 200 and padded.json() == plain.json()
    assert padded.content == plain.content + b" " * 100_000
    assert int(padded.headers["content-length"]) == len(plain.content) + 100_000
    assert failed.status_code == 500 and error_of(failed)["message"] == "padded failure"
    assert failed.content.endswith(b"} " + b" " * 69_999)
    assert [r.fault for r in emulator.log.records()[1:]] == ["Pad(100000)", "Pad(70000) -> Status(500)"]


def test_flush_answers_every_member_once_all_are_ready(emulator: Emulator, client: httpx.Client) -> None:
    burst, gate = Burst(2, "pair"), Gate("pair")
    emulator.inject("search", Hold(gate, then=Flush(burst, 0)), when={"query": "ok"})
    emulator.inject("search", Hold(gate, then=Flush(burst, 1, Pad(10, Status(503)))), when={"query": "bad"})
    with ThreadPoolExecutor(2) as pool:
        answers = [pool.submit(client.post, SEARCH, json={"query": q}) for q in ("ok", "bad")]
        gate.wait_held(2)
        gate.release()
        ok, bad = (a.result(10) for a in answers)
    assert ok.status_code == 200 and "results" in ok.json()
    assert bad.status_code == 503 and bad.content.endswith(b" " * 10)
    # The server marks a record done after its last write, which the client can read first.
    emulator.log.wait_for(2, done=True)
    assert all(r.done and not r.disconnected for r in emulator.log.records())


def test_a_burst_writes_every_head_then_every_body_in_rank_order() -> None:
    written: list[tuple[int, str]] = []

    def member(rank: int) -> tuple[list[dict[str, Any]], Any]:
        async def send(message: dict[str, Any]) -> None:
            written.append((rank, message["type"]))

        return [{"type": "http.response.start"}, {"type": "http.response.body"}], send

    async def both() -> None:
        burst = Burst(2)
        late = asyncio.ensure_future(burst.join(1, *member(1), 5.0))  # the later rank is ready first
        await asyncio.sleep(0)
        assert written == []  # held back until every member is ready
        await burst.join(0, *member(0), 5.0)
        await late

    asyncio.run(both())
    assert written == [(0, "http.response.start"), (1, "http.response.start"),
                       (0, "http.response.body"), (1, "http.response.body")]


def test_a_burst_member_left_alone_writes_after_its_timeout() -> None:
    written: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        written.append(message["type"])

    asyncio.run(Burst(2).join(0, [{"type": "http.response.start"}], send, 0.05))
    assert written == ["http.response.start"]


def test_hold_times_out_with_504(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("search", Hold(Gate("never"), timeout=0.2))
    response = client.post(SEARCH, json={"query": "coffee"})
    assert response.status_code == 504
    assert "never" in error_of(response)["message"]


def test_match_on_body_and_use_counts(emulator: Emulator, client: httpx.Client) -> None:
    twice = emulator.inject("search", Status(500), times=2, when={"query": "x"})
    always = emulator.inject("fetch", Status(404), times=None, when=lambda body: body["url"].endswith("/fetch"))
    statuses = [client.post(SEARCH, json={"query": q}).status_code for q in ("y", "x", "y", "x", "x")]
    assert statuses == [200, 500, 200, 500, 200]
    assert twice.used == 2 and twice.exhausted
    for _ in range(3):
        assert client.post(FETCH, json={"url": "https://docs.example.test/api/fetch"}).status_code == 404
    assert client.post(FETCH, json={"url": "https://wiki.example.test/Markdown"}).status_code == 200
    assert always.used == 3 and not always.exhausted
    assert emulator.faults.pending() == [always]


def test_wildcard_route_and_first_rule_wins(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("*", Status(503))
    emulator.inject("search", Status(500))
    assert client.post(FETCH, json={"url": "https://docs.example.test/api/fetch"}).status_code == 503
    assert client.post(SEARCH, json={"query": "x"}).status_code == 500


def test_a_predicate_that_fails_does_not_match(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("search", Status(500), when=lambda body: body["missing"] == 1)
    assert client.post(SEARCH, json={"query": "x"}).status_code == 200


def test_rejected_credentials_do_not_use_a_fault(emulator: Emulator, client: httpx.Client) -> None:
    rule = emulator.inject("search", Status(500))
    assert httpx.post(emulator.tools_base + "/search", json={"query": "x"}).status_code == 401
    assert rule.used == 0
    assert client.post(SEARCH, json={"query": "x"}).status_code == 500


def test_clear_drops_faults(emulator: Emulator, client: httpx.Client) -> None:
    emulator.inject("search", Status(500), times=None)
    emulator.faults.clear()
    assert client.post(SEARCH, json={"query": "x"}).status_code == 200


@pytest.mark.parametrize(
    ("route", "fault"),
    [
        ("search", ProseOnly()),
        ("fetch", ToolError()),
        ("search", Redirect(200)),
        ("search", Status(42)),
        ("search", Delay(-1)),
        ("search", Delay(10_000)),
        ("search", Hold(Gate(), timeout=0)),
        ("search", SlowBody(chunk_size=0)),
        ("search", SlowBody(pieces=0)),
        ("search", CutBody(keep=-1)),
        ("search", Pad(-1)),
        ("search", Pad(1, Status(42))),
        ("search", Flush(Burst(1), timeout=0)),
        ("searches", Status(500)),
    ],
)
def test_invalid_scripts_are_refused(emulator: Emulator, route: str, fault: object) -> None:
    with pytest.raises(ValueError):
        emulator.inject(route, fault, times=1)  # type: ignore[arg-type]


def test_times_must_be_positive(emulator: Emulator) -> None:
    with pytest.raises(ValueError):
        emulator.inject("search", Status(500), times=0)
