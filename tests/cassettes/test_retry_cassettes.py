"""The retry sequences recorded from the emulator: the one retrying layer (the Search/Fetch API
request path) replays them offline with the same statuses, in the same order, and waits."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from dsweb_ref.replay.cassettes import load_cassette
from dsweb_ref.replay.probes import get_probe
from dsweb_ref.replay.record import replay_probe

from .conftest import CASSETTES

SEQUENCES = {
    "search-api.retry-after-then-success": [429, 200],
    "search-api.backoff-then-success": [429, 200],
    "search-api.server-error-then-success": [503, 200],
    "search-api.insufficient-balance-not-retried": [402],
    "fetch-api.retry-after-then-success": [429, 200],
}


@pytest.mark.parametrize("probe_id", sorted(SEQUENCES))
def test_recorded_retry_sequence(probe_id: str) -> None:
    probe = get_probe(probe_id)
    assert probe.settings == {"deepseek_api.retries": 2}
    data = load_cassette(CASSETTES / probe.cassette)
    assert [i["response"]["status"]["code"] for i in data["interactions"]] == SEQUENCES[probe_id]
    assert data["provenance"]["settings"] == {"deepseek_api.retries": 2}
    bodies = {i["request"]["body"] for i in data["interactions"]}
    assert len(bodies) == 1, "a retry resends the same request"


@pytest.mark.parametrize("probe_id", sorted(SEQUENCES))
def test_replayed_retry_sequence(probe_id: str, no_network: list[Any]) -> None:
    probe = get_probe(probe_id)
    started = time.monotonic()
    run = asyncio.run(replay_probe(probe, CASSETTES / probe.cassette))
    took = time.monotonic() - started
    assert [e.status for e in run.exchanges] == SEQUENCES[probe_id]
    if "retry-after" in probe_id:
        assert took >= 1.0, "the recorded Retry-After: 1 was waited on replay too"
