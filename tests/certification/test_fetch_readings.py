"""Issue 24 item 5: the row added for survivors of the mutation run over web_fetch's rendering
(dsweb_ref/tools/_fetch_render.py), and fetch.api.wire's address rows. Each test bends the reference into
the wrong reading the row names and asserts that exactly that row of its check fails."""

from __future__ import annotations

import ipaddress

import httpx
import pytest

from dsweb_ref.certification.checks import fetch
from dsweb_ref.providers import deepseek_fetch_api
from dsweb_ref.tools import _fetch_render, web_fetch

from ._readings import failing_rows, patch_reading

CHECK = "fetch.api.mapping"
LONG, NEAR, EXACT = "a page of 250,000 characters", "a page of 199,990 characters", "a page of 199,943 characters"
MILLION = "a page of 1,000,000 characters"
MAX_LENGTH = "a page of 1,000,000 characters, max_length among the arguments"  # the million page, asked for whole
CJK_OVER = "a CJK page of 250,000 characters"  # from hunt S2 (see test_hunt_s2_readings)


def _bounds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The long page alone: the other tables of the check prove nothing here."""
    monkeypatch.setattr(fetch, "MAPPING", ())
    monkeypatch.setattr(fetch, "FAILURES", ())


def test_the_reference_passes_the_long_page_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _bounds_only(monkeypatch)
    assert failing_rows(fetch, "BOUNDS", CHECK, monkeypatch) == set()


def test_the_pages_straddle_the_reference_bound() -> None:
    """Otherwise the rows would never reach the cuts they are there to judge: the long page is over the
    reference's bound, the near one under it, with the text's header taking it over."""
    from dsweb_ref.settings import ToolSettings

    bound = ToolSettings().fetch_max_output_chars
    assert len(fetch.long_page(250_000)) == 250_000 > bound >= len(fetch.long_page(199_990)) == 199_990
    head = len(f"Fetched {fetch.PAGE} (HTTP 200)\n\n")
    assert 199_990 + head > bound == 199_943 + head


@pytest.mark.parametrize(
    "right, wrong, rows",
    [
        # catches: the cut flagged only when the provider or the source was cut, not the text's own cut
        ("truncated = result.truncated or source_truncated or len(prefix) > max_chars",
         "truncated = result.truncated or source_truncated", {NEAR}),
        # catches: a cut that keeps the page's end instead of its start
        ("text, shown = prefix[:keep] + TRUNCATION_NOTE, body[: max(0, keep - len(head))]",
         "text, shown = head + body[-(keep - len(head)):] + TRUNCATION_NOTE, body[-(keep - len(head)):]",
         {LONG, NEAR, MILLION, MAX_LENGTH, CJK_OVER}),
        # catches: a long page that fails the call instead of being cut (here: the cut raises)
        ("keep = max_chars - len(TRUNCATION_NOTE)", "keep = None", {LONG, NEAR, MILLION, MAX_LENGTH, CJK_OVER}),
        # catches: the bound read off by one, a text exactly at it cut (and flagged whole)
        ("if len(full) <= max_chars:", "if len(full) < max_chars:", {EXACT}),
    ],
)
def test_each_wrong_cut_fails_its_rows(right: str, wrong: str, rows: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _bounds_only(monkeypatch)
    patch_reading(_fetch_render, "render_fetch", right, wrong, monkeypatch, web_fetch)
    assert failing_rows(fetch, "BOUNDS", CHECK, monkeypatch) == rows


# fetch.api.wire's address rows (from an outside hunt): the HTTP fetcher's public-address policy kept on the
# Fetch API path refuses a private or loopback URL before any request; seed 001 delegates that policy.
_LOCAL_POLICY = '''raise WebError(WebErrorCode.INVALID_URL, "url must be a non-empty string")
    host = httpx.URL(request.url).host
    if host == "localhost" or (host[:1].isdigit() and not ipaddress.ip_address(host).is_global):
        raise WebError(WebErrorCode.BLOCKED_URL, "not a public address")'''


def test_a_local_address_policy_on_the_fetch_api_path_fails_exactly_the_address_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the HTTP provider's public-address validation applied before the Fetch API
    monkeypatch.setattr(deepseek_fetch_api, "ipaddress", ipaddress, raising=False)  # the reading's own imports
    monkeypatch.setattr(deepseek_fetch_api, "httpx", httpx, raising=False)
    patch_reading(deepseek_fetch_api.DeepSeekFetchApi, "fetch",
                  'raise WebError(WebErrorCode.INVALID_URL, "url must be a non-empty string")', _LOCAL_POLICY,
                  monkeypatch)
    assert failing_rows(fetch, "WIRE", "fetch.api.wire", monkeypatch) == {"a private address", "localhost"}
