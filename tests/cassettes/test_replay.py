"""Replay every committed cassette through its provider, offline (issue 3).

record_mode "none", body matching, and sockets that refuse to connect: a request the cassette
does not hold fails loudly instead of reaching a network.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
import vcr
from syrupy.assertion import SnapshotAssertion

from dsweb_ref import FetchResult, SearchResult, WebError
from dsweb_ref.replay.cassettes import (
    KEY_PLACEHOLDER,
    MATCH_ON,
    cassette_replay,
    iter_cassettes,
    load_cassette,
    make_vcr,
)
from dsweb_ref.replay.probes import ACCOUNT_PLACEHOLDER, PROBES, Probe, get_probe
from dsweb_ref.replay.record import replay_context, replay_probe
from dsweb_ref.tools import ToolResult

from ._support import outcome_json
from .conftest import CASSETTES

# probe id -> what the provider must make of the recorded answer:
#   ("sources", n) at least n sources | ("empty",) | ("fetched",) | ("tool",) | ("error", substrings...)
EXPECTED: dict[str, tuple[Any, ...]] = {
    "search-api.basic": ("sources", 3),
    "search-api.operators": ("sources", 1),
    "search-api.ori-question-none": ("sources", 1),
    "search-api.ori-question-collapsed": ("sources", 1),
    "search-api.ori-question-cut": ("sources", 1),
    "search-api.count-lowered": ("sources", 1),
    "search-api.empty": ("empty",),
    "search-api.too-long": ("error", "rejected the request (HTTP 400)"),
    "search-api.auth-invalid": ("error", "authentication failed (HTTP 401)"),
    "search-api.batch": ("tool",),
    "search-api.rate-limited": ("error", "rate limit reached (HTTP 429)", "retry after 7 seconds"),
    "search-api.malformed": ("error", "unprocessable response body"),
    "search-api.redirect": ("error", "redirected (HTTP 302)", "not followed"),
    "search-api.server-error": ("error", "service error (HTTP 503)"),
    "search-api.insufficient-balance": ("error", "insufficient balance (HTTP 402)", "Insufficient Balance", "top up"),
    "search-api.account-token": ("sources", 3),
    "search-api.ori-question-off": ("sources", 1),
    "search-api.retry-after-then-success": ("sources", 1),
    "search-api.backoff-then-success": ("sources", 1),
    "search-api.server-error-then-success": ("sources", 1),
    "search-api.insufficient-balance-not-retried": ("error", "insufficient balance (HTTP 402)", "top up"),
    "search-api.query-characters": ("sources", 1),
    "search-api.query-empty": ("error", "rejected the request (HTTP 400)"),
    "search-api.ori-question-too-long": ("error", "HTTP 400", "'ori_question' must be at most 128 characters"),
    "search-api.ori-question-blank": ("error", "HTTP 400", "'ori_question' must not be blank"),
    "search-api.count-max": ("sources", 3),
    "search-api.auth-missing": ("error", "HTTP 401", "Authentication Fails"),
    "fetch-api.retry-after-then-success": ("fetched",),
    "fetch-api.success": ("fetched",),
    "fetch-api.bad-url": ("error", "rejected the URL (HTTP 400)"),
    "fetch-api.forbidden": ("error", "crawler policy (HTTP 403)"),
    "fetch-api.not-found": ("error", "no usable content (HTTP 404)", "failed to fetch URL"),
    "fetch-api.server-error": ("error", "service error (HTTP 500)"),
    "fetch-api.auth-invalid": ("error", "authentication failed (HTTP 401)"),
    "fetch-api.rate-limited": ("error", "rate limit reached (HTTP 429)", "retry after 3 seconds"),
    "fetch-api.redirect": ("error", "redirected (HTTP 302)", "not followed"),
    "fetch-api.wrong-shape": ("error", "unprocessable response body", "content is not a string"),
    "fetch-api.insufficient-balance": ("error", "insufficient balance (HTTP 402)", "Insufficient Balance", "top up"),
    "messages.search": ("sources", 1),
    "messages.prose-only": ("error", "no web_search_tool_result blocks"),
    "messages.tool-error": ("error", "error_code max_uses_exceeded"),
    "messages.http-error": ("error", "HTTP 500", "Internal server error"),
    "messages.redirect": ("error", "redirected (HTTP 307)"),
    "messages.auth-invalid": ("error", "HTTP 401", "Authentication Fails"),
    "messages.malformed": ("error", "unprocessable response body", "not JSON"),
    "messages.wrong-shape": ("error", "unprocessable response body", "content is not a list"),
    "messages.account-token": ("sources", 1),
    "standalone-messages.search": ("tool",),
    "standalone-messages.prose-only": ("error", "without completing a native web search"),
    "standalone-messages.no-sources": ("tool",),
    "standalone-messages.huge-summary": ("tool",),
    "standalone-messages.redirect": ("error", "redirected (HTTP 307)", "not followed"),
    "standalone-responses.search": ("tool",),
    "standalone-responses.prose-only": ("error", "without completing a native web search"),
    "standalone-responses.no-sources": ("tool",),
    "standalone-responses.failed-search": ("error", "native web search failed"),
}
ACCOUNT_PROBES = sorted(p.id for p in PROBES if p.auth == "account")
REDIRECT_PROBES = sorted(p.id for p in PROBES if p.expect_status and all(300 <= s < 400 for s in p.expect_status))


def _cassette(probe: Probe) -> Path:
    return CASSETTES / probe.cassette


def test_every_probe_has_a_cassette_and_an_expectation() -> None:
    assert set(EXPECTED) == {p.id for p in PROBES}
    assert {p.relative_to(CASSETTES).as_posix() for p in iter_cassettes(CASSETTES)} == {p.cassette for p in PROBES}


@pytest.mark.parametrize("probe_id", sorted(EXPECTED))
def test_replay_maps_the_recorded_answer(
    probe_id: str, no_network: list[Any], snapshot_json: SnapshotAssertion
) -> None:
    probe = get_probe(probe_id)
    run = asyncio.run(replay_probe(probe, _cassette(probe)))
    assert len(run.outcomes) == 1
    outcome = run.outcomes[0]
    expected = EXPECTED[probe_id]
    statuses = [e.status for e in run.exchanges]
    assert statuses and set(statuses) <= probe.expect_status
    match expected[0]:
        case "sources":
            assert isinstance(outcome, SearchResult)
            assert len(outcome.sources) >= expected[1]
            assert all(s.url.startswith("https://") for s in outcome.sources)
        case "empty":
            assert isinstance(outcome, SearchResult) and outcome.sources == ()
        case "fetched":
            assert isinstance(outcome, FetchResult)
            assert outcome.url == probe.params["url"] and outcome.status_code == 200
            assert outcome.body.kind == "text" and outcome.body.content.startswith("# ")
        case "tool":
            assert isinstance(outcome, ToolResult) and not outcome.is_error
        case "error":
            assert isinstance(outcome, WebError), outcome
            assert outcome.code == "WEB_PROVIDER_ERROR"
            for part in expected[1:]:
                assert part in outcome.message
    assert outcome_json(outcome) == snapshot_json


def test_search_api_metadata_is_kept(no_network: list[Any]) -> None:
    probe = get_probe("search-api.basic")
    run = asyncio.run(replay_probe(probe, _cassette(probe)))
    result = run.outcomes[0]
    assert isinstance(result, SearchResult)
    first = result.sources[0]
    assert first.title and first.snippet and first.published_at
    assert {"summary", "site_name", "rerank_score", "authority"} <= set(first.metadata)


def test_count_is_lowered_to_the_result_bound(no_network: list[Any]) -> None:
    data = load_cassette(_cassette(get_probe("search-api.count-lowered")))
    assert '"count":3' in data["interactions"][0]["request"]["body"]


def test_ori_question_variants_in_recorded_bodies() -> None:
    def body(name: str) -> str:
        text: str = load_cassette(CASSETTES / "search-api" / f"{name}.yaml")["interactions"][0]["request"]["body"]
        return text

    assert "ori_question" not in json.loads(body("ori-question-none"))
    assert json.loads(body("ori-question-collapsed"))["ori_question"] == "How does asyncio cancellation work?"
    cut = json.loads(body("ori-question-cut"))["ori_question"]
    assert len(cut) == 128 and cut.startswith("東京タワーの高さは？ What is") and "  " not in cut
    assert json.loads(body("operators"))["query"] == get_probe("search-api.operators").params["query"]


def test_send_original_question_off_omits_ori_question(no_network: list[Any]) -> None:
    probe = get_probe("search-api.ori-question-off")
    assert probe.params["prompt"].strip() and probe.settings == {"deepseek_api.send_original_question": False}
    data = load_cassette(_cassette(probe))
    assert data["provenance"]["settings"] == {"deepseek_api.send_original_question": False}
    sent = json.loads(data["interactions"][0]["request"]["body"])
    assert "ori_question" not in sent and sent["query"] == probe.params["query"]
    # replay applies the recorded setting; with it on, the same prompt is sent and matches nothing
    ctx = replay_context(probe, _cassette(probe))
    ctx.overrides = {}
    with cassette_replay(_cassette(probe)), pytest.raises(vcr.errors.CannotOverwriteExistingCassetteException):
        asyncio.run(probe.run(ctx))


@pytest.mark.parametrize("probe_id", ACCOUNT_PROBES)
def test_account_route_sends_the_account_token(probe_id: str, no_network: list[Any]) -> None:
    """On credentials.auth = "account" the account token is the credential (Bearer, and x-api-key on
    Messages); the cassette shows its placeholder, distinct from the API key's, and replay sends it."""
    probe = get_probe(probe_id)
    assert probe.auth == "account" and ACCOUNT_PLACEHOLDER != KEY_PLACEHOLDER
    data = load_cassette(_cassette(probe))
    assert data["provenance"]["settings"] == {"credentials.auth": "account"}
    recorded = {
        name.lower(): values
        for name, values in data["interactions"][0]["request"]["headers"].items()
        if name.lower() in ("authorization", "x-api-key")
    }
    expected = {"authorization": [f"Bearer {ACCOUNT_PLACEHOLDER}"]}
    if probe.route == "messages":
        expected["x-api-key"] = [ACCOUNT_PLACEHOLDER]
    assert recorded == expected
    run = asyncio.run(replay_probe(probe, _cassette(probe)))
    assert [e.status for e in run.exchanges] == [200]
    assert {name: [value] for name, value in run.exchanges[0].credentials} == expected
    # the same request on the API-key route carries the key instead: the check above tells them apart
    ctx = replay_context(probe, _cassette(probe))
    ctx.overrides = {}
    with cassette_replay(_cassette(probe)):
        asyncio.run(probe.run(ctx))
    assert ("authorization", f"Bearer {KEY_PLACEHOLDER}") in ctx.exchanges[0].credentials


