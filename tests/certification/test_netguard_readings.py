"""Issue 24 item 5: rows added for survivors of the mutation run over the address-policy package
(dsweb_ref/netguard/). Each test bends the reference's netguard into the wrong reading a row names and asserts
that exactly that row of its check fails; the reference itself passes every new row."""

from __future__ import annotations

import pytest

from dsweb_ref import netguard
from dsweb_ref._exceptions import WebError
from dsweb_ref.certification.checks import ssrf, ssrf_body, ssrf_limits
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.netguard import body, resolve, transport
from dsweb_ref.providers import http_fetch

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run

DECODED = "ssrf.body.decoded"
CAPS = "ssrf.caps.body"


def _bend(function: str, right: str, wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A function of netguard/body.py bent, wherever the reference's fetcher reaches it."""
    patch_reading(body, function, right, wrong, monkeypatch, netguard, http_fetch)


def test_the_reference_passes_the_new_body_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(ssrf_body, "LABEL_ROWS", DECODED, monkeypatch) == set()
    assert failing_rows(ssrf_body, "PIECE_ROWS", DECODED, monkeypatch) == set()
    assert failing_rows(ssrf_limits, "PIECE_CASES", CAPS, monkeypatch) == set()


def test_the_reference_passes_the_new_answer_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ssrf, "MIXED", tuple(c for c in ssrf.MIXED if c.name == "no-answers"))
    assert failing_rows(ssrf, "MIXED", "ssrf.resolve.mixed_answers", monkeypatch) == set()


# --- ssrf.body.decoded: labels ---------------------------------------------------------------------------

# row -> (function of body.py, its right text, the wrong reading the row names)
LABEL_READINGS = {
    "no-charset": ("pick_charset", 'if not label:\n        return "utf-8"',
                   'if not label:\n        raise WebError("NO_CHARSET", "no charset declared")'),
    # Every label but gb2312 (and the windows-1252 ones) read as GBK: a UTF-8 page's non-ASCII text lost.
    "utf-8-text": ("pick_charset", 'if label == "gb2312":', 'if label != "gb2312":'),
    "charset-no-space": ("pick_charset", '.split(";")[1:]', '.split("; ")[1:]'),
    "unknown-charset": ("pick_charset", 'raise WebError(WebErrorCode.UNSUPPORTED_CONTENT_TYPE, f\'unsupported charset',
                        'raise WebError("UNSUPPORTED_CHARSET", f\'unsupported charset'),
    "unknown-coding": ("_inflater_for", "raise WebError(WebErrorCode.UNSUPPORTED_CONTENT_TYPE,",
                       'raise WebError("UNSUPPORTED_ENCODING",'),
    "image-type": ("classify_content_type", "raise WebError(WebErrorCode.UNSUPPORTED_CONTENT_TYPE,",
                   'raise WebError("UNSUPPORTED_TYPE",'),
    "html-page": ("classify_content_type", 'return "html"', 'return "HTML"'),
    "plain-markup": ("classify_content_type", "if mime in _HTML:", 'if mime in _HTML or mime == "text/plain":'),
}


