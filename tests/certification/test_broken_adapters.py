"""An adapter that crashes, garbles its output or falls silent gives error outcomes, never a hang."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import shlex
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

import dsweb_ref.certification.targets as targets
from dsweb_ref.certification.adapter_protocol import ProtocolError, decode_line
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.targets import AdapterTarget

from .conftest import dsweb_certify, run

HELLO = (
    'print(\'{"id": 1, "result": {"name": "x", "version": "1", "capabilities": ["web_search", "search-api"]}}\','
    " flush=True)"
)


def script(body: str, hello_timeout: float = 20.0) -> AdapterTarget:
    return AdapterTarget(shlex.join([sys.executable, "-c", body]), hello_timeout=hello_timeout)


def test_adapter_that_crashes_after_hello_gives_errors_with_its_stderr() -> None:
    target = script(f"import sys; sys.stdin.readline(); {HELLO}; sys.stdin.readline(); "
                    "print('boom: adapter fell over', file=sys.stderr); sys.exit(3)")
    report = run(target, only=["search.single.passthrough", "search.merge"])
    assert {r.outcome for r in report.results} == {Outcome.ERROR}
    assert "status 3" in report.results[0].reason
    assert "boom" in report.results[0].reason
    assert not report.ok


def test_adapter_that_writes_garbage_gives_errors() -> None:
    target = script("import sys; sys.stdin.readline(); print('this is not json', flush=True); sys.stdin.read()")
    report = run(target, only=["search.single.passthrough"])
    (result,) = report.results
    assert result.outcome is Outcome.ERROR
    assert "not JSON" in result.reason


def test_adapter_that_writes_json_nested_too_deeply_gives_an_error_at_once() -> None:
    # catches: decode_line letting json's RecursionError out, which ended the reader quietly: every call
    # then waited for its deadline and failed as "did not answer"
    target = script("import sys; sys.stdin.readline(); print('[' * 200000, flush=True); sys.stdin.read()")
    started = time.monotonic()
    report = run(target, only=["search.single.passthrough"])
    (result,) = report.results
    assert result.outcome is Outcome.ERROR
    assert "nested too deeply" in result.reason, result.reason
    assert time.monotonic() - started < 10


def test_adapter_that_writes_a_line_of_too_many_values_gives_an_error_at_once() -> None:
    # catches: a line parsed whatever it holds (a 64 MiB line of "[]," took over a gigabyte to parse)
    crowded = "print('{\"id\": 2, \"result\": [' + '[],' * 1_000_001 + '[]]}', flush=True)"
    target = script(f"import sys; sys.stdin.readline(); {HELLO}; sys.stdin.readline(); {crowded}; sys.stdin.read()")
    report = run(target, only=["search.single.passthrough"])
    (result,) = report.results
    assert result.outcome is Outcome.ERROR
    assert "more than 1,000,000 JSON containers and separators" in result.reason, result.reason


def test_a_line_of_too_many_values_is_refused_before_it_is_parsed() -> None:
    # catches: the bound counted after parsing (the memory already spent), or counting commas inside strings
    crowded = b'{"id": 1, "result": [' + b"[]," * 1_000_001 + b"[]]}"
    tracemalloc.start()
    try:
        with pytest.raises(ProtocolError, match="more than 1,000,000 JSON containers and separators"):
            decode_line(crowded)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * len(crowded), peak  # parsed, its lists alone would take over 50 MB
    text = b'{"id": 1, "result": {"text": "' + b"a," * 2_000_000 + b'"}}'
    flat = b'{"id": 1, "result": [' + b"0," * 999_990 + b"0]}"  # just under the bound: read whole
    assert len(decode_line(flat)["result"]) == 999_991
    assert decode_line(text)["result"]["text"].count(",") == 2_000_000  # commas in a string are not values


def test_silent_adapter_times_out_instead_of_hanging_and_leaves_no_noise(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="asyncio")
    target = script("import sys; sys.stdin.read()", hello_timeout=1.0)
    started = time.monotonic()
    report = run(target, only=["search.single.passthrough", "search.merge.dedup"])
    assert time.monotonic() - started < 10
    assert {r.outcome for r in report.results} == {Outcome.ERROR}
    assert "within 1s" in report.results[0].reason
    del target
    gc.collect()
    assert "never retrieved" not in caplog.text  # every pending future was settled and retrieved


def test_missing_adapter_program_is_an_error() -> None:
    report = run(AdapterTarget("/nonexistent/dsweb-adapter"), only=["search.single.passthrough"])
    assert report.results[0].outcome is Outcome.ERROR
    assert "cannot start adapter" in report.results[0].reason


def test_adapter_that_never_answers_a_call_is_bounded() -> None:
    # Answers hello and configure, then ignores web_search: the call deadline turns it into an error.
    body = (
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['method'] == 'hello':\n"
        "        r = {'name': 'x', 'version': '1', 'capabilities': ['web_search', 'search-api']}\n"
        "    elif m['method'] in ('configure', 'shutdown'):\n"
        "        r = {}\n"
        "    else:\n"
        "        print('stuck in', m['method'], file=sys.stderr, flush=True)\n"
        "        continue\n"
        "    print(json.dumps({'id': m['id'], 'result': r}), flush=True)\n"
    )
    import dsweb_ref.certification.checks._base as base

    saved = base.CALL_TIMEOUT
    base.CALL_TIMEOUT = 1.0  # the checks read it at call time
    try:
        report = run(script(body), only=["search.single.passthrough"])
    finally:
        base.CALL_TIMEOUT = saved
    assert report.results[0].outcome is Outcome.ERROR
    assert "did not answer" in report.results[0].reason
    # catches: a silent call reported with nothing of what the adapter said (its stderr) to tell why
    reason = report.results[0].reason
    assert "; stderr tail: stuck in web_search; " in reason, reason
    # the emulator's account: it was never asked, so the wait was the adapter's own
    assert "; the emulator: 0 request(s) in progress, 0 connection(s) open, its thread at " in reason, reason


def test_a_call_whose_cancel_was_acknowledged_but_never_answered_is_reported_so() -> None:
    # catches: a stalled cancelled call reported only as "did not answer": a CI run's adapter acknowledged the
    # cancel of a call whose task had not begun, then never answered the call; the reason now says so
    body = (
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['method'] == 'hello':\n"
        "        r = {'name': 'x', 'version': '1', 'capabilities': ['web_search', 'search-api', 'cancel']}\n"
        "    elif m['method'] in ('cancel', 'shutdown'):\n"
        "        r = {}\n"
        "    else:\n"
        "        continue\n"
        "    print(json.dumps({'id': m['id'], 'result': r}), flush=True)\n"
    )

    async def scenario() -> tuple[str, str]:
        target = script(body)
        try:
            await target.hello()
            cancelled = target.start_call("web_search", {"arguments": {"queries": ["q"]}})
            await cancelled.cancel()
            with pytest.raises(targets.CallStalled) as stalled:
                await cancelled.outcome(0.2)
            plain = target.start_call("web_search", {"arguments": {"queries": ["q"]}})
            with pytest.raises(targets.CallStalled) as silent:
                await plain.outcome(0.2)
            return str(stalled.value), str(silent.value)
        finally:
            await target.close()

    cancelled, plain = asyncio.run(scenario())
    assert "did not answer request 2 within" in cancelled
    assert "(it acknowledged the call's cancel " in cancelled, cancelled
    assert "did not answer request 4 within" in plain
    assert "cancel" not in plain, plain  # a call never cancelled says nothing of a cancel


def test_a_closed_adapter_s_process_group_is_never_signalled_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # close() ends the group; afterwards its id may belong to another group, so neither a late terminate()
    # (an interrupt racing the close) nor a second close() may signal it.
    signalled: list[tuple[int, int]] = []
    real_killpg = os.killpg

    def killpg(pgid: int, sig: int) -> None:
        signalled.append((pgid, sig))
        real_killpg(pgid, sig)

    monkeypatch.setattr(targets.os, "killpg", killpg)
    target = script(f"import sys; sys.stdin.readline(); {HELLO}; sys.stdin.read()")

    async def scenario() -> tuple[int, int]:
        await target.hello()
        await target.close()
        closed = len(signalled)
        target.terminate()
        await target.close()
        return closed, len(signalled)

    closed, after = asyncio.run(scenario())
    assert closed >= 1  # the close itself ended the group
    assert after == closed, signalled


def test_the_example_adapter_answers_a_call_its_code_raised_in_with_an_error_at_once() -> None:
    # catches: a call whose task raised anything but WebError left unanswered until the run's call timeout
    # (a CI run saw "adapter did not answer request 16 within 20s" and nothing to say why)
    from .conftest import EXAMPLE_ADAPTER

    call = {"id": 2, "method": "standalone_resolve", "params": {"document": 5, "environ_set": 7}}
    proc = subprocess.Popen([sys.executable, str(EXAMPLE_ADAPTER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    watchdog = threading.Timer(15.0, proc.kill)  # an unanswered call ends the adapter: readline gets ''
    watchdog.start()
    try:
        proc.stdin.write(json.dumps({"id": 1, "method": "hello"}) + "\n" + json.dumps(call) + "\n")
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(2)]  # stdin stays open: the call may finish
    finally:
        watchdog.cancel()
        _, stderr = proc.communicate(timeout=30)  # closing stdin ends the adapter
    (answer,) = [a for a in answers if a["id"] == 2]
    assert answer["error"]["code"] == "WEB_PROVIDER_ERROR", answer
    assert "standalone_resolve raised TypeError" in answer["error"]["message"]
    assert "Traceback" in stderr


DEEP_VALUE_ADAPTER = """
import json, sys
deep = '{"sources": [], "x": ' + "[" * 600 + "]" * 600 + "}"  # written out: json.dumps would recurse
for line in sys.stdin:
    m = json.loads(line)
    if m["method"] == "hello":
        r = json.dumps({"name": "deep", "version": "1", "capabilities": ["web_search", "search-api"]})
    elif m["method"] == "web_search":
        r = '{"text": "x", "value": ' + deep + "}"
    else:
        r = "{}"
    print('{"id": %d, "result": %s}' % (m["id"], r), flush=True)
    if m["method"] == "shutdown":
        break
