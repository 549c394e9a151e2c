"""Issue 24 item 5: a row found from the survivors of the mutation run over the DeepSeek providers' shared
helpers (dsweb_ref/providers/_deepseek_http.py). scrub_prefix cut a provider text to a window, collapsed its
whitespace and scrubbed it: a key the cut split, after a long run of spaces, showed 16 of its characters in
the reference itself. The wrong reading is made in the reference and must fail exactly the row that names it."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import outcomes
from dsweb_ref.providers import _deepseek_http

from ._readings import failing_rows, patch_reading

CHECK = "errors.secret_echo"
ROW = "the key after 4,580 spaces"


def test_the_reference_passes_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ROW not in failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch)


def test_a_window_that_keeps_a_split_key_fails_exactly_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the cut window shown whole once scrubbed (the reference before this row)
    patch_reading(_deepseek_http, "scrub_prefix", "window[: max(0,", "window[: max(len(window),", monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch) == {ROW}
