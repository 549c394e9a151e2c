"""Lifecycle, addresses, options, the request log's contents, and the CLI."""

from __future__ import annotations

import argparse
import json
import queue
import signal
import subprocess
import sys
import threading

import httpx
import pytest

from dsweb_ref.cli import emulator as emulator_cli
from dsweb_ref.emulator import DEFAULT_API_KEY, Emulator
from dsweb_ref.emulator.fixtures import EmulatorFactory
from dsweb_ref.emulator.server import OTHER_TOOLS_PREFIXES

from ._support import SEARCH


def test_addresses(emulator: Emulator) -> None:
    assert emulator.base_url == f"http://127.0.0.1:{emulator.port}"
    assert emulator.tools_base == emulator.base_url + "/v1/tools"
    assert emulator.messages_base == emulator.base_url + "/anthropic/v1"
    assert emulator.port > 0


def test_context_manager_stops_the_server(emulator_api_key: str) -> None:
    with Emulator(api_keys=(emulator_api_key,)) as emu:
        url = emu.tools_base + "/search"
    with pytest.raises(httpx.ConnectError):
        httpx.post(url, json={"query": "x"}, timeout=5)
    emu.stop()  # idempotent


def test_default_key_and_constructor_checks() -> None:
    with Emulator() as emu:
        headers = {"Authorization": f"Bearer {DEFAULT_API_KEY}"}
        assert httpx.post(emu.tools_base + "/search", json={"query": "x"}, headers=headers).status_code == 200
    with pytest.raises(ValueError):
        Emulator(api_keys=(), account_tokens=())
    with pytest.raises(ValueError):
        Emulator(host="0.0.0.0")
    with pytest.raises(ValueError):
        Emulator(tools_prefix="api/v1/tools/")


def test_custom_tools_prefix(emulator_factory: EmulatorFactory, emulator_api_key: str) -> None:
    emu: Emulator = emulator_factory(api_keys=(emulator_api_key,), tools_prefix="/api/v1/tools")
    headers = {"Authorization": f"Bearer {emulator_api_key}"}
    assert emu.tools_base.endswith("/api/v1/tools")
    assert httpx.post(emu.tools_base + "/search", json={"query": "x"}, headers=headers).status_code == 200
    assert httpx.post(emu.base_url + SEARCH, json={"query": "x"}, headers=headers).status_code == 404


def test_messages_only_gateway(emulator_factory: EmulatorFactory, emulator_api_key: str) -> None:
    emu: Emulator = emulator_factory(api_keys=(emulator_api_key,), tools_prefix=None)
    headers = {"Authorization": f"Bearer {emulator_api_key}"}
    assert httpx.post(emu.base_url + SEARCH, json={"query": "x"}, headers=headers).status_code == 404
    with pytest.raises(RuntimeError):
        _ = emu.tools_base


def test_log_records_what_was_sent(emulator: Emulator, client: httpx.Client) -> None:
    client.post(SEARCH, json={"query": "coffee", "count": 3}, headers={"X-Trace": "t1"})
    client.post("/nowhere", content=b"raw bytes")
    first, second = emulator.log.wait_for(2, done=True)
    assert (first.seq, first.method, first.path, first.route) == (1, "POST", SEARCH, "search")
    assert first.body == b'{"query":"coffee","count":3}'
    assert first.json == {"query": "coffee", "count": 3}
    assert first.header("x-trace") == "t1" and first.header("content-type") == "application/json"
    assert first.credential == "api_key" and first.status == 200 and first.fault is None
    assert first.response_body.startswith(b'{"results":[')
    assert first.finished is not None and first.started <= first.finished
    assert not first.disconnected and first.client is not None
    assert (second.route, second.status, second.json, second.credential) == (None, 404, None, "not_required")
    assert emulator.log.get(2) == second and emulator.log.for_route("search") == [first]


def test_wait_for_times_out(emulator: Emulator) -> None:
    with pytest.raises(TimeoutError):
        emulator.log.wait_for(1, timeout=0.05)


def _cli_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dsweb")
    emulator_cli.register(parser.add_subparsers())
    return parser


