"""Issue 24 items 2, 4 and 6: the rows added to errors.codes, search.messages.mapping and
search.api.base_shapes, run by the real suite against in-process reference targets bent into the wrong
reading each row names (the end-to-end break modes no-results-is-empty and tools-fixed-path are in
test_breaks_end_to_end)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsweb_ref.certification import catalogue
from dsweb_ref.certification.adapter_protocol import CAPABILITIES
from dsweb_ref.certification.cases import FAMILIES, ORDER, Case
from dsweb_ref.certification.checks import all_checks
from dsweb_ref.certification.model import Outcome
from dsweb_ref.providers import _deepseek_http, deepseek_official

from .conftest import reference_variant, run

API_ONLY = tuple(c for c in CAPABILITIES if c != "messages-search")
MESSAGES_ONLY = tuple(c for c in CAPABILITIES if c not in ("search-api", "fetch-api"))


def _failure(check_id: str, capabilities: tuple[str, ...]) -> str:
    """Run ``check_id`` against the (patched) reference; the reason it failed ("" if it passed)."""
    (result,) = run(reference_variant("wrong", capabilities=capabilities), [check_id]).results
    assert result.outcome in (Outcome.PASSED, Outcome.FAILED), result.reason
    return result.reason


def test_the_reference_passes_the_new_rows() -> None:
    for check_id in ("errors.codes", "search.messages.mapping", "search.api.base_shapes"):
        assert _failure(check_id, CAPABILITIES) == "", check_id


@pytest.mark.parametrize(("below", "row"), [(600, "HTTP 503 with an answer body"),
                                            (500, "HTTP 404 with an answer body")])
def test_a_body_read_before_the_status_is_rejected(monkeypatch: pytest.MonkeyPatch, below: int, row: str) -> None:
    """ORDER: a failure status whose body parses as an answer taken for a 200 (below ``below``)."""
    post = _deepseek_http.SettingsBoundProvider._post

    async def body_first(self: Any, *args: Any, **kwargs: Any) -> _deepseek_http.Reply:
        reply = await post(self, *args, **kwargs)
        try:
            answer = isinstance(json.loads(reply.body).get("results"), list)
        except (ValueError, AttributeError):
            answer = False
        return _deepseek_http.Reply(200, reply.headers, reply.body) if answer and reply.status < below else reply

    monkeypatch.setattr(_deepseek_http.SettingsBoundProvider, "_post", body_first)
    assert row in _failure("errors.codes", API_ONLY)


def test_repeats_judged_before_item_types_are_skipped_are_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    """ORDER: URLs deduplicated over every item of a result block, then other item types skipped."""
    real = deepseek_official.map_sources

    def dedup_first(data: object, **kwargs: Any) -> Any:
        seen: set[object] = set()
        for block in data.get("content") or [] if isinstance(data, dict) else []:
            items = block.get("content") if isinstance(block, dict) else None
            if isinstance(items, list):
                kept = []
                for item in items:
                    url = item.get("url") if isinstance(item, dict) else None
                    if url not in seen:
                        kept.append(item)
                    seen.add(url)
                block["content"] = kept
        return real(data, **kwargs)

    monkeypatch.setattr(deepseek_official, "map_sources", dedup_first)
    assert "another item type before a result with its URL" in _failure("search.messages.mapping", MESSAGES_ONLY)


def test_another_deployment_given_more_than_the_documented_request_is_rejected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CARRY: a header added for bases other than the public /v1/tools."""
    post = _deepseek_http.post

    async def gateway_header(url: str, body: bytes, headers: Any, **kwargs: Any) -> _deepseek_http.Reply:
        extra = {} if "/v1/tools/" in url and "/api/" not in url else {"X-Deployment": "gateway"}
        return await post(url, body, {**headers, **extra}, **kwargs)

    monkeypatch.setattr(_deepseek_http, "post", gateway_header)
    reason = _failure("search.api.base_shapes", API_ONLY)
    assert "expected exactly authorization and content-type" in reason


def test_explain_shows_each_rows_misreading_and_its_family() -> None:
    text = catalogue.explain("errors.codes")
    assert f"catches: [{ORDER}] the body read as an answer before the status is looked at" in text
    assert "catches: a 200 without results read as a search that found nothing" in text
    tagged = [c for s in all_checks() for c in s.cases if c.family]
    assert {c.family for c in tagged} >= {ORDER} and all(c.family in FAMILIES for c in tagged)
    with pytest.raises(ValueError, match="unknown misreading family"):
        Case("x", "y", family="order")
