"""Tests marked ``slow`` start first, dealt to the head of each xdist worker's initial share."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from conftest import pytest_collection_modifyitems  # tests/ is on sys.path (no __init__.py), as for pool_state


class Item:
    def __init__(self, name: str, slow: bool) -> None:
        self.name = name
        self.slow = slow

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name == "slow" and self.slow else None


def order(names: str, workers: int | None) -> str:
    items: list[Any] = [Item(n, n.isupper()) for n in names]
    config: Any = SimpleNamespace(workerinput={"workercount": workers}) if workers else SimpleNamespace()
    pytest_collection_modifyitems(config, items)
    return "".join(i.name for i in items)


def test_slow_tests_head_each_workers_share_in_collection_order() -> None:
    # Eight tests, two workers: worksteal hands worker 0 the first four and worker 1 the last four.
    assert order("abCdeFgH", 2) == "CHab" + "Fdeg"
    assert sorted(order("abCdeFgH", 2)) == sorted("abCdeFgH")  # nothing lost or doubled


def test_without_workers_slow_tests_simply_go_first() -> None:
    assert order("abCdeF", None) == "CFabde"
    assert order("abc", 2) == "abc"  # no slow test: the order is left alone