def test_cli_refuses_non_loopback_host(capsys: pytest.CaptureFixture[str]) -> None:
    args = _cli_parser().parse_args(["emulator", "--host", "0.0.0.0"])
    assert args.func(args) == 2
    assert "--allow-non-loopback" in capsys.readouterr().err


def test_cli_serves_until_terminated(emulator_api_key: str) -> None:
    # `dsweb emulator` is not in dsweb's COMMANDS yet, so build the same parser the CLI would.
    code = (
        "import argparse, sys\n"
        "from dsweb_ref.cli import emulator\n"
        "p = argparse.ArgumentParser(); emulator.register(p.add_subparsers())\n"
        "a = p.parse_args(sys.argv[1:]); sys.exit(a.func(a))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "emulator", "--json", "--api-key", emulator_api_key],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    threading.Thread(target=lambda: lines.put(proc.stdout.readline() if proc.stdout else ""), daemon=True).start()
    try:
        announced = json.loads(lines.get(timeout=60))
        assert announced["credentials"] == "1 API key(s) from --api-key"
        assert emulator_api_key not in json.dumps(announced)
        headers = {"Authorization": f"Bearer {emulator_api_key}"}
        response = httpx.post(announced["tools_base"] + "/search", json={"query": "x"}, headers=headers, timeout=10)
        assert response.status_code == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()


def test_log_limit_keeps_the_newest_records(emulator_factory: EmulatorFactory, emulator_api_key: str) -> None:
    emu = emulator_factory(api_keys=(emulator_api_key,), log_limit=2)
    for query in ("a", "b", "c"):
        httpx.post(
            emu.tools_base + "/search", json={"query": query}, headers={"Authorization": f"Bearer {emulator_api_key}"}
        )
    assert [r.json["query"] for r in emu.log.records()] == ["b", "c"]
    assert emu.log.max_in_flight == 1


def test_other_deployment_bases_are_served_beside_the_public_one(emulator_factory: EmulatorFactory,
                                                                 emulator_api_key: str) -> None:
    """Issue 24 item 4: one emulator serves the tools routes under several complete bases, so a check can
    tell a client that uses its configured base from one that appends a fixed /v1/tools path."""
    emu: Emulator = emulator_factory(api_keys=(emulator_api_key,))
    headers = {"Authorization": f"Bearer {emulator_api_key}"}
    assert emu.tools_bases == tuple(emu.base_url + p for p in ("/v1/tools", *OTHER_TOOLS_PREFIXES))
    assert {"/deepseek/tools", "/api/v1/tools"} <= set(OTHER_TOOLS_PREFIXES)
    for base in emu.tools_bases:
        assert httpx.post(base + "/search", json={"query": "x"}, headers=headers).status_code == 200
        assert httpx.post(base + "/fetch", json={"url": "https://docs.example.test/api/search"},
                          headers=headers).status_code == 200
    assert [r.route for r in emu.log.records()] == ["search", "fetch"] * len(emu.tools_bases)
    nested = emu.base_url + "/deepseek/v1/tools/search"
    assert httpx.post(nested, json={"query": "x"}, headers=headers).status_code == 404
    gateway: Emulator = emulator_factory(api_keys=(emulator_api_key,), tools_prefix=None)
    assert gateway.tools_bases == ()
    for prefix in OTHER_TOOLS_PREFIXES:
        url = gateway.base_url + prefix + "/search"
        assert httpx.post(url, json={"query": "x"}, headers=headers).status_code == 404
    with pytest.raises(ValueError):
        Emulator(other_tools_prefixes=("deepseek/tools",))


def test_an_idle_connection_is_kept_open_longer_than_any_check_waits(emulator: Emulator) -> None:
    """uvicorn's 5 s keep-alive default closed pooled connections while a loaded runner's client was
    reusing them; the request then met a reset (a ReadError failed a correct target in CI)."""
    from dsweb_ref.certification.checks._base import CALL_TIMEOUT
    from dsweb_ref.emulator import _serve

    used = _serve.config(emulator._state).timeout_keep_alive
    assert used == _serve.KEEP_ALIVE
    assert used >= 10 * CALL_TIMEOUT  # no idle close within any check, however long it waits
