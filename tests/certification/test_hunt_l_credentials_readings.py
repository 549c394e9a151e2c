"""An outside hunt (L) over seed 001's credentials and the evidence pipeline's failures: wrong readings dsweb certify
passed. The account-route rows read only which credential Authorization carried, so the API key sent beside the
account token (in x-api-key on Messages search, in a header of its own on the Search and Fetch APIs, the evidence
pipeline's included) certified, as did the token riding along on the API-key route; the echo row tried the Search
API's errors only, so a Fetch API error showing the token certified; and no row counted the requests of the
pipeline's failed searches, so one sent again unchanged with retries off certified. Each wrong reading is made in
the reference and must fail exactly the rows that name it; the reference passes them, and the right variants the
seeds leave open certify."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import credentials, evidence_wire
from dsweb_ref.providers import _deepseek_http, deepseek_fetch_api, deepseek_search_api
from dsweb_ref.providers.deepseek_official import DeepSeekMessagesSearch
from dsweb_ref.tools.evidence_search import EvidenceSearchTool

from ._readings import failing_rows, fails_exactly, patch_reading

ROUTE, WIRE = "search.api.account_route", "evidence.api_wire"
SEARCH, FETCH = "the account route, Search API", "the account route, Fetch API"
MESSAGES = "the account route, Messages search"
KEY_ROUTE, FETCH_ECHO = "the API-key route beside a token", "the account route, a Fetch API error quoting the token"
KEY_ROUTE_FETCH = "the API-key route beside a token, Fetch API"  # hunt P's row: the same on the Fetch API
ACCOUNT = "the account route"
FAILED_402, FAILED_400, FAILED_503 = "a search answered 402", "a search answered 400", "a search answered 503"

# call_tools_api's headers, the one place the Search and Fetch API requests get theirs.
TOOLS_HEADERS = 'headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}'
ENVIRON = "(provider._environ or {})"
# The pipeline's searches, all sent at once and settled: the line a retry of the failed ones follows.
SETTLED = 'answers = await _settle_until(searches, searches_end, "the search")'


def _tools_api(extra: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """call_tools_api with ``extra`` (lines at its body's indentation) run after its headers are built."""
    patch_reading(_deepseek_http, "call_tools_api", TOOLS_HEADERS, f"{TOOLS_HEADERS}\n{extra}", monkeypatch,
                  deepseek_search_api, deepseek_fetch_api)


def _pipeline_retries(when: str, monkeypatch: pytest.MonkeyPatch, count: str = "cfg.results_per_query") -> None:
    """The evidence pipeline sends each failed search whose error satisfies ``when`` (on ``a``) once more, with the
    same query and result bound ``count`` (unchanged by default)."""
    again = (f"{SETTLED}\n"
             f"    again = [i for i, a in enumerate(answers) if isinstance(a, WebError) and ({when})]\n"
             f"    more = await _settle_until([self.web.search(SearchRequest(queries[i], {count}), ctx)"
             " for i in again], searches_end, 'the search')\n"
             "    for i, a in zip(again, more):\n"
             "        answers[i] = a")
    patch_reading(EvidenceSearchTool, "run", SETTLED, again, monkeypatch)


def test_the_reference_passes_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(credentials, "CASES", ROUTE, monkeypatch) == set()
    assert failing_rows(evidence_wire, "WIRE", WIRE, monkeypatch) == set()


def test_the_api_key_kept_in_x_api_key_on_messages_fails_exactly_the_messages_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the token put in Authorization with the key kept in x-api-key (the emulator reads Authorization first)
    patch_reading(DeepSeekMessagesSearch, "search", '"x-api-key": key,',
                  '"x-api-key": (self._environ or {}).get(snapshot.credentials.api_key_env, key),', monkeypatch)
    fails_exactly(credentials, "CASES", ROUTE, MESSAGES, monkeypatch)


@pytest.mark.parametrize("dropped", ['"x-api-key": key,', '"authorization": f"Bearer {key}",'])
def test_messages_search_with_the_token_in_one_header_certifies(dropped: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # right by the seed: the token where Messages carries a key, in x-api-key or Authorization alone
    patch_reading(DeepSeekMessagesSearch, "search", dropped, "", monkeypatch)
    assert failing_rows(credentials, "CASES", ROUTE, monkeypatch) == set()


def test_the_api_key_beside_the_token_on_the_tools_apis_fails_the_account_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the key sent along beside the token on the account route ("so either works"), the pipeline's too
    _tools_api(f"    if snapshot.credentials.auth == 'account':\n"
               f"        headers['x-api-key'] = {ENVIRON}.get(snapshot.credentials.api_key_env, '')", monkeypatch)
    assert failing_rows(credentials, "CASES", ROUTE, monkeypatch) == {SEARCH, FETCH}
    fails_exactly(evidence_wire, "WIRE", WIRE, ACCOUNT, monkeypatch)


def test_the_api_key_in_a_header_of_its_own_on_the_fetch_api_fails_exactly_the_fetch_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the Fetch API given the key too, beside the token (a header whose name is not x-api-key)
    _tools_api(f"    if snapshot.credentials.auth == 'account' and route == 'fetch':\n"
               f"        headers['X-DeepSeek-Key'] = {ENVIRON}.get(snapshot.credentials.api_key_env, '')",
               monkeypatch)
    fails_exactly(credentials, "CASES", ROUTE, FETCH, monkeypatch)


def test_the_token_beside_the_key_on_the_key_route_fails_exactly_the_key_route_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the account token, when at hand, riding along in a header of its own on the API-key route (to the
    # Search and Fetch APIs alike, so both key-route rows fail)
    _tools_api(f"    token = {ENVIRON}.get(snapshot.credentials.account_token_env)\n"
               "    if token and token != key:\n"
               "        headers['X-DeepSeek-Account-Token'] = token", monkeypatch)
    assert failing_rows(credentials, "CASES", ROUTE, monkeypatch) == {KEY_ROUTE, KEY_ROUTE_FETCH}


def test_the_token_in_the_body_on_the_key_route_fails_exactly_the_key_route_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the account token sent as a body value beside the key (the headers the documented two), to the Search
    # and Fetch APIs alike
    patch_reading(_deepseek_http, "call_tools_api", "body = encode_json(payload)",
                  f"token = {ENVIRON}.get(snapshot.credentials.account_token_env)\n"
                  "        body = encode_json({**payload, 'account': token} if token and token != "
                  "provider._credential(snapshot) else payload)", monkeypatch, deepseek_search_api, deepseek_fetch_api)
    assert failing_rows(credentials, "CASES", ROUTE, monkeypatch) == {KEY_ROUTE, KEY_ROUTE_FETCH}


def test_a_fetch_api_error_scrubbed_of_the_key_only_fails_exactly_the_fetch_echo_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the Fetch API's errors scrubbed of the API key only, so the account token one quotes is shown
    patch_reading(_deepseek_http, "call_tools_api", "other=other, secrets=(key,)",
                  "other=other, secrets=(key,) if route == 'search' else "
                  f"({ENVIRON}.get(snapshot.credentials.api_key_env, key),)", monkeypatch,
                  deepseek_search_api, deepseek_fetch_api)
    fails_exactly(credentials, "CASES", ROUTE, FETCH_ECHO, monkeypatch)


def test_the_pipeline_sending_a_failed_search_again_fails_the_three_failed_search_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the pipeline's own retry of every failed search, unchanged, with retries off
    _pipeline_retries("True", monkeypatch)
    assert failing_rows(evidence_wire, "WIRE", WIRE, monkeypatch) == {FAILED_402, FAILED_400, FAILED_503}


@pytest.mark.parametrize(("status", "row"), [(402, FAILED_402), (400, FAILED_400), (503, FAILED_503)])
def test_one_status_sent_again_fails_exactly_its_row(status: int, row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a funding failure, a rejected request, or a transient failure (retries off) sent again unchanged
    _pipeline_retries(f"'(HTTP {status})' in a.message", monkeypatch)
    fails_exactly(evidence_wire, "WIRE", WIRE, row, monkeypatch)


def test_the_failed_query_sent_again_changed_only_in_whitespace_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a retry that changes only whitespace (seed 002: no changed query), sent with retries off
    patch_reading(EvidenceSearchTool, "run", SETTLED,
                  f"{SETTLED}\n"
                  "    if any(isinstance(a, WebError) for a in answers):\n"
                  "        await self.web.search(SearchRequest('  ' + queries[0].replace(' ', '  '), "
                  "cfg.results_per_query), ctx)", monkeypatch)
    assert failing_rows(evidence_wire, "WIRE", WIRE, monkeypatch) == {FAILED_402, FAILED_400, FAILED_503}


def test_a_changed_query_after_a_failed_search_certifies(monkeypatch: pytest.MonkeyPatch) -> None:
    # right by the seeds: a retry that really changes the query is no retry of the same query (seed 002)
    patch_reading(EvidenceSearchTool, "run", SETTLED,
                  f"{SETTLED}\n"
                  "    for i, a in enumerate(answers):\n"
                  "        if isinstance(a, WebError):\n"
                  "            await _settle_until([self.web.search(SearchRequest(queries[i] + ' opening hours', "
                  "cfg.results_per_query), ctx)], searches_end, 'the search')", monkeypatch)
    assert failing_rows(evidence_wire, "WIRE", WIRE, monkeypatch) == set()


def test_a_400_sent_again_with_a_smaller_count_certifies(monkeypatch: pytest.MonkeyPatch) -> None:
    # right by seed 001 ('other 4xx require a changed request'): the same query after a 400 in a changed request
    _pipeline_retries("'(HTTP 400)' in a.message", monkeypatch, count="cfg.results_per_query - 3")
    assert failing_rows(evidence_wire, "WIRE", WIRE, monkeypatch) == set()


def test_a_402_or_503_sent_again_with_a_smaller_count_still_fails_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a funding failure or a transient one (retries off) sent again, only the result bound changed
    _pipeline_retries("'(HTTP 400)' not in a.message", monkeypatch, count="cfg.results_per_query - 3")
    assert failing_rows(evidence_wire, "WIRE", WIRE, monkeypatch) == {FAILED_402, FAILED_503}
