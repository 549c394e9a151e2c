"""Syrupy snapshots: the exact request body each standalone backend sends, and the exact
model-visible JSON the tool returns for the emulator's deterministic answers."""

from __future__ import annotations

import asyncio

import pytest
from syrupy.assertion import SnapshotAssertion

from dsweb_ref.emulator import Emulator, NoSources
from dsweb_ref.providers.standalone_messages import MessagesStandaloneSearch
from dsweb_ref.providers.standalone_responses import ResponsesStandaloneSearch
from dsweb_ref.tools.standalone_search import StandaloneSearchTool

PROTOCOLS = {
    "messages": ("messages", lambda emu: emu.messages_base + "/messages", MessagesStandaloneSearch),
    "responses": ("responses", lambda emu: emu.openai_base + "/responses", ResponsesStandaloneSearch),
}


def _search(emulator: Emulator, key: str, protocol: str) -> str:
    _, url, kind = PROTOCOLS[protocol]
    tool = StandaloneSearchTool(kind(url(emulator), "deepseek-v4-flash", "K", environ={"K": key}))
    result = asyncio.run(tool.execute({"query": "search api"}))
    assert not result.is_error, result.text
    return result.text


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_request_body(
    emulator: Emulator, emulator_api_key: str, protocol: str, snapshot_text: SnapshotAssertion
) -> None:
    _search(emulator, emulator_api_key, protocol)
    (record,) = emulator.log.for_route(PROTOCOLS[protocol][0])
    assert record.body.decode("utf-8") == snapshot_text


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_model_visible_json(
    emulator: Emulator, emulator_api_key: str, protocol: str, snapshot_text: SnapshotAssertion
) -> None:
    assert _search(emulator, emulator_api_key, protocol) == snapshot_text


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_model_visible_json_without_sources(
    emulator: Emulator, emulator_api_key: str, protocol: str, snapshot_text: SnapshotAssertion
) -> None:
    emulator.inject(PROTOCOLS[protocol][0], NoSources())  # type: ignore[arg-type]
    assert _search(emulator, emulator_api_key, protocol) == snapshot_text
