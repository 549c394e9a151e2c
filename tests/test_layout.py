"""The package is one way through the house: each room imports only rooms below it (README "Layout")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "dsweb_ref"

# room -> the rooms it may import (besides itself). The seam is provider-neutral and imports no room;
# tools call the seam, never a provider; providers never import tools.
ALLOWED: dict[str, set[str]] = {
    "seam": set(),
    "netguard": {"seam"},
    "providers": {"seam", "netguard", "settings"},
    "tools": {"seam", "netguard"},
    "settings": {"seam"},
    "runtime": {"seam", "settings", "providers", "tools", "netguard"},
    "emulator": {"seam"},
    "replay": {"seam", "settings", "providers", "tools", "runtime", "emulator"},
    "certification": {"seam", "settings", "providers", "tools", "runtime", "emulator", "replay", "netguard"},
    "cli": {
        "seam",
        "settings",
        "providers",
        "tools",
        "runtime",
        "emulator",
        "replay",
        "certification",
        "netguard",
    },
}
SUBPACKAGES = {"netguard", "providers", "tools", "emulator", "replay", "certification", "cli"}


def room_of(parts: tuple[str, ...]) -> str:
    """parts: the module path inside dsweb_ref, e.g. ("tools", "_batch")."""
    head = parts[0] if parts else "__init__"
    if head in SUBPACKAGES:
        return head
    if head in {"settings", "runtime"}:
        return head
    return "seam"


def imported_rooms(path: Path) -> set[tuple[str, int]]:
    module_parts = path.relative_to(PACKAGE).with_suffix("").parts
    package_parts = module_parts[:-1]  # the package a relative import starts from
    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        targets: list[tuple[str, ...]] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - (node.level - 1)]
                mod = tuple(node.module.split(".")) if node.module else ()
                full = base + mod
                # "from . import x" at the top names submodules: each alias is the target
                targets = [(*full, alias.name) if not full else full for alias in node.names]
            elif node.module and node.module.split(".")[0] == "dsweb_ref":
                targets = [tuple(node.module.split(".")[1:])]
        elif isinstance(node, ast.Import):
            targets = [tuple(a.name.split(".")[1:]) for a in node.names if a.name.split(".")[0] == "dsweb_ref"]
        for target in targets:
            if target:
                found.add((room_of(target), node.lineno))
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_upward(path: Path) -> None:
    own = room_of(path.relative_to(PACKAGE).with_suffix("").parts)
    if path.relative_to(PACKAGE).parts == ("__init__.py",):
        own = "seam"
    bad = sorted((room, line) for room, line in imported_rooms(path) if room != own and room not in ALLOWED[own])
    assert not bad, f"{own} module {path.name} imports {bad} (allowed: {sorted(ALLOWED[own])})"


def test_the_three_jobs_have_their_own_rooms() -> None:
    for room, marker in (("emulator", "server.py"), ("replay", "record.py"), ("certification", "suite.py")):
        assert (PACKAGE / room / marker).is_file(), room
    assert not (PACKAGE / "certification" / "emulator").exists()
