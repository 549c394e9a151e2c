"""Account and model selection for the standalone search (seed 003): one table row per rule.

Each row names the wrong reading it catches. ``expect`` is (status, account, protocol, url, model)
for a selection, or (status, reason) otherwise.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref.standalone_accounts import OFFICIAL_MESSAGES_BASE, is_official, resolve

OFFICIAL_URL = OFFICIAL_MESSAGES_BASE + "/v1/messages"
ENV = {"DS_KEY": "k1", "RELAY_KEY": "k2", "OTHER_KEY": "k3"}


def acct(name: str, protocol: str = "chat", base_url: str = "https://api.deepseek.com", *,
         key: str = "DS_KEY", model: str = "deepseek-v4-flash", **extra: Any) -> dict[str, Any]:
    return {"name": name, "protocol": protocol, "base_url": base_url, "model": model, "api_key_env": key, **extra}


RELAY_MSG = acct("relay", "messages", "https://relay.test/anthropic", key="RELAY_KEY", model="r-model")
RELAY_RESP = acct("relay-r", "responses", "https://relay.test/v1", key="RELAY_KEY", model="gpt-x")


class Row(NamedTuple):
    name: str
    catches: str
    document: dict[str, Any]
    expect: tuple[Any, ...]
    environ: dict[str, str] = ENV


ROWS = [
    Row("current-official-chat-searches-via-official-messages",
        "catches: sending the search to the chat URL instead of the official Anthropic-compatible base",
        {"current": "main", "accounts": [acct("main")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("official-chat-with-v1-is-official",
        "catches: accepting only the bare host for Chat Completions",
        {"current": "main", "accounts": [acct("main", base_url="https://api.deepseek.com/v1/")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("official-responses-is-official",
        "catches: treating the official Responses URL as third-party (needing web_search = true)",
        {"current": "main", "accounts": [acct("main", "responses", "https://API.deepseek.com/v1")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("official-messages-is-official",
        "catches: not recognising the official Messages base",
        {"current": "main", "accounts": [acct("main", "messages", "https://api.deepseek.com/anthropic")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("official-derived-request-url-is-still-official",
        "catches: treating an override equal to the derived official route as custom",
        {"current": "main", "accounts": [acct("main", request_url="https://api.deepseek.com/chat/completions/")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("custom-request-url-is-never-converted",
        "catches: converting a custom request URL on the official host into the official search route",
        {"current": "main", "accounts": [acct("main", request_url="https://api.deepseek.com/custom/chat")]},
        ("none", "no_search_account")),
    Row("look-alike-host-is-not-official",
        "catches: matching the official host by prefix (api.deepseek.com.evil.test)",
        {"current": "main", "accounts": [acct("main", base_url="https://api.deepseek.com.evil.test")]},
        ("none", "no_search_account")),
    Row("plain-http-is-not-official",
        "catches: accepting http:// as the official endpoint",
        {"current": "main", "accounts": [acct("main", base_url="http://api.deepseek.com")]},
        ("none", "no_search_account")),
    Row("current-account-wins-over-earlier-accounts",
        "catches: always taking the first account instead of the conversation's own",
        {"current": "relay", "accounts": [acct("main"), {**RELAY_MSG, "web_search": True}]},
        ("selected", "relay", "messages", "https://relay.test/anthropic/v1/messages", "r-model")),
    Row("fallback-to-first-configured-search-enabled-account",
        "catches: giving up when the current account cannot search, or picking the last candidate",
        {"current": "plain", "accounts": [acct("plain", "chat", "https://other.test/v1", key="OTHER_KEY"),
                                          acct("main"), acct("second")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("fallback-skips-accounts-without-credentials",
        "catches: choosing a search-enabled account whose key variable is unset",
        {"current": "x", "accounts": [acct("nokey", key="UNSET_KEY"), acct("main")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("current-without-credentials-falls-back",
        "catches: selecting the current account although it is not configured",
        {"current": "nokey", "accounts": [acct("nokey", key="UNSET_KEY"), acct("main")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("explicit-off-on-search-capable-current-blocks-fallback",
        "catches: falling back to another account after the user switched search off here",
        {"current": "main", "accounts": [acct("main", web_search=False), acct("second")]},
        ("none", "explicit_off")),
    Row("explicit-off-on-non-capable-current-still-falls-back",
        "catches: treating web_search = false on a custom chat account as a global off switch",
        {"current": "plain", "accounts": [acct("plain", base_url="https://other.test/v1", key="OTHER_KEY",
                                               web_search=False), acct("main")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("third-party-messages-needs-explicit-opt-in",
        "catches: enabling search by default on a relay",
        {"current": "relay", "accounts": [RELAY_MSG]},
        ("none", "no_search_account")),
    Row("third-party-messages-opted-in-keeps-own-endpoint-and-key",
        "catches: sending a relay key to the official host",
        {"current": "relay", "accounts": [{**RELAY_MSG, "web_search": True}]},
        ("selected", "relay", "messages", "https://relay.test/anthropic/v1/messages", "r-model")),
    Row("third-party-responses-opted-in-uses-responses",
        "catches: forcing every third-party account onto the Messages protocol",
        {"current": "relay-r", "accounts": [{**RELAY_RESP, "web_search": True}]},
        ("selected", "relay-r", "responses", "https://relay.test/v1/responses", "gpt-x")),
    Row("third-party-request-url-is-used-as-is",
        "catches: rewriting a third-party override",
        {"current": "relay-r", "accounts": [{**RELAY_RESP, "web_search": True,
                                             "request_url": "https://relay.test/custom/resp"}]},
        ("selected", "relay-r", "responses", "https://relay.test/custom/resp", "gpt-x")),
    Row("third-party-chat-never-searches",
        "catches: treating web_search = true on a Chat Completions relay as native search",
        {"current": "c", "accounts": [acct("c", base_url="https://relay.test/v1", key="RELAY_KEY", web_search=True)]},
        ("none", "no_search_account")),
    Row("auto-string-is-automatic",
        "catches: reading \"auto\" as a connection name",
        {"current": "main", "web_search_model": "auto", "accounts": [acct("main")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("empty-string-is-automatic",
        "catches: reading \"\" as a malformed reference",
        {"current": "main", "web_search_model": "", "accounts": [acct("main")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("assigned-splits-at-the-first-slash",
        "catches: splitting at the last slash (the model may contain /)",
        {"current": "main", "web_search_model": "relay/vendor/model-1",
         "accounts": [acct("main"), {**RELAY_MSG, "web_search": True}]},
        ("selected", "relay", "messages", "https://relay.test/anthropic/v1/messages", "vendor/model-1")),
    Row("assigned-ignores-the-current-accounts-switch",
        "catches: letting web_search = false on the current account block an explicit assignment",
        {"current": "main", "web_search_model": "second/deepseek-v4-pro",
         "accounts": [acct("main", web_search=False), acct("second")]},
        ("selected", "second", "messages", OFFICIAL_URL, "deepseek-v4-pro")),
    Row("assigned-without-slash-is-bad-ref",
        "catches: treating a bare name as connection plus default model",
        {"current": "main", "web_search_model": "main", "accounts": [acct("main")]},
        ("invalid", "bad_ref")),
    Row("assigned-connection-gone-does-not-fall-back",
        "catches: switching to another account when the assigned one was removed",
        {"current": "main", "web_search_model": "gone/m", "accounts": [acct("main")]},
        ("invalid", "not_found")),
    Row("assigned-connection-disabled",
        "catches: using a switched-off connection",
        {"current": "main", "web_search_model": "second/m", "accounts": [acct("main"), acct("second", enabled=False)]},
        ("invalid", "disabled")),
    Row("assigned-connection-search-off",
        "catches: ignoring the assigned connection's own search switch",
        {"current": "main", "web_search_model": "second/m",
         "accounts": [acct("main"), acct("second", web_search=False)]},
        ("invalid", "search_off")),
    Row("assigned-model-removed",
        "catches: accepting a model no longer configured on the connection",
        {"current": "main", "web_search_model": "second/old",
         "accounts": [acct("main"), acct("second", models=["deepseek-v4-flash"])]},
        ("invalid", "model_removed")),
    Row("assigned-without-credentials",
        "catches: selecting an assignment whose key is missing (or borrowing another account's key)",
        {"current": "main", "web_search_model": "second/m", "accounts": [acct("main"), acct("second", key="UNSET")]},
        ("invalid", "no_credentials")),
    Row("offline-registers-nothing",
        "catches: registering the tool in offline mode",
        {"offline": True, "current": "main", "accounts": [acct("main")]},
        ("none", "offline")),
    Row("allow-list-without-web-search-registers-nothing",
        "catches: ignoring an explicit tool allow-list",
        {"tools_enabled": ["web_fetch"], "current": "main", "accounts": [acct("main")]},
        ("none", "not_allowed")),
    Row("allow-list-with-web-search-registers",
        "catches: treating any allow-list as excluding the tool",
        {"tools_enabled": ["web_search"], "current": "main", "accounts": [acct("main")]},
        ("selected", "main", "messages", OFFICIAL_URL, "deepseek-v4-flash")),
    Row("no-accounts-no-tool",
        "catches: inventing a default account",
        {"accounts": []},
        ("none", "no_search_account")),
]


def _observed(document: dict[str, Any], environ: dict[str, str]) -> tuple[Any, ...]:
    result = resolve(document, environ)
    if result.route is None:
        return (result.status, result.reason)
    r = result.route
    return (result.status, r.account, r.protocol, r.url, r.model)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_selection_table(row: Row) -> None:
    assert row.catches.startswith("catches: ")
    assert _observed(row.document, row.environ) == row.expect


def test_every_row_name_is_unique() -> None:
    assert len({r.name for r in ROWS}) == len(ROWS)


def test_invalid_assignment_keeps_the_reference() -> None:
    result = resolve({"web_search_model": "gone/vendor/m", "accounts": [acct("main")]}, ENV)
    assert (result.reference, result.registers_tool) == ("gone/vendor/m", False)


def test_relay_route_names_the_relay_key_variable_never_the_official_url() -> None:
    result = resolve({"current": "relay", "accounts": [{**RELAY_MSG, "web_search": True}, acct("main")]}, ENV)
    assert result.route is not None
    assert result.route.api_key_env == "RELAY_KEY" and "deepseek.com" not in result.route.url


def test_resolution_is_pure_the_same_document_gives_the_same_answer() -> None:
    document = {"current": "main", "accounts": [acct("main")]}
    assert resolve(document, dict(ENV)) == resolve(document, dict(ENV))


@pytest.mark.parametrize(
    ("url", "request_url", "official"),
    [
        ("https://api.deepseek.com", None, True),
        ("https://api.deepseek.com/v1/", None, True),
        ("HTTPS://API.DEEPSEEK.COM", None, True),
        ("https://api.deepseek.com:443", None, False),
        ("https://user@api.deepseek.com", None, False),
        ("https://api.deepseek.com?x=1", None, False),
        ("https://api.deepseek.com", "https://api.deepseek.com/v1/chat/completions", True),
        ("https://api.deepseek.com", "https://api.deepseek.com/v1/responses", False),
    ],
)
def test_official_chat_endpoint_forms(url: str, request_url: str | None, official: bool) -> None:
    assert is_official("chat", url, request_url) is official


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"accounts": "x"},
        {"accounts": [{"name": "a"}]},
        {"accounts": [acct("a", "grpc")]},
        {"accounts": [acct("a", web_search="yes")]},
        {"accounts": [acct("a"), acct("a")]},
        {"tools_enabled": "web_search"},
        {"web_search_model": 3},
    ],
    ids=["not-table", "accounts-not-list", "missing-fields", "bad-protocol", "flag-not-bool", "duplicate-names",
         "allow-list-not-list", "reference-not-string"],
)
def test_bad_documents_are_config_errors(document: Any) -> None:
    with pytest.raises(WebError) as info:
        resolve(document, ENV)
    assert info.value.code == WebErrorCode.CONFIG_INVALID
