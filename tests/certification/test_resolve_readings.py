"""The standalone.resolve.table rows added from the mutation survivors of standalone_accounts.py (issue 24
item 5): each wrong reading of seed 003's account and model selection, the reference's ``resolve`` with one
change, fails exactly the rows that name it; the reference passes every row."""

from __future__ import annotations

import pytest

from dsweb_ref import standalone_accounts
from dsweb_ref.certification.checks import standalone

from ._readings import failing_rows, patch_reading

CHECK = "standalone.resolve.table"
_ASSIGNED_ACCESS = 'return Resolution("invalid", reason=why, reference=reference, skipped=((name, why),))'

# reading -> (function of standalone_accounts, its text, the wrong text, the rows that catch it)
READINGS: dict[str, tuple[str, str, str, set[str]]] = {
    "third-party-messages-not-capable": (
        "_capable", 'account.protocol in ("messages", "responses")', 'account.protocol == "responses"',
        {"explicit-off-on-third-party-messages-current-blocks-fallback"}),
    "third-party-responses-not-capable": (
        "_capable", 'account.protocol in ("messages", "responses")', 'account.protocol == "messages"',
        {"explicit-off-on-third-party-responses-current-blocks-fallback"}),
    "port-ignored": (
        "_normal", "port = parts.port", "port = None", {"official-host-on-another-port-is-not-official"}),
    "user-without-password-ignored": (
        "_normal", "parts.username is not None or parts.password", "parts.password",
        {"official-host-with-userinfo-is-not-official"}),
    "path-trimmed-beyond-the-slash": (
        "_normal", "parts.path.rstrip('/')", "parts.path.rstrip('/X')",
        {"official-path-with-a-suffix-is-not-official"}),
    "hostless-url-read-as-a-url": (
        "_normal", ' or "#" in url or not parts.hostname:', ' or "#" in url:',
        {"host-without-a-scheme-is-not-official"}),
    "route-appended-after-the-trailing-slash": (
        "_route", 'account.base_url.rstrip("/") + _SUFFIX', "account.base_url + _SUFFIX",
        {"third-party-base-with-a-trailing-slash"}),
    "route-appended-after-a-base-trimmed-too-far": (
        "_route", 'account.base_url.rstrip("/") + _SUFFIX', 'account.base_url.rstrip("/X") + _SUFFIX',
        {"third-party-base-with-a-trailing-slash"}),
    "agent-table-must-name-the-model": (
        "search_model_of", '_text(agent, "web_search_model", "agent", required=False)',
        '_text(agent, "web_search_model", "agent")', {"agent-table-without-the-field-is-automatic"}),
    "empty-model-part-used": (
        "_assigned", "if not slash or not name or not model:", "if not slash or not name:",
        {"reference-without-a-model-is-not-used"}),
    "malformed-reference-read-as-automatic": (
        "_assigned", 'Resolution("invalid", reason="bad_ref"', 'Resolution("none", reason="bad_ref"',
        {"reference-without-a-model-is-not-used", "bare-model-without-a-connection-is-not-used"}),
    "removed-connection-reference-dropped": (
        "_assigned", 'reason="not_found", reference=reference)', 'reason="not_found")',
        {"assigned-connection-gone-does-not-fall-back"}),
    "disabled-connection-reason-dropped": (
        "_assigned", 'Resolution("invalid", reason="disabled", reference=reference)',
        'Resolution("invalid", reference=reference)', {"assigned-connection-disabled"}),
    "search-off-reason-dropped": (
        "_assigned", 'reason="search_off", reference=reference)', 'reason=None, reference=reference)',
        {"assigned-connection-search-off", "assigned-third-party-needs-its-own-opt-in"}),
    "no-credentials-reference-dropped": (
        "_assigned", 'reason="no_credentials", reference=reference)', 'reason="no_credentials", reference=None)',
        {"assigned-without-credentials"}),
    "excluded-connection-reference-dropped": (
        "_assigned", _ASSIGNED_ACCESS, 'return Resolution("invalid", reason=why, skipped=((name, why),))',
        {"assigned-broker-model-is-unusable", "access-list-excludes-the-assigned-connection"}),
}


def _failing_rows(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    return failing_rows(standalone, "RESOLUTION_CASES", CHECK, monkeypatch)


@pytest.mark.parametrize("reading", sorted(READINGS))
def test_each_row_catches_the_reading_it_names(reading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    function, right, wrong, rows = READINGS[reading]
    patch_reading(standalone_accounts, function, right, wrong, monkeypatch)
    assert _failing_rows(monkeypatch) == rows


def test_the_reference_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _failing_rows(monkeypatch) == set()


def test_a_refused_malformed_reference_passes_the_row_that_allows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A target that refuses ``main/`` as a malformed configuration (WEB_CONFIG_INVALID) passes."""
    right = 'return Resolution("invalid", reason="bad_ref", reference=reference)'
    wrong = 'raise _bad("web_search_model", "needs CONNECTION/MODEL")'
    patch_reading(standalone_accounts, "_assigned", right, wrong, monkeypatch)
    assert _failing_rows(monkeypatch) == set()


def test_a_refused_unusable_assignment_fails_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refusing a well-formed but unusable assignment the same way is no kept reference: its row fails."""
    right = 'return Resolution("invalid", reason="disabled", reference=reference)'
    patch_reading(standalone_accounts, "_assigned", right, 'raise _bad("accounts", "disabled")', monkeypatch)
    assert _failing_rows(monkeypatch) == {"assigned-connection-disabled"}
