"""A wrong reading of a rule, made by changing one piece of the reference, and the rows of a check it
fails: the shared machinery of the tests that prove each case row catches the reading it names."""

from __future__ import annotations

import inspect
import re
import sys
import textwrap
from collections.abc import Callable, Collection
from types import ModuleType
from typing import Any

import pytest

from dsweb_ref.certification.checks import fetch
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


def fails_exactly(
    module: ModuleType, table: str, check: str, rows: str | Collection[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only ``rows`` (one name, or several) of ``module.table`` fail the reference as it is now: each alone fails
    (its reason starts with its name) and the table without them passes, a run per row and one more where
    :func:`failing_rows` takes one per row of the table. The table is whole again after."""

    def named(value: str, reason: str, row: str) -> None:
        assert value == "failed" and reason.startswith(f"{row}: "), reason

    _fails_only(module, table, check, rows, named, monkeypatch)


TOOL_CRASH = "the tool raised instead of returning an error result"  # how a check ends when the tool raised


def keep_rows(module: ModuleType, table: str, names: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """``module.table`` cut to the rows ``names`` (each must exist)."""
    monkeypatch.setattr(module, table, tuple(c for c in getattr(module, table) if c.name in names))
    assert {c.name for c in getattr(module, table)} == set(names)


def passes(check: str) -> None:
    """The reference as it is now passes ``check``."""
    (result,) = run(reference_target(), only=[check]).results
    assert result.outcome.value == "passed", result.reason


def passes_rows(
    module: ModuleType, table: str, check: str, rows: str | Collection[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference as it is now passes ``rows`` (one name, or several) of ``module.table``, each alone; the table
    stays cut to them."""
    keep_rows(module, table, (rows,) if isinstance(rows, str) else tuple(rows), monkeypatch)
    assert failing_rows(module, table, check, monkeypatch) == set()


def only_fetch_table(keep: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """fetch.api.mapping with its case table ``keep`` alone: the others prove nothing for the test at hand (and the
    long pages are slow)."""
    for other in ("MAPPING", "OTHER_SUCCESS", "BOUNDS", "FAILURES", "FALLBACK"):
        if other != keep:
            monkeypatch.setattr(fetch, other, ())


def fails_exactly_shown(
    module: ModuleType, table: str, check: str, rows: str | Collection[str], shown: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """:func:`fails_exactly` for a check whose reason names a row otherwise: ``shown`` picks the names out of it, and
    each row's reason names that row and no other. ``shown`` None: the row's reading crashes the tool, which ends
    the check with an error that names no row."""

    def named(value: str, reason: str, row: str) -> None:
        if shown is None:
            assert value == "error" and TOOL_CRASH in reason, reason
        else:
            assert value == "failed" and set(re.findall(shown, reason)) == {row}, reason

    _fails_only(module, table, check, rows, named, monkeypatch)


def _fails_only(
    module: ModuleType, table: str, check: str, rows: str | Collection[str],
    named: Callable[[str, str, str], None], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each of ``rows`` alone ends ``check`` as ``named`` (outcome, reason, row) asserts; the table without them
    passes; the table whole again after."""
    cases = getattr(module, table)
    names = {rows} if isinstance(rows, str) else set(rows)
    assert names and names <= {c.name for c in cases}, names

    def outcome(kept: tuple[Any, ...]) -> tuple[str, str]:
        monkeypatch.setattr(module, table, kept)
        (result,) = run(reference_target(), only=[check]).results
        return result.outcome.value, result.reason

    for row in sorted(names):
        named(*outcome(tuple(c for c in cases if c.name == row)), row)
    value, reason = outcome(tuple(c for c in cases if c.name not in names))
    assert value == "passed", reason
    monkeypatch.setattr(module, table, cases)
