"""An outside hunt (L) over the newest checks found the "... among the arguments" rows trying one value of one key:
a model's count honoured only below the deployment's, or read under the name max_results; a model's localization
or need_content: true forwarded into the Search API body; the model's ori_question used where the Session has no
prompt; a smaller max_uses honoured; web_fetch's max_length lifting the output bound. Beside them: searchMaxQueries 0
silently read as the default four, and source URLs percent-decoded in the model-visible text. Seed 000 keeps the
bounds deployment-owned ('a deployment-owned bound keeps the model schema focused on search input'), seed 001 says
'the tool always sends its limit', 'Direct Search sends query, count, need_content: false, and ori_question', 'it
does not send localization', 'a search without such a prompt omits the field', and Harness 'retains ... bounded
tool output'. Each wrong reading is made in the reference and fails exactly the row that names it; the reference
and a target that refuses unknown arguments pass (a cap of 0 taken and capping every array: test_text_rules)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

import pytest

from dsweb_ref._context import CallContext
from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref._types import SearchResult
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import fetch, search, text, validation
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers import deepseek_official, deepseek_search_api
from dsweb_ref.tools import _render, web_fetch, web_search
from dsweb_ref.tools.web_fetch import WebFetchTool
from dsweb_ref.tools.web_search import WebSearchTool

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import outcomes, run
from .test_model_argument_readings import _arguments_seen_by_providers

COUNT, API_WIRE, ORI, MESSAGES_WIRE = "search.api.count", "search.api.wire", "search.api.ori_question", \
    "search.messages.wire"
MAPPING, QUERY_CAP, AGREES = "fetch.api.mapping", "search.validation.query_cap", "search.text.agrees"
CHECKS = (COUNT, API_WIRE, ORI, MESSAGES_WIRE, MAPPING, QUERY_CAP, AGREES)
SMALLER_COUNT, MAX_RESULTS = "a smaller count among the arguments", "max_results among the arguments"
LOCALIZATION, NEED_CONTENT = "localization among the arguments", "need_content among the arguments"
OTHER_KEYS = "several other keys among the arguments"
ORI_NO_PROMPT = "ori_question among the arguments, no prompt"
SMALLER_MAX_USES = "a smaller max_uses among the arguments"
MAX_LENGTH = "a page of 1,000,000 characters, max_length among the arguments"
ESCAPED = "percent-escaped URLs"
ROWS = {COUNT: (search.COUNT, (SMALLER_COUNT, MAX_RESULTS)),
        API_WIRE: (search.API_WIRE, (LOCALIZATION, NEED_CONTENT, OTHER_KEYS)),
        ORI: (search.OMITTED, (ORI_NO_PROMPT,)),
        MESSAGES_WIRE: (search.MESSAGES_WIRE, (SMALLER_MAX_USES,)),
        MAPPING: (fetch.BOUNDS, (MAX_LENGTH,)),
        AGREES: (text.AGREES, (ESCAPED,))}
RUN = "cap = self.settings.search_max_results"  # WebSearchTool.run's cap: the request's bound and the merge's
CONTEXT = "ctx = ctx or CallContext()"  # WebSearchTool.run's call context


def _model_int(arguments: object, key: str) -> int | None:
    value = arguments.get(key) if isinstance(arguments, dict) else None
    return value if type(value) is int and value > 0 else None


def _smaller(key: str) -> Any:
    """The cap, lowered to the model's ``key`` argument when that is smaller (the hunt's reading)."""
    def bound(arguments: object, cap: int) -> int:
        value = _model_int(arguments, key)
        return value if value is not None and value < cap else cap
    return bound


def _passed(only: tuple[str, ...]) -> dict[str, Outcome]:
    return outcomes(run(reference_target(), only=list(only)))


def test_the_new_rows_are_in_their_tables_and_the_reference_passes_them() -> None:
    for check, (table, rows) in ROWS.items():
        assert set(rows) <= {case.name for case in table}, check
    assert set(_passed(CHECKS).values()) == {Outcome.PASSED}


def test_a_smaller_model_count_honoured_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: count 3 among the arguments sent (and 3 sources returned) where min(count 10, searchMaxResults 8) = 8
    # is ("the tool always sends its limit"; the row with 50 passed this reading)
    monkeypatch.setattr(web_search, "_model_cap", _smaller("count"), raising=False)
    patch_reading(WebSearchTool, "run", RUN, "cap = _model_cap(arguments, self.settings.search_max_results)",
                  monkeypatch)
    fails_exactly(search, "COUNT", COUNT, SMALLER_COUNT, monkeypatch)


def test_a_value_cut_to_the_model_count_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the request's count right (8), the one query's value cut to the model's 3 (seed 000: a one-item
    # array returns the provider's result)
    def cut(arguments: object, result: SearchResult) -> SearchResult:
        wanted = _model_int(arguments, "count")
        if wanted is None or wanted >= len(result.sources):
            return result
        return dataclasses.replace(result, sources=result.sources[:wanted], truncated=True)

    monkeypatch.setattr(web_search, "_cut_to_model", cut, raising=False)
    right = "return await self.web.search(SearchRequest(queries[0], cap), ctx)"
    patch_reading(WebSearchTool, "run", right,
                  "return _cut_to_model(arguments, await self.web.search(SearchRequest(queries[0], cap), ctx))",
                  monkeypatch)
    fails_exactly(search, "COUNT", COUNT, SMALLER_COUNT, monkeypatch)


def test_a_model_max_results_read_as_the_bound_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: max_results 2 among the arguments taken for the request's result bound (count 2 sent, not 8)
    monkeypatch.setattr(web_search, "_model_cap", _smaller("max_results"), raising=False)
    patch_reading(WebSearchTool, "run", RUN, "cap = _model_cap(arguments, self.settings.search_max_results)",
                  monkeypatch)
    fails_exactly(search, "COUNT", COUNT, MAX_RESULTS, monkeypatch)


def test_a_model_localization_forwarded_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a localization argument sent as the body's localization with none configured ("it does not send
    # localization"; a localization is a bounded input the deployment defines, not the model's)
    def localized(arguments: object, ctx: CallContext) -> CallContext:
        where = arguments.get("localization") if isinstance(arguments, dict) else None
        return replace(ctx, localization=where) if isinstance(where, str) else ctx

    monkeypatch.setattr(web_search, "_localized", localized, raising=False)
    patch_reading(WebSearchTool, "run", CONTEXT, "ctx = _localized(arguments, ctx or CallContext())", monkeypatch)
    fails_exactly(search, "API_WIRE", API_WIRE, LOCALIZATION, monkeypatch)


def test_a_model_need_content_forwarded_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: need_content: true among the arguments sent as need_content true ("Direct Search sends ...
    # need_content: false")
    _arguments_seen_by_providers(monkeypatch)
    patch_reading(deepseek_search_api.DeepSeekSearchApi, "search", '"need_content": False}',
                  '"need_content": _model_arguments.get({}).get("need_content", False)}', monkeypatch)
    fails_exactly(search, "API_WIRE", API_WIRE, NEED_CONTENT, monkeypatch)


def test_a_model_site_folded_into_the_query_fails_exactly_the_other_keys_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a site argument turned into a site: operator before the query ("Queries pass through unchanged"),
    # a key no row of its own names
    def with_site(arguments: object, queries: list[str]) -> list[str]:
        site = arguments.get("site") if isinstance(arguments, dict) else None
        return [f"site:{site} {q}" for q in queries] if isinstance(site, str) else queries

    monkeypatch.setattr(web_search, "_with_site", with_site, raising=False)
    right = "queries = parse_queries(arguments, self.settings.search_max_queries)"
    patch_reading(WebSearchTool, "run", right,
                  "queries = _with_site(arguments, parse_queries(arguments, self.settings.search_max_queries))",
                  monkeypatch)
    fails_exactly(search, "API_WIRE", API_WIRE, OTHER_KEYS, monkeypatch)


def test_a_model_summary_sent_as_a_body_key_fails_exactly_the_other_keys_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a summary argument forwarded as the body's summary flag (seed 001's integration consumes no summary
    # and sends exactly query, count, need_content and ori_question)
    _arguments_seen_by_providers(monkeypatch)
    patch_reading(deepseek_search_api.DeepSeekSearchApi, "search", '"need_content": False}',
                  '"need_content": False, **({"summary": True} if _model_arguments.get({}).get("summary") else {})}',
                  monkeypatch)
    fails_exactly(search, "API_WIRE", API_WIRE, OTHER_KEYS, monkeypatch)


def test_a_model_ori_question_without_a_prompt_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the model's ori_question used when the Session has no prompt ("a search without such a prompt omits
    # the field"; seed 001 rejects "Let the model supply ori_question as a tool argument")
    def prompted(arguments: object, ctx: CallContext) -> CallContext:
        said = arguments.get("ori_question") if isinstance(arguments, dict) else None
        return replace(ctx, latest_prompt=said) if ctx.latest_prompt is None and isinstance(said, str) else ctx

    monkeypatch.setattr(web_search, "_prompted", prompted, raising=False)
    patch_reading(WebSearchTool, "run", CONTEXT, "ctx = _prompted(arguments, ctx or CallContext())", monkeypatch)
    whole = search.OMITTED
    fails_exactly(search, "OMITTED", ORI, ORI_NO_PROMPT, monkeypatch)
    # in the whole table too, after the rows that turn sendOriginalQuestion off (the row turns it back on)
    monkeypatch.setattr(search, "OMITTED", whole)
    (result,) = run(reference_target(), only=[ORI]).results
    assert result.outcome is Outcome.FAILED and result.reason.startswith(f"{ORI_NO_PROMPT}: "), result.reason


def test_a_smaller_model_max_uses_honoured_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: max_uses 1 among the arguments sent where maxUses 5 is configured (the budget is the deployment's:
    # "searchMaxQueries and provider-owned controls ... together form the search budget"; the row with 20 passed)
    _arguments_seen_by_providers(monkeypatch)
    patch_reading(deepseek_official.DeepSeekMessagesSearch, "search", '"max_uses": conf.max_uses}',
                  '"max_uses": min(conf.max_uses, _model_arguments.get({}).get("max_uses", conf.max_uses))}',
                  monkeypatch)
    fails_exactly(search, "MESSAGES_WIRE", MESSAGES_WIRE, SMALLER_MAX_USES, monkeypatch)


def _bounds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """fetch.api.mapping's BOUNDS alone: its other tables prove nothing here."""
    for table in ("MAPPING", "OTHER_SUCCESS", "FAILURES", "FALLBACK"):
        monkeypatch.setattr(fetch, table, ())


