"""Shared steps of the SSRF and evidence check tests: run `dsweb certify --only PREFIX` through the
example adapter and read the JSON report."""

from __future__ import annotations

from pathlib import Path

from .conftest import adapter_command, dsweb_certify, json_outcomes, json_report


def certify_only(prefix: str, tmp_path: Path, *adapter_args: str) -> tuple[int, dict[str, object], dict[str, str]]:
    path = tmp_path / "report.json"
    code = dsweb_certify("--adapter", adapter_command(*adapter_args), "--only", prefix, "--json", str(path))
    data = json_report(path)
    return code, data, json_outcomes(data)


def assert_break_fails_exactly(prefix: str, mode: str, expected: str, fragment: str, tmp_path: Path) -> None:
    """``--break mode`` fails exactly ``expected`` among the ``prefix`` checks, with ``fragment`` in its reason."""
    code, data, outcomes = certify_only(prefix, tmp_path, "--break", mode)
    assert code == 1
    assert {i for i, o in outcomes.items() if o != "passed"} == {expected} and outcomes[expected] == "failed"
    checks = data["checks"]
    assert isinstance(checks, list)
    assert fragment in next(c["reason"] for c in checks if c["id"] == expected)
