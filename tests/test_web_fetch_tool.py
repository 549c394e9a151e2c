"""The web_fetch tool: argument checks, HTML to Markdown, output caps, snapshots of what the model sees."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdownify import MarkdownConverter
from syrupy.assertion import SnapshotAssertion

from dsweb_ref import CallContext, FetchBody, FetchRequest, FetchResult, WebError, WebErrorCode, WebService
from dsweb_ref.providers.http_fetch import HttpFetchProvider
from dsweb_ref.schemas import schemas, validate
from dsweb_ref.tools._fetch_render import MAX_HTML_DEPTH, TRUNCATION_NOTE, html_to_markdown, render_fetch
from dsweb_ref.tools.web_fetch import WebFetchTool

URL = "https://docs.example.test/guide"

PAGE = """<!doctype html>
<html><head><title>Guide &amp; Notes</title>
<style>body { color: red }</style>
<script>window.secret = "do not show";</script>
</head><body>
<noscript><p>Enable JavaScript</p></noscript>
<template><p>template text</p></template>
<h1>Getting started</h1>
<p>Install with <code>pip install dsweb</code> &mdash; then read
<a href="https://docs.example.test/api">the API</a>.</p>
<h2>Steps</h2>
<ul><li>First<ul><li>Nested</li></ul></li><li>Second</li></ul>
<ol><li>one</li><li>two</li></ol>
<pre><code>print("hi")</code></pre>
<table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
<!-- a comment -->
</body></html>"""


@dataclass
class CannedFetch:
    """A fetch provider with a fixed outcome that records what it was asked."""

    outcome: FetchResult | BaseException | None = None
    id: str = "canned"
    calls: list[tuple[FetchRequest, CallContext]] = field(default_factory=list)
    gate: asyncio.Event | None = None
    entered: asyncio.Event = field(default_factory=asyncio.Event)

    def available(self) -> bool:
        return True

    async def fetch(self, request: FetchRequest, ctx: CallContext) -> FetchResult:
        self.calls.append((request, ctx))
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        assert self.outcome is not None
        return self.outcome


def page(content: str, *, kind: str = "html", status: int = 200, truncated: bool = False, **kw: Any) -> FetchResult:
    return FetchResult(url=URL, status_code=status, body=FetchBody(kind, content), truncated=truncated, **kw)  # type: ignore[arg-type]


def tool_for(outcome: FetchResult | BaseException | None, **kwargs: Any) -> tuple[WebFetchTool, CannedFetch]:
    provider = CannedFetch(outcome)
    web = WebService()
    web.register_fetch(provider)
    return WebFetchTool(web, **kwargs), provider


def run(tool: WebFetchTool, arguments: object) -> tuple[str, dict[str, Any]]:
    return asyncio.run(tool.run(arguments))


# --- surface ---------------------------------------------------------------------------------


def test_tool_surface() -> None:
    tool, _ = tool_for(None)
    assert tool.name == "web_fetch"
    assert tool.description.startswith("Fetch the content of a specific HTTP(S) URL")
    expected = {k: v for k, v in schemas()["web_fetch.input"].items() if k not in ("$schema", "$id", "title")}
    assert tool.input_schema == expected
    assert tool.input_schema is not schemas()["web_fetch.input"]
    assert "web_fetch" in tool.system_prompt and "untrusted" in tool.system_prompt
    assert tool.max_output_chars == 200_000


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"max_output_chars": 0}, id="zero"),
        pytest.param({"max_output_chars": -5}, id="negative"),
        pytest.param({"max_output_chars": True}, id="bool"),
        pytest.param({"max_output_chars": 1.5}, id="float"),
        pytest.param({"max_output_chars": "100"}, id="string"),
    ],
)
def test_bad_tool_config(kwargs: dict[str, Any]) -> None:
    with pytest.raises(WebError) as info:
        WebFetchTool(WebService(), **kwargs)
    assert info.value.code == WebErrorCode.CONFIG_INVALID


def test_tool_needs_a_web_service() -> None:
    with pytest.raises(WebError) as info:
        WebFetchTool(None)  # type: ignore[arg-type]
    assert info.value.code == WebErrorCode.CONFIG_INVALID


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param(None, 'invalid arguments: expected an object with a "url" string', id="none"),
        pytest.param(["https://a.test"], 'invalid arguments: expected an object with a "url" string', id="list"),
        pytest.param("https://a.test", 'invalid arguments: expected an object with a "url" string', id="string"),
        pytest.param({}, 'invalid arguments: "url" is required', id="missing"),
        pytest.param({"uri": "https://a.test"}, 'invalid arguments: "url" is required', id="misspelt"),
        pytest.param({"url": 42}, 'invalid arguments: "url" must be a string', id="number"),
        pytest.param({"url": None}, 'invalid arguments: "url" must be a string', id="null"),
        pytest.param({"url": ["https://a.test"]}, 'invalid arguments: "url" must be a string', id="array"),
        pytest.param({"url": ""}, "url must be a non-empty string", id="empty"),
        pytest.param({"url": " \t\n"}, "url must be a non-empty string", id="blank"),
    ],
)
def test_bad_arguments(arguments: object, message: str) -> None:
    tool, provider = tool_for(page("never"))
    with pytest.raises(WebError) as info:
        run(tool, arguments)
    assert (info.value.code, info.value.message) == (WebErrorCode.INVALID_ARGUMENTS, message)
    result = asyncio.run(tool.execute(arguments))
    assert (result.text, result.error_code, result.value) == (f"Error: {message}", "WEB_INVALID_ARGUMENTS", None)
    assert provider.calls == []


def test_fetches_through_the_seam_with_the_callers_context() -> None:
    tool, provider = tool_for(page("x", kind="text"))
    ctx = CallContext(latest_prompt="read the guide")
    asyncio.run(tool.run({"url": f"  {URL}\n"}, ctx))
    assert provider.calls == [(FetchRequest(URL), ctx)]


def test_seam_errors_become_error_results() -> None:
    tool = WebFetchTool(WebService())  # nothing registered
    result = asyncio.run(tool.execute({"url": URL}))
    assert result.error_code == WebErrorCode.PROVIDER_UNAVAILABLE
    assert result.text == "Error: no usable web fetch provider is registered"


def test_cancellation_propagates_through_execute() -> None:
    tool, provider = tool_for(page("x"))
    provider.gate = asyncio.Event()

    async def main() -> None:
        task = asyncio.create_task(tool.execute({"url": URL}))
        await provider.entered.wait()
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())


# --- model-visible output (snapshots) ---------------------------------------------------------

CASES = {
    "html-page": (page(PAGE), {}),
    "plain-text": (page("line one\nline two\n", kind="text"), {}),
    "json-body": (page('{"name": "dsweb", "ok": true}', kind="text"), {}),
    "not-found": (page("<html><body><h1>Not Found</h1><p>No such page.</p></body></html>", status=404), {}),
    "truncated-output": (page("word " * 100, kind="text"), {"max_output_chars": 160}),
    "provider-truncated": (page("<p>the first part</p>", truncated=True), {}),
    "empty-204": (page("", kind="text", status=204), {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_output_snapshots(case: str, snapshot_text: SnapshotAssertion, snapshot_json: SnapshotAssertion) -> None:
    outcome, kwargs = CASES[case]
    tool, _ = tool_for(outcome, **kwargs)
    result = asyncio.run(tool.execute({"url": URL}))
    assert result.error_code is None and result.value is not None
    assert validate("web_fetch.output", result.value) == []
    assert len(result.text) <= tool.max_output_chars
    assert result.text == snapshot_text
    assert result.value == snapshot_json


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(WebError(WebErrorCode.FETCH_TIMEOUT, "web fetch timed out after 30 seconds"), id="timeout"),
        pytest.param(
            WebError(
                WebErrorCode.REDIRECT_BLOCKED,
                "cross-origin redirect to https://other.example.test is not followed automatically; "
                "fetch https://other.example.test/page directly if it is still wanted",
            ),
            id="cross-origin",
        ),
    ],
)
def test_error_snapshots(error: WebError, snapshot_text: SnapshotAssertion) -> None:
    tool, _ = tool_for(error)
    result = asyncio.run(tool.execute({"url": URL}))
    assert (result.error_code, result.value) == (error.code, None)
    assert result.text == snapshot_text


def test_blocked_url_error_from_the_default_provider(snapshot_text: SnapshotAssertion) -> None:
    web = WebService()
    web.register_fetch(HttpFetchProvider())
    result = asyncio.run(WebFetchTool(web).execute({"url": "http://127.0.0.1/admin"}))
    assert result.error_code == WebErrorCode.BLOCKED_URL
    assert result.text == snapshot_text


# --- conversion ------------------------------------------------------------------------------


def test_html_is_converted_to_markdown() -> None:
    tool, _ = tool_for(page(PAGE))
    text, value = run(tool, {"url": URL})
    body = value["body"]["content"]
    assert value["body"]["kind"] == "text"  # Markdown is text: the body kind is the closed union html|text
    assert "# Getting started" in body and "## Steps" in body  # ATX headings
    assert "- First" in body and "- Nested" in body and "- Second" in body  # '-' bullets
    assert "[the API](https://docs.example.test/api)" in body
    for dropped in ("window.secret", "color: red", "Enable JavaScript", "template text", "a comment", "<h1>"):
        assert dropped not in body
    assert text == f"Fetched {URL} (HTTP 200)\n\n{body}"


def test_text_bodies_pass_through_verbatim() -> None:
    raw = "<b>not html</b>\n  * keep   spacing *"
    tool, _ = tool_for(page(raw, kind="text"))
    text, value = run(tool, {"url": URL})
    assert text == f"Fetched {URL} (HTTP 200)\n\n{raw}"
    assert value["body"] == {"kind": "text", "content": raw}


def test_nesting_at_the_limit_is_converted() -> None:
    html = "<div>" * MAX_HTML_DEPTH + "deep text"
    tool, _ = tool_for(page(html))
    _, value = run(tool, {"url": URL})
    assert value["body"] == {"kind": "text", "content": "deep text"}


@pytest.mark.parametrize("depth", [MAX_HTML_DEPTH + 1, 20_000])
def test_pathological_nesting_passes_raw_text_through(depth: int) -> None:
    html = "<div>" * depth + "deep text"
    tool, _ = tool_for(page(html))
    text, value = run(tool, {"url": URL})
    assert value["body"] == {"kind": "html", "content": html}
    assert text.endswith("deep text")


def test_a_converter_failure_passes_raw_text_through(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: object, soup: object) -> str:
        raise ValueError("converter bug")

    monkeypatch.setattr(MarkdownConverter, "convert_soup", broken)
    tool, _ = tool_for(page("<p>raw</p>"))
    text, value = run(tool, {"url": URL})
    assert value["body"] == {"kind": "html", "content": "<p>raw</p>"}
    assert text == f"Fetched {URL} (HTTP 200)\n\n<p>raw</p>"


def test_html_to_markdown_edges() -> None:
    assert html_to_markdown("plain text") == "plain text"
    assert html_to_markdown("<p>x</p><!-- a comment -->") == "x"
    assert html_to_markdown("<script>unclosed") == ""
    assert html_to_markdown("<p>a</p>\n\n\n\n<p>b</p>") == "a\n\nb"


# --- caps --------------------------------------------------------------------------------------

HEAD = f"Fetched {URL} (HTTP 200)\n\n"


def test_exact_fit_has_no_note() -> None:
    tool, _ = tool_for(page("abc", kind="text"), max_output_chars=len(HEAD) + 3)
    text, value = run(tool, {"url": URL})
    assert text == HEAD + "abc" and value["truncated"] is False


def test_over_the_cap_ends_with_the_note_at_exactly_the_cap() -> None:
    tool, _ = tool_for(page("x" * 500, kind="text"), max_output_chars=200)
    text, value = run(tool, {"url": URL})
    assert len(text) == 200 and text.endswith(TRUNCATION_NOTE)
    assert text == HEAD + "x" * (200 - len(HEAD) - len(TRUNCATION_NOTE)) + TRUNCATION_NOTE
    assert value["truncated"] is True and value["body"]["content"] == "x" * (200 - len(HEAD) - len(TRUNCATION_NOTE))


def test_provider_truncation_adds_the_note_even_when_it_fits() -> None:
    tool, _ = tool_for(page("abc", kind="text", truncated=True))
    text, value = run(tool, {"url": URL})
    assert text == HEAD + "abc" + TRUNCATION_NOTE and value["truncated"] is True


def test_a_cap_smaller_than_the_note_still_holds() -> None:
    tool, _ = tool_for(page("abc", kind="text"), max_output_chars=10)
    text, value = run(tool, {"url": URL})
    assert text == HEAD[:10] and value["truncated"] is True


def test_html_is_pre_cut_before_conversion() -> None:
    big = "<p>" + "y" * 1000 + "</p>"
    tool, _ = tool_for(page(big), max_output_chars=300)
    text, value = run(tool, {"url": URL})
    assert len(text) <= 300 and value["truncated"] is True and value["body"]["kind"] == "text"


@settings(max_examples=300, deadline=None)
@given(
    body=st.text(max_size=400),
    cap=st.integers(min_value=1, max_value=500),
    provider_cut=st.booleans(),
    status=st.sampled_from([200, 301, 404, 503]),
)
def test_render_never_exceeds_the_cap(body: str, cap: int, provider_cut: bool, status: int) -> None:
    result = page(body, kind="text", status=status, truncated=provider_cut)
    text, value = render_fetch(result, body, "text", source_truncated=False, max_chars=cap)
    assert len(text) <= cap
    assert body.startswith(value["body"]["content"])
    assert validate("web_fetch.output", value) == []
    whole = f"Fetched {URL} (HTTP {status})\n\n{body}"
    if provider_cut or len(whole) > cap:
        assert value["truncated"] is True
        if cap >= len(TRUNCATION_NOTE):
            assert text.endswith(TRUNCATION_NOTE)
    else:
        assert value["truncated"] is False and text == whole


def test_values_validate_against_the_output_schema() -> None:
    for outcome, kwargs in CASES.values():
        tool, _ = tool_for(outcome, **kwargs)
        _, value = run(tool, {"url": URL})
        assert validate("web_fetch.output", value) == [], value
    broken = {"url": URL, "status_code": 200, "body": {"kind": "pdf", "content": ""}, "truncated": False}
    assert validate("web_fetch.output", broken) != []