def test_a_model_max_length_lifting_the_fetch_bound_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: web_fetch's max_length argument (as the MCP fetch server takes one) honoured as the output bound, so
    # a page of a million characters is shown whole (Harness "retains ... bounded tool output")
    def limit(arguments: object, bound: int) -> int:
        return _model_int(arguments, "max_length") or bound

    monkeypatch.setattr(web_fetch, "_model_limit", limit, raising=False)
    patch_reading(WebFetchTool, "run", "limit = self.max_output_chars",
                  "limit = _model_limit(arguments, self.max_output_chars)", monkeypatch)
    _bounds_only(monkeypatch)
    fails_exactly(fetch, "BOUNDS", MAPPING, MAX_LENGTH, monkeypatch)


def test_cap_zero_read_as_the_default_four_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Accepted: searchMaxQueries 0 taken and read as the default four. Hunt L called it wrong and a row was
    # added; a false-failure review removed it: seed 000 says a deployment chooses a positive integer, not what
    # an invalid 0 does (search.api.count accepts the same reading of count 0).
    right = '"tools.search_max_queries": config.search_max_queries,'
    patch_reading(targets, "reference_settings", right, right.replace(",", " or 4,"), monkeypatch)
    assert failing_rows(validation, "QUERY_CAP", QUERY_CAP, monkeypatch) == set()


