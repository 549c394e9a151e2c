#!/usr/bin/env python3
"""Measured power: mutate the reference and count the mutants a killer rejects.

    python scripts/mutation_score.py            # the certification suite kills (every seed module, see CERT_MODULES)
    python scripts/mutation_score.py --unit     # the unit tests kill (issue 14's seven core modules)
    python scripts/mutation_score.py --modules dsweb_ref/tools/_summary.py    # a subset, while developing
    python scripts/mutation_score.py --check    # judge equivalent.txt against freshly generated mutants, no run
    python scripts/mutation_score.py --work netguard --modules 'dsweb_ref/netguard/*.py'   # one group of a long run
    python scripts/mutation_score.py --sample 400 --seed 0 --work sample   # an estimate from 400 random mutants

The tool is mutmut 3 (dev extra). It mutates functions in place behind trampolines and runs, per mutant,
only the tests that called the mutated function, so a check that never reaches a function cannot be
charged with its mutants. The run happens in a scratch copy of the repository (``.mutation/<mode>``,
git-ignored), whose pyproject carries the mode's mutmut and pytest settings, so the project's own
configuration never names a killer.

Killers: ``--unit`` runs the unit tests (``tests/`` minus the certification, emulator and CLI tests,
which drive whole runs); the default runs ``scripts/mutation/test_certification_suite.py``, one test per
certification check against the in-process reference: the suite alone, not the unit tests.

mutmut imports the package once, unmutated, and forks every mutant's run from that process, so a function
that runs only while a module is imported (a table built at module level) is never run mutated: its mutants
all "survive", whatever they break. After the run, the functions that run at import are found (a fresh
process imports every module with mutmut's call recording on), and each survivor of one of them is run
again in a fresh process whose mutant is active from the start. Only a kill replaces mutmut's verdict, and
only a proven one: the tests that failed pass again unmutated (so a flaky check kills nothing), or, when no
test ran (collection or the killer's conftest died: an error, 3), the mutant's own module fails to import
with it active. A timeout is reported as one (TIMEOUTS); any other exit leaves mutmut's verdict.
The killer must first pass that way with no mutant, or no verdict is replaced; a probe that fails says so
and changes nothing. The reruns are kept in the scratch copy (``import_time.json``) for ``--reuse``.

Prints every surviving mutant (``mutmut show`` diff unless ``--brief``), then, overall and per module,
``raw_kill_rate`` (killed / every mutant with a verdict: no judgement at all), ``strict_score`` (killed /
mutants that are neither program-equivalent nor seed-open: survivors judged out of reach count as
survived) and ``mutation_score`` (killed / mutants not judged equivalent of any kind).

The judgement rules (fixed before any run; the script enforces them and exits 3 when one is broken):

1. Judgements are keyed by change, never by mutant name (mutmut numbers mutants by position, so a name
   silently moves to another mutant when its function changes). One line of
   ``scripts/mutation/equivalent.txt`` per judgement: ``<function> | <change>  # <kind>: <reason>``, where
   ``<function>`` is the dotted module + qualified name (``dsweb_ref.tools._merge.merge_results``) and
   ``<change>`` is ``<original line(s)> → <mutated line(s)>`` as the script prints it beside each survivor
   (``ast.unparse`` of the differing lines, comments dropped, several lines joined with `` ⏎ ``). Two
   mutants making the same change to two equal lines of one function share a key, so the reason must
   hold for both.
   ``<function> | *`` covers only the survivors of a function no killer test reaches at all (mutmut's
   "no tests"). A line without `` | `` (a mutant name) is refused.
2. A judgement is stale, and the run fails, when its key matches no mutant of a module the run mutated
   (the line it judged changed: judge the new mutant again) or matches a mutant the killer killed (the
   judgement is wrong or no longer needed: delete it) or a change the classifier judges message text
   (rule 4: that judgement is the classifier's); a ``| *`` judgement fails when a test reached the
   function. With ``--unit`` only a killed "program-equivalent" judgement fails (unit tests may pin what
   the certification cannot observe or must accept). ``--check`` generates the mutants without running a
   test (minutes, not hours) and fails on every judgement no mutant of the scope makes.
3. Three kinds, named by the reason's head:
   ``program-equivalent: <why>`` (no program can tell the mutant from the original),
   ``seed-open: <why>`` (the seeds leave the behaviour open, so a check must accept it), and
   ``out of reach [<route>, ...]: <why>`` (a difference the certification cannot observe), where each
   ``<route>`` is one of ROUTES and names a route that cannot observe the difference and the reason says
   why. Any other head is refused. Out-of-reach survivors count against ``strict_score``. A survivor
   that some route can observe (a page, an answer body, a call the protocol can make) is never judged
   out of reach: it stays a survivor, a candidate check, and counts against every score.
4. "Message text" is the classifier's judgement alone: an entry whose reason calls the change message
   text (``message text``, ``message wording``) is refused. The classifier judges a survivor
   ``seed-open: error message text`` automatically when every difference between the mutant and the
   original sits in a text position and only changes words there. Text positions: the message argument
   of ``WebError(code, message)``; the argument of a carrier (a module function whose body is only
   message locals and ``return WebError(<code>, <message>)``, such as ``_invalid``) for a parameter read
   at least once and only in text positions; inside text, an f-string's parts and its shown values
   without a format spec, both branches of ``a if c else b`` (never the condition), both sides of a
   ``+``, and the values of a literal table indexed there (``{"str": "a string"}[kind]``; never its
   keys or the index); and the value of a message local, a local bound only by plain assignments
   (``lead, hint = ("service error", ...)``) and read at least once and only in text positions outside
   any nested scope. A change there counts when a string literal becomes another string, or when a
   value becomes None where None can still be shown (not a ``+`` operand, not a table, not a tuple that
   is unpacked) and the value it replaces could neither raise nor act (a constant, a name, an attribute,
   ``type(x).__name__``, or an f-string, branch or tuple of those; never a call, index or format spec).
   Carriers are matched by module-qualified name: a call resolves through the calling module's own
   definitions and ``from ... import`` lines, never by bare name across modules; method calls are never
   carriers. Anything else is never classified this way (the arguments of a call inside a message, e.g.
   what ``scrub_secrets`` is given: changing them could leak a secret), nor a change to the code; and a
   check that does enforce message text kills the mutant first. A hand judgement of a change the
   classifier judges is stale (rule 2). tests/test_mutation_classifier_soundness.py holds the shapes
   that must never be classified.

A sampled run (``--sample N --seed S``, seed 0 by default) estimates the three figures when the whole scope
is too slow to run (about 7,750 mutants: 11-16 h on two cores). The rule, fixed before the run so a reviewer
can redo the draw: generate every mutant of the scope (as ``--check`` does), sort their names, take
``random.Random(S).sample(names, N)`` (every mutant when N is at least the scope), and run mutmut on those
names only. The figures are computed over the sampled mutants alone, with the same judgements, and each is
printed with its 95% Wilson interval and counts, overall and per module. Each figure is a proportion among
the sampled mutants of its own denominator (every verdict; not program-equivalent nor seed-open; not judged
at all), and those form a uniform sample of the scope's mutants of that class, so the interval holds for
each (the draw is without replacement, which only narrows the true interval). ``--reuse`` reports the draw
recorded in the scratch copy (``sample.json``).

Rule 2 in a sampled run: the whole scope is generated, so a judgement whose key matches no mutant of the
scope is stale as in a full run (no sampling excuses it, and none is needed to see it). But a verdict
exists only for a sampled mutant, so only a judgement whose mutant was sampled can be contradicted (its
mutant killed), and a ``| *`` judgement only by a sampled mutant of its function that a test reached. A
judgement whose mutants were not drawn is not judged by the run: neither stale nor contradicted, and it
changes no figure.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist

import tomlkit

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "scripts" / "mutation" / "equivalent.txt"

# Every module a seed decides (issue 24 item 5): the seed-000/001 tools and DeepSeek providers (issue 8's
# scope), the seam, settings and runtime, the secret scrubber, the HTTP fetch provider, scheduling and the
# client pool, the summary budget, seed 002 (evidence tools, netguard) and seed 003 (standalone search).
CERT_MODULES = (
    "dsweb_ref/_service.py",
    "dsweb_ref/settings.py",
    "dsweb_ref/runtime.py",
    "dsweb_ref/_secrets.py",
    "dsweb_ref/providers/http_fetch.py",
    "dsweb_ref/providers/_scheduler.py",
    "dsweb_ref/providers/_client_pool.py",
    "dsweb_ref/tools/_summary.py",
    "dsweb_ref/tools/evidence_search.py",
    "dsweb_ref/tools/_evidence_guard.py",
    "dsweb_ref/tools/_evidence_rank.py",
    "dsweb_ref/tools/_evidence_text.py",
    "dsweb_ref/tools/_evidence_passages.py",
    "dsweb_ref/tools/_evidence_units.py",
    "dsweb_ref/netguard/*.py",
    "dsweb_ref/tools/standalone_search.py",
    "dsweb_ref/providers/standalone_messages.py",
    "dsweb_ref/providers/standalone_responses.py",
    "dsweb_ref/standalone_accounts.py",
    "dsweb_ref/standalone_config.py",
    "dsweb_ref/providers/_standalone.py",
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
    "--ignore=tests/test_wheel.py",  # builds and installs the wheel: no unit of a mutated module
    # needs a git checkout (the scratch copy is none): repository hygiene, no unit of a mutated module
    "--deselect=tests/test_spec_catalogue.py::test_no_tracked_file_points_outside_the_repository",
]
# What the scratch copy holds besides its own pyproject: every top-level entry of the repository, since the
# unit tests read the repository's files (README, mkdocs.yml, scripts/, .ci/, ...).
COPIED = ("dsweb_ref", "schemas", "cassettes", "tests", "scripts", ".ci", "README.md", "LICENSE", "mkdocs.yml")


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
            shutil.copytree(source, work / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "venv"))
        elif source.exists():
            shutil.copy2(source, work / name)
    shutil.copytree(ROOT / "scripts" / "mutation", work / "mutation_tests",
                    ignore=shutil.ignore_patterns("__pycache__", "*.txt"))
    # The project's own pyproject (tests read its metadata), its pytest settings replaced by the mode's.
    own = ROOT / "pyproject.toml"
    project = tomlkit.parse(own.read_text(encoding="utf-8") if own.exists() else "")
    tool = project.setdefault("tool", {})
    assert isinstance(tool, dict)
    tool["mutmut"] = {
        "source_paths": ["dsweb_ref"],
        "only_mutate": list(modules),
        "pytest_add_cli_args_test_selection": list(tests),
        "pytest_add_cli_args": ["-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:randomly"],
        "also_copy": [*(name for name in COPIED if name != "dsweb_ref"), "mutation_tests"],
        "use_git_change_detection": False,
    }
    tool["pytest"] = {"ini_options": {
        "pythonpath": ["."],
        "addopts": "-q --strict-markers",
        "timeout": 300,
        "markers": ["live: talks to a real endpoint; never runs in CI", "slow: a whole run", "loaded: opt-in"],
    }}
    (work / "pyproject.toml").write_text(tomlkit.dumps(project), encoding="utf-8")


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

    @property
    def module(self) -> str:
        return module_of(self.name)


def module_of(mutant_name: str) -> str:
    """``dsweb_ref.tools._merge.x_merge_results__mutmut_3`` -> ``dsweb_ref.tools._merge``."""
    return mutant_name.rsplit(".", 1)[0]


# The routes by which the certification observes an implementation. An "out of reach" judgement names the
# ones that cannot observe the difference (rule 3 of the docstring).
ROUTES = {
    "protocol": "the adapter protocol: configure, tool calls and the results they return",
    "search-api": "the emulator's Search API endpoint: the requests it records, the answers it scripts",
    "fetch-api": "the emulator's Fetch API endpoint: the requests it records, the answers it scripts",
    "messages": "the emulator's Messages and Responses endpoints: the requests it records, the answers it scripts",
    "test-network": "the test network's hosts and pages (web_fetch targets, the network guard's checks)",
}
_OUT_OF_REACH = re.compile(r"^out of reach \[(?P<routes>[^\]]+)\]:\s*\S")
# Rule 4: a judgement of message text is the classifier's alone.
_CLAIMS_MESSAGE = re.compile(r"\bmessage (?:text|wording)\b", re.IGNORECASE)
AUTO_MESSAGE = "seed-open: error message text (the seeds fix codes, not wording); classified automatically"


def kind_of(reason: str) -> str | None:
    """A judgement's kind, from its head: "program-equivalent" (no program can tell), "seed-open" (the seeds
    leave it open, so a check must accept it), "out of reach" (a difference the named routes cannot observe);
    None when the head is none of them or an out-of-reach reason names no known route."""
    if reason.startswith("program-equivalent:"):
        return "program-equivalent"
    if reason.startswith("seed-open:"):
        return "seed-open"
    match = _OUT_OF_REACH.match(reason)
    if match and all(r.strip() in ROUTES for r in match["routes"].split(",")):
        return "out of reach"
    return None


@dataclass(frozen=True)
class Judgements:
    """``scripts/mutation/equivalent.txt``: judgements by change (``function | change``), and the lines
    refused by the rules (by name, an unknown kind, a claim of message text), each with why."""

    by_change: dict[str, str]
    refused: tuple[str, ...] = ()

    def reason(self, mutant: Mutant) -> str | None:
        if mutant.key in self.by_change:
            return self.by_change[mutant.key]
        if mutant.message_only:
            return AUTO_MESSAGE
        return None


def refusal(entry: str, reason: str) -> str | None:
    """Why a line of equivalent.txt breaks the judgement rules, or None when it keeps them."""
    if " | " not in entry:
        return "judged by mutant name; mutmut renumbers mutants, so key it by change: <function> | <change>"
    if kind_of(reason) is None:
        return ("no known kind: the reason must start 'program-equivalent:', 'seed-open:' or "
                f"'out of reach [<route>, ...]:' with routes from {', '.join(ROUTES)}")
    if _CLAIMS_MESSAGE.search(reason):
        return ("claims message text, which only the classifier judges: "
                "give the change's real reason or leave it a survivor")
    return None


def judged_equivalent(path: Path | None = None) -> Judgements:
    path = path or EQUIVALENT
    by_change: dict[str, str] = {}
    refused: list[str] = []
    if path.exists():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            entry, _, reason = line.rpartition("  # ")
            if not entry:
                entry, reason = line, ""
            entry, reason = entry.strip(), reason.strip()
            why = refusal(entry, reason)
            if why is not None:
                refused.append(f"{path.name}:{number}: {why}: {entry}")
                continue
            function, _, change = entry.partition(" | ")
            by_change[f"{function.strip()} | {change.strip()}"] = reason
    return Judgements(by_change, tuple(refused))


_MANGLED = re.compile(r"^x(?:ǁ(?P<cls>[^ǁ]+)ǁ|_)(?P<fn>.+)__mutmut_(?P<id>orig|\d+)$")
_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_Carriers = dict[str, tuple[set[int], set[str]]]  # module-qualified name -> message positions, keywords


def _demangle(name: str) -> tuple[str, str] | None:
    """``xǁCǁf__mutmut_3`` -> (``C.f``, ``3``); None for a name mutmut did not generate."""
    match = _MANGLED.match(name)
    if match is None:
        return None
    qualified = f"{match['cls']}.{match['fn']}" if match["cls"] else match["fn"]
    return qualified, match["id"]


def _functions(tree: ast.AST) -> list[_FunctionNode]:
    return [n for n in ast.walk(tree) if isinstance(n, _FunctionNode)]


def _top_level(tree: ast.Module) -> list[tuple[str, _FunctionNode]]:
    """The module's own functions by plain name: unmutated ones and mutmut's copies of the originals."""
    out = []
    for node in tree.body:
        if not isinstance(node, _FunctionNode):
            continue
        demangled = _demangle(node.name)
        if demangled is None:
            out.append((node.name, node))
        elif demangled[1] == "orig" and "." not in demangled[0]:
            out.append((demangled[0], node))
    return out


def module_names(module: str, tree: ast.Module) -> dict[str, str]:
    """What a bare name called in ``module`` refers to: its own top-level functions and its
    ``from ... import`` names, module-qualified (``_invalid`` -> ``dsweb_ref.tools.web_fetch._invalid``)."""
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            parts = module.split(".")
            base = parts[: len(parts) - node.level] if node.level else []
            source = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                names[alias.asname or alias.name] = f"{source}.{alias.name}"
    for name, _fn in _top_level(tree):
        names[name] = f"{module}.{name}"
    return names


def _is_web_error(func: ast.expr, names: dict[str, str]) -> bool:
    if isinstance(func, ast.Name):
        target = names.get(func.id, func.id)
        return target == "WebError" or target.endswith(".WebError")
    return isinstance(func, ast.Attribute) and func.attr == "WebError"


def _message_carriers(trees: dict[str, ast.Module]) -> _Carriers:
    """``WebError`` and every module function whose body is only message locals (see
    :func:`message_locals`) and ``return WebError(code, message)``, by module-qualified name: the
    positions and keywords of its parameters read at least once and only where a value is shown as
    message text (never in the code, a condition, an index, a format spec, a ``+`` or a call such
    as a scrubber's), so another string or None given there changes only the words."""
    carriers: _Carriers = {"WebError": ({1}, {"message"})}
    for module, tree in trees.items():
        names = module_names(module, tree)
        for name, fn in _top_level(tree):
            body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if not body or not isinstance(body[-1], ast.Return) or not isinstance(body[-1].value, ast.Call):
                continue
            call = body[-1].value
            if not _is_web_error(call.func, names) or len(call.args) != 2:
                continue
            local = message_locals(fn, carriers, names)
            if not all(isinstance(s, ast.Assign) and _assigned(s) <= local for s in body[:-1]):
                continue
            params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            reads: dict[str, list[bool]] = {}
            _text_reads(fn.body, carriers, names, local, False, reads, frozenset(params))
            positions = {i for i, a in enumerate(params) if reads.get(a) and all(reads[a])}
            if positions:
                carriers[f"{module}.{name}"] = (positions, {params[i] for i in positions})
    return carriers


def _assigned(stmt: ast.Assign) -> set[str]:
    """The names a plain ``name = ...`` or ``a, b = (..., ...)`` binds; an empty set for any other shape."""
    if len(stmt.targets) != 1:
        return set()
    target = stmt.targets[0]
    if isinstance(target, ast.Name):
        return {target.id}
    if (isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple)
            and len(target.elts) == len(stmt.value.elts)
            and all(isinstance(e, ast.Name) for e in target.elts)
            and not any(isinstance(e, ast.Starred) for e in stmt.value.elts)):
        return {e.id for e in target.elts if isinstance(e, ast.Name)}
    return set()


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp, ast.ClassDef)


