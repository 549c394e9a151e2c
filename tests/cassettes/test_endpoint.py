"""certify_endpoint against the emulator (full, a Messages-only gateway, a gateway without
/fetch) and offline; live progress; the exposed check list."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from dsweb_ref.certification import endpoint
from dsweb_ref.certification.endpoint import ENDPOINT_CHECKS, ENDPOINT_SPECS, NOT_SERVED, certify_endpoint
from dsweb_ref.certification.model import Check, CheckResult, Outcome
from dsweb_ref.emulator import Emulator, Status

from .conftest import CASSETTES

IDS = [c.id for c in ENDPOINT_CHECKS]
SEARCH_IDS = [s.check.id for s in ENDPOINT_SPECS if s.route == "search"]
FETCH_IDS = [s.check.id for s in ENDPOINT_SPECS if s.route == "fetch"]


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
        "endpoint.tools.fetch.auth.rejects_bad_key",
        "endpoint.tools.auth.requires_key",
        "endpoint.search.empty_results_ok",
        "endpoint.search.query_limit",
        "endpoint.search.query_characters",
        "endpoint.search.query_empty",
        "endpoint.search.operators",
        "endpoint.search.ori_question",
        "endpoint.search.ori_question_limit",
        "endpoint.search.ori_question_blank",
        "endpoint.search.count_lowered",
        "endpoint.search.count_max",
        "endpoint.fetch.unavailable_page",
    ]
    assert all(c.seed == "001" and c.description and "\n" not in c.description for c in ENDPOINT_CHECKS)


def test_endpoint_checks_are_exposed_as_checks() -> None:
    """``dsweb certify --list/--only`` lists ENDPOINT_CHECKS: plain Check objects, in run order."""
    assert isinstance(ENDPOINT_CHECKS, tuple) and all(isinstance(c, Check) for c in ENDPOINT_CHECKS)
    assert ENDPOINT_CHECKS == tuple(s.check for s in ENDPOINT_SPECS)
    assert len(set(IDS)) == len(IDS)
    assert SEARCH_IDS and FETCH_IDS and {s.route for s in ENDPOINT_SPECS} == {"messages", "search", "fetch"}


def test_progress_reports_each_check_as_it_completes(emulator: Emulator, emulator_api_key: str) -> None:
    seen: list[CheckResult] = []
    tools_requests_when_reported: list[int] = []

    def progress(result: CheckResult) -> None:
        seen.append(result)
        tools_requests_when_reported.append(len([r for r in emulator.log.records() if r.route in ("search", "fetch")]))

    _, results = certify_endpoint(
        messages_base=emulator.messages_base,
        tools_base=emulator.tools_base,
        api_key=emulator_api_key,
        timeout_s=10,
        progress=progress,
    )
    # every result came through the callback, in order, as the same objects that are returned
    assert [id(r) for r in seen] == [id(r) for r in results] and [r.check.id for r in seen] == IDS
    # ... and each as its check completed: the Messages checks were reported before any tools
    # request was sent, and later checks kept sending requests after earlier reports
    assert tools_requests_when_reported[:2] == [0, 0]
    assert tools_requests_when_reported[-1] > tools_requests_when_reported[2] > 0
    assert tools_requests_when_reported == sorted(tools_requests_when_reported)


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
    # each route was discovered on its own (fetch's enveloped "Not Found" confirmed with an invalid
    # URL); no other tools check reached the gateway
    tools_paths = [r.path for r in gateway.log.records() if "/v1/tools/" in r.path]
    assert sorted(tools_paths) == ["/v1/tools/fetch", "/v1/tools/fetch", "/v1/tools/search"]


def _by_id(results: list[CheckResult]) -> dict[str, CheckResult]:
    return {r.check.id: r for r in results}


def _certify_live(emu: Emulator, key: str) -> tuple[Any, dict[str, CheckResult]]:
    target, results = certify_endpoint(
        messages_base=emu.messages_base, tools_base=emu.tools_base, api_key=key, timeout_s=10
    )
    assert [r.check.id for r in results] == IDS
    return target, _by_id(results)


def test_fetch_route_missing_alone(emulator: Emulator, emulator_api_key: str) -> None:
    """/search answers, /fetch is the framework's plain-text 404: only the fetch checks are skipped."""
    emulator.inject("fetch", Status(404, body=b"404 page not found\n", content_type="text/plain"), times=None)
    target, by_id = _certify_live(emulator, emulator_api_key)
    for cid in FETCH_IDS:
        assert (by_id[cid].outcome, by_id[cid].reason) == (Outcome.SKIPPED, NOT_SERVED), cid
    for cid in [*SEARCH_IDS, "endpoint.messages.web_search", "endpoint.auth.rejects_bad_key"]:
        assert by_id[cid].outcome == Outcome.PASSED, (cid, by_id[cid].reason)
    assert target.capabilities == ("messages.web_search", "tools.search")
    assert by_id["endpoint.tools.fetch"].details["not_served_evidence"] == "HTTP 404 without the API's error envelope"
    assert len(emulator.log.for_route("fetch")) == 1  # discovered by one request


