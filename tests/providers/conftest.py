"""Fixtures for the DeepSeek provider tests: a loopback server and wire-exact snapshots
(binary, one file per snapshot, so xdist workers never share a snapshot file)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension

from ._loopback import Loopback, running


class WireSnapshot(SingleFileSnapshotExtension):
    """Exact bytes, one ``.raw`` file per snapshot (binary write mode: no newline rewriting)."""

    file_extension = "raw"


@pytest.fixture
def wire_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(WireSnapshot)


@pytest.fixture
def json_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    with running() as server:
        yield server
