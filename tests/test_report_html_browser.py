"""The HTML certification report, looked at in a real browser (headless Chromium): it shows the
result, every check that ran and a failure's reason, with no script error. The screenshot is kept
as a test artefact (DSWEB_ARTIFACTS, else the test's temporary directory).

.ci/run installs Debian's chromium when it is absent; on a developer machine without it the test
skips, in CI (CI=true) it fails instead, so a missing browser cannot pass silently."""

from __future__ import annotations

import html.parser
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dsweb_ref.cli import main

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = f"{sys.executable} {ROOT / 'tests' / 'fixtures' / 'example_adapter.py'} --break no-round-robin"
# Flags for a closed network: no background traffic, no first-run work, a throwaway profile.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--window-size=1280,1600")


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


class _Text(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("style", "script", "head"):
            self.hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script", "head"):
            self.hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


@pytest.mark.timeout(600)
def test_the_html_report_shows_the_result_every_check_and_a_failure_reason(tmp_path: Path) -> None:
    browser = _chromium()
    reports = tmp_path / "reports"
    assert main(["certify", "--adapter", ADAPTER, "--only", "search.merge", "--report-dir", str(reports)]) == 1
    report = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    failed = [c for c in report["checks"] if c["outcome"] == "failed"]
    assert [c["id"] for c in failed] == ["search.merge.round_robin"]

    page = (reports / "report.html").as_uri()
    artefacts = Path(os.environ.get("DSWEB_ARTIFACTS", tmp_path))
    artefacts.mkdir(parents=True, exist_ok=True)
    shot = artefacts / "report.png"
    common = [browser, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*common, "--dump-dom", page], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    picture = subprocess.run([*common, f"--screenshot={shot}", page], capture_output=True, text=True, timeout=180)
    assert picture.returncode == 0, picture.stderr[-2000:]

    parser = _Text()
    parser.feed(dom.stdout)
    shown = " ".join(" ".join(parser.parts).split())
    assert "NOT OK: 2 passed, 1 failed" in shown
    for check in report["checks"]:
        assert check["id"] in shown, check["id"]
    reason = " ".join(failed[0]["reason"].split())
    assert reason[:200] in shown
    console = [line for line in dom.stderr.splitlines() + picture.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if "Uncaught" in line or "Error" in line], console
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
