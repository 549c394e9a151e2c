"""A hunt (U1) certified an SSRF-safe fetcher written from the seeds alone for the ssrf profile and found two false
failures; the checks now accept both readings and still catch the wrong ones they caught.

- U1-1 (ssrf.deadline): a fetcher that runs web_fetch calls one at a time, or one fetch per host at a time, every
  fetch ending at its own 1 s deadline, failed: the check sends its four rows at once to one host and timed each
  answer from when its call was sent, so the queue counted as fetch time (drip-headers "answered after 3.0 s").
  No seed decides whether separate web_fetch calls run side by side, and seed 001 keeps the HTTP provider's "own
  ... resource limits" (a per-host limit is one). Each row is now timed from when its fetch's first request reached
  the server (a call whose fetch never reached it, from when it was sent).
- U1-2 (ssrf.body.decoded, plain-markup): a model-visible text that wraps the page in an envelope and HTML-escapes
  it (``html.escape(content, quote=False)`` inside ``<web_page ...>...</web_page>``) failed: the row looked for
  ``<b>bold</b>`` and ``a&amp;b`` in the escaped text. No seed fixes web_fetch's text format: its words are judged as
  they are or once unescaped, each reading whole, so a text/plain page read as HTML still fails, escaped or not.

Each reading is made in the reference as the hunt's adapter made it (U1_VARIANT=serial, per_host1, xml_wrap)."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import pytest

from dsweb_ref import netguard
from dsweb_ref._context import CallContext
from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref._types import BodyKind, FetchResult
from dsweb_ref.certification.checks import ssrf_body, ssrf_limits
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.netguard import body
from dsweb_ref.providers import http_fetch
from dsweb_ref.tools import web_fetch
from dsweb_ref.tools._result import ToolResult, error_result

from ._readings import failing_rows, fails_exactly, passes, patch_reading
from .conftest import run
from .test_ssrf_checks import PerHopDeadline, fetch_only_target

DEADLINE = "ssrf.deadline"
DECODED = "ssrf.body.decoded"
MARKUP = "plain-markup"

# --- U1-1: fetches queued behind each other ----------------------------------------------------------------------


def _queued(monkeypatch: pytest.MonkeyPatch, *, per_host: bool, deadline_over_queue: float | None = None) -> None:
    """The hunt's adapter: web_fetch calls handled one at a time (U1_VARIANT=serial) or one fetch per host at a time
    (per_host1), each fetch's own deadline starting when it leaves the queue. With ``deadline_over_queue``, a
    deadline of that many seconds over the queue and the fetch together (a queued call times out unfetched)."""
    execute = web_fetch.WebFetchTool.execute
    locks: dict[tuple[asyncio.AbstractEventLoop, str], asyncio.Lock] = {}

    async def in_turn(self: web_fetch.WebFetchTool, arguments: object, ctx: CallContext | None = None) -> ToolResult:
        url = arguments.get("url") if isinstance(arguments, Mapping) else None
        host = (urlsplit(url).hostname or "") if per_host and isinstance(url, str) else ""
        lock = locks.setdefault((asyncio.get_running_loop(), host), asyncio.Lock())
        async with lock:
            return await execute(self, arguments, ctx)

    async def bounded(self: web_fetch.WebFetchTool, arguments: object, ctx: CallContext | None = None) -> ToolResult:
        assert deadline_over_queue is not None
        try:
            return await asyncio.wait_for(in_turn(self, arguments, ctx), deadline_over_queue)
        except TimeoutError:
            return error_result(WebError(WebErrorCode.FETCH_TIMEOUT, "timed out"), self.max_output_chars)

    monkeypatch.setattr(web_fetch.WebFetchTool, "execute", in_turn if deadline_over_queue is None else bounded)


SENT = 'arrived.get(f"/slow/{case.name}", started)'  # each row timed from its request's arrival at the server


def test_the_reference_passes_the_deadline_check() -> None:
    passes(DEADLINE)


@pytest.mark.parametrize("per_host", [False, True], ids=["serial", "per-host"])
def test_fetches_run_one_at_a_time_pass_the_deadline_check(per_host: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # open (the hunt's reading): no seed decides whether separate web_fetch calls run side by side, and seed 001
    # keeps the provider's own resource limits; each fetch ends at its own deadline however long it queued
    _queued(monkeypatch, per_host=per_host)
    passes(DEADLINE)


def test_queued_fetches_failed_when_timed_from_their_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    # the false failure the hunt found: the rows timed from when their calls were sent, the queue counted
    _queued(monkeypatch, per_host=False)
    patch_reading(ssrf_limits, "_deadline_rows", SENT, "started", monkeypatch)
    (result,) = run(reference_target(), only=[DEADLINE]).results
    assert result.outcome.value == "failed" and result.reason.startswith("drip-headers: answered 3"), result.reason


def test_a_deadline_over_the_queue_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a deadline that counts the queue too, so queued calls time out before their fetch reached the server
    # (timed from when they were sent: each answers within the deadline with a WEB_* error)
    _queued(monkeypatch, per_host=False, deadline_over_queue=ssrf_limits.DEADLINE)
    passes(DEADLINE)


def test_a_deadline_per_hop_still_fails_when_the_fetches_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a deadline per redirect hop (ssrf-deadline-per-hop) in a fetcher that runs one fetch at a time: its
    # slow chain, reached last, still answers only once the server ended, counted from its first hop's arrival
    _queued(monkeypatch, per_host=False)
    (result,) = run(fetch_only_target(PerHopDeadline), only=[DEADLINE]).results
    assert result.outcome.value == "failed", result.reason
    assert result.reason.startswith("slow-hops: the call answered only once the server ended"), result.reason
    assert "late in all 3 runs" in result.reason, result.reason


# --- U1-2: the page escaped inside an envelope -------------------------------------------------------------------


def _xml_wrapped(monkeypatch: pytest.MonkeyPatch, before: Callable[[str], str] = lambda content: content) -> None:
    """The hunt's text (U1_VARIANT=xml_wrap): the page's content HTML-escaped inside an envelope of its own; with
    ``before``, the content changed first."""
    render = web_fetch.render_fetch

    def wrapped(
        result: FetchResult, shown: str, kind: BodyKind, *, source_truncated: bool, max_chars: int
    ) -> tuple[str, dict[str, Any]]:
        _, value = render(result, shown, kind, source_truncated=source_truncated, max_chars=max_chars)
        head = (f'<web_page url="{html.escape(value["url"])}" status="{value["status_code"]}" '
                f'truncated="{str(value["truncated"]).lower()}">')
        return f"{head}\n{html.escape(before(value['body']['content']), quote=False)}\n</web_page>", value

    monkeypatch.setattr(web_fetch, "render_fetch", wrapped)


def _plain_read_as_html(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text/plain page read as HTML (its <b> a tag, its &amp; decoded): the reading plain-markup names."""
    patch_reading(body, "classify_content_type", "if mime in _HTML:", 'if mime in _HTML or mime == "text/plain":',
                  monkeypatch, netguard, http_fetch)


