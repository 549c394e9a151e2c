"""Assembling the standalone tool from a selection, and ``dsweb solo resolve``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from dsweb_ref.cli import main
from dsweb_ref.runtime import standalone_search_tool
from dsweb_ref.standalone_accounts import resolve
from dsweb_ref.tools.standalone_search import StandaloneSearchTool

MESSAGES_REPLY = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
    "content": [{"type": "web_search_tool_result", "tool_use_id": "s", "content": []},
                {"type": "text", "text": "ok"}],
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def _document(base: str) -> dict[str, Any]:
    return {"current": "relay", "accounts": [
        {"name": "relay", "protocol": "messages", "base_url": base, "model": "m", "api_key_env": "K",
         "web_search": True}]}


def test_selection_is_fixed_when_the_tool_is_assembled() -> None:
    urls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        urls.append(str(request.url))
        return httpx.Response(200, json=MESSAGES_REPLY)

    document = _document("https://first.test/anthropic")
    tool = standalone_search_tool(resolve(document, {"K": "key"}), transport=httpx.MockTransport(handler),
                                  environ={"K": "key"})
    assert isinstance(tool, StandaloneSearchTool)
    document["accounts"][0]["base_url"] = "https://second.test/anthropic"  # edited after assembly
    result = asyncio.run(tool.execute({"query": "q"}))
    assert not result.is_error and urls == ["https://first.test/anthropic/v1/messages"]


def test_no_tool_when_the_selection_registers_none() -> None:
    assert standalone_search_tool(resolve({"offline": True}, {})) is None


def test_cli_resolve_prints_the_route(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSWEB_TEST_RELAY_KEY", "secret-value-never-printed")
    config = tmp_path / "accounts.toml"
    config.write_text(
        'current = "relay"\n[[accounts]]\nname = "relay"\nprotocol = "responses"\n'
        'base_url = "https://relay.test/v1"\nmodel = "vendor/m"\napi_key_env = "DSWEB_TEST_RELAY_KEY"\n'
        "web_search = true\n"
    )
    assert main(["solo", "resolve", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["route"] == {"account": "relay", "protocol": "responses",
                                         "url": "https://relay.test/v1/responses", "model": "vendor/m",
                                         "api_key_env": "DSWEB_TEST_RELAY_KEY"}
    assert "secret-value-never-printed" not in out


def test_cli_resolve_reports_why_nothing_is_registered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "a.json"
    config.write_text(json.dumps({"web_search_model": "gone/m", "accounts": []}))
    assert main(["solo", "resolve", "--config", str(config)]) == 1
    shown = json.loads(capsys.readouterr().out)
    assert shown.pop("notice").startswith("web_search is unavailable")
    assert shown == {"status": "invalid", "route": None, "reason": "not_found", "reference": "gone/m",
                     "skipped": [], "web_search_model": {"value": "gone/m", "from": "user"}}


def test_cli_resolve_bad_document_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "a.toml"
    config.write_text("accounts = 3\n")
    assert main(["solo", "resolve", "--config", str(config)]) == 2
    assert "WEB_CONFIG_INVALID" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["a.json", "a.toml"])
@pytest.mark.parametrize("command", ["resolve", "search"])
def test_cli_document_nested_too_deeply_exits_2(name: str, command: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # catches: the parsers' RecursionError let out as a traceback (a configuration is hostile input)
    config = tmp_path / name
    config.write_text("[" * 100_000 if name.endswith(".json") else "x = " + "[" * 100_000)
    argv = ["solo", "resolve", "--config", str(config)] if command == "resolve" else [
        "solo", "search", "q", "--config", str(config)]
    assert main(argv) == 2
    assert "nested too deeply" in capsys.readouterr().err


@pytest.mark.parametrize("protocol", ["messages", "responses"])
def test_cli_search_on_the_emulator_prints_the_model_visible_json(
    protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["solo", "search", "search api", "--emulator", "--protocol", protocol]) == 0
    value = json.loads(capsys.readouterr().out)
    assert set(value) == {"summary", "sources"} and value["sources"]


def test_cli_search_json_includes_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solo", "search", "search api", "--emulator", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["is_error"] is False and out["value"]["usage"]["source"] == "web-search"


def test_cli_search_without_a_selection_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "a.toml"
    config.write_text("offline = true\n")
    assert main(["solo", "search", "q", "--config", str(config)]) == 1
    assert json.loads(capsys.readouterr().out)["reason"] == "offline"
