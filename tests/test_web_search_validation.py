"""web_search argument validation and deployment settings (seed 000)."""

from __future__ import annotations

import asyncio
import json

import pytest
from fakes import FakeSearch

from dsweb_ref import WebError, WebErrorCode, WebService
from dsweb_ref.schemas import schema_dir, validate
from dsweb_ref.tools import SearchToolSettings, WebSearchTool

CASES = [
    ("not-an-object", ["q"], 'invalid arguments: "arguments" must be an object'),
    ("missing-queries", {}, 'invalid arguments: missing required property "queries"'),
    ("queries-not-array", {"queries": "q"}, 'invalid arguments: "queries" must be an array'),
    ("non-string-item", {"queries": ["ok", 3]}, 'invalid arguments: "queries[1]" must be a string'),
    ("empty-array", {"queries": []}, "queries must contain at least one query"),
    ("too-many", {"queries": ["a", "b", "c", "d", "e"]}, "queries must contain at most 4 queries"),
    ("blank-item", {"queries": ["ok", " \t\n"]}, "each query must be a non-empty string"),
    ("empty-string", {"queries": [""]}, "each query must be a non-empty string"),
    # order: the count is checked before blanks, so an oversized array with blanks reports the count
    ("too-many-with-blanks", {"queries": ["", "", "", "", ""]}, "queries must contain at most 4 queries"),
    ("too-many-non-strings", {"queries": [1, 2, 3, 4, 5]}, "queries must contain at most 4 queries"),
    ("empty-before-types", {"queries": []}, "queries must contain at least one query"),
]


@pytest.mark.parametrize(("arguments", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_arguments_are_model_visible_coded_errors_with_no_provider_call(
    arguments: object, message: str
) -> None:
    fake = FakeSearch()
    web = WebService()
    web.register_search(fake)
    out = asyncio.run(WebSearchTool(web).execute(arguments))
    assert out.text == f"Error: {message}"
    assert out.error_code == WebErrorCode.INVALID_ARGUMENTS
    assert fake.calls == []


def test_singular_wording_for_a_cap_of_one() -> None:
    web = WebService()
    web.register_search(FakeSearch())
    out = asyncio.run(WebSearchTool(web, SearchToolSettings(search_max_queries=1)).execute({"queries": ["a", "b"]}))
    assert out.text == "Error: queries must contain at most 1 query"


def test_extra_arguments_are_ignored() -> None:
    fake = FakeSearch()
    web = WebService()
    web.register_search(fake)
    out = asyncio.run(WebSearchTool(web).execute({"queries": ["a"], "max_results": 99}))
    assert not out.is_error and fake.calls[0].max_results == 8


@pytest.mark.parametrize("field", ["search_max_queries", "search_max_results"])
@pytest.mark.parametrize("bad", [0, -3, 1.5, True, "4", None])
def test_deployment_settings_must_be_positive_integers(field: str, bad: object) -> None:
    with pytest.raises(WebError) as info:
        SearchToolSettings(**{field: bad})  # type: ignore[arg-type]
    assert info.value.code == WebErrorCode.CONFIG_INVALID
    assert ("searchMaxQueries" if field == "search_max_queries" else "searchMaxResults") in info.value.message


def test_defaults_are_four_queries_and_eight_results() -> None:
    s = SearchToolSettings()
    assert (s.search_max_queries, s.search_max_results) == (4, 8)


def test_both_limits_appear_in_the_description_and_the_prompt_guidance() -> None:
    tool = WebSearchTool(WebService(), SearchToolSettings(search_max_queries=3, search_max_results=11))
    for text in (tool.description, tool.system_prompt):
        assert "1-3" in text and "11" in text
    assert tool.input_schema["properties"]["queries"]["maxItems"] == 3


def test_prompt_guidance_mentions_web_fetch_only_when_fetch_is_enabled() -> None:
    on = WebSearchTool(WebService(), SearchToolSettings(fetch_enabled=True)).system_prompt
    off = WebSearchTool(WebService(), SearchToolSettings(fetch_enabled=False)).system_prompt
    assert "web_fetch" in on and "web_fetch" not in off


def test_default_input_schema_matches_the_shipped_schema() -> None:
    shipped = json.loads((schema_dir() / "web_search.input.schema.json").read_text())
    for key in ("$schema", "$id", "title", "description"):
        shipped.pop(key)
    assert WebSearchTool(WebService()).input_schema == shipped


@pytest.mark.parametrize(
    ("arguments", "valid"),
    [
        ({"queries": ["a"]}, True),
        ({"queries": []}, False),
        ({"queries": ["a"] * 5}, False),
        ({}, False),
        ({"queries": [1]}, False),
    ],
)
def test_shipped_input_schema_agrees_with_the_tool(arguments: object, valid: bool) -> None:
    assert (validate("web_search.input", arguments) == []) is valid
