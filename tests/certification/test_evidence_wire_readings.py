"""An audit of which requests seed 001's rules apply to: the evidence pipeline (seed 002) searches and fetches
through the Search and Fetch APIs, but only evidence.ori_question read its requests. A pipeline with an HTTP
client of its own (default headers, redirects followed, need_content true to skip its fetches, its own count,
the key on the account route) was certified, since search.api.wire, fetch.api.wire, search.api.count, the
redirect checks and search.api.account_route judge web_search's and web_fetch's requests only. Each wrong
reading is made in the reference for the pipeline's requests alone (web_search and web_fetch keep the right
client) and must fail exactly the row of evidence.api_wire that names it; the reference passes every row."""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable, Mapping
from typing import Any

import httpx
import pytest

from dsweb_ref.certification.checks import evidence_wire
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers import _deepseek_http, deepseek_fetch_api, deepseek_search_api
from dsweb_ref.providers._deepseek_http import Reply, SettingsBoundProvider
from dsweb_ref.settings import Settings
from dsweb_ref.tools.evidence_search import EvidenceSearchTool, EvidenceSettings

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run

CHECK = "evidence.api_wire"
SEARCH_HEADERS, SEARCH_BODY, SEARCH_COUNT = "search headers", "search body", "search count"
FETCH_HEADERS, FETCH_BODY = "fetch headers", "fetch body"
SEARCH_REDIRECT, FETCH_REDIRECT, ACCOUNT = "search redirect", "fetch redirect", "the account route"
# Set while the evidence pipeline runs: the readings below change its requests only.
PIPELINE: contextvars.ContextVar[bool] = contextvars.ContextVar("pipeline", default=False)
_DEFAULTS = ("accept", "accept-encoding", "connection", "user-agent")  # what httpx adds on its own


def _pipeline_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    original = EvidenceSearchTool.run

    async def run_marked(self: EvidenceSearchTool, *args: Any, **kwargs: Any) -> dict[str, Any]:
        token = PIPELINE.set(True)
        try:
            return await original(self, *args, **kwargs)
        finally:
            PIPELINE.reset(token)

    monkeypatch.setattr(EvidenceSearchTool, "run", run_marked)


def _own_client(monkeypatch: pytest.MonkeyPatch, route: str, *, defaults: bool, follow: bool) -> None:
    """The pipeline's ``route`` requests sent by a client of its own: with httpx's default headers kept
    (``defaults``), following redirects (``follow``)."""
    _pipeline_marked(monkeypatch)
    original = SettingsBoundProvider._post

    async def post(self: SettingsBoundProvider, base: str, key: str, timeout_s: float, url: str, body: bytes,
                   headers: Mapping[str, str], *, remaining_s: float | None = None) -> Reply:
        if not (PIPELINE.get() and url.endswith(f"/{route}")):
            return await original(self, base, key, timeout_s, url, body, headers, remaining_s=remaining_s)
        async with httpx.AsyncClient(trust_env=False, follow_redirects=follow, timeout=timeout_s) as client:
            request = client.build_request("POST", url, content=body, headers=dict(headers))
            if not defaults:
                for name in _DEFAULTS:
                    request.headers.pop(name, None)
            response = await client.send(request)
            return Reply(response.status_code, response.headers, response.content)

    monkeypatch.setattr(SettingsBoundProvider, "_post", post)


