"""`pytest -n auto` (README's test line) starts more workers than cores: much of the suite's worker time
is real waiting, during which a worker per core leaves the cores idle."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import auto_workers  # tests/ is on sys.path (no __init__.py)

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("cores", "workers"), [(1, 2), (2, 4), (3, 6), (4, 8), (8, 16), (16, 24)])
def test_auto_is_twice_the_cores_at_most_eight_more(cores: int, workers: int) -> None:
    assert auto_workers(cores) == workers


def test_pytest_n_auto_starts_that_many_workers_and_an_explicit_count_wins() -> None:
    cores = len(os.sched_getaffinity(0))
    target = f"{Path(__file__).relative_to(ROOT)}::test_auto_is_twice_the_cores_at_most_eight_more"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_AUTO_NUM_WORKERS"}

    def started(extra_env: dict[str, str]) -> int:
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-n", "auto", "-p", "no:cacheprovider", target],
            cwd=ROOT,
            env={**env, **extra_env},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
        found = re.search(r"created: (\d+)/\d+ workers?\b", out)
        assert found, out
        return int(found.group(1))

    assert started({}) == auto_workers(cores) > cores
    assert started({"PYTEST_XDIST_AUTO_NUM_WORKERS": "1"}) == 1
