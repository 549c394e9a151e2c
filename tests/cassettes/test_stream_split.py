"""A key echoed across two streamed (SSE) deltas never reaches a cassette (issue 20 item 4).

No single event holds the key, so a scan of the body as stored found nothing, while a client joining
the deltas gets it back. The scanner now also scans the joined delta text, and ``dsweb record``
refuses such a cassette.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from providers._loopback import Reply, running

from dsweb_ref.cli import main
from dsweb_ref.replay.cassettes import scan_cassette_data

# Built at run time so no credential-shaped literal sits in this file.
KEY = "sk-" + "Split7Key" + "Qx9" * 5
ENV = "SPLIT_TEST_KEY"


def _anthropic_stream(parts: list[str]) -> str:
    events = [("message_start", {"type": "message_start", "message": {"id": "m", "content": []}})]
    for part in parts:
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": part}}
        events.append(("content_block_delta", delta))
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def _responses_stream(parts: list[str]) -> str:
    events = [{"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": p} for p in parts]
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"


def _plain_stream(parts: list[str]) -> str:
    return "".join(f"data: {p}\r\n\r\n" for p in parts)


def _cassette(body: str) -> dict[str, object]:
    response = {"status": {"code": 200, "message": "OK"}, "headers": {"Content-Type": ["text/event-stream"]},
                "body": {"string": body}}
    return {"version": 1, "interactions": [{"request": {"uri": "http://x.invalid/messages"}, "response": response}]}


def _halves(text: str, at: int) -> list[str]:
    return [f"the key is {text[:at]}", f"{text[at:]} (echoed)"]


STREAMS = {"anthropic": _anthropic_stream, "responses": _responses_stream, "plain": _plain_stream}
ECHOES = {
    "raw": KEY,
    "upper": KEY.upper(),
    "base64": base64.b64encode(KEY.encode()).decode(),
    "hex": KEY.encode().hex(),
}


@pytest.mark.parametrize("echo", list(ECHOES))
@pytest.mark.parametrize("stream", list(STREAMS))
def test_a_key_split_across_two_deltas_is_found(stream: str, echo: str) -> None:
    text = ECHOES[echo]
    for at in (1, len(text) // 2, len(text) - 1):
        data = _cassette(STREAMS[stream](_halves(text, at)))
        findings = scan_cassette_data(data, literals=[KEY])
        assert any(f.where.endswith("<stream>") for f in findings), (at, findings)


def test_an_unknown_key_split_across_deltas_is_found_by_its_shape() -> None:
    """No literal given (a key the recorder did not send): the joined text still has a key's shape."""
    findings = scan_cassette_data(_cassette(_anthropic_stream(_halves(KEY, 9))))
    assert [f.kind for f in findings] == ["sk-key"]


def test_a_stream_without_a_key_is_not_flagged() -> None:
    words = ["Streaming ", "answers ", "join ", "their ", "deltas."]
    assert scan_cassette_data(_cassette(_anthropic_stream(words)), literals=[KEY]) == []


def test_dsweb_record_refuses_a_streamed_answer_that_splits_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV, KEY)
    body = _anthropic_stream(_halves(KEY, len(KEY) // 2)).encode()
    with running() as server:
        server.routes["/v1/tools/search"] = Reply(200, body, {"Content-Type": "text/event-stream"})
        main(["record", "search-api.basic", "--base", server.base, "--out", str(tmp_path), "--key-env", ENV])
    out = capsys.readouterr().out
    assert sorted(tmp_path.rglob("*.yaml")) == [], out
    assert "refused" in out and "<stream>" in out, out
    assert KEY not in out


@pytest.mark.parametrize("depth", [900, 50_000], ids=["deep enough for the walk", "past the decoder's depth"])
def test_a_deeply_nested_event_neither_crashes_the_scan_nor_hides_the_split_key(depth: int) -> None:
    # catches: a recursive walk of each event's JSON (and json's own RecursionError) let out of the scan, so a
    # hostile streamed body stopped `dsweb record` with a traceback instead of a verdict
    nested = "[" * depth + "]" * depth
    body = f"data: {nested}\n\n" + _anthropic_stream(_halves(KEY, len(KEY) // 2))
    findings = scan_cassette_data(_cassette(body), literals=[KEY])
    assert any(f.where.endswith("<stream>") for f in findings), findings
