"""Shared test fixtures: snapshot flavours that are safe under xdist (one file per snapshot), the
xdist scheduling mode from pytest config (``xdist_dist``), and tests marked ``slow`` started first."""

from __future__ import annotations

import os

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class TextSnapshotExtension(SingleFileSnapshotExtension):
    """Exact text, one ``.txt`` file per snapshot (model-visible output, raw wire bytes as text)."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.fixture
def snapshot_text(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(TextSnapshotExtension)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("xdist_dist", "pytest-xdist --dist mode for `-n N` runs that name none (see pyproject)", default="")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Apply ``xdist_dist`` when xdist distributes (``-n N``) and no ``--dist`` was given. Not in
    ``addopts``: ``--dist`` there would break every run with ``-p no:xdist``."""
    mode = config.getini("xdist_dist")
    given = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    if any(arg == "--dist" or arg.startswith("--dist=") or arg == "--distload" for arg in given):
        return
    if mode and getattr(config.option, "dist", "no") == "load":
        config.option.dist = mode


def auto_workers(cores: int) -> int:
    """Workers for ``-n auto``: twice the cores, at most eight more than them. Much of the suite's worker time
    is real waiting (deadlines, retry waits, race bounds, adapter starts): with four workers on two cores
    the whole suite used 1.6 cores on average and took 926 s against 1,478 s with two (one machine, the same
    day, both beside other work; 0 failures). The timing checks are calibrated for a loaded runner, so the
    extra load costs no verdict. (Before: the cores plus half as many again, three on two cores.)"""
    return cores + min(cores, 8)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook honours the explicit choice
    return auto_workers(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` (whole certification runs) go first, dealt one by one to the head of each
    xdist worker's initial share (worksteal hands worker *i* the *i*-th contiguous slice), so they run
    side by side from the start instead of one worker ending the run with them."""
    slow = [item for item in items if item.get_closest_marker("slow")]
    if not slow:
        return
    rest = [item for item in items if not item.get_closest_marker("slow")]
    workers = max(1, int(getattr(config, "workerinput", {}).get("workercount", 1)))
    ordered: list[pytest.Item] = []
    for worker in range(workers):
        heads = slow[worker::workers]
        share = (worker + 1) * len(items) // workers - worker * len(items) // workers
        take = max(0, share - len(heads))
        ordered += heads + rest[:take]
        rest = rest[take:]
    items[:] = ordered + rest
