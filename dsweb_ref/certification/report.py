"""Report writers: terminal progress, JUnit XML, JSON, a Markdown compatibility matrix and HTML.

Every writer goes through :func:`scrub` first: each known secret value (API keys, tokens, the
values of credential-named environment variables) and anything that merely looks like a key
(the shared rules of :mod:`dsweb_ref._secrets`) is replaced in reasons, details, notes and every
target field (description, name, version, capabilities), so no report ever carries a credential.
The terminal is a report too: :func:`print_line` and :func:`scrub_text` apply the same rules.
A run computes its secret values once (:func:`run_secrets`, which scans the environment) and
passes them to every line it prints.

Long reasons are cut, never silently: a terminal line shows the first line of a reason up to
:data:`LINE_REASON_CHARS` characters and a Markdown cell up to :data:`CELL_REASON_CHARS`, each ending
in "…" when cut; JSON, JUnit (element text) and HTML keep the whole reason.

A run is OK (:func:`report_ok`) only if no check failed, errored or went stale *and* at least one
check passed: a target that declares nothing, or an endpoint whose every route is missing, has
certified nothing, and "16 skipped" must not read as success.
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from .._secrets import scrub_text as shared_scrub
from .model import CheckResult, Outcome, Report

__all__ = [
    "CELL_REASON_CHARS",
    "LINE_REASON_CHARS",
    "REDACTED",
    "ReportError",
    "RunSecrets",
    "check_report_paths",
    "default_secrets",
    "format_line",
    "given_credentials",
    "nothing_certified",
    "report_ok",
    "run_secrets",
    "scrub",
    "scrub_text",
    "summary",
    "to_html",
    "to_json",
    "to_junit",
    "to_markdown",
    "write_reports",
]

REDACTED = "[REDACTED]"
LINE_REASON_CHARS = 160  # a terminal line shows this much of a reason (then "…")
CELL_REASON_CHARS = 300  # a Markdown cell shows this much (then "…"); JSON, JUnit text and HTML keep all
ELLIPSIS = "…"
_SECRET_ENVS = ("DEEPSEEK_API_KEY", "DEEPSEEK_ACCOUNT_TOKEN")
_SECRET_ENV_NAME = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSW(OR)?D|CREDENTIAL|AUTH)")
_MIN_SECRET = 6  # shorter values found by scanning would blank out ordinary words
_MIN_ENV_SECRET = 8  # for values found only by the variable's name
_MIN_GIVEN_SECRET = 4  # a credential the run was given (a key it sends, an adapter's credential) is
# redacted from this length: a real key is never shorter, and a shorter one would blank out words
_FLAG = re.compile(r"--?([A-Za-z0-9_.-]{1,100})(=(.*))?", re.DOTALL)


class ReportError(Exception):
    """A report cannot be written where it was asked for (the message says which and why)."""


def default_secrets() -> list[str]:
    """The emulator's test keys, any DeepSeek credential in the environment, and the value of every
    environment variable whose name says it holds a credential (``*KEY*``, ``*TOKEN*``, ...)."""
    named = [v for k, v in os.environ.items() if _SECRET_ENV_NAME.search(k) and len(v) >= _MIN_ENV_SECRET]
    return [*_given_defaults(), *named]


def _given_defaults() -> list[str]:
    from ..emulator.server import DEFAULT_ACCOUNT_TOKEN, DEFAULT_API_KEY
    from .checks._fakes import GIVEN_KEYS

    # the keys checks configure besides the emulator's: a target may echo them into a reason too
    given = [DEFAULT_API_KEY, DEFAULT_ACCOUNT_TOKEN, *GIVEN_KEYS]
    return [*given, *(os.environ.get(n, "") for n in _SECRET_ENVS)]


def given_credentials(env: Mapping[str, str] | None = None, argv: Sequence[str] = ()) -> list[str]:
    """Credentials a run is handed rather than finds: the values of ``env`` entries whose name says
    they hold one (``--adapter-env UPSTREAM_API_KEY=...``), and the value of every command-line
    option whose name does (``--upstream-key X``, ``--api-token=X``) in ``argv`` (an adapter's
    command). Pass them to :func:`run_secrets` as ``given``."""
    found = [v for k, v in (env or {}).items() if _SECRET_ENV_NAME.search(k)]
    for i, arg in enumerate(argv):
        flag = _FLAG.fullmatch(arg)
        if flag is None or not _SECRET_ENV_NAME.search(flag.group(1)):
            continue
        if flag.group(2) is not None:
            found.append(flag.group(3))
        elif i + 1 < len(argv):
            found.append(argv[i + 1])
    return found


def _secret_values(secrets: Iterable[str], given: Iterable[str] = ()) -> list[str]:
    values = {s for s in secrets if s and len(s) >= _MIN_SECRET}
    values |= {s for s in given if s and len(s) >= _MIN_GIVEN_SECRET}
    return sorted(values, key=len, reverse=True)


class RunSecrets(tuple[str, ...]):
    """A run's secret values, computed once by :func:`run_secrets` (the defaults included, longest
    first). Passed where ``secrets`` are taken, it is used as is: the environment is not scanned again."""

    __slots__ = ()


def run_secrets(extra: Iterable[str] = (), *, given: Iterable[str] = ()) -> RunSecrets:
    """:func:`default_secrets` (one scan of the environment) plus ``extra``, ready to pass to
    :func:`print_line`, :func:`scrub_text` and :func:`write_reports` for the rest of the run.
    ``given`` are credentials the run was handed (the key it sends, :func:`given_credentials`): kept
    from 4 characters where values found by scanning need 6."""
    return RunSecrets(_secret_values([*default_secrets(), *extra], [*_given_defaults(), *given]))


def _prepared(secrets: Iterable[str]) -> Sequence[str]:
    if isinstance(secrets, RunSecrets):
        return secrets
    return _secret_values([*default_secrets(), *secrets], _given_defaults())


def _scrub_text(text: str, secrets: Sequence[str]) -> str:
    # A target's text may hold a lone surrogate (a check fails it for that), which no report can encode,
    # or a control character XML forbids (an ANSI colour code): each is shown as its escape, first, so the
    # scrub reads the text the report will hold.
    text = _UNWRITABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    # An endpoint may echo a key back encoded (base64, %XX, swapped case, escapes, reversed, ...). The
    # encoded forms need a few characters to be told apart from text, so a shorter given credential is
    # replaced as it stands (its base64 core would be empty and match everywhere).
    short = [s for s in secrets if len(s) < _MIN_SECRET]
    for value in short:
        text = text.replace(value, REDACTED)
    return shared_scrub(text, [s for s in secrets if len(s) >= _MIN_SECRET] if short else secrets, REDACTED)


_UNWRITABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with the default secrets, ``secrets`` and key-looking values redacted. A
    :class:`RunSecrets` already holds the defaults: the environment is then not scanned."""
    return _scrub_text(text, _prepared(secrets))


