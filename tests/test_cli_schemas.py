"""`dsweb --version` and `dsweb schemas`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsweb_ref import __version__, schemas
from dsweb_ref.cli import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"dsweb {__version__}"


def test_schemas_lists_and_checks_every_shipped_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schemas", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    names = {r["name"] for r in report}
    assert {"seam", "web_search.input", "web_search.output", "web_fetch.input", "web_fetch.output"} <= names
    assert all(r["problems"] == [] and r["id"].startswith("urn:dsweb:schema:") for r in report)


def test_schemas_fails_on_an_invalid_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.schema.json").write_text(
        json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:x", "type": 12})
    )
    (tmp_path / "noid.schema.json").write_text(json.dumps({"type": "object"}))
    monkeypatch.setattr(schemas, "schema_dir", lambda: tmp_path)
    schemas.schemas.cache_clear()
    schemas.validator.cache_clear()
    schemas._registry.cache_clear()
    try:
        assert main(["schemas"]) == 1
        out = capsys.readouterr().out
        assert "FAIL broken" in out and "not a valid schema" in out
        assert "missing $id" in out and "not JSON Schema 2020-12" in out
    finally:
        schemas.schemas.cache_clear()
        schemas.validator.cache_clear()
        schemas._registry.cache_clear()


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: dsweb" in capsys.readouterr().err


def test_the_settings_page_table_is_generated_from_the_settings_keys() -> None:
    from dsweb_ref.settings import describe_settings_keys

    page = (Path(__file__).resolve().parent.parent / "dsweb_ref" / "docs" / "settings.md").read_text(encoding="utf-8")
    table = page.split("<!-- settings-table:", 1)[1].split("-->", 1)[1].split("<!-- /settings-table -->", 1)[0]
    rows = [line for line in table.strip().splitlines()[2:]]
    expected = [
        f"| `{r['key']}` | `{r['env']}` | `{r['default'] if r['default'] != '' else '(blank)'}` | {r['meaning']} |"
        for r in describe_settings_keys()
    ]
    assert rows == expected


def test_readme_quickstart_holds_exactly_the_two_lines() -> None:
    import shlex

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    after = readme.split("## Quickstart", 1)[1]
    block = after.split("```", 2)[1]
    lines = [line for line in block.splitlines() if line.strip()]
    assert len(lines) == 2
    assert lines[1] == "pip install '.[test]' && pytest -n auto"
    install, job = lines[0].split(" && ", 1)
    assert install == "pip install ."
    argv = shlex.split(job)
    assert argv[0] == "dsweb"
    assert main(argv[1:]) == 0  # the main job itself works offline
