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
    codes = {f"m.{k}": v for k, v in
             {"k1": 1, "k2": 3, "timeout": 36, "s1": 0, "s2": 0, "untested": 33, "odd": 35, "unchecked": None}.items()}
    judged = script.Judgements(by_change={}, by_name={"m.s2": "unreachable guard", "m.gone": "renamed",
                                                      "other_module.x": "not in this run"})
    summary = script.summarise(codes, judged)
    assert summary.killed == 3 and summary.real == ["m.s1", "m.untested"]
    assert summary.equivalent == [("m.s2", "unreachable guard")]
    assert summary.other == ["m.odd", "m.unchecked"]
    assert summary.stale == ["m.gone"]  # an entry for a module this run did not mutate is not stale
    assert summary.score == pytest.approx(3 / 5)


MODULE = '''
from x import WebError, WebErrorCode

def _invalid(message):
    return WebError(WebErrorCode.INVALID_ARGUMENTS, message)

def scrub(text, hidden):
    return text

def x_f__mutmut_orig(q, hidden):
    if not q:
        raise _invalid("queries must not be empty")  # a comment the key ignores
    raise WebError(WebErrorCode.PROVIDER_ERROR, scrub(f"failed: {q}", hidden))

def x_f__mutmut_1(q, hidden):
    if not q:
        raise _invalid("XXqueries must not be emptyXX")
    raise WebError(WebErrorCode.PROVIDER_ERROR, scrub(f"failed: {q}", hidden))

def x_f__mutmut_2(q, hidden):
    if not q:
        raise _invalid("queries must not be empty")
    raise WebError(WebErrorCode.PROVIDER_ERROR, scrub(f"FAILED: {q}", hidden))

def x_f__mutmut_3(q, hidden):
    if not q:
        raise _invalid("queries must not be empty")
    raise WebError(WebErrorCode.PROVIDER_ERROR, scrub(f"failed: {q}", ()))

def x_f__mutmut_4(q, hidden):
    if not q:
        raise _invalid("queries must not be empty")
    raise WebError(None, scrub(f"failed: {q}", hidden))

def x_f__mutmut_6(q, hidden):
    if not q:
        raise _invalid("queries must not be empty")
    raise WebError(WebErrorCode.PROVIDER_ERROR, scrub(None, hidden))

def x_f__mutmut_7(q, hidden):
    if not q:
        raise _invalid("queries must not be empty")
    raise WebError(WebErrorCode.PROVIDER_ERROR, None)

def x_f__mutmut_8(q, hidden):
    if not q:
        raise _invalid("queries must not be empty")
    raise WebError(WebErrorCode.PROVIDER_ERROR, scrub(f"failed: {q}", None))

def x_f__mutmut_9(q, hidden):
    if not q:
        raise _invalid("queries must not be empty")
    raise WebError(WebErrorCode.PROVIDER_ERROR, scrub(f"failed: {None}", hidden))

def x_h__mutmut_2(q=1):
    raise WebError(WebErrorCode.PROVIDER_ERROR, f"bad {q}: " + "tail")

def x_h__mutmut_orig(q):
    raise WebError(WebErrorCode.PROVIDER_ERROR, f"bad {q}: " + "tail")

def x_h__mutmut_1(q):
    raise WebError(WebErrorCode.PROVIDER_ERROR, f"bad {None}: " + "XXtailXX")

def x_f__mutmut_11(q, hidden):
    if not q:
        raise _invalid(None)
    raise WebError(WebErrorCode.PROVIDER_ERROR, scrub(f"failed: {q}", hidden))

def x_f__mutmut_5(q, hidden):
    if q:
        raise _invalid("queries must not be empty")
    raise WebError(WebErrorCode.PROVIDER_ERROR, scrub(f"failed: {q}", hidden))

class C:
    def xǁCǁg__mutmut_orig(self):
        return {"code": 1}

    def xǁCǁg__mutmut_1(self):
        return {"CODE": 1}
'''


def _mutants(tmp_path: Path) -> dict[str, object]:
    module = tmp_path / "mutants" / "pkg" / "mod.py"
    module.parent.mkdir(parents=True)
    module.write_text(MODULE, encoding="utf-8")
    return script.read_mutants(tmp_path)


