"""An audit of seed 003: two wrong readings dsweb certify passed. The standalone result's summary was only ever
required to be a string, so a summary left empty (truncated set to excuse it) passed every standalone check; and
no row ran two searches at once, so provider state shared by concurrent searches (one message list, one answer
holder, one stream buffer) went unseen. Seed 003: the main conversation receives a size-limited JSON result of
summary, sources and an optional truncated flag, the summary being the search model's generated answer; concurrent
searches use separate provider instances, and a search reads no other search's history.

Each wrong reading is made in the reference and must fail exactly the rows that name it; the reference and the
readings seed 003 leaves open pass them."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from dsweb_ref._context import CallContext
from dsweb_ref._protocols import StandaloneAnswer
from dsweb_ref.certification.checks import standalone
from dsweb_ref.providers import _standalone, standalone_messages, standalone_responses
from dsweb_ref.tools.standalone_search import StandaloneSearchTool

from ._readings import failing_rows, patch_reading

BOUNDED, BOUND_TABLE = "standalone.result.bounded", "BOUND_CASES"
ISOLATED, REQUEST_TABLE = "standalone.request.isolated", "REQUEST_CASES"
MESSAGES_ANSWER, RESPONSES_ANSWER = "messages-answer-in-the-summary", "responses-answer-in-the-summary"
MESSAGES_ANSWER_STREAMED = "messages-answer-in-the-summary-streamed"
RESPONSES_ANSWER_STREAMED = "responses-answer-in-the-summary-streamed"
ANSWER_ROWS = {MESSAGES_ANSWER, RESPONSES_ANSWER, MESSAGES_ANSWER_STREAMED, RESPONSES_ANSWER_STREAMED}
# Hunt T2-3's row: a short answer beside a duplicate source, judged whole (nothing was cut), so a lost answer fails it
DUPLICATE = "duplicate-source-short-answer"
CONCURRENT_ROWS = {"messages-concurrent", "responses-concurrent", "messages-concurrent-streamed"}
HUGE_STREAMED = "huge-messages-summary-streamed"  # an older row a streamed answer's lost text fails too

RESULT = "return encode_result(summary, bound_sources(answer.sources), cut), answer.usage"  # StandaloneSearchTool.run


def _only(table: str, rows: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``rows`` alone of ``standalone.table``: a variant is shown to pass the new rows without the whole table."""
    monkeypatch.setattr(standalone, table, tuple(c for c in getattr(standalone, table) if c.name in rows))


