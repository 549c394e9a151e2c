"""Survivors of the seed-5 mutation draw (``scripts/mutation_score.py --sample 400 --seed 5``) that the first rows and
judgements left: wrong readings of seeds 001 and 002 that no certification row rejected. The evidence text's cut taking
the [needs_retry] line of a query that found nothing; a query whose results carry no title or snippet crashing the
ranking; an IP address in its absolute form (a final dot) taken for a site of its own; and three forms of the key the
scrubber missed (the base64 of a six-character key, the double base64 of a long key, %uXXXX escapes). Each mutant's
change is made in the reference and must fail exactly the row that names it; the reference passes them, and a right
reading beside each passes too."""

from __future__ import annotations

import re

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.cases import Case
from dsweb_ref.certification.checks import evidence, evidence_diversity, outcomes
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers import _deepseek_http
from dsweb_ref.tools import _evidence_rank, evidence_search

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run

BATCH, CITES, DIVERSITY = "evidence.batch", "evidence.lines_cite_results", "evidence.diversity"
ECHO = "errors.secret_echo"
RETRY_MARKER, BARE, ABSOLUTE = "cut-keeps-retry-marker", "bare-results", "absolute-address"
PERCENT_U, SHORT, LONG = (
    "the key as %uXXXX escapes",
    "a key of six characters, base64-encoded",
    "a key of 67 characters, base64-encoded twice",
)
CUT_WHILE = "while len(_join(heads, bodies) + note) > max_chars and any(len(b) > 1 for b in bodies):"
RANKED = "q.ranked = rank(q.topic, self._candidates(index, q, answer))"
BARE_HOST = 'bare = host.strip("[]").rstrip(".").lower()'



