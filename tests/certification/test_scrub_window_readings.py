"""Issue 24 item 5: a row found from the survivors of the mutation run over the DeepSeek providers' shared
helpers (dsweb_ref/providers/_deepseek_http.py). scrub_prefix cut a provider text to a window, collapsed its
whitespace and scrubbed it: a key the cut split, after a long run of spaces, showed 16 of its characters in
the reference itself. The wrong reading is made in the reference and must fail exactly the row that names it.

Since then the scrubber also finds any 10-character piece of the key (test_key_part_readings.py), which
hides a split key on its own; the window's trim stays as a second guard (it also hides shorter pieces). So
the row names the reading of a scrubber that finds whole keys only: with that, keeping the cut window whole
adds exactly this row to the rows that fail, besides the row of a split key in a form whose pieces no scrubber
reading looks for (reversed, then hex), which catches the window kept whole on its own."""

from __future__ import annotations

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks import outcomes
from dsweb_ref.providers import _deepseek_http

from ._readings import failing_rows, patch_reading

CHECK = "errors.secret_echo"
ROW = "the key after 4,580 spaces"
CUT_HEX = "the key reversed and in hex after 4,576 spaces"
C_ARRAY = "a C byte array of the key after 4,537 spaces"  # the seed-7 draw's row (test_mutation_seed7_b_readings)


def _whole_keys_only(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(_secrets, "redact_pieces", "for secret in sorted(", "for secret in set() and sorted(", monkeypatch)


def test_the_reference_passes_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ROW not in failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch)


def test_the_row_passes_a_scrubber_of_whole_keys_that_trims_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    _whole_keys_only(monkeypatch)
    assert ROW not in failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch)


def test_a_window_that_keeps_a_split_key_adds_exactly_the_split_key_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the cut window shown whole once scrubbed of whole keys (the reference before this row)
    _whole_keys_only(monkeypatch)
    before = failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch)
    patch_reading(_deepseek_http, "scrub_prefix", "window[: max(0,", "window[: max(len(window),", monkeypatch)
    # the reversed hex row catches it with the pieces scrubbed too (test_secret_echo_encodings.py), and so does the
    # row of a C byte array split between two bytes, whose parts no layer reads
    assert failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch) - before == {ROW, CUT_HEX, C_ARRAY}
