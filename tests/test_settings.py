"""dsweb_ref.settings: defaults, the switch, TOML + environment loading, validation, the source."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import pytest

from dsweb_ref import settings as settings_module
from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref._service import ProviderSelection
from dsweb_ref.providers.deepseek_fetch_api import DeepSeekFetchApi
from dsweb_ref.providers.deepseek_official import DeepSeekMessagesSearch
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.settings import (
    SETTINGS_KEYS,
    Settings,
    SettingsSource,
    describe_settings_keys,
    load_settings,
    parse_settings,
)

API = ("deepseek-search-api", "deepseek-fetch-api")
MESSAGES = ("deepseek-official", "http")


def _pair(settings: Settings) -> tuple[str | None, str | None]:
    return settings.web.search_provider, settings.web.fetch_provider


def _invalid(data: dict[str, object] | None = None, env: dict[str, str] | None = None) -> WebError:
    with pytest.raises(WebError) as info:
        parse_settings(data, env or {})
    assert info.value.code == WebErrorCode.CONFIG_INVALID
    return info.value


# -- defaults and the switch ----------------------------------------------------------------------

def test_shipped_default_is_messages_search_with_http_fetch() -> None:
    settings = parse_settings({}, {})
    assert settings == Settings()
    assert _pair(settings) == MESSAGES
    assert settings.web.use_new_search_api is False
    assert settings.provider_selection() == ProviderSelection("deepseek-official", "http")


def test_default_bases_are_separate() -> None:
    settings = Settings()
    assert settings.deepseek_messages.base_url == "https://api.deepseek.com/anthropic/v1"
    assert settings.deepseek_api.base_url == "https://api.deepseek.com/v1/tools"


def test_switch_on_writes_both_selections() -> None:
    assert _pair(parse_settings({"web": {"use_new_search_api": True}})) == API
    assert _pair(Settings().with_new_search_api(True)) == API


def test_switch_off_restores_both_selections() -> None:
    on = Settings().with_new_search_api(True)
    assert _pair(on.with_new_search_api(False)) == MESSAGES
    assert _pair(parse_settings({"web": {"use_new_search_api": True}}, {"DSWEB_USE_NEW_SEARCH_API": "off"})) == MESSAGES


def test_explicit_selection_in_the_same_layer_beats_the_switch() -> None:
    data = {"web": {"use_new_search_api": True, "search_provider": "deepseek-official"}}
    assert _pair(parse_settings(data)) == ("deepseek-official", "deepseek-fetch-api")


def test_stored_messages_selection_keeps_messages_when_only_the_default_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Simulate the later migration: the built-in default turns the switch (and both selections) on.
    migrated = {"web.use_new_search_api": True, "web.search_provider": API[0], "web.fetch_provider": API[1]}
    keys = tuple(replace(k, default=migrated.get(k.key, k.default)) for k in settings_module.SETTINGS_KEYS)
    monkeypatch.setattr(settings_module, "SETTINGS_KEYS", keys)
    assert _pair(parse_settings({}, {})) == API
    stored = {"web": {"search_provider": "deepseek-official"}}
    assert _pair(parse_settings(stored, {})) == ("deepseek-official", "deepseek-fetch-api")


def test_switch_in_the_environment_overrides_selections_in_the_file() -> None:
    data = {"web": {"search_provider": "deepseek-official", "fetch_provider": "http"}}
    assert _pair(parse_settings(data, {"DSWEB_USE_NEW_SEARCH_API": "1"})) == API


def test_fetch_can_be_selected_alone() -> None:
    assert _pair(parse_settings({"web": {"fetch_provider": "deepseek-fetch-api"}})) == (
        "deepseek-official", "deepseek-fetch-api",
    )


def test_blank_selection_means_auto_select() -> None:
    settings = parse_settings({"web": {"search_provider": "  "}})
    assert settings.provider_selection() == ProviderSelection(None, "http")


# -- loading --------------------------------------------------------------------------------------

TOML = """
[web]
use_new_search_api = true

[deepseek_api]
base_url = "http://api-dev.deepseek.com:8031/api/v1/tools"
count = 20
send_original_question = false

[deepseek_messages]
max_tokens = 2048
timeout_s = 90

