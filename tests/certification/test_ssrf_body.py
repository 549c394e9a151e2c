"""ssrf.body.decoded: the reference passes; each row fails the one wrong reading of a body it names (the
first row to fail), and the readings the seeds leave open (refusing what was not asked for) pass."""

from __future__ import annotations

import codecs
import dataclasses
import json
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from dsweb_ref import FetchBody, FetchResult, WebError, WebErrorCode
from dsweb_ref.certification.checks import REGISTRY, ssrf_body
from dsweb_ref.certification.checks.ssrf_body import REPLY_ROWS, ROWS, _listed
from dsweb_ref.certification.targets import (
    InProcessTarget,
    TargetConfig,
    ToolPair,
    _build_reference,
    reference_target,
)
from dsweb_ref.netguard import decode_text, pick_charset, read_capped
from dsweb_ref.providers.http_fetch import HttpFetchProvider
from dsweb_ref.tools import web_fetch as web_fetch_module
from dsweb_ref.tools._result import ToolResult, error_result

from ._profile_breaks import assert_break_fails_exactly
from .conftest import run
from .test_ssrf_checks import fetch_only_target

CHECK = "ssrf.body.decoded"
Reading = Callable[[httpx.Headers, bytes], Awaitable[str]]


async def _chunks(raw: bytes) -> AsyncIterator[bytes]:
    yield raw


async def _inflated(headers: httpx.Headers, raw: bytes) -> bytes:
    """The body with its content coding undone, as the reference undoes it."""
    data, _cut = await read_capped(_chunks(raw), 1 << 20, headers.get("content-encoding"))
    return data


async def reference_text(headers: httpx.Headers, raw: bytes) -> str:
    return decode_text(await _inflated(headers, raw), pick_charset(headers.get("content-type")), complete=True)


def _coding(headers: httpx.Headers) -> str:
    return headers.get("content-encoding", "")


def _refuse() -> str:
    raise WebError(WebErrorCode.UNSUPPORTED_CONTENT_TYPE, "not decoded here")


async def coding_ignored(headers: httpx.Headers, raw: bytes) -> str:
    return decode_text(raw, pick_charset(headers.get("content-type")), complete=True)


async def coding_case_sensitive(headers: httpx.Headers, raw: bytes) -> str:
    return _refuse() if _coding(headers) != _coding(headers).lower() else await reference_text(headers, raw)


async def deflate_not_decoded(headers: httpx.Headers, raw: bytes) -> str:
    return _refuse() if _coding(headers).lower() == "deflate" else await reference_text(headers, raw)


async def raw_deflate_as_text(headers: httpx.Headers, raw: bytes) -> str:
    if _coding(headers).lower() != "deflate":
        return await reference_text(headers, raw)
    try:
        data = zlib.decompress(raw)
    except zlib.error:
        data = raw  # not zlib: taken as it came
    return data.decode("utf-8", "replace")


async def x_gzip_as_text(headers: httpx.Headers, raw: bytes) -> str:
    return raw.decode("utf-8", "replace") if _coding(headers) == "x-gzip" else await reference_text(headers, raw)


async def charset_ignored(headers: httpx.Headers, raw: bytes) -> str:
    return decode_text(await _inflated(headers, raw), "utf-8", complete=True)


async def single_byte_for_unknown(headers: httpx.Headers, raw: bytes) -> str:
    if "gb2312" in headers.get("content-type", ""):
        return raw.decode("latin-1")  # wrong: a charset it does not know read as ISO-8859-1
    return await reference_text(headers, raw)


async def too_much_dropped(headers: httpx.Headers, raw: bytes) -> str:
    if raw.startswith(codecs.BOM_UTF8):
        return raw[4:].decode("utf-8", "replace")  # wrong: the mark and the first character dropped
    return await reference_text(headers, raw)


