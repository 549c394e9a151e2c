"""Survivors of the seed-7 mutation draw (``scripts/mutation_score.py --sample 400 --seed 7``) in the secret scrubber,
the seam and netguard that no certification row rejected: the key's base85 read a wrong number of characters a group
(the judge read no base85 at all), and two crashes the other tools' service guard turns into WEB_PROVIDER_ERROR but
the standalone search, which has no such guard, lets out: the scrubber raising on a part of the key spelled out (a row
for the body reader raising on a gzip answer's second member was removed: the official-SDK adapter did not answer it
within the call's 20 s). Each mutant's change is made in the reference and must
fail exactly the row that names it; the reference passes the rows, and a right reading beside each passes too."""

from __future__ import annotations

import base64

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks import outcomes, standalone
from dsweb_ref.certification.checks._leaks import leak
from dsweb_ref.emulator.server import DEFAULT_API_KEY
from dsweb_ref.providers import _deepseek_http, _standalone

from ._readings import failing_rows, patch_reading
from ._readings import fails_exactly_shown as _fails_exactly
from ._readings import keep_rows as _keep

ECHO, PROSE = "errors.secret_echo", "standalone.prose.error"
BASE85 = "a base85 dump of the key's header line, the key at byte 3 of a group"
SPELLED_PART = "http-401-spelling-out-part-of-the-key"







ECHO_ROW = r"\[(?:Search API|Messages)\] (.*?): the failure shows"  # errors.secret_echo names the route first


# -- errors.secret_echo: the key's base85 ---------------------------------------------------------------------------


@pytest.mark.parametrize("before", ["", "k", "ke", "key"])
def test_the_judge_reads_the_key_in_base85_at_each_byte_of_a_group(before: str) -> None:
    # catches: a judge that reads no base85 (the row's wrong scrubber then passed), or reads it at one alignment only
    text = "bad request: " + base64.b85encode(f"{before}{DEFAULT_API_KEY}\r\n".encode()).decode()
    assert (leak(text, DEFAULT_API_KEY) or "").endswith("base85-encoded")
    assert leak("bad request: " + base64.b85encode(b"some other header line, long enough\r\n").decode(),
                DEFAULT_API_KEY) is None


@pytest.mark.usefixtures("fresh_forms")
def test_the_reference_passes_the_base85_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(outcomes, "SECRET_ECHOES", (BASE85,), monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == set()


@pytest.mark.usefixtures("fresh_forms")
def test_base85_read_six_characters_a_group_fails_exactly_the_base85_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant's _groups(chunk, base64.b85encode, 4, 6): each base85 needle is cut at six characters a
    # group, so it starts a character late and runs into the group after the key's last bytes; that still finds a
    # key that ends the encoded text, not this one, which a line break follows and which starts at byte 3 of a group
    right = "forms += _groups(chunk, base64.b85encode, 4, 5)"
    patch_reading(_secrets, "_needles", right, right.replace("4, 5)", "4, 6)"), monkeypatch)
    _fails_exactly(outcomes, "SECRET_ECHOES", ECHO, BASE85, ECHO_ROW, monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_quoting_no_upstream_words_passes_the_base85_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the rule: a target that never quotes what the upstream said (the Node adapter's way).
    monkeypatch.setattr(_deepseek_http, "error_detail", lambda body, secrets=(): None)
    _keep(outcomes, "SECRET_ECHOES", (BASE85,), monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == set()


# -- standalone.prose.error: a part of the key spelled out, a gzip answer of two members ----------------------------


@pytest.mark.usefixtures("fresh_forms")
def test_the_reference_passes_the_new_prose_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(standalone, "PROSE_CASES", (SPELLED_PART,), monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()


@pytest.mark.usefixtures("fresh_forms")
def test_a_scrubber_raising_on_a_spelled_out_part_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant's _replace_spans(text, placeholder) where a spelled-out run holds a piece of the key: a
    # TypeError, which the seam's guard turns into WEB_PROVIDER_ERROR for web_search (errors.secret_echo's spelled
    # part row passes it) but which crashes the standalone search
    # (the line is also the folded view's, above it: the spelled-out runs' own is the one after their spans)
    spans = "_replace_spans(text, [(starts[a], ends[b - 1]) for a, b in spans], placeholder)"
    right = f"spans = self._spelled_runs(view)\n        text = {spans}"
    patch_reading(_secrets.SecretForms, "redact", right, right.replace(spans, "_replace_spans(text, placeholder)"),
                  monkeypatch)
    _fails_exactly(standalone, "PROSE_CASES", PROSE, SPELLED_PART, None, monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_quoting_no_upstream_words_passes_the_spelled_part_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the rule: the tool error quotes nothing the upstream said, so no part of the key.
    monkeypatch.setattr(_standalone, "error_detail", lambda body, secrets=(): None)
    _keep(standalone, "PROSE_CASES", (SPELLED_PART,), monkeypatch)
    assert failing_rows(standalone, "PROSE_CASES", PROSE, monkeypatch) == set()

