"""Issue 24, an outside hunt (G) over seeds 001 and 002: wrong readings dsweb certify passed. A Fetch API body's
own url or status field taken for the page's; a tools base completed with /v1/tools or stripped of a /search it
ends in; a Fetch API failure handed to the local fetcher; the API key sent with page fetches; a private redirect
or host counted as an ordinary load failure, so the pipeline cites its snippet. Each wrong reading is made in the
reference and must fail exactly the rows that name it; the reference passes them."""

from __future__ import annotations

from typing import Any

import pytest

from dsweb_ref import WebErrorCode
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import deployment, evidence_html, fetch, ssrf
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers import _deepseek_http, _standalone, deepseek_fetch_api, http_fetch, scripted
from dsweb_ref.tools import evidence_search, web_fetch

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run

MAPPING, SHAPES, PUBLIC = "fetch.api.mapping", "search.api.base_shapes", "ssrf.resolve.public_fetched"
HTML_PAGE = "evidence.html_page"
OTHER_URL, OTHER_STATUS = "a body that names another URL", "a body that names a status"
FALLBACK_404, FALLBACK_500, FALLBACK_CUT = (case.name for case in fetch.FALLBACK)
BARE, ENDS_IN_SEARCH = "a bare origin", "a prefix that ends in /search"
BASE_RETURN = 'return text.rstrip("/")'  # the last line of usable_base_url: the base as entered