def _always_streaming(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every standalone endpoint asks for a stream, whether configured to or not."""
    init = _standalone.StandaloneEndpoint.__init__

    def streaming(self: _standalone.StandaloneEndpoint, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **{**kwargs, "stream": True})

    monkeypatch.setattr(_standalone.StandaloneEndpoint, "__init__", streaming)


# -- the summary (standalone.result.bounded) -------------------------------------------------------------------


def test_the_reference_passes_the_answer_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ANSWER_ROWS <= {c.name for c in standalone.BOUND_CASES}
    _only(BOUND_TABLE, ANSWER_ROWS, monkeypatch)
    assert failing_rows(standalone, BOUND_TABLE, BOUNDED, monkeypatch) == set()


def test_an_empty_summary_flagged_truncated_fails_exactly_the_answer_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the auditor's reading, summary "" with truncated = bool(answer.summary); every older row passed it
    patch_reading(StandaloneSearchTool, "run", RESULT,
                  'return encode_result("", bound_sources(answer.sources), bool(answer.summary)), answer.usage',
                  monkeypatch)
    # and the two rows whose answer fits the bound: an empty summary holds not even the answer's start, so its
    # truncated flag excuses nothing (a cut answer keeps its start)
    assert failing_rows(standalone, BOUND_TABLE, BOUNDED, monkeypatch) == ANSWER_ROWS | {
        "summary-of-12000-bytes", "summary-of-11900-bytes-streamed", DUPLICATE}


def test_a_placeholder_summary_fails_exactly_the_answer_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a fixed placeholder in place of the search model's answer
    patch_reading(StandaloneSearchTool, "run", RESULT,
                  'return encode_result("Search completed; see the sources.", bound_sources(answer.sources), cut), '
                  "answer.usage", monkeypatch)
    assert failing_rows(standalone, BOUND_TABLE, BOUNDED, monkeypatch) == ANSWER_ROWS | {DUPLICATE}


def test_the_sdk_output_text_read_from_the_wire_fails_exactly_the_responses_answer_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the summary read from the top-level output_text, which only the SDKs compute (absent on the wire); the
    # older huge Responses rows saw it only as a missing truncated flag (no summary left to cut)
    patch_reading(standalone_responses, "read_response", 'summary="".join(texts),',
                  'summary=data["output_text"] if isinstance(data.get("output_text"), str) else "",', monkeypatch)
    assert failing_rows(standalone, BOUND_TABLE, BOUNDED, monkeypatch) == {
        RESPONSES_ANSWER, RESPONSES_ANSWER_STREAMED, "huge-responses-summary", "huge-responses-summary-streamed"}


def test_lost_text_deltas_fail_the_streamed_messages_answer_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a streamed answer's text deltas not read (the older huge-summary row sees it as a missing cut)
    patch_reading(standalone_messages, "read_events", 'texts[index].append(delta["text"])', "pass", monkeypatch)
    assert failing_rows(standalone, BOUND_TABLE, BOUNDED, monkeypatch) == {MESSAGES_ANSWER_STREAMED, HUGE_STREAMED}


@pytest.mark.parametrize("variant", ["words around the answer", "lines rewrapped", "always streaming"])
def test_readings_seed_003_leaves_open_pass_the_answer_rows(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # open: the words a target puts around the answer, its whitespace, and streaming whether asked or not
    if variant == "words around the answer":
        patch_reading(StandaloneSearchTool, "run", RESULT,
                      'return encode_result(f"Web search for {query!r} found:\\n\\n{summary}\\n\\n(See the sources.)", '
                      "bound_sources(answer.sources), cut), answer.usage", monkeypatch)
    elif variant == "lines rewrapped":
        patch_reading(StandaloneSearchTool, "run", RESULT,
                      'return encode_result(summary.replace(" ", "\\n  "), bound_sources(answer.sources), cut), '
                      "answer.usage", monkeypatch)
    else:
        _always_streaming(monkeypatch)
    _only(BOUND_TABLE, ANSWER_ROWS, monkeypatch)
    assert failing_rows(standalone, BOUND_TABLE, BOUNDED, monkeypatch) == set()


# -- concurrent searches (standalone.request.isolated) ---------------------------------------------------------

ANSWER = StandaloneSearchTool._answer


def test_the_reference_passes_the_concurrent_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert CONCURRENT_ROWS <= {c.name for c in standalone.REQUEST_CASES}
    _only(REQUEST_TABLE, CONCURRENT_ROWS, monkeypatch)
    assert failing_rows(standalone, REQUEST_TABLE, ISOLATED, monkeypatch) == set()


def test_one_message_list_for_the_searches_in_flight_fails_exactly_the_concurrent_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: an accumulating message list shared by the searches in flight (emptied as each ends, so searches one
    # after the other never see it): a request carries the other search's query
    in_flight: list[str] = []

    async def sharing(self: StandaloneSearchTool, query: str, ctx: CallContext) -> StandaloneAnswer:
        in_flight.append(query)
        try:
            return await ANSWER(self, "\n".join(in_flight), ctx)
        finally:
            in_flight.remove(query)

    monkeypatch.setattr(StandaloneSearchTool, "_answer", sharing)
    assert failing_rows(standalone, REQUEST_TABLE, ISOLATED, monkeypatch) == CONCURRENT_ROWS


@pytest.mark.parametrize("held", ["answer", "sources"])
def test_an_answer_holder_shared_by_the_searches_fails_exactly_the_concurrent_rows(
    held: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: one holder for the provider, emptied when a search starts: the first answer to land is every search's
    # (or every answer's sources pile up in one list), so the search answered last gets the other's
    holder: list[StandaloneAnswer] = []

    async def holding(self: StandaloneSearchTool, query: str, ctx: CallContext) -> StandaloneAnswer:
        holder.clear()
        answer = await ANSWER(self, query, ctx)
        holder.append(answer)
        if held == "answer":
            return holder[0]
        return replace(answer, sources=tuple(s for kept in holder for s in kept.sources))

    monkeypatch.setattr(StandaloneSearchTool, "_answer", holding)
    assert failing_rows(standalone, REQUEST_TABLE, ISOLATED, monkeypatch) == CONCURRENT_ROWS


def test_one_stream_buffer_for_the_provider_fails_exactly_the_streamed_concurrent_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: one text buffer for the provider's streams, emptied when a search starts: the stream read last holds
    # the other's text too (plain answers never touch it)
    buffer: list[str] = []
    search = standalone_messages.MessagesStandaloneSearch.standalone_search
    read_events = standalone_messages.read_events

    async def starting(self: standalone_messages.MessagesStandaloneSearch, query: str, ctx: CallContext, *,
                       max_tokens: int, timeout_s: float) -> StandaloneAnswer:
        buffer.clear()
        return await search(self, query, ctx, max_tokens=max_tokens, timeout_s=timeout_s)

    def buffered(streamed: _standalone.Streamed, label: str) -> StandaloneAnswer:
        answer = read_events(streamed, label)
        buffer.append(answer.summary)
        return replace(answer, summary="".join(buffer))

    monkeypatch.setattr(standalone_messages.MessagesStandaloneSearch, "standalone_search", starting)
    monkeypatch.setattr(standalone_messages, "read_events", buffered)
    assert failing_rows(standalone, REQUEST_TABLE, ISOLATED, monkeypatch) == {"messages-concurrent-streamed"}


@pytest.mark.parametrize("variant", ["one search at a time", "always streaming"])
def test_readings_seed_003_leaves_open_pass_the_concurrent_rows(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # open: whether a target runs two searches at once (one at a time, they are checked one after the other), and
    # streaming whether asked or not
    if variant == "one search at a time":
        locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}  # one per run: each row runs on a loop of its own

        async def queued(self: StandaloneSearchTool, query: str, ctx: CallContext) -> StandaloneAnswer:
            async with locks.setdefault(asyncio.get_running_loop(), asyncio.Lock()):
                return await ANSWER(self, query, ctx)

        monkeypatch.setattr(StandaloneSearchTool, "_answer", queued)
    else:
        _always_streaming(monkeypatch)
    _only(REQUEST_TABLE, CONCURRENT_ROWS, monkeypatch)
    assert failing_rows(standalone, REQUEST_TABLE, ISOLATED, monkeypatch) == set()



def test_words_around_the_answer_cut_at_the_bound_pass_every_bound_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open (a review's false failure, fixed): words around the answer, the summary then cut at the target's bound
    # and flagged; whole is judged by the answer's text, not by the summary's length
    right = "summary, cut = _cut_bytes(clean_text(answer.summary), MAX_SUMMARY_BYTES)"
    wrapped = ('summary, cut = _cut_bytes("Answer from the search model:\\n\\n" + clean_text(answer.summary) '
               '+ "\\n\\n(see sources)", MAX_SUMMARY_BYTES)')
    patch_reading(StandaloneSearchTool, "run", right, wrapped, monkeypatch)
    assert failing_rows(standalone, BOUND_TABLE, BOUNDED, monkeypatch) == set()


FIELDS_ROWS = {"messages-result-holds-its-fields-only", "responses-result-holds-its-fields-only"}


def _usage_shown(when: str) -> str:
    """StandaloneSearchTool.run adding the search's usage to the model-visible JSON when ``when`` holds (its body is
    dedented by one level when patched: the lines after the first start at four spaces)."""
    return ("text = encode_result(summary, bound_sources(answer.sources), cut, limit=23_000)\n"
            f"    shown = {{**json.loads(text), 'usage': answer.usage.input_tokens}} if {when} else json.loads(text)\n"
            "    return json.dumps(shown, ensure_ascii=False), answer.usage")


# catches (hunt O-B3): the search's usage added to the JSON the main model reads (seed 003 reports it apart)
def test_usage_shown_to_the_main_model_fails_the_fields_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(StandaloneSearchTool, "run", RESULT, _usage_shown("True"), monkeypatch)
    assert FIELDS_ROWS <= failing_rows(standalone, BOUND_TABLE, BOUNDED, monkeypatch)


# catches (a review's reading): the usage added only to a cut result, which the two plain answers never are
def test_usage_shown_only_when_cut_fails_the_cut_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(StandaloneSearchTool, "run", RESULT, _usage_shown("cut"), monkeypatch)
    failing = failing_rows(standalone, BOUND_TABLE, BOUNDED, monkeypatch)
    assert "huge-messages-summary" in failing and not failing & FIELDS_ROWS
