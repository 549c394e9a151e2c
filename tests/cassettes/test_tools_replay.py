"""The model-visible web_search / web_fetch text through each provider, replayed from cassettes.

The tools run through ``build_runtime`` exactly as deployed; each probe was recorded with the
body the tool sends (the tool's cap of 8 results, the prompt as ``latest_prompt``), so the tool's
requests match the recorded ones. Every successful tool value is also checked against the
shipped output schema (``web_search.output`` / ``web_fetch.output``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from dsweb_ref import CallContext, schemas
from dsweb_ref.replay.cassettes import cassette_replay
from dsweb_ref.replay.probes import PROBES, Probe, ProbeContext, get_probe
from dsweb_ref.replay.record import replay_context
from dsweb_ref.runtime import build_runtime
from dsweb_ref.tools import ToolResult

from .conftest import CASSETTES
from .test_replay import EXPECTED

# Requests the web_search tool never sends: raw bodies (an over-long or blank ori_question, no credential),
# an empty query (the tool refuses it first) and count 50 (the tool's cap is 8).
RAW_OR_UNTOOLED = frozenset({
    "search-api.ori-question-too-long", "search-api.ori-question-blank", "search-api.auth-missing",
    "search-api.query-empty", "search-api.count-max",
})
SEARCH_TOOL_PROBES = sorted(
    p.id
    for p in PROBES
    if p.route in ("search", "messages") and p.id not in ("search-api.batch", "search-api.count-lowered")
    and p.id not in RAW_OR_UNTOOLED
    and not p.protocol.startswith("standalone-")  # seed 003's own tool replays in test_replay
)
FETCH_TOOL_PROBES = sorted(p.id for p in PROBES if p.route == "fetch")


async def _run_tool(probe: Probe, ctx: ProbeContext) -> ToolResult:
    runtime = build_runtime(
        lambda: ctx.settings(new_api=probe.route != "messages"), transport=ctx.transport, environ=ctx.environ
    )
    try:
        if probe.route == "fetch":
            return await runtime.fetch_tool().execute({"url": ctx.params["url"]}, CallContext())
        return await runtime.search_tool().execute(
            {"queries": [ctx.params["query"]]}, CallContext(latest_prompt=ctx.params.get("prompt"))
        )
    finally:
        await ctx.transport.aclose()


def _replay_tool(probe_id: str) -> ToolResult:
    probe = get_probe(probe_id)
    cassette = CASSETTES / probe.cassette
    ctx = replay_context(probe, cassette)
    with cassette_replay(cassette) as cas:
        result = asyncio.run(_run_tool(probe, ctx))
        assert cas.all_played, "the tool did not send the recorded request"
    return result


@pytest.mark.parametrize("probe_id", SEARCH_TOOL_PROBES)
def test_web_search_text(probe_id: str, no_network: list[Any], snapshot_text: SnapshotAssertion) -> None:
    result = _replay_tool(probe_id)
    assert result.is_error == (EXPECTED[probe_id][0] == "error")
    if not result.is_error:
        assert result.value is not None
        assert schemas.validate("web_search.output", result.value) == []
    assert result.text == snapshot_text


@pytest.mark.parametrize("probe_id", FETCH_TOOL_PROBES)
def test_web_fetch_text(probe_id: str, no_network: list[Any], snapshot_text: SnapshotAssertion) -> None:
    result = _replay_tool(probe_id)
    assert result.is_error == (EXPECTED[probe_id][0] == "error")
    if not result.is_error:
        assert result.value is not None
        assert schemas.validate("web_fetch.output", result.value) == []
    assert result.text == snapshot_text


def test_batch_tool_value_matches_the_schema(no_network: list[Any]) -> None:
    """The two-query web_search batch (not replayable through _run_tool) validates as well."""
    probe = get_probe("search-api.batch")
    cassette = CASSETTES / probe.cassette
    ctx = replay_context(probe, cassette)
    with cassette_replay(cassette) as cas:
        run = asyncio.run(probe.run(ctx))
        assert cas.all_played
    result = run.outcomes[0]
    assert isinstance(result, ToolResult) and not result.is_error and result.value is not None
    assert schemas.validate("web_search.output", result.value) == []


def test_schema_validation_is_not_vacuous() -> None:
    assert schemas.validate("web_search.output", {"sources": "not a list"}) != []
    assert schemas.validate("web_fetch.output", {"url": 42}) != []
