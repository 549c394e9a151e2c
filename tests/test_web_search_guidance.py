"""Search-syntax guidance (seed 001's remaining list: "expose search syntax in provider-appropriate tool
guidance"). With the Search API selected, the tool description and the system-prompt guidance name the
operators the API documents (site, language, date, exclusion, exact phrase); with Messages search they
do not. Both variants, and the JSON tool definition the model receives, are pinned by snapshots."""

from __future__ import annotations

import json

import pytest
from syrupy.assertion import SnapshotAssertion

from dsweb_ref.runtime import build_runtime
from dsweb_ref.settings import Settings
from dsweb_ref.tools.web_search import SEARCH_OPERATORS_HINT, WebSearchTool

OPERATORS = ("site:", "lang:", "after:", "before:", "-word", "-site:", '"exact phrase"')


def _tool(settings: Settings) -> WebSearchTool:
    return build_runtime(lambda: settings).search_tool()


def _api() -> Settings:
    return Settings().with_new_search_api(True)


def _definition(tool: WebSearchTool) -> str:
    """The JSON tool definition an agent sends (name, description, input schema) plus the prompt guidance."""
    definition = {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
    return json.dumps(definition, indent=2, ensure_ascii=False) + "\n\n" + tool.system_prompt + "\n"


def test_search_api_guidance_names_the_documented_operators() -> None:
    tool = _tool(_api())
    assert tool.settings.search_operators
    for text in (tool.description, tool.system_prompt):
        assert SEARCH_OPERATORS_HINT in text
        assert all(op in text for op in OPERATORS), text


def test_messages_guidance_names_no_operators() -> None:
    tool = _tool(Settings())
    assert not tool.settings.search_operators
    for text in (tool.description, tool.system_prompt):
        assert not any(op in text for op in ("site:", "lang:", "after:", "exact phrase")), text


def test_no_search_syntax_is_invented() -> None:
    """Only the operators the API documents: no OR/AND, filetype:, intitle:, inurl:, wildcards."""
    for invented in ("OR", "AND", "filetype:", "intitle:", "inurl:", "*", "related:"):
        assert invented not in SEARCH_OPERATORS_HINT


def test_the_guidance_follows_the_selection_at_build_time() -> None:
    settings = Settings().updated({"web.search_provider": ""})  # blank: the single usable provider, if any
    assert not _tool(settings).settings.search_operators  # two usable providers: ambiguous, so no claim
    assert _tool(_api().updated({"web.search_provider": "deepseek-official"})).settings.search_operators is False


def test_the_input_schema_is_the_same_for_both_providers() -> None:
    assert _tool(_api()).input_schema == _tool(Settings()).input_schema


@pytest.mark.parametrize("provider", ["search-api", "messages"])
def test_tool_definition_and_guidance_snapshots(provider: str, snapshot_text: SnapshotAssertion) -> None:
    tool = _tool(_api() if provider == "search-api" else Settings())
    assert _definition(tool) == snapshot_text
