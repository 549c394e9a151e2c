"""scripts/mutation_score.py: the score's arithmetic, the scratch copy's settings, and the pinned oracle."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


script = _load(ROOT / "scripts" / "mutation_score.py", "mutation_score_under_test")


def test_score_is_killed_over_non_equivalent_mutants() -> None:
    codes = {"k1": 1, "k2": 3, "timeout": 36, "s1": 0, "s2": 0, "untested": 33, "odd": 35, "unchecked": None}
    summary = script.summarise(codes, {"s2": "unreachable guard", "gone": "renamed"})
    assert summary.killed == 3 and summary.real == ["s1", "untested"]
    assert summary.equivalent == [("s2", "unreachable guard")]
    assert summary.other == ["odd", "unchecked"] and summary.stale == ["gone"]
    assert summary.score == pytest.approx(3 / 5)


def test_the_scratch_copy_names_the_modules_and_the_killer(tmp_path: Path) -> None:
    work = tmp_path / "cert"
    script.prepare(work, script.CERT_MODULES, script.CERT_TESTS)
    config = tomllib.loads((work / "pyproject.toml").read_text(encoding="utf-8"))
    mutmut = config["tool"]["mutmut"]
    assert mutmut["only_mutate"] == list(script.CERT_MODULES)
    assert mutmut["pytest_add_cli_args_test_selection"] == ["mutation_tests/test_certification_suite.py"]
    assert config["tool"]["pytest"]["ini_options"]["pythonpath"] == ["."]  # the mutated copy is imported
    assert (work / "mutation_tests" / "conftest.py").exists() and (work / "dsweb_ref" / "tools" / "_merge.py").exists()
    assert not (work / "mutation_tests" / "equivalent.txt").exists()


def test_the_certification_killer_judges_with_an_unmutated_oracle(monkeypatch: pytest.MonkeyPatch) -> None:
    from dsweb_ref import SearchResult, Source
    from dsweb_ref.certification import scenarios
    from dsweb_ref.certification.checks import _oracle
    from dsweb_ref.tools import merge_results

    kept = {(m, a): getattr(m, a) for m in (scenarios, _oracle) for a in ("merge_results", "map_results")
            if hasattr(m, a)}
    for (module, attr), value in kept.items():
        monkeypatch.setattr(module, attr, value)  # restored after the test
    monkeypatch.setenv("DSWEB_PRISTINE_ROOT", str(ROOT))
    conftest = _load(ROOT / "scripts" / "mutation" / "conftest.py", "mutation_conftest_under_test")
    pinned = conftest.pin_oracles()
    assert "dsweb_ref.certification.scenarios.merge_results" in pinned
    assert "dsweb_ref.certification.checks._oracle.map_results" in pinned
    assert scenarios.merge_results is not merge_results
    assert scenarios.merge_results.__module__ == "dsweb_ref.tools._merge__pristine"
    results = [SearchResult(sources=(Source("https://a.test/"),), content="x"), SearchResult(truncated=True)]
    assert scenarios.merge_results(["p", "q"], results, 1) == merge_results(["p", "q"], results, 1)
