"""Issue 24, the outside hunt over seed 001's Fetch API: a 5xx retried once, a 408/504 read as the page timing
out, a '# title' heading added, the Markdown's whitespace folded, no bound on the output. Each wrong reading is
made in the reference and must fail exactly the rows of fetch.api.mapping that name it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsweb_ref import CallContext, WebError, WebErrorCode
from dsweb_ref._types import FetchBody, FetchRequest, FetchResult
from dsweb_ref.certification.checks import fetch
from dsweb_ref.providers import deepseek_fetch_api
from dsweb_ref.tools import web_fetch

from ._readings import failing_rows, patch_reading

CHECK = "fetch.api.mapping"
NO_HEADING = "a page whose Markdown has no heading"
EMPTY = "a page whose Markdown is empty"
SPACES = "a page with an indented code block and blank lines"
S408, S502, S503, S504 = "HTTP 408", "HTTP 502", "HTTP 503", "HTTP 504"
MILLION = "a page of 1,000,000 characters"


def _only(table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``table`` alone: the other tables of the check prove nothing here (and the long pages are slow)."""
    for other in ("MAPPING", "BOUNDS", "FAILURES"):
        if other != table:
            monkeypatch.setattr(fetch, other, ())


@pytest.mark.parametrize("table, rows", [("MAPPING", {NO_HEADING, SPACES}), ("FAILURES", {S408, S502, S503, S504}),
                                         ("BOUNDS", {MILLION})])
def test_the_reference_passes_the_new_rows(table: str, rows: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _only(table, monkeypatch)
    assert rows <= {case.name for case in getattr(fetch, table)}
    assert failing_rows(fetch, table, CHECK, monkeypatch) == set()


def test_a_gateway_error_retried_once_fails_exactly_the_5xx_gateway_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: one silent retry of a Fetch API 502, 503 or 504 (a "transient" gateway error)
    right = deepseek_fetch_api.call_tools_api

    async def retry_gateway(*args: Any, **kwargs: Any) -> object:
        try:
            return await right(*args, **kwargs)
        except WebError as error:
            if re.search(r"\(HTTP 50[234]\)", error.message):
                return await right(*args, **kwargs)
            raise

    monkeypatch.setattr(deepseek_fetch_api, "call_tools_api", retry_gateway)
    _only("FAILURES", monkeypatch)
    assert failing_rows(fetch, "FAILURES", CHECK, monkeypatch) == {S502, S503, S504}


def test_a_408_or_504_read_as_a_page_timeout_fails_exactly_those_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a Fetch API 408 or 504 reported as the target timing out (WEB_FETCH_TIMEOUT)
    right = deepseek_fetch_api.DeepSeekFetchApi.fetch

    async def timeout_code(self: deepseek_fetch_api.DeepSeekFetchApi, request: FetchRequest,
                           ctx: CallContext) -> FetchResult:
        try:
            return await right(self, request, ctx)
        except WebError as error:
            if re.search(r"\(HTTP (408|504)\)", error.message):
                raise WebError(WebErrorCode.FETCH_TIMEOUT, "the page timed out") from error
            raise

    monkeypatch.setattr(deepseek_fetch_api.DeepSeekFetchApi, "fetch", timeout_code)
    _only("FAILURES", monkeypatch)
    assert failing_rows(fetch, "FAILURES", CHECK, monkeypatch) == {S408, S504}


def test_a_title_heading_added_fails_exactly_the_no_heading_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the API's title prepended as '# title' when the Markdown does not start with a heading
    patch_reading(
        deepseek_fetch_api.DeepSeekFetchApi, "fetch", 'FetchBody("text", content)',
        'FetchBody("text", content if content.lstrip().startswith("#") else f"# {data.get(\'title\')}\\n\\n{content}")',
        monkeypatch,
    )
    _only("MAPPING", monkeypatch)
    # an empty page gets the heading too, and so does Markdown that opens with HTML
    assert failing_rows(fetch, "MAPPING", CHECK, monkeypatch) == {NO_HEADING, EMPTY, "Markdown that opens with HTML"}


def test_whitespace_folded_fails_exactly_the_code_block_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: runs of spaces and of three or more newlines folded (an indented code block lost)
    right = deepseek_fetch_api.DeepSeekFetchApi.fetch

    async def folded(self: deepseek_fetch_api.DeepSeekFetchApi, request: FetchRequest,
                     ctx: CallContext) -> FetchResult:
        result = await right(self, request, ctx)
        content = re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+", " ", result.body.content))
        return FetchResult(url=result.url, status_code=200, body=FetchBody("text", content), truncated=False)

    monkeypatch.setattr(deepseek_fetch_api.DeepSeekFetchApi, "fetch", folded)
    _only("MAPPING", monkeypatch)
    # the two spaces of a hard line break fold to one too
    assert failing_rows(fetch, "MAPPING", CHECK, monkeypatch) == {SPACES, "Markdown with hard line breaks"}


def test_no_bound_on_the_output_fails_exactly_the_million_character_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the Fetch API's Markdown shown to the model whole, whatever its size (no output bound)
    right = web_fetch.WebFetchTool.__init__

    def unbounded(self: web_fetch.WebFetchTool, web: Any, *, max_output_chars: int = 200_000) -> None:
        right(self, web, max_output_chars=10**12)

    monkeypatch.setattr(web_fetch.WebFetchTool, "__init__", unbounded)
    _only("BOUNDS", monkeypatch)
    # the million page asked for whole by a max_length argument (hunt L's row) shows it whole too
    assert failing_rows(fetch, "BOUNDS", CHECK, monkeypatch) == {MILLION, f"{MILLION}, max_length among the arguments"}
