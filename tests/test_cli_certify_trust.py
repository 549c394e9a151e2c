"""`dsweb certify` as a CI step people trust (issue 19): every way a CI job meets it on day one ends in one
clear line with its documented exit code, no traceback and no lost report. Each case runs the real
command as a subprocess, from a directory other than the checkout, with only loopback traffic."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from certification._procs import alive, gone

from dsweb_ref.certification.endpoint import ENDPOINT_CHECKS
from dsweb_ref.certification.model import Check, CheckResult, Outcome
from dsweb_ref.certification.report import LINE_REASON_CHARS, format_line
from dsweb_ref.cli._certify_text import VERDICT_RULE

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = shlex.join([sys.executable, str(ROOT / "tests" / "fixtures" / "example_adapter.py")])
KEY = "dsweb-test-not-a-real-key-0019"
EXIT_USAGE, EXIT_INTERRUPTED, EXIT_PIPE = 2, 130, 141

# Answers hello and configure, never a tool call, and records its pid, its child's and its parent's.
HANGING_ADAPTER = ROOT / "tests" / "fixtures" / "hanging_adapter.py"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DEEPSEEK_API_KEY"}
    env.update(PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", **extra)
    return env


def dsweb(cwd: Path, *argv: str, timeout: float = 240, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dsweb_ref", *argv],
        cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=timeout,
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The run's stderr, which must be exactly one line and no traceback."""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def no_check_ran(done: subprocess.CompletedProcess[str]) -> None:
    assert not any(line.startswith(("PASS", "FAIL", "ERROR", "SKIP")) for line in done.stdout.splitlines())


# --- 1. paths from the command line are the working directory's ----------------------------------


