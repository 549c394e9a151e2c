"""scripts/mutation_score.py: the score's arithmetic, the scratch copy's settings, and the pinned oracle."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
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


def _mutant(name: str, change: str) -> object:
    return script.Mutant(name, f"{script.module_of(name)}.f", change, message_only=False)


def test_score_is_killed_over_non_equivalent_mutants() -> None:
    codes = {f"m.x_f__mutmut_{k}": v for k, v in
             {"1": 1, "2": 3, "3": 36, "4": 0, "5": 0, "6": 33, "7": 35, "8": None}.items()}
    mutants = {n: _mutant(n, f"change {n[-1]}") for n in codes}
    judged = script.Judgements(by_change={"m.f | change 5": "out of reach [protocol]: an unreachable guard",
                                          "other_module.f | change 1": "seed-open: not in this run"})
    summary = script.summarise(codes, judged, mutants)  # type: ignore[arg-type]
    assert len(summary.killed) == 3 and summary.real == ["m.x_f__mutmut_4", "m.x_f__mutmut_6"]
    assert summary.equivalent == [("m.x_f__mutmut_5", "out of reach [protocol]: an unreachable guard")]
    assert summary.other == ["m.x_f__mutmut_7", "m.x_f__mutmut_8"]
    assert summary.stale == [] and not summary.failed  # an entry for a module this run did not mutate is not stale
    assert summary.score == pytest.approx(3 / 5)
    assert summary.strict_score == pytest.approx(3 / 6)
    assert summary.raw_kill_rate == pytest.approx(3 / 6)  # killed / every mutant with a verdict


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
        # the whole message replaced by None: computing it called scrub, which the mutant skips (a call
        # may raise or act), so never automatic
        "pkg.mod.x_f__mutmut_7": False,
        "pkg.mod.x_f__mutmut_8": False,  # the secrets a scrub is given replaced by None: could leak
        "pkg.mod.x_f__mutmut_9": False,  # inside a call inside the message, even an interpolation
        "pkg.mod.x_h__mutmut_1": True,  # an f-string's shown value and a '+' literal of the message itself
        "pkg.mod.x_h__mutmut_2": False,  # a default changed
        "pkg.mod.x_f__mutmut_11": True,  # a helper's whole message replaced by None
        "pkg.mod.xǁCǁg__mutmut_1": False,  # a string literal, not in a message
    }
    judged = script.summarise({n: 0 for n in mutants}, script.Judgements({}), mutants)  # type: ignore[arg-type]
    assert [n for n, _ in judged.equivalent] == [*(f"pkg.mod.x_f__mutmut_{i}" for i in (1, 11)),
                                                 "pkg.mod.x_h__mutmut_1"]


def test_equivalents_are_keyed_by_function_and_change(tmp_path: Path) -> None:
    mutants = _mutants(tmp_path)
    assert mutants["pkg.mod.xǁCǁg__mutmut_1"].key == "pkg.mod.C.g | return {'code': 1} → return {'CODE': 1}"  # type: ignore[attr-defined]
    assert mutants["pkg.mod.x_f__mutmut_5"].key == (  # type: ignore[attr-defined]
        "pkg.mod.f | if not q: → if q:")
    assert mutants["pkg.mod.x_h__mutmut_2"].key == "pkg.mod.h | def h(q): → def h(q=1):"  # type: ignore[attr-defined]
    listing = tmp_path / "equivalent.txt"
    listing.write_text("# comment\n"
                       "pkg.mod.C.g | return {'code': 1} → return {'CODE': 1}"
                       "  # out of reach [protocol]: the CLI envelope\n"
                       "pkg.mod.f | if not q: → if not q and q:  # seed-open: names a change no mutant makes\n"
                       "pkg.mod.f | if q: → if not q:  # seed-open: the right line, the wrong original\n",
                       encoding="utf-8")
    judged = script.summarise({n: 0 for n in mutants}, script.judged_equivalent(listing), mutants)  # type: ignore[arg-type]
    assert ("pkg.mod.xǁCǁg__mutmut_1", "out of reach [protocol]: the CLI envelope") in judged.equivalent
    assert judged.stale == ["pkg.mod.f | if not q: → if not q and q:", "pkg.mod.f | if q: → if not q:"]
    assert judged.failed
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
    from dsweb_ref.certification.checks import _oracle, outcomes
    from dsweb_ref.tools import merge_results

    kept = {(m, a): getattr(m, a) for m in (scenarios, _oracle, outcomes)
            for a in ("map_results", "map_sources", "encoded_secret_found") if hasattr(m, a)}
    for (module, attr), value in kept.items():
        monkeypatch.setattr(module, attr, value)  # restored after the test
    monkeypatch.setenv("DSWEB_PRISTINE_ROOT", str(ROOT))
    conftest = _load(ROOT / "scripts" / "mutation" / "conftest.py", "mutation_conftest_under_test")
    pinned = conftest.pin_oracles()
    assert "dsweb_ref.certification.checks._oracle.map_results" in pinned
    # the merge oracle is seed 000 restated in certification/seed_merge.py (not mutated): nothing to pin
    assert not [p for p in pinned if p.endswith(".merge_results")]
    # the secret judge is written apart from the scrubber (_secrets): nothing of it needs pinning, and a
    # mutant of _secrets cannot blind it
    from dsweb_ref.certification.checks import _leaks

    assert outcomes.leak is _leaks.leak and not [p for p in pinned if ".outcomes." in p or "._leaks." in p]
    assert not [v for v in vars(_leaks).values() if getattr(v, "__module__", "").startswith("dsweb_ref._secrets")]
    restated = "dsweb_ref.certification.seed_merge"
    assert scenarios.merge_by_seed.__module__ == _oracle.merge_by_seed.__module__ == restated
    results = [SearchResult(sources=(Source("https://a.test/"),), content="x"), SearchResult(truncated=True)]
    assert scenarios.merge_by_seed(["p", "q"], results, 1) == merge_results(["p", "q"], results, 1)


def test_the_certification_killer_empties_the_reference_s_caches_before_each_check() -> None:
    """A cached function runs only for the first check that calls it, so mutmut would link its mutants
    to that check alone (the scrubber's encoded forms of a key were linked to two checks that cannot
    see them, not to errors.secret_echo)."""
    from dsweb_ref import _secrets
    from dsweb_ref.tools import _evidence_rank

    conftest = _load(ROOT / "scripts" / "mutation" / "conftest.py", "mutation_conftest_cache_under_test")
    _secrets.scrub_text("x dsweb-emulator-key-0001 y", ["dsweb-emulator-key-0001"], "<k>")
    _evidence_rank.registrable_domain("news.example.co.uk")
    assert _secrets._forms.cache_info().currsize > 0 and _evidence_rank._psl.cache_info().currsize == 1
    assert conftest.clear_caches() >= 2
    assert _secrets._forms.cache_info().currsize == 0 and _evidence_rank._psl.cache_info().currsize == 0
    assert "_fresh_caches" in vars(conftest)  # the autouse fixture that calls it before every check


def test_the_certification_killer_starts_the_evidence_warm_up_again_before_each_check() -> None:
    """The warm-up starts once per process: begun by the clean run mutmut forks each mutant from, a mutant
    of it (a thread started without its future, so every call waits out its fetch stage) never ran."""
    from dsweb_ref.tools import _evidence_units

    conftest = _load(ROOT / "scripts" / "mutation" / "conftest.py", "mutation_conftest_warm_under_test")
    first = _evidence_units.warm_up()
    assert _evidence_units.warm_up() is first  # once per process, as the killer finds it after the clean run
    first.result(timeout=60)
    conftest.forget_warm_up()
    again = _evidence_units.warm_up()
    assert again is not first
    again.result(timeout=60)
    fixture = vars(conftest)["_fresh_caches"]
    assert "forget_warm_up" in fixture.__wrapped__.__code__.co_names  # called before every check


def test_a_function_wildcard_covers_only_mutants_no_check_reaches(tmp_path: Path) -> None:
    mutants = _mutants(tmp_path)
    listing = tmp_path / "equivalent.txt"
    listing.write_text("pkg.mod.h | *  # out of reach [protocol]: no certified route calls it\n", encoding="utf-8")
    codes: dict[str, int | None] = {n: 0 for n in mutants}
    codes["pkg.mod.x_h__mutmut_1"] = codes["pkg.mod.x_h__mutmut_2"] = 33  # no killer test reached h
    judged = script.summarise(codes, script.judged_equivalent(listing), mutants)  # type: ignore[arg-type]
    assert ("pkg.mod.x_h__mutmut_2", "out of reach [protocol]: no certified route calls it") in judged.equivalent
    assert judged.stale == [] and judged.contradicted == []
    codes["pkg.mod.x_h__mutmut_2"] = 0  # a check reached h after all: "no check reaches it" is wrong
    judged = script.summarise(codes, script.judged_equivalent(listing), mutants)  # type: ignore[arg-type]
    assert judged.contradicted == ["pkg.mod.h | *"] and judged.failed
    assert "pkg.mod.x_h__mutmut_2" in judged.real  # reached and survived: the wildcard does not excuse it


def test_the_strict_score_counts_survivors_judged_out_of_reach_as_survived() -> None:
    codes = {"m.k1": 1, "m.k2": 1, "m.eq": 0, "m.open": 0, "m.far": 0, "m.guard": 0, "m.s": 0}
    mutants = {n: _mutant(n, n) for n in codes}
    judged = script.Judgements(by_change={
        "m.f | m.eq": "program-equivalent: zip strictness after a length check",
        "m.f | m.open": "seed-open: how a long field is shortened",
        "m.f | m.far": "out of reach [protocol]: configure never passes it",
        "m.f | m.guard": "out of reach [protocol, search-api]: the CLI envelope",
    })
    summary = script.summarise(codes, judged, mutants)  # type: ignore[arg-type]
    assert summary.kinds() == {"program-equivalent": 1, "seed-open": 1, "out of reach": 2}
    assert summary.score == pytest.approx(2 / 3)  # killed / (killed + the one unjudged survivor)
    assert summary.strict_score == pytest.approx(2 / 5)  # the two out-of-reach survivors count against it


@pytest.mark.parametrize(("line", "why"), [
    ("pkg.mod.x_f__mutmut_3  # program-equivalent: a name, not a change", "judged by mutant name"),
    ("pkg.mod.f | if q:  # unreachable: an old head without a route", "no known kind"),
    ("pkg.mod.f | if q:  # out of reach: no route named", "no known kind"),
    ("pkg.mod.f | if q:  # out of reach [the moon]: a route the certification does not have", "no known kind"),
    ("pkg.mod.f | raise WebError(None, 'x')  # seed-open: error message text only", "claims message text"),
    ("pkg.mod.f | noun = None  # seed-open: error message wording", "claims message text"),
])
def test_a_line_breaking_the_judgement_rules_is_refused(tmp_path: Path, line: str, why: str) -> None:
    listing = tmp_path / "equivalent.txt"
    listing.write_text(f"# header\n{line}\n", encoding="utf-8")
    judgements = script.judged_equivalent(listing)
    assert judgements.by_change == {}
    assert len(judgements.refused) == 1 and why in judgements.refused[0] and "equivalent.txt:2" in judgements.refused[0]


def test_the_three_kinds_are_accepted_with_named_routes(tmp_path: Path) -> None:
    listing = tmp_path / "equivalent.txt"
    listing.write_text("pkg.mod.f | if q:  # program-equivalent: q is never falsy here\n"
                       "pkg.mod.f | if not q and q:  # seed-open: seed 000 leaves it open\n"
                       "pkg.mod.g | *  # out of reach [protocol, search-api]: configure never passes it\n",
                       encoding="utf-8")
    judgements = script.judged_equivalent(listing)
    assert judgements.refused == ()
    assert {script.kind_of(r) for r in judgements.by_change.values()} == {
        "program-equivalent", "seed-open", "out of reach"}


def test_a_judgement_matching_a_killed_mutant_fails_the_run(tmp_path: Path) -> None:
    mutants = _mutants(tmp_path)
    listing = tmp_path / "equivalent.txt"
    listing.write_text("pkg.mod.f | if not q: → if q:  # program-equivalent: claimed, but a check tells it apart\n",
                       encoding="utf-8")
    codes: dict[str, int | None] = {n: 0 for n in mutants}
    codes["pkg.mod.x_f__mutmut_5"] = 1  # the killer killed the mutant this key names
    summary = script.summarise(codes, script.judged_equivalent(listing), mutants)  # type: ignore[arg-type]
    assert summary.contradicted == ["pkg.mod.f | if not q: → if q:"] and summary.failed
    assert summary.stale == []
    # The unit tests may pin what the certification must accept: only "program-equivalent" is contradicted.
    unit = script.summarise(codes, script.judged_equivalent(listing), mutants, unit=True)  # type: ignore[arg-type]
    assert unit.contradicted == ["pkg.mod.f | if not q: → if q:"]
    listing.write_text("pkg.mod.f | if not q: → if q:  # seed-open: seed 000 leaves it open\n", encoding="utf-8")
    assert script.summarise(codes, script.judged_equivalent(listing), mutants).contradicted  # type: ignore[arg-type]
    assert not script.summarise(codes, script.judged_equivalent(listing), mutants,  # type: ignore[arg-type]
                                unit=True).contradicted


def test_the_repository_listing_keeps_the_rules() -> None:
    judgements = script.judged_equivalent()
    assert judgements.refused == ()
    assert judgements.by_change and all(" | " in key for key in judgements.by_change)


TWO_MODULES = {
    "a": '''
from x import WebError, WebErrorCode

def _invalid(message):
    return WebError(WebErrorCode.INVALID_ARGUMENTS, message)
''',
    "b": '''
from x import WebError, WebErrorCode

def _invalid(code):
    return WebError(code, "fixed text")

def x_f__mutmut_orig(q):
    raise _invalid("queries must not be empty")

def x_f__mutmut_1(q):
    raise _invalid("XXqueries must not be emptyXX")
''',
    "c": '''
from .a import _invalid

class C:
    def _invalid(self, message):
        return message

def x_f__mutmut_orig(q, c):
    raise _invalid("queries must not be empty")

def x_f__mutmut_1(q, c):
    raise _invalid("XXqueries must not be emptyXX")

def x_g__mutmut_orig(q, c):
    raise c._invalid("queries must not be empty")

def x_g__mutmut_1(q, c):
    raise c._invalid("XXqueries must not be emptyXX")
''',
}


_LOCALS_HEAD = """
from x import WebError, WebErrorCode