# Levels of a check's evidence kept in a report: a target's answer can nest as deep as the decoder allows,
# deeper than the scrub here and the JSON writer can recurse.
DETAIL_DEPTH = 64


def _scrub_value(value: Any, secrets: Sequence[str], depth: int = 0) -> Any:
    if depth > DETAIL_DEPTH and isinstance(value, (dict, list, tuple)):
        return f"<{type(value).__name__} nested deeper than {DETAIL_DEPTH} levels, left out>"
    if isinstance(value, str):
        return _scrub_text(value, secrets)
    if isinstance(value, dict):
        return {_scrub_text(str(k), secrets): _scrub_value(v, secrets, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub_value(v, secrets, depth + 1) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return _scrub_text(repr(value), secrets)  # evidence must stay JSON-serialisable


def scrub(report: Report, secrets: Iterable[str]) -> Report:
    """``report`` with ``secrets`` and key-looking values redacted everywhere text can hide."""
    values = secrets if isinstance(secrets, RunSecrets) else _secret_values(secrets)
    results = tuple(
        dataclasses.replace(r, reason=_scrub_text(r.reason, values), details=_scrub_value(r.details, values))
        for r in report.results
    )
    t = report.target
    target = dataclasses.replace(
        t,
        description=_scrub_text(t.description, values),
        name=_scrub_text(t.name, values),
        version=_scrub_text(t.version, values),
        capabilities=tuple(_scrub_text(c, values) for c in t.capabilities),
    )
    return dataclasses.replace(report, results=results, target=target)


def nothing_certified(report: Report) -> str | None:
    """Why ``report`` certified nothing (no check passed), or None when something was certified."""
    if any(r.outcome is Outcome.PASSED for r in report.results):
        return None
    if not report.results:
        return "nothing was certified: no check ran"
    if all(r.outcome is Outcome.SKIPPED for r in report.results):
        return "nothing was certified: every check skipped"
    return "nothing was certified: no check passed"


def report_ok(report: Report) -> bool:
    """:attr:`Report.ok` (nothing failed, errored or went stale), and at least one check passed."""
    return report.ok and nothing_certified(report) is None


# --- terminal -----------------------------------------------------------------------------------

_MARK = {
    Outcome.PASSED: "PASS",
    Outcome.FAILED: "FAIL",
    Outcome.SKIPPED: "SKIP",
    Outcome.KNOWN_FAILURE: "KNOWN",
    Outcome.FIXED_KNOWN_FAILURE: "FIXED",
    Outcome.ERROR: "ERROR",
}


def cut(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters; "…" marks a cut (a further line counts as one)."""
    lines = text.strip().splitlines() or [""]
    first = lines[0]
    if len(first) > limit or len(lines) > 1:
        return first[: limit - 1].rstrip() + ELLIPSIS
    return first


def format_line(result: CheckResult) -> str:
    """One progress line: outcome, check id, duration, the seed the check enforces, and the reason (cut at
    :data:`LINE_REASON_CHARS` with "…"); a failure or error ends by naming the command that explains it."""
    line = f"{_MARK[result.outcome]:<6} {result.check.id:<36} {result.duration_s:6.2f}s  seed {result.check.seed}"
    if result.reason:
        line += "  " + cut(result.reason, LINE_REASON_CHARS)
    if result.outcome in (Outcome.FAILED, Outcome.ERROR):
        line += f"  (run `dsweb certify --explain {result.check.id}`)"
    return line


def summary(report: Report, problems: Sequence[str] = ()) -> str:
    """``OK: 12 passed, 4 skipped`` or ``NOT OK ...``; ``problems`` (run-level errors such as an
    unknown id in the known-failures file) make it NOT OK too."""
    counts = Counter(r.outcome.value for r in report.results)
    parts = ", ".join(f"{counts[o.value]} {o.value}" for o in Outcome if counts[o.value])
    why = nothing_certified(report) if report.ok else None  # with failures or errors, those say enough
    verdict = "OK" if report_ok(report) and not problems else "NOT OK" + (f" ({why})" if why else "")
    return f"{verdict}: {parts or 'no checks'}"


# --- machine-readable ---------------------------------------------------------------------------


def to_json(
    report: Report, notes: Sequence[str] = (), problems: Sequence[str] = (), interrupted: str | None = None
) -> dict[str, Any]:
    """The whole report; ``interrupted`` is why a run stopped before every check finished (null when it ran
    to the end): its ``checks`` are then the ones that finished."""
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
        "ok": report_ok(report) and not problems and interrupted is None,
        "interrupted": interrupted,
        "summary": dict(Counter(r.outcome.value for r in report.results)),
        "notes": list(notes),
        "problems": list(problems),
        "profiles": [v.to_json() for v in report.profiles],
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


def to_junit(report: Report, problems: Sequence[str] = ()) -> bytes:
    """One testcase per check; run-level ``problems`` add one failing ``run.problems`` testcase."""
    counts = Counter(r.outcome for r in report.results)
    suite = ET.Element(
        "testsuite",
        name="dsweb-certify",
        tests=str(len(report.results) + (1 if problems else 0)),
        failures=str(counts[Outcome.FAILED] + counts[Outcome.FIXED_KNOWN_FAILURE] + (1 if problems else 0)),
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
    if problems:
        case = ET.SubElement(suite, "testcase", classname="run", name="run.problems", time="0.000")
        text = "\n".join(problems)
        ET.SubElement(case, "failure", message=text[:500], type="problem").text = text
    return bytes(ET.tostring(suite, encoding="utf-8", xml_declaration=True))


# --- human-readable -----------------------------------------------------------------------------


def _cell(text: str, limit: int = CELL_REASON_CHARS) -> str:
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + ELLIPSIS
    return flat.replace("|", "\\|")


def _reason_cell(reason: str) -> str:
    cell = _cell(reason)
    return cell + " (whole reason in report.json)" if cell.endswith(ELLIPSIS) else cell


def _by_seed(report: Report) -> dict[str, list[CheckResult]]:
    groups: dict[str, list[CheckResult]] = {}
    for r in report.results:
        groups.setdefault(r.check.seed, []).append(r)
    return dict(sorted(groups.items()))


def to_markdown(report: Report, notes: Sequence[str] = (), problems: Sequence[str] = ()) -> str:
    t = report.target
    lines = [
        "# dsweb certification: compatibility matrix",
        "",
        f"- target: {_cell(t.description)}",
        f"- capabilities: {_cell(', '.join(t.capabilities)) or '(none declared)'}",
        f"- suite version: {report.suite_version}",
        f"- run: {report.started_at} .. {report.finished_at}",
        f"- result: **{summary(report, problems)}**",
        "",
    ]
    lines += [f"> **error:** {_cell(p)}" for p in problems]
    lines += [f"> note: {_cell(n)}" for n in notes]
    if report.profiles:
        lines += ["", "## profiles", "", "| profile | verdict |", "|---|---|"]
        lines += [f"| `{v.name}` | {_cell(v.explain())} |" for v in report.profiles]
    for seed, results in _by_seed(report).items():
        lines += ["", f"## seed {seed}", "", "| check | outcome | description | reason |", "|---|---|---|---|"]
        for r in results:
            lines.append(
                f"| `{r.check.id}` | {r.outcome.value} | {_cell(r.check.description)} | {_reason_cell(r.reason)} |"
            )
    return "\n".join(lines) + "\n"


def to_html(report: Report, notes: Sequence[str] = (), problems: Sequence[str] = ()) -> str:
    e = html.escape
    rows = []
    for seed, results in _by_seed(report).items():
        for r in results:
            rows.append(
                f'<tr class="{e(r.outcome.value)}"><td>{e(seed)}</td><td><code>{e(r.check.id)}</code></td>'
                f"<td>{e(r.outcome.value)}</td><td>{e(r.check.description)}</td><td>{e(r.reason)}</td></tr>"
            )
    note_html = "".join(f"<p><b>error:</b> {e(p)}</p>" for p in problems)
    note_html += "".join(f"<p>note: {e(n)}</p>" for n in notes)
    note_html += "".join(f"<p>profile <code>{e(v.name)}</code>: {e(v.explain())}</p>" for v in report.profiles)
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>dsweb certification</title><style>'
        "body{font-family:sans-serif}td,th{border:1px solid #ccc;padding:4px;vertical-align:top}"
        "table{border-collapse:collapse}.passed{background:#e6ffe6}.failed,.error,.fixed-known-failure"
        "{background:#ffe6e6}.skipped,.known-failure{background:#f3f3f3}</style></head><body>"
        f"<h1>dsweb certification</h1><p>target: {e(report.target.description)}<br>"
        f"suite version: {e(report.suite_version)}<br>result: <b>{e(summary(report, problems))}</b></p>{note_html}"
        "<table><tr><th>seed</th><th>check</th><th>outcome</th><th>description</th><th>reason</th></tr>"
        + "".join(rows)
        + "</table></body></html>\n"
    )


def _destinations(
    junit: str | Path | None,
    json_path: str | Path | None,
    markdown: str | Path | None,
    html_path: str | Path | None,
    report_dir: str | Path | None,
) -> list[tuple[str, Path]]:
    chosen = {"junit": junit, "json": json_path, "markdown": markdown, "html": html_path}
    if report_dir is not None:
        d = Path(report_dir)
        defaults = {"junit": "junit.xml", "json": "report.json", "markdown": "report.md", "html": "report.html"}
        chosen = {kind: path or d / defaults[kind] for kind, path in chosen.items()}
    return [(kind, Path(path)) for kind, path in chosen.items() if path is not None]


def check_report_paths(
    *,
    junit: str | Path | None = None,
    json_path: str | Path | None = None,
    markdown: str | Path | None = None,
    html_path: str | Path | None = None,
    report_dir: str | Path | None = None,
) -> None:
    """Fail early (:class:`ReportError`) when a report could not be written where asked: a path that
    is a directory, a parent that is a file or cannot be created, a directory that is not writable.
    Creates missing parent directories, as writing would."""
    if report_dir is not None and Path(report_dir).exists() and not Path(report_dir).is_dir():
        raise ReportError(f"cannot write reports to {report_dir}: it is not a directory")
    for kind, path in _destinations(junit, json_path, markdown, html_path, report_dir):
        if path.is_dir():
            raise ReportError(f"cannot write the {kind} report to {path}: it is a directory")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ReportError(f"cannot write the {kind} report to {path}: {exc.strerror or exc}") from None
        if not os.access(path.parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise ReportError(f"cannot write the {kind} report to {path}: permission denied")


def write_reports(
    report: Report,
    *,
    secrets: Iterable[str] = (),
    notes: Sequence[str] = (),
    problems: Sequence[str] = (),
    interrupted: str | None = None,
    junit: str | Path | None = None,
    json_path: str | Path | None = None,
    markdown: str | Path | None = None,
    html_path: str | Path | None = None,
    report_dir: str | Path | None = None,
) -> list[Path]:
    """Write the requested files (``report_dir`` adds all four under fixed names); returns the paths.
    ``problems`` are run-level errors (listed, and the report is NOT OK); ``interrupted`` marks a run
    that stopped early (JSON ``interrupted``; pass it among ``problems`` too, for the other formats).
    :class:`ReportError` (never a bare OSError) when a file cannot be written."""
    values = _prepared(secrets)
    clean = scrub(report, values)
    n = [_scrub_text(x, values) for x in notes]
    p = [_scrub_text(x, values) for x in problems]
    stopped = _scrub_text(interrupted, values) if interrupted is not None else None
    render = {
        "junit": lambda: to_junit(clean, p),
        "json": lambda: (json.dumps(to_json(clean, n, p, stopped), indent=2, ensure_ascii=False) + "\n").encode(),
        "markdown": lambda: to_markdown(clean, n, p).encode(),
        "html": lambda: to_html(clean, n, p).encode(),
    }
    written = []
    for kind, path in _destinations(junit, json_path, markdown, html_path, report_dir):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(render[kind]())
        except OSError as exc:
            raise ReportError(f"cannot write the {kind} report to {path}: {exc.strerror or exc}") from None
        written.append(path)
    return written


def print_line(result: CheckResult, stream: TextIO, secrets: Iterable[str] = ()) -> None:
    """One progress line, secrets scrubbed (the terminal is a report too). Pass the run's
    :class:`RunSecrets` so the environment is not scanned for every line."""
    print(scrub_text(format_line(result), secrets), file=stream, flush=True)
