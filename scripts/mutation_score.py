#!/usr/bin/env python3
"""Measured power: mutate the reference and count the mutants a killer rejects.

    python scripts/mutation_score.py            # the certification suite alone kills (tools/, DeepSeek providers)
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

Prints every surviving mutant (``mutmut show`` diff unless ``--brief``) and ``mutation_score X``:
killed / (mutants - judged equivalent), where ``scripts/mutation/equivalent.txt`` lists the mutants judged
equivalent (one ``name  # reason`` per line; a listed name that no longer exists is reported, not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "scripts" / "mutation" / "equivalent.txt"

CERT_MODULES = (
    "dsweb_ref/tools/*",
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


def judged_equivalent() -> dict[str, str]:
    out: dict[str, str] = {}
    if EQUIVALENT.exists():
        for line in EQUIVALENT.read_text(encoding="utf-8").splitlines():
            name, _, reason = line.partition("#")
            if name.strip():
                out[name.strip()] = reason.strip()
    return out


KILLED = (1, 3, 24, 36, 37, 152, 255, -24)  # tests failed or errored, timed out, or mypy caught it
NO_TESTS = (5, 33)  # no killer test reaches the mutated function: a gap, counted as survived


@dataclass(frozen=True)
class Summary:
    killed: int
    real: list[str]  # survivors not judged equivalent (a gap in the killer), untested ones included
    equivalent: list[tuple[str, str]]  # survivors judged equivalent, with the reason
    other: list[str]  # not checked, suspicious, segfault: left out of the score, listed
    stale: list[str]  # equivalent.txt entries naming no mutant of this run

    @property
    def score(self) -> float:
        """killed / non-equivalent mutants."""
        counted = self.killed + len(self.real)
        return self.killed / counted if counted else 0.0


def summarise(codes: dict[str, int | None], equivalent: dict[str, str]) -> Summary:
    killed = [n for n, c in codes.items() if c in KILLED]
    survived = sorted(n for n, c in codes.items() if c == 0 or c in NO_TESTS)
    other = sorted(n for n, c in codes.items() if c not in KILLED and c != 0 and c not in NO_TESTS)
    return Summary(
        killed=len(killed),
        real=[n for n in survived if n not in equivalent],
        equivalent=[(n, equivalent[n]) for n in survived if n in equivalent],
        other=other,
        stale=sorted(n for n in equivalent if n not in codes),
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
    summary = summarise(codes, judged_equivalent())
    for name in summary.real:
        print(f"survived: {name}" + (" (no killer test reaches it)" if codes[name] in NO_TESTS else ""))
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
    print(f"mutation_score {summary.score:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
