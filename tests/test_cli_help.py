"""The command line a newcomer meets first: `dsweb --help`, each command's --help, and a CLI that starts
instantly because `--version` and `--help` import nothing heavy (issue 9 item 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsweb_ref.cli import COMMANDS, main
from dsweb_ref.cli._commands import EXAMPLES

ROOT = Path(__file__).resolve().parent.parent

# What `dsweb --version` / `dsweb --help` must not load: third-party weight and every room above the seam.
HEAVY = (
    "asyncio", "starlette", "uvicorn", "httpx", "jsonschema", "referencing", "vcr", "bs4", "yaml", "markdownify",
    "dsweb_ref.certification", "dsweb_ref.emulator", "dsweb_ref.replay", "dsweb_ref.providers", "dsweb_ref.tools",
    "dsweb_ref.runtime", "dsweb_ref.settings", "dsweb_ref.netguard", "dsweb_ref.schemas", "dsweb_ref._service",
)


def _loaded_after(argv: list[str]) -> list[str]:
    code = (
        "import sys, json\n"
        "from dsweb_ref.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    modules: list[str] = json.loads(out.stderr.strip().splitlines()[-1])
    return modules


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []])
def test_version_and_help_import_nothing_heavy(argv: list[str]) -> None:
    modules = _loaded_after(argv)
    assert "argparse" in modules  # the probe really ran the CLI
    heavy = [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == []


def test_a_command_loads_only_its_own_module() -> None:
    modules = _loaded_after(["schemas", "--json"])
    assert "dsweb_ref.cli.schemas" in modules and "jsonschema" in modules
    assert not [m for m in modules if m.startswith(("dsweb_ref.cli.certify", "dsweb_ref.certification", "uvicorn"))]


def test_top_help_lists_every_command_on_one_line_each() -> None:
    env = {**os.environ, "COLUMNS": "80"}
    out = subprocess.run(
        [sys.executable, "-m", "dsweb_ref", "--help"], capture_output=True, text=True, check=True, cwd=ROOT, env=env
    ).stdout
    lines = out.splitlines()
    for name, summary in COMMANDS.items():
        assert f"    {name:<8}  {summary}" in lines, name
    assert set(COMMANDS) == {p.stem for p in (ROOT / "dsweb_ref" / "cli").glob("[a-z]*.py")}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_help_has_examples(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([name, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert COMMANDS[name] in out
    examples = out.split("examples:\n", 1)[1].splitlines()
    assert examples and all(line.strip().startswith(("dsweb " + name, "DEEPSEEK_API_KEY=")) for line in examples)
    assert len(examples) == len(EXAMPLES[name])


def test_no_command_prints_the_overview_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "certify" in capsys.readouterr().err


def test_an_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["bogus"])
    assert info.value.code == 2
    assert "invalid choice: 'bogus'" in capsys.readouterr().err


def test_license_file_matches_pyproject() -> None:
    import tomllib

    licence = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"]
    assert licence == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "Permission is hereby granted, free of charge" in text
