"""The ``scripted`` provider: the conformance route's seam result unchanged, failures with their own code."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from dsweb_ref import CallContext, SearchRequest, SearchResult, Source, WebError
from dsweb_ref.emulator import Emulator
from dsweb_ref.emulator.scripted import Failure, Script, scripted_base
from dsweb_ref.providers.scripted import ScriptedSearch, map_result
from dsweb_ref.runtime import scripted_runtime
from dsweb_ref.settings import Settings


@pytest.fixture
def emu() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator


def _search(emu: Emulator, answer: Any, query: str = "q") -> SearchResult:
    base = scripted_base(emu.base_url, emu.scripted.load(Script({query: answer})))
    return asyncio.run(ScriptedSearch(base).search(SearchRequest(query, 4), CallContext()))


def test_the_route_result_comes_back_unchanged_and_the_request_carries_query_and_cap(emu: Emulator) -> None:
    answer = {
        "content": "the answer\n",
        "sources": [{"url": "https://a.test/ ", "title": "T", "snippet": "s", "published_at": "2026-01-02"},
                    {"url": "https://a.test/ "}],
        "truncated": True,
    }
    result = _search(emu, answer, "Café  x")
    assert result == SearchResult(
        sources=(Source("https://a.test/ ", "T", "s", "2026-01-02"), Source("https://a.test/ ")),
        content="the answer\n",
        truncated=True,
    )
    record = emu.log.records()[-1]
    assert record.json == {"query": "Café  x", "max_results": 4} and record.header("content-type") == "application/json"


@pytest.mark.parametrize("code", ["WEB_PROVIDER_UNAVAILABLE", "WEB_PROVIDER_CREDENTIAL_MISSING"])
def test_a_failure_answer_fails_the_search_with_its_own_code(emu: Emulator, code: str) -> None:
    with pytest.raises(WebError) as info:
        _search(emu, Failure(429, code, "slow down"))
    assert info.value.code == code and "HTTP 429" in info.value.message and "slow down" in info.value.message


def test_a_failure_without_a_web_code_is_a_provider_error(emu: Emulator) -> None:
    with pytest.raises(WebError) as info:
        _search(emu, Failure(500, "boom"))
    assert info.value.code == "WEB_PROVIDER_ERROR"


@pytest.mark.parametrize(
    "data",
    [[], {"sources": {}, "truncated": False}, {"sources": [], "truncated": "no"}, {"sources": [{"url": ""}]},
     {"sources": [{"url": "u", "title": 3}]}, {"sources": [], "truncated": False, "content": 1}],
)
def test_a_body_without_the_seam_shape_is_unprocessable(data: object) -> None:
    with pytest.raises(WebError) as info:
        map_result(data)
    assert info.value.code == "WEB_PROVIDER_ERROR" and "unprocessable" in info.value.message


def test_a_blank_base_is_unavailable_and_a_config_error() -> None:
    provider = ScriptedSearch(" ")
    assert provider.id == "scripted" and not provider.available()
    with pytest.raises(WebError) as info:
        asyncio.run(provider.search(SearchRequest("q"), CallContext()))
    assert info.value.code == "WEB_CONFIG_INVALID"


def test_scripted_runtime_wires_the_search_tool_to_the_route_with_the_settings_caps(emu: Emulator) -> None:
    answers = {
        "a": {"content": "A", "sources": [{"url": "https://x.test/1"}, {"url": "https://x.test/2"}],
              "truncated": False},
        "b": {"sources": [{"url": "https://x.test/1"}, {"url": "https://x.test/3"}], "truncated": False},
    }
    base = scripted_base(emu.base_url, emu.scripted.load(Script(answers)))
    settings = Settings().updated({"tools.search_max_results": 2})
    tool = scripted_runtime(base, lambda: settings).search_tool()
    result = asyncio.run(tool.execute({"queries": ["a", "b", "a"]}))
    urls = [{"url": "https://x.test/1"}, {"url": "https://x.test/2"}]  # rank by rank; x.test/3 dropped by the cap
    assert result.value == {"content": "### a\n\nA", "sources": urls, "truncated": True}
