"""Issue 24 item 5: rows added for survivors of the mutation run over the settings (dsweb_ref/settings.py).
Each test bends the reference's settings validation into the wrong reading a row names and asserts that
exactly that row of its check fails (or, where the wrong reading crashes the call, that only that row
does not pass)."""

from __future__ import annotations

import dataclasses

import pytest

from dsweb_ref import settings
from dsweb_ref.certification.checks import scheduling, search

from ._readings import failing_rows, patch_reading


def _patch_validator(function: str, right: str, wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings validator ``function`` with ``right`` replaced by ``wrong``, in the module and in every
    key of the settings table that holds it (the table took the function itself when it was built)."""
    original = getattr(settings, function)
    patch_reading(settings, function, right, wrong, monkeypatch)
    for key, spec in list(settings._BY_KEY.items()):
        if spec.check is original:
            monkeypatch.setitem(settings._BY_KEY, key, dataclasses.replace(spec, check=getattr(settings, function)))


def _only(module: object, table: str, names: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep only the rows named: the timed rows of pacing.rate take seconds each and prove nothing here."""
    monkeypatch.setattr(module, table, tuple(c for c in getattr(module, table) if c.name in names))


def test_the_reference_passes_the_hostile_count_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(search, "COUNT", {"count given as a string", "count given as true"}, monkeypatch)
    assert failing_rows(search, "COUNT", "search.api.count", monkeypatch) == set()


def test_a_boolean_count_taken_for_an_integer_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """settings._check lets a bool pass for an int key (Python's bool is an int): configure count true, and
    true goes on the wire."""
    patch_reading(settings, "_check", "(expected is int and isinstance(value, bool))", "False", monkeypatch)
    assert failing_rows(search, "COUNT", "search.api.count", monkeypatch) == {"count given as true"}


def test_an_unchecked_setting_type_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """settings._check never refuses a value of the wrong type: the string count reaches the range check
    (and crashes there), the boolean count and the fractional count 7.5 go on the wire."""
    patch_reading(settings, "_check", "if not isinstance(value, expected) or (",
                  "if not isinstance(value, expected) and (", monkeypatch)
    assert failing_rows(search, "COUNT", "search.api.count", monkeypatch) == {
        "count given as a string", "count given as true", "count 7.5"}


def test_the_reference_refuses_a_zero_pacing_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(scheduling, "PACING_CASES", {"a rate of 0"}, monkeypatch)
    assert failing_rows(scheduling, "PACING_CASES", "search.api.pacing.rate", monkeypatch) == set()


@pytest.mark.parametrize("wrong", ["0 <= v <= MAX_QPS", "0 < v <= MAX_QPS or True"])
def test_a_zero_pacing_rate_accepted_is_caught(wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """settings._qps accepts 0: the pacer divides by it when the search starts."""
    _patch_validator("_qps", "0 < v <= MAX_QPS", wrong, monkeypatch)
    _only(scheduling, "PACING_CASES", {"a rate of 0"}, monkeypatch)
    assert failing_rows(scheduling, "PACING_CASES", "search.api.pacing.rate", monkeypatch) == {"a rate of 0"}


def test_the_reference_refuses_counts_outside_1_to_50(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(search, "COUNT", {"count 51", "count 0"}, monkeypatch)
    assert failing_rows(search, "COUNT", "search.api.count", monkeypatch) == set()


@pytest.mark.parametrize(
    "check, rows",
    [
        # catches: no range check at all: whatever is configured goes out, bounded by the cap alone
        (lambda v: None, {"count 51", "count 0"}),
        # catches: the upper bound only
        (lambda v: None if v <= 50 else "too large", {"count 0"}),
        # catches: the lower bound only
        (lambda v: None if v >= 1 else "too small", {"count 51"}),
    ],
)
def test_a_count_range_misread_is_caught(check: object, rows: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The count's range check (a _Range(1, 50) in the settings table) replaced
    by a wrong one in the table the configuration is validated against."""
    _only(search, "COUNT", {"count 51", "count 0"}, monkeypatch)
    spec = settings._BY_KEY["deepseek_api.count"]
    monkeypatch.setitem(settings._BY_KEY, "deepseek_api.count", dataclasses.replace(spec, check=check))
    assert failing_rows(search, "COUNT", "search.api.count", monkeypatch) == rows


ORI_FALSE = 'sendOriginalQuestion as the string "false"'


def test_the_reference_refuses_a_string_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "ORI_CASES", ())
    _only(search, "OMITTED", {ORI_FALSE}, monkeypatch)
    assert failing_rows(search, "OMITTED", "search.api.ori_question", monkeypatch) == set()


def test_a_string_switch_taken_as_on_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """settings._check lets a value of the wrong type through (the string "false" is then true)."""
    monkeypatch.setattr(search, "ORI_CASES", ())
    patch_reading(settings, "_check", "if not isinstance(value, expected) or (",
                  "if not isinstance(value, expected) and (", monkeypatch)
    assert failing_rows(search, "OMITTED", "search.api.ori_question", monkeypatch) == {ORI_FALSE}


def test_a_refused_configuration_is_not_recorded_as_the_targets() -> None:
    """CheckContext.configure_if_accepted: a refusal leaves the check's record of the configuration as the
    target still holds it, so the rows after a refused hostile value are judged against the real one."""
    import asyncio
    from typing import Any, cast

    from dsweb_ref.certification.checks._base import CheckContext
    from dsweb_ref.certification.targets import TargetConfig, TargetError

    class Picky:
        async def configure(self, config: TargetConfig) -> None:
            if config.count > 50:
                raise TargetError("count must be from 1 to 50")

    config = TargetConfig(messages_base="", tools_base="", api_key="", count=20)
    ctx = CheckContext(cast(Any, None), cast(Any, Picky()), cast(Any, None), config)
    assert asyncio.run(ctx.configure_if_accepted(count=51)) is False
    assert ctx.config is config
    assert asyncio.run(ctx.configure_if_accepted(count=30)) is True
    assert ctx.config.count == 30
