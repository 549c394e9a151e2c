"""Report writers: terminal progress, JUnit XML, JSON, a Markdown compatibility matrix and HTML.

Every writer goes through :func:`scrub` first: each secret value (API keys, tokens) is replaced in
reasons, details and the target description, so no report ever carries a credential.
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

from .model import CheckResult, Outcome, Report

__all__ = [
    "REDACTED",
    "default_secrets",
    "format_line",
    "scrub",
    "to_html",
    "to_json",
    "to_junit",
    "to_markdown",
    "write_reports",
]

REDACTED = "[REDACTED]"
_SECRET_ENVS = ("DEEPSEEK_API_KEY", "DEEPSEEK_ACCOUNT_TOKEN", "DSWEB_EMULATOR_KEY")
_MIN_SECRET = 6  # shorter values would blank out ordinary words


def default_secrets() -> list[str]:
    """The emulator's test keys plus any DeepSeek credential found in the environment."""
    from .emulator.server import DEFAULT_ACCOUNT_TOKEN, DEFAULT_API_KEY

    return [DEFAULT_API_KEY, DEFAULT_ACCOUNT_TOKEN, *(os.environ.get(n, "") for n in _SECRET_ENVS)]


def _scrub_text(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def _scrub_value(value: Any, secrets: Sequence[str]) -> Any:
    if isinstance(value, str):
        return _scrub_text(value, secrets)
    if isinstance(value, dict):
        return {_scrub_text(str(k), secrets): _scrub_value(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub_value(v, secrets) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return _scrub_text(repr(value), secrets)  # evidence must stay JSON-serialisable


def scrub(report: Report, secrets: Iterable[str]) -> Report:
    values = sorted({s for s in secrets if s and len(s) >= _MIN_SECRET}, key=len, reverse=True)
    results = tuple(
        dataclasses.replace(r, reason=_scrub_text(r.reason, values), details=_scrub_value(r.details, values))
        for r in report.results
    )
    target = dataclasses.replace(report.target, description=_scrub_text(report.target.description, values))
    return dataclasses.replace(report, results=results, target=target)


# --- terminal -----------------------------------------------------------------------------------

_MARK = {
    Outcome.PASSED: "PASS",
    Outcome.FAILED: "FAIL",
    Outcome.SKIPPED: "SKIP",
    Outcome.KNOWN_FAILURE: "KNOWN",
    Outcome.FIXED_KNOWN_FAILURE: "FIXED",
    Outcome.ERROR: "ERROR",
}


def format_line(result: CheckResult) -> str:
    line = f"{_MARK[result.outcome]:<6} {result.check.id:<36} {result.duration_s:6.2f}s"
    if result.reason:
        line += "  " + result.reason.splitlines()[0][:160]
    return line


def summary(report: Report) -> str:
    counts = Counter(r.outcome.value for r in report.results)
    parts = ", ".join(f"{counts[o.value]} {o.value}" for o in Outcome if counts[o.value])
    return f"{'OK' if report.ok else 'NOT OK'}: {parts or 'no checks'}"


# --- machine-readable ---------------------------------------------------------------------------


def to_json(report: Report, notes: Sequence[str] = ()) -> dict[str, Any]:
    t = report.target
    return {
        "suite_version": report.suite_version,
        "target": {
            "kind": t.kind,
            "description": t.description,
            "name": t.name,
            "version": t.version,
            "capabilities": list(t.capabilities),
        },
        "started_at": report.started_at,
        "finished_at": report.finished_at,
        "ok": report.ok,
        "summary": dict(Counter(r.outcome.value for r in report.results)),
        "notes": list(notes),
        "checks": [
            {
                "id": r.check.id,
                "description": r.check.description,
                "seed": r.check.seed,
                "capability": r.check.capability,
                "outcome": r.outcome.value,
                "reason": r.reason,
                "duration_s": round(r.duration_s, 3),
                "details": r.details,
            }
            for r in report.results
        ],
    }


def to_junit(report: Report) -> bytes:
    counts = Counter(r.outcome for r in report.results)
    suite = ET.Element(
        "testsuite",
        name="dsweb-certify",
        tests=str(len(report.results)),
        failures=str(counts[Outcome.FAILED] + counts[Outcome.FIXED_KNOWN_FAILURE]),
        errors=str(counts[Outcome.ERROR]),
        skipped=str(counts[Outcome.SKIPPED] + counts[Outcome.KNOWN_FAILURE]),
        time=f"{sum(r.duration_s for r in report.results):.3f}",
        timestamp=report.started_at,
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("suite_version", report.suite_version),
        ("target", report.target.description),
        ("target_name", report.target.name),
        ("target_version", report.target.version),
    ):
        ET.SubElement(props, "property", name=name, value=value)
    for r in report.results:
        case = ET.SubElement(
            suite, "testcase", classname=f"seed{r.check.seed}", name=r.check.id, time=f"{r.duration_s:.3f}"
        )
        if r.outcome is Outcome.FAILED or r.outcome is Outcome.FIXED_KNOWN_FAILURE:
            ET.SubElement(case, "failure", message=r.reason[:500], type=r.outcome.value).text = r.reason
        elif r.outcome is Outcome.ERROR:
            ET.SubElement(case, "error", message=r.reason[:500], type="error").text = r.reason
        elif r.outcome is Outcome.SKIPPED or r.outcome is Outcome.KNOWN_FAILURE:
            ET.SubElement(case, "skipped", message=f"{r.outcome.value}: {r.reason}"[:500])
    return bytes(ET.tostring(suite, encoding="utf-8", xml_declaration=True))


# --- human-readable -----------------------------------------------------------------------------


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")[:300]


def _by_seed(report: Report) -> dict[str, list[CheckResult]]:
    groups: dict[str, list[CheckResult]] = {}
    for r in report.results:
        groups.setdefault(r.check.seed, []).append(r)
    return dict(sorted(groups.items()))


def to_markdown(report: Report, notes: Sequence[str] = ()) -> str:
    t = report.target
    lines = [
        "# dsweb certification: compatibility matrix",
        "",
        f"- target: {_cell(t.description)}",
        f"- capabilities: {', '.join(t.capabilities) or '(none declared)'}",
        f"- suite version: {report.suite_version}",
        f"- run: {report.started_at} .. {report.finished_at}",
        f"- result: **{summary(report)}**",
        "",
    ]
    lines += [f"> note: {_cell(n)}" for n in notes]
    for seed, results in _by_seed(report).items():
        lines += ["", f"## seed {seed}", "", "| check | outcome | description | reason |", "|---|---|---|---|"]
        for r in results:
            lines.append(
                f"| `{r.check.id}` | {r.outcome.value} | {_cell(r.check.description)} | {_cell(r.reason)} |"
            )
    return "\n".join(lines) + "\n"


def to_html(report: Report, notes: Sequence[str] = ()) -> str:
    e = html.escape
    rows = []
    for seed, results in _by_seed(report).items():
        for r in results:
            rows.append(
                f'<tr class="{e(r.outcome.value)}"><td>{e(seed)}</td><td><code>{e(r.check.id)}</code></td>'
                f"<td>{e(r.outcome.value)}</td><td>{e(r.check.description)}</td><td>{e(r.reason)}</td></tr>"
            )
    note_html = "".join(f"<p>note: {e(n)}</p>" for n in notes)
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>dsweb certification</title><style>'
        "body{font-family:sans-serif}td,th{border:1px solid #ccc;padding:4px;vertical-align:top}"
        "table{border-collapse:collapse}.passed{background:#e6ffe6}.failed,.error,.fixed-known-failure"
        "{background:#ffe6e6}.skipped,.known-failure{background:#f3f3f3}</style></head><body>"
        f"<h1>dsweb certification</h1><p>target: {e(report.target.description)}<br>"
        f"suite version: {e(report.suite_version)}<br>result: <b>{e(summary(report))}</b></p>{note_html}"
        "<table><tr><th>seed</th><th>check</th><th>outcome</th><th>description</th><th>reason</th></tr>"
        + "".join(rows)
        + "</table></body></html>\n"
    )


def write_reports(
    report: Report,
    *,
    secrets: Iterable[str] = (),
    notes: Sequence[str] = (),
    junit: str | Path | None = None,
    json_path: str | Path | None = None,
    markdown: str | Path | None = None,
    html_path: str | Path | None = None,
    report_dir: str | Path | None = None,
) -> list[Path]:
    """Write the requested files (``report_dir`` adds all four under fixed names); returns the paths."""
    clean = scrub(report, [*default_secrets(), *secrets])
    clean_notes = [_scrub_text(n, [s for s in [*default_secrets(), *secrets] if len(s) >= _MIN_SECRET]) for n in notes]
    if report_dir is not None:
        d = Path(report_dir)
        d.mkdir(parents=True, exist_ok=True)
        junit = junit or d / "junit.xml"
        json_path = json_path or d / "report.json"
        markdown = markdown or d / "report.md"
        html_path = html_path or d / "report.html"
    written = []
    outputs: list[tuple[str | Path | None, bytes]] = [
        (junit, to_junit(clean)),
        (json_path, (json.dumps(to_json(clean, clean_notes), indent=2, ensure_ascii=False) + "\n").encode()),
        (markdown, to_markdown(clean, clean_notes).encode()),
        (html_path, to_html(clean, clean_notes).encode()),
    ]
    for path, data in outputs:
        if path is not None:
            p = Path(path)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
            written.append(p)
    return written


def print_line(result: CheckResult, stream: TextIO, secrets: Sequence[str] = ()) -> None:
    """One progress line, secrets scrubbed (the terminal is a report too)."""
    values = [s for s in [*default_secrets(), *secrets] if s and len(s) >= _MIN_SECRET]
    print(_scrub_text(format_line(result), values), file=stream, flush=True)
