"""`dsweb emulator` tells a newcomer how to drive it: per route, the base URL a client takes and a curl
call with the test key; the printed Anthropic base works with the official SDK as printed."""

from __future__ import annotations

import json
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from dsweb_ref.cli import emulator as emulator_cli
from dsweb_ref.emulator import Emulator
from dsweb_ref.emulator.server import DEFAULT_API_KEY


@pytest.fixture(scope="module")
def announced() -> Iterator[dict[str, Any]]:
    """A real `dsweb emulator --json` process with the built-in test key; yields its announcement."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dsweb_ref", "emulator", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(proc.stdout.readline() if proc.stdout else ""), daemon=True).start()
    try:
        yield json.loads(lines.get(timeout=60))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        proc.stdout.close()


def test_the_printed_anthropic_base_drives_the_official_sdk(announced: dict[str, Any]) -> None:
    base = announced["examples"]["messages"]["anthropic_sdk_base_url"]
    assert base.endswith("/anthropic") and base == announced["base_url"] + "/anthropic"
    client = anthropic.Anthropic(base_url=base, api_key=DEFAULT_API_KEY, max_retries=0, timeout=30)
    try:
        message = client.messages.create(
            model="deepseek-v4-flash",
            max_tokens=1024,
            messages=[{"role": "user", "content": "search API"}],
            tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 1}],
        )
    finally:
        client.close()
    kinds = [block.type for block in message.content]
    assert message.role == "assistant" and {"server_tool_use", "web_search_tool_result", "text"} <= set(kinds)
    results = next(b for b in message.content if b.type == "web_search_tool_result").content
    assert isinstance(results, list) and results and all(r.url.startswith("https://") for r in results)


def test_the_sdk_given_the_messages_base_would_double_v1(announced: dict[str, Any]) -> None:
    # Why the SDK base is printed apart: given `.../anthropic/v1` it posts to `/anthropic/v1/v1/messages`.
    client = anthropic.Anthropic(base_url=announced["messages_base"], api_key=DEFAULT_API_KEY, max_retries=0)
    try:
        with pytest.raises(anthropic.NotFoundError):
            client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "x"}])
    finally:
        client.close()


ROUTES = [("messages", "content"), ("responses", "output"), ("search", "results"), ("fetch", "content")]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize(("route", "answer_key"), ROUTES)
def test_every_printed_curl_call_works_as_printed(announced: dict[str, Any], route: str, answer_key: str) -> None:
    line = announced["examples"][route]["curl"]
    assert DEFAULT_API_KEY in line
    out = subprocess.run(shlex.split(line), capture_output=True, text=True, check=True, timeout=30)
    answer = json.loads(out.stdout)
    assert answer[answer_key], answer


def test_the_text_announcement_names_each_base_and_example(capsys: pytest.CaptureFixture[str]) -> None:
    with Emulator() as emu:
        emulator_cli._announce(emu, emulator_cli.BUILTIN_SOURCE, as_json=False)
    out = capsys.readouterr().out
    assert f"Anthropic SDK:   base_url={emu.base_url}/anthropic  (" in out
    assert f"OpenAI SDK:      base_url={emu.base_url}/v1  (" in out
    assert f"Search and Fetch APIs: base {emu.base_url}/v1/tools" in out
    tries = [line.strip().removeprefix("try:  ") for line in out.splitlines() if line.strip().startswith("try:")]
    assert [shlex.split(t)[2] for t in tries] == [
        f"{emu.base_url}/anthropic/v1/messages",
        f"{emu.base_url}/v1/responses",
        f"{emu.base_url}/v1/tools/search",
        f"{emu.base_url}/v1/tools/fetch",
    ]


def test_a_chosen_key_is_never_printed_only_a_placeholder(capsys: pytest.CaptureFixture[str]) -> None:
    with Emulator(api_keys=("my-own-secret-key-123",)) as emu:
        emulator_cli._announce(emu, "1 API key(s) from --api-key", as_json=True)
    out = capsys.readouterr().out
    assert "my-own-secret-key-123" not in out and "Bearer $KEY" in out
