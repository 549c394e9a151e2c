"""Every cassette says where it came from, and vcrpy still loads it (issue 3)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from dsweb_ref.replay.cassettes import (
    KEY_PLACEHOLDER,
    PLACEHOLDER_ORIGIN,
    PROVENANCE_KEY,
    iter_cassettes,
    load_cassette,
    make_vcr,
    provenance_of,
)
from dsweb_ref.replay.probes import get_probe
from dsweb_ref.replay.record import EMULATOR_LABEL

from .conftest import CASSETTES

CASSETTE_FILES = iter_cassettes(CASSETTES)
REQUIRED = {"probe", "description", "recorded_against", "recorded_base", "replay_base", "recorded_at", "tool", "params"}


def _id(path: Path) -> str:
    return path.relative_to(CASSETTES).as_posix()


def test_there_are_cassettes_for_each_protocol() -> None:
    assert {p.parent.name for p in CASSETTE_FILES} == {
        "search-api",
        "fetch-api",
        "messages",
        "standalone-messages",
        "standalone-responses",
    }


@pytest.mark.parametrize("path", CASSETTE_FILES, ids=_id)
def test_cassette_has_honest_provenance(path: Path) -> None:
    provenance = provenance_of(path)
    assert REQUIRED <= set(provenance)
    probe = get_probe(provenance["probe"])
    assert probe.cassette == _id(path)
    # Every committed cassette was recorded against the local emulator and says so.
    assert provenance["recorded_against"] == EMULATOR_LABEL
    assert provenance["recorded_base"].startswith("http://127.0.0.1:")
    assert provenance["replay_base"].startswith(PLACEHOLDER_ORIGIN + "/")
    assert str(provenance["tool"]).startswith("dsweb_ref ")
    assert len(str(provenance["recorded_at"])) == 10
    if probe.needs_emulator:
        assert "fault" in provenance
    data = load_cassette(path)
    assert data["version"] == 1 and data["interactions"]
    for interaction in data["interactions"]:
        assert interaction["request"]["uri"].startswith(PLACEHOLDER_ORIGIN + "/")
        assert "127.0.0.1" not in yaml.safe_dump(interaction)


def test_vcrpy_tolerates_the_provenance_key(no_network: list[Any]) -> None:
    """Verified, not assumed: vcrpy's loader ignores the extra top-level key and replays."""
    path = CASSETTES / "fetch-api" / "success.yaml"
    assert PROVENANCE_KEY in yaml.safe_load(path.read_text("utf-8"))
    with make_vcr().use_cassette(str(path)) as cassette:
        assert len(cassette) == 1

        async def fetch() -> httpx.Response:
            async with httpx.AsyncClient() as client:
                return await client.post(
                    PLACEHOLDER_ORIGIN + "/v1/tools/fetch", json={"url": "https://docs.example.test/api/fetch"}
                )

        response = asyncio.run(fetch())
        assert response.status_code == 200 and response.json()["title"] == "Fetch API reference"


def test_credentials_were_replaced_by_placeholders() -> None:
    headers = load_cassette(CASSETTES / "messages" / "search.yaml")["interactions"][0]["request"]["headers"]
    assert headers["authorization"] == ["<REDACTED>"] and headers["x-api-key"] == ["<REDACTED>"]
    assert KEY_PLACEHOLDER.startswith("<")
