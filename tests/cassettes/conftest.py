"""Fixtures for the cassette tests: the cassette directory and a network that refuses to connect."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"


class NetworkBlocked(RuntimeError):
    pass


@pytest.fixture
def cassette_dir() -> Path:
    return CASSETTES


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every socket connect raises; the list collects the addresses that were attempted."""
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> Any:
        attempts.append(address)
        raise NetworkBlocked(f"network blocked in replay tests (tried {address!r})")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield attempts
    assert not attempts, f"replay tried to connect: {attempts}"
