"""The evidence pipeline calls no language model: over the emulator (Search API + Fetch API,
with the Messages provider registered too), only /search and /fetch are requested."""

from __future__ import annotations

import asyncio

from dsweb_ref import CallContext, OutgoingRequest
from dsweb_ref.emulator import Emulator
from dsweb_ref.replay._bases import credential_environ, settings_for_bases
from dsweb_ref.runtime import build_runtime


def test_an_evidence_call_makes_no_messages_or_responses_request(emulator: Emulator, emulator_api_key: str) -> None:
    settings = settings_for_bases(emulator.messages_base, emulator.tools_base, new_api=True)
    runtime = build_runtime(lambda: settings, environ=credential_environ(emulator_api_key))
    assert "deepseek-official" in runtime.web.search_provider_ids()  # a model-backed search is one call away
    sent: list[OutgoingRequest] = []
    tool = runtime.evidence_tool()
    result = asyncio.run(
        tool.execute(
            {"query": ["search api pricing", "上海天气"]}, CallContext(latest_prompt="q", record_request=sent.append)
        )
    )
    assert result.error_code is None and result.value is not None
    assert any(group["evidence"] for group in result.value["queries"])
    routes = {record.route for record in emulator.log.records()}
    assert routes <= {"search", "fetch"} and "search" in routes
    assert all(not r.url.endswith(("/messages", "/responses", "/chat/completions")) for r in sent)
    assert {r.provider for r in sent} <= {"deepseek-search-api", "deepseek-fetch-api"}
