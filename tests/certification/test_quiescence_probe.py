"""The ground the quiescence checks stand on: an answer's arrival is stamped (and probed) by the
reader the moment its line is read, and the kernel's view of a loopback connection changes before
the client's close() returns."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest

from dsweb_ref.certification.checks._tcp import established_peers
from dsweb_ref.certification.targets import AdapterTarget

from .conftest import script_command

ECHO = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    m = json.loads(line)\n"
    "    if m['method'] == 'hello':\n"
    "        r = {'name': 'x', 'version': '1', 'capabilities': ['web_search', 'search-api']}\n"
    "    elif m['method'] == 'web_search':\n"
    "        r = {'text': 'ok', 'value': {'sources': [], 'truncated': False}}\n"
    "    else:\n"
    "        r = {}\n"
    "    print(json.dumps({'id': m['id'], 'result': r}), flush=True)\n"
)


def test_answer_is_stamped_and_probed_when_the_line_is_read_not_when_a_check_asks() -> None:
    async def scenario() -> tuple[float, float, object]:
        target = AdapterTarget(script_command(ECHO), hello_timeout=10, call_timeout=10)
        try:
            await target.hello()
            arrived = asyncio.Event()

            def probe() -> str:
                arrived.set()
                return "seen at arrival"

            call = target.start_call("web_search", {"arguments": {"queries": ["q"]}}, probe)
            await asyncio.wait_for(arrived.wait(), 10)  # the reader has the line; nobody asked for it yet
            asked = time.monotonic()
            outcome = await call.outcome(10)
            return outcome.answered_at, asked, outcome.at_answer
        finally:
            await target.close()

    answered_at, asked, seen = asyncio.run(scenario())
    assert seen == "seen at arrival"
    assert 0 < answered_at <= asked


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs the Linux TCP table")
def test_kernel_sees_a_loopback_close_before_close_returns() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port), timeout=5)
        accepted, _ = server.accept()
        with accepted:
            peer = client.getsockname()[1]
            assert established_peers(port, {peer}) == {peer}
            assert established_peers(port, {peer + 1 if peer < 65535 else peer - 1}) == set()
            client.close()
            assert established_peers(port, {peer}) == set()  # no wait: CLOSE_WAIT already


def test_established_peers_without_a_kernel_table_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    import dsweb_ref.certification.checks._tcp as tcp

    monkeypatch.setattr(tcp, "_TABLES", (Path("/nonexistent/tcp"),))
    assert established_peers(1, {2}) is None
