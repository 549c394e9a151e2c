"""Seed 001's fetch provider selected alone (capability fetch-selection, check fetch.selection.alone): an outside hunt
(O-A2) found the switch read as forcing both selections certified, since configure could only set the switch. Each
wrong reading is made in the reference's settings and must fail exactly the rows that name it; the reference passes."""

from __future__ import annotations

import pytest

from dsweb_ref import settings
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import fetch_selection

from ._readings import failing_rows, patch_reading

CHECK, TABLE = "fetch.selection.alone", "SELECTION_CASES"
MERGE = "        merged.update(layer)\n"  # settings._build: each layer over the ones below it


def test_the_reference_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(fetch_selection, TABLE, CHECK, monkeypatch) == set()


# catches (hunt O-A2): "the switch writes both selections" read as the switch forcing both while it is on
def test_the_switch_forcing_both_while_on_fails_exactly_the_http_alone_row(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(settings, "_build", MERGE,
                  MERGE + "    if merged[_SWITCH]:\n        merged[_SEARCH], merged[_FETCH] = API_SELECTION\n",
                  monkeypatch)
    assert failing_rows(fetch_selection, TABLE, CHECK, monkeypatch) == {"switch-on-http-fetch-alone"}


# catches: the switch off read as forcing local HTTP fetch ("HTTP fetch remains the selection whenever it is off")
def test_the_switch_forcing_http_while_off_fails_exactly_the_api_alone_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    patch_reading(settings, "_build", MERGE,
                  MERGE + "    if not merged[_SWITCH]:\n        merged[_FETCH] = MESSAGES_SELECTION[1]\n", monkeypatch)
    assert failing_rows(fetch_selection, TABLE, CHECK, monkeypatch) == {"switch-off-fetch-api-alone"}


# catches (a review): the fetch selection made alone moving the search with it (HTTP fetch read as "Messages mode")
def test_a_fetch_selection_moving_the_search_fails_exactly_the_alone_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    right = '{"web.fetch_provider": FETCH_SELECTION[config.fetch_provider]}'
    wrong = ('{"web.fetch_provider": FETCH_SELECTION[config.fetch_provider], "web.search_provider": '
             '{"http": "deepseek-official", "api": "deepseek-search-api"}[config.fetch_provider]}')
    patch_reading(targets, "reference_settings", right, wrong, monkeypatch)
    assert failing_rows(fetch_selection, TABLE, CHECK, monkeypatch) == {"switch-on-http-fetch-alone",
                                                                          "switch-off-fetch-api-alone"}


URLS = {"messages_base": "http://127.0.0.1:9/anthropic", "tools_base": "http://127.0.0.1:9/v1/tools",
        "api_key": "dsweb-emulator-key"}


def _selection(built: settings.Settings) -> tuple[str | None, ...]:
    return built.web.search_provider, built.web.fetch_provider


def _selection_saved(config: targets.TargetConfig, current: settings.Settings) -> tuple[str | None, ...]:
    """The selection after a save of ``config`` over the settings in use (as ``_LiveReference.save`` builds it)."""
    return _selection(targets.reference_settings(config, current))


def test_a_save_carrying_fetch_provider_selects_it_until_the_switch_or_a_null_is_saved() -> None:
    """``settings_save`` takes ``fetch_provider`` like any configure key (TargetConfig.saved), written after the
    switch: a later save of another setting keeps it; a saved switch writes both selections over it (the protocol:
    ``provider`` writes both, as the switch does); a saved null gives the switch's own again (a final read found
    no test of the save path; its review found the last two wrong in the reference)."""
    on = targets.TargetConfig(**URLS, provider="api")
    current = targets.reference_settings(on)
    assert _selection(current) == settings.API_SELECTION
    http = on.saved({"fetch_provider": "http"})
    selected = targets.reference_settings(http, current)
    assert _selection(selected) == (settings.API_SELECTION[0], settings.MESSAGES_SELECTION[1])
    counted = targets.reference_settings(http.saved({"count": 7}), selected)
    assert counted.deepseek_api.count == 7  # a setting the save changes
    assert _selection(counted) == (settings.API_SELECTION[0], settings.MESSAGES_SELECTION[1])
    assert _selection_saved(http.saved({"provider": "api"}), selected) == settings.API_SELECTION
    assert _selection_saved(http.saved({"provider": "messages"}), selected) == settings.MESSAGES_SELECTION
    assert _selection_saved(http.saved({"fetch_provider": None}), selected) == settings.API_SELECTION


def test_after_a_defaults_configure_a_saved_fetch_provider_counts_as_written_and_its_null_follows_the_switch() -> None:
    given = targets.TargetConfig.from_json({"defaults": True, "provider": "messages", **URLS})
    assert not given.gives("fetch_provider")
    shipped = targets.reference_settings(given)
    api = given.saved({"fetch_provider": "api"})
    assert api.gives("fetch_provider")  # a saved key counts as written after a "defaults": true configure
    assert _selection_saved(api, shipped) == (settings.MESSAGES_SELECTION[0], settings.API_SELECTION[1])
    bare = targets.TargetConfig.from_json({"defaults": True, **URLS})  # the switch left at its shipped default
    on_api = bare.saved({"fetch_provider": "api"})
    saved = targets.reference_settings(on_api, targets.reference_settings(bare))
    assert _selection(saved) == (settings.MESSAGES_SELECTION[0], settings.API_SELECTION[1])
    back = on_api.saved({"fetch_provider": None})
    assert _selection_saved(back, saved) == settings.MESSAGES_SELECTION  # null: as the switch (off) selects