def test_the_reference_passes_the_markup_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ssrf_body, "LABEL_ROWS", tuple(c for c in ssrf_body.LABEL_ROWS if c.name == MARKUP))
    assert failing_rows(ssrf_body, "LABEL_ROWS", DECODED, monkeypatch) == set()


def test_an_escaped_page_in_an_envelope_passes_the_body_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # open (the hunt's reading): no seed fixes web_fetch's text, and an XML envelope escapes the page inside it
    _xml_wrapped(monkeypatch)
    passes(DECODED)


def test_an_escaped_page_failed_when_judged_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    # the false failure the hunt found: the words looked for in the escaped text alone
    _xml_wrapped(monkeypatch)
    monkeypatch.setattr(ssrf_body, "_forms", lambda text: (f"{text}\n{ssrf_body.json_unescaped(text)}",))
    fails_exactly(ssrf_body, "LABEL_ROWS", DECODED, MARKUP, monkeypatch)


@pytest.mark.parametrize("wrapped", [False, True], ids=["as-is", "escaped"])
def test_a_plain_page_read_as_html_still_fails_exactly_the_markup_row(
    wrapped: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a text/plain page read as HTML (<b>bold</b> shown as **bold**, a&amp;b as a&b), with its text shown
    # as it is or escaped inside an envelope (a&b escaped to a&amp;b; <b>bold</b> still lost)
    if wrapped:
        _xml_wrapped(monkeypatch)
    _plain_read_as_html(monkeypatch)
    fails_exactly(ssrf_body, "LABEL_ROWS", DECODED, MARKUP, monkeypatch)


def test_entities_decoded_before_the_envelope_fails_exactly_the_markup_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a text/plain page's entities decoded (a&amp;b read as a&b) and the result escaped inside an envelope:
    # a&amp;b shows as it is and <b>bold</b> once unescaped, but no one reading of the text holds both
    _xml_wrapped(monkeypatch, before=html.unescape)
    fails_exactly(ssrf_body, "LABEL_ROWS", DECODED, MARKUP, monkeypatch)