def message_locals(fn: _FunctionNode, carriers: _Carriers, names: dict[str, str]) -> frozenset[str]:
    """The function's locals whose value is only ever shown as message text: bound only by plain
    assignments (``name = <value>`` or ``a, b = (<value>, <value>)``), read at least once, and read
    only where :func:`_positions` shows a value as text (a carrier's message, an f-string's shown
    value, another such local's value), never as a ``+`` operand or a table. Such a value can change
    only what a message says. Never a parameter, never a name a nested scope (function, lambda,
    comprehension, class body) uses, never one read anywhere else (a condition, a call's argument)."""
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
    plain: dict[str, int] = {}  # name -> how many plain assignments bind it
    nested: set[str] = set()
    stored: dict[str, int] = {}
    for node in ast.walk(fn):
        if node is not fn and isinstance(node, _SCOPES):
            nested |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stored[node.id] = stored.get(node.id, 0) + 1
        if isinstance(node, ast.Assign):
            for bound in _assigned(node):
                plain[bound] = plain.get(bound, 0) + 1
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            nested |= set(node.names)
    local = frozenset(n for n, count in plain.items()
                      if stored.get(n) == count and n not in params and n not in nested)
    while True:
        reads: dict[str, list[bool]] = {}
        _text_reads(fn.body, carriers, names, local, False, reads, local)
        keep = frozenset(n for n in local if reads.get(n) and all(reads[n]))
        if keep == local:
            return local
        local = keep


