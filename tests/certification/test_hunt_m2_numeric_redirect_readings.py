"""An outside hunt (M2, entry A8) over seed 002: a wrong reading dsweb certify passed. The pipeline counting only
blocked addresses as refusals (WEB_BLOCKED_URL, WEB_REDIRECT_BLOCKED), so a redirect to loopback spelled as one
decimal number (http://2130706433/, which the reference refuses as WEB_INVALID_URL) becomes an ordinary load
failure and the result's matching snippet is cited and listed among the sources. The wrong reading is made in the
reference and must fail exactly the row that names it; the reference passes it, and so does a fetcher that reads
the number as 127.0.0.1 (or as a name the test network resolves there) and blocks it, right by the seed.

A review (s7 review 1) then found the other numeric spellings of loopback untested: a pipeline refusing the all-digit
host but failing http://0x7f000001/ (and octal, and short forms) as an unreadable page was certified. One row per
spelling now; the decimal-only reading fails exactly the new ones."""

from __future__ import annotations

import pytest

from dsweb_ref import WebErrorCode
from dsweb_ref.certification.checks import evidence_html
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.netguard import hosts, resolve, urls
from dsweb_ref.providers import http_fetch
from dsweb_ref.tools import evidence_search

from ._readings import failing_rows, patch_reading
from .conftest import run

HTML_PAGE = "evidence.html_page"
NUMERIC = "numeric-redirect-snippet"
# The other spellings inet_aton reads as 127.0.0.1 (review F5), each its own row.
SPELLED = {"hex-redirect-snippet": "0x7f000001", "octal-redirect-snippet": "017700000001",
           "short-hex-redirect-snippet": "0x7f.1", "short-redirect-snippet": "127.1"}
ALL_NUMERIC = {NUMERIC, *SPELLED}
TABLES = ("HTML", "ERROR_STATUS", "PRIVATE", "REFUSED", "BESIDE_REFUSED")
# The wrong reading, as the hunt wrote it: an invalid Location taken for a broken page, not a refusal.
BLOCKED_ONLY = frozenset({WebErrorCode.BLOCKED_URL, WebErrorCode.REDIRECT_BLOCKED})
# parse_host refusing every numeric spelling but the dotted-decimal one (the reference's reading).
NUMERIC_INVALID = """if name != str(literal):
            raise WebError("""


def _numeric_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check's other tables emptied: they prove nothing here, and the row runs alone in its own."""
    for table in TABLES:
        monkeypatch.setattr(evidence_html, table, ())


def test_the_reference_passes_the_numeric_redirect_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [c.name for c in evidence_html.NUMERIC_REFUSED] == [NUMERIC, *SPELLED]
    assert {c.name: c["spelling"] for c in evidence_html.NUMERIC_REFUSED[1:]} == SPELLED
    _numeric_only(monkeypatch)
    assert failing_rows(evidence_html, "NUMERIC_REFUSED", HTML_PAGE, monkeypatch) == set()


def test_the_whole_check_certifies_the_reference() -> None:
    (result,) = run(reference_target(), only=[HTML_PAGE]).results
    assert result.outcome.value == "passed", result.reason


def test_an_invalid_location_counted_as_a_load_failure_fails_exactly_the_numeric_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: _REFUSED without WEB_INVALID_URL ("refusals are BLOCKED; an invalid Location is just a broken page"):
    # the redirect to http://2130706433/ (and every other numeric spelling) refused as invalid, its result's
    # matching snippet cited and listed
    assert evidence_search._REFUSED == BLOCKED_ONLY | {WebErrorCode.INVALID_URL}
    monkeypatch.setattr(evidence_search, "_REFUSED", BLOCKED_ONLY)
    _numeric_only(monkeypatch)
    assert failing_rows(evidence_html, "NUMERIC_REFUSED", HTML_PAGE, monkeypatch) == ALL_NUMERIC
    # Every other row of the check passes it: only the numeric row is refused as an invalid URL.
    monkeypatch.setattr(evidence_html, "NUMERIC_REFUSED", ())
    (result,) = run(reference_target(), only=[HTML_PAGE]).results
    assert result.outcome.value == "passed", result.reason


