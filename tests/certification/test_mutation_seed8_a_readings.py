"""Survivors of the seed-8 mutation draw (``scripts/mutation_score.py --sample 400 --seed 8``), list A, that a new
row now rejects: two misread escape groups in the scrubber's reading of a dumped part of the key (a crash the other
tools' service guard turns into WEB_PROVIDER_ERROR, but the standalone search lets out), and controls taken for
visible characters, so a part of the key in UTF-16 read as bytes was shown. Each mutant's change is made in the
reference and must fail exactly the row that names it; the reference passes the rows, and a right reading beside
each passes too."""

from __future__ import annotations

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks import evidence_html, outcomes, ssrf_body, standalone
from dsweb_ref.certification.checks._leaks import leak
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.emulator.server import DEFAULT_API_KEY
from dsweb_ref.netguard import body
from dsweb_ref.providers import _deepseek_http, _standalone, http_fetch
from dsweb_ref.tools.evidence_search import EvidenceSearchTool

from ._readings import failing_rows, patch_reading
from ._readings import fails_exactly_shown as _fails_exactly
from ._readings import keep_rows as _keep
from .conftest import run

ECHO, PROSE = "errors.secret_echo", "standalone.prose.error"
DUMPED_PART = "http-401-dumping-part-of-the-key-escape-by-escape"
UTF16_PART = "12 characters from the middle of the key as UTF-16 text read as bytes (a NUL after each character)"
ECHO_ROW = r"\[(?:Search API|Messages)\] (.*?): the failure shows"  # errors.secret_echo names the route first






# -- standalone.prose.error: a part of the key dumped an escape at a time ------------------------------------------


