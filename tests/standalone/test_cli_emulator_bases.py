"""``dsweb emulator`` prints the exact base URL each official SDK takes, and those bases work."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading

import anthropic
import openai


def _read_lines(proc: subprocess.Popen[str], out: queue.Queue[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        out.put(line)


def test_printed_sdk_bases_reach_the_routes() -> None:
    key = "dsweb-cli-bases-key-0001"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dsweb_ref", "emulator", "--api-key", key],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_read_lines, args=(proc, lines), daemon=True).start()
    try:
        bases: dict[str, str] = {}
        while len(bases) < 2:
            line = lines.get(timeout=60)
            for label in ("Anthropic SDK:", "OpenAI SDK:"):
                if line.strip().startswith(label):
                    bases[label] = line.split("base_url=", 1)[1].split()[0]
        with anthropic.Anthropic(base_url=bases["Anthropic SDK:"], api_key=key, max_retries=0,
                                 _strict_response_validation=True) as client:
            message = client.messages.create(model="deepseek-v4-flash", max_tokens=16,
                                             messages=[{"role": "user", "content": "hello"}])
        assert message.type == "message"
        with openai.OpenAI(base_url=bases["OpenAI SDK:"], api_key=key, max_retries=0,
                           _strict_response_validation=True) as oa:
            assert oa.responses.create(model="deepseek-v4-flash", input="hello").object == "response"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
