"""A wrong reading of a rule, made by changing one piece of the reference, and the rows of a check it
fails: the shared machinery of the tests that prove each case row catches the reading it names."""

from __future__ import annotations

import inspect
import re
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
    """``owner.function`` (a module's function or a class's method, a classmethod too) with its one ``right`` text
    replaced by ``wrong``, wherever it is bound: in ``owner`` and in each of ``importers`` that imported it by name."""
    original = getattr(owner, function)
    stored = inspect.getattr_static(owner, function)  # a classmethod's own object (each getattr binds it anew)
    source = textwrap.dedent(inspect.getsource(original))
    assert source.count(right) == 1, (function, right)
    home = owner if isinstance(owner, ModuleType) else sys.modules[owner.__module__]
    namespace: dict[str, Any] = dict(vars(home))
    exec(source.replace(right, wrong), namespace)
    for module in (owner, *importers):
        if getattr(module, function, None) is original or inspect.getattr_static(module, function, None) is stored:
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


TOOL_CRASH = "the tool raised instead of returning an error result"  # how a check ends when the tool raised


def keep_rows(module: ModuleType, table: str, names: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """``module.table`` cut to the rows ``names`` (each must exist)."""
    monkeypatch.setattr(module, table, tuple(c for c in getattr(module, table) if c.name in names))
    assert {c.name for c in getattr(module, table)} == set(names)


def fails_exactly_shown(
    module: ModuleType, table: str, check: str, row: str, shown: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``row`` alone fails ``check`` and the table without it passes: :func:`fails_exactly` for a check whose reason
    names a row otherwise (``shown`` picks the names out of it). ``shown`` None: the row's reading crashes the
    tool, which ends the check with an error that names no row."""
    cases = getattr(module, table)

    def outcome(kept: tuple[Any, ...]) -> tuple[str, str]:
        monkeypatch.setattr(module, table, kept)
        (result,) = run(reference_target(), only=[check]).results
        return result.outcome.value, result.reason

    value, reason = outcome(tuple(c for c in cases if c.name == row))
    if shown is None:
        assert value == "error" and TOOL_CRASH in reason, reason
    else:
        assert value == "failed" and set(re.findall(shown, reason)) == {row}, reason
    value, reason = outcome(tuple(c for c in cases if c.name != row))
    assert value == "passed", reason