def _own_body(monkeypatch: pytest.MonkeyPatch, module: Any, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """The pipeline's requests through ``module``'s provider sent with ``change`` made to their body."""
    _pipeline_marked(monkeypatch)
    original = _deepseek_http.call_tools_api

    async def call(provider: Any, snapshot: Settings, ctx: Any, route: str, payload: dict[str, Any],
                   **kwargs: Any) -> object:
        sent = change(dict(payload)) if PIPELINE.get() else payload
        return await original(provider, snapshot, ctx, route, sent, **kwargs)

    monkeypatch.setattr(module, "call_tools_api", call)


def test_the_reference_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(evidence_wire, "WIRE", CHECK, monkeypatch) == set()


def test_a_pipeline_client_with_default_headers_fails_the_search_headers_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a second HTTP client for the pipeline's searches that keeps httpx's User-Agent, Accept, ...
    _own_client(monkeypatch, "search", defaults=True, follow=False)
    # and the account-route row, which holds the pipeline's requests to the same header rule on that route (hunt L)
    assert failing_rows(evidence_wire, "WIRE", CHECK, monkeypatch) == {SEARCH_HEADERS, ACCOUNT}
    # The gap the row closes: web_search keeps the right client, so search.api.wire still passes.
    (result,) = run(reference_target(), only=["search.api.wire"]).results
    assert result.outcome.value == "passed", result.reason


def test_need_content_true_on_the_pipeline_s_searches_fails_exactly_the_search_body_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: need_content: true sent so the Search API returns the pages' content and the fetches are skipped
    _own_body(monkeypatch, deepseek_search_api, lambda body: {**body, "need_content": True})
    fails_exactly(evidence_wire, "WIRE", CHECK, SEARCH_BODY, monkeypatch)


def test_the_pipeline_s_own_bound_sent_as_count_fails_exactly_the_search_count_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the pipeline's own result bound (8) sent as count whatever the configured count
    own = EvidenceSettings().results_per_query
    _own_body(monkeypatch, deepseek_search_api, lambda body: {**body, "count": own})
    fails_exactly(evidence_wire, "WIRE", CHECK, SEARCH_COUNT, monkeypatch)


def test_a_pipeline_client_with_default_headers_fails_the_fetch_headers_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a second HTTP client for the pipeline's page fetches that keeps httpx's default headers
    _own_client(monkeypatch, "fetch", defaults=True, follow=False)
    # and the account-route row, which holds the pipeline's requests to the same header rule on that route (hunt L)
    assert failing_rows(evidence_wire, "WIRE", CHECK, monkeypatch) == {FETCH_HEADERS, ACCOUNT}


def test_a_key_of_the_pipeline_s_own_in_the_fetch_body_fails_exactly_the_fetch_body_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the Fetch body given a key of the pipeline's own beside the URL (a format for the extraction)
    _own_body(monkeypatch, deepseek_fetch_api, lambda body: {**body, "format": "markdown"})
    fails_exactly(evidence_wire, "WIRE", CHECK, FETCH_BODY, monkeypatch)


def test_a_pipeline_client_that_follows_search_redirects_fails_exactly_the_search_redirect_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the pipeline's searches sent by a client that follows redirects (httpx's follow_redirects=True)
    _own_client(monkeypatch, "search", defaults=False, follow=True)
    fails_exactly(evidence_wire, "WIRE", CHECK, SEARCH_REDIRECT, monkeypatch)
    (result,) = run(reference_target(), only=["search.redirect.not_followed"]).results
    assert result.outcome.value == "passed", result.reason


def test_a_pipeline_client_that_follows_fetch_redirects_fails_exactly_the_fetch_redirect_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the pipeline's page fetches sent by a client that follows redirects
    _own_client(monkeypatch, "fetch", defaults=False, follow=True)
    fails_exactly(evidence_wire, "WIRE", CHECK, FETCH_REDIRECT, monkeypatch)


@pytest.mark.parametrize(("route", "row"), [("search", SEARCH_REDIRECT), ("fetch", FETCH_REDIRECT)])
def test_a_3xx_body_read_as_the_answer_fails_exactly_the_redirect_row(
    route: str, row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a 3xx of the pipeline's Search (Fetch) request taken as its results (the page): its Location left
    # alone, its body read as if the status were 200
    _pipeline_marked(monkeypatch)
    original = _deepseek_http.post

    async def post(url: str, body: bytes, headers: Mapping[str, str], **kwargs: Any) -> Reply:
        client = kwargs["client"]
        if not (PIPELINE.get() and url.endswith(f"/{route}")):
            return await original(url, body, headers, **kwargs)
        request = client.build_request("POST", url, content=body, headers=dict(headers))
        for name in _DEFAULTS:
            request.headers.pop(name, None)
        response = await client.send(request)
        return Reply(200 if response.is_redirect else response.status_code, response.headers, response.content)

    monkeypatch.setattr(_deepseek_http, "post", post)
    fails_exactly(evidence_wire, "WIRE", CHECK, row, monkeypatch)


def test_the_api_key_on_the_pipeline_s_requests_fails_exactly_the_account_route_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the pipeline's own client given the API key whatever the route (the account token ignored)
    _pipeline_marked(monkeypatch)
    original = SettingsBoundProvider._credential

    def credential(self: SettingsBoundProvider, snapshot: Settings) -> str:
        if not PIPELINE.get():
            return original(self, snapshot)
        environ = os.environ if self._environ is None else self._environ
        return environ[snapshot.credentials.api_key_env]

    monkeypatch.setattr(SettingsBoundProvider, "_credential", credential)
    fails_exactly(evidence_wire, "WIRE", CHECK, ACCOUNT, monkeypatch)
    (result,) = run(reference_target(), only=["search.api.account_route"]).results
    assert result.outcome.value == "passed", result.reason


# Readings the seeds leave open: each must stay certified.


def test_a_pipeline_asking_fewer_results_than_the_configured_count_is_certified(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # open: the pipeline's own result bound (here 2) is the request's bound, below the configured count
    _own_body(monkeypatch, deepseek_search_api, lambda body: {**body, "count": min(body["count"], 2)})
    assert failing_rows(evidence_wire, "WIRE", CHECK, monkeypatch) == set()


def test_a_call_failed_by_its_one_redirected_search_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a failed search of a batch may fail the whole call (a WEB_* error) instead of its query saying
    # [needs_retry]; seed 002 fixes neither
    patch_reading(EvidenceSearchTool, "run", "if len(errors) == len(answers):", "if errors:", monkeypatch)
    assert failing_rows(evidence_wire, "WIRE", CHECK, monkeypatch) == set()