def test_urls_percent_decoded_in_the_text_fail_exactly_their_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: each source line's URL percent-decoded (a%2Fb?q=c%26d shown as a/b?q=c&d) where the check's rule
    # has every source URL of the value appear in the text whole
    monkeypatch.setattr(_render, "unquote", unquote, raising=False)
    patch_reading(_render, "_source_line", "_cut(source.url, MAX_URL_CHARS)",
                  "_cut(unquote(source.url), MAX_URL_CHARS)", monkeypatch)
    assert failing_rows(text, "AGREES", AGREES, monkeypatch) == {ESCAPED}


@pytest.mark.parametrize("spell", [
    lambda url: re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), url),  # hex escapes in lower case
    lambda url: url.replace("r%C3%A9sum%C3%A9", "résumé"),  # non-ASCII shown as an IRI shows it
], ids=["lower-case-hex", "iri"])
def test_equivalent_spellings_of_an_escaped_url_pass(spell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Accepted (a false-failure review): the row once demanded the value's bytes; an equivalent spelling of the
    # URL is the URL. Reserved characters and the space stay escaped, so the decoded reading above still fails.
    monkeypatch.setattr(_render, "_spell", spell, raising=False)
    patch_reading(_render, "_source_line", "_cut(source.url, MAX_URL_CHARS)",
                  "_cut(_spell(source.url), MAX_URL_CHARS)", monkeypatch)
    assert failing_rows(text, "AGREES", AGREES, monkeypatch) == set()


def test_refusing_unknown_arguments_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    # seed-open: an argument the schema does not declare may be refused as WEB_INVALID_ARGUMENTS before any request
    refused: list[str] = []
    right_queries, right_url = web_search.parse_queries, web_fetch._url_argument

    def strict(arguments: object, known: set[str]) -> None:
        if isinstance(arguments, dict) and set(arguments) - known:
            refused.extend(sorted(set(arguments) - known))
            raise WebError(WebErrorCode.INVALID_ARGUMENTS, "unknown argument")

    def strict_queries(arguments: object, max_queries: int) -> list[str]:
        strict(arguments, {"queries"})
        return right_queries(arguments, max_queries)

    def strict_url(arguments: object) -> str:
        strict(arguments, {"url"})
        return right_url(arguments)

    monkeypatch.setattr(web_search, "parse_queries", strict_queries)
    monkeypatch.setattr(web_fetch, "_url_argument", strict_url)
    _bounds_only(monkeypatch)
    assert set(_passed((COUNT, API_WIRE, ORI, MESSAGES_WIRE, MAPPING)).values()) == {Outcome.PASSED}
    # each new row's call was refused, not skipped
    assert {"count", "max_results", "localization", "need_content", "site", "ori_question", "max_uses",
            "max_length"} <= set(refused)
