"""The shared emulator fixtures for the standalone-search tests."""

from dsweb_ref.emulator.fixtures import *  # noqa: F403 - the shared emulator fixtures
