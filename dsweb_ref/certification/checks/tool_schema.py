"""What the model is shown of ``web_search`` (seed 000): its input schema, its description and the
system-prompt guidance, read through the adapter protocol's ``tool_schema`` method.

The schema is judged by what it lets a model send, never by its spelling: each row validates one
arguments object against it (with the validator its ``$schema`` names, 2020-12 when it names none, and
no reference resolved outside the schema), so ``"type": "array"`` and an ``anyOf`` that means the same
thing are equally right.
"""

from __future__ import annotations

import re
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.validators import Draft202012Validator, validator_for
from referencing import Registry

from ..cases import CARRY, Case
from ._base import CALL_TIMEOUT, CheckContext, CheckFailed, check, expect_success, require

WS = "web_search"
TOOL_SCHEMA = "tool-schema"
SIX = ["coffee", "markdown", "python", "rate limit", "tea", "http"]
_SHOWN = 100_000  # characters of a description searched for the cap (an adapter's answer is untrusted)
# How a number up to nine may be written in prose besides digits: its English or Chinese word.
_WORDS = dict(enumerate(zip("one two three four five six seven eight nine".split(), "一二三四五六七八九",
                            strict=True), start=1))

SCHEMA = (
    Case("a JSON Schema", "a schema its own draft's meta-schema refuses (e.g. a type spelt \"list\")",
         {"cap": 6, "kind": "schema"}),
    Case("one query", "minItems above one (a one-item array is a single search)",
         {"cap": 6, "kind": "accepts", "arguments": {"queries": ["coffee"]}}),
    Case("a full array at the cap", "maxItems left at the default four when the deployment allows six",
         {"cap": 6, "kind": "accepts", "arguments": {"queries": SIX}}),
    Case("exact duplicates", "uniqueItems: duplicates are dropped by the tool, not refused by the schema",
         {"cap": 6, "kind": "accepts", "arguments": {"queries": ["coffee", "coffee"]}}),
    Case("no queries", "queries optional", {"cap": 6, "kind": "refuses", "arguments": {}}),
    Case("the legacy query alone", "query or queries (the rejected alternative: two optional fields)",
         {"cap": 6, "kind": "refuses", "arguments": {"query": "coffee"}}, CARRY),
    Case("queries a string", "queries typed string, or string or array", {"cap": 6, "kind": "refuses",
                                                                          "arguments": {"queries": "coffee"}}),
    Case("queries null", "queries nullable", {"cap": 6, "kind": "refuses", "arguments": {"queries": None}}),
    Case("a number item", "items of any type", {"cap": 6, "kind": "refuses", "arguments": {"queries": [7]}}),
    Case("no query property", "an optional legacy query declared beside the required queries",
         {"cap": 6, "kind": "no_legacy"}, CARRY),
    Case("maxItems at a lower cap", "maxItems left at the default four (or one above the cap) when the "
         "deployment allows two", {"cap": 2, "kind": "max_items"}),
    Case("the description names the cap", "a description written once for the default four",
         {"cap": 6, "kind": "description"}),
    Case("the guidance names the cap", "system-prompt guidance written once for the default four",
         {"cap": 6, "kind": "guidance"}),
    Case("the name", "the tool shown to the model under another name", {"cap": 6, "kind": "name"}),
)


@check(
    "search.validation.schema",
    "The model is shown one required queries string array, and searchMaxQueries in the tool's descriptions",
    seed="000",
    requires=(WS, TOOL_SCHEMA),
    profiles=("seed-000-web-search",),
    rule="Seed 000: 'web_search accepts one required queries string array. A one-item array performs a single "
    "search. searchMaxQueries bounds the array ... and appears in the system-prompt guidance and tool "
    "descriptions'; accepting both query and queries was rejected ('two optional fields make the model choose "
    "between equivalent representations'), and exact duplicates are removed, not refused. So the input schema "
    "(a valid JSON Schema) accepts one query, the cap's worth and duplicates, refuses arguments without a "
    "queries array of strings, declares no query property and, if it has a maxItems, that is the cap; the "
    "cap (digits or a word) appears in the tool's description or the schema's, and in the guidance when the "
    "implementation adds any. minItems, minLength, extra properties and the wording are open.",
    cases=SCHEMA,
)
async def schema(ctx: CheckContext) -> None:
    shown: dict[int, dict[str, Any]] = {}
    for case in SCHEMA:
        cap = case["cap"]
        if cap not in shown:
            shown[cap] = await _shown(ctx, cap)
        _judge(case, shown[cap])


