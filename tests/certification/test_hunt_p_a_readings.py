"""A read-only hunt (P-A) over seed 000: wrong readings dsweb certify passed. Each is made in the reference as the
hunt made it and must fail exactly the new row (or pinned scenario) that names it; the reference passes them.

P-F1. Seed 000: web_search 'accepts one required queries string array' (accepting both query and queries was
rejected). The rows sent the legacy query alone, so a tool that searched a query given beside queries too was
certified: search.validation.arguments now sends both."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable

import pytest

from dsweb_ref import providers
from dsweb_ref.certification.checks import text, validation
from dsweb_ref.providers import _deepseek_http
from dsweb_ref.tools import _result, web_fetch, web_search

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


# P-F6: neither the provider's quoted error message nor the tool's 'Error: ...' text cut.
BOUNDED_CHECK, BOUNDED_TABLE = "search.text.bounded", "BOUNDED"
HUGE_ERROR = next(c.name for c in text.BOUNDED if "error_message" in c.params)
ERROR_CUT = "if max_chars is not None and len(text) > max_chars:"


def _error_detail_uncut(body: bytes, secrets: Iterable[str] = ()) -> str | None:
    """The hunt's error_detail: the provider's message found as the reference finds it, scrubbed, never cut."""
    try:
        data = _deepseek_http.parse_json(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, str):
        detail: object = error
    else:
        inner = error.get("message") if isinstance(error, dict) else None
        detail = inner if inner is not None else data.get("message")
    if not isinstance(detail, str):
        return None
    return _deepseek_http.scrub_secrets(detail, tuple(secrets))


def _uncut_error_result(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(_result, "error_result", ERROR_CUT, "if False:", monkeypatch, web_search, web_fetch)


def _uncut_error_detail(monkeypatch: pytest.MonkeyPatch) -> None:
    original = _deepseek_http.error_detail
    for info in pkgutil.iter_modules(providers.__path__):
        module = importlib.import_module(f"{providers.__name__}.{info.name}")
        if getattr(module, "error_detail", None) is original:
            monkeypatch.setattr(module, "error_detail", _error_detail_uncut)


def test_the_reference_passes_the_huge_error_message_row(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_rows(text, BOUNDED_TABLE, (HUGE_ERROR,), monkeypatch)
    assert failing_rows(text, BOUNDED_TABLE, BOUNDED_CHECK, monkeypatch) == set()


def test_an_error_quoted_whole_into_an_uncut_error_text_fails_exactly_its_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: P-F6, the provider's 300,000-character error message quoted whole and the tool's 'Error: ...' text
    # left uncut: the failure the model sees is unbounded
    _uncut_error_result(monkeypatch)
    _uncut_error_detail(monkeypatch)
    fails_exactly_shown(text, BOUNDED_TABLE, BOUNDED_CHECK, HUGE_ERROR, ROUTED, monkeypatch)


@pytest.mark.parametrize("uncut", [_uncut_error_result, _uncut_error_detail], ids=["error-text", "error-detail"])
def test_either_bound_alone_keeps_the_error_text_bounded(
    uncut: Callable[[pytest.MonkeyPatch], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    # open: one cut is enough. The quote cut at 500 characters in an uncut error text, or the whole message quoted
    # into an error text cut to the output cap, is a bounded failure: the row judges the text the model sees.
    uncut(monkeypatch)
    keep_rows(text, BOUNDED_TABLE, (HUGE_ERROR,), monkeypatch)
    assert failing_rows(text, BOUNDED_TABLE, BOUNDED_CHECK, monkeypatch) == set()