"""


def test_an_answer_nested_deeper_than_a_report_keeps_gives_a_verdict_and_reports(tmp_path: Path) -> None:
    # catches: the report's recursive scrub of a check's evidence (the adapter's value) hitting the recursion
    # limit after the FAIL line: no verdict, no report, a traceback
    report = tmp_path / "report.json"
    code = dsweb_certify("--adapter", shlex.join([sys.executable, "-c", DEEP_VALUE_ADAPTER]),
                         "--only", "search.value.schema", "--json", str(report))
    assert code == 1
    (check,) = json.loads(report.read_text(encoding="utf-8"))["checks"]
    assert check["outcome"] in ("failed", "error")
    assert "nested deeper than 64 levels" in json.dumps(check)



def test_an_adapter_writing_null_beside_its_answer_is_read_as_the_answer() -> None:
    # From a hunt (S1): an encoder that writes every field ('"error": null' beside a result, '"result": null' beside
    # an error) was refused at hello ("adapter refused hello: None"); a null beside a non-null answer is absent.
    body = (
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['method'] == 'hello':\n"
        "        a = {'result': {'name': 'x', 'version': '1', 'capabilities': ['web_search', 'search-api']}}\n"
        "    elif m['method'] in ('configure', 'shutdown'):\n"
        "        a = {'result': {}}\n"
        "    else:\n"
        "        a = {'result': None, 'error': {'code': 'WEB_PROVIDER_ERROR', 'message': 'down'}}\n"
        "    print(json.dumps({'id': m['id'], 'error': None, 'cancelled': None, **a}), flush=True)\n"
    )

    async def scenario() -> tuple[str, str | None]:
        target = script(body)
        try:
            hello = await target.hello()
            outcome = await target.start_call("web_search", {"arguments": {"queries": ["q"]}}).outcome(10.0)
            return hello.name, outcome.error_code
        finally:
            await target.close()

    assert asyncio.run(scenario()) == ("x", "WEB_PROVIDER_ERROR")
