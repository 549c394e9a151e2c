"""An outside hunt (P, its second list) found two wrong readings of seed 001 that dsweb certify passed.

F4, search.messages.recorded: "The retained Messages path explicitly sends thinking: {type: 'disabled'} and records
that same body before dispatch." The hunt's reading searched each query of a batch with a call context made afresh
(the prompt and localization carried over, the recorder dropped): one-query calls were recorded, a batch's Messages
requests went out with no record, and every row of the check searched one query. Its new row, same-body-batch,
searches two queries of its own and requires a record of each Messages body.

F1, settings.snapshot.per_operation: "Each operation resolves one settings snapshot, including its endpoint and
credentials", and "sendOriginalQuestion: false disables" ori_question. The hunt's readings kept the Search API
provider's sendOriginalQuestion, or its count, as its first operation read it (key and base still read per
operation), and, a variant, the Messages provider's options (model, max_tokens, max_uses) likewise: every row saved
only a key, a base or the switch. Its new rows save sendOriginalQuestion off and count 3 between two searches with a
prompt, and max_uses 2 between two Messages searches.

Each reading is made in the reference as the hunt made it and must fail exactly its new row; the reference passes
the new rows."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import live_settings, request_record
from dsweb_ref.providers.deepseek_official import DeepSeekMessagesSearch
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.tools.web_search import WebSearchTool

from ._readings import fails_exactly, passes_rows, patch_reading

RECORDED, RECORD_TABLE = "search.messages.recorded", "CASES"
BATCH = request_record.SAME_BODY_BATCH.name

SETTINGS, SETTINGS_TABLE = "settings.snapshot.per_operation", "CASES"
OPTIONS, MESSAGES_OPTIONS = live_settings.OPTIONS.name, live_settings.MESSAGES_OPTIONS.name

EACH_QUERY = "[self.web.search(SearchRequest(q, cap), ctx) for q in queries]"
EACH_QUERY_UNRECORDED = ("[self.web.search(SearchRequest(q, cap), CallContext(latest_prompt=ctx.latest_prompt, "
                         "localization=ctx.localization)) for q in queries]")


def test_the_reference_passes_the_batch_record_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(request_record, RECORD_TABLE, RECORDED, (BATCH,), monkeypatch)


def test_a_batch_searched_without_the_recorder_fails_exactly_the_batch_record_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (P-B4): each query of a batch searched with a call context made afresh that keeps the prompt and
    # localization but drops the recorder, so a batch's Messages requests go out unrecorded (one-query calls are)
    patch_reading(WebSearchTool, "run", EACH_QUERY, EACH_QUERY_UNRECORDED, monkeypatch)
    fails_exactly(request_record, RECORD_TABLE, RECORDED, BATCH, monkeypatch)


def test_the_reference_passes_the_saved_options_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(live_settings, SETTINGS_TABLE, SETTINGS, (OPTIONS, MESSAGES_OPTIONS), monkeypatch)


@pytest.mark.parametrize(("right", "wrong"), [
    # catches (P-B1): sendOriginalQuestion read at the provider's first operation and kept: saved off, the prompt
    # still goes to the search service as ori_question until a restart
    ("if conf.send_original_question else None",
     'if self.__dict__.setdefault("_soq", conf.send_original_question) else None'),
    # catches (P-B1): the count setting read at the provider's first operation and kept: saved 3, the request still
    # sends min(10, 8) = 8
    ("count = conf.count\n", 'count = self.__dict__.setdefault("_count", conf.count)\n'),
], ids=["send-original-question", "count"])
def test_a_search_api_option_read_once_fails_exactly_the_saved_options_row(
    right: str, wrong: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_reading(DeepSeekSearchApi, "search", right, wrong, monkeypatch)
    fails_exactly(live_settings, SETTINGS_TABLE, SETTINGS, OPTIONS, monkeypatch)


def test_the_messages_options_read_once_fail_exactly_the_saved_max_uses_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (P-B1, its variant): the Messages provider's options (model, max_tokens, max_uses) read at its first
    # operation and kept, its key and base read per operation: saved max_uses 2, the next request still sends 5
    patch_reading(DeepSeekMessagesSearch, "search", "conf = snapshot.deepseek_messages\n",
                  'conf = self.__dict__.setdefault("_conf", snapshot.deepseek_messages)\n', monkeypatch)
    fails_exactly(live_settings, SETTINGS_TABLE, SETTINGS, MESSAGES_OPTIONS, monkeypatch)
