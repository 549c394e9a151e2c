"""Seed 003: only switching between two valid search models leaves the main model's tool
definitions unchanged; switching the search on or off is the one change to the list."""

from __future__ import annotations

import json
from typing import Any

from syrupy.assertion import SnapshotAssertion

from dsweb_ref.runtime import build_runtime, main_model_tools
from dsweb_ref.settings import Settings
from dsweb_ref.standalone_accounts import resolve

ENV = {"DS_KEY": "k1", "RELAY_KEY": "k2"}
ACCOUNTS = [
    {"name": "main", "protocol": "chat", "base_url": "https://api.deepseek.com", "model": "deepseek-v4-flash",
     "api_key_env": "DS_KEY"},
    {"name": "relay", "protocol": "responses", "base_url": "https://relay.example.test/v1", "model": "gpt-x",
     "api_key_env": "RELAY_KEY", "web_search": True},
]


def _tools(**document: Any) -> bytes:
    fetch = build_runtime(Settings, environ={}).fetch_tool()
    resolution = resolve({"current": "main", "accounts": ACCOUNTS, **document}, ENV)
    tools = main_model_tools(resolution, [fetch], environ=ENV)
    return json.dumps(tools, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def test_two_valid_search_models_give_byte_identical_tool_lists(snapshot_text: SnapshotAssertion) -> None:
    official = _tools(web_search_model="main/deepseek-v4-pro")  # official Messages route, one model
    relay = _tools(web_search_model="relay/vendor/other-model")  # a third-party Responses route, another
    automatic = _tools()  # automatic: the current account's own model
    assert official == relay == automatic
    assert official.decode("utf-8") == snapshot_text


def test_switching_the_search_off_only_removes_the_web_search_definition() -> None:
    on = json.loads(_tools())
    for off in (_tools(offline=True), _tools(web_search_model="gone/m"), _tools(tools_enabled=["web_fetch"])):
        assert json.loads(off) == [t for t in on if t["function"]["name"] != "web_search"]
    assert [t["function"]["name"] for t in on] == ["web_search", "web_fetch"]
