"""What the model is shown of ``web_search`` (seed 000): its input schema, its description and the
system-prompt guidance, read through the adapter protocol's ``tool_schema`` method.

The schema is judged by what it lets a model send, never by its spelling: each row validates one
arguments object against it (with the validator its ``$schema`` names, 2020-12 when it names none, and
no reference resolved outside the schema), so ``"type": "array"`` and an ``anyOf`` that means the same
thing are equally right.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from typing import Any

from ..adapter_protocol import CAP_TOOL_SCHEMA
from ..cases import CARRY, Case
from ._base import CALL_TIMEOUT, CheckContext, CheckFailed, check, expect_success, require

WS = "web_search"
# Real queries of every length seed 001 allows, down to three letters (a minLength above that refuses them).
SIX = ["coffee", "markdown", "python", "rate limit", "tea", "http"]
LONGEST = 12  # array lengths the bound row tries past the cap: past the default four and one above the cap
_SHOWN = 100_000  # characters of a description searched for the cap (an adapter's answer is untrusted)
# How a number up to nine may be written in prose besides digits: its English or Chinese word.
_WORDS = dict(enumerate(zip("one two three four five six seven eight nine".split(), "一二三四五六七八九",
                            strict=True), start=1))


def _refuses(name: str, catches: str, arguments: Any, family: str = "") -> Case:
    return Case(name, catches, {"cap": 6, "kind": "refuses", "arguments": arguments}, family)


SCHEMA = (
    Case("a JSON Schema", "a schema its own draft's meta-schema refuses (e.g. a type spelt \"list\")",
         {"cap": 6, "kind": "schema"}),
    Case("one query", "minItems above one (a one-item array is a single search)",
         {"cap": 6, "kind": "accepts", "arguments": {"queries": ["coffee"]}}),
    Case("a full array at the cap", "maxItems left at the default four when the deployment allows six, or a "
         "minLength that refuses a three-letter query", {"cap": 6, "kind": "accepts", "arguments": {"queries": SIX}}),
    Case("exact duplicates", "uniqueItems: duplicates are dropped by the tool, not refused by the schema",
         {"cap": 6, "kind": "accepts", "arguments": {"queries": ["coffee", "coffee"]}}),
    _refuses("no queries", "queries optional", {}),
    _refuses("the legacy query alone", "query or queries (the rejected alternative: two optional fields)",
             {"query": "coffee"}, CARRY),
    _refuses("queries a string", "queries typed string, or string or array", {"queries": "coffee"}),
    _refuses("queries an object", "queries typed array or object", {"queries": {"0": "coffee"}}),
    _refuses("queries null", "queries nullable", {"queries": None}),
    _refuses("a number item", "items of any type, or only the first item typed (a draft-07 tuple, prefixItems, "
             "contains)", {"queries": ["coffee", 7]}),
    _refuses("a null item", "nullable items", {"queries": ["coffee", None]}),
    _refuses("an object item", "structured queries beside strings", {"queries": ["coffee", {"text": "tea"}]}),
    Case("no query property", "an optional legacy query declared beside the required queries (under properties "
         "or patternProperties)", {"cap": 6, "kind": "no_legacy"}, CARRY),
    Case("the bound at a lower cap", "maxItems left at the default four, or one above the cap, when the "
         "deployment allows two (however the bound is spelt)", {"cap": 2, "kind": "bound"}),
    Case("the description names the cap", "a description written once for the default four",
         {"cap": 6, "kind": "description"}),
    Case("the description names another cap", "a description that names six only by accident (a '2-6 words' "
         "hint, IPv6)", {"cap": 3, "kind": "description"}),
    Case("the guidance names the cap", "system-prompt guidance written once for the default four",
         {"cap": 6, "kind": "guidance"}),
    Case("the guidance names another cap", "guidance that names six only by accident", {"cap": 3, "kind": "guidance"}),
    Case("the name", "the tool shown to the model under another name", {"cap": 6, "kind": "name"}),
)


@check(
    "search.validation.schema",
    "The model is shown one required queries string array, and searchMaxQueries in the tool's descriptions",
    seed="000",
    requires=(WS, CAP_TOOL_SCHEMA),
    profiles=("seed-000-web-search",),
    rule="Seed 000: 'web_search accepts one required queries string array. A one-item array performs a single "
    "search. searchMaxQueries bounds the array ... and appears in the system-prompt guidance and tool "
    "descriptions'; accepting both query and queries was rejected ('two optional fields make the model choose "
    "between equivalent representations'), and exact duplicates are removed, not refused. So the input schema "
    "(a valid JSON Schema) accepts one query, the cap's worth (seed 001: a query is 1 to 128 characters) and "
    "duplicates, refuses arguments without a queries array of strings, declares no query property, and "
    "bounds the array at the cap or not at all; the cap (digits or a word) appears in the tool's description "
    "or the schema's, and in the guidance when the implementation adds any, at each cap configured. Whether "
    "the schema states the bound, minItems, a minLength of one, extra properties and the wording are open.",
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
    what = f"tool_schema (searchMaxQueries={cap})"
    value = expect_success(await call.outcome(CALL_TIMEOUT), what)
    require(isinstance(value.get("input_schema"), dict), f"{what}: input_schema is not an object")
    require(isinstance(value.get("description"), str), f"{what}: description is not a string")
    require(value.get("guidance") is None or isinstance(value["guidance"], str),
            f"{what}: guidance is neither a string nor null")
    return value


def _judge(case: Case, shown: dict[str, Any]) -> None:
    schema, kind, cap = shown["input_schema"], case["kind"], case["cap"]
    where = f"{case.name} (searchMaxQueries={cap})"
    if kind == "schema":
        from jsonschema.exceptions import SchemaError  # here: the catalogue loads on light paths (--list, parsers)

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
    elif kind == "bound":
        fits = {n: _valid(schema, {"queries": _distinct(n)}, where) for n in range(1, LONGEST + 1)}
        refused = [n for n in range(1, cap + 1) if not fits[n]]
        beyond = [n for n in range(cap + 1, LONGEST + 1) if fits[n]]
        if refused:
            raise CheckFailed(f"{where}: the input schema refuses an array of {refused[0]} queries, the cap is {cap}")
        require(beyond in ([], list(range(cap + 1, LONGEST + 1))),
                f"{where}: the input schema accepts up to {max(beyond or [0])} queries, the cap is {cap}: a bound "
                "other than the cap", accepted_beyond_cap=beyond)
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
    from jsonschema.validators import Draft202012Validator, validator_for

    return validator_for(schema, default=Draft202012Validator)


def _valid(schema: dict[str, Any], arguments: Any, where: str) -> bool:
    from referencing import Registry

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
    """``name`` is offered as a property anywhere in the schema: under ``properties``, or a
    ``patternProperties`` pattern it matches, with a subschema other than ``false`` (which forbids it)."""
    for table in _values(schema, "properties"):
        if isinstance(table, dict) and table.get(name, False) is not False:
            return True
    for table in _values(schema, "patternProperties"):
        if isinstance(table, dict):
            for pattern, subschema in table.items():
                with contextlib.suppress(re.error, TypeError):
                    if subschema is not False and re.search(pattern, name):
                        return True
    return False


def _distinct(count: int) -> list[str]:
    return [f"{SIX[i % len(SIX)]} {i}" for i in range(count)]


def _names(text: str, number: int) -> bool:
    """``text`` states ``number``: as digits not part of a longer number, or as its word."""
    text = unicodedata.normalize("NFKC", text[:_SHOWN])  # fullwidth digits are digits
    if re.search(rf"(?<![0-9]){number}(?![0-9])", text):
        return True
    english, chinese = _WORDS.get(number, ("", ""))
    return bool(english and (re.search(rf"\b{english}\b", text, re.IGNORECASE) or chinese in text))
