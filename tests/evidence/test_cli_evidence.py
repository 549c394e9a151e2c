"""``dsweb search --evidence`` prints the evidence pipeline's model-visible text."""

from __future__ import annotations

import json

import pytest

from dsweb_ref.cli import main


def test_dsweb_search_evidence_on_the_emulator(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--emulator", "--new-api", "--evidence", "search api pricing", "上海天气"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Query 1: search api pricing\n- ")
    assert "\n\nQuery 2: 上海天气\n- " in out
    assert "(source: https://news.example.test/2026/10/search-api-launch)" in out


def test_dsweb_search_evidence_json_and_local_refusal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--emulator", "--new-api", "--evidence", "--json", "rate limits"]) == 0
    value = json.loads(capsys.readouterr().out)
    assert value["value"]["queries"][0]["query"] == "rate limits"
    assert main(["search", "--emulator", "--new-api", "--evidence", "file:///etc/hosts"]) == 1
    assert "WEB_INVALID_ARGUMENTS" in capsys.readouterr().err


def test_dsweb_search_evidence_shows_the_pages_the_emulator_serves(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--emulator", "--new-api", "--evidence", "site:pages.test ราคาทองคำวันนี้"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Query 1: site:pages.test ราคาทองคำวันนี้\n- ")
    assert "ราคาทองคำแท่งวันนี้ขายออกบาทละ 41,000 บาท" in out and ".pages.test/pages/" in out
