"""A survivor of the seed-10 mutation draw (``scripts/mutation_score.py --sample 400 --seed 10``), found by the review
of its judgements, that a new row now rejects: the reference turns down a redirect to another public host (its
policy follows the same origin only), and the mutant crashes while putting that refusal into words, so the refusal
becomes an ordinary load failure and the result's snippet stands in as evidence. Turning a Location down is a
fetcher's redirect validation refusing it (evidence.html_page's rule), so the snippet is no fallback there; a
fetcher that follows the hop fetches the page there and is accepted."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import evidence_html
from dsweb_ref.providers import http_fetch

from ._readings import failing_rows, fails_exactly, passes_rows, patch_reading

CHECK = "evidence.html_page"
CROSS = "cross-origin-redirect-snippet"


def test_the_reference_passes_the_cross_origin_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(evidence_html, "REFUSED", CHECK, (CROSS,), monkeypatch)


def test_a_cross_origin_refusal_that_crashes_fails_exactly_the_cross_origin_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the mutant's raw_host.decode(None): the refusal of a hop to another host raises TypeError, which the
    # service guard codes WEB_PROVIDER_ERROR, so the pipeline takes the page for one it could not fetch and cites
    # the refused result's snippet
    right = "host = target.raw_host.decode('ascii')".replace("'", '"')
    patch_reading(http_fetch, "redirect_refusal", right, right.replace('"ascii"', "None"), monkeypatch)
    fails_exactly(evidence_html, "REFUSED", CHECK, CROSS, monkeypatch)


def test_a_fetcher_that_follows_redirects_to_other_hosts_passes_every_refusal_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A right reading: the redirect policy is the target's; one that follows a hop to another public host shows the
    # page there (its fact), and still refuses each hop to a private address by validation
    right = "same_host = source.raw_host == target.raw_host"
    patch_reading(http_fetch, "redirect_refusal", right, "same_host = True", monkeypatch)
    assert failing_rows(evidence_html, "REFUSED", CHECK, monkeypatch) == set()
