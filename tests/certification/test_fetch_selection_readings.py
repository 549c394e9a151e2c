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


def test_a_save_carrying_fetch_provider_selects_it_and_a_later_save_keeps_it() -> None:
    """``settings_save`` takes ``fetch_provider`` like any configure key (TargetConfig.saved): the saved selection is
    written after the switch, a later save of another key keeps it, and a saved null gives the switch's own again
    (a final read found no test of the save path)."""
    on = targets.TargetConfig("http://127.0.0.1:9/anthropic", "http://127.0.0.1:9/v1/tools", "dsweb-emulator-key",
                              provider="api")
    current = targets.reference_settings(on)
    assert (current.web.search_provider, current.web.fetch_provider) == settings.API_SELECTION
    http = on.saved({"fetch_provider": "http"})
    selected = targets.reference_settings(http, current)
    assert (selected.web.search_provider, selected.web.fetch_provider) == (settings.API_SELECTION[0],
                                                                           settings.MESSAGES_SELECTION[1])
    kept = targets.reference_settings(http.saved({"api_key": "dsweb-emulator-key-saved-0002"}), selected)
    assert kept.web.fetch_provider == settings.MESSAGES_SELECTION[1]
    switch = targets.reference_settings(http.saved({"fetch_provider": None}), kept)
    assert (switch.web.search_provider, switch.web.fetch_provider) == settings.API_SELECTION
    given = targets.TargetConfig.from_json({"defaults": True, "provider": "messages", "messages_base": on.messages_base,
                                            "tools_base": on.tools_base, "api_key": on.api_key})
    assert not given.gives("fetch_provider")
    api = given.saved({"fetch_provider": "api"})
    assert api.gives("fetch_provider")  # a saved key counts as written after a "defaults": true configure
    assert targets.reference_settings(api, targets.reference_settings(given)).web.fetch_provider == (
        settings.API_SELECTION[1])