def _text_reads(node: object, carriers: _Carriers, names: dict[str, str], local: frozenset[str], text: bool,
                reads: dict[str, list[bool]], watched: frozenset[str], operand: bool = False) -> None:
    """Record, for each read of a ``watched`` name, whether it sits where :func:`_diff` takes another
    string or None for message text (a text position that is not an operand, see :func:`_positions`)."""
    if isinstance(node, list):
        for item in node:
            _text_reads(item, carriers, names, local, text, reads, watched, operand)
        return
    if not isinstance(node, ast.AST):
        return
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id in watched:
            reads.setdefault(node.id, []).append(text and not operand)
        return
    for value, shown, inner in _positions(node, carriers, names, local, text, operand):
        _text_reads(value, carriers, names, local, shown, reads, watched, inner)


_Position = tuple[object, bool, bool]  # a child (node or list), whether it is text, whether None breaks it


def _positions(node: ast.AST, carriers: _Carriers, names: dict[str, str], local: frozenset[str],
               text: bool, operand: bool) -> list[_Position]:
    """Each child of ``node`` with whether a value there is shown as message text and whether it is
    an operand (where None would raise: a ``+`` operand, a table indexed, and what is picked from
    them). The one place that says which positions are text, shared by :func:`_diff` and
    :func:`message_locals`."""
    fields = [f for f in node._fields if f not in ("ctx", "type_comment")]
    plain = [(getattr(node, f, None), False, False) for f in fields]
    if isinstance(node, ast.Call) and _callee(node, names) in carriers:
        places, keywords = carriers[_callee(node, names)]
        out: list[_Position] = [(node.func, False, False)]
        out += [(arg, i in places, False) for i, arg in enumerate(node.args)]
        out += [(k.value, k.arg in keywords, False) for k in node.keywords]
        return out
    if isinstance(node, ast.Assign) and _assigned(node) and _assigned(node) <= local:
        if isinstance(node.targets[0], ast.Name):
            return [(node.targets, False, False), (node.value, True, False)]
        value = node.value
        assert isinstance(value, ast.Tuple)
        return [(node.targets, False, False)] + [(elt, True, False) for elt in value.elts]
    if not text:
        return plain
    if isinstance(node, ast.JoinedStr):
        return [(node.values, True, False)]
    if isinstance(node, ast.FormattedValue):
        # Under a format spec (``:g``) another value may not format at all.
        return [(node.value, node.format_spec is None, False), (node.format_spec, False, False)]
    if isinstance(node, ast.IfExp):  # which text is shown; the test itself is never text
        return [(node.test, False, False), (node.body, True, operand), (node.orelse, True, operand)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [(node.left, True, True), (node.op, False, False), (node.right, True, True)]
    if isinstance(node, ast.Subscript):
        # A wording picked from a literal table ({"str": "a string"}[kind]): the table's values are
        # text, the index is not, and neither the table nor what it holds may be None.
        table = isinstance(node.value, (ast.Dict, ast.Tuple, ast.List))
        return [(node.value, table, True), (node.slice, False, False)]
    if isinstance(node, ast.Dict):  # keys choose; a ``**`` entry (key None) must stay a mapping
        keys: list[_Position] = [(k, False, False) for k in node.keys]
        return keys + [(v, k is not None, operand) for k, v in zip(node.keys, node.values, strict=True)]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [(elt, not isinstance(elt, ast.Starred), operand) for elt in node.elts]
    return plain


def _callee(call: ast.Call, names: dict[str, str]) -> str:
    """The carrier a call names: ``WebError``, or a module-qualified function; "" for anything else
    (a method, an attribute of an object, a name the module neither defines nor imports)."""
    if _is_web_error(call.func, names):
        return "WebError"
    if isinstance(call.func, ast.Name):
        return names.get(call.func.id, "")
    return ""


def only_message_text(orig: object, mutant: object, carriers: _Carriers, names: dict[str, str] | None = None,
                      local: frozenset[str] = frozenset()) -> bool:
    """True when there is a difference and every difference sits in a message's own text: a string
    literal replaced by another string or None, or a shown expression replaced by None. ``names``: what
    the module's bare names refer to (:func:`module_names`); ``local``: the original function's message
    locals (:func:`message_locals`), whose assigned values are message text too."""
    return _diff(orig, mutant, carriers, names or {}, text=False, local=local) is True


def _pure(node: ast.expr) -> bool:
    """Whether evaluating ``node`` can neither raise nor act: a constant, a name, an attribute of a
    name, ``type(...)`` of one, or an f-string (no format spec), ``a if c else b`` or tuple of those.
    Only such a value may be replaced by None as message text; None in place of ``d["k"]`` or a call
    would skip a KeyError or an effect. (A plain attribute or ``format()`` of a name is taken as safe.)"""
    if isinstance(node, (ast.Constant, ast.Name)):
        return True
    if isinstance(node, ast.Attribute):
        return _pure(node.value)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"
            and len(node.args) == 1 and not node.keywords):
        return _pure(node.args[0])  # type(exc).__name__: type() of any value never raises
    if isinstance(node, ast.JoinedStr):
        return all(_pure(v) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return node.format_spec is None and _pure(node.value)
    if isinstance(node, ast.IfExp):
        return _pure(node.test) and _pure(node.body) and _pure(node.orelse)
    if isinstance(node, ast.Tuple):
        return all(_pure(e) for e in node.elts)
    return False


def _diff(a: object, b: object, carriers: _Carriers, names: dict[str, str], text: bool,
          local: frozenset[str] = frozenset(), operand: bool = False) -> bool | None:
    """None: no difference; True: differences only in message text; False: any other difference.

    ``text`` marks a position whose value is shown as message text (see :func:`_positions`): a
    carrier's message argument, the parts of an f-string or of a ``+`` there, an f-string's shown
    expression, the value of a message local. Anything nested deeper (the arguments of a call inside
    a message, such as what ``scrub_secrets`` is given) is not text: changing it can change what the
    message leaks, so it is never judged automatically. ``operand``: a position where None would
    raise (a ``+`` operand, a table), so only a string may replace a string there."""
    if isinstance(a, ast.Constant) and isinstance(b, ast.Constant):
        if a.value == b.value and type(a.value) is type(b.value):
            return None
        replaced = isinstance(b.value, str) or (b.value is None and not operand)
        return text and isinstance(a.value, str) and replaced
    if type(a) is not type(b):
        # Shown text replaced by None says less, and nothing it did not say before, when computing it
        # could neither raise nor act.
        return (text and not operand and isinstance(a, ast.expr) and _pure(a)
                and isinstance(b, ast.Constant) and b.value is None)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        return _combine([_diff(x, y, carriers, names, text, local, operand) for x, y in zip(a, b, strict=True)])
    if not isinstance(a, ast.AST) or not isinstance(b, ast.AST):
        return None if a == b else False
    if isinstance(a, ast.Call) and isinstance(b, ast.Call) and _callee(a, names) in carriers:
        if len(a.args) != len(b.args) or [k.arg for k in a.keywords] != [k.arg for k in b.keywords]:
            return False
    if isinstance(a, ast.Assign) and isinstance(b, ast.Assign) and _assigned(a) and _assigned(a) <= local:
        if isinstance(a.value, ast.Tuple) and not isinstance(a.targets[0], ast.Name) and (
                not isinstance(b.value, ast.Tuple) or len(b.value.elts) != len(a.value.elts)):
            return False  # the tuple itself replaced: unpacking it fails
    if isinstance(a, ast.Dict) and isinstance(b, ast.Dict) and len(a.keys) != len(b.keys):
        return False
    if isinstance(a, (ast.Tuple, ast.List)) and isinstance(b, (ast.Tuple, ast.List)) and len(a.elts) != len(b.elts):
        return False
    ours = _positions(a, carriers, names, local, text, operand)
    theirs = _positions(b, carriers, names, local, text, operand)
    if len(ours) != len(theirs):
        return False
    return _combine([_diff(x, y, carriers, names, shown, local, inner)
                     for (x, shown, inner), (y, _s, _i) in zip(ours, theirs, strict=True)])


def _combine(parts: list[bool | None]) -> bool | None:
    if any(p is False for p in parts):
        return False
    return True if any(p is True for p in parts) else None


def _change(orig: _FunctionNode, mutant: _FunctionNode) -> str:
    """``<original line(s)> → <mutated line(s)>`` as ``ast.unparse`` renders them (comments dropped), several
    lines joined with `` ⏎ ``. The original is part of it: the same mutated line can come from two
    different lines (``dropped = False`` and ``dropped = True`` both become ``dropped = None``)."""
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
    removed = " ⏎ ".join(d[2:].strip() for d in diff if d.startswith("- "))
    added = " ⏎ ".join(d[2:].strip() for d in diff if d.startswith("+ "))
    return f"{removed} → {added or '(removed)'}"


def read_mutants(work: Path) -> dict[str, Mutant]:
    """Every mutant of the last run, from the trampolined sources mutmut wrote under ``mutants/``."""
    root = work / "mutants"
    trees = {".".join(path.relative_to(root).with_suffix("").parts): ast.parse(path.read_text(encoding="utf-8"))
             for path in sorted(root.rglob("*.py"))}
    carriers = _message_carriers(trees)
    out: dict[str, Mutant] = {}
    for module, tree in trees.items():
        names = module_names(module, tree)
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
        locals_of: dict[str, frozenset[str]] = {}
        for qualified, fn in variants:
            orig = origs.get(qualified)
            if orig is not None:
                name = f"{module}.{fn.name}"
                if qualified not in locals_of:  # one analysis per original function, not per mutant
                    locals_of[qualified] = message_locals(orig, carriers, names)
                local = locals_of[qualified]
                out[name] = Mutant(name, f"{module}.{qualified}", _change(orig, fn),
                                   only_message_text(orig.body, fn.body, carriers, names, local))
    return out


_GENERATE = """
import shutil
import sys
from pathlib import Path
from mutmut.configuration import config
from mutmut.mutation.file_mutation import mutate_file_contents
config()
mutated = set(sys.argv[1:])
for source in sorted(Path("dsweb_ref").rglob("*.py")):
    out = Path("mutants") / source
    out.parent.mkdir(parents=True, exist_ok=True)
    if str(source) in mutated:
        out.write_text(mutate_file_contents(str(source), source.read_text(encoding="utf-8")).code, encoding="utf-8")
    else:
        shutil.copy(source, out)
"""


def generate(work: Path, modules: tuple[str, ...]) -> None:
    """Write ``mutants/`` as a run would (the same generator, so the same names and changes; the other
    source files copied), without running a test."""
    files = sorted({str(p.relative_to(work)) for pattern in modules for p in work.glob(pattern)})
    subprocess.run([sys.executable, "-c", _GENERATE, *files], cwd=work, check=True)


# The import-time recheck (see the module docstring).
_HITS_MARK = "import-time functions: "
_IMPORT_HITS = """
import importlib, json, os, pkgutil, sys
import mutmut.mutation.trampoline as trampoline
hits = set()
trampoline.record_trampoline_hit = lambda name, caller=None: hits.add(name)
os.environ["MUTANT_UNDER_TEST"] = "stats"
import dsweb_ref
def failed(name):
    print(f"not imported: {name}: {sys.exc_info()[1]!r}", file=sys.stderr)
for info in pkgutil.walk_packages(dsweb_ref.__path__, "dsweb_ref.", onerror=failed):
    if info.name.endswith(".__main__"):  # runs the command line
        continue
    try:
        importlib.import_module(info.name)
    except Exception:  # a module that cannot import here runs nothing we could count: said, not hidden
        failed(info.name)
print(MARK + json.dumps(sorted(hits)))
""".replace("MARK", repr(_HITS_MARK))
RECHECKED = "import_time.json"  # the reruns' exit codes, kept beside the run for --reuse
RECHECK_TIMEOUT_S = 1800  # one whole killer run; pytest-timeout bounds each test, not imports or collection
TIMED_OUT = 36  # mutmut's code for a mutant its timeout killed (see TIMEOUTS)


def import_time_functions(work: Path) -> set[str]:
    """The mutated functions (``module.x_name`` as mutmut records them) that run while the package imports;
    empty, with a warning, when the probe fails (the run's verdicts then stand as mutmut gave them)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run([sys.executable, "-c", _IMPORT_HITS], cwd=work / "mutants", env=env,
                              capture_output=True, text=True, check=False, timeout=600)
    except subprocess.TimeoutExpired:
        print("import-time recheck skipped: the import probe did not end in 600 s", file=sys.stderr)
        return set()
    for line in done.stderr.splitlines():
        if line.startswith("not imported:"):
            print(f"import-time probe: {line}", file=sys.stderr)
    found = [line for line in done.stdout.splitlines() if line.startswith(_HITS_MARK)]
    if done.returncode != 0 or not found:
        print(f"import-time recheck skipped: the import probe exited {done.returncode}", file=sys.stderr)
        return set()
    return set(json.loads(found[-1][len(_HITS_MARK):]))


def _killer(work: Path, tests: list[str], mutant: str, env: dict[str, str]) -> tuple[int, list[str]]:
    """The killer's exit code with ``mutant`` active from the process's start, and the tests that failed."""
    args = ["-x", "-q", "-rfE", "-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:randomly", *tests]
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=work / "mutants",
                              env={**env, "MUTANT_UNDER_TEST": mutant}, capture_output=True, text=True,
                              check=False, timeout=RECHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return TIMED_OUT, []
    if "+ Timeout +" in done.stdout:  # pytest-timeout ended a test: the machine or the mutant
        return TIMED_OUT, []
    failed = [line.split()[1] for line in done.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    return done.returncode, failed


def recheck_import_time(work: Path, codes: dict[str, int | None], tests: list[str],
                        env: dict[str, str]) -> dict[str, int]:
    """Run each survivor of a function that runs at import again, mutated from the process's start. Only a
    kill replaces mutmut's verdict, and only when the tests that failed pass again unmutated (a flaky check
    kills nothing); a timeout is reported as one (TIMEOUTS). The killer must pass unmutated first."""
    hits = import_time_functions(work)
    names = [n for n, c in codes.items() if (c == 0 or c in NO_TESTS) and n.rsplit("__mutmut_", 1)[0] in hits]
    if not names:
        return {}
    baseline, _ = _killer(work, tests, "", env)
    if baseline != 0:
        print(f"import-time recheck skipped: the killer exits {baseline} with no mutant", file=sys.stderr)
        return {}
    options = [a for a in tests if a.startswith("-") or not (work / "mutants" / a).exists()]  # not the paths
    verdicts: dict[str, int] = {}
    for name in names:
        code, failed = _killer(work, tests, name, env)
        # pytest's 2 (a collection error) counts as an error, as mutmut counts a test run that errors (3).
        if code == TIMED_OUT:
            verdicts[name] = code
        elif code in (1, 2) and failed and _killer(work, [*options, *failed], "", env)[0] == 0:
            verdicts[name] = 1 if code == 1 else 3  # what failed passes unmutated: the mutant's doing
        elif code in (2, 3, 4) and not failed and _breaks_import(work, name, env):
            verdicts[name] = 3  # no test ran (collection or a conftest died) and its own module no longer imports
    return verdicts


def _breaks_import(work: Path, name: str, env: dict[str, str]) -> bool:
    """Whether importing the mutant's own module fails with the mutant active from the start."""
    try:
        done = subprocess.run([sys.executable, "-c", f"import {module_of(name)}"], cwd=work / "mutants",
                              env={**env, "MUTANT_UNDER_TEST": name}, capture_output=True, check=False, timeout=600)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode != 0