def test_fetch_route_missing_behind_an_enveloped_not_found(emulator: Emulator, emulator_api_key: str) -> None:
    """A gateway whose not-found uses the error envelope: an invalid URL gets 404 too, so not served."""
    emulator.inject("fetch", Status(404, "Not Found"), times=None)
    target, by_id = _certify_live(emulator, emulator_api_key)
    assert all(by_id[cid].outcome == Outcome.SKIPPED and by_id[cid].reason == NOT_SERVED for cid in FETCH_IDS)
    assert all(by_id[cid].outcome == Outcome.PASSED for cid in SEARCH_IDS)
    assert by_id["endpoint.tools.fetch"].details["confirmation"] == {"probe": "fetch-api.bad-url", "statuses": [404]}
    assert "tools.fetch" not in target.capabilities


def test_fetch_api_404_is_not_a_missing_route(emulator: Emulator, emulator_api_key: str) -> None:
    """The API's own "failed to fetch URL" 404 means the route is served: the check fails, loudly."""
    emulator.inject("fetch", Status(404, "failed to fetch URL"), times=1)
    target, by_id = _certify_live(emulator, emulator_api_key)
    fetch = by_id["endpoint.tools.fetch"]
    assert fetch.outcome == Outcome.FAILED and "HTTP 404" in fetch.reason
    assert by_id["endpoint.fetch.unavailable_page"].outcome == Outcome.PASSED
    assert "tools.fetch" in target.capabilities
    # one request per fetch check (success, bad key, unavailable page): no confirmation request was needed
    assert len(emulator.log.for_route("fetch")) == len(FETCH_IDS) == 3


def test_enveloped_404_on_a_served_fetch_route_fails(emulator: Emulator, emulator_api_key: str) -> None:
    """An enveloped 404 with another message, but the route validates URLs (400): served, FAILED."""
    emulator.inject("fetch", Status(404, "no such page"), times=1)
    _, by_id = _certify_live(emulator, emulator_api_key)
    fetch = by_id["endpoint.tools.fetch"]
    assert fetch.outcome == Outcome.FAILED and "HTTP 404" in fetch.reason
    assert fetch.details["confirmation"] == {"probe": "fetch-api.bad-url", "statuses": [400]}


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


def test_offline_missing_cassette_dir_is_an_error(tmp_path: Path, no_network: list[Any]) -> None:
    with pytest.raises(ValueError, match=r"cassette directory .*nowhere does not exist"):
        certify_endpoint(messages_base=None, tools_base=None, cassette_dir=tmp_path / "nowhere")
    (tmp_path / "file.yaml").write_text("x", "utf-8")
    with pytest.raises(ValueError, match="is not a directory"):
        certify_endpoint(messages_base=None, tools_base=None, cassette_dir=tmp_path / "file.yaml")


def test_offline_dir_without_endpoint_cassettes_is_an_error(tmp_path: Path, no_network: list[Any]) -> None:
    # empty, and holding only cassettes no endpoint check uses: never an all-skipped "pass"
    with pytest.raises(ValueError, match="holds no cassette for any endpoint check"):
        certify_endpoint(messages_base=None, tools_base=None, cassette_dir=tmp_path)
    (tmp_path / "search-api").mkdir()
    shutil.copy(CASSETTES / "search-api" / "redirect.yaml", tmp_path / "search-api" / "redirect.yaml")
    with pytest.raises(ValueError, match="holds no cassette for any endpoint check"):
        certify_endpoint(messages_base=None, tools_base=None, cassette_dir=str(tmp_path))


def test_offline_partial_dir_skips_only_the_missing(tmp_path: Path, no_network: list[Any]) -> None:
    shutil.copytree(CASSETTES / "messages", tmp_path / "messages")
    target, results = certify_endpoint(messages_base=None, tools_base=None, cassette_dir=tmp_path)
    by_id = _by_id(results)
    assert by_id["endpoint.messages.web_search"].outcome == Outcome.PASSED
    assert by_id["endpoint.auth.rejects_bad_key"].outcome == Outcome.PASSED
    rest = [r for r in results if r.check.id not in ("endpoint.messages.web_search", "endpoint.auth.rejects_bad_key")]
    assert rest and all(r.outcome == Outcome.SKIPPED and r.reason.startswith("no cassette ") for r in rest)
    assert target.capabilities == ("messages.web_search",)
