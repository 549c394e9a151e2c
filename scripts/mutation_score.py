#!/usr/bin/env python3
"""Measured power: mutate the reference and count the mutants a killer rejects.

    python scripts/mutation_score.py            # the certification suite kills (seed-000/001 tools, providers)
    python scripts/mutation_score.py --unit     # the unit tests kill (issue 14's seven core modules)
    python scripts/mutation_score.py --modules dsweb_ref/tools/_merge.py    # a subset, while developing

The tool is mutmut 3 (dev extra). It mutates functions in place behind trampolines and runs, per mutant,
only the tests that called the mutated function, so a check that never reaches a function cannot be
charged with its mutants. The run happens in a scratch copy of the repository (``.mutation/<mode>``,
git-ignored), whose pyproject carries the mode's mutmut and pytest settings, so the project's own
configuration never names a killer.

Killers: ``--unit`` runs the unit tests (``tests/`` minus the certification, emulator and CLI tests,
which drive whole runs); the default runs ``scripts/mutation/test_certification_suite.py``, one test per
certification check against the in-process reference: the suite alone, not the unit tests.

Prints every surviving mutant (``mutmut show`` diff unless ``--brief``), how many survivors each kind of
judgement took, ``strict_score X`` (survivors judged out of the certification's reach counted as survived;
see ``kind_of``) and ``mutation_score X``:
killed / (mutants - judged equivalent). A survivor is judged equivalent (program-equivalent, unreachable,
or a behaviour the seeds leave open) in one of three ways, each printed with its reason:

1. By change, in ``scripts/mutation/equivalent.txt``: ``<function> | <change>  # reason``, where
   ``<function>`` is the dotted module + qualified name (``dsweb_ref.tools._merge.merge_results``) and
   ``<change>`` the mutated line(s) as the script prints them beside each survivor (``ast.unparse`` of
   the mutant's differing lines, comments dropped, several lines joined with `` ⏎ ``). This key survives
   edits elsewhere in the module; when the mutated line itself changes the entry goes stale and the
   mutant must be judged again, which is the point. Two mutants making the same change to two equal
   lines of one function share a key, so the reason must hold for both.
   ``<function> | *`` covers the survivors of a function that no killer test reaches at all (mutmut's
   "no tests"), and only those: the reason must say why the certification cannot reach it.
2. By name, in the same file: ``<mutant name>  # reason``. Brittle (mutmut numbers mutants by position,
   so names shift when the function changes); kept for old entries.
3. Automatically, as ``seed-open: error message text``: every difference between the mutant and the
   original is, inside the message argument of ``WebError(code, message)`` or of a module function whose
   body is only ``return WebError(<code>, <message built from its parameters>)`` (``_invalid(message)``),
   a piece of the message's own text changed: a string literal there (or a literal part of an f-string
   or ``+`` there) replaced by another string or None, or the message or an f-string's shown expression
   replaced by None. The seeds fix error codes, never message wording. Anything deeper is never
   classified this way (the arguments of a call inside a message, e.g. what ``scrub_secrets`` is given:
   changing them could leak a secret), nor a change to the code argument; and a check that does enforce
   message text kills the mutant before any classification applies (only survivors are classified).

A listed entry that names a function of the run but matches no mutant is reported stale, not counted.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "scripts" / "mutation" / "equivalent.txt"

# The seed-000/001 tools (web_search, web_fetch and their helpers) and the DeepSeek providers: the scope
# issue 8 measures and equivalent.txt judges. The seed-002 evidence and seed-003 standalone tools are not
# in it yet, nor tools/_summary.py (the summary-budget opt-in): their survivors are unjudged; name them
# with --modules to measure them.
CERT_MODULES = (
    "dsweb_ref/tools/_merge.py",
    "dsweb_ref/tools/_batch.py",
    "dsweb_ref/tools/_result.py",
    "dsweb_ref/tools/_render.py",
    "dsweb_ref/tools/web_search.py",
    "dsweb_ref/tools/web_fetch.py",
    "dsweb_ref/tools/_fetch_render.py",
    "dsweb_ref/providers/_deepseek_http.py",
    "dsweb_ref/providers/deepseek_official.py",
    "dsweb_ref/providers/deepseek_search_api.py",
    "dsweb_ref/providers/deepseek_fetch_api.py",
)
UNIT_MODULES = (
    "dsweb_ref/tools/_merge.py",
    "dsweb_ref/tools/_batch.py",
    "dsweb_ref/tools/_render.py",
    "dsweb_ref/tools/web_search.py",
    "dsweb_ref/providers/deepseek_official.py",
    "dsweb_ref/providers/deepseek_search_api.py",
    "dsweb_ref/netguard/addresses.py",
)
CERT_TESTS = ["mutation_tests/test_certification_suite.py"]
UNIT_TESTS = [
    "tests",
    "--ignore=tests/certification",
    "--ignore=tests/emulator",
    "--ignore=tests/test_cli_schemas.py",
    "--ignore=tests/test_cli_tools.py",
    "--ignore=tests/test_mutation_score.py",
]
COPIED = ("dsweb_ref", "schemas", "cassettes", "tests", "README.md")


def _toml_list(items: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def prepare(work: Path, modules: tuple[str, ...], tests: list[str]) -> None:
    """A scratch copy of the repository with the mode's mutmut and pytest settings."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, work / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif source.exists():
            shutil.copy2(source, work / name)
    shutil.copytree(ROOT / "scripts" / "mutation", work / "mutation_tests",
                    ignore=shutil.ignore_patterns("__pycache__", "*.txt"))
    (work / "pyproject.toml").write_text(
        "[tool.mutmut]\n"
        'source_paths = ["dsweb_ref"]\n'
        f"only_mutate = {_toml_list(modules)}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
        'pytest_add_cli_args = ["-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:randomly"]\n'
        'also_copy = ["schemas", "cassettes", "mutation_tests", "README.md"]\n'
        "use_git_change_detection = false\n"
        "\n[tool.pytest.ini_options]\n"
        'pythonpath = ["."]\n'
        'addopts = "-q --strict-markers"\n'
        "timeout = 300\n"
        'markers = ["live: talks to a real endpoint; never runs in CI"]\n',
        encoding="utf-8",
    )