def _only(module: object, keep: str, tables: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """``keep`` alone of ``module``'s ``tables``: the others prove nothing here."""
    for table in tables:
        if table != keep:
            monkeypatch.setattr(module, table, ())


FETCH_TABLES = ("MAPPING", "OTHER_SUCCESS", "BOUNDS", "FAILURES", "FALLBACK")


def test_the_reference_passes_the_fetch_mapping_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(fetch, "MAPPING", FETCH_TABLES, monkeypatch)
    assert {OTHER_URL, OTHER_STATUS} <= {case.name for case in fetch.MAPPING}
    assert failing_rows(fetch, "MAPPING", MAPPING, monkeypatch) == set()


def test_the_reference_passes_the_fallback_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(fetch, "FALLBACK", FETCH_TABLES, monkeypatch)
    assert failing_rows(fetch, "FALLBACK", MAPPING, monkeypatch) == set()


# web_fetch falling back to the local fetcher when the Fetch API fails the page (the hunt's patch, as written).
FALLBACK = """try:
        result = await self.web.fetch(FetchRequest(url), ctx or CallContext())
    except WebError as first:
        local = self.web._fetch._providers.get("http")
        if local is None or first.code != WebErrorCode.PROVIDER_ERROR:
            raise
        try:
            result = await local.fetch(FetchRequest(url), ctx or CallContext())
        except WebError:
            raise first from None"""


def test_a_fetch_api_failure_handed_to_the_local_fetcher_fails_exactly_the_fallback_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a Fetch API failure (WEB_PROVIDER_ERROR) retried by the local HTTP fetcher. Only FALLBACK runs: there
    # the test network keeps the local fetches on loopback (elsewhere they would look names up for real).
    right = "result = await self.web.fetch(FetchRequest(url), ctx or CallContext())"
    patch_reading(web_fetch.WebFetchTool, "run", right, FALLBACK, monkeypatch)
    _only(fetch, "FALLBACK", FETCH_TABLES, monkeypatch)
    # (the cut answer's row, from hunt Q-E4, fails it too: a cut answer is a WEB_PROVIDER_ERROR as well)
    assert failing_rows(fetch, "FALLBACK", MAPPING, monkeypatch) == {FALLBACK_404, FALLBACK_500, FALLBACK_CUT}


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


def test_the_reference_passes_the_base_shape_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {BARE, ENDS_IN_SEARCH} <= {case.name for case in deployment.SHAPES}
    assert failing_rows(deployment, "SHAPES", SHAPES, monkeypatch) == set()


def _base_reading(wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(_deepseek_http, "usable_base_url", BASE_RETURN, wrong, monkeypatch, scripted, _standalone)


def test_a_bare_origin_completed_with_v1_tools_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a base with no path completed with the public /v1/tools (a route prefix inferred)
    _base_reading('return text.rstrip("/") + ("/v1/tools" if url.path in ("", "/") else "")', monkeypatch)
    fails_exactly(deployment, "SHAPES", SHAPES, BARE, monkeypatch)


def test_a_trailing_route_stripped_from_the_base_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a trailing /search or /fetch stripped from the base (taken for a whole endpoint entered)
    _base_reading('return re.sub(r"/(search|fetch)$", "", text.rstrip("/"))', monkeypatch)
    fails_exactly(deployment, "SHAPES", SHAPES, ENDS_IN_SEARCH, monkeypatch)


def test_the_reference_passes_the_credential_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(ssrf, "CREDENTIALS", PUBLIC, monkeypatch) == set()


def test_the_api_key_sent_with_page_fetches_fails_exactly_the_credential_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: one client configuration for every provider, the key too: the local HTTP fetcher sends
    # Authorization: Bearer <the DeepSeek key> to every page host
    shared: dict[str, str] = {}
    build = targets.build_runtime

    def keyed(*args: Any, environ: Any = None, **kwargs: Any) -> Any:
        shared.update(environ or {})  # the runtime's credential environment, as the page fetcher sees it
        return build(*args, environ=environ, **kwargs)

    monkeypatch.setattr(targets, "build_runtime", keyed)
    monkeypatch.setattr(http_fetch, "_SHARED_ENV", shared, raising=False)
    right, key = '"Accept-Encoding": "gzip, deflate"}', f"_SHARED_ENV.get({targets.KEY_ENV!r})"
    patch_reading(http_fetch.HttpFetchProvider, "_follow", right,
                  f'{right}\n    if {key}:\n        headers["Authorization"] = "Bearer " + {key}', monkeypatch)
    fails_exactly(ssrf, "CREDENTIALS", PUBLIC, "no-credential", monkeypatch)


def test_the_credential_judge_reads_the_key_in_any_header_and_needs_no_key() -> None:
    key = "dsweb-fake-placeholder-key-0001"
    plain = [("Host", "no-credential.ssrf.test"), ("User-Agent", "dsweb_ref"), ("Accept", "*/*")]
    assert ssrf.credential_shown(plain, key) is None
    assert ssrf.credential_shown(plain, "") is None  # a target configured without a key: nothing to find
    assert ssrf.credential_shown([*plain, ("authorization", "Bearer x")], "") == "an authorization header"
    assert ssrf.credential_shown([*plain, ("X-Api-Key", key.upper())], key) is not None
    encoded = __import__("base64").b64encode(key.encode()).decode()
    assert "base64" in str(ssrf.credential_shown([*plain, ("Cookie", f"k={encoded}")], key))


def test_the_reference_passes_the_refused_snippet_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(evidence_html, "REFUSED", HTML_PAGE, monkeypatch) == set()


def test_a_refused_fetch_counted_as_a_load_failure_fails_exactly_the_refused_snippet_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: _REFUSED = {WEB_INVALID_URL}: a redirect to a private address (or a host resolving privately) is an
    # ordinary load failure, so the snippet fallback cites the result and lists it among the sources
    monkeypatch.setattr(evidence_search, "_REFUSED", frozenset({WebErrorCode.INVALID_URL}))
    rows = {case.name for case in evidence_html.REFUSED}
    assert failing_rows(evidence_html, "REFUSED", HTML_PAGE, monkeypatch) == rows
    monkeypatch.setattr(evidence_html, "REFUSED", ())  # the check's other rows still pass it
    (result,) = run(reference_target(), only=[HTML_PAGE]).results
    assert result.outcome.value == "passed", result.reason
