"""Credentials a certify or record run is handed, rather than finds in its environment, never reach the
terminal or a report: an adapter's credential-named ``--adapter-env NAME=VALUE`` and credential-named
options in its command, a key shorter than the scanner's minimum, and a base URL that carries a password
or a query (refused before anything prints it). Found by an outside hunt, each leaked before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsweb_ref.certification.checks._fakes import HEX_SHAPED_KEY, WRONG_KEY
from dsweb_ref.certification.report import given_credentials, run_secrets, scrub_text
from dsweb_ref.cli.record import main as record_main

from .conftest import dsweb_certify, script_command

SECRET = "Zq8vW2pL7mN4xR6tHy3K"  # not key-shaped: only knowing it was handed over redacts it

# An adapter that shows every argument and its environment's UPSTREAM_API_KEY in its hello and on stderr.
ECHO = (
    "import json, os, sys\n"
    "shown = ' '.join([*sys.argv[1:], os.environ.get('UPSTREAM_API_KEY', '')])\n"
    "m = json.loads(sys.stdin.readline())\n"
    "hello = {'name': 'echo ' + shown, 'version': '1', 'capabilities': ['web_search']}\n"
    "print(json.dumps({'id': m['id'], 'result': hello}), flush=True)\n"
    "sys.stdin.readline()\n"
    "print('leaking', shown, file=sys.stderr, flush=True)\n"
    "sys.exit(3)\n"
)


def _outputs(capsys: pytest.CaptureFixture[str], reports: Path) -> list[str]:
    captured = capsys.readouterr()
    return [captured.out, captured.err, *(p.read_text() for p in reports.iterdir())]


@pytest.mark.parametrize(
    ("extra", "args"),
    [
        # catches: only values already in this environment counted as secrets
        (["--adapter-env", f"UPSTREAM_API_KEY={SECRET}"], []),
        # catches: an adapter's own credential option shown in the target line and every report
        ([], ["--upstream-key", SECRET]),
        # catches: the NAME=VALUE spelling of such an option
        ([], [f"--upstream-credential={SECRET}"]),
    ],
    ids=["adapter-env-value", "option-then-value", "option-equals-value"],
)
def test_a_credential_handed_to_the_adapter_reaches_no_output(
    extra: list[str], args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = dsweb_certify("--adapter", script_command(ECHO, *args), *extra, "--only", "search.single",
                         "--report-dir", str(tmp_path))
    assert code == 1
    texts = _outputs(capsys, tmp_path)
    assert all(SECRET not in text for text in texts)
    assert "[REDACTED]" in texts[0] and "[REDACTED]" in (tmp_path / "report.json").read_text()


def test_an_adapter_that_shows_its_credential_and_fails_to_start_is_refused_without_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    body = "import os, sys\nprint('starting with', os.environ['UPSTREAM_API_KEY'], file=sys.stderr)\nsys.exit(1)\n"
    code = dsweb_certify("--adapter", script_command(body), "--adapter-env", f"UPSTREAM_API_KEY={SECRET}")
    assert code == 2
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err and "[REDACTED]" in captured.err


def test_an_adapter_env_with_no_name_is_refused_without_repeating_its_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert dsweb_certify("--adapter", script_command(ECHO), "--adapter-env", f"={SECRET}") == 2
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err and "NAME=VALUE" in captured.err


@pytest.mark.parametrize(
    ("env", "argv", "want"),
    [
        ({"UPSTREAM_API_KEY": "v1", "MODE": "fast"}, [], ["v1"]),  # catches: every variable taken, or none
        ({}, ["--key", "v2", "--mode", "fast"], ["v2"]),  # catches: the option's name kept, not its value
        ({}, ["--auth-token=v3", "--verbose"], ["v3"]),  # catches: the =VALUE spelling missed
        ({}, ["--secret"], []),  # a credential option with no value after it: nothing to take
    ],
)
def test_given_credentials_takes_credential_named_values_only(
    env: dict[str, str], argv: list[str], want: list[str]
) -> None:
    assert given_credentials(env, argv) == want


def test_the_keys_checks_configure_are_redacted_from_a_reason_even_in_part() -> None:
    # search.messages.tool_error configures a key of the sk- shape and makes the upstream echo its body; a
    # target may quote that in a reason ("error code '…' is not a WEB_* code"); errors.codes configures a
    # rejected key the same way
    secrets = run_secrets()
    body = HEX_SHAPED_KEY.removeprefix("sk-")
    for text in (f"error code {body!r} is not a WEB_* code", f"401 for {WRONG_KEY} here"):
        shown = scrub_text(text, secrets)
        assert body[:10] not in shown and WRONG_KEY[:10] not in shown and "[REDACTED]" in shown, shown


def test_a_short_given_key_is_redacted_and_leaves_other_text_whole() -> None:
    secrets = run_secrets(given=["Zq9x5"])
    # catches: keys under the scanner's 6 characters dropped; an empty encoded core matching everywhere
    assert scrub_text("HTTP 404 (gateway saw key Zq9x5); verdict: NOT OK", secrets) == (
        "HTTP 404 (gateway saw key [REDACTED]); verdict: NOT OK"
    )


def test_an_endpoint_key_shorter_than_four_characters_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GW_CRED", "Zq9")
    code = dsweb_certify("--messages-base", "http://127.0.0.1:9/anthropic/v1", "--tools-base",
                         "http://127.0.0.1:9/v1/tools", "--api-key-env", "GW_CRED")
    assert code == 2
    err = capsys.readouterr().err
    assert "shorter than 4 characters" in err and "Zq9" not in err.replace("GW_CRED", "")


PASSWORD = "Gw7pass9Xy2Qz"


@pytest.mark.parametrize(
    ("base", "hidden"),
    [
        (f"http://gwuser:{PASSWORD}@127.0.0.1:9/v1/tools", PASSWORD),  # catches: userinfo printed, then refused
        (f"http://{PASSWORD}@127.0.0.1:9/v1/tools", PASSWORD),  # catches: a token as the user name
        (f"http://127.0.0.1:9/v1/tools?key={PASSWORD}", PASSWORD),  # catches: a key in the query
        (f"http://gwuser:{PASSWORD}@[::1/v1/tools", PASSWORD),  # catches: the unparsable URL quoted whole
    ],
    ids=["user-password", "user-only", "query", "unparsable"],
)
def test_a_base_carrying_a_credential_is_refused_before_anything_prints_it(
    base: str, hidden: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-" + "a1B2c3D4" * 4)
    code = dsweb_certify("--messages-base", "http://127.0.0.1:9/anthropic/v1", "--tools-base", base,
                         "--report-dir", str(tmp_path / "reports"))
    assert code == 2 and not list((tmp_path / "reports").glob("*"))  # no report: the run never started
    captured = capsys.readouterr()
    assert hidden not in captured.out + captured.err and "--tools-base" in captured.err
    assert record_main(["--tools-base", base, "--out", str(tmp_path / "cassettes")]) == 2
    captured = capsys.readouterr()
    assert hidden not in captured.out + captured.err and "--tools-base" in captured.err
    assert not list((tmp_path / "cassettes").glob("**/*.yaml"))


def test_every_key_a_check_hands_a_target_is_redacted_from_a_reason() -> None:
    # catches: a key constant added to a check without telling the report scrubber (a review found the saved key
    # of settings.snapshot.per_operation and the pacing row's own account key shown, 19 of 29 characters)
    import importlib
    import pkgutil

    from dsweb_ref.certification import checks
    from dsweb_ref.certification.checks._leaks import leak

    found = {}
    for info in pkgutil.iter_modules(checks.__path__):
        module = importlib.import_module(f"{checks.__name__}.{info.name}")
        found.update({v: f"{info.name}.{k}" for k, v in vars(module).items()
                      if k.endswith(("_KEY", "_TOKEN")) and isinstance(v, str) and v})
    assert len(found) >= 8
    secrets = run_secrets()
    for key, where in found.items():
        shown = scrub_text(f"upstream said: key {key} rejected; retried with {key[2:]}", secrets)
        # no piece the leak judge counts as showing it (ten characters; a six-character key's own forms)
        assert leak(shown, key) is None and key not in shown and "[REDACTED]" in shown, (where, shown)
