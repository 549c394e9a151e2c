"""Evidence output pinned for fixed inputs: the emulator's deterministic corpus through the Search and
Fetch APIs, the model-visible text as a snapshot, the value against the shipped schema."""

from __future__ import annotations

import asyncio

import pytest
from syrupy.assertion import SnapshotAssertion

from dsweb_ref import CallContext
from dsweb_ref.emulator import Emulator
from dsweb_ref.replay._bases import credential_environ, settings_for_bases
from dsweb_ref.runtime import build_runtime
from dsweb_ref.schemas import validate
from dsweb_ref.tools.evidence_search import append_citations

CALLS = {
    "batch-en-zh": ["search api pricing", "上海天气", "rate limits retry-after"],
    "single-ja": "東京タワー",
    "nothing-found": "zzqx unknowable",
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_evidence_text_over_the_emulator(
    name: str, emulator: Emulator, emulator_api_key: str, snapshot_text: SnapshotAssertion
) -> None:
    settings = settings_for_bases(emulator.messages_base, emulator.tools_base, new_api=True)
    tool = build_runtime(lambda: settings, environ=credential_environ(emulator_api_key)).evidence_tool()
    result = asyncio.run(tool.execute({"query": CALLS[name]}, CallContext()))
    assert result.value is not None and validate("evidence_search.output", result.value) == []
    assert append_citations("ANSWER", result.value) + "\n\n---\n\n" + result.text == snapshot_text
