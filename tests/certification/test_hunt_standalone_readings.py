"""Issue 24's seed-003 false-pass hunt: wrong standalone searches `dsweb certify --profile seed-003-standalone`
still certified (a result bound that never measured the sources, "HTTP(S)" read as a prefix, the raw list cut
before the filter, one search read of two, a 302 or a Responses redirect followed, a server-side conversation,
streamed thinking read as text). Each is made in the reference and fails exactly the row that names it."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

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


def test_a_bound_on_the_summary_alone_fails_exactly_the_long_sources_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the 24 000-byte bound applied to the summary alone, the sources never measured
    monkeypatch.setattr(standalone_search, "encode_result", _summary_only_bound)
    assert _failing("standalone.result.bounded", monkeypatch) == {"eight-long-sources"}


def test_http_read_as_a_prefix_fails_exactly_the_look_alike_schemes_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: "HTTP(S)" read as url.lower().startswith("http") (httpx:, http+unix:, https-evil: kept)
    patch_reading(standalone_search, "_usable_url", 'parsed.scheme not in ("http", "https")',
                  'not url.lower().startswith("http")', monkeypatch)
    assert _failing("standalone.sources.filtered", monkeypatch) == {"http-look-alike-schemes"}


def test_the_raw_list_cut_before_the_filter_fails_exactly_the_copies_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the backend's list cut to its first eight entries, then deduped and filtered
    patch_reading(standalone_search, "bound_sources", "for source in sources:",
                  "for source in sources[:MAX_SOURCES]:", monkeypatch)
    assert _failing("standalone.sources.filtered", monkeypatch) == {"eight-copies-then-five-distinct"}


def test_only_the_first_result_block_fails_exactly_the_messages_two_searches_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: only the first web_search_tool_result of a Messages answer yields sources
    patch_reading(standalone_messages, "read_answer", "searched = True\n            for item in items:",
                  "first = not searched\n            searched = True\n            for item in items if first else []:",
                  monkeypatch)
    assert _failing("standalone.sources.filtered", monkeypatch) == {"messages-two-searches"}


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
    assert _failing("standalone.redirect.not_followed", monkeypatch) == {"messages-302"}


def test_a_responses_backend_following_redirects_fails_exactly_the_responses_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the Responses search backend follows redirects (the Messages one refuses them)
    monkeypatch.setattr(_standalone, "post", _following((301, 302, 303, 307, 308), "/responses"))
    assert _failing("standalone.redirect.not_followed", monkeypatch) == {"responses-307"}


_STORE = '"store": False,'


@pytest.mark.parametrize("field", ['"conversation": "conv_web_search_history"', '"prompt": {"id": "pmpt_search"}'])
def test_a_server_side_history_or_stored_prompt_fails_exactly_the_responses_row(
    field: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a Responses search request naming a conversation (with store: true) or a stored prompt
    patch_reading(standalone_responses.ResponsesStandaloneSearch, "standalone_search", _STORE,
                  f'"store": True, {field},', monkeypatch)
    assert _failing("standalone.request.isolated", monkeypatch) == {"responses"}


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


def test_the_reference_passes_the_long_query_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert LONG_QUERY_ROW not in failing_rows(standalone, "REQUEST_CASES", "standalone.request.isolated", monkeypatch)


@pytest.mark.parametrize("limit", [128, 256])
def test_a_query_cut_to_a_short_limit_fails_exactly_the_long_query_row(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: the query cut to 128 (or 256) characters, the context written into it lost
    patch_reading(standalone_search, "parse_query", "    return query\n", f"    return query[:{limit}]\n",
                  monkeypatch)
    assert failing_rows(standalone, "REQUEST_CASES", "standalone.request.isolated", monkeypatch) == {LONG_QUERY_ROW}


def test_a_long_query_refused_as_a_tool_error_stays_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a target's own bound on the query, answered as a tool error before any request
    patch_reading(standalone_search, "parse_query", "MAX_QUERY_BYTES:", "256:", monkeypatch)
    assert LONG_QUERY_ROW not in failing_rows(standalone, "REQUEST_CASES", "standalone.request.isolated", monkeypatch)
