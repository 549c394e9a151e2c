"""Credentials on every route, and that no secret ever comes back or lands in the log."""

from __future__ import annotations

import httpx
import pytest

from dsweb_ref.emulator import Emulator

from ._support import FETCH, MESSAGES, SEARCH, error_of, messages_body

BODIES = {SEARCH: {"query": "coffee"}, FETCH: {"url": "https://docs.example.test/api/fetch"}}
WRONG_KEY = "dsweb-wrong-key-9876"


def expect_401(response: httpx.Response, shown: str) -> None:
    assert response.status_code == 401
    if response.request.url.path.startswith("/anthropic/"):  # each route answers in its own envelope
        assert response.json() == {"type": "error", "error": {
            "type": "authentication_error", "message": f"Authentication Fails, Your api key: {shown} is invalid"}}
        return
    assert error_of(response) == {
        "message": f"Authentication Fails, Your api key: {shown} is invalid",
        "type": "authentication_error",
        "param": None,
        "code": "invalid_request_error",
    }


@pytest.mark.parametrize("path", [SEARCH, FETCH, MESSAGES])
def test_missing_key(emulator: Emulator, path: str) -> None:
    body = BODIES.get(path) or messages_body("coffee")
    expect_401(httpx.post(emulator.base_url + path, json=body), "****")


@pytest.mark.parametrize("path", [SEARCH, FETCH, MESSAGES])
def test_wrong_key_is_masked(emulator: Emulator, path: str) -> None:
    body = BODIES.get(path) or messages_body("coffee")
    response = httpx.post(emulator.base_url + path, json=body, headers={"Authorization": f"Bearer {WRONG_KEY}"})
    expect_401(response, "****9876")
    assert WRONG_KEY not in response.text


@pytest.mark.parametrize("path", [SEARCH, FETCH, MESSAGES])
def test_account_token_is_accepted(emulator: Emulator, emulator_account_token: str, path: str) -> None:
    body = BODIES.get(path) or messages_body("coffee")
    headers = {"Authorization": f"Bearer {emulator_account_token}"}
    assert httpx.post(emulator.base_url + path, json=body, headers=headers).status_code == 200
    assert emulator.log.records()[-1].credential == "account_token"


def test_a_key_accepted_later_is_accepted_from_then_on_and_kept_out_of_the_log(
    emulator: Emulator, emulator_api_key: str
) -> None:
    later = "dsweb-later-key-4242"
    headers = {"Authorization": f"Bearer {later}"}
    assert httpx.post(emulator.tools_base + "/search", json={"query": "x"}, headers=headers).status_code == 401
    emulator.accept_api_key(later)
    assert httpx.post(emulator.tools_base + "/search", json={"query": "x"}, headers=headers).status_code == 200
    assert emulator.credentials.api_keys == {emulator_api_key, later}  # the first key still holds
    record = emulator.log.records()[-1]
    assert record.credential == "api_key" and later not in repr(record)


def test_non_bearer_scheme_is_rejected(emulator: Emulator, emulator_api_key: str) -> None:
    response = httpx.post(
        emulator.tools_base + "/search", json={"query": "x"}, headers={"Authorization": f"Basic {emulator_api_key}"}
    )
    assert response.status_code == 401
    assert emulator_api_key not in response.text


def test_messages_accepts_x_api_key(emulator: Emulator, emulator_api_key: str) -> None:
    response = httpx.post(
        emulator.messages_base + "/messages", json=messages_body("coffee"), headers={"x-api-key": emulator_api_key}
    )
    assert response.status_code == 200
    record = emulator.log.records()[-1]
    assert (record.credential, record.credential_source) == ("api_key", "x-api-key")


def test_tools_routes_read_bearer_only(emulator: Emulator, emulator_api_key: str) -> None:
    response = httpx.post(emulator.tools_base + "/search", json={"query": "x"}, headers={"x-api-key": emulator_api_key})
    expect_401(response, "****")


def test_bearer_beats_x_api_key(emulator: Emulator, emulator_api_key: str) -> None:
    url = emulator.messages_base + "/messages"
    body = messages_body("coffee")
    wrong_bearer = {"Authorization": f"Bearer {WRONG_KEY}", "x-api-key": emulator_api_key}
    expect_401(httpx.post(url, json=body, headers=wrong_bearer), "****9876")
    right_bearer = {"Authorization": f"Bearer {emulator_api_key}", "x-api-key": WRONG_KEY}
    assert httpx.post(url, json=body, headers=right_bearer).status_code == 200
    sources = [r.credential_source for r in emulator.log.records()]
    assert sources == ["authorization", "authorization"]


def test_secrets_never_reach_the_log(emulator: Emulator, emulator_api_key: str, emulator_account_token: str) -> None:
    secrets = (emulator_api_key, emulator_account_token, WRONG_KEY)
    base = emulator.base_url
    responses = [
        httpx.post(base + SEARCH, json={"query": "x"}, headers={"Authorization": f"Bearer {emulator_api_key}"}),
        httpx.post(base + SEARCH, json={"query": "x"}, headers={"Authorization": f"Bearer {WRONG_KEY}"}),
        httpx.post(
            base + MESSAGES,
            json=messages_body(f"my key is {emulator_api_key}"),
            headers={"x-api-key": emulator_account_token, "Cookie": f"session={WRONG_KEY}"},
        ),
        httpx.post(
            base + SEARCH + f"?key={emulator_api_key}",
            json={"query": emulator_account_token},
            headers={"Authorization": f"bearer {emulator_account_token}", "X-Custom": WRONG_KEY},
        ),
    ]
    records = emulator.log.wait_for(len(responses), done=True)
    dump = repr(records)
    for secret in secrets:
        assert secret not in dump
        assert secret.encode() not in b"".join(r.body + r.response_body for r in records)
        for response in responses:
            if response.is_error:
                assert secret not in response.text
    assert records[0].header("authorization") == "Bearer ****0001"
    assert records[2].header("x-api-key") == "****0001"
    assert records[2].header("cookie") == "****9876"
    assert records[3].json == {"query": "****0001"}
    assert records[3].header("x-custom") == "****9876"
