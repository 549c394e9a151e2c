"""The spec, readable from the package: `dsweb certify --explain ID`, `--list --markdown`, the docs'
generated catalogue page, and no file that points outside the repository."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from dsweb_ref.certification import catalogue
from dsweb_ref.certification.cases import Case
from dsweb_ref.certification.checks import all_checks
from dsweb_ref.certification.endpoint import ENDPOINT_CHECKS
from dsweb_ref.cli import main

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import update_docs  # noqa: E402  (scripts/ is not a package)

ALL_IDS = [s.check.id for s in all_checks()] + [c.id for c in ENDPOINT_CHECKS]
ROWS = (
    Case("astral", "a cut counted in UTF-16 units instead of code points", {"prompt": "😀" * 3, "cut": 128}),
    Case("pipe | cell", "a table cell that breaks on '|'", {"text": "a|b"}),
)


@pytest.fixture
def with_cases_and_profiles(monkeypatch: pytest.MonkeyPatch) -> str:
    """The first check, given a case table and profiles (as a spec that carries them would be)."""
    specs = all_checks()
    first = specs[0]
    fake = SimpleNamespace(**{f: getattr(first, f) for f in ("check", "requires", "provider")},
                           rule="Seed 000 says so, restated.", cases=ROWS, profiles=("core", "batch"))
    import dsweb_ref.certification.checks as checks_module

    monkeypatch.setattr(checks_module, "all_checks", lambda: [fake, *specs[1:]])
    return first.check.id


def test_explain_prints_id_description_rule_seed_capabilities_profiles_and_cases(
    with_cases_and_profiles: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["certify", "--explain", with_cases_and_profiles]) == 0
    out = capsys.readouterr().out
    spec = all_checks()[0]
    assert out.startswith(f"{spec.check.id}  (implementation check)\n  {spec.check.description}\n")
    assert f"rule (seed {spec.check.seed}):\n  Seed 000 says so, restated." in out
    assert f"requires:  {', '.join(spec.requires)}" in out and "profiles:  core, batch" in out
    assert "cases (2):\n  - astral\n      catches: a cut counted in UTF-16 units instead of code points\n" in out
    assert '      params:  prompt="😀😀😀", cut=128' in out


@pytest.mark.parametrize("check_id", ALL_IDS)
def test_every_check_can_be_explained(check_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "--explain", check_id]) == 0
    out = capsys.readouterr().out
    entry = next(e for e in catalogue.entries() if e.id == check_id)
    assert out.startswith(check_id) and f"seed:      {entry.seed}" in out and entry.rule in out
    assert entry.rule and len(out.splitlines()) >= 10


def test_a_rule_falls_back_to_the_check_docstring_and_endpoint_rules_name_their_probe() -> None:
    by_id = {e.id: e for e in catalogue.entries()}
    for spec in all_checks():
        doc = " ".join((spec.run.__doc__ or "").split())
        assert by_id[spec.check.id].rule == (spec.rule or doc or spec.check.description)
    assert "probe search-api.too-long" in by_id["endpoint.search.query_limit"].rule


def test_explain_an_unknown_id_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "--explain", "search.no_such_check"]) == 2
    assert "no check with id 'search.no_such_check'" in capsys.readouterr().err


def test_list_markdown_renders_the_whole_catalogue(
    with_cases_and_profiles: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["certify", "--list", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out == catalogue.markdown()
    for check_id in ALL_IDS:
        assert f"| `{check_id}` |" in out and f"#### `{check_id}`" in out
    assert "| id | seed | requires | profiles | cases | what it checks |" in out
    assert "| pipe \\| cell | a table cell that breaks on '\\|' | text=\"a\\|b\" |" in out


def test_list_markdown_writes_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "catalogue.md"
    assert main(["certify", "--list", "--markdown", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == catalogue.markdown()


def test_a_bare_markdown_outside_list_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "--markdown"]) == 2
    assert "--markdown needs a FILE" in capsys.readouterr().err


def test_the_catalogue_page_equals_the_catalogue() -> None:
    page = (ROOT / "dsweb_ref" / "docs" / "checks.md").read_text(encoding="utf-8")
    section = update_docs.section(page, "<!-- spec-catalogue:", "<!-- /spec-catalogue -->")
    assert section == update_docs.catalogue_page(), "run: python scripts/update_docs.py"
    assert re.sub(r" \{#[a-z0-9_.]+\}$", "", section, flags=re.MULTILINE) == catalogue.markdown()


# Written in pieces so this file does not match itself.
_OUTSIDE = re.compile(
    "|".join(
        re.escape(p)
        for p in ("../" + "shared/", "shared" + "/seeds", "shared" + "/reference", "upstream" + "-apis.md",
                  "anchor" + "-behaviours.md", "testing" + "-ecosystem.md", "/work" + "/")
    )
)


def test_no_tracked_file_points_outside_the_repository() -> None:
    files = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True, cwd=ROOT).stdout.split(b"\0")
    assert len(files) > 50
    hits = []
    for name in filter(None, files):
        path = ROOT / name.decode()
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        hits += [f"{name.decode()}: {m.group(0)}" for m in _OUTSIDE.finditer(text)]
    assert hits == []


def test_the_outside_pointer_pattern_catches_what_it_names() -> None:
    for text in ("see ../" + "shared/x", "docs in shared" + "/seeds/000", "upstream" + "-apis.md §1"):
        assert _OUTSIDE.search(text)
    assert not _OUTSIDE.search("seed 001 restated in README")

