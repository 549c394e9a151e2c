"""Heavy libraries load only on the path that needs them, checked by name in a fresh process.

Every ``dsweb`` command and every adapter lane is a fresh process, and the test suite starts hundreds
of them: a library imported at module level is paid by all of them. These tests fail naming the
library and the chain of modules that pulled it in, not on a timing threshold."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# What only one path needs: evidence ranking (bm25s, numpy, scipy, pythainlp, publicsuffixlist), HTML to
# Markdown (bs4, soupsieve, markdownify), a running emulator (uvicorn, starlette), schema validation
# (jsonschema, referencing) and cassette recording or replay (vcr).
HEAVY = (
    "bm25s", "numpy", "scipy", "pythainlp", "nlpo3", "publicsuffixlist", "bs4", "soupsieve", "markdownify",
    "uvicorn", "starlette", "jsonschema", "referencing", "vcr",
)  # fmt: skip
# scipy is not among them: bm25s uses it only where it is installed (a fresh CI venv has none), so it is
# only watched for, never required.
EVIDENCE = ("bm25s", "numpy", "pythainlp", "nlpo3", "publicsuffixlist")

# name -> code run in a fresh interpreter (cwd: the checkout) that must load none of HEAVY
LIGHT_PATHS = {
    "package": "import dsweb_ref",
    "certify parser, catalogue and endpoint ids": (
        "from dsweb_ref.cli import build_parser\n"
        "build_parser('certify')\n"
        "from dsweb_ref.certification.checks import all_checks\n"
        "from dsweb_ref.cli.certify import endpoint_checks\n"
        "assert all_checks() and endpoint_checks()\n"
    ),
    "every command's parser": (
        "from dsweb_ref.cli import COMMANDS, build_parser\n"
        "for name in COMMANDS:\n"
        "    build_parser(name)\n"
    ),
    "runtime and its search and fetch tools": (
        "from dsweb_ref.runtime import build_runtime\n"
        "runtime = build_runtime()\n"
        "runtime.search_tool(); runtime.fetch_tool()\n"
    ),
    "emulator names": "from dsweb_ref.emulator import Emulator, Hold, RateLimited",
    "example adapter's imports": "import sys; sys.path.insert(0, 'tests/fixtures'); import example_adapter",
    "minimal adapter's imports": "import sys; sys.path.insert(0, 'scripts'); import adapter_minimal",
}

# name -> (code, what it must have loaded): the libraries do load once their path runs.
HEAVY_PATHS = {
    "evidence tool built (warm-up thread)": (
        "from dsweb_ref.runtime import build_runtime\n"
        "from dsweb_ref.tools._evidence_units import warm_up\n"
        "build_runtime().evidence_tool()\n"
        "warm_up().result(timeout=120)\n",
        EVIDENCE,
    ),
    "HTML page converted": (
        "from dsweb_ref.tools._fetch_render import html_to_markdown\n"
        "assert html_to_markdown('<h1>Title</h1><p>text</p>') == '# Title\\n\\ntext'\n",
        ("bs4", "soupsieve", "markdownify"),
    ),
    "emulator started": (
        "from dsweb_ref.emulator import Emulator\n"
        "with Emulator():\n"
        "    pass\n",
        ("uvicorn", "starlette"),
    ),
    "schema validated": (
        "from dsweb_ref.schemas import validate\n"
        "assert validate('web_fetch.input', {}) != []\n",
        ("jsonschema", "referencing"),
    ),
    "cassette replay opened": (
        "from dsweb_ref.replay.cassettes import make_vcr\n"
        "make_vcr()\n",
        ("vcr",),
    ),
}


def _run(code: str, watch: tuple[str, ...] = HEAVY) -> tuple[set[str], dict[str, str]]:
    """The modules ``code`` left in ``sys.modules`` (full names and their top-level packages), and for
    each watched one, the modules that imported it (from ``-X importtime``: a module's importers
    follow it, indented less)."""
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe],
        capture_output=True, text=True, timeout=180, cwd=ROOT, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    names = json.loads(out.stdout.strip().splitlines()[-1])
    loaded = {*names, *(name.split(".")[0] for name in names)}
    rows = []
    for line in out.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "self [us]" not in line:
            name = line.split("|")[2]
            rows.append((len(name) - len(name.lstrip()), name.strip()))
    via: dict[str, str] = {}
    for i, (depth, name) in enumerate(rows):
        if name not in watch or name in via:  # the package's own row: its importers follow, indented less
            continue
        chain, want = [name], depth
        for later_depth, later in rows[i + 1 :]:
            if later_depth < want and len(chain) < 4:
                chain.append(later)
                want = later_depth
        via[name] = " <- ".join(chain)
    return loaded, via


@pytest.mark.parametrize("path", sorted(LIGHT_PATHS))
def test_a_light_path_loads_no_heavy_library(path: str) -> None:
    loaded, via = _run(LIGHT_PATHS[path])
    assert "dsweb_ref" in loaded  # the probe really imported the package
    heavy = sorted(set(HEAVY) & loaded)
    assert heavy == [], f"{path} loaded " + "; ".join(f"{m} (via {via.get(m, '?')})" for m in heavy)


def test_a_certify_run_without_evidence_or_endpoint_checks_loads_neither_stack() -> None:
    """The in-process reference builds its evidence tool at the first evidence call, as an adapter does;
    the endpoint catalogue (probes, cassettes, vcrpy) loads only for an endpoint run or an id it may hold."""
    watch = (*EVIDENCE, "scipy", "vcr", "dsweb_ref.certification.endpoint", "dsweb_ref.tools.evidence_search")
    loaded, via = _run(
        "import contextlib, io\n"
        "from dsweb_ref.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['certify', '--only', 'search.merge.dedup']) == 0\n",
        watch,
    )
    assert "uvicorn" in loaded  # the check really ran (on its emulator)
    heavy = sorted(set(watch) & loaded)
    assert heavy == [], "; ".join(f"{m} (via {via.get(m, '?')})" for m in heavy)


@pytest.mark.parametrize("path", sorted(HEAVY_PATHS))
def test_the_path_that_needs_a_heavy_library_loads_it(path: str) -> None:
    code, needed = HEAVY_PATHS[path]
    loaded, _ = _run(code)
    assert sorted(set(needed) - loaded) == []
