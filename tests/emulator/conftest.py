"""Fixtures for the emulator's own tests: the shared emulator fixtures plus an authenticated client."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from dsweb_ref.emulator import Emulator
from dsweb_ref.emulator.fixtures import *  # noqa: F403 - the shared emulator fixtures


@pytest.fixture
def auth(emulator_api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_api_key}"}


@pytest.fixture
def client(emulator: Emulator, auth: dict[str, str]) -> Iterator[httpx.Client]:
    """Talks to ``emulator`` with its API key; never follows redirects."""
    with httpx.Client(base_url=emulator.base_url, headers=auth, timeout=10.0, follow_redirects=False) as c:
        yield c
