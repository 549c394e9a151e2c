"""Issue 24 item 5: rows added for survivors of the mutation run over the seam (dsweb_ref/_service.py) and
the composition root (dsweb_ref/runtime.py). Each test bends the reference into the wrong reading a row
names and asserts that exactly that row of its check fails."""

from __future__ import annotations

import inspect
import textwrap
from typing import Any

import pytest

from dsweb_ref import _service, runtime
from dsweb_ref.certification.checks import outcomes, summary, text
from dsweb_ref.certification.targets import reference_target

from ._readings import failing_rows
from .conftest import run


def patch_method(owner: type, method: str, right: str, wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``owner.method`` with its one ``right`` text replaced by ``wrong`` (compiled in its module's namespace)."""
    source = textwrap.dedent(inspect.getsource(getattr(owner, method)))
    assert source.count(right) == 1, (method, right)
    namespace: dict[str, Any] = dict(vars(inspect.getmodule(owner)))
    exec(source.replace(right, wrong), namespace)
    monkeypatch.setattr(owner, method, namespace[method])


def test_an_answer_dropped_when_the_cap_cuts_the_sources_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seam truncates a provider result to max_results and drops the provider's answer with the sources."""
    patch_method(_service.WebService, "search", "content=result.content, truncated=True",
                 "content=None, truncated=True", monkeypatch)
    assert failing_rows(text, "BOUNDED_ANSWERS", "search.text.bounded_answers", monkeypatch) == {
        "an answer whose sources overflow the cap"}


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(text, "BOUNDED_ANSWERS", "search.text.bounded_answers", monkeypatch) == set()


def _base_unavailable_failure() -> str:
    (result,) = run(reference_target(), only=["search.api.base_unavailable"]).results
    return result.reason if result.outcome.value != "passed" else ""


def test_the_reference_keeps_http_fetch_with_the_switch_off() -> None:
    assert _base_unavailable_failure() == ""


def test_http_fetch_unavailable_with_a_blank_api_base_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """runtime._HttpFetchPerOperation.available -> False: the switch-off fetch provider is never usable."""
    monkeypatch.setattr(runtime._HttpFetchPerOperation, "available", lambda self: False)
    assert _base_unavailable_failure().startswith(f"{outcomes.SWITCH_OFF.name}: ")


def test_the_reference_passes_the_summary_budget_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(summary, "BUDGET_CASES", "search.api.summary.budget", monkeypatch) == set()


def test_an_ignored_per_source_summary_budget_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """runtime.Runtime.search_tool without summary_max_chars: the tool's default 1,000 whatever is configured."""
    patch_method(runtime.Runtime, "search_tool", "summary_max_chars=t.search_summary_max_chars,", "", monkeypatch)
    assert failing_rows(summary, "BUDGET_CASES", "search.api.summary.budget", monkeypatch) == {
        "a per-source budget of 400"}
