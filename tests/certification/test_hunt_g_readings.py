"""Issue 24, an outside hunt (G) over seeds 001 and 002: wrong readings dsweb certify passed. A Fetch API body's
own url or status field taken for the page's; a tools base completed with /v1/tools or stripped of a /search it
ends in; a Fetch API failure handed to the local fetcher; the API key sent with page fetches; a private redirect
or host counted as an ordinary load failure, so the pipeline cites its snippet. Each wrong reading is made in the
reference and must fail exactly the rows that name it; the reference passes them."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import fetch
from dsweb_ref.providers import deepseek_fetch_api

from ._readings import failing_rows, fails_exactly, patch_reading

MAPPING = "fetch.api.mapping"
OTHER_URL, OTHER_STATUS = "a body that names another URL", "a body that names a status"


def _only(module: object, keep: str, tables: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """``keep`` alone of ``module``'s ``tables``: the others prove nothing here."""
    for table in tables:
        if table != keep:
            monkeypatch.setattr(module, table, ())


FETCH_TABLES = ("MAPPING", "OTHER_SUCCESS", "BOUNDS", "FAILURES")


def test_the_reference_passes_the_fetch_mapping_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(fetch, "MAPPING", FETCH_TABLES, monkeypatch)
    assert {OTHER_URL, OTHER_STATUS} <= {case.name for case in fetch.MAPPING}
    assert failing_rows(fetch, "MAPPING", MAPPING, monkeypatch) == set()


def test_a_url_field_taken_for_the_final_url_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: FetchResult(url=data.get("url") or request.url): the API's url field read as the page's final URL
    patch_reading(deepseek_fetch_api.DeepSeekFetchApi, "fetch", "FetchResult(url=request.url,",
                  'FetchResult(url=data.get("url") if isinstance(data.get("url"), str) and data.get("url") '
                  "else request.url,", monkeypatch)
    _only(fetch, "MAPPING", FETCH_TABLES, monkeypatch)
    fails_exactly(fetch, "MAPPING", MAPPING, OTHER_URL, monkeypatch)


def test_a_status_field_passed_through_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: status_code=data.get("status_code", 200) when an int 100-599: the API's field read as the page's status
    patch_reading(deepseek_fetch_api.DeepSeekFetchApi, "fetch", "status_code=200,",
                  'status_code=data["status_code"] if isinstance(data.get("status_code"), int) '
                  'and 100 <= data["status_code"] <= 599 else 200,', monkeypatch)
    _only(fetch, "MAPPING", FETCH_TABLES, monkeypatch)
    fails_exactly(fetch, "MAPPING", MAPPING, OTHER_STATUS, monkeypatch)