@pytest.mark.parametrize("row", sorted(LABEL_READINGS))
def test_each_label_row_catches_the_reading_it_names(row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    function, right, wrong = LABEL_READINGS[row]
    _bend(function, right, wrong, monkeypatch)
    if row == "unknown-coding":  # the reference refuses a list of codings (stacked-gzip) where it refuses x-unknown
        assert failing_rows(ssrf_body, "STACKED_ROWS", DECODED, monkeypatch) == {"stacked-gzip"}
        monkeypatch.setattr(ssrf_body, "STACKED_ROWS", ())
    fails_exactly(ssrf_body, "LABEL_ROWS", DECODED, row, monkeypatch)


def test_every_label_row_has_a_reading() -> None:
    assert set(LABEL_READINGS) | {"corrupt-gzip"} == {case.name for case in ssrf_body.LABEL_ROWS}


def test_a_corrupt_body_refused_without_a_web_code_fails_its_two_refusal_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(body._Inflater, "feed", 'WebErrorCode.PROVIDER_ERROR, f"could not decode',
                  '"DECODE_FAILED", f"could not decode', monkeypatch)
    # the deflate stream that breaks later is refused too: there as well a refusal must carry a WEB_* code
    labels, pieces = ssrf_body.LABEL_ROWS, ssrf_body.PIECE_ROWS
    monkeypatch.setattr(ssrf_body, "LABEL_ROWS", tuple(c for c in labels if c.name != "corrupt-gzip"))
    assert failing_rows(ssrf_body, "PIECE_ROWS", DECODED, monkeypatch) == {"deflate-broken-later"}
    monkeypatch.setattr(ssrf_body, "LABEL_ROWS", labels)
    monkeypatch.setattr(ssrf_body, "PIECE_ROWS", tuple(c for c in pieces if c.name != "deflate-broken-later"))
    fails_exactly(ssrf_body, "LABEL_ROWS", DECODED, "corrupt-gzip", monkeypatch)


# --- ssrf.body.decoded: bodies in pieces -----------------------------------------------------------------


def test_the_raw_deflate_fallback_kept_past_the_first_read_fails_the_broken_later_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Raw deflate is a fallback for a body's start only: a decoder that keeps it armed decodes a later read
    afresh when the stream breaks there, and shows words the page stores only as bytes ("smuggled")."""
    patch_reading(body._Inflater, "feed", "    self._started = True\n    if self._inflater.eof",
                  "    self._started = None\n    if self._inflater.eof", monkeypatch)
    fails_exactly(ssrf_body, "PIECE_ROWS", DECODED, "deflate-broken-later", monkeypatch)


def test_a_decoder_that_keeps_the_bytes_before_a_later_break_passes_the_broken_later_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A right reading the row must accept: zlib and Go hand over what a read decoded before the stream broke
    (Python's decompressobj keeps none of it), and the page then ends there. The page's words all come
    before, and the bytes after them are not decoded afresh, so no word is invented."""
    feed = body._Inflater.feed

    def keep_until_broken(self: body._Inflater, data: bytes, limit: int) -> tuple[bytes, bytes]:
        if not self._started or self._encoding != "deflate":
            return feed(self, data, limit)
        kept = b""
        for i in range(len(data)):  # a byte at a time, so a break loses no byte decoded before it
            try:
                out, _ = feed(self, data[i : i + 1], limit - len(kept))
            except WebError:
                self.finished = True
                break
            kept += out
        return kept, b""

    monkeypatch.setattr(body._Inflater, "feed", keep_until_broken)
    rows = ssrf_body.PIECE_ROWS
    monkeypatch.setattr(ssrf_body, "PIECE_ROWS", tuple(c for c in rows if c.name == "deflate-broken-later"))
    (result,) = run(reference_target(), only=[DECODED]).results
    assert result.outcome.value == "passed", result.reason


def test_a_gzip_body_read_only_to_its_first_member_fails_the_members_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every byte after the end of the first gzip stream taken for trailing garbage."""
    right = 'if self._encoding != "gzip" or not rest.startswith(b"\\x1f\\x8b"[: len(rest)]):'
    patch_reading(body._Inflater, "feed", right, "if True:", monkeypatch)
    fails_exactly(ssrf_body, "PIECE_ROWS", DECODED, "gzip-members", monkeypatch)


def test_a_body_decoded_only_as_far_as_its_first_read_fails_the_pieces_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that inflates to nothing taken for the end of the body."""
    _bend("read_capped", "break  # needs more input", "return bytes(body), False", monkeypatch)
    fails_exactly(ssrf_body, "PIECE_ROWS", DECODED, "gzip-in-pieces", monkeypatch)


# --- ssrf.caps.body: pages in pieces ----------------------------------------------------------------------


def test_a_cut_that_keeps_only_the_read_that_crossed_the_cap_fails_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _bend("read_capped", "body += piece[:room]", "body = bytearray(piece[:room])", monkeypatch)
    fails_exactly(ssrf_limits, "PIECE_CASES", CAPS, "over-cap-in-pieces", monkeypatch)


def test_a_cap_reached_taken_for_a_cap_passed_fails_the_gzip_at_cap_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """The body cut as soon as it holds the cap and more bytes arrive, though they inflate to nothing."""
    _bend("read_capped", "room = max_bytes - len(body)\n",
          "room = max_bytes - len(body)\n            if room == 0:\n                return bytes(body), True\n",
          monkeypatch)
    fails_exactly(ssrf_limits, "PIECE_CASES", CAPS, "at-cap-gzip", monkeypatch)


# --- ssrf.resolve.mixed_answers ---------------------------------------------------------------------------


def test_a_lookup_without_answers_refused_without_a_web_code_fails_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    right = "WebErrorCode.PROVIDER_ERROR, f'could not resolve host \"{host}\": no addresses'"
    wrong = "\"RESOLVED_NOTHING\", f'could not resolve host \"{host}\": no addresses'"
    patch_reading(resolve, "vet_host", right, wrong, monkeypatch, netguard, transport)
    fails_exactly(ssrf, "MIXED", "ssrf.resolve.mixed_answers", "no-answers", monkeypatch)
