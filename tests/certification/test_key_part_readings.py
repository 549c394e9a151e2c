"""Issue 24 items 2 and 6: an upstream that echoes only a part of the key. The judge of errors.secret_echo
counts any 10-character piece of the key as showing it, but the rows echoed the key whole, so a scrubber
that finds whole keys only passed, and so did the reference: a Retry-After of the key's first 14 characters
showed them. Each wrong reading is made in the reference and must fail exactly the rows that name it."""

from __future__ import annotations

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks import outcomes
from dsweb_ref.providers import _deepseek_http

from ._readings import failing_rows, patch_reading

CHECK = "errors.secret_echo"
FIRST = "401 quoting the key's first 12 characters"
LAST = "a message quoting the key's last 12 characters"
MIDDLE = "a URL quoting 12 characters from the middle of the key, percent-encoded"
MIDDLE_B64 = "a base64 dump quoting 12 characters from the middle of the key"
RETRY_PART = "429 whose Retry-After header is the key's first 14 characters"
RETRY_WHOLE = "429 whose Retry-After header is the key"
# The seed-5 draw's rows: a middle part with a mark on each character (test_mutation_seed5_readings.py). A part
# is what they quote, so a scrubber of whole keys, or of prefixes only, fails them too.
MARKED = {c.name for c in outcomes.SECRET_ECHOES if c.name.startswith("12 characters from the middle of the key with")}
SPELLED_PART = "12 characters from the middle of the key spelled out with spaces between its characters"
# The seed-7 draw's rows: a middle part written a byte or an escape at a time, apart (test_mutation_seed7_b_readings).
DUMP_PARTS = {"12 characters from the middle of the key in a hex dump (a space between bytes)",
              "12 characters from the middle of the key percent-encoded, a space between characters",
              "12 characters from the middle of the key as a C byte array (0x before each byte)"}
# The seed-8 draw's row: a middle part as UTF-16 read as bytes (test_mutation_seed8_a_readings.py).
UTF16_PART = "12 characters from the middle of the key as UTF-16 text read as bytes (a NUL after each character)"


def test_the_reference_passes_every_part_row(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = {FIRST, LAST, MIDDLE, MIDDLE_B64, RETRY_PART}
    assert not rows & failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch)


def test_a_scrubber_of_whole_keys_only_fails_exactly_the_part_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: only the whole key scrubbed (the reference before these rows)
    patch_reading(_secrets, "redact_pieces", "for secret in sorted(", "for secret in set() and sorted(", monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch) == {
        FIRST, LAST, MIDDLE, MIDDLE_B64, RETRY_PART, *MARKED, SPELLED_PART, *DUMP_PARTS, UTF16_PART
    }


def test_a_prefix_mask_fails_exactly_the_rows_past_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: parts looked for only where the key starts
    patch_reading(_secrets, "_piece_forms", "starts = range(len(secret) - PIECE + 1)", "starts = range(1)",
                  monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch) == {
        LAST, MIDDLE, MIDDLE_B64, *MARKED, UTF16_PART
    }


def test_parts_looked_for_as_written_only_fail_exactly_the_encoded_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a part found raw (any case) but not percent-encoded
    patch_reading(_secrets, "_piece_forms", '"".join(map(_char_forms, run))', "re.escape(run)", monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch) == {MIDDLE}


def test_a_retry_after_hint_quoted_unscrubbed_fails_exactly_the_retry_after_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the error body scrubbed (of the key and its parts) but not the hint added after it
    patch_reading(_deepseek_http, "api_status_error", "scrub_secrets(text, hidden))", "text)", monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", CHECK, monkeypatch) == {RETRY_WHOLE, RETRY_PART}