async def _shown(ctx: CheckContext, cap: int) -> dict[str, Any]:
    """The target's ``tool_schema`` answer under ``search_max_queries = cap``, its shape checked."""
    await ctx.configure(search_max_queries=cap)
    call = ctx.target.start_call("tool_schema", {"tool": WS})
    value = expect_success(await call.outcome(CALL_TIMEOUT), f"tool_schema (searchMaxQueries={cap})")
    what = f"tool_schema (searchMaxQueries={cap})"
    require(isinstance(value.get("input_schema"), dict), f"{what}: input_schema is not an object")
    require(isinstance(value.get("description"), str), f"{what}: description is not a string")
    require(value.get("guidance") is None or isinstance(value["guidance"], str),
            f"{what}: guidance is neither a string nor null")
    return value


def _judge(case: Case, shown: dict[str, Any]) -> None:
    schema, kind, cap = shown["input_schema"], case["kind"], case["cap"]
    where = f"{case.name} (searchMaxQueries={cap})"
    if kind == "schema":
        try:
            _validator(schema).check_schema(schema)
        except SchemaError as error:
            raise CheckFailed(f"{where}: the input schema is not valid JSON Schema: {error.message[:200]}") from error
        except Exception as error:  # a $schema that is not a string, ...
            raise CheckFailed(f"{where}: the input schema cannot be read: {_brief(error)}") from error
    elif kind in ("accepts", "refuses"):
        valid = _valid(schema, case["arguments"], where)
        want = kind == "accepts"
        require(valid == want, f"{where}: the input schema {'refuses' if want else 'accepts'} "
                f"{case['arguments']!r}", arguments=case["arguments"])
    elif kind == "no_legacy":
        require(not _declares(schema, "query"), f"{where}: the input schema declares a query property")
    elif kind == "max_items":
        declared = _values(schema, "maxItems")
        require(all(n == cap for n in declared), f"{where}: maxItems {declared}, the cap is {cap}")
    elif kind == "description":
        texts = [shown["description"], *(t for t in _values(schema, "description") if isinstance(t, str))]
        require(any(_names(t, cap) for t in texts), f"{where}: neither the tool's description nor the schema's "
                f"names the cap {cap}", description=shown["description"][:500])
    elif kind == "guidance":
        guidance = shown.get("guidance")
        require(guidance is None or _names(guidance, cap), f"{where}: the guidance does not name the cap {cap}",
                guidance=(guidance or "")[:500])
    elif kind == "name":
        require(shown.get("name") == WS, f"{where}: the tool is named {shown.get('name')!r}, expected {WS!r}")


def _validator(schema: dict[str, Any]) -> Any:
    """The validator class of the draft the schema names (2020-12 when it names none)."""
    return validator_for(schema, default=Draft202012Validator)


def _valid(schema: dict[str, Any], arguments: Any, where: str) -> bool:
    try:
        # An empty registry: a $ref outside the schema is unresolvable, never fetched.
        return bool(_validator(schema)(schema, registry=Registry()).is_valid(arguments))
    except Exception as error:  # an unresolvable $ref, a recursion, a type the validator cannot apply
        raise CheckFailed(f"{where}: the input schema cannot be applied: {_brief(error)}") from error


def _brief(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error)[:200]}"


def _values(node: Any, key: str) -> list[Any]:
    """Every value of ``key`` anywhere in a JSON document (depth-first, iterative)."""
    found, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if key in item:
                found.append(item[key])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _declares(schema: dict[str, Any], name: str) -> bool:
    """``name`` is a property (or a required name) anywhere in the schema."""
    declared = [p for p in _values(schema, "properties") if isinstance(p, dict) and name in p]
    required = [r for r in _values(schema, "required") if isinstance(r, list) and name in r]
    return bool(declared or required)


def _names(text: str, number: int) -> bool:
    """``text`` states ``number``: as digits not part of a longer number, or as its word."""
    text = text[:_SHOWN]
    if re.search(rf"(?<![0-9]){number}(?![0-9])", text):
        return True
    english, chinese = _WORDS.get(number, ("", ""))
    return bool(english and (re.search(rf"\b{english}\b", text, re.IGNORECASE) or chinese in text))
