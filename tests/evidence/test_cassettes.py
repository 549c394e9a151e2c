"""Evidence output pinned by cassettes: the Search and Fetch API exchanges of fixed evidence calls,
recorded from the emulator (scrubbed, origin replaced by the placeholder host) and replayed offline.
The replayed text must equal what the emulator gives live, and every recorded exchange is used.

Re-record (only when the emulator's corpus changes):
``DSWEB_RECORD_EVIDENCE=1 pytest tests/evidence/test_cassettes.py``.
"""

from __future__ import annotations

import asyncio
import datetime
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from dsweb_ref import CallContext, __version__
from dsweb_ref.emulator import Emulator
from dsweb_ref.replay._bases import credential_environ, settings_for_bases
from dsweb_ref.replay.cassettes import (
    KEY_PLACEHOLDER,
    PLACEHOLDER_ORIGIN,
    cassette_replay,
    dump_cassette,
    finalize_cassette,
    make_vcr,
    scan_path,
)
from dsweb_ref.runtime import build_runtime
from dsweb_ref.tools import ToolResult

CASSETTES = Path(__file__).parent / "cassettes"
CALLS: dict[str, Any] = {
    "batch-en-zh": ["search api pricing", "上海天气", "rate limits retry-after"],
    "single-ja": "東京タワー",
    # The pages the emulator serves (site:pages.test): Thai, boilerplate, redirects, hostile pages.
    "pages-th-en": ["site:pages.test ราคาทองคำวันนี้", "site:pages.test spring tides"],
}


async def _evidence(base: str, key: str, query: Any) -> ToolResult:
    settings = settings_for_bases(f"{base}/anthropic/v1", f"{base}/v1/tools", new_api=True)
    tool = build_runtime(lambda: settings, environ=credential_environ(key)).evidence_tool()
    return await tool.execute({"query": query}, CallContext())


def _record(name: str, emu: Emulator, key: str, tmp: Path) -> None:
    raw = tmp / f"{name}.raw.yaml"
    with make_vcr(record_mode="all", replacements=[(key, KEY_PLACEHOLDER)]).use_cassette(str(raw)):
        asyncio.run(_evidence(emu.base_url, key, CALLS[name]))
    data = yaml.safe_load(raw.read_text(encoding="utf-8"))
    provenance = {
        "evidence_call": name,
        "query": CALLS[name],
        "recorded_against": "dsweb emulator (local)",
        "replay_base": PLACEHOLDER_ORIGIN,
        "recorded_at": datetime.date.today().isoformat(),
        "tool": f"dsweb_ref {__version__}",
    }
    final = finalize_cassette(
        data, provenance=provenance, replacements=[(key, KEY_PLACEHOLDER)], origin=(emu.base_url, PLACEHOLDER_ORIGIN)
    )
    CASSETTES.mkdir(exist_ok=True)
    (CASSETTES / f"{name}.yaml").write_text(dump_cassette(final), encoding="utf-8")


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_recorded_evidence_call_replays_to_the_live_text(
    name: str, emulator: Emulator, emulator_api_key: str, tmp_path: Path
) -> None:
    if os.environ.get("DSWEB_RECORD_EVIDENCE") == "1":
        _record(name, emulator, emulator_api_key, tmp_path)
    path = CASSETTES / f"{name}.yaml"
    assert scan_path(path, literals=[emulator_api_key]) == []  # no secret in the cassette, in any encoding
    live = asyncio.run(_evidence(emulator.base_url, emulator_api_key, CALLS[name]))
    with cassette_replay(path) as cassette:
        replayed = asyncio.run(_evidence(PLACEHOLDER_ORIGIN, "replay-key", CALLS[name]))
        assert cassette.all_played, "the evidence call did not make the recorded requests"
    assert replayed.error_code is None and replayed.text == live.text
    assert replayed.value == live.value
