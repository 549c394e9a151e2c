"""The shipped JSON Schemas: where they live, how to validate against them.

``seam.schema.json`` defines the shared shapes (``$defs``). Every schema that uses them carries a copy
of the whole seam document under ``$defs/seam`` (an embedded resource keeping its ``$id``), so a
file-based validator given one file (``check-jsonschema --schemafile FILE``, ajv with draft 2020-12)
resolves ``urn:dsweb:schema:seam#/$defs/...`` without this package. :func:`bundled` computes that
copy; ``python -m dsweb_ref.schemas`` rewrites the files after a seam change, and a test keeps them equal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._exceptions import WebError, WebErrorCode

if TYPE_CHECKING:  # jsonschema loads on first validation: web_fetch reads schemas() but validates nothing
    from jsonschema import Draft202012Validator
    from referencing import Registry

__all__ = ["SEAM_ID", "SchemaCheck", "bundled", "check_all", "schema_dir", "schemas", "validate", "validator"]

SEAM_ID = "urn:dsweb:schema:seam"


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


def _uses_seam(node: Any) -> bool:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(SEAM_ID + "#"):
            return True
        return any(_uses_seam(v) for k, v in node.items() if not (k == "$defs" and isinstance(v, dict)))
    return isinstance(node, list) and any(_uses_seam(v) for v in node)


def bundled(name: str) -> dict[str, Any]:
    """Schema ``name`` as it should ship: with the current seam embedded under ``$defs/seam`` when it
    refers to the seam, unchanged otherwise."""
    schema = dict(schemas()[name])
    defs = {k: v for k, v in schema.get("$defs", {}).items() if k != "seam"}
    if name != "seam" and _uses_seam(schema):
        defs["seam"] = schemas()["seam"]
    schema.pop("$defs", None)
    if defs:
        schema["$defs"] = defs
    return schema


def _dump(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


@cache
def _registry() -> Registry[Any]:
    from referencing import Registry, Resource

    resources = [(s["$id"], Resource.from_contents(s)) for s in schemas().values() if "$id" in s]
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

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
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

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
            try:  # resolving every $ref with no registry proves the file stands on its own
                list(Draft202012Validator(schema).iter_errors({}))
            except Exception as exc:  # unresolvable refs raise here
                problems.append(f"does not resolve on its own: {type(exc).__name__}: {exc}")
            if schema != bundled(name):
                problems.append("its embedded copy of the seam is stale (run: python -m dsweb_ref.schemas)")
        results.append(SchemaCheck(name, schema.get("$id"), tuple(problems)))
    return results


def _write_bundles() -> None:
    """Rewrite every shipped schema with the current seam embedded (after editing seam.schema.json)."""
    for name, schema in schemas().items():
        if schema != bundled(name):  # leave files that are already right (and their layout) alone
            (schema_dir() / f"{name}.schema.json").write_text(_dump(bundled(name)), encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    _write_bundles()