KILLED = (1, 3, 24, 36, 37, 152, 255, -24)  # tests failed or errored, timed out, or mypy caught it
NO_TESTS = (5, 33)  # no killer test reaches the mutated function: a gap, counted as survived
TIMEOUTS = (24, 36, 152, -24)  # killed by a timeout: on a loaded machine possibly the machine, not the mutant
KINDS = ("program-equivalent", "seed-open", "out of reach")


@dataclass(frozen=True)
class Summary:
    killed: list[str]
    real: list[str]  # survivors not judged equivalent (a gap in the killer), untested ones included
    equivalent: list[tuple[str, str]]  # survivors judged equivalent, with the reason
    other: list[str]  # not checked, suspicious, segfault: left out of the score, listed
    stale: list[str] = field(default_factory=list)  # judgements for a module of this run that match no mutant
    contradicted: list[str] = field(default_factory=list)  # judgements that match a killed mutant

    @property
    def failed(self) -> bool:
        """The judgements no longer fit the mutants (rule 2): the figures cannot be trusted."""
        return bool(self.stale or self.contradicted)

    @property
    def raw_kill_rate(self) -> float:
        """killed / every mutant with a verdict, no judgement applied."""
        total = len(self.killed) + len(self.real) + len(self.equivalent)
        return len(self.killed) / total if total else 0.0

    @property
    def score(self) -> float:
        """killed / non-equivalent mutants (every kind of judgement excluded)."""
        counted = len(self.killed) + len(self.real)
        return len(self.killed) / counted if counted else 0.0

    def kinds(self) -> dict[str, int]:
        """How many survivors each kind of judgement took (see :func:`kind_of`)."""
        counts: dict[str, int] = {}
        for _name, reason in self.equivalent:
            kind = kind_of(reason) or "unknown"
            counts[kind] = counts.get(kind, 0) + 1
        return counts

    @property
    def strict_score(self) -> float:
        """killed / mutants that are neither program-equivalent nor seed-open: survivors judged out of the
        certification's reach count against it here."""
        counted = len(self.killed) + len(self.real) + self.kinds().get("out of reach", 0)
        return len(self.killed) / counted if counted else 0.0

    def by_module(self) -> dict[str, Summary]:
        """The same figures for each mutated module."""
        modules = sorted({module_of(n) for n in [*self.killed, *self.real, *self.other]}
                         | {module_of(n) for n, _ in self.equivalent})
        return {m: Summary(killed=[n for n in self.killed if module_of(n) == m],
                           real=[n for n in self.real if module_of(n) == m],
                           equivalent=[(n, r) for n, r in self.equivalent if module_of(n) == m],
                           other=[n for n in self.other if module_of(n) == m])
                for m in modules}