async def label_wins(headers: httpx.Headers, raw: bytes) -> str:
    """HTTP's reading: the declared charset, whatever a byte-order mark says; gb2312 as GB2312."""
    charset = pick_charset(headers.get("content-type"))
    charset = "gb2312" if "gb2312" in headers.get("content-type", "") else charset
    return (await _inflated(headers, raw)).decode(charset, "replace")


async def stop_at_bad_byte(headers: httpx.Headers, raw: bytes) -> str:
    data = await _inflated(headers, raw)
    if data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return await reference_text(headers, raw)
    charset = pick_charset(headers.get("content-type"))
    try:
        return data.decode(charset)
    except UnicodeDecodeError as exc:
        return data[: exc.start].decode(charset)  # wrong: the text after the first undecodable byte dropped


def reading_fetch(read: Reading) -> type[HttpFetchProvider]:
    """The reference fetcher, with ``read`` turning each body's raw bytes into its text."""

    class ReadingFetch(HttpFetchProvider):
        async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
            raw = b"".join([chunk async for chunk in response.aiter_raw()])
            text = await read(response.headers, raw)
            return FetchResult(url=str(url), status_code=response.status_code, body=FetchBody("text", text))

    ReadingFetch.__name__ = read.__name__
    return ReadingFetch


READINGS: dict[str, Reading] = {
    "gzip": coding_ignored,
    "coding-upper-case": coding_case_sensitive,
    "deflate": deflate_not_decoded,
    "deflate-raw": raw_deflate_as_text,
    "x-gzip": x_gzip_as_text,
    "latin-1": charset_ignored,
    "gb2312": single_byte_for_unknown,
    "utf-8-bom": too_much_dropped,
    "stray-byte": stop_at_bad_byte,
}


def test_every_row_has_a_reading() -> None:
    assert set(READINGS) == {case.name for case in ROWS}
    assert REGISTRY[CHECK].rule.startswith("Seed 002:") and all(case.catches for case in ROWS)


