"""Quality metadata stays in the structured value exactly as served: rerank_score, authority,
site_name, the whole summary and the date, in service order, with no cutoff by score (seed 001)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dsweb_ref._context import CallContext
from dsweb_ref._types import SearchRequest
from dsweb_ref.emulator import Emulator, Status
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.runtime import build_runtime
from dsweb_ref.schemas import schemas, validate
from dsweb_ref.settings import Settings

# Summaries as long as the seed measured (1,000-2,300 characters), non-ASCII included.
LONG = ("Überblick über die API: " + "résumé 検索 " * 300)[:2300]
SERVED: list[dict[str, Any]] = [
    {"url": "https://niche.example.test/a", "title": "Niche", "snippet": "s1", "summary": LONG,
     "date": "2026-06-01T00:00:00+00:00", "site_name": "Niche Blog", "rerank_score": 0.05, "authority": -1},
    {"url": "https://big.example.test/b", "title": "Big", "snippet": "s2", "summary": LONG[:1000],
     "date": "2025-01-31T23:59:59Z", "site_name": "Big News", "rerank_score": 2.95, "authority": 4},
    {"url": "https://mid.example.test/c", "title": "Mid", "snippet": "s3", "summary": "short",
     "date": "2026-10-16T08:00:00+08:00", "site_name": "Mid", "rerank_score": 1.5, "authority": 0},
]


def _serve(emulator: Emulator) -> Settings:
    emulator.inject("search", Status(200, body=json.dumps({"results": SERVED}).encode()))
    return Settings().updated({"deepseek_api.base_url": emulator.tools_base, "web.use_new_search_api": True})


def _expected_metadata(item: dict[str, Any]) -> dict[str, Any]:
    return {k: item[k] for k in ("summary", "site_name", "rerank_score", "authority")}


def test_provider_keeps_quality_metadata_exactly_as_served(emulator: Emulator, emulator_api_key: str) -> None:
    settings = _serve(emulator)
    provider = DeepSeekSearchApi(lambda: settings, environ={"DEEPSEEK_API_KEY": emulator_api_key})
    result = asyncio.run(provider.search(SearchRequest("search api"), CallContext()))
    assert [s.url for s in result.sources] == [item["url"] for item in SERVED], "service order, not score order"
    for source, item in zip(result.sources, SERVED, strict=True):
        assert dict(source.metadata) == _expected_metadata(item)
        assert source.published_at == item["date"]
    assert len(result.sources[0].metadata["summary"]) == 2300, "no cutoff"


def test_web_search_structured_value_keeps_metadata_and_order(emulator: Emulator, emulator_api_key: str) -> None:
    settings = _serve(emulator)
    tool = build_runtime(lambda: settings, environ={"DEEPSEEK_API_KEY": emulator_api_key}).search_tool()
    out = asyncio.run(tool.execute({"queries": ["search api"]}))
    assert not out.is_error
    sources = out.value["sources"]
    assert [s["url"] for s in sources] == [item["url"] for item in SERVED]
    assert [s["metadata"] for s in sources] == [_expected_metadata(item) for item in SERVED]
    assert [s["published_at"] for s in sources] == [item["date"] for item in SERVED]
    assert validate("web_search.output", out.value) == []


@pytest.mark.parametrize("field", ["summary", "site_name", "rerank_score", "authority"])
def test_seam_schema_documents_each_metadata_field(field: str) -> None:
    metadata = schemas()["seam"]["$defs"]["source"]["properties"]["metadata"]
    assert field in metadata["properties"]
    assert "as served" in metadata["description"] and "never cut" in metadata["description"]
    assert "reordered" in metadata["description"]