def summarise(codes: dict[str, int | None], judgements: Judgements,
              mutants: dict[str, Mutant] | None = None, *, unit: bool = False, sampled: bool = False) -> Summary:
    """Sort the run's mutants by verdict and judgement. ``unit``: the killer is the unit tests, which may
    pin what the certification cannot observe or must accept, so only a killed program-equivalent
    judgement is contradicted there. ``sampled``: ``codes`` holds only a sample of ``mutants`` (every
    generated mutant), so a judgement is stale when no mutant of the generated scope makes its change,
    and contradicted only by a sampled mutant (see the docstring's sampled run)."""
    mutants = mutants or {}
    killed = sorted(n for n, c in codes.items() if c in KILLED)
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
    run_modules = {module_of(n) for n in codes}
    if sampled:  # the whole scope was generated, whichever modules the sample happened to draw from
        run_modules |= {m.module for m in mutants.values()}
    in_run = [k for k in judgements.by_change if any(k.startswith(m + ".") for m in run_modules)]
    keys = {m.key for m in mutants.values()}
    functions = {m.function for m in mutants.values()}
    stale = [k for k in in_run if k not in keys and not (k.endswith(" | *") and k[:-4] in functions)]
    # Rule 4: message text is the classifier's; a hand judgement of a change it classifies is stale.
    texts = {m.key for m in mutants.values() if m.message_only}
    texts -= {m.key for m in mutants.values() if not m.message_only}  # a key shared with another change
    stale += [k for k in in_run if k in texts]
    # A killed mutant proves its judgement wrong; a reached one (killed or survived with tests) proves a
    # `function | *` judgement ("no check reaches it") wrong.
    killed_keys = {mutants[n].key for n in killed if n in mutants}
    reached = {mutants[n].function for n, c in codes.items() if n in mutants and (c in KILLED or c == 0)}
    contradicted = [k for k in in_run if k in killed_keys or (k.endswith(" | *") and k[:-4] in reached)]
    if unit:
        contradicted = [k for k in contradicted if kind_of(judgements.by_change[k]) == "program-equivalent"]
    return Summary(
        killed=killed,
        real=[n for n in survived if n not in reasons],
        equivalent=[(n, reasons[n]) for n in survived if n in reasons],
        other=other,
        stale=sorted(stale),
        contradicted=sorted(contradicted),
    )


