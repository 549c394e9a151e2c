"""pytest fixtures: a fresh emulator per test.

A new server per test (about a tenth of a second) keeps tests independent: no fault, held request,
log entry or keep-alive connection leaks from one test into the next, and under pytest-xdist each
worker process simply starts its own servers on its own ephemeral ports.

Use them from a conftest.py with ``from dsweb_ref.emulator.fixtures import *``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from .server import DEFAULT_ACCOUNT_TOKEN, DEFAULT_API_KEY, Emulator

__all__ = ["EmulatorFactory", "emulator", "emulator_account_token", "emulator_api_key", "emulator_factory"]

EmulatorFactory = Callable[..., Emulator]


@pytest.fixture
def emulator_api_key() -> str:
    """The API key the ``emulator`` fixture accepts."""
    return DEFAULT_API_KEY


@pytest.fixture
def emulator_account_token() -> str:
    """The account token the ``emulator`` fixture accepts."""
    return DEFAULT_ACCOUNT_TOKEN


@pytest.fixture
def emulator_factory() -> Iterator[EmulatorFactory]:
    """Start emulators with custom settings (``Emulator`` keyword arguments); all stop at teardown."""
    with ExitStack() as stack:

        def start(**kwargs: Any) -> Emulator:
            return stack.enter_context(Emulator(**kwargs))

        yield start


@pytest.fixture
def emulator(emulator_api_key: str, emulator_account_token: str) -> Iterator[Emulator]:
    """A started emulator accepting ``emulator_api_key`` and ``emulator_account_token``."""
    with Emulator(api_keys=(emulator_api_key,), account_tokens=(emulator_account_token,)) as emu:
        yield emu
