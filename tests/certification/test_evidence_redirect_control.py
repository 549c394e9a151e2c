"""A review (s9): evidence.html_page failed a pipeline whose fetcher follows no redirect at all, each 3xx a page it
could not fetch, so the search snippet stood in. Seed 002 validates "URL ที่จะ fetch" (the URLs to be fetched) and
lets the snippet stand in for a page that cannot be fetched; a Location never fetched is never validated. The check
now shows with a control (a redirect to a public page of the same origin holding a fact of its own) whether the
target follows redirects: one that follows none may cite the snippet of a result whose page redirects, and is still
judged on every other row; one that follows them and takes a refused redirect for a page not fetched still fails
the redirect rows. Each reading is made in the reference."""

from __future__ import annotations

import httpx
import pytest

from dsweb_ref import WebError, WebErrorCode
from dsweb_ref.certification.checks import evidence_html
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers.http_fetch import HttpFetchProvider
from dsweb_ref.tools import evidence_search

from ._readings import failing_rows
from .conftest import run

CHECK = "evidence.html_page"
TABLES = ("HTML", "ERROR_STATUS", "PRIVATE", "REFUSED", "BESIDE_REFUSED", "NUMERIC_REFUSED")
# The rows whose result's page redirects to a private or loopback address; the others' hosts resolve privately.
REDIRECT_ROWS = {c.name for t in TABLES[3:] for c in getattr(evidence_html, t) if "redirect" in c.params}
# Those that show a snippet cited: beside-page's other result is a page whose passage is found, so no snippet stands in.
SNIPPET_ROWS = REDIRECT_ROWS - {"private-redirect-beside-page"}
HOST_ROWS = {c.name for c in evidence_html.REFUSED if "redirect" not in c.params}
# The reviewer's pipeline: no redirect followed, so none refused (a 3xx is an ordinary load failure).
NOT_REFUSED = frozenset({WebErrorCode.INVALID_URL, WebErrorCode.BLOCKED_URL})


def _no_redirects(monkeypatch: pytest.MonkeyPatch, refused: frozenset[WebErrorCode] = NOT_REFUSED) -> None:
    """The reference's fetcher following no redirect (each one WEB_PROVIDER_ERROR, a page not fetched, its Location
    never read), and its pipeline refusing only ``refused``."""

    def not_followed(self: HttpFetchProvider, url: httpx.URL, response: httpx.Response, hops: int) -> httpx.URL:
        raise WebError(WebErrorCode.PROVIDER_ERROR, f"HTTP {response.status_code}: redirects are not followed")

    monkeypatch.setattr(HttpFetchProvider, "_next_hop", not_followed)
    monkeypatch.setattr(evidence_search, "_REFUSED", refused)


def _refusal_rows_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for table in ("HTML", "ERROR_STATUS", "PRIVATE"):
        monkeypatch.setattr(evidence_html, table, ())


REFUSAL_TABLES = TABLES[3:]


def _failing_refusal_rows(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The refusal rows that fail the reference as it is now, each run alone (the control runs with each)."""
    _refusal_rows_only(monkeypatch)
    whole = {t: getattr(evidence_html, t) for t in REFUSAL_TABLES}
    failing = set()
    for table in REFUSAL_TABLES:
        for other in REFUSAL_TABLES:
            monkeypatch.setattr(evidence_html, other, whole[other] if other == table else ())
        failing |= failing_rows(evidence_html, table, CHECK, monkeypatch)
    for table in REFUSAL_TABLES:
        monkeypatch.setattr(evidence_html, table, whole[table])
    return failing


def test_the_rows_the_control_governs() -> None:
    assert REDIRECT_ROWS == {
        "private-redirect-snippet", "private-redirect-unprintable-snippet", "private-redirect-recorded",
        "private-redirect-beside-page", "numeric-redirect-snippet", "hex-redirect-snippet", "octal-redirect-snippet",
        "short-hex-redirect-snippet", "short-redirect-snippet", "cross-origin-redirect-snippet",
    }  # fmt: skip
    assert HOST_ROWS == {"private-host-snippet"}


def test_the_reference_follows_the_control_and_is_judged_strictly() -> None:
    (result,) = run(reference_target(), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason
    assert result.details.get("redirects") == evidence_html.FOLLOWED, result.details


def test_a_pipeline_following_no_redirect_may_cite_the_snippet(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by seed 002 (the reviewer's variant, in the reference): a redirect never followed is a page not fetched.
    _no_redirects(monkeypatch)
    (result,) = run(reference_target(), only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason
    assert result.details.get("redirects") == evidence_html.NOT_FOLLOWED, result.details


async def _follows(*args: object) -> bool:
    return True


def test_the_control_is_what_accepts_the_snippet(monkeypatch: pytest.MonkeyPatch) -> None:
    # Not vacuous: the same pipeline, taken for one that follows redirects, cites the snippet of each redirect row.
    _no_redirects(monkeypatch)
    monkeypatch.setattr(evidence_html, "_follows_redirects", _follows)
    assert _failing_refusal_rows(monkeypatch) == SNIPPET_ROWS


def test_a_pipeline_following_no_redirect_is_still_judged_on_a_host_resolving_privately(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a blocked host (WEB_BLOCKED_URL, before any fetch) counted as a load failure by a pipeline that follows
    # no redirect: its snippet is cited and listed. The control governs only the rows whose page redirects.
    _no_redirects(monkeypatch, frozenset({WebErrorCode.INVALID_URL}))
    _refusal_rows_only(monkeypatch)
    assert failing_rows(evidence_html, "REFUSED", CHECK, monkeypatch) == HOST_ROWS


def test_following_redirects_but_taking_a_refused_one_for_a_page_not_fetched_still_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (the reading the redirect rows exist for): a fetcher that follows redirects, validates each Location,
    # and reports one validation refused as an ordinary load failure, so its result's snippet is cited and listed.
    right = HttpFetchProvider._next_hop

    def refused_as_not_fetched(
        self: HttpFetchProvider, url: httpx.URL, response: httpx.Response, hops: int
    ) -> httpx.URL:
        try:
            return right(self, url, response, hops)
        except WebError as err:
            raise WebError(WebErrorCode.PROVIDER_ERROR, f"page not fetched: {err.message}") from None

    monkeypatch.setattr(HttpFetchProvider, "_next_hop", refused_as_not_fetched)
    assert _failing_refusal_rows(monkeypatch) == SNIPPET_ROWS
    (result,) = run(reference_target(), only=[CHECK]).results
    assert result.outcome.value == "failed", result.reason
    assert result.reason.startswith("private-redirect-snippet: "), result.reason
    assert "refused by validation, is cited as evidence" in result.reason, result.reason
    assert result.reason.endswith("though the target follows redirects (the control's was followed))"), result.reason
