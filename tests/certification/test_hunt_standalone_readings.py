"""Issue 24's seed-003 false-pass hunt: wrong standalone searches `dsweb certify --profile seed-003-standalone`
still certified (a result bound that never measured the sources, "HTTP(S)" read as a prefix, the raw list cut
before the filter, one search read of two, a 302 or a Responses redirect followed, a server-side conversation,
streamed thinking read as text), and a second hunt's (hunt_e: account and model selection, an earlier answer in the
next request, a query cut at 1 000 characters, an error status whose body reads as an answer). Each is made in the
reference and fails exactly the row that names it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import httpx
import pytest

from dsweb_ref import standalone_accounts
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import standalone
from dsweb_ref.providers import _standalone, standalone_messages, standalone_responses
from dsweb_ref.tools import standalone_search

from ._readings import failing_rows, patch_reading

TABLES = {"standalone.result.bounded": "BOUND_CASES", "standalone.sources.filtered": "FILTER_CASES",
          "standalone.redirect.not_followed": "REDIRECT_CASES", "standalone.request.isolated": "REQUEST_CASES",
          "standalone.reasoning.withheld": "REASONING_CASES"}
NEW_ROWS = {"standalone.result.bounded": {"eight-long-sources"},
            "standalone.sources.filtered": {"http-look-alike-schemes", "eight-copies-then-five-distinct",
                                            "messages-two-searches", "responses-two-searches"},
            "standalone.redirect.not_followed": {"messages-307", "messages-302", "responses-307"},
            "standalone.request.isolated": {"responses"},
            "standalone.reasoning.withheld": {"messages", "responses", "messages-streamed"}}


def _failing(check: str, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    return failing_rows(standalone, TABLES[check], check, monkeypatch)


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    for check, rows in NEW_ROWS.items():
        names = {c.name for c in getattr(standalone, TABLES[check])}
        assert rows <= names, check
        assert _failing(check, monkeypatch) == set(), check


def _summary_only_bound(summary: str, sources: list[dict[str, str]], truncated: bool = False,
                        limit: int = standalone_search.MAX_RESULT_BYTES) -> str:
    """The summary kept to what its JSON string takes of the bound, less a fixed 4 000 bytes 'for the sources'."""
    def size(text: str) -> int:
        return len(json.dumps(text, ensure_ascii=False).encode("utf-8"))

    while size(summary) > limit - 4_000:
        summary, truncated = summary[: len(summary) * 9 // 10], True
    return standalone_search._encode(summary, sources, truncated).decode("utf-8")


def test_a_bound_on_the_summary_alone_fails_exactly_the_long_sources_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the 24 000-byte bound applied to the summary alone, the sources never measured (the Thai titles
    # row's sources are 15 600 bytes beside a full summary)
    monkeypatch.setattr(standalone_search, "encode_result", _summary_only_bound)
    assert _failing("standalone.result.bounded", monkeypatch) == {"eight-long-sources",
                                                                   "eight-long-sources-short-summary",
                                                                   "cjk-summary-thai-titles",
                                                                   "result-of-24001-bytes"}


def test_http_read_as_a_prefix_fails_exactly_the_look_alike_schemes_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: "HTTP(S)" read as url.lower().startswith("http") (httpx:, http+unix:, https-evil: kept)
    patch_reading(standalone_search, "_usable_url", 'parsed.scheme not in ("http", "https")',
                  'not url.lower().startswith("http")', monkeypatch)
    assert _failing("standalone.sources.filtered", monkeypatch) == {"http-look-alike-schemes"}


def test_the_raw_list_cut_before_the_filter_fails_exactly_the_copies_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the backend's list cut to its first eight entries, then deduped and filtered
    patch_reading(standalone_search, "bound_sources", "for source in sources:",
                  "for source in sources[:MAX_SOURCES]:", monkeypatch)
    # the eight other-scheme entries ahead of the three HTTP(S) ones are a raw list cut too
    assert _failing("standalone.sources.filtered", monkeypatch) == {"eight-copies-then-five-distinct",
                                                                   "eight-other-schemes-then-three"}


def test_only_the_first_result_block_fails_exactly_the_messages_two_searches_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: only the first web_search_tool_result of a Messages answer yields sources
    patch_reading(standalone_messages, "read_answer", "searched = True\n            for item in items:",
                  "first = not searched\n            searched = True\n            for item in items if first else []:",
                  monkeypatch)
    # the second search's own URL is lost in the one-URL row too
    assert _failing("standalone.sources.filtered", monkeypatch) == {"messages-two-searches",
                                                                   "messages-two-searches-one-url",
                                                                   "messages-two-searches-streamed"}


def test_only_the_first_search_call_fails_exactly_the_responses_two_searches_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: only the first completed web_search_call of a Responses answer yields sources
    patch_reading(standalone_responses, "read_response", 'sources = mapping(raw.get("action")).get("sources")',
                  'sources = mapping(raw.get("action")).get("sources") if completed == 1 else None', monkeypatch)
    assert _failing("standalone.sources.filtered", monkeypatch) == {"responses-two-searches"}


class _Following(httpx.AsyncBaseTransport):
    """``inner``, with a redirect of ``statuses`` followed once: 301/302/303 as a GET, 307/308 re-sent as is."""

    def __init__(self, inner: httpx.AsyncBaseTransport, statuses: tuple[int, ...]) -> None:
        self.inner, self.statuses = inner, statuses

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if response.status_code not in self.statuses or "location" not in response.headers:
            return response
        await response.aclose()
        target = request.url.join(response.headers["location"])
        if response.status_code in (307, 308):
            headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"host"]
            return await self.inner.handle_async_request(
                httpx.Request(request.method, target, headers=headers, content=request.content))
        return await self.inner.handle_async_request(httpx.Request("GET", target))

    async def aclose(self) -> None:
        await self.inner.aclose()


def _following(statuses: tuple[int, ...], path: str = "") -> Any:
    """The endpoint's POST over a transport that follows the redirects of ``statuses`` for request URLs ending
    with ``path``, as a client built with follow_redirects does."""
    post = _standalone.post

    async def following_post(url: str, body: bytes, headers: dict[str, str], **kwargs: Any) -> Any:
        if url.endswith(path):
            kwargs["transport"] = _Following(kwargs.get("transport") or httpx.AsyncHTTPTransport(), statuses)
        return await post(url, body, headers, **kwargs)

    return following_post


def test_a_302_followed_as_a_get_fails_exactly_the_messages_302_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: 301/302/303 followed (as a GET) on either backend, only 307/308 refused
    monkeypatch.setattr(_standalone, "post", _following((301, 302, 303)))
    assert _failing("standalone.redirect.not_followed", monkeypatch) == {"messages-302", "responses-301",
                                                                         "messages-303", "responses-303",
                                                                         "responses-302-streamed"}


def test_a_responses_backend_following_redirects_fails_exactly_the_responses_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the Responses search backend follows redirects (the Messages one refuses them)
    monkeypatch.setattr(_standalone, "post", _following((301, 302, 303, 307, 308), "/responses"))
    assert _failing("standalone.redirect.not_followed", monkeypatch) == {"responses-307", "responses-301",
                                                                         "responses-303", "responses-302-streamed"}


_STORE = '"store": False,'


@pytest.mark.parametrize("field", ['"conversation": "conv_web_search_history"', '"prompt": {"id": "pmpt_search"}'])
def test_a_server_side_history_or_stored_prompt_fails_exactly_the_responses_row(
    field: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a Responses search request naming a conversation (with store: true) or a stored prompt
    patch_reading(standalone_responses.ResponsesStandaloneSearch, "standalone_search", _STORE,
                  f'"store": True, {field},', monkeypatch)
    assert _failing("standalone.request.isolated", monkeypatch) == {"responses", "responses-streamed"}


def test_storing_the_answer_alone_stays_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: "store": true keeps the answer but makes no search read any history
    patch_reading(standalone_responses.ResponsesStandaloneSearch, "standalone_search", _STORE, '"store": True,',
                  monkeypatch)
    assert _failing("standalone.request.isolated", monkeypatch) == set()


def test_streamed_thinking_read_as_text_fails_exactly_the_streamed_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a streamed Messages answer's thinking block and deltas read as text
    read_events = standalone_messages.read_events

    def thinking_as_text(streamed: _standalone.Streamed, label: str) -> Any:
        events = []
        for event in streamed.events:
            block, delta = event.get("content_block"), event.get("delta")
            if isinstance(block, dict) and block.get("type") == "thinking":
                event = {**event, "content_block": {"type": "text", "text": block.get("thinking", "")}}
            elif isinstance(delta, dict) and delta.get("type") == "thinking_delta":
                event = {**event, "delta": {"type": "text_delta", "text": delta.get("thinking", "")}}
            events.append(event)
        return read_events(_standalone.Streamed(events, streamed.cut), label)

    monkeypatch.setattr(standalone_messages, "read_events", thinking_as_text)
    assert _failing("standalone.reasoning.withheld", monkeypatch) == {"messages-streamed"}


def test_a_target_that_always_streams_passes_the_reasoning_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: streaming whether asked or not (the emulator's own answer then comes as events, read as such)
    init = _standalone.StandaloneEndpoint.__init__

    def always_streaming(self: _standalone.StandaloneEndpoint, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **{**kwargs, "stream": True})

    monkeypatch.setattr(_standalone.StandaloneEndpoint, "__init__", always_streaming)
    assert _failing("standalone.reasoning.withheld", monkeypatch) == set()


# -- a long query (an outside hunt: the Search API's 128-character limit carried over to seed 003) ------------

LONG_QUERY_ROW = "messages-long-query"
LONGER_QUERY_ROW = "messages-query-of-1700-characters"
LONGEST_QUERY_ROW = "messages-query-of-3400-characters"
BOUND_QUERY_ROW = "messages-query-of-4089-bytes"  # any silent cut below the reference's bound fails it too


def test_the_reference_passes_the_long_query_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert LONG_QUERY_ROW not in failing_rows(standalone, "REQUEST_CASES", "standalone.request.isolated", monkeypatch)


@pytest.mark.parametrize("limit", [128, 256])
def test_a_query_cut_to_a_short_limit_fails_exactly_the_long_query_row(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: the query cut to 128 (or 256) characters, the context written into it lost
    patch_reading(standalone_search, "parse_query", "    return query\n", f"    return query[:{limit}]\n",
                  monkeypatch)
    assert failing_rows(standalone, "REQUEST_CASES", "standalone.request.isolated", monkeypatch) == {
        LONG_QUERY_ROW, LONGER_QUERY_ROW, LONGEST_QUERY_ROW, BOUND_QUERY_ROW}


def test_a_long_query_refused_as_a_tool_error_stays_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a target's own bound on the query, answered as a tool error before any request
    patch_reading(standalone_search, "parse_query", "MAX_QUERY_BYTES:", "256:", monkeypatch)
    failing = failing_rows(standalone, "REQUEST_CASES", "standalone.request.isolated", monkeypatch)
    assert not {LONG_QUERY_ROW, LONGER_QUERY_ROW, LONGEST_QUERY_ROW} & failing


# -- hunt_e: account and model selection (standalone.resolve.table) ------------------------------------------

RESOLVE = "standalone.resolve.table"
RELAY_IN_ORDER = "fallback-takes-an-opted-in-relay-in-order"
OTHER_OFF = "fallback-skips-a-switched-off-account-that-is-not-current"
OMITTED = "current-relay-without-a-switch-does-not-block-fallback"
REQUEST_URL = "third-party-request-url-is-the-search-url"
MESSAGES_V1 = "official-messages-base-with-v1-is-not-official"
RESPONSES_BARE = "official-responses-bare-host-is-official"
PATH_CASE = "official-path-differing-in-case-is-not-official"
ASSIGNED_OPT_IN = "assigned-third-party-needs-its-own-opt-in"
BARE_MODEL = "bare-model-without-a-connection-is-not-used"
EMPTY_ALLOW_LIST = "empty-allow-list-registers-nothing"
RESOLVE_ROWS = {RELAY_IN_ORDER, OTHER_OFF, OMITTED, REQUEST_URL, MESSAGES_V1, RESPONSES_BARE, PATH_CASE,
                ASSIGNED_OPT_IN, BARE_MODEL, EMPTY_ALLOW_LIST}
_FALLBACK = "    for account in usable:\n"
_OWN_OFF = "    if own is not None and _capable(own) and own.web_search is False:\n"


def _resolve_failing(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    return failing_rows(standalone, "RESOLUTION_CASES", RESOLVE, monkeypatch)


def _wrong_resolve(right: str, wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``resolve`` with ``right`` replaced by ``wrong``, also where the reference target imported it."""
    patch_reading(standalone_accounts, "resolve", right, wrong, monkeypatch, targets)


