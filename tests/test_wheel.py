"""The package a CI installs: the wheel and sdist build, and the wheel works on its own, outside the
source tree (schemas, cassettes and docs come from the wheel); the composite action's shell steps
run as written against that install.

Offline: the build uses the installed backend (no isolated build environment to download), and the
fresh virtualenv borrows the test environment's third-party packages through a .pth line instead of
downloading them, so only dsweb_ref itself comes from the wheel (asserted, not assumed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(600)


@dataclass(frozen=True)
class Install:
    wheel: Path
    sdist: Path
    venv: Path
    cwd: Path  # a directory outside the source tree

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        return {**env, "PATH": f"{self.bin}{os.pathsep}{env.get('PATH', '')}", **extra}

    def run(self, *argv: str, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), cwd=self.cwd, env=self.env(**extra), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Install]:
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", where],
                               capture_output=True, text=True, check=True).stdout.strip())
    # The wheel goes in first: with the test environment's packages borrowed, pip would see the
    # dsweb_ref installed there (CI installs it) as already satisfied and skip the wheel.
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    str(wheel)], check=True, timeout=300)
    paths = sysconfig.get_paths()
    (site / "_borrowed_dependencies.pth").write_text(f"{paths['purelib']}\n{paths['platlib']}\n", encoding="utf-8")
    cwd = base / "elsewhere"
    cwd.mkdir()
    yield Install(wheel, sdist, venv, cwd)


def test_the_wheel_carries_schemas_cassettes_and_docs(installed: Install) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    assert "dsweb_ref/_schemas/web_search.output.schema.json" in names
    assert any(n.startswith("dsweb_ref/_cassettes/search-api/") for n in names)
    assert "dsweb_ref/docs/adapter-protocol.md" in names
    sdist = tarfile.open(installed.sdist).getnames()
    top = sdist[0].split("/")[0]
    for member in ("pyproject.toml", "README.md", "LICENSE", "dsweb_ref/docs/index.md", "schemas", "cassettes"):
        assert f"{top}/{member}" in sdist or any(n.startswith(f"{top}/{member}/") for n in sdist), member


def test_dsweb_ref_is_imported_from_the_wheel_not_the_checkout(installed: Install) -> None:
    done = installed.run(str(installed.bin / "python"), "-c", "import dsweb_ref, dsweb_ref.schemas as s;"
                         "print(dsweb_ref.__file__); print(s.__file__)")
    assert done.returncode == 0, done.stderr
    for line in done.stdout.splitlines():
        assert line.startswith(str(installed.venv)), line


def test_the_installed_dsweb_certifies_and_validates_its_schemas(installed: Install) -> None:
    done = installed.run("dsweb", "certify", "--only", "search.batch", "search.value.schema")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "verdict:   CERTIFIED" in done.stdout
    schemas = installed.run("dsweb", "schemas")
    assert schemas.returncode == 0, schemas.stdout + schemas.stderr


def test_the_installed_dsweb_replays_its_shipped_cassettes(installed: Install) -> None:
    shipped = installed.run(str(installed.bin / "python"), "-c",
                            "import dsweb_ref, pathlib; print(pathlib.Path(dsweb_ref.__file__).parent / '_cassettes')")
    done = installed.run("dsweb", "certify", "--cassettes", shipped.stdout.strip(), "--only", "endpoint.tools.search")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "PASS   endpoint.tools.search" in done.stdout


def test_the_installed_emulator_serves_the_search_api(installed: Install) -> None:
    proc = subprocess.Popen(["dsweb", "emulator", "--json"], cwd=installed.cwd, env=installed.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        base = first["tools_base"]
        request = urllib.request.Request(
            f"{base}/search", data=b'{"query": "search API"}', method="POST",
            headers={"Authorization": "Bearer dsweb-emulator-key-0001", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:  # loopback only
            assert answer.status == 200
            assert json.loads(answer.read())["results"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _action_steps() -> list[dict[str, object]]:
    action = yaml.safe_load((ROOT / ".ci" / "action" / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    steps: list[dict[str, object]] = action["runs"]["steps"]
    return steps


def _inputs(step: dict[str, object], values: dict[str, str]) -> dict[str, str]:
    """The step's env with each `${{ inputs.X }}` replaced by its value, as GitHub does."""
    env = step.get("env") or {}
    assert isinstance(env, dict)
    out = {}
    for name, expression in env.items():
        key = str(expression).removeprefix("${{ inputs.").removesuffix(" }}")
        out[name] = values[key]
    return out


def test_the_composite_action_installs_certifies_and_summarises(installed: Install, tmp_path: Path) -> None:
    action = yaml.safe_load((ROOT / ".ci" / "action" / "action.yml").read_text(encoding="utf-8"))
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update({
        "install": str(installed.wheel),
        "adapter": f"{installed.bin / 'python'} {ROOT / 'scripts' / 'adapter_minimal.py'}",
        "profile": "seed-001-search-api",
        "report-dir": str(tmp_path / "reports"),
    })
    summary = tmp_path / "summary.md"
    ran = []
    for step in _action_steps():
        if "run" not in step:
            assert str(step["uses"]).startswith(("actions/setup-python@", "actions/upload-artifact@"))
            continue
        env = _inputs(step, values)
        # pip may not reach an index in tests: the wheel's dependencies are already borrowed.
        done = installed.run("bash", "-e", "-c", str(step["run"]), GITHUB_STEP_SUMMARY=str(summary),
                             PIP_NO_INDEX="1", PIP_NO_DEPS="1", **env)
        assert done.returncode == 0, f"{step['name']}: " + done.stdout[-3000:] + done.stderr[-3000:]
        ran.append(step["name"])
    assert ran == ["Install dsweb_ref", "Certify", "Summary"]
    written = {p.name for p in (tmp_path / "reports").iterdir()}
    assert written >= {"junit.xml", "report.json", "report.md", "report.html"}
    report = json.loads((tmp_path / "reports" / "report.json").read_text(encoding="utf-8"))
    assert report["target"]["name"] == "adapter_minimal"
    assert "seed-001-search-api" in summary.read_text(encoding="utf-8")