@pytest.mark.parametrize("probe_id", REDIRECT_PROBES)
def test_redirects_are_refused_and_never_followed(probe_id: str, no_network: list[Any]) -> None:
    """The cassette holds the 3xx only; replay (record mode none) would raise on a request to its
    Location, and the provider reports the redirect as an error after that single exchange."""
    probe = get_probe(probe_id)
    interactions = load_cassette(_cassette(probe))["interactions"]
    assert len(interactions) == 1
    response = interactions[0]["response"]
    assert 300 <= response["status"]["code"] < 400
    location = response["headers"]["location"][0]
    assert "/trap/" in location and location != interactions[0]["request"]["uri"]
    run = asyncio.run(replay_probe(probe, _cassette(probe)))
    status = response["status"]["code"]
    assert [(e.url, e.status) for e in run.exchanges] == [(interactions[0]["request"]["uri"], status)]
    outcome = run.outcomes[0]
    assert isinstance(outcome, WebError) and f"redirected (HTTP {status})" in outcome.message


def test_messages_body_disables_thinking() -> None:
    sent = json.loads(load_cassette(CASSETTES / "messages" / "search.yaml")["interactions"][0]["request"]["body"])
    assert sent["thinking"] == {"type": "disabled"} and "tool_choice" not in sent


def test_concurrent_batch_requests_each_get_their_own_response(no_network: list[Any]) -> None:
    """Both /search requests of a 2-query batch are in flight together; matching on the body gives
    each its own answer whatever order the cassette plays them in."""
    assert "body" in MATCH_ON
    probe = get_probe("search-api.batch")
    cassette = _cassette(probe)
    answers: dict[str, list[str]] = {}
    for interaction in load_cassette(cassette)["interactions"]:
        query = json.loads(interaction["request"]["body"])["query"]
        answers[query] = [r["url"] for r in json.loads(interaction["response"]["body"]["string"])["results"]]
    assert len(answers) == 2 and all(answers.values())
    for seed in range(3):
        ctx = replay_context(probe, cassette)
        with cassette_replay(cassette) as cas:
            rng = random.Random(seed)
            order = list(range(len(cas.data)))
            rng.shuffle(order)
            cas.data[:] = [cas.data[i] for i in order]  # play back in a shuffled order
            run = asyncio.run(probe.run(ctx))
            assert cas.all_played
        result = run.outcomes[0]
        assert isinstance(result, ToolResult) and not result.is_error and result.value is not None
        urls = [s["url"] for s in result.value["sources"]]
        # round-robin merge: positions 0, 2, ... come from the first query's own answer, 1, 3, ... from the second's
        assert urls[0::2][: len(answers["rust async runtimes"])] == answers["rust async runtimes"][: len(urls[0::2])]
        assert (
            urls[1::2][: len(answers["coffee brewing ratios"])] == answers["coffee brewing ratios"][: len(urls[1::2])]
        )


def test_an_unrecorded_request_fails_instead_of_going_online(no_network: list[Any]) -> None:
    probe = get_probe("search-api.basic")
    ctx = replay_context(probe, _cassette(probe), params={**probe.params, "query": "not recorded"})
    with cassette_replay(_cassette(probe)), pytest.raises(vcr.errors.CannotOverwriteExistingCassetteException):
        asyncio.run(probe.run(ctx))


def test_replay_config_never_records() -> None:
    assert make_vcr().record_mode == "none"