def draw(names: list[str] | set[str] | dict[str, Mutant], size: int, seed: int) -> list[str]:
    """The sampled mutants: ``size`` names drawn uniformly without replacement by ``random.Random(seed)``
    from the sorted names (all of them when ``size`` is at least their number), returned sorted. A
    function of (scope, size, seed) alone, so anyone can redo the draw."""
    pool = sorted(names)
    if size >= len(pool):
        return pool
    return sorted(random.Random(seed).sample(pool, size))


Z95 = NormalDist().inv_cdf(0.975)


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion (95% by default); (0, 1) when there is no trial."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    # At 0 or all successes the bound is exactly 0 or 1; the formula leaves a rounding crumb there.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def estimates(summary: Summary) -> list[str]:
    """The three figures of a sample, each with its 95% Wilson interval and (killed/counted)."""
    killed = len(summary.killed)
    out = []
    for label, counted in (("raw_kill_rate", killed + len(summary.real) + len(summary.equivalent)),
                           ("strict_score", killed + len(summary.real) + summary.kinds().get("out of reach", 0)),
                           ("mutation_score", killed + len(summary.real))):
        low, high = wilson(killed, counted)
        share = f"{killed / counted:.3f}" if counted else "n/a"
        out.append(f"{label} {share} [{low:.3f}, {high:.3f}] ({killed}/{counted})")
    return out


