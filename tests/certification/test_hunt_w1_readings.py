"""Read-only hunt W1 looked for configuration values the checks only tried at whole, round or canonical values, so a
plausible wrong reading answered as the right one on every row; the rows that now reject them.

- W1-1: localization validated with socket.inet_aton (IPv4) / inet_pton (IPv6) and forwarded as written: inet_aton
  takes '203.0.113.7 junk' (it stops at whitespace), '127.1' and '3405803783', none an IP literal. Seed 001: "define
  a bounded localization input before forwarding it. API localization is an IP address".
- W1-2: timeout_s read as whole seconds with 0 as no deadline (a duration of whole seconds; a client whose timeout 0
  means none): every ssrf.deadline row ran under timeout_s 1. The adapter protocol: timeout_s is "one deadline ...
  per web_fetch", a number.

Each wrong reading is made in the reference and fails exactly its new rows; the reference passes them; the open
neighbours pass."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dsweb_ref import WebError, WebErrorCode
from dsweb_ref import settings as settings_module
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import scheduling, ssrf_limits
from dsweb_ref.providers import deepseek_search_api

from ._readings import failing_rows, fails_exactly, passes_rows
from .test_breaks_end_to_end import example_adapter_module

LOCALIZATION = "search.api.localization"
INET_ATON_ROWS = ("an IPv4 literal then other text", "a shortened IPv4 form", "an IPv4 address as one number")
DEADLINE, HALF_SECOND = "ssrf.deadline", "silent-half-second"


def test_the_new_rows_exist() -> None:
    assert set(INET_ATON_ROWS) <= {c.name for c in scheduling.LOCALIZATION_CASES}
    assert HALF_SECOND in {c.name for c in ssrf_limits.DEADLINE_CASES}


# --- W1-1: localization validated with socket.inet_aton -----------------------------------------------------------


# the hunt's validator, as the example adapter's break localization-inet-aton has it
_inet_literal = example_adapter_module().inet_literal


def test_the_reference_refuses_what_inet_aton_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(scheduling, "LOCALIZATION_CASES", LOCALIZATION, INET_ATON_ROWS, monkeypatch)


def test_localization_validated_with_inet_aton_fails_exactly_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the classic idiom "inet_aton for IPv4, inet_pton for IPv6", the value forwarded as configured
    monkeypatch.setattr(settings_module, "ip_literal", _inet_literal)
    monkeypatch.setattr(deepseek_search_api, "ip_literal", _inet_literal)
    fails_exactly(scheduling, "LOCALIZATION_CASES", LOCALIZATION, set(INET_ATON_ROWS), monkeypatch)


# --- W1-2: timeout_s read as whole seconds, 0 as no deadline -------------------------------------------------------


def _fetch_deadline(monkeypatch: pytest.MonkeyPatch, read: Callable[[float], float]) -> None:
    """The reference's web_fetch deadline read from configure's timeout_s by ``read`` (raising refuses it)."""
    right = targets.reference_settings

    def bent(config: Any, current: Any = None) -> Any:
        settings = right(config, current)
        return settings.updated({"http_fetch.timeout_s": read(settings.http_fetch.timeout_s)})

    monkeypatch.setattr(targets, "reference_settings", bent)


def test_the_reference_keeps_a_half_second_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(ssrf_limits, "DEADLINE_CASES", DEADLINE, HALF_SECOND, monkeypatch)


def test_a_deadline_in_whole_seconds_fails_exactly_the_half_second_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: time.Duration(timeoutS) * time.Second (0.5 becomes 0) with a client whose timeout 0 means none
    _fetch_deadline(monkeypatch, lambda seconds: float(int(seconds)) or 86_400.0)
    assert failing_rows(ssrf_limits, "DEADLINE_CASES", DEADLINE, monkeypatch) == {HALF_SECOND}


def test_a_deadline_rounded_up_to_a_second_passes_the_half_second_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # not judged: 0.5 rounded up to 1 s answers within the margin (the row catches "no deadline" only)
    _fetch_deadline(monkeypatch, lambda seconds: max(1.0, seconds))
    passes_rows(ssrf_limits, "DEADLINE_CASES", DEADLINE, HALF_SECOND, monkeypatch)


def test_a_deadline_under_a_second_refused_at_configure_passes_the_half_second_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # open (review R8-3): a target may refuse so short a deadline at configure; no fetch then runs without one
    def refusing(seconds: float) -> float:
        if seconds < 1:
            raise WebError(WebErrorCode.CONFIG_INVALID, "timeout_s under 1 s")
        return seconds

    _fetch_deadline(monkeypatch, refusing)
    passes_rows(ssrf_limits, "DEADLINE_CASES", DEADLINE, HALF_SECOND, monkeypatch)
