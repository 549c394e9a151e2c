"""Each shipped schema loads on its own in a file-based validator (check-jsonschema, draft 2020-12), and
the JSON the CLI prints follows them: values, and errors with code + message (schemas/web_error)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dsweb_ref import schemas
from dsweb_ref.schemas import bundled, schema_dir

ROOT = Path(__file__).resolve().parent.parent
SEARCH_URL = "https://docs.example.test/api/search"  # a page of the emulator corpus


def _dsweb_json(*argv: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "dsweb_ref", *argv, "--json"], capture_output=True, text=True, cwd=ROOT)
    printed: dict[str, Any] = json.loads(out.stdout)
    assert out.returncode == (1 if printed["is_error"] else 0), out.stderr
    return printed


def _check_jsonschema(schema: str, instance: Any, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema with only the schema file, run from an empty directory (nothing else to find)."""
    path = tmp_path / f"instance-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(instance), encoding="utf-8")
    schema_file = schema_dir() / f"{schema}.schema.json"
    argv = [sys.executable, "-m", "check_jsonschema", "--schemafile", str(schema_file), str(path)]
    return subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)


@pytest.fixture(scope="module")
def outputs() -> dict[str, Any]:
    """Real CLI output, one run each: both search protocols, a fetch, and two kinds of error."""
    return {
        "search": _dsweb_json("search", "--emulator", "search API", "rate limits"),
        "search-api": _dsweb_json("search", "--emulator", "--new-api", "--prompt", "pricing?", "search API"),
        "fetch": _dsweb_json("fetch", "--emulator", "--new-api", SEARCH_URL),
        "fetch-error": _dsweb_json("fetch", "http://127.0.0.1/"),
        "search-error": _dsweb_json("search", "--emulator", " "),
    }


def test_every_shipped_schema_embeds_the_current_seam() -> None:
    assert "seam" in schemas.schemas() and "web_error" in schemas.schemas()
    for name, schema in schemas.schemas().items():
        assert schema == bundled(name), f"{name}: run python -m dsweb_ref.schemas"


def test_every_shipped_schema_passes_the_metaschema_check() -> None:
    files = sorted(str(p) for p in schema_dir().glob("*.schema.json"))
    out = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--check-metaschema", *files], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize(
    ("schema", "output", "part"),
    [
        ("web_search.output", "search", "value"),
        ("web_search.output", "search-api", "value"),
        ("web_fetch.output", "fetch", "value"),
        ("web_error", "fetch-error", "error"),
        ("web_error", "search-error", "error"),
        ("seam", "search", "value"),
    ],
)
def test_real_cli_output_follows_each_schema_file_on_its_own(
    outputs: dict[str, Any], schema: str, output: str, part: str, tmp_path: Path
) -> None:
    instance = outputs[output][part]
    assert instance, outputs[output]
    out = _check_jsonschema(schema, instance, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ("web_search.input", {"queries": ["search API", "rate limits"]}),
        ("web_fetch.input", {"url": SEARCH_URL}),
    ],
)
def test_the_arguments_the_cli_passes_follow_the_input_schemas(
    schema: str, instance: dict[str, Any], tmp_path: Path
) -> None:
    assert _check_jsonschema(schema, instance, tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ("web_error", {"code": "WEB_BLOCKED_URL"}),  # the old --json error object, without message
        ("web_fetch.output", {"url": "https://x.test/", "status_code": 200, "truncated": False,
                              "body": {"kind": "markdown", "content": ""}}),
        ("web_search.output", {"sources": [{"title": "no url"}], "truncated": False}),
        ("web_search.input", {"queries": []}),
    ],
)
def test_each_schema_file_rejects_what_the_spec_rejects(schema: str, instance: dict[str, Any], tmp_path: Path) -> None:
    out = _check_jsonschema(schema, instance, tmp_path)
    assert out.returncode == 1 and "Schema validation errors" in out.stdout, out.stdout + out.stderr


def test_cli_errors_carry_code_and_message(outputs: dict[str, Any]) -> None:
    for name in ("fetch-error", "search-error"):
        printed = outputs[name]
        error = printed["error"]
        assert set(error) == {"code", "message"} and error["code"].startswith("WEB_")
        assert printed["text"] == f"Error: {error['message']}" and error["message"]
        assert schemas.validate("web_error", error) == []


def test_dsweb_schemas_flags_a_stale_embedded_seam(monkeypatch: pytest.MonkeyPatch) -> None:
    stale = json.loads(json.dumps(schemas.schemas()))
    stale["web_error"]["$defs"]["seam"]["$defs"]["webError"]["required"] = ["code"]
    monkeypatch.setattr(schemas, "schemas", lambda: stale)
    problems = {c.name: c.problems for c in schemas.check_all()}
    assert any("stale" in p for p in problems["web_error"]) and problems["seam"] == ()
