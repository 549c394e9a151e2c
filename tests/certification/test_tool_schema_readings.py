"""search.validation.schema: each wrong reading of seed 000's model-facing schema, made in the reference's
web_search tool, fails exactly the rows that name it; the readings the seed leaves open pass every row.

Most readings are judged row by row with the check's own judge over what the tool shows at each row's cap
(milliseconds, where a whole run per row takes a third of a second); whole runs through the suite confirm
that the two agree, and cover the open readings and a schema that cannot be applied."""

from __future__ import annotations

import asyncio
import copy
import socket
from collections.abc import Callable
from typing import Any

import pytest

from dsweb_ref import WebService
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import tool_schema
from dsweb_ref.certification.checks._base import CheckFailed
from dsweb_ref.tools.web_search import SearchToolSettings, WebSearchTool

from ._readings import failing_rows

CHECK = "search.validation.schema"
Schema = dict[str, Any]
RIGHT_SCHEMA = WebSearchTool.input_schema.fget
RIGHT_DESCRIPTION = WebSearchTool.description.fget
RIGHT_GUIDANCE = WebSearchTool.system_prompt.fget
assert RIGHT_SCHEMA is not None and RIGHT_DESCRIPTION is not None and RIGHT_GUIDANCE is not None


def _judged() -> set[str]:
    """The rows the check's judge fails, each over what the (patched) tool shows at the row's cap."""
    failing = set()
    for case in tool_schema.SCHEMA:
        tool = WebSearchTool(WebService(), SearchToolSettings(search_max_queries=case["cap"]))
        shown = asyncio.run(targets._described(tool, {"tool": "web_search"})).value  # the in-process answer
        assert shown is not None
        try:
            tool_schema._judge(case, shown)
        except CheckFailed:
            failing.add(case.name)
    return failing


def _schema(change: Callable[[Schema, int], None]) -> Callable[[WebSearchTool], Schema]:
    """The reference's input schema with ``change`` applied (given the schema and the configured cap)."""

    def shown(tool: WebSearchTool) -> Schema:
        schema = copy.deepcopy(RIGHT_SCHEMA(tool))
        change(schema, tool.settings.search_max_queries)
        return schema

    return shown


def _queries(schema: Schema) -> Schema:
    queries: Schema = schema["properties"]["queries"]
    return queries


def _legacy_either(schema: Schema, cap: int) -> None:
    schema["properties"]["query"] = {"type": "string"}
    schema.pop("required")
    schema["anyOf"] = [{"required": ["query"]}, {"required": ["queries"]}]


def _stale(text: str, tool: WebSearchTool) -> str:
    """``text`` as if written once for the default cap of four."""
    return text.replace(f"1-{tool.settings.search_max_queries}", "1-4")


def _tuple_items(schema: Schema, cap: int) -> None:
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    _queries(schema)["items"] = [{"type": "string"}]


def _bound_spelt_otherwise(schema: Schema, cap: int) -> None:
    queries = _queries(schema)
    queries.pop("maxItems")
    queries["prefixItems"], queries["items"] = [{"type": "string"}] * (cap + 1), False


UNTYPED = {"a type spelt list": {"a JSON Schema", "one query", "a full array at the cap", "exact duplicates",
                                 "queries a string", "queries null", "a number item", "a null item", "an object item",
                                 "queries an object", "the bound at a lower cap"}}
SCHEMA_READINGS: dict[str, tuple[Callable[[Schema, int], None], set[str]]] = {
    "a type spelt list": (lambda s, n: _queries(s).update(type="list"), UNTYPED["a type spelt list"]),
    "minItems two": (lambda s, n: _queries(s).update(minItems=2), {"one query", "the bound at a lower cap"}),
    "maxItems at the default four": (lambda s, n: _queries(s).update(maxItems=4),
                                     {"a full array at the cap", "the bound at a lower cap"}),
    "maxItems one above the cap": (lambda s, n: _queries(s).update(maxItems=n + 1), {"the bound at a lower cap"}),
    "the bound one above the cap, without maxItems": (_bound_spelt_otherwise, {"the bound at a lower cap"}),
    "a minLength of four": (lambda s, n: _queries(s)["items"].update(minLength=4), {"a full array at the cap"}),
    "uniqueItems": (lambda s, n: _queries(s).update(uniqueItems=True), {"exact duplicates"}),
    "queries optional": (lambda s, n: s.pop("required"), {"no queries", "the legacy query alone"}),
    "query or queries": (_legacy_either, {"the legacy query alone", "no query property"}),
    "an optional query beside queries": (lambda s, n: s["properties"].update(query={"type": "string"}),
                                         {"no query property"}),
    "a query offered by pattern": (lambda s, n: s.update(patternProperties={"^query$": {"type": "string"}}),
                                   {"no query property"}),
    "queries a string or an array": (lambda s, n: _queries(s).update(type=["string", "array"]),
                                     {"queries a string"}),
    "queries an array or an object": (lambda s, n: _queries(s).update(type=["array", "object"]),
                                      {"queries an object"}),
    "queries nullable": (lambda s, n: _queries(s).update(type=["array", "null"]), {"queries null"}),
    "items of any type": (lambda s, n: _queries(s).pop("items"), {"a number item", "a null item", "an object item"}),
    "a draft-07 tuple": (_tuple_items, {"a number item", "a null item", "an object item"}),
    "nullable items": (lambda s, n: _queries(s)["items"].update(type=["string", "null"]), {"a null item"}),
    "structured queries": (lambda s, n: _queries(s).update(items={"type": ["string", "object"]}),
                           {"an object item"}),
}


