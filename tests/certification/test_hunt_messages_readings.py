"""Issue 24's seed-001 Messages false-pass hunt (hunt_d): wrong Messages searches `dsweb certify` still
certified (only the first native search's result block mapped, excerpts read from the first cited text
block only, /v1 inserted into a Messages base without it). Each is made in the reference and fails
exactly the row that names it."""

from __future__ import annotations

from typing import Any

import pytest

from dsweb_ref import Source
from dsweb_ref.certification.checks import mapping, search
from dsweb_ref.providers import deepseek_official

from ._readings import failing_rows, patch_reading

MAPPING, WIRE = "search.messages.mapping", "search.messages.wire"
TWO_SEARCHES = "two native searches in one answer"
TWO_CITED = "citations in two text blocks"
NO_V1 = "a base without /v1"


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {TWO_SEARCHES, TWO_CITED} <= {c.name for c in mapping.MESSAGES_CASES}
    assert NO_V1 in {c.name for c in search.MESSAGES_WIRE}
    assert failing_rows(mapping, "MESSAGES_CASES", MAPPING, monkeypatch) == set()
    assert failing_rows(search, "MESSAGES_WIRE", WIRE, monkeypatch) == set()


def test_only_the_first_result_block_mapped_fails_exactly_the_two_searches_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: only the first web_search_tool_result block holding results mapped (a later native search lost)
    right = deepseek_official.map_sources

    def first_block_only(data: object, *, secrets: Any = ()) -> tuple[Source, ...]:
        if isinstance(data, dict) and isinstance(data.get("content"), list):
            kept, found = [], False
            for block in data["content"]:
                if isinstance(block, dict) and block.get("type") == "web_search_tool_result" and block.get("content"):
                    if found:
                        continue
                    found = True
                kept.append(block)
            data = {**data, "content": kept}
        return right(data, secrets=secrets)

    monkeypatch.setattr(deepseek_official, "map_sources", first_block_only)
    assert failing_rows(mapping, "MESSAGES_CASES", MAPPING, monkeypatch) == {TWO_SEARCHES}


def test_excerpts_from_the_first_cited_block_only_fail_exactly_the_two_cited_blocks_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: citation excerpts read only from the first text block that carries citations
    right = deepseek_official._citations

    def first_cited_block_only(blocks: list[Any]) -> dict[str, str]:
        cited = [i for i, b in enumerate(blocks) if b.get("type") == "text" and b.get("citations")]
        return right([b for i, b in enumerate(blocks) if i not in cited[1:]])

    monkeypatch.setattr(deepseek_official, "_citations", first_cited_block_only)
    assert failing_rows(mapping, "MESSAGES_CASES", MAPPING, monkeypatch) == {TWO_CITED}


def test_v1_inserted_into_the_messages_base_fails_exactly_the_base_without_v1_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a Messages base whose path does not end in /v1 given /v1 (a route prefix inferred)
    patch_reading(deepseek_official.DeepSeekMessagesSearch, "search", 'url = f"{base}/messages"',
                  "url = f\"{base.removesuffix('/v1')}/v1/messages\"", monkeypatch)
    assert failing_rows(search, "MESSAGES_WIRE", WIRE, monkeypatch) == {NO_V1}


@pytest.mark.parametrize("extra", ['"stream": False', '"temperature": 0', '"metadata": {"user_id": "u-1"}'])
def test_another_documented_messages_field_passes_the_wire_check(extra: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # seed-open (an outside hunt found the exact key set failing an explicit "stream": false): seed 001 fixes
    # thinking and the omitted tool_choice, not the rest of the Messages body
    patch_reading(deepseek_official.DeepSeekMessagesSearch, "search", '"thinking": {"type": "disabled"},',
                  f'"thinking": {{"type": "disabled"}}, {extra},', monkeypatch)
    assert failing_rows(search, "MESSAGES_WIRE", WIRE, monkeypatch) == set()


def test_a_body_without_the_thinking_object_fails_the_wire_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a body key of the five missing (thinking also fails search.messages.thinking_disabled)
    patch_reading(deepseek_official.DeepSeekMessagesSearch, "search", '"thinking": {"type": "disabled"},', "",
                  monkeypatch)
    assert failing_rows(search, "MESSAGES_WIRE", WIRE, monkeypatch) == {c.name for c in search.MESSAGES_WIRE}