def x__invalid__mutmut_orig(key, env, reason):
    where = f" (from {env})" if env else ""
    return WebError(WebErrorCode.CONFIG_INVALID, f"invalid setting {key}{where}: {reason}")

def x_g__mutmut_orig(key, value):
    if value is None:
        raise _invalid(key, None, f"must be set, got {value!r}")
    return value

def x_g__mutmut_1(key, value):
    if value is None:
        raise _invalid(key, None, None)
    return value

def x_h__mutmut_orig(exc):
    raise WebError(WebErrorCode.PROVIDER_ERROR, f"failed: {type(exc).__name__}")

def x_h__mutmut_1(exc):
    raise WebError(WebErrorCode.PROVIDER_ERROR, None)
"""
_LOCALS_F = """
def x_f__mutmut_{id}(status, env, n, kind):
    lead, hint = ("authentication failed", f"check {env}")
    late = "timed out"
    other = "refused"
    wait = "seconds"
    noun = {"str": "a string", "int": "an integer"}[kind]
    if status == 401:
        raise WebError(WebErrorCode.PROVIDER_ERROR, f"{lead}: {hint}")
    if other == "refused":
        raise WebError(WebErrorCode.PROVIDER_ERROR, other)
    if n:
        raise WebError(WebErrorCode.PROVIDER_ERROR, f"after {n:g} {wait}" + "!")
    if kind:
        raise WebError(WebErrorCode.CONFIG_INVALID, f"must be {noun}")
    raise WebError(WebErrorCode.PROVIDER_ERROR, late)