def test_message_literals_only_are_judged_seed_open_automatically(tmp_path: Path) -> None:
    mutants = _mutants(tmp_path)
    only_message = {name: m.message_only for name, m in mutants.items()}
    assert only_message == {
        "pkg.mod.x_f__mutmut_1": True,  # a literal in the message of _invalid (a WebError(code, message) helper)
        "pkg.mod.x_f__mutmut_2": False,  # a literal inside a call inside the message: not the message's own text
        "pkg.mod.x_f__mutmut_3": False,  # an expression in the message changed (a scrub dropped): never automatic
        "pkg.mod.x_f__mutmut_4": False,  # the code changed
        "pkg.mod.x_f__mutmut_5": False,  # the condition changed
        "pkg.mod.x_f__mutmut_6": False,  # what a call inside the message is given, replaced by None
        "pkg.mod.x_f__mutmut_7": True,  # the whole message replaced by None
        "pkg.mod.x_f__mutmut_8": False,  # the secrets a scrub is given replaced by None: could leak
        "pkg.mod.x_f__mutmut_9": False,  # inside a call inside the message, even an interpolation
        "pkg.mod.x_h__mutmut_1": True,  # an f-string's shown value and a '+' literal of the message itself
        "pkg.mod.x_h__mutmut_2": False,  # a default changed
        "pkg.mod.x_f__mutmut_11": True,  # a helper's whole message replaced by None
        "pkg.mod.xǁCǁg__mutmut_1": False,  # a string literal, not in a message
    }
    judged = script.summarise({n: 0 for n in mutants}, script.Judgements({}, {}), mutants)  # type: ignore[arg-type]
    assert [n for n, _ in judged.equivalent] == [*(f"pkg.mod.x_f__mutmut_{i}" for i in (1, 11, 7)),
                                                 "pkg.mod.x_h__mutmut_1"]


def test_equivalents_are_keyed_by_function_and_change(tmp_path: Path) -> None:
    mutants = _mutants(tmp_path)
    assert mutants["pkg.mod.xǁCǁg__mutmut_1"].key == "pkg.mod.C.g | return {'CODE': 1}"  # type: ignore[attr-defined]
    assert mutants["pkg.mod.x_f__mutmut_5"].key == (  # type: ignore[attr-defined]
        "pkg.mod.f | if q:")
    assert mutants["pkg.mod.x_h__mutmut_2"].key == "pkg.mod.h | def h(q=1):"  # type: ignore[attr-defined]
    listing = tmp_path / "equivalent.txt"
    listing.write_text("# comment\n"
                       "pkg.mod.C.g | return {'CODE': 1}  # outside the certified surface\n"
                       "pkg.mod.f | if not q and q:  # names a change no mutant makes\n", encoding="utf-8")
    judged = script.summarise({n: 0 for n in mutants}, script.judged_equivalent(listing), mutants)  # type: ignore[arg-type]
    assert ("pkg.mod.xǁCǁg__mutmut_1", "outside the certified surface") in judged.equivalent
    assert judged.stale == ["pkg.mod.f | if not q and q:"]
    assert "pkg.mod.x_f__mutmut_5" in judged.real


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


def test_a_function_wildcard_covers_only_mutants_no_check_reaches(tmp_path: Path) -> None:
    mutants = _mutants(tmp_path)
    listing = tmp_path / "equivalent.txt"
    listing.write_text("pkg.mod.f | *  # unreachable: no certified route calls it\n", encoding="utf-8")
    codes: dict[str, int | None] = {n: 0 for n in mutants}
    codes["pkg.mod.x_f__mutmut_5"] = 33  # no killer test reached it
    judged = script.summarise(codes, script.judged_equivalent(listing), mutants)  # type: ignore[arg-type]
    assert ("pkg.mod.x_f__mutmut_5", "unreachable: no certified route calls it") in judged.equivalent
    assert "pkg.mod.x_f__mutmut_3" in judged.real  # reached and survived: the wildcard does not excuse it
    assert judged.stale == []


def test_the_strict_score_counts_survivors_judged_out_of_reach_as_survived() -> None:
    codes = {"m.k1": 1, "m.k2": 1, "m.eq": 0, "m.open": 0, "m.far": 0, "m.guard": 0, "m.s": 0}
    judged = script.Judgements(by_change={}, by_name={
        "m.eq": "program-equivalent: zip strictness after a length check",
        "m.open": "seed-open: message wording",
        "m.far": "unreachable in certification: configure never passes it",
        "m.guard": "outside the certified surface: the CLI envelope",
    })
    summary = script.summarise(codes, judged)
    assert summary.kinds() == {"program-equivalent": 1, "seed-open": 1, "out of reach": 2}
    assert summary.score == pytest.approx(2 / 3)  # killed / (killed + the one unjudged survivor)
    assert summary.strict_score == pytest.approx(2 / 5)  # the two out-of-reach survivors count against it
