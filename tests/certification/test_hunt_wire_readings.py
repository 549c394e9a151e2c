"""Issue 24, the outside hunt on the Search API provider: queries cut or refused by length, or
NFKC-normalised; the header, body-key and sendOriginalQuestion rules kept on one-query calls only; a
batch's merge cut to the count; an untitled result titled with its site_name. Each wrong reading is
made in the reference and must fail exactly the rows that name it."""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

import pytest

from dsweb_ref._types import Source
from dsweb_ref.certification.checks import mapping, search
from dsweb_ref.providers import _deepseek_http, deepseek_search_api
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.tools import web_search
from dsweb_ref.tools.web_search import WebSearchTool

from ._readings import failing_rows, patch_reading

WIRE, ORI, COUNT, MAPPING = "search.api.wire", "search.api.ori_question", "search.api.count", "search.api.mapping"
CJK = "128 CJK characters"
ASTRAL = "100 astral characters"
OVER = "over 128 characters"
NFKC = "full-width and compatibility characters"
WIRE_BATCH = "a batch of three"
OFF_BATCH = "sendOriginalQuestion off, a batch"
MERGED = "a batch, count below cap"
UNTITLED = "no title, a site_name"
PROMPT_IS_QUERY = "the prompt is the query"

# True inside the searches of a batch (set around web_search's batch runner, which its tasks inherit).
IN_BATCH: ContextVar[bool] = ContextVar("in_batch", default=False)


def _mark_batches(monkeypatch: pytest.MonkeyPatch, *modules: Any) -> None:
    """Batches set IN_BATCH for their searches; each of ``modules`` can read it as ``IN_BATCH``."""
    original = web_search.run_all_or_nothing

    async def marked(coros: Sequence[Coroutine[Any, Any, Any]]) -> list[Any]:
        token = IN_BATCH.set(True)
        try:
            return await original(coros)
        finally:
            IN_BATCH.reset(token)

    monkeypatch.setattr(web_search, "run_all_or_nothing", marked)
    for module in modules:
        monkeypatch.setattr(module, "IN_BATCH", IN_BATCH, raising=False)


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not {CJK, ASTRAL, OVER, NFKC, WIRE_BATCH} & failing_rows(search, "API_WIRE", WIRE, monkeypatch)
    assert OFF_BATCH not in failing_rows(search, "OMITTED", ORI, monkeypatch)
    assert PROMPT_IS_QUERY not in failing_rows(search, "ORI_CASES", ORI, monkeypatch)
    assert MERGED not in failing_rows(search, "COUNT", COUNT, monkeypatch)
    assert UNTITLED not in failing_rows(mapping, "API_CASES", MAPPING, monkeypatch)


def test_a_query_cut_to_128_characters_fails_exactly_the_over_128_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the client cuts each query to the service's 128-character limit
    patch_reading(DeepSeekSearchApi, "search", '{"query": request.query,', '{"query": request.query[:128],',
                  monkeypatch)
    assert failing_rows(search, "API_WIRE", WIRE, monkeypatch) == {OVER}


def test_queries_over_128_bytes_refused_fail_exactly_the_cjk_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the limit counted in UTF-8 bytes (Go len, Buffer.byteLength) and enforced by the client
    patch_reading(DeepSeekSearchApi, "search", "if not isinstance(request.query, str):",
                  'if not isinstance(request.query, str) or len(request.query.encode("utf-8")) > 128:', monkeypatch)
    # refusing over 128 characters is open; 100 astral characters are 400 bytes
    assert failing_rows(search, "API_WIRE", WIRE, monkeypatch) == {CJK, ASTRAL}


def test_queries_over_128_utf16_units_refused_fail_exactly_the_astral_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the limit counted as JavaScript's String.length (UTF-16 units) and enforced by the client; the
    # CJK row's characters are one unit each, so only astral characters tell the two apart
    patch_reading(DeepSeekSearchApi, "search", "if not isinstance(request.query, str):",
                  'if not isinstance(request.query, str) or len(request.query.encode("utf-16-le")) > 256:',
                  monkeypatch)
    assert failing_rows(search, "API_WIRE", WIRE, monkeypatch) == {ASTRAL}