def test_the_reference_passes() -> None:
    (result,) = run(reference_target(), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason


def test_a_fetcher_that_reads_bodies_as_the_reference_does_passes() -> None:
    """The harness of the readings below is sound: with the reference's own reading, the check passes."""
    (result,) = run(fetch_only_target(reading_fetch(reference_text)), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason


@pytest.mark.parametrize("row", sorted(READINGS))
def test_each_row_catches_the_reading_it_names(row: str) -> None:
    (result,) = run(fetch_only_target(reading_fetch(READINGS[row])), only=[CHECK]).results
    assert result.outcome.value == "failed" and result.reason.startswith(f"{row}: "), result.reason


@dataclass(frozen=True)
class RawResult:
    """A tool result whose text is kept as given (the reference's ToolResult replaces lone surrogates)."""

    text: str
    value: dict[str, Any] | None
    error_code: str | None


class RewrittenFetchTool:
    """The reference web_fetch tool with ``rewrite`` turning each result into the text the model sees."""

    def __init__(self, tool: Any, rewrite: Callable[[Any], str]) -> None:
        self.tool, self.rewrite = tool, rewrite

    async def execute(self, arguments: Any, ctx: Any) -> RawResult:
        result = await self.tool.execute(arguments, ctx)
        return RawResult(self.rewrite(result), result.value, result.error_code)


def _with_fetch_text(rewrite: Callable[[Any], str]) -> InProcessTarget:
    def build(config: TargetConfig) -> ToolPair:
        tools = _build_reference(config)
        return dataclasses.replace(tools, fetch=RewrittenFetchTool(tools.fetch, rewrite))

    return InProcessTarget(build, name="rewritten-fetch-text", version="0")


def test_a_lone_surrogate_in_the_text_fails_the_stray_byte_row() -> None:
    leaky = _with_fetch_text(lambda result: result.text.replace("\ufffd", "\udcff"))  # the byte kept undecoded
    (result,) = run(leaky, only=[CHECK]).results
    assert result.outcome.value == "failed", result.reason
    assert result.reason.startswith("stray-byte: the text carries the lone surrogate U+DCFF"), result.reason


def test_a_fetcher_reading_every_page_by_its_declared_charset_passes() -> None:
    """Seed-open: HTTP reads the label (a byte-order mark is bytes, gb2312 is GB2312), browsers let the mark
    win and read gb2312 as GBK; either reading is the page's text."""
    (result,) = run(fetch_only_target(reading_fetch(label_wins)), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason


def test_a_tool_whose_text_is_its_value_as_json_passes() -> None:
    """Seed-open: the text's format; JSON's \\u escapes stand for the characters."""

    as_json = _with_fetch_text(lambda result: json.dumps(result.value) if result.value else result.text)
    (result,) = run(as_json, only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason


class NoCodingsFetch(HttpFetchProvider):
    """Asks for no content coding and reads no declared charset but UTF-8 (refusing the others)."""

    async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
        if "charset=utf-8" not in response.headers.get("content-type", ""):
            raise WebError(WebErrorCode.UNSUPPORTED_CONTENT_TYPE, "only UTF-8 here")
        return await super()._read(url, response)


def test_a_fetcher_that_asks_for_no_coding_and_refuses_other_charsets_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seed-open: no seed makes a fetcher ask for a coding or read a charset; a refusal is a WEB_* error."""
    real_build = httpx.AsyncClient.build_request

    def identity_only(self: httpx.AsyncClient, *args: object, **kwargs: object) -> httpx.Request:
        request = real_build(self, *args, **kwargs)  # type: ignore[arg-type]
        request.headers["Accept-Encoding"] = "identity"
        return request

    monkeypatch.setattr(httpx.AsyncClient, "build_request", identity_only)
    (result,) = run(fetch_only_target(NoCodingsFetch), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason


@pytest.mark.parametrize(
    ("accept", "coding", "listed"),
    [
        ("gzip, deflate", "gzip", True),
        ("GZIP", "gzip", True),  # catches: names compared case-sensitively
        ("deflate;q=0, gzip", "deflate", False),  # catches: q=0 read as acceptable
        ("gzip;q=0.0", "gzip", False),  # catches: only the text 'q=0' taken for zero
        ("gzip;q=0.5", "gzip", True),
        ("*", "deflate", True),
        ("identity", "gzip", False),
        ("", "gzip", False),
        ("br", "gzip", False),
        ("*, gzip;q=0", "gzip", False),  # catches: '*' read over the coding's own entry
        ("*;q=0, gzip", "gzip", True),
        ("gzip;level=1;q=0", "gzip", False),  # catches: q looked for only as the first parameter
    ],
)
def test_the_server_compresses_only_with_a_coding_the_request_listed(accept: str, coding: str, listed: bool) -> None:
    assert _listed(accept, coding) is listed


class CodelessFailures(HttpFetchProvider):
    """Every failure loses its code (a reply that is not HTTP is the first the check meets)."""

    async def _follow(self, url: httpx.URL, ctx: Any) -> FetchResult:
        try:
            return await super()._follow(url, ctx)
        except WebError as error:
            raise WebError(None, error.message) from error  # type: ignore[arg-type]  # wrong: the code is lost


class CodelessStatus(HttpFetchProvider):
    """A status outside 100-599 refused without a code."""

    async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
        if not 100 <= response.status_code <= 599:
            raise WebError(None, "invalid HTTP status")  # type: ignore[arg-type]  # wrong: no code
        return await super()._read(url, response)


class OneByteEmpty(HttpFetchProvider):
    """The empty-page shortcut one off: a page declaring one byte taken for an empty one."""

    async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
        if response.headers.get("content-length") == "1":
            return FetchResult(url=str(url), status_code=response.status_code, body=FetchBody("text", ""))
        return await super()._read(url, response)


class EmptyPlaceholder(HttpFetchProvider):
    """An empty page shown with a placeholder text it does not have."""

    async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
        result = await super()._read(url, response)
        if not result.body.content:
            return dataclasses.replace(result, body=FetchBody("text", "(empty page)"))
        return result


REPLY_READINGS: dict[str, type[HttpFetchProvider]] = {
    "not-http": CodelessFailures,
    "status-999": CodelessStatus,
    "one-byte": OneByteEmpty,
    "empty": EmptyPlaceholder,
}


# Readings made in the tool rather than the fetcher: the tool turns a fetcher's raw exception into a
# WEB_* error, so a tool that cannot answer an error text past its cap is the wrong reading itself.
TOOL_READINGS = {"nul-status-line"}


def test_every_reply_row_has_a_reading() -> None:
    assert set(REPLY_READINGS) | TOOL_READINGS == {case.name for case in REPLY_ROWS}
    assert all(case.catches for case in REPLY_ROWS)


@pytest.mark.parametrize("row", sorted(REPLY_READINGS))
def test_each_reply_row_catches_the_reading_it_names(row: str) -> None:
    (result,) = run(fetch_only_target(REPLY_READINGS[row]), only=[CHECK]).results
    assert result.outcome.value == "failed" and result.reason.startswith(f"{row}: "), result.reason


def test_an_error_text_past_the_output_cap_raised_instead_of_answered_fails_the_nul_status_line_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found by an audit of the mutation score's out-of-reach judgements: the parser quotes a status line
    of 95,000 NUL bytes (4 characters each), so the error text runs past web_fetch's 200,000-character
    cap. catches: a tool whose error path cannot cut such a text (it raises; no WEB_* error comes back)."""

    def uncut(error: WebError, max_chars: int | None = None) -> ToolResult:
        if max_chars is not None and len(error.message) > max_chars:
            raise ValueError("error text over the output cap")  # wrong: the call fails without a code
        return error_result(error, max_chars)

    monkeypatch.setattr(web_fetch_module, "error_result", uncut)
    (result,) = run(fetch_only_target(HttpFetchProvider), only=[CHECK]).results
    # A raise is a target error (the run stops there), so the row's name is not in the reason...
    assert result.outcome.value == "error" and "raised instead of returning an error result" in result.reason
    # ...but without the row the same target passes: the row alone catches it.
    monkeypatch.setattr(ssrf_body, "REPLY_ROWS", tuple(c for c in REPLY_ROWS if c.name != "nul-status-line"))
    (result,) = run(fetch_only_target(HttpFetchProvider), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason


class LenientStatusLine(HttpFetchProvider):
    """Right by the rule: a fetcher whose parser reads a status line of NUL bytes anyway (Node's fetch does)
    and shows the page it carries (a false failure a review found: the row once served words of its own)."""

    read_anyway = 0

    async def _follow(self, url: httpx.URL, ctx: Any) -> FetchResult:
        try:
            return await super()._follow(url, ctx)
        except WebError as error:
            if "illegal status line" not in error.message:
                raise
            LenientStatusLine.read_anyway += 1
            return FetchResult(url=str(url), status_code=200, body=FetchBody("text", ssrf_body.WORDS))


def test_a_fetcher_reading_the_nul_status_line_as_the_page_it_carries_passes() -> None:
    (result,) = run(fetch_only_target(LenientStatusLine), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason
    assert LenientStatusLine.read_anyway == 1  # the row's reply was read as a page, not refused


BODY_BREAKS = {"ssrf-coding-ignored": "gzip: the page's text did not come back",
               "ssrf-charset-ignored": "latin-1: the page's text did not come back"}


@pytest.mark.parametrize("mode", sorted(BODY_BREAKS))
def test_each_body_break_fails_exactly_its_check_among_the_ssrf_family(mode: str, tmp_path: Path) -> None:
    assert_break_fails_exactly("ssrf", mode, CHECK, BODY_BREAKS[mode], tmp_path)
