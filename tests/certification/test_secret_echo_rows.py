"""errors.secret_echo's rows of credential-shaped upstream text (a bearer token, Basic credentials, key
fields, sk-/JWT/GitHub/AWS shapes) ahead of the key: whether a target redacts such text is its own caution,
but finding it must not end the scrubbing. Each row alone catches the scrubber that, once it finds its
shape, redacts credential shapes only and leaves the key; the reference passes them all."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks._fakes import FOREIGN_CREDENTIALS
from dsweb_ref.certification.checks.outcomes import KEY, SECRET_ECHOES
from dsweb_ref.certification.model import Outcome
from dsweb_ref.providers import _deepseek_http

from .test_provider_rule_checks import _target, run

# the foreign credential-shaped text of each row (fakes built in _fakes, so none stands in this file)
FOREIGN = {f"an upstream message quoting {shown} ahead of the key": text for shown, text in FOREIGN_CREDENTIALS}


def _stops_at(foreign: str) -> Any:
    """The reference's scrubber, except that a text holding ``foreign`` gets the credential-shape rules
    only (wrong: the key beside it is left as sent)."""

    def scrub(text: str, secrets: Any, placeholder: str) -> str:
        if foreign in text:
            return _secrets.redact_patterns(text, placeholder)
        return _secrets.scrub_text(text, secrets, placeholder)

    return scrub


def test_the_rows_exist_carry_the_key_and_the_reference_passes_them() -> None:
    rows = {case.name: case for case in SECRET_ECHOES}
    for name, foreign in FOREIGN.items():
        message = rows[name]["body"]["error"]["message"]
        assert foreign in message and message.index(foreign) < message.index(KEY)
    (result,) = run(_target(), ["errors.secret_echo"]).results
    assert result.outcome is Outcome.PASSED, result.reason


@pytest.mark.parametrize("row", sorted(FOREIGN))
def test_each_row_catches_a_scrubber_that_stops_at_its_shape(row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_deepseek_http, "scrub_text", _stops_at(FOREIGN[row]))
    (result,) = run(_target(), ["errors.secret_echo"]).results
    assert result.outcome is Outcome.FAILED, result.reason
    # the first row to fail, on each protocol that fails (the Search API provider scrubs its whole message
    # again, after the bearer text in it is already redacted, so there this wrong scrubber may go unseen)
    assert set(re.findall(r"\[(?:Search API|Messages)\] (.*?): the failure shows", result.reason)) == {row}
