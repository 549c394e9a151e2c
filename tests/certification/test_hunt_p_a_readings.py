"""A read-only hunt (P-A) over seed 000: wrong readings dsweb certify passed. Each is made in the reference as the
hunt made it and must fail exactly the new row (or pinned scenario) that names it; the reference passes them.

P-F1. Seed 000: web_search 'accepts one required queries string array' (accepting both query and queries was
rejected). The rows sent the legacy query alone, so a tool that searched a query given beside queries too was
certified: search.validation.arguments now sends both."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import validation
from dsweb_ref.tools import web_search

from ._readings import failing_rows, fails_exactly_shown, keep_rows, patch_reading

ARGUMENTS_CHECK, ARGUMENTS_TABLE = "search.validation.arguments", "ARGUMENTS"
BESIDE = next(c.name for c in validation.ARGUMENTS if "beside" in c.params)
ROUTED = r"\[(?:Search API|Messages)\] (.+?): "  # a check over both search routes names the row under each

# P-F1: the legacy query put in front of the queries array.
QUERIES = '    queries = arguments["queries"]\n'
BOTH = ('    queries = arguments["queries"]\n'
        "    if isinstance(queries, list) and isinstance(arguments.get('query'), str):\n"
        "        queries = [arguments['query'], *queries]\n")


def test_the_reference_passes_the_legacy_query_beside_queries_row(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_rows(validation, ARGUMENTS_TABLE, (BESIDE,), monkeypatch)
    assert failing_rows(validation, ARGUMENTS_TABLE, ARGUMENTS_CHECK, monkeypatch) == set()


def test_a_legacy_query_searched_beside_queries_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: P-F1, a query given beside queries searched too (both representations accepted and merged)
    patch_reading(web_search, "parse_queries", QUERIES, BOTH, monkeypatch)
    fails_exactly_shown(validation, ARGUMENTS_TABLE, ARGUMENTS_CHECK, BESIDE, ROUTED, monkeypatch)


def test_a_legacy_query_beside_queries_refused_passes_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: refusing the extra argument as invalid arguments before any request is the other right answer
    refuse = QUERIES + "    if 'query' in arguments:\n        raise _invalid('unknown argument: query')\n"
    patch_reading(web_search, "parse_queries", QUERIES, refuse, monkeypatch)
    keep_rows(validation, ARGUMENTS_TABLE, (BESIDE,), monkeypatch)
    assert failing_rows(validation, ARGUMENTS_TABLE, ARGUMENTS_CHECK, monkeypatch) == set()
