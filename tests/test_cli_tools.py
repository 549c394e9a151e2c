"""`dsweb search` and `dsweb fetch`: the real tools with the configured providers."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from typing import Any

import pytest

from dsweb_ref.cli import main
from dsweb_ref.schemas import validate

LOOPBACK_DISGUISES = [
    "http://127.0.0.1/",
    "http://localhost:8080/",
    "http://foo.localhost/",
    "http://[::1]/",
    "http://2130706433/",
    "http://0x7f.0.0.1/",
    "http://127.1/",
    "http://[::ffff:127.0.0.1]/",
    "http://0/",
    "https://0177.0.0.1/",
]


@pytest.fixture
def network_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Record (and refuse) every DNS lookup and socket connect made in-process."""
    calls: list[tuple[str, Any]] = []

    def refuse(kind: str) -> Any:
        def inner(*args: Any, **kwargs: Any) -> Any:
            calls.append((kind, args[1:] if kind == "connect" else args))
            raise OSError(f"{kind} blocked by test")

        return inner

    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect"))
    return calls


@pytest.mark.parametrize("url", LOOPBACK_DISGUISES)
def test_dsweb_fetch_refuses_loopback_in_any_disguise_having_sent_nothing(
    url: str, network_calls: list[tuple[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fetch", url]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("Error: ")
    assert "WEB_BLOCKED_URL" in err or "WEB_INVALID_URL" in err
    assert network_calls == []


def test_dsweb_fetch_json_error_carries_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fetch", "--json", "http://127.0.0.1/"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["is_error"] is True and payload["error"]["code"] == "WEB_BLOCKED_URL"


def test_dsweb_fetch_as_a_process_exits_nonzero_for_loopback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dsweb_ref", "fetch", "http://[::ffff:7f00:1]/"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "WEB_BLOCKED_URL" in proc.stderr


def test_dsweb_search_with_the_emulator_runs_a_merged_batch(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--emulator", "--json", "search API", "rate limits"]) == 0
    payload = json.loads(capsys.readouterr().out)
    value = payload["value"]
    assert validate("web_search.output", value) == []
    urls = [s["url"] for s in value["sources"]]
    assert len(urls) == len(set(urls)) >= 2
    assert "content" not in value  # Messages search never trusts the model's prose


def test_dsweb_search_with_the_new_api_on_the_emulator(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--emulator", "--new-api", "--prompt", "how   do\tI search?", "search API"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Sources:\n- [")
    assert text.rstrip().endswith("Cite the relevant URLs above as markdown links in your answer.")


def test_dsweb_fetch_through_the_fetch_api_on_the_emulator(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fetch", "--emulator", "--new-api", "--json", "https://docs.example.test/api/search"]) == 0
    value = json.loads(capsys.readouterr().out)["value"]
    assert validate("web_fetch.output", value) == []
    assert value["status_code"] == 200 and value["body"]["kind"] == "text"


def test_dsweb_search_model_errors_exit_nonzero_with_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--emulator", "a", "b", "c", "d", "e"]) == 1
    out, err = capsys.readouterr()
    assert out.strip() == "Error: queries must contain at most 4 queries"
    assert "WEB_INVALID_ARGUMENTS" in err


def test_dsweb_search_without_a_key_fails_with_the_credential_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    monkeypatch.delenv("DSWEB_CONFIG", raising=False)
    # No --emulator: the shipped Messages provider needs a key before it sends anything.
    assert main(["search", "anything"]) == 1
    assert "WEB_PROVIDER_CREDENTIAL_MISSING" in capsys.readouterr().err


def test_bad_settings_file_is_a_coded_error(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "dsweb.toml"
    cfg.write_text("[tools]\nsearch_max_queries = 0\n")
    assert main(["search", "--config", str(cfg), "q"]) == 1
    assert "WEB_CONFIG_INVALID" in capsys.readouterr().err


def test_http_fetch_limits_follow_the_settings_of_each_operation() -> None:
    import asyncio

    from dsweb_ref import FetchRequest, WebError
    from dsweb_ref.runtime import build_runtime
    from dsweb_ref.settings import Settings, SettingsSource

    source = SettingsSource(Settings())
    runtime = build_runtime(source)
    long_url = "https://example.test/" + "a" * 100

    async def attempt() -> str:
        try:
            await runtime.web.fetch(FetchRequest(long_url))
        except WebError as err:
            return err.code
        return "sent"

    source.set(Settings().updated({"http_fetch.max_url_length": 50}))
    assert asyncio.run(attempt()) == "WEB_INVALID_URL"  # refused by the new limit, before any network


def test_any_http_fetch_timeout_the_settings_accept_the_provider_accepts() -> None:
    from dsweb_ref.runtime import http_fetch_config
    from dsweb_ref.settings import MAX_TIMEOUT_S, Settings

    config = http_fetch_config(Settings().updated({"http_fetch.timeout_s": MAX_TIMEOUT_S}))
    assert config.timeout_s == MAX_TIMEOUT_S
    defaults = http_fetch_config(Settings())
    from dsweb_ref.providers import HttpFetchConfig

    assert defaults == HttpFetchConfig()  # one set of defaults, not two that can drift
