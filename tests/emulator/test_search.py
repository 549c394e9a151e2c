"""POST /v1/tools/search: answer shape, validation, operators, determinism."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx
import pytest

from dsweb_ref.emulator import DOCUMENTS

from ._support import SEARCH, error_of

RESULT_FIELDS = {
    "url",
    "title",
    "snippet",
    "summary",
    "content",
    "date",
    "site_name",
    "site_icon",
    "rerank_score",
    "authority",
}


def urls(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [r["url"] for r in response.json()["results"]]


def test_success_shape(client: httpx.Client) -> None:
    response = client.post(SEARCH, json={"query": "search api", "count": 5})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    payload = response.json()
    assert set(payload) == {"results"}
    results = payload["results"]
    assert len(results) == 5
    for result in results:
        assert set(result) == RESULT_FIELDS
        assert result["url"].startswith("https://") and ".example.test/" in result["url"]
        assert result["content"] == ""
        assert isinstance(result["rerank_score"], float) and 0.0 <= result["rerank_score"] <= 3.0
        assert isinstance(result["authority"], int) and -1 <= result["authority"] <= 4
        if result["date"] is not None:
            assert datetime.fromisoformat(result["date"]).utcoffset() is not None
    scores = [r["rerank_score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    assert results[0]["url"] == "https://docs.example.test/api/search"


def test_default_count_is_ten_and_count_bounds_results(client: httpx.Client) -> None:
    assert len(urls(client.post(SEARCH, json={"query": "search api"}))) == 10
    assert len(urls(client.post(SEARCH, json={"query": "search api", "count": 1}))) == 1
    assert len(urls(client.post(SEARCH, json={"query": "search api", "count": 50}))) <= 50


def test_need_content_returns_markdown(client: httpx.Client) -> None:
    response = client.post(SEARCH, json={"query": "asyncio cancellation", "count": 1, "need_content": True})
    result = response.json()["results"][0]
    assert result["content"].startswith("# Cancelling asyncio tasks")


def test_nothing_matching_gives_empty_results(client: httpx.Client) -> None:
    response = client.post(SEARCH, json={"query": "xylophone marmalade"})
    assert response.status_code == 200
    assert response.json() == {"results": []}


def test_distinct_queries_give_distinct_lists(client: httpx.Client) -> None:
    lists = [tuple(urls(client.post(SEARCH, json={"query": q}))) for q in ("coffee", "redirect", "asyncio", "上海天气")]
    assert all(lists) and len(set(lists)) == len(lists)


def test_some_result_has_a_null_date_and_non_ascii_titles_exist(client: httpx.Client) -> None:
    results = client.post(SEARCH, json={"query": "markdown", "count": 50}).json()["results"]
    assert any(r["date"] is None for r in results)
    assert any(not doc.title.isascii() for doc in DOCUMENTS)
    assert client.post(SEARCH, json={"query": "東京タワー"}).json()["results"][0]["title"] == "東京タワー"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("site:wiki.example.test markdown", ["https://wiki.example.test/Markdown"]),
        (
            "markdown -site:forum.example.test",
            ["https://wiki.example.test/Markdown", "https://docs.example.test/api/fetch"],
        ),
        ("markdown -tables", ["https://wiki.example.test/Markdown", "https://docs.example.test/api/fetch"]),
        ('"spring tides"', ["https://news.example.test/2026/01/spring-tides"]),
        ("lang:zh 天气", ["https://zh.example.test/weather/shanghai"]),
        ("before:2020", ["https://docs.example.test/legacy/v0-search"]),
        ("coffee after:2023-01-01", ["https://shop.example.test/coffee/pour-over-kettle"]),
        ("zurich cafe", ["https://news.example.test/2024/12/zurich-cafe-culture"]),
    ],
)
def test_operators(client: httpx.Client, query: str, expected: list[str]) -> None:
    assert urls(client.post(SEARCH, json={"query": query})) == expected


def test_same_request_gives_identical_bytes(client: httpx.Client) -> None:
    body = {"query": "search api", "count": 7, "need_content": True}
    first, second = client.post(SEARCH, json=body), client.post(SEARCH, json=body)
    assert first.content == second.content
    assert first.headers.multi_items() == second.headers.multi_items()


def test_ori_question_and_localization_do_not_change_results(client: httpx.Client) -> None:
    plain = client.post(SEARCH, json={"query": "rate limits"}).content
    extra = {"query": "rate limits", "ori_question": "How fast may I call it?", "localization": "203.0.113.7"}
    assert client.post(SEARCH, json=extra).content == plain


def test_unknown_fields_and_nulls_are_accepted(client: httpx.Client) -> None:
    body = {"query": "coffee", "model": "ignored", "ori_question": None, "localization": None, "count": None}
    assert client.post(SEARCH, json=body).status_code == 200


@pytest.mark.parametrize("query", ["x", "東" * 128, "é" * 128, "a" * 128])
def test_query_length_accepted(client: httpx.Client, query: str) -> None:
    assert client.post(SEARCH, json={"query": query}).status_code == 200


@pytest.mark.parametrize(
    ("body", "param", "message"),
    [
        ({}, "query", "missing field 'query'"),
        ({"query": ""}, "query", "'query' must not be blank"),
        ({"query": "  \t\n"}, "query", "'query' must not be blank"),
        ({"query": "東" * 129}, "query", "'query' must be at most 128 characters"),
        ({"query": "a" * 129}, "query", "'query' must be at most 128 characters"),
        ({"query": None}, "query", "invalid type for 'query': expected a string"),
        ({"query": 42}, "query", "invalid type for 'query': expected a string"),
        ({"query": "x", "count": 0}, "count", "'count' must be between 1 and 50"),
        ({"query": "x", "count": 51}, "count", "'count' must be between 1 and 50"),
        ({"query": "x", "count": -3}, "count", "'count' must be between 1 and 50"),
        ({"query": "x", "count": "10"}, "count", "invalid type for 'count': expected an integer"),
        ({"query": "x", "count": 2.5}, "count", "invalid type for 'count': expected an integer"),
        ({"query": "x", "count": True}, "count", "invalid type for 'count': expected an integer"),
        ({"query": "x", "ori_question": ""}, "ori_question", "'ori_question' must not be blank"),
        ({"query": "x", "ori_question": "   "}, "ori_question", "'ori_question' must not be blank"),
        ({"query": "x", "ori_question": "q" * 129}, "ori_question", "'ori_question' must be at most 128 characters"),
        ({"query": "x", "localization": "zh-CN"}, "localization", "'localization' must be an IP address"),
        ({"query": "x", "localization": "999.1.1.1"}, "localization", "'localization' must be an IP address"),
        ({"query": "x", "need_content": "yes"}, "need_content", "invalid type for 'need_content': expected a boolean"),
    ],
)
def test_validation_errors(client: httpx.Client, body: dict[str, Any], param: str, message: str) -> None:
    response = client.post(SEARCH, json=body)
    assert response.status_code == 400
    assert error_of(response) == {
        "message": message,
        "type": "invalid_request_error",
        "param": param,
        "code": "invalid_request_error",
    }


@pytest.mark.parametrize("localization", ["198.51.100.4", "2001:db8::1", ""])
def test_localization_accepts_ip_addresses(client: httpx.Client, localization: str) -> None:
    assert client.post(SEARCH, json={"query": "x", "localization": localization}).status_code == 200


@pytest.mark.parametrize("raw", [b"{not json", b"", b"[1, 2]", b'"query"', b"\xff\xfe\x00"])
def test_malformed_or_non_object_body_is_400(client: httpx.Client, raw: bytes) -> None:
    response = client.post(SEARCH, content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert error_of(response)["type"] == "invalid_request_error"


def test_wrong_method_and_unknown_path_use_the_envelope(client: httpx.Client) -> None:
    wrong_method = client.get(SEARCH)
    assert wrong_method.status_code == 405
    assert error_of(wrong_method)["type"] == "invalid_request_error"
    unknown = client.post("/v1/tools/searchx", json={"query": "x"})
    assert unknown.status_code == 404
    assert error_of(unknown)["type"] == "not_found_error"
    # A trailing slash is a different path, never a redirect from the emulator itself.
    assert client.post(SEARCH + "/", json={"query": "x"}).status_code == 404
