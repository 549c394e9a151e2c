"""Shared steps of the SSRF and evidence check tests: run `dsweb certify --only PREFIX` through the
example adapter and read the JSON report."""

from __future__ import annotations

from pathlib import Path

from .conftest import adapter_command, dsweb_certify, json_outcomes, json_report


def certify_only(prefix: str, tmp_path: Path, *adapter_args: str) -> tuple[int, dict[str, object], dict[str, str]]:
    path = tmp_path / "report.json"
    # One lane: these families have no long real waits, so a second lane would only start a second
    # adapter (and its evidence warm-up) while the other xdist worker already keeps the cores busy.
    # The verdicts do not depend on lanes (test_check_worker, test_suite_concurrency).
    code = dsweb_certify(
        "--adapter", adapter_command(*adapter_args), "--only", prefix, "--jobs", "1", "--json", str(path)
    )
    data = json_report(path)
    return code, data, json_outcomes(data)


def assert_break_fails_exactly(
    prefix: str, mode: str, expected: str, fragment: str, tmp_path: Path, also: set[str] | None = None
) -> None:
    """``--break mode`` fails exactly ``expected`` (and ``also``) among the ``prefix`` checks, with ``fragment``
    in the reason of ``expected``."""
    code, data, outcomes = certify_only(prefix, tmp_path, "--break", mode)
    assert code == 1
    failing = {expected, *(also or ())}
    assert {i for i, o in outcomes.items() if o != "passed"} == failing, outcomes
    assert all(outcomes[i] == "failed" for i in failing)
    checks = data["checks"]
    assert isinstance(checks, list)
    assert fragment in next(c["reason"] for c in checks if c["id"] == expected)
