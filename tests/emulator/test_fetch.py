"""POST /v1/tools/fetch: Markdown pages, refusals, unknown URLs and URL validation."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ._support import FETCH, error_of

BAD_URL = "'url' must be a valid HTTP or HTTPS URL"


def test_success_shape(client: httpx.Client) -> None:
    response = client.post(FETCH, json={"url": "https://docs.example.test/api/fetch"})
    assert response.status_code == 200
    payload = response.json()
    assert set(payload) == {"title", "content"}
    assert payload["title"] == "Fetch API reference"
    assert payload["content"].startswith("# Fetch API reference\n\n")


def test_page_without_title_has_empty_title(client: httpx.Client) -> None:
    payload = client.post(FETCH, json={"url": "https://files.example.test/notes.txt"}).json()
    assert payload["title"] == ""
    assert "Plain text notes" in payload["content"]


@pytest.mark.parametrize(
    "url",
    [
        "https://wiki.example.test/%E6%9D%B1%E4%BA%AC%E3%82%BF%E3%83%AF%E3%83%BC",
        "https://wiki.example.test/東京タワー",
        "HTTPS://WIKI.EXAMPLE.TEST/東京タワー#history",
    ],
)
def test_url_spellings_of_one_page(client: httpx.Client, url: str) -> None:
    response = client.post(FETCH, json={"url": url})
    assert response.status_code == 200
    assert response.json()["title"] == "東京タワー"


def test_unknown_url_is_404(client: httpx.Client) -> None:
    response = client.post(FETCH, json={"url": "https://nowhere.example.test/page"})
    assert response.status_code == 404
    assert error_of(response)["message"] == "failed to fetch URL"


def test_unreadable_page_is_404(client: httpx.Client) -> None:
    response = client.post(FETCH, json={"url": "https://spa.example.test/dashboard"})
    assert response.status_code == 404
    assert error_of(response)["message"] == "failed to fetch URL"


def test_crawler_policy_refusal_is_403(client: httpx.Client) -> None:
    response = client.post(FETCH, json={"url": "https://paywall.example.test/reports/search-market-2026"})
    assert response.status_code == 403
    assert "crawler policy" in error_of(response)["message"]


def test_unresolvable_host_is_500(client: httpx.Client) -> None:
    response = client.post(FETCH, json={"url": "https://down.example.invalid/"})
    assert response.status_code == 500
    assert error_of(response)["type"] == "server_error"


def test_missing_url(client: httpx.Client) -> None:
    response = client.post(FETCH, json={"href": "https://docs.example.test/api/fetch"})
    assert response.status_code == 400
    assert error_of(response) == {
        "message": "missing field 'url'",
        "type": "invalid_request_error",
        "param": "url",
        "code": "invalid_request_error",
    }


@pytest.mark.parametrize(
    "url",
    [
        "",
        "docs.example.test/api/fetch",
        "ftp://docs.example.test/file",
        "file:///etc/hosts",
        "https://",
        "http:///path-only",
        "https://user:secret@docs.example.test/api/fetch",
        "https://user@docs.example.test/api/fetch",
        "https://docs.example.test:99999/",
        "https://docs.example .test/",
        "https://docs.example.test/" + "a" * 8192,
        None,
        42,
        ["https://docs.example.test/api/fetch"],
    ],
)
def test_invalid_url(client: httpx.Client, url: Any) -> None:
    response = client.post(FETCH, json={"url": url})
    assert response.status_code == 400
    assert error_of(response)["message"] == BAD_URL


def test_url_of_exactly_8192_characters_is_valid(client: httpx.Client) -> None:
    url = "https://docs.example.test/"
    url += "a" * (8192 - len(url))
    assert client.post(FETCH, json={"url": url}).status_code == 404  # valid, just not in the corpus


def test_same_request_gives_identical_bytes(client: httpx.Client) -> None:
    body = {"url": "https://blog.example.test/python/asyncio-cancellation"}
    assert client.post(FETCH, json=body).content == client.post(FETCH, json=body).content
