"""Hunt P, part B: wrong readings of seed 001 that dsweb certify passed, each now failing a new row and no other row of
its table. P-B2: a paced Search API request whose body is rebuilt when its slot comes (count not lowered to
searchMaxResults, ori_question dropped, need_content true), where search.api.pacing.wire judged key names only. P-B3:
a retried Fetch API request with a header of its own or an attempt counter in its URL, and paced fetches keeping the
HTTP client's default headers, where fetch.api.retry.waits and fetch.api.pacing.rate judged timing only. P-B5: the
account token sent beside the key to the Fetch API on the key route, tried on the Search API only. P-B7: a settings
check taking a float for an integer, so count 7.5 went on the wire. P-B8: a Fetch API client keeping cookies, where
only the Search API's client was tried. Each reading is made in the reference as the hunt made it; the reference passes
each new row, and the variants the seeds leave open certify."""

from __future__ import annotations

import pytest

from dsweb_ref import settings
from dsweb_ref.certification.checks import credentials, fetch, scheduling, search
from dsweb_ref.providers import _deepseek_http, deepseek_fetch_api, deepseek_search_api
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi

from ._readings import fails_exactly, passes_rows, patch_reading

PACED_WIRE, PACED_VALUES = "search.api.pacing.wire", "paced requests' body values"


def test_the_reference_passes_the_paced_body_values_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(search, "SCHEDULED_WIRE", PACED_WIRE, (PACED_VALUES,), monkeypatch)


