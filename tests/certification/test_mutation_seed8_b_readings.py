"""Survivors of the seed-8 mutation draw (``scripts/mutation_score.py --sample 400 --seed 8``), list B, that a row now
rejects: the JSON reader's mender of lone surrogates raising on a body that is one bare string (valid JSON whose
escaped lone surrogate is no Unicode), here the body of a failed search request, read for the upstream's message.
The other tools' service guard turns that crash into WEB_PROVIDER_ERROR; the standalone search has no such guard and
let it out. The mutant's change is made in the reference and must fail exactly the row that names it; the reference
passes the row, and a right reading beside it passes too."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import standalone
from dsweb_ref.providers import _deepseek_http

from ._readings import failing_rows, fails_exactly_shown, patch_reading
from ._readings import keep_rows as _keep

PROSE = "standalone.prose.error"
LONE_SURROGATE_STRING = "http-500-body-a-string-with-a-lone-surrogate"






def test_the_reference_passes_the_lone_surrogate_string_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(standalone, "PROSE_CASES", (LONE_SURROGATE_STRING,), monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()


def test_a_mender_raising_on_a_bare_string_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant's _SURROGATE.sub(value) in _replace_surrogates: an error body that is one JSON string
    # holding an escaped lone surrogate raises TypeError (sub() missing its string) while error_detail looks for the
    # upstream's message, where the original mends it and finds none; seed 003: failures are returned as ordinary
    # tool errors, a crash is none
    right = r'return _SURROGATE.sub("\ufffd", value)'
    patch_reading(_deepseek_http, "_replace_surrogates", right, "return _SURROGATE.sub(value)", monkeypatch)
    fails_exactly_shown(standalone, "PROSE_CASES", PROSE, LONE_SURROGATE_STRING, None, monkeypatch)


def test_refusing_a_body_with_a_lone_surrogate_passes_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the seed: a body that is not Unicode taken as unreadable (a ValueError, as for bad UTF-8: no message
    # quoted) instead of mended; the status fails the search either way, as a tool error.
    def refuse(value: object) -> object:
        raise ValueError("a lone surrogate")

    monkeypatch.setattr(_deepseek_http, "_replace_surrogates", refuse)
    _keep(standalone, "PROSE_CASES", (LONE_SURROGATE_STRING,), monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()