def exit_codes(work: Path) -> dict[str, int | None]:
    codes: dict[str, int | None] = {}
    for meta in sorted((work / "mutants").rglob("*.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        codes.update(data.get("exit_code_by_key", {}))
    return codes


@dataclass(frozen=True)
class Mutant:
    """A mutant as the judge sees it: its function, its change, and whether only message text changed."""

    name: str
    function: str  # dotted module + qualified name: dsweb_ref.tools.web_search.SearchToolSettings.__post_init__
    change: str  # the mutated line(s), ast.unparse-normalised
    message_only: bool

    @property
    def key(self) -> str:
        return f"{self.function} | {self.change}"


@dataclass(frozen=True)
class Judgements:
    """``scripts/mutation/equivalent.txt``: entries by change (``function | change``) and by name."""

    by_change: dict[str, str]
    by_name: dict[str, str]

    def reason(self, mutant: Mutant) -> str | None:
        if mutant.name in self.by_name:
            return self.by_name[mutant.name]
        if mutant.key in self.by_change:
            return self.by_change[mutant.key]
        if mutant.message_only:
            return AUTO_MESSAGE
        return None


AUTO_MESSAGE = "seed-open: error message text (the seeds fix codes, not wording); classified automatically"


def judged_equivalent(path: Path = EQUIVALENT) -> Judgements:
    by_change: dict[str, str] = {}
    by_name: dict[str, str] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            entry, _, reason = line.rpartition("  # ")
            if not entry:
                entry, reason = line, "(no reason given)"
            if " | " in entry:
                function, _, change = entry.partition(" | ")
                by_change[f"{function.strip()} | {change.strip()}"] = reason.strip()
            else:
                by_name[entry.strip()] = reason.strip()
    return Judgements(by_change, by_name)


_MANGLED = re.compile(r"^x(?:ǁ(?P<cls>[^ǁ]+)ǁ|_)(?P<fn>.+)__mutmut_(?P<id>orig|\d+)$")
_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_Carriers = dict[str, tuple[set[int], set[str]]]


def _demangle(name: str) -> tuple[str, str] | None:
    """``xǁCǁf__mutmut_3`` -> (``C.f``, ``3``); None for a name mutmut did not generate."""
    match = _MANGLED.match(name)
    if match is None:
        return None
    qualified = f"{match['cls']}.{match['fn']}" if match["cls"] else match["fn"]
    return qualified, match["id"]


def _functions(tree: ast.AST) -> list[_FunctionNode]:
    return [n for n in ast.walk(tree) if isinstance(n, _FunctionNode)]


def _message_carriers(trees: list[ast.Module]) -> _Carriers:
    """``WebError`` and every function that only returns ``WebError(code, message)``: the positions
    and keywords of their message arguments."""
    carriers: _Carriers = {"WebError": ({1}, {"message"})}
    for tree in trees:
        for fn in _functions(tree):
            body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Call):
                continue
            call = body[0].value
            if not (isinstance(call.func, ast.Name) and call.func.id == "WebError") or len(call.args) != 2:
                continue
            in_code = {n.id for n in ast.walk(call.args[0]) if isinstance(n, ast.Name)}
            in_message = {n.id for n in ast.walk(call.args[1]) if isinstance(n, ast.Name)}
            params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            positions = {i for i, a in enumerate(params) if a in in_message and a not in in_code}
            if positions:
                demangled = _demangle(fn.name)
                name = demangled[0].rpartition(".")[2] if demangled else fn.name
                carriers[name] = (positions, {params[i] for i in positions})
    return carriers


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def only_message_text(orig: object, mutant: object, carriers: _Carriers) -> bool:
    """True when there is a difference and every difference sits in a message's own text: a string
    literal replaced by another string or None, or a shown expression replaced by None."""
    return _diff(orig, mutant, carriers, text=False) is True


def _diff(a: object, b: object, carriers: _Carriers, text: bool) -> bool | None:
    """None: no difference; True: differences only in message text; False: any other difference.

    ``text`` marks a position whose value is shown as message text: a carrier's message argument, the
    parts of an f-string or of a ``+`` there, an f-string's interpolated expression. Anything nested
    deeper (the arguments of a call inside a message, such as what ``scrub_secrets`` is given) is not
    text: changing it can change what the message leaks, so it is never judged automatically."""
    if isinstance(a, ast.Constant) and isinstance(b, ast.Constant):
        if a.value == b.value and type(a.value) is type(b.value):
            return None
        return text and isinstance(a.value, str) and (b.value is None or isinstance(b.value, str))
    if type(a) is not type(b):
        # Shown text replaced by None says less, and nothing it did not say before.
        return text and isinstance(a, ast.expr) and isinstance(b, ast.Constant) and b.value is None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        return _combine([_diff(x, y, carriers, text) for x, y in zip(a, b, strict=True)])
    if not isinstance(a, ast.AST) or not isinstance(b, ast.AST):
        return None if a == b else False
    if isinstance(a, ast.Call) and isinstance(b, ast.Call) and _callee(a) in carriers:
        positions, keywords = carriers[_callee(a)]
        if len(a.args) != len(b.args) or [k.arg for k in a.keywords] != [k.arg for k in b.keywords]:
            return False
        parts = [_diff(a.func, b.func, carriers, False)]
        parts += [_diff(x, y, carriers, i in positions) for i, (x, y) in enumerate(zip(a.args, b.args, strict=True))]
        parts += [_diff(x.value, y.value, carriers, x.arg in keywords)
                  for x, y in zip(a.keywords, b.keywords, strict=True)]
        return _combine(parts)
    shown: tuple[str, ...] = ()
    if text and isinstance(a, ast.JoinedStr):
        shown = ("values",)
    elif text and isinstance(a, ast.FormattedValue):
        shown = ("value",)
    elif text and isinstance(a, ast.BinOp) and isinstance(a.op, ast.Add):
        shown = ("left", "right")
    return _combine([_diff(getattr(a, f, None), getattr(b, f, None), carriers, f in shown)
                     for f in a._fields if f not in ("ctx", "type_comment")])


def _combine(parts: list[bool | None]) -> bool | None:
    if any(p is False for p in parts):
        return False
    return True if any(p is True for p in parts) else None


def _change(orig: _FunctionNode, mutant: _FunctionNode) -> str:
    """The mutated line(s) as ``ast.unparse`` renders them (comments dropped), joined with `` ⏎ ``."""
    demangled = _demangle(orig.name)
    name = demangled[0].rpartition(".")[2] if demangled else orig.name
    before: list[str] = []
    after: list[str] = []
    for fn, lines in ((orig, before), (mutant, after)):
        copy = ast.parse(ast.unparse(fn)).body[0]
        assert isinstance(copy, _FunctionNode)
        copy.name = name  # the def lines then differ only where the mutant changed one (a default)
        lines += ast.unparse(copy).splitlines()
    diff = [d for d in difflib.ndiff(before, after) if d[:2] in ("+ ", "- ")]
    added = [d[2:].strip() for d in diff if d.startswith("+ ")]
    return " ⏎ ".join(added) if added else " ⏎ ".join("-" + d[2:].strip() for d in diff)


def read_mutants(work: Path) -> dict[str, Mutant]:
    """Every mutant of the last run, from the trampolined sources mutmut wrote under ``mutants/``."""
    root = work / "mutants"
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(root.rglob("*.py"))}
    carriers = _message_carriers(list(trees.values()))
    out: dict[str, Mutant] = {}
    for path, tree in trees.items():
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        origs: dict[str, _FunctionNode] = {}
        variants: list[tuple[str, _FunctionNode]] = []
        for fn in _functions(tree):
            demangled = _demangle(fn.name)
            if demangled is not None:
                qualified, ident = demangled
                if ident == "orig":
                    origs[qualified] = fn
                else:
                    variants.append((qualified, fn))
        for qualified, fn in variants:
            orig = origs.get(qualified)
            if orig is not None:
                name = f"{module}.{fn.name}"
                out[name] = Mutant(name, f"{module}.{qualified}", _change(orig, fn),
                                   only_message_text(orig.body, fn.body, carriers))
    return out