def test_the_reference_passes_the_hunt_e_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert RESOLVE_ROWS <= {c.name for c in standalone.RESOLUTION_CASES}
    assert _resolve_failing(monkeypatch) == set()
    assert {LONGER_QUERY_ROW, EARLIER_ROW} <= {c.name for c in standalone.REQUEST_CASES}
    assert _failing("standalone.request.isolated", monkeypatch) == set()
    assert STATUS_ROWS <= {c.name for c in standalone.PROSE_CASES}
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()


@pytest.mark.parametrize("order", ["sorted(usable, key=lambda a: not _official(a))",
                                   "[a for a in usable if _official(a)]"])
def test_official_accounts_first_or_only_in_the_fallback_fail_exactly_the_relay_row(
    order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: the fallback tries official accounts before opted-in relays, or takes official accounts only
    _wrong_resolve(_FALLBACK, f"    for account in {order}:\n", monkeypatch)
    assert _resolve_failing(monkeypatch) == {RELAY_IN_ORDER}


def test_any_switched_off_account_stopping_the_fallback_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a non-current account with web_search = false met in the fallback stops it (none)
    stop = '        if _capable(account) and account.web_search is False:\n' \
           '            return Resolution("none", reason="explicit_off", skipped=skipped)\n'
    _wrong_resolve(_FALLBACK, _FALLBACK + stop, monkeypatch)
    assert _resolve_failing(monkeypatch) == {OTHER_OFF}


@pytest.mark.parametrize(("reason", "rows"), [
    ("no_search_account", {OMITTED}),
    # the reason the suite names for an explicit off: the rows whose current third-party Messages account never set
    # the switch and has no account to fall back to see it too (they expect no_search_account)
    ("explicit_off", {OMITTED, "third-party-messages-needs-explicit-opt-in", MESSAGES_V1}),
])
def test_an_omitted_switch_blocking_the_fallback_fails_the_omitted_row_whatever_its_reason(
    reason: str, rows: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a current relay that never set web_search blocks the fallback (only an explicit false does)
    block = '    if own is not None and _capable(own) and not _official(own) and own.web_search is None:\n' \
            f'        return Resolution("none", reason="{reason}", skipped=skipped)\n'
    _wrong_resolve(_OWN_OFF, block + _OWN_OFF, monkeypatch)
    assert _resolve_failing(monkeypatch) == rows


def test_a_relay_request_url_dropped_fails_exactly_the_request_url_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a third-party route rebuilt from the base, the account's own request URL dropped
    patch_reading(standalone_accounts, "_route", "url = account.request_url or account.base_url",
                  "url = account.base_url", monkeypatch)
    assert _resolve_failing(monkeypatch) == {REQUEST_URL}


def test_v1_granted_to_the_messages_base_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: https://api.deepseek.com/anthropic/v1 taken for the exact official Messages address
    monkeypatch.setitem(standalone_accounts._OFFICIAL, "messages", (("/anthropic", "/anthropic/v1"), "/v1/messages"))
    assert _resolve_failing(monkeypatch) == {MESSAGES_V1}


def test_responses_official_only_at_v1_fails_exactly_the_bare_host_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the official Responses account recognised only at /v1, the bare host taken for a third party
    monkeypatch.setitem(standalone_accounts._OFFICIAL, "responses", (("/v1",), "/responses"))
    assert _resolve_failing(monkeypatch) == {RESPONSES_BARE}


def test_v1_for_chat_completions_alone_stays_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: "（后者可带 /v1）" read literally, /v1 granted to Chat Completions ("the latter") and not to Responses
    monkeypatch.setitem(standalone_accounts._OFFICIAL, "responses", (("",), "/responses"))
    assert _resolve_failing(monkeypatch) == set()


def test_the_official_path_compared_regardless_of_case_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: https://api.deepseek.com/V1 taken for the official /v1 (the path's case ignored)
    patch_reading(standalone_accounts, "_normal", "{parts.path.rstrip('/')}", "{parts.path.rstrip('/').lower()}",
                  monkeypatch)
    assert _resolve_failing(monkeypatch) == {PATH_CASE}


def test_an_assignment_taken_as_the_relays_opt_in_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a third-party connection picked by hand searches although it never set web_search = true
    patch_reading(standalone_accounts, "_assigned", "if not _search_on(account):",
                  'if not (_search_on(account) or account.protocol in ("messages", "responses")'
                  " and account.web_search is None):", monkeypatch)
    assert _resolve_failing(monkeypatch) == {ASSIGNED_OPT_IN}


def test_a_bare_model_on_the_automatic_account_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a value without "/" read as a model for the automatically chosen account
    resolve = standalone_accounts.resolve

    def bare_model_on_current(document: Mapping[str, Any], environ: Mapping[str, str]) -> Any:
        reference = standalone_accounts.search_model_of(document)
        if reference is None or reference.strip() in ("", "auto") or "/" in reference:
            return resolve(document, environ)
        result = resolve({**document, "web_search_model": None, "agent": {}}, environ)
        if result.route is None:
            return result
        return dataclasses.replace(result, route=dataclasses.replace(result.route, model=reference))

    monkeypatch.setattr(standalone_accounts, "resolve", bare_model_on_current)
    monkeypatch.setattr(targets, "resolve", bare_model_on_current)
    assert _resolve_failing(monkeypatch) == {BARE_MODEL}


def test_an_empty_allow_list_read_as_none_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: tools_enabled = [] read as "no allow-list" (a falsy test), so the tool is registered
    _wrong_resolve('if allowed is not None and "web_search" not in allowed:',
                   'if allowed and "web_search" not in allowed:', monkeypatch)
    assert _resolve_failing(monkeypatch) == {EMPTY_ALLOW_LIST}


# -- hunt_e: the request (standalone.request.isolated) and an error status (standalone.prose.error) ----------

EARLIER_ROW = "messages-no-earlier-answer"
COOKIE_ROW = "messages-no-earlier-cookie"
PROSE = "standalone.prose.error"
STATUS_500, STATUS_400 = "http-500-with-an-answer-body", "http-400-with-an-answer-body"
STATUS_ROWS = {STATUS_500, STATUS_400}


# The reading remembers across calls (a process that carries one search's answer into every later search). With
# sources, its window of the last eight URLs has moved past the kumquat source by the cookie row; with the summary,
# the rows after the earlier-answer row see the first query in their second request.
PROMPT_ROW = "messages-no-prompt"


@pytest.mark.parametrize(("carried", "rows"), [
    # (and a query searched again carries its first search's answer: the prompt-independent row's text differs)
    ("sources", {EARLIER_ROW, "messages-prompt-independent"}),
    # the emulator's own summary quotes its query, so the messages rows (plain and streamed) see the first query
    # in the second request
    ("summary", {EARLIER_ROW, "messages", PROMPT_ROW, COOKIE_ROW, "messages-streamed", "messages-prompt-independent"}),
])
def test_an_earlier_answer_in_the_next_request_fails_exactly_the_earlier_answer_row(
    carried: str, rows: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: each Messages search request carries the earlier searches' source URLs (or summary) with the query
    search = standalone_messages.MessagesStandaloneSearch.standalone_search
    seen: list[str] = []

    async def remembering(self: standalone_messages.MessagesStandaloneSearch, query: str, ctx: Any, *,
                          max_tokens: int, timeout_s: float) -> Any:
        told = f"(already found: {', '.join(seen[-8:])}) {query}" if seen else query
        answer = await search(self, told, ctx, max_tokens=max_tokens, timeout_s=timeout_s)
        seen.extend([s.url for s in answer.sources] if carried == "sources" else [answer.summary[:200]])
        return answer

    monkeypatch.setattr(standalone_messages.MessagesStandaloneSearch, "standalone_search", remembering)
    assert _failing("standalone.request.isolated", monkeypatch) == rows


def test_a_query_cut_at_1000_characters_fails_exactly_the_1700_character_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the query cut silently to 1 000 characters (longer than the other long-query row's queries)
    patch_reading(standalone_search, "parse_query", "    return query\n", "    return query[:1000]\n", monkeypatch)
    assert _failing("standalone.request.isolated", monkeypatch) == {LONGER_QUERY_ROW, LONGEST_QUERY_ROW,
                                                                     BOUND_QUERY_ROW}


def test_a_query_cut_at_2000_characters_fails_exactly_the_3400_character_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the query cut silently to 2 000 characters (an outside hunt's reading)
    patch_reading(standalone_search, "parse_query", "    return query\n", "    return query[:2000]\n", monkeypatch)
    assert _failing("standalone.request.isolated", monkeypatch) == {LONGEST_QUERY_ROW, BOUND_QUERY_ROW}


def test_a_1700_character_query_refused_at_a_target_bound_stays_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a target's own bound between the two long-query rows, the longer query refused as a tool error
    patch_reading(standalone_search, "parse_query", "MAX_QUERY_BYTES:", "1024:", monkeypatch)
    assert _failing("standalone.request.isolated", monkeypatch) == set()


@pytest.mark.parametrize(("statuses", "row"), [("reply.status >= 500", STATUS_500), ("reply.status < 500", STATUS_400)])
def test_an_error_status_whose_body_reads_as_an_answer_fails_exactly_its_row(
    statuses: str, row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a 5xx (or 4xx) reply whose body reads as a Messages answer taken as the answer, the status ignored
    patch_reading(_standalone.StandaloneEndpoint, "_exchange", "if not 200 <= reply.status < 300:",
                  f"if not 200 <= reply.status < 300 and not ({statuses} and b'\"content\": [' in reply.body):",
                  monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == {row}