@pytest.mark.parametrize("reading", list(SCHEMA_READINGS))
def test_a_wrong_schema_fails_exactly_its_rows(reading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    change, rows = SCHEMA_READINGS[reading]
    monkeypatch.setattr(WebSearchTool, "input_schema", property(_schema(change)))
    assert _judged() == rows


@pytest.mark.parametrize("reading", ["query or queries", "maxItems at the default four"])
def test_a_whole_run_fails_the_rows_the_judge_fails(reading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    change, rows = SCHEMA_READINGS[reading]
    monkeypatch.setattr(WebSearchTool, "input_schema", property(_schema(change)))
    assert failing_rows(tool_schema, "SCHEMA", CHECK, monkeypatch) == rows


def test_a_description_written_for_four_fails_exactly_its_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the tool's description and the schema's both written once, for the default cap
    def four(schema: Schema, cap: int) -> None:
        _queries(schema)["description"] = _queries(schema)["description"].replace(f"1-{cap}", "1-4")
        _queries(schema).pop("maxItems")

    monkeypatch.setattr(WebSearchTool, "description", property(lambda tool: _stale(RIGHT_DESCRIPTION(tool), tool)))
    monkeypatch.setattr(WebSearchTool, "input_schema", property(_schema(four)))
    assert _judged() == {"the description names the cap",
                                                                       "the description names another cap"}


def test_a_description_that_names_six_by_accident_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    def four(schema: Schema, cap: int) -> None:
        _queries(schema)["description"] = "Required search queries; 1-4 items."
        _queries(schema).pop("maxItems")

    monkeypatch.setattr(WebSearchTool, "description",
                        property(lambda tool: _stale(RIGHT_DESCRIPTION(tool), tool) + " Keep each query to 2-6 words."))
    monkeypatch.setattr(WebSearchTool, "input_schema", property(_schema(four)))
    assert _judged() == {"the description names another cap"}


def test_guidance_written_for_four_fails_exactly_its_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WebSearchTool, "system_prompt",
                        property(lambda tool: _stale(RIGHT_GUIDANCE(tool), tool)))
    assert _judged() == {"the guidance names the cap",
                                                                       "the guidance names another cap"}


def test_guidance_that_names_six_by_accident_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WebSearchTool, "system_prompt",
                        property(lambda tool: _stale(RIGHT_GUIDANCE(tool), tool) + " Works for IPv6-only sites."))
    assert _judged() == {"the guidance names another cap"}


def test_another_name_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WebSearchTool, "name", "search")
    assert _judged() == {"the name"}


def _open(schema: Schema, cap: int) -> None:
    """What the seed leaves open, all at once: no maxItems or minItems, a closed object that forbids the
    legacy query outright, another draft, the array spelt through anyOf, and a description that words the cap
    in fullwidth digits or a word."""
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    schema["additionalProperties"] = False
    schema["properties"]["query"] = False
    schema["not"] = {"required": ["query"]}
    queries = _queries(schema)
    queries.pop("maxItems")
    queries.pop("minItems")
    queries.pop("type")
    queries["anyOf"] = [{"type": "array", "items": queries.pop("items")}]
    words = {2: "two", 6: "six", 3: "\uff13"}  # fullwidth 3
    queries["description"] = f"Up to {words[cap]} searches, run together."


def test_what_the_seed_leaves_open_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WebSearchTool, "input_schema", property(_schema(_open)))
    monkeypatch.setattr(WebSearchTool, "description", property(lambda tool: "Search the web."))
    monkeypatch.setattr(WebSearchTool, "system_prompt", property(lambda tool: None))
    assert failing_rows(tool_schema, "SCHEMA", CHECK, monkeypatch) == set()


@pytest.mark.parametrize("shape", ["a $ref outside the schema", "a $schema that is not a string"])
def test_a_schema_that_cannot_be_applied_fails_rather_than_errors(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # an adapter's answer is untrusted: a reference it names is never fetched, and nothing it holds raises
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        port = listener.getsockname()[1]
        schema = {"$ref": f"http://127.0.0.1:{port}/queries.json"} if shape.startswith("a $ref") else {"$schema": 5}
        monkeypatch.setattr(WebSearchTool, "input_schema", property(lambda tool: schema))
        failing = failing_rows(tool_schema, "SCHEMA", CHECK, monkeypatch)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody came for the reference
    assert {"one query", "no queries"} <= failing
