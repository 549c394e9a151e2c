"""A wrong reading of a rule, made by changing one piece of the reference, and the rows of a check it
fails: the shared machinery of the tests that prove each case row catches the reading it names."""

from __future__ import annotations

import inspect
import sys
import textwrap
from types import ModuleType
from typing import Any

import pytest

from dsweb_ref.certification.targets import reference_target

from .conftest import run


def patch_reading(
    owner: ModuleType | type, function: str, right: str, wrong: str, monkeypatch: pytest.MonkeyPatch,
    *importers: ModuleType,
) -> None:
    """``owner.function`` (a module's function or a class's method) with its one ``right`` text replaced
    by ``wrong``, wherever it is bound: in ``owner`` and in each of ``importers`` that imported it by name."""
    original = getattr(owner, function)
    source = textwrap.dedent(inspect.getsource(original))
    assert source.count(right) == 1, (function, right)
    home = owner if isinstance(owner, ModuleType) else sys.modules[owner.__module__]
    namespace: dict[str, Any] = dict(vars(home))
    exec(source.replace(right, wrong), namespace)
    for module in (owner, *importers):
        if getattr(module, function, None) is original:
            monkeypatch.setattr(module, function, namespace[function])


def failing_rows(module: ModuleType, table: str, check: str, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The rows of ``module.table`` that fail the reference as it is now, each run alone by ``check``."""
    failing = set()
    cases = getattr(module, table)
    for case in cases:
        monkeypatch.setattr(module, table, (case,))
        (result,) = run(reference_target(), only=[check]).results
        if result.outcome.value != "passed":
            failing.add(case.name)
    monkeypatch.setattr(module, table, cases)  # whole again, for a second call in the same test
    return failing


def fails_exactly(module: ModuleType, table: str, check: str, row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only ``row`` of ``module.table`` fails the reference as it is now: ``row`` alone fails (its reason
    names it) and the table without it passes, two runs where :func:`failing_rows` takes one per row."""
    cases = getattr(module, table)
    assert row in {c.name for c in cases}

    def outcome(kept: tuple[Any, ...]) -> tuple[str, str]:
        monkeypatch.setattr(module, table, kept)
        (result,) = run(reference_target(), only=[check]).results
        return result.outcome.value, result.reason

    value, reason = outcome(tuple(c for c in cases if c.name == row))
    assert value == "failed" and reason.startswith(f"{row}: "), reason
    value, reason = outcome(tuple(c for c in cases if c.name != row))
    assert value == "passed", reason
