"""Keep the certification suite's oracle out of the mutation.

Some checks compute their expected value with the reference's own pure functions (the Search API and
Messages result mappings; the merge is restated apart, in certification/seed_merge.py): the specification,
executable. A mutant stands for a wrong
*implementation*, not a wrong specification, so every such function a check module (or the scenario
oracle) imported from a mutated module (``_MUTATED``) is replaced by the same function loaded from the
unmutated source (``DSWEB_PRISTINE_ROOT``, set by ``scripts/mutation_score.py``). Without this, a
mutant of a mapping would change the expected value along with the actual one and always survive.

Every module-level cache of the mutated scope is emptied before each check: mutmut links a mutant to the
checks that ran its function, and a cached function runs only for the first check that calls it (the
secret scrubber's encoded forms of a key, say), so without this the later checks that could reject
its mutants are never run against them, and a value cached by the unmutated code hides the mutant. The
evidence warm-up, a once-per-process start, is forgotten before each check for the same reason.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

# Every package and module the mutation scope covers (scripts/mutation_score.py CERT_MODULES): a check that
# judges with one of their functions keeps the pristine one.
_MUTATED = ("dsweb_ref.tools", "dsweb_ref.providers", "dsweb_ref.netguard", "dsweb_ref._secrets",
            "dsweb_ref._service", "dsweb_ref.settings", "dsweb_ref.runtime", "dsweb_ref.standalone_accounts",
            "dsweb_ref.standalone_config")
# Where expected values are computed; the targets module drives the implementation and stays mutated.
_ORACLES = ("dsweb_ref.certification.checks", "dsweb_ref.certification.scenarios")
_loaded: dict[str, ModuleType] = {}


def _pristine(module_name: str) -> ModuleType:
    if module_name not in _loaded:
        root = Path(os.environ["DSWEB_PRISTINE_ROOT"])
        path = root.joinpath(*module_name.split(".")).with_suffix(".py")
        spec = importlib.util.spec_from_file_location(f"{module_name}__pristine", path)
        assert spec is not None and spec.loader is not None, path
        module = importlib.util.module_from_spec(spec)
        module.__package__ = module_name.rpartition(".")[0]  # its relative imports resolve in the real package
        sys.modules[spec.name] = module  # dataclasses look their module up by name
        spec.loader.exec_module(module)
        _loaded[module_name] = module
    return _loaded[module_name]


def pin_oracles() -> list[str]:
    import dsweb_ref.certification.checks  # noqa: F401  (imports every check and its oracle)

    pinned = []
    for name, module in list(sys.modules.items()):
        if not name.startswith(_ORACLES):
            continue
        for attr, value in list(vars(module).items()):
            owner = getattr(value, "__module__", "") or ""
            if inspect.isfunction(value) and owner.startswith(_MUTATED) and not owner.endswith("__pristine"):
                setattr(module, attr, getattr(_pristine(owner), value.__name__))
                pinned.append(f"{name}.{attr}")
    return pinned


def clear_caches() -> int:
    """Empty every functools cache defined at module level in the mutated scope; returns how many."""
    cleared = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith(_MUTATED):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, functools._lru_cache_wrapper):
                value.cache_clear()
                cleared += 1
    return cleared


def forget_warm_up() -> None:
    """The evidence warm-up runs once per process (``_evidence_units._WARM``): started by the unmutated
    clean run mutmut forks every mutant from, it would never run a mutant of its own. Forgotten, the next
    evidence tool built starts it again, mutated."""
    units = sys.modules.get("dsweb_ref.tools._evidence_units")
    if units is not None:
        units._WARM = None


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    clear_caches()
    forget_warm_up()


def pytest_configure(config: pytest.Config) -> None:
    if "DSWEB_PRISTINE_ROOT" in os.environ:
        pin_oracles()
