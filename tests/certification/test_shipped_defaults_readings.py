"""An outside hunt (K, A17) found wrong shipped defaults certified: sendOriginalQuestion off, searchMaxQueries 8
instead of four, the Search API count 8 instead of the service's 10. The adapter protocol's ``configure`` always
carried every key, so no check saw a target's own defaults. Capability shipped-defaults adds ``"defaults":
true`` (every setting a configure does not carry keeps the shipped default) and search.defaults.shipped judges
the defaults seeds 000 and 001 decide. Each wrong default is made in the reference (the settings dataclass's
default, as the hunt's patch wrote it) and must fail exactly the row that names it; the reference passes them."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from dsweb_ref import settings
from dsweb_ref.certification.checks import shipped_defaults
from dsweb_ref.certification.targets import TargetConfig, reference_settings

from ._readings import failing_rows, fails_exactly

CHECK, TABLE = "search.defaults.shipped", "CASES"
FOUR, FIVE = (case.name for case in shipped_defaults.QUERY_CAP)
LIMIT, SERVICE_COUNT = (case.name for case in shipped_defaults.COUNT)
(ORI,) = (case.name for case in shipped_defaults.ORI)
(MESSAGES,) = (case.name for case in shipped_defaults.SELECTION)


def _ship(cls: type, monkeypatch: pytest.MonkeyPatch, **defaults: Any) -> None:
    """``cls`` constructed with ``defaults`` instead of its own (the dataclass default changed in settings.py)."""
    names = [p.name for p in inspect.signature(cls).parameters.values()]
    shipped = list(cls.__init__.__defaults__)  # type: ignore[misc]
    for name, value in defaults.items():
        shipped[names.index(name)] = value
    monkeypatch.setattr(cls.__init__, "__defaults__", tuple(shipped))


def test_configure_with_defaults_carries_only_the_given_keys() -> None:
    config = TargetConfig("http://127.0.0.1:1/anthropic/v1", "http://127.0.0.1:1/v1/tools", "k", count=3,
                          given=frozenset({"messages_base", "tools_base", "api_key", "search_max_results"}))
    sent = config.to_json()
    assert sent == {"messages_base": config.messages_base, "tools_base": config.tools_base, "api_key": "k",
                    "search_max_results": 8, "defaults": True}
    back = TargetConfig.from_json(sent)
    assert back.given == config.given and not back.gives("count") and back.gives("api_key")
    # the reference keeps its own defaults for what is not given, not the suite's values (count 3 never sent)
    ours = reference_settings(back)
    assert (ours.deepseek_api.count, ours.web.search_provider, ours.deepseek_api.base_url) == (
        10, "deepseek-official", config.tools_base)
    assert "defaults" not in TargetConfig("m", "t", "k").to_json()  # every key, as before


def test_the_reference_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(shipped_defaults, TABLE, CHECK, monkeypatch) == set()


def test_search_max_queries_shipped_as_eight_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: searchMaxQueries 8 by default (hunt K91b), so five queries are searched ("defaults to four", seed 000)
    _ship(settings.ToolSettings, monkeypatch, search_max_queries=8)
    fails_exactly(shipped_defaults, TABLE, CHECK, FIVE, monkeypatch)


def test_search_max_queries_shipped_as_three_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a cap below four by default, so a four-query batch is refused
    _ship(settings.ToolSettings, monkeypatch, search_max_queries=3)
    fails_exactly(shipped_defaults, TABLE, CHECK, FOUR, monkeypatch)


def test_count_shipped_as_eight_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the count setting shipped as the tool's 8 (hunt K91b), not the service's 10: under a limit of 20 the
    # request says 8 (seed 001: "defaulting to the service's 10")
    _ship(settings.DeepSeekApiSettings, monkeypatch, count=8)
    fails_exactly(shipped_defaults, TABLE, CHECK, SERVICE_COUNT, monkeypatch)


def test_search_max_results_shipped_as_ten_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the tool's limit shipped as the service's 10, so 10 is sent (seed 001: "the tool always sends its
    # limit, 8 by default")
    _ship(settings.ToolSettings, monkeypatch, search_max_results=10)
    fails_exactly(shipped_defaults, TABLE, CHECK, LIMIT, monkeypatch)


def test_send_original_question_shipped_off_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: sendOriginalQuestion off by default (hunt K91a), so no ori_question goes with a prompt (seed 001:
    # the prompt is sent "unless sendOriginalQuestion is off")
    _ship(settings.DeepSeekApiSettings, monkeypatch, send_original_question=False)
    fails_exactly(shipped_defaults, TABLE, CHECK, ORI, monkeypatch)


def test_the_switch_shipped_on_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the Search API made the default before its launch (seed 001: "The switch defaults off", Messages
    # search "the shipped selection"), so a deployment with no selection written searches through /search
    search, fetch = settings.API_SELECTION
    _ship(settings.WebSettings, monkeypatch, search_provider=search, fetch_provider=fetch, use_new_search_api=True)
    fails_exactly(shipped_defaults, TABLE, CHECK, MESSAGES, monkeypatch)


def test_defaults_the_seeds_leave_open_may_ship_any_value(monkeypatch: pytest.MonkeyPatch) -> None:
    # a certified variant: the Messages max_uses and max_tokens and the Search API timeout are the deployment's
    # (seed 001 fixes none of their defaults); the check reads only the four it names
    _ship(settings.DeepSeekMessagesSettings, monkeypatch, max_uses=3, max_tokens=2048)
    _ship(settings.DeepSeekApiSettings, monkeypatch, timeout_s=20.0)
    assert failing_rows(shipped_defaults, TABLE, CHECK, monkeypatch) == set()


def test_a_messages_model_the_emulator_does_not_know_passes_the_messages_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # a certified variant (a diff review's false failure): the shipped Messages model is the target's own; the
    # emulator refuses a model it does not know, so the row judges only which route the search took
    _ship(settings.DeepSeekMessagesSettings, monkeypatch, model="a-model-of-its-own")
    assert failing_rows(shipped_defaults, TABLE, CHECK, monkeypatch) == set()
