"""certify_endpoint against the emulator (full, and a Messages-only gateway) and offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsweb_ref.certification import endpoint
from dsweb_ref.certification.emulator import Emulator
from dsweb_ref.certification.endpoint import ENDPOINT_CHECKS, NOT_SERVED, certify_endpoint
from dsweb_ref.certification.model import Outcome

from .conftest import CASSETTES

IDS = [c.check.id for c in ENDPOINT_CHECKS]


@pytest.fixture(autouse=True)
def _fast_pacing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoint, "MAX_RPS", 1000.0)


def test_check_ids_are_stable_and_documented() -> None:
    assert IDS == [
        "endpoint.messages.web_search",
        "endpoint.auth.rejects_bad_key",
        "endpoint.tools.search",
        "endpoint.tools.fetch",
        "endpoint.tools.auth.rejects_bad_key",
        "endpoint.search.empty_results_ok",
        "endpoint.search.query_limit",
        "endpoint.search.operators",
        "endpoint.search.ori_question",
        "endpoint.fetch.unavailable_page",
    ]
    assert all(
        c.check.seed == "001" and c.check.description and "\n" not in c.check.description for c in ENDPOINT_CHECKS
    )


def test_full_endpoint_passes_live(emulator: Emulator, emulator_api_key: str) -> None:
    target, results = certify_endpoint(
        messages_base=emulator.messages_base, tools_base=emulator.tools_base, api_key=emulator_api_key, timeout_s=10
    )
    assert [r.check.id for r in results] == IDS
    assert {r.check.id: r.outcome for r in results} == dict.fromkeys(IDS, Outcome.PASSED), [
        (r.check.id, r.reason) for r in results if r.outcome != Outcome.PASSED
    ]
    assert target.kind == "endpoint"
    assert target.capabilities == ("messages.web_search", "tools.search", "tools.fetch")
    assert emulator_api_key not in repr(target) + repr(results)


def test_messages_only_gateway(emulator_factory: Any, emulator_api_key: str) -> None:
    gateway = emulator_factory(tools_prefix=None)
    _, results = certify_endpoint(
        messages_base=gateway.messages_base,
        tools_base=gateway.base_url + "/v1/tools",
        api_key=emulator_api_key,
        timeout_s=10,
    )
    by_id = {r.check.id: r for r in results}
    assert by_id["endpoint.messages.web_search"].outcome == Outcome.PASSED
    assert by_id["endpoint.auth.rejects_bad_key"].outcome == Outcome.PASSED
    tools = [r for r in results if not r.check.id.startswith(("endpoint.messages", "endpoint.auth"))]
    assert tools and all(r.outcome == Outcome.SKIPPED and r.reason == NOT_SERVED for r in tools)
    # one request discovered it: the other tools checks never reached the gateway
    assert len([r for r in gateway.log.records() if "/v1/tools/" in r.path]) == 1


def test_missing_base_and_key(emulator: Emulator) -> None:
    _, results = certify_endpoint(messages_base=None, tools_base=emulator.tools_base, api_key=None, timeout_s=5)
    by_id = {r.check.id: r for r in results}
    assert by_id["endpoint.messages.web_search"].outcome == Outcome.SKIPPED
    assert by_id["endpoint.messages.web_search"].reason == "no messages base given"
    assert by_id["endpoint.tools.search"].outcome == Outcome.ERROR


def test_wrong_answers_fail(emulator: Emulator, emulator_api_key: str) -> None:
    # A key the endpoint rejects: the success checks fail with the status in the reason.
    _, results = certify_endpoint(
        messages_base=emulator.messages_base, tools_base=emulator.tools_base, api_key="dsweb-not-the-key", timeout_s=5
    )
    by_id = {r.check.id: r for r in results}
    assert by_id["endpoint.tools.search"].outcome == Outcome.FAILED
    assert "401" in by_id["endpoint.tools.search"].reason
    assert by_id["endpoint.tools.auth.rejects_bad_key"].outcome == Outcome.PASSED


def test_offline_from_committed_cassettes(no_network: list[Any]) -> None:
    target, results = certify_endpoint(messages_base=None, tools_base=None, cassette_dir=CASSETTES)
    assert {r.check.id: r.outcome for r in results} == dict.fromkeys(IDS, Outcome.PASSED), [
        (r.check.id, r.reason) for r in results if r.outcome != Outcome.PASSED
    ]
    assert "replayed from cassettes" in target.description


def test_offline_missing_cassettes_are_skipped(tmp_path: Path, no_network: list[Any]) -> None:
    _, results = certify_endpoint(messages_base=None, tools_base=None, cassette_dir=tmp_path)
    assert all(r.outcome == Outcome.SKIPPED and r.reason.startswith("no cassette ") for r in results)