"""
_LOCALS_INVALID = """
def x__invalid__mutmut_{id}(key, env, reason):
    where = f" (from {env})" if env else ""
    return WebError(WebErrorCode.CONFIG_INVALID, f"invalid setting {key}{where}: {reason}")
"""
# (function template, mutant number, original text, mutated text)
_LOCAL_MUTANTS = [
    (_LOCALS_F, 1, '("authentication failed"', '("AUTHENTICATION FAILED"'),
    (_LOCALS_F, 2, 'lead, hint = ("authentication failed", f"check {env}")', "lead, hint = None"),
    (_LOCALS_F, 3, 'late = "timed out"', "late = None"),
    (_LOCALS_F, 4, 'other = "refused"', 'other = "XXrefusedXX"'),
    (_LOCALS_F, 5, 'wait = "seconds"', 'wait = "XXsecondsXX"'),
    (_LOCALS_F, 6, '+ "!"', "+ None"),
    (_LOCALS_F, 7, "{n:g}", "{None:g}"),
    (_LOCALS_F, 8, '"a string"', '"A STRING"'),
    (_LOCALS_F, 9, '{"str":', '{"XXstrXX":'),
    (_LOCALS_F, 10, '{"str": "a string", "int": "an integer"}[kind]', "None[kind]"),
    (_LOCALS_INVALID, 1, "if env else", "if env or True else"),
    (_LOCALS_INVALID, 2, 'else ""', 'else "XXXX"'),
]
assert all(old in template for template, _n, old, _new in _LOCAL_MUTANTS)  # each mutant differs
LOCALS_MODULE = _LOCALS_HEAD + _LOCALS_F.replace("{id}", "orig") + "".join(
    template.replace("{id}", str(number)).replace(old, new, 1) for template, number, old, new in _LOCAL_MUTANTS)


def test_message_locals_are_message_text_only_where_every_read_is_shown(tmp_path: Path) -> None:
    # Issue 24 item 5: wording built in a local (lead, hint = ...) is message text when every read of
    # the local is shown text; a local read anywhere else, or a value that could stop a message being
    # built (a tuple unpacked, a '+' operand, a format spec), never is.
    path = tmp_path / "mutants" / "pkg" / "loc.py"
    path.parent.mkdir(parents=True)
    path.write_text(LOCALS_MODULE, encoding="utf-8")
    mutants = script.read_mutants(tmp_path)
    assert {n: m.message_only for n, m in mutants.items()} == {
        "pkg.loc.x_f__mutmut_1": True,  # a literal of a local read only inside a message's f-string
        "pkg.loc.x_f__mutmut_2": False,  # the tuple replaced by None: unpacking it raises
        "pkg.loc.x_f__mutmut_3": True,  # a local that is a whole message, replaced by None
        "pkg.loc.x_f__mutmut_4": False,  # a local also read in a condition: it chooses a branch
        "pkg.loc.x_f__mutmut_5": True,  # a local shown in an f-string beside a format spec
        "pkg.loc.x_f__mutmut_6": False,  # a '+' operand replaced by None: the message is never built
        "pkg.loc.x_f__mutmut_7": False,  # None under a format spec (:g) does not format
        "pkg.loc.x_f__mutmut_8": True,  # a wording in a literal table a local picks from
        "pkg.loc.x_f__mutmut_9": False,  # the table's key: the lookup fails
        "pkg.loc.x_f__mutmut_10": False,  # the table replaced by None cannot be indexed
        "pkg.loc.x_g__mutmut_1": True,  # a helper whose message is built through a local is a carrier
        "pkg.loc.x_h__mutmut_1": True,  # a message of type(x).__name__ (cannot raise) replaced by None
        "pkg.loc.x__invalid__mutmut_1": False,  # the condition choosing which text: not a literal
        "pkg.loc.x__invalid__mutmut_2": True,  # a literal a condition may choose, in a message local
    }


def test_a_hand_judgement_of_a_change_the_classifier_judges_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "mutants" / "pkg" / "loc.py"
    path.parent.mkdir(parents=True)
    path.write_text(LOCALS_MODULE, encoding="utf-8")
    mutants = script.read_mutants(tmp_path)
    text, other = mutants["pkg.loc.x_f__mutmut_3"], mutants["pkg.loc.x_f__mutmut_2"]
    judged = script.Judgements({text.key: "out of reach [protocol]: no route shows it",
                                other.key: "out of reach [protocol]: no route unpacks it"})
    summary = script.summarise({n: 0 for n in mutants}, judged, mutants)  # type: ignore[arg-type]
    assert summary.stale == [text.key] and summary.failed


def test_message_carriers_are_matched_by_module_qualified_name(tmp_path: Path) -> None:
    for name, text in TWO_MODULES.items():
        path = tmp_path / "mutants" / "pkg" / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    mutants = script.read_mutants(tmp_path)
    assert {n: m.message_only for n, m in mutants.items()} == {
        # b's own _invalid takes the code, not the message: the literal is a code, whatever a.py's _invalid is
        "pkg.b.x_f__mutmut_1": False,
        "pkg.c.x_f__mutmut_1": True,  # c imports a's carrier (a relative import resolves to pkg.a._invalid)
        "pkg.c.x_g__mutmut_1": False,  # a method of the same bare name is never a carrier
    }


def _write_run(work: Path, codes: dict[str, int], module: str, source: str) -> None:
    path = work / "mutants" / Path(*module.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    path.with_suffix(".py.meta").write_text(json.dumps({"exit_code_by_key": codes}), encoding="utf-8")


def test_the_report_prints_every_figure_per_module_and_fails_on_a_stale_judgement(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / ".mutation" / "certification"
    _write_run(work, {"pkg.a.x_f__mutmut_1": 36, "pkg.a.x_f__mutmut_2": 0}, "pkg.a",
               "def x_f__mutmut_orig(q):\n    return q\n\ndef x_f__mutmut_1(q):\n    return None\n\n"
               "def x_f__mutmut_2(q):\n    return q or q\n")
    _write_run(work, {"pkg.b.x_g__mutmut_1": 0, "pkg.b.x_g__mutmut_2": 0}, "pkg.b",
               "def x_g__mutmut_orig(q):\n    return q + 1\n\ndef x_g__mutmut_1(q):\n    return q - 1\n\n"
               "def x_g__mutmut_2(q):\n    return q + 2\n")
    listing = tmp_path / "equivalent.txt"
    listing.write_text("pkg.b.g | return q + 1 → return q - 1  # out of reach [protocol]: configure never passes q\n",
                       encoding="utf-8")
    monkeypatch.setattr(script, "ROOT", tmp_path)
    monkeypatch.setattr(script, "EQUIVALENT", listing)
    monkeypatch.setattr(sys, "argv", ["mutation_score.py", "--reuse", "--brief"])
    assert script.main() == 0
    printed = capsys.readouterr().out
    assert ("module pkg.a: 2 mutants, 1 killed, 1 survived, 0 judged (program-equivalent 0, seed-open 0, "
            "out of reach 0); raw_kill_rate 0.500, strict_score 0.500, mutation_score 0.500") in printed
    assert ("module pkg.b: 2 mutants, 0 killed, 1 survived, 1 judged (program-equivalent 0, seed-open 0, "
            "out of reach 1); raw_kill_rate 0.000, strict_score 0.000, mutation_score 0.000") in printed
    assert "raw_kill_rate 0.250" in printed and "strict_score 0.250" in printed and "mutation_score 0.333" in printed
    assert "1 killed by timeout" in printed and "pkg.a.x_f__mutmut_1" in printed  # counted, and named to rerun

    listing.write_text("pkg.b.g | return q * 1 → return q - 1  # out of reach [protocol]: a line that changed since\n",
                       encoding="utf-8")
    assert script.main() == 3
    assert "stale judgement" in capsys.readouterr().err
    # --work keeps a group's run apart: the same run under another name reports the same way
    shutil.copytree(work, tmp_path / ".mutation" / "group")
    shutil.rmtree(work)
    monkeypatch.setattr(sys, "argv", ["mutation_score.py", "--reuse", "--brief", "--work", "group"])
    assert script.main() == 3
    assert "stale judgement" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["mutation_score.py", "--reuse", "--brief"])
    listing.write_text("pkg.a.x_f__mutmut_2  # seed-open: by name\n", encoding="utf-8")
    assert script.main() == 3  # refused before any run is reported
    assert "judged by mutant name" in capsys.readouterr().err


def test_check_generates_the_mutants_a_run_would_without_running_a_test(tmp_path: Path) -> None:
    work = tmp_path / "check"
    work.mkdir()
    (work / "dsweb_ref").mkdir()
    (work / "dsweb_ref" / "m.py").write_text("def f(q):\n    return q + 1\n", encoding="utf-8")
    (work / "dsweb_ref" / "other.py").write_text("def g():\n    return 1\n", encoding="utf-8")
    (work / "pyproject.toml").write_text('[tool.mutmut]\nsource_paths = ["dsweb_ref"]\n', encoding="utf-8")
    script.generate(work, ("dsweb_ref/m.py",))
    mutants = script.read_mutants(work)
    assert {m.key for m in mutants.values()} >= {"dsweb_ref.m.f | return q + 1 → return q - 1",
                                                 "dsweb_ref.m.f | return q + 1 → return q + 2"}
    assert all(m.module == "dsweb_ref.m" for m in mutants.values())  # other.py copied, not mutated
    assert (work / "mutants" / "dsweb_ref" / "other.py").read_text(encoding="utf-8").startswith("def g")


def test_check_fails_on_a_judgement_no_generated_mutant_matches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dsweb_ref").mkdir()
    (tmp_path / "dsweb_ref" / "m.py").write_text("def f(q):\n    return q + 1\n", encoding="utf-8")
    (tmp_path / "scripts" / "mutation").mkdir(parents=True)
    listing = tmp_path / "equivalent.txt"
    listing.write_text("dsweb_ref.m.f | return q + 1 → return q - 1  # out of reach [protocol]: q is never passed\n",
                       encoding="utf-8")
    monkeypatch.setattr(script, "ROOT", tmp_path)
    monkeypatch.setattr(script, "EQUIVALENT", listing)
    monkeypatch.setattr(sys, "argv", ["mutation_score.py", "--check", "--modules", "dsweb_ref/m.py"])
    assert script.main() == 0
    assert "0 stale" in capsys.readouterr().out
    listing.write_text("dsweb_ref.m.f | return q + 1 → return q - 1  # out of reach [protocol]: q is never passed\n"
                       "dsweb_ref.m.f | return q + 1 → return q * 1  # seed-open: a line that is no longer there\n"
                       "dsweb_ref.gone.f | return q  # seed-open: a module outside the scope\n", encoding="utf-8")
    assert script.main() == 3
    err = capsys.readouterr().err
    assert "stale judgement" in err and "dsweb_ref.gone.f" in err
    assert "dsweb_ref.m.f | return q + 1 → return q * 1" in err


SCOPE = [f"pkg.{m}.x_f__mutmut_{i}" for m in ("a", "b", "c") for i in range(1, 41)]


def test_the_sample_is_a_function_of_the_scope_its_size_and_its_seed() -> None:
    drawn = script.draw(SCOPE, 12, 0)
    assert len(drawn) == 12 == len(set(drawn)) and set(drawn) <= set(SCOPE)
    assert script.draw(list(reversed(SCOPE)), 12, 0) == drawn  # the scope's order does not matter: it is sorted
    assert script.draw(set(SCOPE), 12, 0) == drawn
    assert script.draw(SCOPE, 12, 1) != drawn  # another seed, another sample
    assert script.draw(SCOPE, 12, 0) == sorted(__import__("random").Random(0).sample(sorted(SCOPE), 12))


def test_a_sample_larger_than_the_scope_takes_every_mutant() -> None:
    assert script.draw(SCOPE, len(SCOPE), 5) == sorted(SCOPE)
    assert script.draw(SCOPE, 10_000, 5) == sorted(SCOPE)


def test_the_wilson_interval_matches_the_textbook_value() -> None:
    low, high = script.wilson(45, 50)  # 0.90: Wilson 95% interval 0.7864 to 0.9565
    assert low == pytest.approx(0.7864, abs=1e-4) and high == pytest.approx(0.9565, abs=1e-4)
    low, high = script.wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)  # never a zero-width interval at the edge
    assert script.wilson(0, 0) == (0.0, 1.0)


def test_a_sampled_run_judges_only_the_judgements_its_sample_can_test(tmp_path: Path) -> None:
    mutants = _mutants(tmp_path)
    other = "pkg.other.x_k__mutmut_1"  # a module of the scope the sample draws nothing from
    mutants[other] = script.Mutant(other, "pkg.other.k", "return 1 → return 2", message_only=False)
    listing = tmp_path / "equivalent.txt"
    listing.write_text(
        "pkg.mod.f | if not q: → if q:  # program-equivalent: claimed, and its mutant is sampled and killed\n"
        "pkg.mod.C.g | return {'code': 1} → return {'CODE': 1}  # out of reach [protocol]: not sampled\n"
        "pkg.mod.h | *  # out of reach [protocol]: h is not sampled\n"
        "pkg.other.k | return 1 → return 2  # seed-open: a module not sampled at all\n"
        "pkg.mod.f | if q: → if not q:  # seed-open: no mutant of the scope makes this change\n"
        "pkg.other.k | return 1 → return 3  # seed-open: nor this one, in a module the sample missed\n",
        encoding="utf-8")
    codes: dict[str, int | None] = {"pkg.mod.x_f__mutmut_5": 1, "pkg.mod.x_f__mutmut_3": 0}  # the sample
    summary = script.summarise(codes, script.judged_equivalent(listing), mutants, sampled=True)  # type: ignore[arg-type]
    assert summary.contradicted == ["pkg.mod.f | if not q: → if q:"]  # inside the sample and killed
    # Outside the sample: neither stale nor contradicted; a key no generated mutant makes is stale all the same,
    # whether or not the sample drew from its module.
    assert summary.stale == ["pkg.mod.f | if q: → if not q:", "pkg.other.k | return 1 → return 3"]
    assert summary.killed == ["pkg.mod.x_f__mutmut_5"] and summary.real == ["pkg.mod.x_f__mutmut_3"]
    assert summary.equivalent == []  # the unsampled mutants' judgements take no part in the figures
    # Without `sampled`, the same verdicts read as a full run of the sample's modules only would.
    full = script.summarise(codes, script.judged_equivalent(listing), {n: mutants[n] for n in codes})  # type: ignore[arg-type]
    assert "pkg.mod.C.g | return {'code': 1} → return {'CODE': 1}" in full.stale


def test_a_sampled_report_prints_estimates_with_intervals_per_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / ".mutation" / "sample"
    _write_run(work, {"pkg.a.x_f__mutmut_1": 1, "pkg.a.x_f__mutmut_2": 0, "pkg.a.x_f__mutmut_3": None}, "pkg.a",
               "def x_f__mutmut_orig(q):\n    return q\n\ndef x_f__mutmut_1(q):\n    return None\n\n"
               "def x_f__mutmut_2(q):\n    return q or q\n\ndef x_f__mutmut_3(q):\n    return q and q\n")
    _write_run(work, {"pkg.b.x_g__mutmut_1": 1, "pkg.b.x_g__mutmut_2": None}, "pkg.b",
               "def x_g__mutmut_orig(q):\n    return q + 1\n\ndef x_g__mutmut_1(q):\n    return q - 1\n\n"
               "def x_g__mutmut_2(q):\n    return q + 2\n")
    sampled = ["pkg.a.x_f__mutmut_1", "pkg.a.x_f__mutmut_2", "pkg.b.x_g__mutmut_1"]
    (work / "sample.json").write_text(json.dumps({"size": 3, "seed": 0, "scope": 5, "names": sampled}),
                                      encoding="utf-8")
    listing = tmp_path / "equivalent.txt"
    listing.write_text("pkg.b.g | return q + 1 → return q + 2  # out of reach [protocol]: an unsampled mutant\n",
                       encoding="utf-8")
    monkeypatch.setattr(script, "ROOT", tmp_path)
    monkeypatch.setattr(script, "EQUIVALENT", listing)
    monkeypatch.setattr(sys, "argv", ["mutation_score.py", "--reuse", "--brief", "--work", "sample"])
    assert script.main() == 0  # the unsampled mutant's judgement is not stale
    printed = capsys.readouterr().out
    assert "SAMPLE ESTIMATE (not a full run): 3 of 5 mutants drawn uniformly, seed 0" in printed
    low, high = script.wilson(1, 2)
    assert (f"sample module pkg.a: 2 sampled of 3, 1 killed, 1 survived, 0 judged (program-equivalent 0, "
            f"seed-open 0, out of reach 0); raw_kill_rate 0.500 [{low:.3f}, {high:.3f}] (1/2)") in printed
    low, high = script.wilson(2, 3)
    assert f"estimate strict_score 0.667 [{low:.3f}, {high:.3f}] (2/3)" in printed
    assert "surviving sampled mutants by module: pkg.a 1" in printed
    # A sampled mutant the run left without a verdict: the figures would not be the draw's, so no report.
    (work / "sample.json").write_text(json.dumps({"size": 3, "seed": 0, "scope": 5,
                                                  "names": [*sampled[:2], "pkg.b.x_g__mutmut_2"]}), encoding="utf-8")
    assert script.main() == 2
    assert "does not match the draw" in capsys.readouterr().err


def test_the_scratch_copy_holds_every_top_level_entry_and_the_project_s_own_metadata(tmp_path: Path) -> None:
    # The unit tests read the repository's files (README, mkdocs.yml, scripts/, the project's metadata):
    # a scratch copy missing one fails mutmut's first run, and the --unit mode with it.
    work = tmp_path / "work"
    script.prepare(work, ("dsweb_ref/tools/_summary.py",), ["tests"])
    visible = {p.name for p in ROOT.iterdir() if not p.name.startswith(".") and p.name != "pyproject.toml"}
    assert visible <= {p.name for p in work.iterdir()}
    assert (work / ".ci" / "run").is_file() and not (work / ".ci" / "venv").exists()
    data = tomllib.loads((work / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["license"] == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]
    assert data["tool"]["mutmut"]["only_mutate"] == ["dsweb_ref/tools/_summary.py"]
    assert set(data["tool"]["mutmut"]["also_copy"]) >= {"scripts", "mkdocs.yml", "LICENSE", ".ci", "mutation_tests"}
    assert data["tool"]["pytest"]["ini_options"]["pythonpath"] == ["."]  # the mode's, not the project's


def test_the_certification_scope_holds_every_seed_002_and_003_module() -> None:
    """Issue 24: the score covers all of seed 002 (the evidence pipeline, netguard) and seed 003 (the
    standalone search); a module missing from the scope makes its judgements read as stale."""
    scope = {p for pattern in script.CERT_MODULES for p in ROOT.glob(pattern)}
    package = ROOT / "dsweb_ref"
    seed_modules = {
        *package.glob("tools/*evidence*.py"), *package.glob("netguard/*.py"), *package.glob("standalone_*.py"),
        *package.glob("providers/*standalone*.py"), *package.glob("tools/standalone_*.py"),
        package / "providers" / "http_fetch.py", package / "_secrets.py",
    }
    assert seed_modules - scope == set()


# The installed package's pytest plugins would import a tiny package's missing modules.
TINY_KILLER = ["-p", "no:dsweb_emulator", "-p", "no:dsweb_certify", "killer/test_k.py"]


def _tiny_mutated_package(root: Path, module: str, killer_test: str) -> Path:
    """A one-module ``dsweb_ref`` under ``root``, its mutants generated as a run would, and a killer test
    (``killer/test_k.py`` under ``mutants/``, as TINY_KILLER names it); returns the killer's folder."""
    package = root / "dsweb_ref"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "m.py").write_text(module, encoding="utf-8")
    (root / "pyproject.toml").write_text('[tool.mutmut]\nsource_paths = ["dsweb_ref"]\n', encoding="utf-8")
    script.generate(root, ("dsweb_ref/m.py",))
    killer = root / "mutants" / "killer"
    killer.mkdir()
    (killer / "test_k.py").write_text(killer_test, encoding="utf-8")
    return killer


