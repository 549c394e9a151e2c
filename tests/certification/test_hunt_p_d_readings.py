"""Hunt P, part D: wrong readings of seed 003's standalone search that dsweb certify passed, each now failing the
rows added for it. A search request naming another model than the one the search was set to use (F3); a query past
the target's own bound cut there and searched instead of refused or sent whole (F2). Each wrong reading is made
in the reference as the hunt made it and fails exactly its rows; the reference, and the readings seed 003 leaves
open, pass them."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import standalone
from dsweb_ref.providers import _standalone
from dsweb_ref.providers.standalone_messages import MessagesStandaloneSearch
from dsweb_ref.providers.standalone_responses import ResponsesStandaloneSearch
from dsweb_ref.tools import standalone_search

from ._readings import failing_rows, keep_rows, patch_reading
from .test_hunt_standalone_readings import _following

ISOLATED, REQUESTS = "standalone.request.isolated", "REQUEST_CASES"

# -- F3: the request's model ----------------------------------------------------------------------

MODEL_ROWS = ("messages", "responses")  # the plain rows judge the request's model
MODEL = '"model": self.model,'


def test_the_reference_passes_the_plain_rows_judging_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_rows(standalone, REQUESTS, MODEL_ROWS, monkeypatch)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == set()


@pytest.mark.parametrize("named", ["deepseek-v4-pro", "deepseek-flash"])
def test_a_request_naming_another_model_fails_exactly_the_plain_rows(
    named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: "model": "deepseek-v4-pro" (a fixed model, or the main conversation's; any other model the backend
    # serves) in the search request on both backends, while the usage still names the designated deepseek-v4-flash
    for backend in (MessagesStandaloneSearch, ResponsesStandaloneSearch):
        patch_reading(backend, "standalone_search", MODEL, f'"model": "{named}",', monkeypatch)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == set(MODEL_ROWS)


def test_another_model_on_one_backend_fails_its_row_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the designated model kept on Messages and a fixed one named on Responses
    patch_reading(ResponsesStandaloneSearch, "standalone_search", MODEL, '"model": "deepseek-v4-pro",', monkeypatch)
    keep_rows(standalone, REQUESTS, MODEL_ROWS, monkeypatch)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == {"responses"}


# -- F2: a query past the target's own bound ------------------------------------------------------

HUGE_ROW = "messages-query-of-20000-characters"
REFUSED = '''    if len(query.encode("utf-8")) > MAX_QUERY_BYTES:
        raise _invalid(f"query must be at most {MAX_QUERY_BYTES} bytes of UTF-8")
'''


def _cut(limit: int) -> str:
    return f'''    if len(query.encode("utf-8")) > {limit}:
        query = query.encode("utf-8")[:{limit}].decode("utf-8", "ignore")
'''


def test_the_reference_passes_the_20000_character_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # the reference refuses both queries as a tool error (its bound is 4 096 bytes) and sends no request
    assert max(len(q.encode("utf-8")) for q in standalone.HUGE_QUERIES) == 20_000
    keep_rows(standalone, REQUESTS, (HUGE_ROW,), monkeypatch)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == set()


@pytest.mark.parametrize("limit", [4096, 8000])
def test_a_long_query_cut_at_the_bound_fails_exactly_the_20000_character_row(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a query longer than the bound cut to its first 4 096 (or 8 000) bytes and searched, silently
    patch_reading(standalone_search, "parse_query", REFUSED, _cut(limit), monkeypatch)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == {HUGE_ROW}


def test_a_long_query_sent_whole_passes_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a target whose bound lies past 20 000 bytes sends the query whole
    patch_reading(standalone_search, "parse_query", "> MAX_QUERY_BYTES:", "> 40_000:", monkeypatch)
    keep_rows(standalone, REQUESTS, (HUGE_ROW,), monkeypatch)
    assert failing_rows(standalone, REQUESTS, ISOLATED, monkeypatch) == set()


# -- F5: a 303 See Other --------------------------------------------------------------------------

REDIRECTED, REDIRECTS = "standalone.redirect.not_followed", "REDIRECT_CASES"
SEE_OTHER_ROWS = {"messages-303", "responses-303"}


def test_the_reference_passes_the_303_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_rows(standalone, REDIRECTS, tuple(SEE_OTHER_ROWS), monkeypatch)
    assert failing_rows(standalone, REDIRECTS, REDIRECTED, monkeypatch) == set()


def test_a_303_alone_followed_fails_exactly_the_303_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a 303 See Other followed with a GET to its Location (every other 3xx refused), on either backend
    monkeypatch.setattr(_standalone, "post", _following((303,)))
    assert failing_rows(standalone, REDIRECTS, REDIRECTED, monkeypatch) == SEE_OTHER_ROWS