def _echo_fails_exactly(row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`fails_exactly` for errors.secret_echo, whose reason names the route before each failing row."""
    cases = outcomes.SECRET_ECHOES

    def outcome(kept: tuple[Case, ...]) -> tuple[str, str]:
        monkeypatch.setattr(outcomes, "SECRET_ECHOES", kept)
        (result,) = run(reference_target(), only=[ECHO]).results
        return result.outcome.value, result.reason

    value, reason = outcome(tuple(c for c in cases if c.name == row))
    failed = set(re.findall(r"\[(?:Search API|Messages)\] (.*?): the failure shows", reason))
    assert value == "failed" and failed == {row}, reason
    value, reason = outcome(tuple(c for c in cases if c.name != row))
    assert value == "passed", reason


def _keep(module: object, table: str, names: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, table, tuple(c for c in getattr(module, table) if c.name in names))
    assert {c.name for c in getattr(module, table)} == set(names)


# -- evidence.batch: the [needs_retry] of a query that found nothing survives the text's cut --------------------


def test_the_reference_passes_the_retry_marker_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(evidence, "BATCH", (RETRY_MARKER,), monkeypatch)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == set()


def test_a_cut_taking_lines_from_every_group_alike_fails_exactly_the_retry_marker_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's "or" for "and": lines are left out while any group has two (needlessly, when the text
    # fits) and then, each group down to one line, from the first query on, so the [needs_retry] line of the query
    # that found nothing goes; the cut row of lines with answers (every query still named) passes it
    patch_reading(evidence_search, "render_evidence", CUT_WHILE, CUT_WHILE.replace(" and any(", " or any("),
                  monkeypatch)
    _keep(evidence, "BATCH", (RETRY_MARKER, "cut-keeps-every-query", "grouped-text"), monkeypatch)
    fails_exactly(evidence, "BATCH", BATCH, RETRY_MARKER, monkeypatch)


def test_a_text_bound_with_room_for_every_line_passes_the_retry_marker_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the seed, which fixes no bound on the text: a target whose bound holds all of it cuts nothing.
    patch_reading(evidence_search.EvidenceSearchTool, "execute", "self.settings.max_output_chars", "40_000",
                  monkeypatch)
    _keep(evidence, "BATCH", (RETRY_MARKER,), monkeypatch)
    assert failing_rows(evidence, "BATCH", BATCH, monkeypatch) == set()


# -- evidence.lines_cite_results: results with no title or snippet ----------------------------------------------


def test_the_reference_passes_the_bare_results_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(evidence, "CITES", (BARE,), monkeypatch)
    assert failing_rows(evidence, "CITES", CITES, monkeypatch) == set()


def test_scores_left_unset_without_words_to_score_fail_exactly_the_bare_results_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's scores = None: with no word in any result of the query BM25 never runs, and the scored
    # list reads None, so the call raises (the other rows' results all carry words)
    patch_reading(_evidence_rank, "rank", "scores = [0.0] * len(candidates)", "scores = None", monkeypatch,
                  evidence_search)
    assert failing_rows(evidence, "CITES", CITES, monkeypatch) == {BARE}


def test_leaving_results_without_relevance_unread_passes_the_bare_results_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the seed (relevance ranking, no floor fixed): results that score nothing are never fetched, so the
    # query says [needs_retry] instead of citing the page.
    patch_reading(evidence_search.EvidenceSearchTool, "run", RANKED,
                  "q.ranked = [c for c in rank(q.topic, self._candidates(index, q, answer)) if c.score > 0]",
                  monkeypatch)
    _keep(evidence, "CITES", (BARE,), monkeypatch)
    assert failing_rows(evidence, "CITES", CITES, monkeypatch) == set()


# -- evidence.diversity: an address with and without its final dot is one site ---------------------------------


def test_the_reference_passes_the_absolute_address_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(evidence_diversity, "DIVERSITY", (ABSOLUTE,), monkeypatch)
    assert failing_rows(evidence_diversity, "DIVERSITY", DIVERSITY, monkeypatch) == set()


def test_the_final_dot_kept_on_an_address_fails_exactly_the_absolute_address_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's rstrip(None) (whitespace stripped, the final dot kept): the suffix list folds a name's
    # final dot itself, so names are unchanged, but 93.184.215.14. is no address and is looked up as the name
    # "215.14.", a second site beside 93.184.215.14 that takes its own two pages
    patch_reading(_evidence_rank, "registrable_domain", BARE_HOST, BARE_HOST.replace('rstrip(".")', "rstrip(None)"),
                  monkeypatch)
    fails_exactly(evidence_diversity, "DIVERSITY", DIVERSITY, ABSOLUTE, monkeypatch)


def test_every_address_taken_for_one_site_passes_the_absolute_address_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the seed, which fixes no share: a pipeline that counts all IP addresses as one site (it crowds less).
    patch_reading(_evidence_rank, "registrable_domain", "    return bare\n", '    return "ip"\n', monkeypatch)
    _keep(evidence_diversity, "DIVERSITY", (ABSOLUTE,), monkeypatch)
    assert failing_rows(evidence_diversity, "DIVERSITY", DIVERSITY, monkeypatch) == set()


# -- errors.secret_echo: %uXXXX escapes, a six-character key, a 67-character key -------------------------------


@pytest.mark.usefixtures("fresh_forms")
def test_the_reference_passes_the_new_echo_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep(outcomes, "SECRET_ECHOES", (PERCENT_U, SHORT, LONG), monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == set()


@pytest.mark.usefixtures("fresh_forms")
def test_percent_u_escapes_not_looked_for_fail_exactly_their_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the mutant's "XXXX".join: the needle of the key's code points as uXXXX runs (what %uXXXX escapes, or
    # U+XXXX, leave in the compact view) no longer matches, and no other form reads them
    right = '"".join(f"u{p:04x}" for p in ordered),'
    patch_reading(_secrets, "_needles", right, right.replace('""', '"XXXX"'), monkeypatch)
    _echo_fails_exactly(PERCENT_U, monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_a_base64_core_of_eight_characters_skipped_fails_exactly_the_six_character_key_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's len(core) > 8: a six-byte key's one core (at a group's start) is eight characters, so
    # its base64 is looked for nowhere; the other rows' keys are 23 characters or more
    patch_reading(_secrets, "_base64_cores_of", "if len(core) >= 8:", "if len(core) > 8:", monkeypatch)
    _echo_fails_exactly(SHORT, monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_base64_of_base64_in_groups_of_four_bytes_fails_exactly_the_long_key_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's _groups(..., 4, 4) for the outer base64: four-byte groups of the inner text, so each
    # outer form covers three quarters of it; the emulator's 23-character key leaves fewer than ten characters
    # uncovered, a key of 67 shows ten and more
    right = "_groups(inner.encode(\"ascii\"), base64.b64encode, 3, 4)"
    patch_reading(_secrets, "_needles", right, right.replace("3, 4)", "4, 4)"), monkeypatch)
    _echo_fails_exactly(LONG, monkeypatch)


@pytest.mark.usefixtures("fresh_forms")
def test_quoting_no_upstream_words_passes_the_new_echo_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by the seed: a target that never quotes what the upstream said (the Node adapter's way).
    monkeypatch.setattr(_deepseek_http, "error_detail", lambda body, secrets=(): None)
    _keep(outcomes, "SECRET_ECHOES", (PERCENT_U, SHORT, LONG), monkeypatch)
    assert failing_rows(outcomes, "SECRET_ECHOES", ECHO, monkeypatch) == set()


# The gap this helper found in the reference itself (fixed in _secrets._JSON_U and _FOLD_TOKEN): \\uXXXX escapes.
TWICE = "a message quoting the key as JSON unicode escapes escaped again"


def test_unicode_escapes_read_only_after_one_backslash_fail_exactly_the_escaped_again_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the scrubber as it was, decoding \uXXXX only after a single backslash
    monkeypatch.setattr(_secrets, "_JSON_U", re.compile(r"\\u([0-9A-Fa-f]{4})"))
    monkeypatch.setattr(_secrets, "_FOLD_TOKEN", re.compile(r"\\u[0-9A-Fa-f]{4}|[\s\S]"))
    _echo_fails_exactly(TWICE, monkeypatch)


def test_a_long_run_of_backslashes_is_folded_in_linear_time() -> None:
    # The lookbehind starts a match only at a run's first backslash: a run read once, not once per backslash.
    assert _secrets._fold("\\" * 200_000 + "x") == "\\" * 200_000 + "x"
    assert _secrets._fold("\\\\\\u0064\\\\u0073") == "ds"