def test_a_survivor_of_a_function_run_only_at_import_is_run_again_mutated_from_the_start(tmp_path: Path) -> None:
    """mutmut forks each mutant's run from a process that imported the package unmutated, so a function run
    only at import (a module-level table) is never run mutated and all its mutants "survive"."""
    killer = _tiny_mutated_package(
        tmp_path, "def _double(x):\n    return x * 2\n\n\nTABLE = _double(3)\n\n\ndef f(q):\n    return q + TABLE\n",
        "from dsweb_ref.m import f\n\n\ndef test_f():\n    assert f(1) == 7\n")
    mutants = script.read_mutants(tmp_path)
    assert script.import_time_functions(tmp_path) == {"dsweb_ref.m.x__double"}
    at_import = {n for n in mutants if ".x__double__mutmut_" in n}
    assert at_import and at_import != set(mutants)
    codes: dict[str, int | None] = dict.fromkeys(mutants, 0)  # as mutmut reports them: every one "survived"
    again = script.recheck_import_time(tmp_path, codes, TINY_KILLER, dict(os.environ))
    assert set(again) == at_import  # f runs during the tests: mutmut's own verdict on its mutants stands
    assert all(code in script.KILLED for code in again.values()), again
    # A killer that fails unmutated proves nothing: no verdict is replaced.
    (killer / "test_k.py").write_text("def test_f():\n    assert False\n", encoding="utf-8")
    assert script.recheck_import_time(tmp_path, codes, TINY_KILLER, dict(os.environ)) == {}
    # Nor does one that passes the baseline, then fails whatever is active (flaky, or the machine): a failing
    # test must pass again unmutated before its failure counts as a kill.
    runs = tmp_path / "runs.txt"
    (killer / "test_k.py").write_text(
        f"from pathlib import Path\n\n\ndef test_f():\n    p = Path({str(runs)!r})\n"
        "    n = int(p.read_text()) + 1 if p.exists() else 1\n    p.write_text(str(n))\n    assert n == 1\n",
        encoding="utf-8")
    assert script.recheck_import_time(tmp_path, codes, TINY_KILLER, dict(os.environ)) == {}
    assert int(runs.read_text(encoding="utf-8")) == 1 + 2 * len(at_import)  # baseline, then mutant and confirm