def test_relative_paths_are_taken_from_the_working_directory(tmp_path: Path) -> None:
    recorded = dsweb(tmp_path, "record", "--emulator", "--out", "rec", "search-api.basic")
    assert recorded.returncode == 0, recorded.stderr
    (tmp_path / "kf.yaml").write_text("known_failures: []\n", encoding="utf-8")
    done = dsweb(
        tmp_path, "certify", "--cassettes", "rec", "--only", "endpoint.tools.search",
        "--known-failures", "kf.yaml", "--report-dir", "out", "--junit", "sub/j.xml",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS   endpoint.tools.search" in done.stdout and "verdict:   CERTIFIED" in done.stdout
    assert json.loads((tmp_path / "out" / "report.json").read_text())["ok"] is True
    assert (tmp_path / "sub" / "j.xml").is_file() and (tmp_path / "out" / "report.md").is_file()


# --- 2. preflight: one line, exit 2, before any check ---------------------------------------------


@pytest.fixture
def refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # closed again: a connection there is refused


@pytest.fixture
def silent_base() -> Iterator[str]:
    """Accepts connections and never answers a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    with contextlib.suppress(OSError):
        server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(); close() alone does not (Linux)
    server.close()
    for conn in held:
        conn.close()
    thread.join(5)


def test_a_base_that_is_not_a_url_is_one_line_exit_2(tmp_path: Path) -> None:
    done = dsweb(tmp_path, "certify", "--base", "notaurl", DEEPSEEK_API_KEY=KEY)
    assert done.returncode == EXIT_USAGE
    assert "--base 'notaurl' is not an http(s) URL" in one_line(done)
    no_check_ran(done)


def test_a_live_run_without_its_key_is_one_line_exit_2(tmp_path: Path, refused_port: int) -> None:
    done = dsweb(tmp_path, "certify", "--base", f"http://127.0.0.1:{refused_port}")
    assert done.returncode == EXIT_USAGE
    assert "environment variable DEEPSEEK_API_KEY is unset or empty" in one_line(done)
    no_check_ran(done)


def test_a_refused_base_is_one_line_exit_2(tmp_path: Path, refused_port: int) -> None:
    done = dsweb(tmp_path, "certify", "--base", f"http://127.0.0.1:{refused_port}", DEEPSEEK_API_KEY=KEY)
    assert done.returncode == EXIT_USAGE
    assert "cannot be reached" in one_line(done) and "refused" in one_line(done)
    no_check_ran(done)


def test_a_silent_base_is_one_line_exit_2_within_the_preflight_timeout(tmp_path: Path, silent_base: str) -> None:
    started = time.monotonic()
    done = dsweb(tmp_path, "certify", "--base", silent_base, "--timeout", "1", DEEPSEEK_API_KEY=KEY)
    assert done.returncode == EXIT_USAGE
    assert f"--base {silent_base} gave no HTTP answer within 1s" in one_line(done)
    no_check_ran(done)
    assert time.monotonic() - started < 60  # not 10 checks x 30 s


ADAPTER_CASES = {
    "echo": ("echo hello", ["not JSON: b'hello\\n'", "exited with status 0"]),
    "missing": ("/nonexistent/dsweb-adapter", ["cannot start adapter", "No such file"]),
    "exits": (
        shlex.join([sys.executable, "-c", "import sys; print('ImportError: no module fancy', file=sys.stderr); "
                    "sys.exit(4)"]),
        ["exited with status 4", "stderr tail: ImportError: no module fancy"],
    ),
    "hangs": (
        shlex.join([sys.executable, "-c", "import time; time.sleep(120)"]),
        ["did not answer hello within 1s", "--adapter-start-timeout"],
    ),
}


@pytest.mark.parametrize("case", list(ADAPTER_CASES))
def test_an_adapter_that_does_not_start_is_one_line_exit_2(tmp_path: Path, case: str) -> None:
    command, expected = ADAPTER_CASES[case]
    done = dsweb(tmp_path, "certify", "--adapter", command, "--adapter-start-timeout", "1")
    assert done.returncode == EXIT_USAGE
    line = one_line(done)
    assert line.startswith("dsweb certify: adapter ") and all(e in line for e in expected), line
    assert "ConnectionResetError" not in line and "profile" not in done.stdout
    no_check_ran(done)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--timeout", "0", "--base", "http://127.0.0.1:1"], "--timeout needs a positive number"),
        (["--timeout", "5"], "--timeout applies to endpoint runs"),
        (["--adapter-start-timeout", "5"], "--adapter-start-timeout applies to --adapter only"),
    ],
)
def test_the_new_seconds_options_are_checked(tmp_path: Path, argv: list[str], message: str) -> None:
    done = dsweb(tmp_path, "certify", *argv)
    assert done.returncode == EXIT_USAGE and message in one_line(done)


# --- 2b. an endpoint that stops answering mid-run stops the run ------------------------------------


def _serve(messages_served: bool) -> Iterator[str]:
    """Answers the preflight's GET (404) and holds every POST without a byte of answer; with
    ``messages_served`` False, a Messages POST gets a plain 404 (the route is not served)."""
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            if not messages_served and "/anthropic/" in self.path:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self.do_GET()
                return
            release.wait(60)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    release.set()
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def answers_get_only() -> Iterator[str]:
    yield from _serve(messages_served=True)


@pytest.fixture
def tools_hang() -> Iterator[str]:
    yield from _serve(messages_served=False)


def test_consecutive_unanswered_checks_stop_the_run_with_one_line_and_the_reports(
    tmp_path: Path, answers_get_only: str
) -> None:
    done = dsweb(
        tmp_path, "certify", "--base", answers_get_only, "--timeout", "0.5", "--report-dir", "out",
        DEEPSEEK_API_KEY=KEY,
    )
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    line = one_line(done)
    assert "stopped after 3 checks in a row got no HTTP answer within --timeout 0.5s" in line
    assert f"after 3 of {len(ENDPOINT_CHECKS)} checks" in line and str(tmp_path / "out" / "report.json") in line
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert len(data["checks"]) == 3 and data["ok"] is False and "no HTTP answer" in data["interrupted"]


# --- 3. interrupts: within a second, the adapter's group ended, the finished checks reported -----




@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupt_keeps_the_finished_checks_and_ends_the_adapter_group_and_the_check_worker(
    tmp_path: Path, sig: signal.Signals
) -> None:
    pids = tmp_path / "pids.txt"
    adapter = shlex.join([sys.executable, str(HANGING_ADAPTER), str(pids)])
    # search.cancel.quiescence is skipped at once (no `cancel` declared); search.merge.dedup then hangs, and
    # search.differential.merge hangs in the run's check worker, on an adapter the worker started.
    proc = subprocess.Popen(
        [sys.executable, "-m", "dsweb_ref", "certify", "--adapter", adapter, "--jobs", "2",
         "--only", "search.cancel.quiescence", "search.merge.dedup", "search.differential.merge",
         "--report-dir", "out"],
        cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    seen = []
    for line in proc.stdout:  # ordering by the progress line itself, not by sleeping
        seen.append(line)
        if line.startswith("SKIP   search.cancel.quiescence"):
            break
    else:
        pytest.fail("".join(seen) + proc.stderr.read())
    deadline = time.monotonic() + 60
    while not (in_worker := [p for p in _pids(pids) if p[2] != proc.pid]) and time.monotonic() < deadline:
        time.sleep(0.05)  # bounded wait for the worker's adapter to start (the worker imports first)
    assert in_worker and alive(in_worker[0][2]), _pids(pids)
    signalled = time.monotonic()
    proc.send_signal(sig)
    code = proc.wait(30)
    took = time.monotonic() - signalled
    err = proc.stderr.read()
    assert code == EXIT_INTERRUPTED, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"dsweb certify: interrupted ({sig.name}) after 1 of 3 checks; reports with the finished")
    assert took < 5, took  # the goal is one second; the bound leaves room for a loaded two-core runner
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [c["id"] for c in data["checks"]] == ["search.cancel.quiescence"]
    assert data["interrupted"].startswith(f"interrupted ({sig.name})") and data["ok"] is False
    assert "interrupted" in (tmp_path / "out" / "junit.xml").read_text()
    for pid in {p for line in _pids(pids) for p in line}:  # the adapters, their children, the worker
        assert gone(pid), f"process {pid} of the adapter's group or the check worker survived"


def _pids(path: Path) -> list[tuple[int, ...]]:
    """The lines the hanging adapters wrote: pid, its child's pid, its parent's pid."""
    text = path.read_text() if path.exists() else ""
    return [tuple(int(p) for p in line.split()) for line in text.splitlines() if line]


# --- 5. a closed pipe ends any command quietly ----------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [["certify", "--list"], ["certify", "--explain", "search.merge.dedup"], ["record", "--list"], ["schemas"]],
    ids=["certify-list", "explain", "record-list", "schemas"],
)
def test_a_closed_pipe_is_exit_141_without_a_traceback(tmp_path: Path, argv: list[str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dsweb_ref", *argv], cwd=tmp_path, env=_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first write: `| head` at its most abrupt
    code = proc.wait(120)
    err = proc.stderr.read()
    assert code == EXIT_PIPE and err == "", err


# --- 6. one verdict rule; a partial run says so -----------------------------------------------------


def test_an_only_run_is_certified_and_its_profile_lines_say_partial_run(tmp_path: Path) -> None:
    done = dsweb(tmp_path, "certify", "--only", "search.merge.dedup")
    assert done.returncode == 0, done.stdout + done.stderr
    profiles = [line for line in done.stdout.splitlines() if line.startswith("profile ")]
    assert profiles and all(": partial run (" in line and "not run: " in line for line in profiles), profiles
    assert "verdict:   CERTIFIED" in done.stdout


def test_a_passing_run_writes_nothing_to_stderr_though_its_emulators_cut_answers(tmp_path: Path) -> None:
    # errors.codes makes the embedded emulator cut answers on purpose; uvicorn logs each cut, and with
    # logging unconfigured Python printed them ("ASGI callable returned without completing response.").
    done = dsweb(tmp_path, "certify", "--only", "errors.codes", "--report-dir", "out")
    assert done.returncode == 0, done.stdout
    assert done.stderr == ""
    assert "PASS   errors.codes" in done.stdout


def test_help_states_the_verdict_rule_and_the_exit_codes(tmp_path: Path) -> None:
    done = dsweb(tmp_path, "certify", "--help", COLUMNS="400")
    flat = " ".join(done.stdout.split())
    assert " ".join(VERDICT_RULE.split()) in flat
    assert "130 interrupted" in flat and "141 the output pipe closed" in flat and "2 the run could not start" in flat


# --- 7. failure lines, --explain, usage errors -----------------------------------------------------


def test_a_failure_line_has_id_seed_cut_reason_and_the_explain_hint_and_the_report_keeps_it_whole(
    tmp_path: Path,
) -> None:
    done = dsweb(
        tmp_path, "certify", "--adapter", f"{EXAMPLE} --break duplicate-url", "--only", "search.merge.dedup",
        "--report-dir", "out",
    )
    assert done.returncode == 1
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("FAIL")]
    assert line.startswith("FAIL   search.merge.dedup") and "  seed 000  " in line
    assert line.endswith("(run `dsweb certify --explain search.merge.dedup`)")
    (check,) = json.loads((tmp_path / "out" / "report.json").read_text())["checks"]
    shown = line.split("  seed 000  ", 1)[1].rsplit("  (run `", 1)[0]
    assert check["reason"].startswith(shown.rstrip("…")) and len(shown) <= LINE_REASON_CHARS


def test_a_long_reason_is_cut_with_an_ellipsis_at_the_documented_length() -> None:
    reason = "x" * 500 + "\nsecond line"
    line = format_line(CheckResult(Check("a.b", "d", "001", "web_search"), Outcome.FAILED, reason))
    shown = line.split("  seed 001  ", 1)[1].rsplit("  (run `", 1)[0]
    assert len(shown) == LINE_REASON_CHARS and shown.endswith("…")
    short = format_line(CheckResult(Check("a.b", "d", "001", "web_search"), Outcome.FAILED, "short\nmore"))
    assert "short…" in short  # a dropped second line is a cut too


def test_explain_takes_a_name_part_or_a_near_name_and_lists_the_matches(tmp_path: Path) -> None:
    part = dsweb(tmp_path, "certify", "--explain", "ori_question")
    assert part.returncode == 0 and "search.api.ori_question" in part.stdout
    assert "endpoint.search.ori_question" in part.stdout
    near = dsweb(tmp_path, "certify", "--explain", "serch.merge.dedup")
    assert near.returncode == EXIT_USAGE and near.stderr.splitlines()[1].strip() == "search.merge.dedup"
    unique = dsweb(tmp_path, "certify", "--explain", "rebinding")
    assert unique.returncode == 0 and unique.stdout.startswith("ssrf.resolve.rebinding  (implementation check)")


def test_a_subcommand_usage_error_shows_the_subcommand_usage(tmp_path: Path) -> None:
    done = dsweb(tmp_path, "certify", "--bogus")
    assert done.returncode == EXIT_USAGE
    assert done.stderr.startswith("usage: dsweb certify ") and done.stderr.rstrip().endswith(
        "dsweb certify: error: unrecognized arguments: --bogus"
    )


def test_an_interrupted_endpoint_run_keeps_its_finished_checks(tmp_path: Path, tools_hang: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dsweb_ref", "certify", "--base", tools_hang, "--report-dir", "out"],
        cwd=tmp_path, env=_env(DEEPSEEK_API_KEY=KEY), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    for line in proc.stdout:  # both Messages checks skip (route not served); the Search check then hangs
        if line.startswith("SKIP   endpoint.auth.rejects_bad_key"):
            break
    else:
        pytest.fail(proc.stderr.read())
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == EXIT_INTERRUPTED
    err = proc.stderr.read()
    interrupted = f"dsweb certify: interrupted (SIGINT) after 2 of {len(ENDPOINT_CHECKS)} checks"
    assert len(err.splitlines()) == 1 and err.startswith(interrupted)
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [c["outcome"] for c in data["checks"]] == ["skipped", "skipped"] and data["interrupted"]


# --- 4. the adapter's start deadline is settable ------------------------------------------------------


def test_a_slow_starting_adapter_is_refused_by_the_deadline_and_certified_with_a_longer_one(tmp_path: Path) -> None:
    example = str(ROOT / "tests" / "fixtures" / "example_adapter.py")
    slow = shlex.join([
        sys.executable, "-c",
        "import runpy, sys, time; time.sleep(1.5); sys.argv = [sys.argv[1]]; runpy.run_path(sys.argv[0], "
        "run_name='__main__')",
        example,
    ])
    only = ("--only", "search.merge.dedup")
    refused = dsweb(tmp_path, "certify", "--adapter", slow, "--adapter-start-timeout", "1", *only)
    assert refused.returncode == EXIT_USAGE and "did not answer hello within 1s" in one_line(refused)
    allowed = dsweb(tmp_path, "certify", "--adapter", slow, "--adapter-start-timeout", "60", *only)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "PASS   search.merge.dedup" in allowed.stdout


def test_explain_full_prints_every_case_param_whole_and_full_alone_is_a_usage_error(tmp_path: Path) -> None:
    from dsweb_ref.certification.catalogue import PARAMS_WIDTH, entries

    entry = next(e for e in entries() if e.id == "search.api.mapping")
    longest = max((c for c in entry.cases if c.params), key=lambda c: len(json.dumps(c.params, ensure_ascii=False)))
    cut = dsweb(tmp_path, "certify", "--explain", "search.api.mapping")
    whole = dsweb(tmp_path, "certify", "--explain", "search.api.mapping", "--full")
    assert cut.returncode == 0 and whole.returncode == 0
    shown_cut = [line.split("params:  ", 1)[1] for line in cut.stdout.splitlines() if "params:  " in line]
    shown = [line.split("params:  ", 1)[1] for line in whole.stdout.splitlines() if "params:  " in line]
    assert max(len(s) for s in shown_cut) == PARAMS_WIDTH and any(s.endswith("…") for s in shown_cut)
    assert max(len(s) for s in shown) > PARAMS_WIDTH and not any(s.endswith("…") for s in shown)
    # each value is printed as its JSON: the longest case's every value is there in full
    line = shown[[c.name for c in entry.cases if c.params].index(longest.name)]
    assert all(json.dumps(v, ensure_ascii=False) in line for v in longest.params.values())
    alone = dsweb(tmp_path, "certify", "--full")
    assert alone.returncode == EXIT_USAGE and "--full goes with --explain" in alone.stderr
    listed = dsweb(tmp_path, "certify", "--list", "--full")  # not silently ignored
    assert listed.returncode == EXIT_USAGE and "--full goes with --explain" in listed.stderr


def test_list_names_every_profile_with_the_capabilities_it_needs(tmp_path: Path) -> None:
    """A newcomer could find the --profile names only in the docs or an --explain line."""
    from dsweb_ref.certification.profiles import PROFILES

    listed = dsweb(tmp_path, "certify", "--list")
    assert listed.returncode == 0
    section = listed.stdout.split("\nprofiles (--profile NAME", 1)[1].splitlines()[1:]
    assert [line.split()[0] for line in section] == [p.name for p in PROFILES]
    for line, profile in zip(section, PROFILES, strict=True):
        assert all(c in line for c in profile.requires) and profile.description in line