def figures(summary: Summary) -> str:
    kinds = summary.kinds()
    return (f"{len(summary.killed)} killed, {len(summary.real)} survived, "
            f"{len(summary.equivalent)} judged ({', '.join(f'{k} {kinds.get(k, 0)}' for k in KINDS)}); "
            f"raw_kill_rate {summary.raw_kill_rate:.3f}, strict_score {summary.strict_score:.3f}, "
            f"mutation_score {summary.score:.3f}")


def report_failures(judgements: Judgements, summary: Summary | None = None) -> bool:
    """Print every broken judgement rule to stderr; True when there was one."""
    lines = [f"refused: {r}" for r in judgements.refused]
    if summary is not None:
        lines += [f"stale judgement (no mutant makes this change any more; judge the new one): {k}"
                  for k in summary.stale]
        lines += [f"contradicted judgement (the killer kills a mutant it judges; delete it): {k}"
                  for k in summary.contradicted]
    for line in lines:
        print(line, file=sys.stderr)
    if lines:
        print(f"FAILED: {len(lines)} judgement(s) break the rules (see the docstring)", file=sys.stderr)
    return bool(lines)


def report_sample(summary: Summary, mutants: dict[str, Mutant], sample: dict[str, object]) -> None:
    """The figures of a sampled run: estimates, each with its counts and 95% Wilson interval."""
    names = sample["names"]
    assert isinstance(names, list)
    scope: dict[str, int] = {}
    for mutant in mutants.values():
        scope[mutant.module] = scope.get(mutant.module, 0) + 1
    print(f"SAMPLE ESTIMATE (not a full run): {len(names)} of {sample['scope']} mutants drawn uniformly, "
          f"seed {sample['seed']}; each figure with its 95% Wilson interval and (killed/counted)")
    for module, part in summary.by_module().items():
        print(f"sample module {module}: {len(part.killed) + len(part.real) + len(part.equivalent)} sampled of "
              f"{scope.get(module, 0)}, {figures(part).split('; ')[0]}; {'; '.join(estimates(part))}")
    print(f"sample overall: {len(names)} sampled of {sample['scope']}, {figures(summary).split('; ')[0]}, "
          f"{len(summary.other)} not judged")
    for line in estimates(summary):
        print(f"estimate {line}")
    if summary.real:
        print("surviving sampled mutants by module: " + ", ".join(
            f"{m} {len(p.real)}" for m, p in summary.by_module().items() if p.real))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--unit", action="store_true", help="the unit tests are the killer (issue 14's modules)")
    parser.add_argument("--modules", nargs="+", metavar="GLOB", help="mutate only these files (default: the mode's)")
    parser.add_argument("--max-children", type=int, default=2, help="parallel mutant runs (default 2)")
    parser.add_argument("--brief", action="store_true", help="list surviving mutants by name, without diffs")
    parser.add_argument("--reuse", action="store_true", help="report the last run of this mode without running")
    parser.add_argument("--work", metavar="NAME",
                        help="scratch copy .mutation/NAME (default: the mode's): keeps module-group runs apart")
    parser.add_argument("--check", action="store_true",
                        help="only check equivalent.txt against freshly generated mutants (no test runs)")
    parser.add_argument("--sample", type=int, metavar="N",
                        help="run only N mutants drawn uniformly from the scope and print estimates with intervals")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="the draw's seed for --sample (default 0)")
    args = parser.parse_args()
    if args.sample is not None and args.sample < 1:
        parser.error("--sample needs at least one mutant")

    judgements = judged_equivalent()
    if report_failures(judgements):  # the rules hold before any run is spent
        return 3
    mode = "check" if args.check else "unit" if args.unit else "certification"
    work = ROOT / ".mutation" / (args.work or mode)
    modules = tuple(args.modules) if args.modules else (UNIT_MODULES if args.unit else CERT_MODULES)
    if args.check:
        prepare(work, modules, CERT_TESTS)
        generate(work, modules)
        mutants = read_mutants(work)
        summary = summarise(dict.fromkeys(mutants), judgements, mutants)
        generated = {m.module for m in mutants.values()}
        # A judgement of a module outside the scope can never be checked by a run: stale too.
        summary.stale.extend(k for k in judgements.by_change if not any(k.startswith(m + ".") for m in generated))
        print(f"check: {len(mutants)} mutants generated, {len(judgements.by_change)} judgements, "
              f"{len(summary.stale)} stale")
        return 3 if report_failures(judgements, summary) else 0
    drawn = work / "sample.json"
    # The killer's conftest loads the certification oracle from the unmutated copy (see its docstring).
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "DSWEB_PRISTINE_ROOT": str(work)}
    if not args.reuse:
        prepare(work, modules, UNIT_TESTS if args.unit else CERT_TESTS)
        chosen: list[str] = []
        if args.sample is not None:
            generate(work, modules)  # the same generator as the run: the same names
            everyone = read_mutants(work)
            chosen = draw(everyone, args.sample, args.seed)
            shutil.rmtree(work / "mutants")  # mutmut writes its own, with the verdict files
            drawn.write_text(json.dumps({"size": args.sample, "seed": args.seed, "scope": len(everyone),
                                         "names": chosen}, ensure_ascii=False, indent=1), encoding="utf-8")
            print(f"sample: {len(chosen)} of {len(everyone)} mutants, seed {args.seed}", flush=True)
        run = [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.max_children), *chosen]
        done = subprocess.run(run, cwd=work, env=env, check=False)
        if done.returncode != 0:
            print(f"mutmut run failed with status {done.returncode}", file=sys.stderr)
            return 2

    codes = exit_codes(work)
    mutants = read_mutants(work)
    sample = json.loads(drawn.read_text(encoding="utf-8")) if drawn.exists() else None
    if sample is not None:
        missing = [n for n in sample["names"] if codes.get(n) is None]
        if set(mutants) != set(codes) or missing:  # the run made other mutants than the draw saw, or skipped some
            print(f"the run does not match the draw: {len(missing)} sampled mutants without a verdict, "
                  f"{len(set(mutants) ^ set(codes))} names differ", file=sys.stderr)
            return 2
        codes = {n: codes[n] for n in sample["names"]}
    rechecked_path = work / RECHECKED
    rechecked: dict[str, int] = {}
    if not args.reuse:
        rechecked = recheck_import_time(work, codes, UNIT_TESTS if args.unit else CERT_TESTS, env)
        rechecked_path.write_text(json.dumps(rechecked), encoding="utf-8")
    elif rechecked_path.exists():
        rechecked = json.loads(rechecked_path.read_text(encoding="utf-8"))
    codes.update(rechecked)
    summary = summarise(codes, judgements, mutants, unit=args.unit, sampled=sample is not None)
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
    if sample is not None:
        report_sample(summary, mutants, sample)
    else:
        for module, part in summary.by_module().items():
            print(f"module {module}: {len(part.killed) + len(part.real) + len(part.equivalent)} mutants, "
                  f"{figures(part)}")
        print(f"mode {mode}: {len(codes)} mutants, {figures(summary)}, {len(summary.other)} not judged")
        print(f"raw_kill_rate {summary.raw_kill_rate:.3f}  (killed / every mutant, no judgement)")
        print(f"strict_score {summary.strict_score:.3f}  (out-of-reach survivors counted as survived)")
        print(f"mutation_score {summary.score:.3f}  (every judged survivor left out)")
    if rechecked:
        print(f"import-time recheck: {len(rechecked)} survivors of functions that run at import were killed, run "
              f"mutated from the process's start ({sum(c in TIMEOUTS for c in rechecked.values())} by a timeout): "
              + ", ".join(f"{n} ({c})" for n, c in sorted(rechecked.items())))
    timed_out = sorted(n for n in summary.killed if codes[n] in TIMEOUTS)
    if timed_out:
        print(f"{len(timed_out)} killed by timeout (rerun them on a quiet machine: "
              f"--modules for their files): {', '.join(timed_out)}")
    return 3 if report_failures(judgements, summary) else 0


if __name__ == "__main__":
    sys.exit(main())
