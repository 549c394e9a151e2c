"""Account and model selection for the standalone search (seed 003): one table row per rule.

The main table is the certification's (``standalone.resolve.table``), so the reference and any
certified implementation answer the same rows; each row names the wrong reading it catches.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref.certification.cases import Case
from dsweb_ref.certification.checks.standalone import ENV_SET, RESOLUTION_CASES, resolution_observed
from dsweb_ref.standalone_accounts import OFFICIAL_MESSAGES_BASE, is_official, resolve

ENV = {"DS_KEY": "k1", "RELAY_KEY": "k2", "OTHER_KEY": "k3"}


def acct(name: str, protocol: str = "chat", base_url: str = "https://api.deepseek.com", *,
         key: str = "DS_KEY", model: str = "deepseek-v4-flash", **extra: Any) -> dict[str, Any]:
    return {"name": name, "protocol": protocol, "base_url": base_url, "model": model, "api_key_env": key, **extra}


RELAY_MSG = acct("relay", "messages", "https://relay.test/anthropic", key="RELAY_KEY", model="r-model")


# Why an assignment is unusable (the certification table compares only the status for these rows,
# since the wording of the reason is an implementation's own; the reference names them).
REASONS = [
    Case("assigned-without-slash-is-bad-ref", "treating a bare name as connection plus default model",
         {"document": {"current": "main", "web_search_model": "main", "accounts": [acct("main")]},
          "reason": "bad_ref"}),
    Case("assigned-connection-gone", "a removed connection reported as something else",
         {"document": {"web_search_model": "gone/m", "accounts": [acct("main")]}, "reason": "not_found"}),
    Case("assigned-connection-disabled", "a disabled connection reported as gone",
         {"document": {"web_search_model": "second/m", "accounts": [acct("main"), acct("second", enabled=False)]},
          "reason": "disabled"}),
    Case("assigned-connection-search-off", "ignoring the assigned connection's own switch",
         {"document": {"web_search_model": "second/m",
                       "accounts": [acct("main"), acct("second", web_search=False)]}, "reason": "search_off"}),
    Case("assigned-model-removed", "accepting a model no longer configured on the connection",
         {"document": {"web_search_model": "second/old",
                       "accounts": [acct("main"), acct("second", models=["deepseek-v4-flash"])]},
          "reason": "model_removed"}),
    Case("assigned-without-credentials", "borrowing another account's key",
         {"document": {"web_search_model": "second/m", "accounts": [acct("main"), acct("second", key="UNSET")]},
          "reason": "no_credentials"}),
    Case("no-accounts-no-tool", "inventing a default account",
         {"document": {"accounts": []}, "reason": "no_search_account"}),
]


@pytest.mark.parametrize("case", RESOLUTION_CASES, ids=[c.name for c in RESOLUTION_CASES])
def test_selection_table(case: Case) -> None:
    """The certification table (standalone.resolve.table) against the reference function."""
    result = resolve(case["document"], {name: "set" for name in ENV_SET})
    assert resolution_observed(result.to_json(), case["expect"]) == case["expect"]


@pytest.mark.parametrize("case", REASONS, ids=[c.name for c in REASONS])
def test_reasons(case: Case) -> None:
    result = resolve(case["document"], ENV)
    assert (result.registers_tool, result.reason) == (False, case["reason"])


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


def test_official_route_is_the_official_anthropic_base() -> None:
    result = resolve({"current": "main", "accounts": [acct("main")]}, ENV)
    assert result.route is not None and result.route.url == OFFICIAL_MESSAGES_BASE + "/v1/messages"