[credentials]
auth = "account"
"""


def test_loads_a_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "dsweb.toml"
    path.write_text(TOML, encoding="utf-8")
    settings = load_settings(path, environ={})
    assert _pair(settings) == API
    assert settings.deepseek_api.base_url == "http://api-dev.deepseek.com:8031/api/v1/tools"
    assert (settings.deepseek_api.count, settings.deepseek_api.send_original_question) == (20, False)
    assert settings.deepseek_messages.max_tokens == 2048
    assert settings.deepseek_messages.timeout_s == 90.0
    assert settings.credentials.auth == "account"
    assert settings.deepseek_messages.base_url == Settings().deepseek_messages.base_url


def test_a_settings_file_nested_too_deeply_is_config_invalid(tmp_path: Path) -> None:
    # catches: tomllib's RecursionError let out of load_settings (`dsweb search --config` printed a traceback)
    path = tmp_path / "dsweb.toml"
    path.write_text("x = " + "[" * 2000, encoding="utf-8")
    with pytest.raises(WebError, match="nested too deeply") as raised:
        load_settings(path, environ={})
    assert raised.value.code == "WEB_CONFIG_INVALID"


def test_config_path_comes_from_dsweb_config(tmp_path: Path) -> None:
    path = tmp_path / "dsweb.toml"
    path.write_text(TOML, encoding="utf-8")
    assert load_settings(environ={"DSWEB_CONFIG": str(path)}).deepseek_api.count == 20


def test_environment_beats_the_file(tmp_path: Path) -> None:
    path = tmp_path / "dsweb.toml"
    path.write_text(TOML, encoding="utf-8")
    env = {
        "DSWEB_TOOLS_BASE_URL": "https://tools.test/v1/tools",
        "DSWEB_SEARCH_COUNT": "5",
        "DSWEB_SEND_ORIGINAL_QUESTION": "true",
        "DSWEB_MESSAGES_BASE_URL": "https://gateway.test/anthropic/v1",
        "DSWEB_SEARCH_PROVIDER": "deepseek-official",
        "DSWEB_AUTH": "api_key",
        "DSWEB_HTTP_TIMEOUT_S": "12.5",
    }
    settings = load_settings(path, environ=env)
    assert settings.deepseek_api.base_url == "https://tools.test/v1/tools"
    assert settings.deepseek_api.count == 5
    assert settings.deepseek_api.send_original_question is True
    assert settings.deepseek_messages.base_url == "https://gateway.test/anthropic/v1"
    assert _pair(settings) == ("deepseek-official", "deepseek-fetch-api")
    assert settings.credentials.auth == "api_key"
    assert settings.http_fetch.timeout_s == 12.5


def test_empty_environment_variable_counts_as_unset() -> None:
    assert parse_settings({"deepseek_api": {"count": 20}}, {"DSWEB_SEARCH_COUNT": ""}).deepseek_api.count == 20


def test_unknown_dsweb_environment_variables_are_ignored() -> None:
    assert parse_settings({}, {"DSWEB_SOMETHING_ELSE": "x"}) == Settings()


def test_missing_file_is_config_invalid(tmp_path: Path) -> None:
    with pytest.raises(WebError) as info:
        load_settings(tmp_path / "absent.toml", environ={})
    assert info.value.code == WebErrorCode.CONFIG_INVALID


def test_malformed_toml_is_config_invalid(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[web\nsearch_provider = ", encoding="utf-8")
    with pytest.raises(WebError) as info:
        load_settings(path, environ={})
    assert info.value.code == WebErrorCode.CONFIG_INVALID


# -- validation -----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"deepseek_api": {"count": "10"}}, "deepseek_api.count"),
        ({"deepseek_api": {"count": 0}}, "deepseek_api.count"),
        ({"deepseek_api": {"count": 51}}, "deepseek_api.count"),
        ({"deepseek_api": {"count": True}}, "deepseek_api.count"),
        ({"deepseek_api": {"count": 10.0}}, "deepseek_api.count"),
        ({"deepseek_api": {"send_original_question": "no"}}, "deepseek_api.send_original_question"),
        ({"deepseek_api": {"base_url": 5}}, "deepseek_api.base_url"),
        ({"deepseek_api": {"bse_url": "x"}}, "deepseek_api.bse_url"),
        ({"deepseek_messages": {"max_tokens": 0}}, "deepseek_messages.max_tokens"),
        ({"deepseek_messages": {"max_uses": -1}}, "deepseek_messages.max_uses"),
        ({"deepseek_messages": {"model": " "}}, "deepseek_messages.model"),
        ({"deepseek_messages": {"timeout_s": 0}}, "deepseek_messages.timeout_s"),
        ({"deepseek_messages": {"timeout_s": float("inf")}}, "deepseek_messages.timeout_s"),
        ({"credentials": {"auth": "password"}}, "credentials.auth"),
        ({"credentials": {"api_key_env": "NOT A NAME"}}, "credentials.api_key_env"),
        ({"web": {"use_new_search_api": 1}}, "web.use_new_search_api"),
        ({"web": {"search_provider": ["x"]}}, "web.search_provider"),
        ({"tools": {"search_max_results": 0}}, "tools.search_max_results"),
        ({"http_fetch": {"max_redirects": -1}}, "http_fetch.max_redirects"),
        ({"nope": {"x": 1}}, "nope.x"),
        ({"web": "deepseek-official"}, "web"),
    ],
)
def test_bad_file_values_are_coded_and_name_the_key(data: dict[str, object], key: str) -> None:
    error = _invalid(data)
    assert f"invalid setting {key}" in error.message


@pytest.mark.parametrize(
    ("env", "key"),
    [
        ({"DSWEB_SEARCH_COUNT": "ten"}, "deepseek_api.count"),
        ({"DSWEB_SEARCH_COUNT": "99"}, "deepseek_api.count"),
        ({"DSWEB_USE_NEW_SEARCH_API": "maybe"}, "web.use_new_search_api"),
        ({"DSWEB_HTTP_TIMEOUT_S": "nan"}, "http_fetch.timeout_s"),
        ({"DSWEB_AUTH": "token"}, "credentials.auth"),
    ],
)
def test_bad_environment_values_are_coded_and_name_key_and_variable(env: dict[str, str], key: str) -> None:
    error = _invalid(None, env)
    (name,) = env
    assert key in error.message and name in error.message


def test_updated_validates_like_the_loader() -> None:
    with pytest.raises(WebError) as info:
        Settings().updated({"deepseek_api.count": 0})
    assert info.value.code == WebErrorCode.CONFIG_INVALID


def test_blank_or_unparseable_tools_base_leaves_both_api_providers_unavailable() -> None:
    for base in ("", "   ", "not a url", "https://"):
        settings = parse_settings({"web": {"use_new_search_api": True}, "deepseek_api": {"base_url": base}})
        source = SettingsSource(settings)
        assert not DeepSeekSearchApi(source).available()
        assert not DeepSeekFetchApi(source).available()
        # The Messages base is independent and stays usable.
        assert DeepSeekMessagesSearch(source).available()


# -- the key table --------------------------------------------------------------------------------

def test_key_table_covers_every_field_once() -> None:
    expected = {
        f"{section.name}.{item.name}"
        for section in fields(Settings)
        for item in fields(getattr(Settings(), section.name))
    }
    keys = [k.key for k in SETTINGS_KEYS]
    assert sorted(keys) == sorted(expected)
    assert len({k.env for k in SETTINGS_KEYS}) == len(SETTINGS_KEYS)
    assert all(k.env.startswith("DSWEB_") for k in SETTINGS_KEYS)


def test_key_table_defaults_match_the_dataclasses() -> None:
    flat = {
        f"{section.name}.{item.name}": getattr(getattr(Settings(), section.name), item.name)
        for section in fields(Settings)
        for item in fields(getattr(Settings(), section.name))
    }
    assert {k.key: k.default for k in SETTINGS_KEYS} == flat


def test_describe_settings_keys_rows() -> None:
    rows = describe_settings_keys()
    assert rows[0] == {
        "key": "web.use_new_search_api",
        "env": "DSWEB_USE_NEW_SEARCH_API",
        "default": "false",
        "meaning": rows[0]["meaning"],
    }
    by_key = {r["key"]: r for r in rows}
    assert by_key["deepseek_api.base_url"]["env"] == "DSWEB_TOOLS_BASE_URL"
    assert by_key["deepseek_messages.timeout_s"]["default"] == "120"
    assert by_key["credentials.api_key_env"]["default"] == "DEEPSEEK_API_KEY"
    assert all(r["meaning"] for r in rows)


# -- the source -----------------------------------------------------------------------------------

def test_settings_source_swaps_the_snapshot() -> None:
    source = SettingsSource(Settings())
    first = source()
    source.set(first.with_new_search_api(True))
    assert _pair(first) == MESSAGES
    assert _pair(source()) == API


def test_settings_source_reload_keeps_the_last_good_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "dsweb.toml"
    path.write_text("[deepseek_api]\ncount = 7\n", encoding="utf-8")
    source = SettingsSource(path=path, environ={})
    assert source().deepseek_api.count == 7
    path.write_text("[deepseek_api]\ncount = 70\n", encoding="utf-8")
    with pytest.raises(WebError):
        source.reload()
    assert source().deepseek_api.count == 7
    path.write_text("[deepseek_api]\ncount = 8\n", encoding="utf-8")
    assert source.reload().deepseek_api.count == 8
    assert source().deepseek_api.count == 8


# -- values that reach headers and request bodies -------------------------------------------------

@pytest.mark.parametrize(
    "version",
    ["2023-06-01\r\nX-Injected: 1", "2023-06-01\n", "2023–06–01", "2023 06 01", "v\x00", "", "  ", "v" * 65],
    ids=["crlf", "lf", "non-ascii", "space", "nul", "empty", "blank", "too-long"],
)
def test_api_version_must_be_a_header_token(version: str) -> None:
    error = _invalid({"deepseek_messages": {"api_version": version}})
    assert "invalid setting deepseek_messages.api_version" in error.message
    assert "header token" in error.message or "blank" in error.message


@pytest.mark.parametrize("version", ["2023\u00a006", "2023–06–01", "2023-06\x1b01"])
def test_api_version_from_the_environment_is_checked(version: str) -> None:
    error = _invalid(None, {"DSWEB_MESSAGES_API_VERSION": version})
    assert "deepseek_messages.api_version" in error.message and "DSWEB_MESSAGES_API_VERSION" in error.message


def test_api_version_token_is_accepted() -> None:
    settings = parse_settings({"deepseek_messages": {"api_version": "2023-06-01"}}, {})
    assert settings.deepseek_messages.api_version == "2023-06-01"
    assert Settings().updated({"deepseek_messages.api_version": "beta.2025-01_x"}).deepseek_messages.api_version


@pytest.mark.parametrize(
    "model", ["", "   ", "deepseek\nv4", "deepseek-v4\x00", "\ud800", " deepseek-v4", "m" * 257],
    ids=["empty", "blank", "newline", "nul", "surrogate", "leading-space", "too-long"],
)
def test_model_must_be_printable_and_not_blank(model: str) -> None:
    assert "invalid setting deepseek_messages.model" in _invalid({"deepseek_messages": {"model": model}}).message


def test_model_accepts_printable_names() -> None:
    for model in ("deepseek-v4-flash", "org/model:latest", "深度求索-v4", "m" * 256):
        assert Settings().updated({"deepseek_messages.model": model}).deepseek_messages.model == model


@pytest.mark.parametrize(
    ("key", "bad", "limit"),
    [
        ("deepseek_messages.max_tokens", settings_module.MAX_MESSAGES_MAX_TOKENS + 1, 1_000_000),
        ("deepseek_messages.max_uses", settings_module.MAX_MESSAGES_MAX_USES + 1, 100),
    ],
)
def test_max_tokens_and_max_uses_have_upper_bounds(key: str, bad: int, limit: int) -> None:
    section, name = key.split(".")
    error = _invalid({section: {name: bad}})
    assert f"invalid setting {key}" in error.message and f"from 1 to {limit}" in error.message
    assert getattr(getattr(Settings().updated({key: limit}), section), name) == limit
    env = {"deepseek_messages.max_tokens": "DSWEB_MESSAGES_MAX_TOKENS", "deepseek_messages.max_uses":
           "DSWEB_MESSAGES_MAX_USES"}[key]
    assert env in _invalid(None, {env: str(10**12)}).message


def test_bounds_are_documented() -> None:
    meanings = {r["key"]: r["meaning"] for r in describe_settings_keys()}
    assert "1-1000000" in meanings["deepseek_messages.max_tokens"]
    assert "1-100" in meanings["deepseek_messages.max_uses"]
    version = meanings["deepseek_messages.api_version"]
    assert "header" in version and "ASCII" in version
    assert "Deadline" in meanings["deepseek_messages.timeout_s"] and "Deadline" in meanings["deepseek_api.timeout_s"]