KILLED = (1, 3, 24, 36, 37, 152, 255, -24)  # tests failed or errored, timed out, or mypy caught it
NO_TESTS = (5, 33)  # no killer test reaches the mutated function: a gap, counted as survived


@dataclass(frozen=True)
class Summary:
    killed: int
    real: list[str]  # survivors not judged equivalent (a gap in the killer), untested ones included
    equivalent: list[tuple[str, str]]  # survivors judged equivalent, with the reason
    other: list[str]  # not checked, suspicious, segfault: left out of the score, listed
    stale: list[str]  # equivalent.txt entries for a module of this run that match no mutant

    @property
    def score(self) -> float:
        """killed / non-equivalent mutants."""
        counted = self.killed + len(self.real)
        return self.killed / counted if counted else 0.0

    def kinds(self) -> dict[str, int]:
        """How many survivors each kind of judgement took (see :func:`kind_of`)."""
        counts: dict[str, int] = {}
        for _name, reason in self.equivalent:
            counts[kind_of(reason)] = counts.get(kind_of(reason), 0) + 1
        return counts

    @property
    def strict_score(self) -> float:
        """killed / mutants that are neither program-equivalent nor seed-open: survivors judged out of the
        certification's reach (no check or protocol route can observe them) count against it here."""
        reach = sum(n for kind, n in self.kinds().items() if kind == "out of reach")
        counted = self.killed + len(self.real) + reach
        return self.killed / counted if counted else 0.0


