"""The emulator's seed-003 additions at the wire: the /v1/responses route, its auth, its faults,
unknown models, and the SDK base URLs the emulator advertises."""

from __future__ import annotations

import httpx
import pytest

from dsweb_ref.emulator import Emulator, HugeSummary, NoSources, ProseOnly, ToolError
from dsweb_ref.emulator.faults import FaultRule

BODY = {"model": "deepseek-v4-flash", "input": "search api", "tools": [{"type": "web_search"}]}


def test_responses_route_needs_the_bearer_key(emulator: Emulator, emulator_api_key: str) -> None:
    url = emulator.openai_base + "/responses"
    assert httpx.post(url, json=BODY).status_code == 401
    assert httpx.post(url, json=BODY, headers={"x-api-key": emulator_api_key}).status_code == 401
    ok = httpx.post(url, json=BODY, headers={"authorization": f"Bearer {emulator_api_key}"})
    assert ok.status_code == 200 and ok.json()["object"] == "response"
    assert [r.route for r in emulator.log.records()] == ["responses"] * 3


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/anthropic/v1/messages",
      {"type": "error", "error": {"type": "invalid_request_error", "message": "Model Not Exist"}}),
     ("/v1/responses", {"error": {"message": "Model Not Exist", "type": "invalid_request_error",
                                  "param": "model", "code": "invalid_request_error"}})],
)
def test_unknown_deepseek_model_is_400_in_the_routes_envelope(
    emulator: Emulator, emulator_api_key: str, path: str, expected: dict[str, object]
) -> None:
    body = {"model": "deepseek-v4-flash-typo", "max_tokens": 16, "input": "x",
            "messages": [{"role": "user", "content": "x"}]}
    reply = httpx.post(emulator.base_url + path, json=body, headers={"authorization": f"Bearer {emulator_api_key}"})
    assert reply.status_code == 400
    assert reply.json() == expected


@pytest.mark.parametrize("fault", [ProseOnly(), ToolError(), NoSources(), HugeSummary(10)])
def test_answer_faults_apply_to_model_routes_only(fault: object) -> None:
    for route in ("messages", "responses", "*"):
        FaultRule(route, fault)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="messages and responses routes only"):
        FaultRule("search", fault)  # type: ignore[arg-type]


def test_stream_answer_is_event_stream(emulator: Emulator, emulator_api_key: str) -> None:
    reply = httpx.post(emulator.openai_base + "/responses", json={**BODY, "stream": True},
                       headers={"authorization": f"Bearer {emulator_api_key}"})
    assert reply.headers["content-type"].startswith("text/event-stream")
    assert reply.text.startswith("event: response.created\ndata: {") and reply.text.endswith("\n\n")


def test_emulator_advertises_each_sdk_base(emulator: Emulator) -> None:
    described = emulator.describe()
    assert described["anthropic_base"] == emulator.base_url + "/anthropic"
    assert described["openai_base"] == emulator.base_url + "/v1"