@pytest.mark.usefixtures("fresh_forms")
def test_the_reference_passes_the_dumped_part_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(standalone, "PROSE_CASES", (DUMPED_PART,), monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()


@pytest.mark.usefixtures("fresh_forms")
def test_percent_escapes_read_only_when_both_groups_match_fails_exactly_the_dumped_part_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's form["pc"] and form["pu"] (two alternatives of one escape, never both set): a percent
    # escape then decodes through the decimal-reference group, which is None, and int(None) raises
    right = 'form["byte"] or form["pc"] or form["pu"]'
    patch_reading(_secrets, "_dump_chars", right, 'form["byte"] or (form["pc"] and form["pu"])', monkeypatch)
    _fails_exactly(standalone, "PROSE_CASES", PROSE, DUMPED_PART, None, monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_a_decimal_reference_read_from_a_missing_group_fails_exactly_the_dumped_part_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's form["XXedXX"]: a decimal character reference asks the match for a group it does not
    # have (IndexError)
    patch_reading(_secrets, "_dump_chars", 'int(form["ed"])', 'int(form["XXedXX"])', monkeypatch)
    _fails_exactly(standalone, "PROSE_CASES", PROSE, DUMPED_PART, None, monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_quoting_no_upstream_words_passes_the_dumped_part_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the rule: the tool error quotes nothing the upstream said, so no part of the key.
    monkeypatch.setattr(_standalone, "error_detail", lambda body, secrets=(): None)
    _keep(standalone, "PROSE_CASES", (DUMPED_PART,), monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()


# -- errors.secret_echo: a part of the key in UTF-16 read as bytes --------------------------------------------------


@pytest.mark.usefixtures("fresh_forms")
def test_the_reference_passes_the_utf16_part_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(outcomes, "SECRET_ECHOES", (UTF16_PART,), monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == set()


@pytest.mark.usefixtures("fresh_forms")
def test_whitespace_taken_for_invisible_instead_of_controls_fails_exactly_the_utf16_part_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's category == "Cc" and char.isspace(): a NUL then shows, so the folded view keeps it
    # between the part's characters and no piece of the key is found there
    patch_reading(_secrets, "_invisible", "not char.isspace()", "char.isspace()", monkeypatch)
    _fails_exactly(outcomes, "SECRET_ECHOES", ECHO, UTF16_PART, ECHO_ROW, monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_quoting_no_upstream_words_passes_the_utf16_part_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the rule: a target that never quotes what the upstream said (the Node adapter's way).
    monkeypatch.setattr(_deepseek_http, "error_detail", lambda body, secrets=(): None)
    _keep(outcomes, "SECRET_ECHOES", (UTF16_PART,), monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == set()


# -- evidence.html_page: a result refused at its page fetch, recorded in tried.dropped ------------------------------

HTML = "evidence.html_page"
RECORDED = "private-redirect-recorded"
REFUSED_RECORD = "refused.append({\"url\": clean_text(candidate.url, 300), \"reason\": clean_text(units.message, 300)})"


def test_the_reference_passes_the_recorded_refusal_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(evidence_html, "REFUSED", (RECORDED,), monkeypatch)
    for table in ("HTML", "ERROR_STATUS", "PRIVATE", "BESIDE_REFUSED"):
        monkeypatch.setattr(evidence_html, table, ())
    assert failing_rows(evidence_html, "REFUSED", HTML, monkeypatch) == set()


@pytest.mark.parametrize("field", ["url", "reason"])
def test_a_misnamed_field_of_a_refusal_record_fails_exactly_the_recorded_refusal_row(
    field: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: the mutants' {"URL": ...} and {"REASON": ...}: the record of a result refused at its page fetch leaves
    # the shipped schema (required url and reason, no other field)
    wrong = REFUSED_RECORD.replace(f'"{field}"', f'"{field.upper()}"')
    patch_reading(EvidenceSearchTool, "_collect", REFUSED_RECORD, wrong, monkeypatch)
    for table in ("HTML", "ERROR_STATUS", "PRIVATE", "BESIDE_REFUSED"):
        monkeypatch.setattr(evidence_html, table, ())
    assert failing_rows(evidence_html, "REFUSED", HTML, monkeypatch) == {RECORDED}
    monkeypatch.undo()  # every table whole again, and the reading made once more: only the new row fails
    patch_reading(EvidenceSearchTool, "_collect", REFUSED_RECORD, wrong, monkeypatch)
    monkeypatch.setattr(evidence_html, "REFUSED", tuple(c for c in evidence_html.REFUSED if c.name != RECORDED))
    (result,) = run(reference_target(), only=[HTML]).results
    assert result.outcome.value == "passed", result.reason


def test_recording_no_refusal_passes_the_recorded_refusal_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the rule: a pipeline that records nothing of a refusal at fetch time (tried.dropped lists the results
    # refused before any fetch only) still follows the schema.
    patch_reading(EvidenceSearchTool, "_collect", REFUSED_RECORD, "pass", monkeypatch)
    _keep(evidence_html, "REFUSED", (RECORDED,), monkeypatch)
    for table in ("HTML", "ERROR_STATUS", "PRIVATE", "BESIDE_REFUSED"):
        monkeypatch.setattr(evidence_html, table, ())
    assert failing_rows(evidence_html, "REFUSED", HTML, monkeypatch) == set()


# -- ssrf.body.decoded: a gzip page with bytes after its stream -----------------------------------------------------

DECODED = "ssrf.body.decoded"
TRAILING = "gzip-trailing-bytes"


def _pieces_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for table in ("ROWS", "REPLY_ROWS", "LABEL_ROWS"):
        monkeypatch.setattr(ssrf_body, table, ())


def test_the_reference_passes_the_trailing_bytes_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _pieces_only(monkeypatch)
    assert failing_rows(ssrf_body, "PIECE_ROWS", DECODED, monkeypatch) == set()


def test_a_stream_ended_before_trailing_bytes_read_as_cut_fails_exactly_the_trailing_bytes_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's return bytes(body), True where the inflater finished with bytes after its stream that
    # start no member: the whole page is reported cut
    right = "return bytes(body), False  # trailing bytes after the stream are not read"
    patch_reading(body, "read_capped", right, right.replace("False", "True"), monkeypatch, http_fetch)
    _pieces_only(monkeypatch)
    assert failing_rows(ssrf_body, "PIECE_ROWS", DECODED, monkeypatch) == {TRAILING}


def test_refusing_bytes_after_the_stream_passes_the_trailing_bytes_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the rule: a decoder that refuses what follows the stream (a WEB_* error, as for a corrupt body).
    right = "return bytes(body), False  # trailing bytes after the stream are not read"
    wrong = 'raise WebError(WebErrorCode.PROVIDER_ERROR, "bytes after the gzip stream")'
    patch_reading(body, "read_capped", right, wrong, monkeypatch, http_fetch)
    _pieces_only(monkeypatch)
    assert failing_rows(ssrf_body, "PIECE_ROWS", DECODED, monkeypatch) == set()


# -- errors.secret_echo: the key backwards in fragments ------------------------------------------------------------

FRAGMENTS = "the key backwards in fragments of three characters, spaces between"


def test_the_judge_reads_the_whole_key_run_together_either_way() -> None:
    # catches: a judge that reads no fragments (the row's wrong scrubber then passed); a piece run together is in
    # ordinary words, so only the whole key counts
    key = DEFAULT_API_KEY
    assert leak("invalid " + " ".join(key[::-1][i : i + 3] for i in range(0, len(key), 3)), key) is not None
    assert leak("invalid " + " ".join(key[i : i + 4] for i in range(0, len(key), 4)), key) is not None
    assert leak("the dsweb emulator key is fine", key) is None


@pytest.mark.usefixtures("fresh_forms")
def test_the_reference_passes_the_fragments_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(outcomes, "SECRET_ECHOES", (FRAGMENTS,), monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == set()


@pytest.mark.usefixtures("fresh_forms")
def test_the_reversed_needle_dropped_fails_exactly_the_fragments_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant's secret[::+1] in place of secret[::-1]: the compact view then looks for the key run
    # together forward only, and the per-character and spelled-out readings find no piece in fragments of three
    patch_reading(_secrets, "_needles", "raw = [secret, secret[::-1],", "raw = [secret, secret[::+1],", monkeypatch)
    _fails_exactly(outcomes, "SECRET_ECHOES", ECHO, FRAGMENTS, ECHO_ROW, monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_quoting_no_upstream_words_passes_the_fragments_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the rule: a target that never quotes what the upstream said (the Node adapter's way).
    monkeypatch.setattr(_deepseek_http, "error_detail", lambda body, secrets=(): None)
    _keep(outcomes, "SECRET_ECHOES", (FRAGMENTS,), monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == set()


# --- evidence.html_page: attributes saying "true" (an audit of the draw's judgements found this survivor reachable) --


def test_any_true_attribute_taken_for_furniture_fails_exactly_the_true_attributes_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: furniture judged by any attribute whose value is "true" (the mutant's "not in"): an article inside a
    # server-rendered app root or an expanded section is dropped, and the page's fact never reaches the evidence
    from dsweb_ref.tools import _evidence_units

    right = 'if name in ("aria-hidden", "aria-modal") and low == "true":'
    patch_reading(_evidence_units, "is_furniture", right, right.replace(" in ", " not in ", 1), monkeypatch)
    assert failing_rows(evidence_html, "HTML", "evidence.html_page", monkeypatch) == {"true-attributes"}