@pytest.mark.parametrize(("right", "wrong"), [
    ("count = min(count, limit)", "count = min(count, limit) if not conf.pacing else count"),
    ("if conf.send_original_question else None", "if conf.send_original_question and not conf.pacing else None"),
    ('"need_content": False}', '"need_content": bool(conf.pacing)}'),
], ids=["count-not-lowered", "ori-question-dropped", "need-content-true"])
def test_a_paced_body_rebuilt_fails_exactly_the_paced_body_values_row(
    right: str, wrong: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a queue-style pacer that rebuilds the body when the slot comes (the hunt's three readings)
    patch_reading(DeepSeekSearchApi, "search", right, wrong, monkeypatch)
    fails_exactly(search, "SCHEDULED_WIRE", PACED_WIRE, PACED_VALUES, monkeypatch)


# -- P-B3: retried and paced Fetch API requests carry only the documented headers ------------------------------------

RETRY_WAITS, RETRY_WIRE = "fetch.api.retry.waits", "Fetch API 502 every time: each retry the first request again"
PACED_FETCH, PACED_FETCH_WIRE = "fetch.api.pacing.rate", "two fetches at once, 5 QPS: the requests' wire"
SEND = "return await provider._post(base, key, conf.timeout_s, url, body, headers, remaining_s=remaining_s)"
COUNT = 'send.__dict__["n"] = send.__dict__.get("n", 0) + 1\n        '  # the attempts of one call, on its send


def test_the_reference_passes_the_fetch_retry_wire_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(fetch, "FETCH_RETRY", RETRY_WAITS, (RETRY_WIRE,), monkeypatch)


@pytest.mark.parametrize("wrong", [
    SEND.replace("headers, remaining", '(headers if route != "fetch" or send.__dict__["n"] == 1 else '
                 '{**headers, "X-Retry-Attempt": str(send.__dict__["n"] - 1)}), remaining'),
    SEND.replace("url, body", '(url if route != "fetch" or send.__dict__["n"] == 1 else '
                 'f"{url}?attempt={send.__dict__[\'n\']}"), body'),
    # The last session's own finding: a retry naming the page with a cache-busting parameter matched no call's URL,
    # so the judging of the requests for each call's URL never saw it.
    SEND.replace("url, body", 'url, (body if route != "fetch" or send.__dict__["n"] == 1 else encode_json({**payload, '
                 '"url": payload["url"] + "&retry=" + str(send.__dict__["n"])}))'),
], ids=["attempt-header", "attempt-query-string", "attempt-in-the-page-url"])
def test_a_fetch_retry_of_its_own_fails_exactly_the_fetch_retry_wire_row(
    wrong: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a retried Fetch API request carrying X-Retry-Attempt, or sent to .../fetch?attempt=n (the hunt's two
    # readings; Search API retries left as they are)
    patch_reading(_deepseek_http, "call_tools_api", SEND, COUNT + wrong, monkeypatch, deepseek_search_api,
                  deepseek_fetch_api)
    fails_exactly(fetch, "FETCH_RETRY", RETRY_WAITS, RETRY_WIRE, monkeypatch)


def test_the_reference_passes_the_paced_fetch_wire_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(scheduling, "FETCH_PACING_CASES", PACED_FETCH, (PACED_FETCH_WIRE,), monkeypatch)


def test_paced_fetches_with_client_defaults_fail_exactly_the_paced_fetch_wire_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a paced Fetch API request keeping httpx's default Accept, Accept-Encoding and User-Agent (the hunt's
    # reading: the defaults dropped on every other request)
    patch_reading(_deepseek_http, "post", "            if name not in sent:",
                  "            if name not in sent and not (wire_hook() is not None and url.endswith('/fetch')):",
                  monkeypatch)
    fails_exactly(scheduling, "FETCH_PACING_CASES", PACED_FETCH, PACED_FETCH_WIRE, monkeypatch)


# -- P-B5: the account token beside the key on the key route, Fetch API only -----------------------------------------

ACCOUNT_ROUTE, KEY_ROUTE_FETCH = "search.api.account_route", "the API-key route beside a token, Fetch API"
TOOLS_HEADERS = 'headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}'


def test_the_reference_passes_the_key_route_fetch_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(credentials, "CASES", ACCOUNT_ROUTE, (KEY_ROUTE_FETCH,), monkeypatch)


def test_a_token_beside_the_key_to_the_fetch_api_fails_exactly_the_key_route_fetch_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: on the API-key route, the configured account token sent too, in X-DeepSeek-Account-Token, on Fetch API
    # requests only (the hunt's reading)
    extra = ("    token = (provider._environ or {}).get(snapshot.credentials.account_token_env)\n"
             "    if token and token != key and route == 'fetch':\n"
             "        headers['X-DeepSeek-Account-Token'] = token")
    patch_reading(_deepseek_http, "call_tools_api", TOOLS_HEADERS, f"{TOOLS_HEADERS}\n{extra}", monkeypatch,
                  deepseek_search_api, deepseek_fetch_api)
    fails_exactly(credentials, "CASES", ACCOUNT_ROUTE, KEY_ROUTE_FETCH, monkeypatch)


# -- P-B7: a fractional count forwarded ---------------------------------------------------------------------------

COUNT_CHECK, FRACTIONAL = "search.api.count", "count 7.5"


def test_the_reference_passes_the_fractional_count_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(search, "COUNT", COUNT_CHECK, (FRACTIONAL,), monkeypatch)


def test_a_float_taken_for_an_int_setting_fails_exactly_the_fractional_count_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the settings check taking a float where an integer is expected, so count 7.5 is sent as given (the
    # hunt's reading)
    patch_reading(settings, "_check", "if not isinstance(value, expected) or",
                  "if not isinstance(value, (float,) if expected is int else expected) and not isinstance(value, "
                  "expected) or", monkeypatch)
    fails_exactly(search, "COUNT", COUNT_CHECK, FRACTIONAL, monkeypatch)


def test_a_fractional_count_made_whole_passes_the_fractional_count_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a count of 7.5 taken and sent as a whole number from 1 to 50 (here 7) instead of refused
    typed = '    expected: type = {"str": str, "int": int, "float": float, "bool": bool}[spec.kind]\n'
    patch_reading(settings, "_check", typed,
                  typed + "    if spec.kind == 'int' and isinstance(value, float):\n"
                  "        value = int(value)\n", monkeypatch)
    passes_rows(search, "COUNT", COUNT_CHECK, (FRACTIONAL,), monkeypatch)
    assert settings.Settings().updated({"deepseek_api.count": 7.5}).deepseek_api.count == 7


# -- P-B8: a Fetch API client that keeps cookies ------------------------------------------------------------------

FETCH_WIRE, FETCH_COOKIE = "fetch.api.wire", "after an answer that set a cookie"
LEASE = "async with self._clients.lease(ClientKey(base, key, timeout_s)) as client:\n"


def test_the_reference_passes_the_fetch_cookie_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(fetch, "WIRE", FETCH_WIRE, (FETCH_COOKIE,), monkeypatch)


def test_a_fetch_client_keeping_cookies_fails_exactly_the_fetch_cookie_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the Fetch API's pooled client given a cookie jar of its own, so the cookie one answer sets goes back
    # with the next fetch (the hunt's reading; the Search API's client left as it is)
    jar = ("        if self.provider_id == 'deepseek-fetch-api' and not getattr(client, '_jar', False):\n"
           "            client.cookies = httpx.Cookies(); client._jar = True\n")
    patch_reading(_deepseek_http.SettingsBoundProvider, "_post", LEASE, LEASE + jar, monkeypatch)
    fails_exactly(fetch, "WIRE", FETCH_WIRE, FETCH_COOKIE, monkeypatch)
