"""search.api.account_route (seed 001: 'A Session on the DeepSeek account route sends its account token
instead, as Messages search does'): the reference passes every row, and each wrong reading of which
credential goes where, made in the reference, fails exactly the rows that name it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dsweb_ref.certification.checks import credentials
from dsweb_ref.certification.profiles import find_profile
from dsweb_ref.providers import _deepseek_http, deepseek_fetch_api, deepseek_search_api
from dsweb_ref.providers._deepseek_http import SettingsBoundProvider, resolve_credential
from dsweb_ref.providers.deepseek_fetch_api import DeepSeekFetchApi
from dsweb_ref.providers.deepseek_official import DeepSeekMessagesSearch
from dsweb_ref.settings import Settings

from ._readings import failing_rows, fails_exactly, patch_reading

CHECK = "search.api.account_route"
SEARCH, FETCH, MESSAGES, ECHO, KEY_ROUTE, FETCH_ECHO, KEY_ROUTE_FETCH = (c.name for c in credentials.CASES)


def _key_always(self: SettingsBoundProvider, snapshot: Settings) -> str:
    """The credential as if the route were the key's, whatever it is."""
    creds = replace(snapshot.credentials, auth="api_key")
    return resolve_credential(creds, self._environ if self._environ is not None else {}, self.label)


def test_the_rows_are_the_seven_named() -> None:
    assert [c["route"] for c in credentials.CASES] == ["search", "fetch", "messages", "search", "search", "fetch",
                                                       "fetch"]
    assert [c["auth"] for c in credentials.CASES] == ["account", "account", "account", "account", "api_key", "account",
                                                      "api_key"]


def test_the_reference_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(credentials, "CASES", CHECK, monkeypatch) == set()


def test_the_key_sent_whatever_the_route_fails_the_five_account_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the API key sent whatever the route (a target that never learnt the account route)
    patch_reading(_deepseek_http, "resolve_credential", "name = creds.env_name", "name = creds.api_key_env",
                  monkeypatch)
    # and the echo rows: the key it sent instead is what it scrubs, so the token an upstream error quotes shows
    assert failing_rows(credentials, "CASES", CHECK, monkeypatch) == {SEARCH, FETCH, MESSAGES, ECHO, FETCH_ECHO}


def test_the_fetch_api_given_the_key_fails_its_two_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the account token sent to the Search API only (and the Fetch API's echo row: the key it sent instead
    # is what it scrubs)
    monkeypatch.setattr(DeepSeekFetchApi, "_credential", _key_always)
    assert failing_rows(credentials, "CASES", CHECK, monkeypatch) == {FETCH, FETCH_ECHO}


def test_messages_search_given_the_key_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the account token sent to the new APIs only, Messages search still given the key
    monkeypatch.setattr(DeepSeekMessagesSearch, "_credential", _key_always)
    fails_exactly(credentials, "CASES", CHECK, MESSAGES, monkeypatch)


def test_the_token_preferred_when_at_hand_fails_exactly_the_key_route_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the account token sent whenever one is configured, whatever the route (Search API and Fetch API alike)
    patch_reading(_deepseek_http, "resolve_credential", "name = creds.env_name",
                  "name = creds.account_token_env if environ.get(creds.account_token_env) else creds.env_name",
                  monkeypatch)
    assert failing_rows(credentials, "CASES", CHECK, monkeypatch) == {KEY_ROUTE, KEY_ROUTE_FETCH}


def test_the_key_scrubbed_instead_of_the_token_sent_fails_the_two_echo_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: an upstream error scrubbed of the configured API key only, on a route that sent the token
    patch_reading(_deepseek_http, "call_tools_api", "other=other, secrets=(key,)",
                  "other=other, secrets=((provider._environ or {}).get(snapshot.credentials.api_key_env, ''),)",
                  monkeypatch, deepseek_search_api, deepseek_fetch_api)
    assert failing_rows(credentials, "CASES", CHECK, monkeypatch) == {ECHO, FETCH_ECHO}


def test_the_account_route_is_an_opt_in_profile_of_seed_001() -> None:
    profile = find_profile("seed-001-account-route")
    assert profile.seed == "001" and profile.opt_in
    assert "account-route" in profile.requires
