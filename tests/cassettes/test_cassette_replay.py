"""cassette_replay: the replay context a provider package's own tests use on our cassettes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import vcr.errors

from dsweb_ref import FetchResult
from dsweb_ref.replay.cassettes import cassette_replay, default_cassette_dir, provenance_of
from dsweb_ref.replay.probes import ProbeContext, get_probe

from .conftest import CASSETTES


def _fetch_context(path: Path, url: str) -> ProbeContext:
    base = provenance_of(path)["replay_base"]
    return ProbeContext(None, base, "any-key-replay-ignores-it", {"url": url})


def test_default_dir_is_the_shipped_cassettes() -> None:
    # From a checkout it is cassettes/ itself; from a wheel, the copy packaged inside it.
    shipped = default_cassette_dir()
    files = sorted(p.relative_to(CASSETTES) for p in CASSETTES.rglob("*.yaml"))
    assert files and files == sorted(p.relative_to(shipped) for p in shipped.rglob("*.yaml"))
    assert all((shipped / f).read_bytes() == (CASSETTES / f).read_bytes() for f in files)


def test_replays_a_committed_cassette_offline(no_network: list[Any]) -> None:
    probe = get_probe("fetch-api.success")
    path = CASSETTES / probe.cassette
    with cassette_replay(probe.cassette) as cassette:  # relative: under the shipped cassettes
        run = asyncio.run(probe.run(_fetch_context(path, probe.params["url"])))
    assert isinstance(run.outcomes[0], FetchResult) and [e.status for e in run.exchanges] == [200]
    assert cassette.all_played and cassette.play_count == 1


def test_an_unrecorded_request_raises_instead_of_reaching_the_network(no_network: list[Any]) -> None:
    probe = get_probe("fetch-api.success")
    path = CASSETTES / probe.cassette
    # same route, different body: body matching refuses it (record mode none: nothing is recorded)
    with cassette_replay(path), pytest.raises(vcr.errors.CannotOverwriteExistingCassetteException):
        asyncio.run(probe.run(_fetch_context(path, "https://docs.example.test/api/other")))
    # a played interaction is not replayed twice unless asked
    with cassette_replay(path), pytest.raises(vcr.errors.CannotOverwriteExistingCassetteException):
        for _ in range(2):
            asyncio.run(probe.run(_fetch_context(path, probe.params["url"])))
    with cassette_replay(path, allow_playback_repeats=True) as cassette:
        for _ in range(2):
            asyncio.run(probe.run(_fetch_context(path, probe.params["url"])))
    assert cassette.play_count == 2


def test_a_missing_cassette_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no cassette"):
        cassette_replay("search-api/no-such.yaml")
    with pytest.raises(FileNotFoundError, match="no cassette"):
        cassette_replay("basic.yaml", root=tmp_path)
