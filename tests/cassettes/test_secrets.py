"""The suite fails if any cassette or snapshot holds a credential-like value (issue 3, C)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from dsweb_ref.emulator import DEFAULT_ACCOUNT_TOKEN, DEFAULT_API_KEY
from dsweb_ref.replay.cassettes import scan_cassette_data, scan_text, scan_tree

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
FAKE_JWT = ".".join(
    base64.urlsafe_b64encode(part.encode()).decode().rstrip("=")
    for part in ('{"alg":"HS256","typ":"JWT"}', '{"sub":"1234567890","name":"dsweb"}', "signature-bytes")
)
FAKE_BASIC = base64.b64encode(b"dsweb-user:" + b"hunter2-" * 2).decode()
FAKE_LONG = "Qx" + "vT7m" * 5  # 22 characters, mixed case and digits
FAKE_PASSWORD = "CorrectHorse" + "BatteryStaple"  # long, no digit
FAKE_GITHUB = {prefix: prefix + "_" + "A1b2C3d4E5" * 3 + "F6g7H8" for prefix in ("ghp", "gho", "ghs")}
FAKE_AWS = "AKIA" + "Z7QX" * 4


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"key {FAKE_SK} leaked", "sk-key"),
        (f"Authorization: Bearer {FAKE_TOKEN}", "bearer-token"),
        (f'{{"api_key": "{FAKE_TOKEN}"}}', "key-field"),
        (f"x-api-key: {FAKE_TOKEN}", "key-field"),
        (f"session {FAKE_JWT} issued", "jwt"),
        (f"Authorization: Basic {FAKE_BASIC}", "basic-auth"),
        (f'{{"headers": {{"authorization": "basic {FAKE_BASIC}"}}}}', "basic-auth"),
        (f'{{"token": "{FAKE_LONG}"}}', "secret-field"),
        (f'{{"secret":"{FAKE_LONG}"}}', "secret-field"),
        (f'{{"password": "{FAKE_PASSWORD}"}}', "secret-field"),
        (f"X-Auth-Token: {FAKE_LONG}", "secret-field"),
        (f"x-auth-token: ['{FAKE_LONG}']", "secret-field"),
        (f"id_token={FAKE_LONG}", "secret-field"),
        (f"cloned with {FAKE_GITHUB['ghp']}", "github-token"),
        (f"oauth {FAKE_GITHUB['gho']}", "github-token"),
        (f'"{FAKE_GITHUB["ghs"]}"', "github-token"),
        (f"aws_access_key_id = {FAKE_AWS}", "aws-access-key-id"),
        (f"key {FAKE_AWS} in prose", "aws-access-key-id"),
    ],
)
def test_scanner_flags_credential_like_values(text: str, kind: str) -> None:
    assert kind in {f.kind for f in scan_text(text)}


def test_scanner_flags_credential_headers_structurally() -> None:
    headers = {"X-Auth-Token": ["short"], "authorization": [f"Basic {FAKE_BASIC}"]}
    data = {"interactions": [{"request": {"headers": headers}, "response": {"headers": {}}}]}
    findings = scan_cassette_data(data)
    where = {f.where for f in findings if f.kind == "credential header"}
    assert where == {
        "cassette.interactions[0].request.headers.X-Auth-Token",
        "cassette.interactions[0].request.headers.authorization",
    }
    assert "basic-auth" in {f.kind for f in findings}


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer <DEEPSEEK_API_KEY>",
        "The guide specifies API-key Bearer authentication",
        "Authentication Fails, Your api key: ****0001 is invalid",
        "x-api-key: <REDACTED>",
        # the new patterns stay quiet on prose, placeholders, counters and look-alikes
        "Basic authentication is not supported; use Bearer tokens",
        "Authorization: Basic <REDACTED>",
        'WWW-Authenticate: Basic realm="dsweb"',
        '{"max_tokens": 1024, "input_tokens": 12345678901234567, "output_tokens": 9}',
        '{"token": "<DEEPSEEK_API_KEY>", "secret": "<REDACTED>"}',
        '{"password": "must be at least 12 characters"}',
        "token: authentication_required_error",
        "secret: 12345678901234567890",
        "eyJhbGciOiJIUzI1NiJ9 is only a JWT header",
        "ghp_short and AKIA1234 are too short",
        "Search API token usage: 5 QPS per account",
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


# -- one rule set for every user (providers, reports, the cassette scanner, probes, the emulator) --

# Concatenated so this file holds no key-shaped string.
DASHED_KEY = "sk-" "proj-" "AbCdEfGhIjKlMnOpQrStUv12"


def test_every_user_of_the_shared_rules_catches_a_dashed_project_key() -> None:
    """Regression: the providers' rule (sk-[A-Za-z0-9]{16,}) let sk-proj-... keys through, so a
    provider error message could carry one; the report and the scanner used other rules again."""
    from dsweb_ref.certification.report import REDACTED, scrub_text
    from dsweb_ref.providers._deepseek_http import CREDENTIAL_PLACEHOLDER, scrub_secrets

    text = f"Incorrect API key provided: {DASHED_KEY}. Check it."
    assert scrub_secrets(text) == f"Incorrect API key provided: {CREDENTIAL_PLACEHOLDER}. Check it."
    assert scrub_text(text) == f"Incorrect API key provided: {REDACTED}. Check it."
    assert "sk-key" in {f.kind for f in scan_text(text)}


def test_literal_replacement_is_shared_and_longest_first() -> None:
    import httpx

    from dsweb_ref._secrets import replace_literals, replace_literals_deep
    from dsweb_ref.emulator.auth import Scrubber, mask
    from dsweb_ref.replay.cassettes import replace_everywhere
    from dsweb_ref.replay.probes import credential_headers

    short, long = "dsweb-secret-0001", "dsweb-secret-0001-extended"
    pairs = [(short, "<SHORT>"), (long, "<LONG>")]
    assert replace_literals(f"{long} {short}", pairs) == "<LONG> <SHORT>"
    assert replace_literals(f"{long} {short}".encode(), pairs) == b"<LONG> <SHORT>"
    nested = {long: [short, f"x{long}".encode(), 3]}
    expected = {"<LONG>": ["<SHORT>", b"x<LONG>", 3]}
    assert replace_literals_deep(nested, pairs) == replace_everywhere(nested, pairs) == expected
    scrubber = Scrubber([short, long])
    assert scrubber.text(f"{long}|{short}") == f"{mask(long)}|{mask(short)}"
    assert scrubber.bytes(long.encode()) == mask(long).encode()
    headers = httpx.Headers({"authorization": f"Bearer {long}", "x-api-key": DASHED_KEY})
    assert credential_headers(headers, dict(pairs)) == (("authorization", "Bearer <LONG>"), ("x-api-key", "<REDACTED>"))