def kind_of(reason: str) -> str:
    """A judgement's kind: "program-equivalent" (no program can tell), "seed-open" (the seeds leave it open,
    so a check must accept it), or "out of reach" (a difference the certification cannot observe through
    the adapter protocol: unreachable code, configuration the protocol never passes, surfaces it does not
    carry). Only the first two are equivalence in the strict sense; ``strict_score`` counts the third."""
    head = reason.split(":", 1)[0].strip().lower()
    if head.startswith("program-equivalent"):
        return "program-equivalent"
    if head.startswith("seed-open"):
        return "seed-open"
    return "out of reach"


def summarise(codes: dict[str, int | None], judgements: Judgements,
              mutants: dict[str, Mutant] | None = None) -> Summary:
    mutants = mutants or {}
    killed = [n for n, c in codes.items() if c in KILLED]
    survived = sorted(n for n, c in codes.items() if c == 0 or c in NO_TESTS)
    other = sorted(n for n, c in codes.items() if c not in KILLED and c != 0 and c not in NO_TESTS)
    reasons: dict[str, str] = {}
    for name in survived:
        mutant = mutants.get(name) or Mutant(name, "", "", message_only=False)
        reason = judgements.reason(mutant)
        if reason is None and codes[name] in NO_TESTS:  # `function | *`: a function no check reaches
            reason = judgements.by_change.get(f"{mutant.function} | *")
        if reason is not None:
            reasons[name] = reason
    run_modules = {n.rsplit(".", 1)[0] for n in codes}
    keys = {m.key for m in mutants.values()}
    stale = [n for n in judgements.by_name if n not in codes and n.rsplit(".", 1)[0] in run_modules]
    functions = {m.function for m in mutants.values()}
    stale += [k for k in judgements.by_change if k not in keys and any(k.startswith(m + ".") for m in run_modules)
              and not (k.endswith(" | *") and k[:-4] in functions)]
    return Summary(
        killed=len(killed),
        real=[n for n in survived if n not in reasons],
        equivalent=[(n, reasons[n]) for n in survived if n in reasons],
        other=other,
        stale=sorted(stale),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--unit", action="store_true", help="the unit tests are the killer (issue 14's modules)")
    parser.add_argument("--modules", nargs="+", metavar="GLOB", help="mutate only these files (default: the mode's)")
    parser.add_argument("--max-children", type=int, default=2, help="parallel mutant runs (default 2)")
    parser.add_argument("--brief", action="store_true", help="list surviving mutants by name, without diffs")
    parser.add_argument("--reuse", action="store_true", help="report the last run of this mode without running")
    args = parser.parse_args()

    mode = "unit" if args.unit else "certification"
    work = ROOT / ".mutation" / mode
    modules = tuple(args.modules) if args.modules else (UNIT_MODULES if args.unit else CERT_MODULES)
    if not args.reuse:
        prepare(work, modules, UNIT_TESTS if args.unit else CERT_TESTS)
        # The killer's conftest loads the certification oracle from the unmutated copy (see its docstring).
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "DSWEB_PRISTINE_ROOT": str(work)}
        run = [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.max_children)]
        done = subprocess.run(run, cwd=work, env=env, check=False)
        if done.returncode != 0:
            print(f"mutmut run failed with status {done.returncode}", file=sys.stderr)
            return 2

    codes = exit_codes(work)
    mutants = read_mutants(work)
    summary = summarise(codes, judged_equivalent(), mutants)
    for name in summary.real:
        print(f"survived: {name}" + (" (no killer test reaches it)" if codes[name] in NO_TESTS else ""))
        if name in mutants:
            print(f"    key: {mutants[name].key}")
        if not args.brief:
            shown = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=work,
                                   capture_output=True, text=True, check=False)
            print(shown.stdout.rstrip())
    for name, reason in summary.equivalent:
        print(f"equivalent: {name}  # {reason}")
    for name in summary.other:
        print(f"not judged ({codes[name]}): {name}")
    for name in summary.stale:
        print(f"stale equivalent entry (no such mutant): {name}")
    print(f"mode {mode}: {len(codes)} mutants, {summary.killed} killed, {len(summary.real)} survived, "
          f"{len(summary.equivalent)} judged equivalent, {len(summary.other)} not judged")
    kinds = summary.kinds()
    print("judged: " + ", ".join(f"{kind} {kinds.get(kind, 0)}"
                                 for kind in ("program-equivalent", "seed-open", "out of reach")))
    print(f"mutation_score {summary.score:.3f}")
    print(f"strict_score {summary.strict_score:.3f}  (out-of-reach survivors counted as survived)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
