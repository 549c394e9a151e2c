"""The shipped JSON Schemas: where they live, how to validate against them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from referencing import Registry, Resource

from ._exceptions import WebError, WebErrorCode

__all__ = ["SchemaCheck", "check_all", "schema_dir", "schemas", "validate", "validator"]


def schema_dir() -> Path:
    """``dsweb_ref/_schemas`` in a wheel, the checkout's ``schemas/`` otherwise."""
    packaged = Path(__file__).parent / "_schemas"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "schemas"


@cache
def schemas() -> dict[str, dict[str, Any]]:
    """Every shipped schema by file stem (e.g. ``web_search.output``)."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(schema_dir().glob("*.schema.json")):
        out[path.name.removesuffix(".schema.json")] = json.loads(path.read_text(encoding="utf-8"))
    return out


@cache
def _registry() -> Registry[Any]:
    resources = [(s["$id"], Resource.from_contents(s)) for s in schemas().values() if "$id" in s]
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Draft202012Validator:
    try:
        schema = schemas()[name]
    except KeyError:
        raise WebError(WebErrorCode.CONFIG_INVALID, f"no shipped schema named {name!r}") from None
    return Draft202012Validator(schema, registry=_registry())


def validate(name: str, value: Any) -> list[str]:
    """Violations of schema ``name`` by ``value``, as readable lines (empty = valid)."""
    errors = sorted(validator(name).iter_errors(value), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]


@dataclass(frozen=True, slots=True)
class SchemaCheck:
    name: str
    schema_id: str | None
    problems: tuple[str, ...]


def check_all() -> list[SchemaCheck]:
    """Check every shipped schema against the 2020-12 meta-schema and resolve its refs."""
    results = []
    for name, schema in schemas().items():
        problems: list[str] = []
        if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
            problems.append("$schema is not JSON Schema 2020-12")
        if "$id" not in schema:
            problems.append("missing $id")
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            problems.append(f"not a valid schema: {exc.message}")
        else:
            try:  # resolving every $ref proves the documents link up
                list(validator(name).iter_errors({}))
            except Exception as exc:  # unresolvable refs raise here
                problems.append(f"cannot be applied: {type(exc).__name__}: {exc}")
        results.append(SchemaCheck(name, schema.get("$id"), tuple(problems)))
    return results