def test_only_the_decimal_spelling_refused_fails_exactly_the_other_spellings_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (review F5): parse_host refusing a numeric host as invalid only when it is the address's decimal
    # number, every other numeric spelling failed as an unreadable page (WEB_PROVIDER_ERROR, an ordinary load
    # failure), so the hex, octal and short-form redirects' snippets are cited and listed
    wrong = ("if name != str(literal):\n            raise WebError(WebErrorCode.PROVIDER_ERROR, 'unreadable host') "
             "if name != str(int(literal)) else WebError(")
    patch_reading(hosts, "parse_host", NUMERIC_INVALID, wrong, monkeypatch, resolve, urls)
    _numeric_only(monkeypatch)
    assert failing_rows(evidence_html, "NUMERIC_REFUSED", HTML_PAGE, monkeypatch) == set(SPELLED)
    (result,) = run(reference_target(), only=[HTML_PAGE]).results
    assert result.details.get("catches") == evidence_html.NUMERIC_REFUSED[1].catches, result.details


def _numbers_read_as(reading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard reading a numeric spelling as the address it means ("address") or as a name to look up ("name",
    following the cross-origin redirect so the lookup happens: no seed makes a fetcher refuse it)."""
    wrong = "if False:\n            raise WebError(" if reading == "address" else (
        "if name != str(literal):\n            return name\n            raise WebError(")
    patch_reading(hosts, "parse_host", NUMERIC_INVALID, wrong, monkeypatch, resolve, urls)
    if reading == "name":
        monkeypatch.setattr(http_fetch, "redirect_refusal", lambda source, target: None)


@pytest.mark.parametrize("reading", ["address", "name"])
def test_a_fetcher_that_blocks_the_number_as_loopback_passes_the_row(
    reading: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Right by the seed (the refusal's code is left open): the number read as 127.0.0.1 ("address"), or kept as a
    # name the test network resolves there as getaddrinfo would ("name"), and blocked as loopback (WEB_BLOCKED_URL),
    # even by a pipeline that counts only blocked addresses as refusals.
    _numbers_read_as(reading, monkeypatch)
    monkeypatch.setattr(evidence_search, "_REFUSED", BLOCKED_ONLY)
    _numeric_only(monkeypatch)
    assert failing_rows(evidence_html, "NUMERIC_REFUSED", HTML_PAGE, monkeypatch) == set()


def test_a_fetcher_that_dials_the_number_unchecked_reaches_the_trap(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the number taken for a name whose answer is never judged, so the redirect is followed to 127.0.0.1:
    # the test network dials it to the check's trap (never to a real address), and the row says so first.
    _numbers_read_as("name", monkeypatch)
    monkeypatch.setattr(resolve, "_check", lambda *args, **kwargs: None)
    _numeric_only(monkeypatch)
    (result,) = run(reference_target(), only=[HTML_PAGE]).results
    assert result.outcome.value == "failed", result.reason
    assert result.reason.startswith(f"{NUMERIC}: the pipeline's page fetch of "), result.reason
    assert "reached 127.0.0.1" in result.reason, result.reason
    assert result.details.get("catches") == evidence_html.NUMERIC_REFUSED[0].catches, result.details  # review F9
    # Every spelling, dialled as the name it is, reaches the trap too: the test network maps each one there.
    for case in evidence_html.NUMERIC_REFUSED[1:]:
        monkeypatch.setattr(evidence_html, "NUMERIC_REFUSED", (case,))
        (result,) = run(reference_target(), only=[HTML_PAGE]).results
        assert result.outcome.value == "failed", (case.name, result.reason)
        assert result.reason.startswith(f"{case.name}: the pipeline's page fetch of "), result.reason
        assert "reached 127.0.0.1" in result.reason, result.reason