def test_an_import_time_mutant_that_stops_the_killer_before_any_test_is_killed_only_if_its_module_breaks(
        tmp_path: Path) -> None:
    """No test ran (the killer's conftest died importing the package), so no failed test can be rerun
    unmutated: the kill stands only when the mutant's own module fails to import with it active."""
    killer = _tiny_mutated_package(
        tmp_path, "def _make(n):\n    return list(range(n))\n\n\nROWS = _make(3)\n\n\ndef f():\n    return len(ROWS)\n",
        "from dsweb_ref.m import f\n\n\ndef test_f():\n    assert f() == 3\n")
    (killer / "conftest.py").write_text("import dsweb_ref.m  # noqa: F401\n", encoding="utf-8")
    mutants = script.read_mutants(tmp_path)
    breaking = {n for n, m in mutants.items() if "range(None)" in m.change or "list(None)" in m.change}
    assert breaking, {m.change for m in mutants.values()}
    again = script.recheck_import_time(tmp_path, dict.fromkeys(breaking, 0), TINY_KILLER, dict(os.environ))
    assert again == dict.fromkeys(breaking, 3)
    assert all(script._breaks_import(tmp_path, n, dict(os.environ)) for n in breaking)
    assert not script._breaks_import(tmp_path, "dsweb_ref.m.x_f__mutmut_1", dict(os.environ))
