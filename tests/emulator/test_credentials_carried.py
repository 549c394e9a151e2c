"""Every place a request carries a configured credential, recorded by kind (hunt L): the log's ``credential``
reads the one header a route authenticates with, so the other credential riding along elsewhere (the API key in
x-api-key beside a token in Authorization, a token in a header of its own or in the body) showed nowhere."""

from __future__ import annotations

import httpx

from dsweb_ref.emulator import Emulator
from dsweb_ref.emulator.auth import Credentials

from ._support import messages_body


def test_messages_records_each_header_s_credential(
    emulator: Emulator, emulator_api_key: str, emulator_account_token: str
) -> None:
    headers = {"Authorization": f"Bearer {emulator_account_token}", "x-api-key": emulator_api_key}
    response = httpx.post(emulator.messages_base + "/messages", json=messages_body("coffee"), headers=headers)
    assert response.status_code == 200
    record = emulator.log.records()[-1]
    assert (record.credential, record.credential_source) == ("account_token", "authorization")  # Bearer wins
    assert record.carried == (("authorization", "account_token"), ("x-api-key", "api_key"))


def test_a_token_in_another_header_the_url_and_the_body_is_recorded(
    emulator: Emulator, emulator_api_key: str, emulator_account_token: str
) -> None:
    headers = {"Authorization": f"Bearer {emulator_api_key}", "X-Account": emulator_account_token}
    body = {"query": "coffee", "account": emulator_account_token}
    url = f"{emulator.tools_base}/search?t={emulator_account_token}"
    assert httpx.post(url, json=body, headers=headers).status_code == 200
    record = emulator.log.records()[-1]
    assert record.credential == "api_key"
    assert record.carried == (("authorization", "api_key"), ("x-account", "account_token"), ("url", "account_token"),
                              ("body", "account_token"))
    assert emulator_account_token not in repr(record)  # what it records is the kind, never the value


def test_a_request_without_credentials_carries_none(emulator: Emulator) -> None:
    httpx.post(emulator.tools_base + "/search", json={"query": "coffee"})
    assert emulator.log.records()[-1].carried == ()


def test_a_credential_inside_a_longer_one_counts_only_where_it_stands_alone() -> None:
    held = Credentials.of(["key-1234"], ["token-key-1234"])
    assert held.found_in("Bearer token-key-1234") == ("account_token",)
    assert held.found_in("token-key-1234 and key-1234") == ("api_key", "account_token")
    assert held.found_in("abc") == ()
