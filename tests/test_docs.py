"""The documentation: a short README, a site that builds strict, generated pages that match the code,
and an adapter-protocol page that states every rule a check enforces."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dsweb_ref._exceptions import WebErrorCode
from dsweb_ref.certification import catalogue
from dsweb_ref.certification.adapter_protocol import CAPABILITIES
from dsweb_ref.certification.targets import TargetConfig

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "dsweb_ref" / "docs"
sys.path.insert(0, str(ROOT / "scripts"))
import update_docs  # noqa: E402

README = (ROOT / "README.md").read_text(encoding="utf-8")
PROTOCOL = (DOCS / "adapter-protocol.md").read_text(encoding="utf-8")


def test_readme_is_at_most_250_lines_and_opens_with_what_and_why() -> None:
    lines = README.splitlines()
    assert len(lines) <= 250
    assert lines[0] == "# dsweb_ref"
    assert "Certify" in lines[2]  # the first sentence says what it is for


def test_readme_states_the_size_of_the_catalogue_truly() -> None:
    # the opening's count went stale once ("nearly ninety" beside 102 checks): it is read against the registry
    from dsweb_ref.certification.checks import REGISTRY

    said = re.search(r"— (.+?) named checks", README)
    assert said is not None
    sizes = {"over a hundred": range(100, 150)}
    assert len(REGISTRY) in sizes[said.group(1)], (said.group(1), len(REGISTRY))


def test_readme_explains_seed_numbers_before_using_them() -> None:
    table = README.index("| seed | decides |")
    first_use = min(m.start() for m in re.finditer(r"seed[- ]00[0-3]", README, flags=re.IGNORECASE))
    assert table < first_use
    for number in ("000", "001", "002", "003"):
        assert f"| {number} |" in README


def test_readme_offers_three_ways_in_each_with_a_command_and_sample_output() -> None:
    ways = README.split("## Three ways in", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^### ", ways, flags=re.MULTILINE)[1:]
    assert [p.splitlines()[0] for p in parts] == [
        "1. Certify my endpoint or proxy",
        "2. Certify my implementation, in any language",
        "3. Read the rules",
    ]
    for part in parts:
        blocks = re.findall(r"```\n(.*?)```", part, flags=re.DOTALL)
        assert len(blocks) >= 2, part.splitlines()[0]  # a command, then what it prints
        assert blocks[0].lstrip().startswith("dsweb ")


@pytest.mark.parametrize("text,name", [(README, "README.md"), *[
    (p.read_text(encoding="utf-8"), p.name) for p in sorted(DOCS.glob("*.md"))
]])
def test_relative_links_point_at_files_that_exist(text: str, name: str) -> None:
    base = ROOT if name == "README.md" else DOCS
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    missing = [t for t in local if not (base / t).exists()]
    assert missing == []


def test_every_page_is_in_the_site_navigation() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["docs_dir"] == "dsweb_ref/docs"

    def pages(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, dict):
            return [p for v in node.values() for p in pages(v)]
        if isinstance(node, list):
            return [p for v in node for p in pages(v)]
        return []

    assert sorted(pages(config["nav"])) == sorted(p.name for p in DOCS.glob("*.md"))


@pytest.mark.parametrize("page", sorted(update_docs.SECTIONS))
def test_generated_pages_equal_the_code(page: str) -> None:
    assert (DOCS / page).read_text(encoding="utf-8") == update_docs.rendered(page), "run: python scripts/update_docs.py"


def test_the_catalogue_page_has_one_anchor_per_check_id() -> None:
    page = (DOCS / "checks.md").read_text(encoding="utf-8")
    for entry in catalogue.entries():
        assert f"{{#{entry.id}}}" in page, entry.id


def test_the_protocol_page_states_every_enforced_rule_capability_method_key_and_code() -> None:
    for entry in catalogue.entries():
        assert f"`{entry.id}`" in PROTOCOL, entry.id
    for capability in CAPABILITIES:
        assert f"| `{capability}` |" in PROTOCOL, capability
    for method in ("hello", "configure", "web_search", "web_fetch", "evidence_search", "standalone_search",
                   "standalone_resolve", "cancel", "shutdown"):
        assert f"| `{method}` |" in PROTOCOL, method
    for field in dataclasses.fields(TargetConfig):
        if field.name != "given":  # not a key: which keys a configure with "defaults": true carries
            assert f"`{field.name}`" in PROTOCOL, field.name
    assert '`"defaults": true`' in PROTOCOL
    for code in WebErrorCode:
        assert f"`{code.value}`" in PROTOCOL, code.value


def test_the_protocol_page_has_the_traps_for_other_languages() -> None:
    traps = PROTOCOL.split("## Traps for other languages", 1)[1].split("\n## ", 1)[0]
    for trap in ("Default headers", "URL parsers", "Redirects", "JSON", "Start-up"):
        assert f"**{trap}" in traps, trap


def _mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True, text=True, timeout=180, env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )


def test_the_site_builds_strict(tmp_path: Path) -> None:
    result = _mkdocs(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    page = (tmp_path / "site" / "checks" / "index.html").read_text(encoding="utf-8")
    assert 'id="search.batch.race"' in page


def test_a_broken_anchor_fails_the_strict_build(tmp_path: Path) -> None:
    # The build above proves nothing unless strict mode rejects what it is meant to reject.
    shutil.copytree(DOCS, tmp_path / "docs")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = str(tmp_path / "docs")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    index = tmp_path / "docs" / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\n[gone](checks.md#no.such.check)\n", encoding="utf-8")
    result = _mkdocs(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    assert "no.such.check" in result.stdout + result.stderr


def test_explain_links_each_check_to_its_anchor_in_the_shipped_docs() -> None:
    for entry in catalogue.entries()[:3] + catalogue.entries()[-2:]:
        line = next(x for x in catalogue.explain(entry.id).splitlines() if x.startswith("docs:"))
        path, anchor = line.split(None, 1)[1].split("#")
        # The docs of the package that is imported: the checkout's, or an installed copy (CI installs it).
        shipped = Path(catalogue.__file__).resolve().parent.parent / "docs" / "checks.md"
        assert Path(path) == shipped and anchor == entry.id
        assert f"{{#{anchor}}}" in Path(path).read_text(encoding="utf-8")
