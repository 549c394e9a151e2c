"""The suite fails if any cassette or snapshot holds a credential-like value (issue 3, C)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsweb_ref.certification.cassettes import scan_cassette_data, scan_text, scan_tree
from dsweb_ref.certification.emulator import DEFAULT_ACCOUNT_TOKEN, DEFAULT_API_KEY

from .conftest import CASSETTES

TESTS = Path(__file__).resolve().parents[1]
# Test credentials are public, but they must still never be written down in recorded material.
KNOWN_TEST_CREDENTIALS = (DEFAULT_API_KEY, DEFAULT_ACCOUNT_TOKEN)


def _snapshot_dirs() -> list[Path]:
    return sorted(p for p in TESTS.rglob("__snapshots__") if p.is_dir())


def test_no_credential_in_cassettes() -> None:
    findings = scan_tree([CASSETTES], literals=KNOWN_TEST_CREDENTIALS)
    assert not findings, "\n".join(map(str, findings))


def test_no_credential_in_snapshots() -> None:
    dirs = _snapshot_dirs()
    assert dirs
    findings = scan_tree(dirs, literals=KNOWN_TEST_CREDENTIALS)
    assert not findings, "\n".join(map(str, findings))


# Built at run time so no credential-shaped literal sits in this file.
FAKE_SK = "sk-" + "a1B2c3D4" * 4
FAKE_TOKEN = "tok" + "9" * 10 + "abcdef"


@pytest.mark.parametrize(
    "text",
    [
        f"key {FAKE_SK} leaked",
        f"Authorization: Bearer {FAKE_TOKEN}",
        f'{{"api_key": "{FAKE_TOKEN}"}}',
        f"x-api-key: {FAKE_TOKEN}",
    ],
)
def test_scanner_flags_credential_like_values(text: str) -> None:
    assert scan_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer <DEEPSEEK_API_KEY>",
        "The guide specifies API-key Bearer authentication",
        "Authentication Fails, Your api key: ****0001 is invalid",
        "x-api-key: <REDACTED>",
    ],
)
def test_scanner_ignores_placeholders_and_prose(text: str) -> None:
    assert not scan_text(text)


def test_scanner_flags_literal_and_credential_headers() -> None:
    assert scan_text("echo dsweb-something-long", literals=["dsweb-something-long"])
    data = {"interactions": [{"request": {"headers": {"Cookie": ["session=abc"]}}, "response": {"headers": {}}}]}
    assert [f.kind for f in scan_cassette_data(data)] == ["credential header"]


def test_scanner_reports_locations_not_values(tmp_path: Path) -> None:
    leak = tmp_path / "leak.yaml"
    leak.write_text(f"interactions: []\nnote: {FAKE_SK}\n", "utf-8")
    findings = scan_tree([tmp_path])
    assert findings and all(FAKE_SK not in str(f) for f in findings)