def test_ori_question_omitted_when_it_repeats_the_query_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: ori_question left out when the collapsed prompt is the query itself (any case)
    right = deepseek_search_api.original_question

    def unless_query(prompt: str | None, query: str | None = None) -> str | None:
        value = right(prompt)
        return None if value is not None and value.casefold() == (query or "").casefold() else value

    monkeypatch.setattr(deepseek_search_api, "original_question", unless_query)  # before: the patch reads globals
    patch_reading(DeepSeekSearchApi, "search", "original_question(ctx.latest_prompt)",
                  "original_question(ctx.latest_prompt, request.query)", monkeypatch)
    assert failing_rows(search, "ORI_CASES", ORI, monkeypatch) == {PROMPT_IS_QUERY}


def test_an_nfkc_normalised_query_fails_exactly_the_compatibility_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: queries NFKC-normalised before sending (ＡＢＣ１２３ sent as ABC123)
    patch_reading(DeepSeekSearchApi, "search", '{"query": request.query,',
                  '{"query": __import__("unicodedata").normalize("NFKC", request.query),', monkeypatch)
    assert failing_rows(search, "API_WIRE", WIRE, monkeypatch) == {NFKC}


def test_an_accept_header_in_batches_only_fails_exactly_the_batch_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the header rule kept on one-query calls only (a batch adds Accept: application/json)
    _mark_batches(monkeypatch, _deepseek_http)
    patch_reading(_deepseek_http, "call_tools_api", '"Content-Type": "application/json"}',
                  '"Content-Type": "application/json", **({"Accept": "application/json"} if IN_BATCH.get() else {})}',
                  monkeypatch, deepseek_search_api)
    assert failing_rows(search, "API_WIRE", WIRE, monkeypatch) == {WIRE_BATCH}


def test_an_extra_body_key_in_batches_only_fails_exactly_the_batch_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the body-key rule kept on one-query calls only (a batch's requests carry one more key)
    _mark_batches(monkeypatch, deepseek_search_api)
    patch_reading(DeepSeekSearchApi, "search", '"need_content": False}',
                  '"need_content": False, **({"batch": True} if IN_BATCH.get() else {})}', monkeypatch)
    assert failing_rows(search, "API_WIRE", WIRE, monkeypatch) == {WIRE_BATCH}


def test_ori_question_sent_in_batches_when_off_fails_exactly_the_batch_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: sendOriginalQuestion: false honoured for one-query calls only
    _mark_batches(monkeypatch, deepseek_search_api)
    patch_reading(DeepSeekSearchApi, "search", "if conf.send_original_question else None",
                  "if conf.send_original_question or IN_BATCH.get() else None", monkeypatch)
    assert failing_rows(search, "OMITTED", ORI, monkeypatch) == {OFF_BATCH}


def test_a_merge_cut_to_the_count_fails_exactly_the_merged_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a batch's merged list capped at min(count, searchMaxResults) instead of searchMaxResults
    patch_reading(WebSearchTool, "run", "return merge_results(queries, results, cap)",
                  "return merge_results(queries, results, min(cap, self.web.select_search()._settings()"
                  ".deepseek_api.count))", monkeypatch)
    assert failing_rows(search, "COUNT", COUNT, monkeypatch) == {MERGED}


def test_a_site_name_as_title_fails_exactly_the_untitled_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a result without a title given its site_name as the title
    original = deepseek_search_api.map_results

    def titled(data: object) -> tuple[Source, ...]:
        return tuple(replace(s, title=s.title or s.metadata.get("site_name")) for s in original(data))

    monkeypatch.setattr(deepseek_search_api, "map_results", titled)
    assert failing_rows(mapping, "API_CASES", MAPPING, monkeypatch) == {UNTITLED}
