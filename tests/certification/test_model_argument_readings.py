"""An audit of the seeds' decisions found no row for the provider controls the deployment owns: nothing sent
web_search an argument beside queries, so a target that forwarded a model-supplied ori_question, count or
max_uses into the provider request was certified. Seed 001 rejects 'Let the model supply ori_question as a tool
argument' and seed 000 keeps bounds deployment-owned ('a deployment-owned bound keeps the model schema focused
on search input'). Each forwarding is made in the reference and fails exactly the row that names it; the
reference (which ignores the extra key) and a target that refuses unknown arguments pass."""

from __future__ import annotations

import contextvars
from typing import Any

import pytest

from dsweb_ref._context import CallContext
from dsweb_ref.certification.checks import search
from dsweb_ref.providers import deepseek_official, deepseek_search_api
from dsweb_ref.tools import web_search
from dsweb_ref.tools.web_search import WebSearchTool

from ._readings import failing_rows, fails_exactly, patch_reading

ORI, COUNT, WIRE = "search.api.ori_question", "search.api.count", "search.messages.wire"
ORI_ROW = "ori_question among the arguments"
COUNT_ROW = "count among the arguments"
MAX_USES_ROW = "max_uses among the arguments"
TABLES = ((ORI, "ORI_CASES"), (COUNT, "COUNT"), (WIRE, "MESSAGES_WIRE"))

# The model's arguments of the running call, where the patched providers read them.
MODEL_ARGUMENTS: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("model_arguments")


def _arguments_seen_by_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each web_search call's arguments kept where a provider can read them (as a target that passes the
    model's arguments down to its providers does); the providers still decide what they send."""
    right_run = WebSearchTool.run

    async def run(self: WebSearchTool, arguments: object, ctx: CallContext | None = None) -> Any:
        MODEL_ARGUMENTS.set(arguments if isinstance(arguments, dict) else {})
        return await right_run(self, arguments, ctx)

    monkeypatch.setattr(WebSearchTool, "run", run)
    for module in (deepseek_search_api, deepseek_official):
        monkeypatch.setattr(module, "_model_arguments", MODEL_ARGUMENTS, raising=False)


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # the reference ignores an argument beside queries
    assert ORI_ROW in {c.name for c in search.ORI_CASES}
    assert COUNT_ROW in {c.name for c in search.COUNT}
    assert MAX_USES_ROW in {c.name for c in search.MESSAGES_WIRE}
    for check, table in TABLES:
        assert failing_rows(search, table, check, monkeypatch) == set(), check


def test_a_model_ori_question_forwarded_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the model's ori_question argument sent in place of the user's latest prompt (seed 001 rejects
    # "Let the model supply ori_question as a tool argument")
    _arguments_seen_by_providers(monkeypatch)
    patch_reading(deepseek_search_api.DeepSeekSearchApi, "search", "original_question(ctx.latest_prompt)",
                  'original_question(_model_arguments.get({}).get("ori_question", ctx.latest_prompt))', monkeypatch)
    omitted = search.OMITTED
    monkeypatch.setattr(search, "OMITTED", ())
    fails_exactly(search, "ORI_CASES", ORI, ORI_ROW, monkeypatch)
    # without a prompt too: the row added for hunt L's reading that uses the argument only there
    monkeypatch.setattr(search, "ORI_CASES", ())
    monkeypatch.setattr(search, "OMITTED", omitted)
    assert failing_rows(search, "OMITTED", ORI, monkeypatch) == {"ori_question among the arguments, no prompt"}


def test_a_model_count_forwarded_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the model's count argument sent as the request's count (50), not min(count, searchMaxResults)
    _arguments_seen_by_providers(monkeypatch)
    patch_reading(deepseek_search_api.DeepSeekSearchApi, "search", '"count": count,',
                  '"count": _model_arguments.get({}).get("count", count),', monkeypatch)
    # a smaller count forwarded too (3): the row added for hunt L's reading that honours only those
    assert failing_rows(search, "COUNT", COUNT, monkeypatch) == {COUNT_ROW, "a smaller count among the arguments"}


def test_a_model_max_uses_forwarded_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the model's max_uses argument sent in the server tool (20) in place of the configured maxUses
    _arguments_seen_by_providers(monkeypatch)
    patch_reading(deepseek_official.DeepSeekMessagesSearch, "search", '"max_uses": conf.max_uses}',
                  '"max_uses": _model_arguments.get({}).get("max_uses", conf.max_uses)}', monkeypatch)
    # a smaller max_uses forwarded too (1): the row added for hunt L's reading that honours only those
    assert failing_rows(search, "MESSAGES_WIRE", WIRE, monkeypatch) == {MAX_USES_ROW,
                                                                          "a smaller max_uses among the arguments"}


def test_refusing_unknown_arguments_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    # seed-open: an argument the schema does not declare may be refused as WEB_INVALID_ARGUMENTS before any request
    right_parse = web_search.parse_queries
    refused: list[str] = []

    def strict(arguments: object, max_queries: int) -> list[str]:
        if isinstance(arguments, dict) and set(arguments) - {"queries"}:
            refused.extend(sorted(set(arguments) - {"queries"}))
            raise web_search.WebError(web_search.WebErrorCode.INVALID_ARGUMENTS, "unknown argument")
        return right_parse(arguments, max_queries)

    monkeypatch.setattr(web_search, "parse_queries", strict)
    for check, table in TABLES:
        assert failing_rows(search, table, check, monkeypatch) == set(), check
    # each row's call was refused, not skipped
    assert set(refused) == {"ori_question", "count", "max_uses", "max_results"}
