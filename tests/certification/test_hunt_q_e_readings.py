"""Hunt Q, part E: wrong readings of seed 001's Search and Fetch APIs that dsweb certify passed, each now failing the
rows added for it: a non-success status outside the guide's list read as the answer (E1); a Search API 403, or any
other 4xx no row names, read as nothing found or as the answer (E8); an empty 200 body read as nothing found or an
empty page (E5); the refused redirect's Location named unscrubbed (E7); an error body that is no JSON object quoted
as sent (E2); a request the provider's own deadline ended turned into an empty success (E3); a Fetch API transport
failure handed to the local HTTP fetcher (E4); a transport failure's text quoted unscrubbed (E6). Each wrong reading
is made in the reference as the hunt made it and fails exactly its rows; the reference, and the readings the seeds
leave open, pass them."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dsweb_ref import runtime
from dsweb_ref._exceptions import WebError
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import fetch, outcomes
from dsweb_ref.providers import _deepseek_http, deepseek_fetch_api, deepseek_search_api

from ._readings import failing_rows, fails_exactly_shown, only_fetch_table, passes_rows, patch_reading

CODES, ECHO, MAPPING = "errors.codes", "errors.secret_echo", "fetch.api.mapping"
# the rows of errors.codes and fetch.api.mapping a reason names ("<row>: ..." after a profile's "[...] ")
SHOWN = r"(?:^|\] )([^:\[\]]+?): "


def _tools_api(right: str, wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``call_tools_api`` read the wrong way, wherever the two API providers bound it."""
    patch_reading(_deepseek_http, "call_tools_api", right, wrong, monkeypatch, deepseek_search_api,
                  deepseek_fetch_api)


# -- E1: a non-success status outside the guide's list ----------------------------------------------

E1_CODES, E1_FETCH = "HTTP 409 with an answer body", "HTTP 410 with a page body"
STATUS_TEST = "if not 200 <= reply.status < 300:"


def test_the_reference_passes_the_409_and_410_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(outcomes, "FAILURES", CODES, (E1_CODES,), monkeypatch)
    only_fetch_table("FAILURES", monkeypatch)
    passes_rows(fetch, "FAILURES", MAPPING, (E1_FETCH,), monkeypatch)


def test_failure_statuses_from_the_guides_list_fail_exactly_the_409_410_and_other_4xx_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: only the statuses the guide names (400-404, 408, 429, 5xx) taken for failures; a 409 or 410 whose
    # body reads as an answer (a page) returned as one (in errors.codes, the row of every other 4xx fails it too)
    _tools_api(STATUS_TEST, "if reply.status in (400, 401, 402, 403, 404, 408, 429) or reply.status >= 500:",
               monkeypatch)
    fails_exactly_shown(outcomes, "FAILURES", CODES, {E1_CODES, E8_OTHER}, SHOWN, monkeypatch)
    only_fetch_table("FAILURES", monkeypatch)
    fails_exactly_shown(fetch, "FAILURES", MAPPING, {E1_FETCH}, SHOWN, monkeypatch)


# -- E8: a Search API 403 read as nothing found -----------------------------------------------------

E8_CODES, E8_OTHER = "HTTP 403 with an answer body", "every other 4xx with an answer body"


def test_the_reference_passes_the_403_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(outcomes, "FAILURES", CODES, (E8_CODES,), monkeypatch)


def test_a_search_403_read_as_nothing_found_fails_exactly_the_403_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a Search API 403 (a refused query) answered as a search that found nothing, which before only the
    # opt-in retry check saw
    _tools_api(STATUS_TEST, "if route == 'search' and reply.status == 403:\n        return {'results': []}\n    "
               + STATUS_TEST, monkeypatch)
    fails_exactly_shown(outcomes, "FAILURES", CODES, {E8_CODES}, SHOWN, monkeypatch)


def test_the_reference_passes_the_other_4xx_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {405, 410, 422, 451} <= set(outcomes.OTHER_4XX) and not {401, 402, 403, 404, 409, 429} & set(
        outcomes.OTHER_4XX)
    passes_rows(outcomes, "FAILURES", CODES, (E8_OTHER,), monkeypatch)


@pytest.mark.parametrize("status", [410, 422, 451])
def test_a_list_of_failure_statuses_naming_409_fails_exactly_the_other_4xx_row(
    status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: the failure statuses listed (the guide's, 409 added) but one other 4xx missing, whose body is then
    # read as the answer
    listed = tuple(s for s in (400, 401, 402, 403, 404, 408, 409, 429, *outcomes.OTHER_4XX) if s != status)
    _tools_api(STATUS_TEST, f"if reply.status in {listed} or reply.status >= 500:", monkeypatch)
    fails_exactly_shown(outcomes, "FAILURES", CODES, {E8_OTHER}, SHOWN, monkeypatch)


# -- E5: an empty 200 body --------------------------------------------------------------------------

E5 = "200 with an empty body"
PARSED = "return parse_json(reply.body)"


def test_the_reference_passes_the_empty_body_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert outcomes.SHAPES["empty-body"] == {"search": b"", "messages": b""}
    passes_rows(outcomes, "FAILURES", CODES, (E5,), monkeypatch)
    only_fetch_table("FAILURES", monkeypatch)
    passes_rows(fetch, "FAILURES", MAPPING, (E5,), monkeypatch)


def test_an_empty_body_read_as_nothing_found_fails_exactly_the_empty_body_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: a 200 with no body at all answered as a search with no results, a fetch as an empty page
    _tools_api(PARSED, PARSED + " if reply.body.strip() else {'results': [], 'content': ''}", monkeypatch)
    fails_exactly_shown(outcomes, "FAILURES", CODES, {E5}, SHOWN, monkeypatch)
    only_fetch_table("FAILURES", monkeypatch)
    fails_exactly_shown(fetch, "FAILURES", MAPPING, {E5}, SHOWN, monkeypatch)


# -- E7 and E2: what a failure quotes ---------------------------------------------------------------

E7 = "302 whose Location quotes the key"
E2 = {"401 whose text/plain body quotes the key", "401 whose body is a JSON string quoting the key"}
REDIRECTED = 'f"{label} request was redirected (HTTP {response.status_code}); redirects are not followed",'
STATUS_ERROR = "return WebError(WebErrorCode.PROVIDER_ERROR, scrub_secrets(text, hidden))"


def test_the_reference_passes_the_location_and_raw_body_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(outcomes, "SECRET_ECHOES", ECHO, (E7, *sorted(E2)), monkeypatch)


def test_the_refused_location_named_unscrubbed_fails_exactly_the_302_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the redirect failure naming the Location it refused as the upstream wrote it, the key included
    patch_reading(_deepseek_http, "_exchange", REDIRECTED, REDIRECTED.replace(
        "(HTTP {response.status_code});", "(HTTP {response.status_code}) to {response.headers.get('location')};"),
        monkeypatch)
    fails_exactly_shown(outcomes, "SECRET_ECHOES", ECHO, {E7}, SHOWN, monkeypatch)


def test_a_body_that_is_no_json_object_quoted_as_sent_fails_exactly_the_raw_body_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: an error body the provider finds no message in (plain text, a JSON string) quoted as sent, only the
    # message read out of a JSON object scrubbed
    patch_reading(_deepseek_http, "api_status_error", STATUS_ERROR, STATUS_ERROR.replace(
        "scrub_secrets(text, hidden))", "scrub_secrets(text, hidden) + ((': ' + ' '.join(reply.body.decode("
        "'utf-8', 'replace').split())[:300]) if detail is None and reply.body.strip() else ''))"), monkeypatch)
    fails_exactly_shown(outcomes, "SECRET_ECHOES", ECHO, E2, SHOWN, monkeypatch)


def test_a_scrubbed_raw_body_quotedpasses_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: whether and how much of the upstream's text a failure quotes; the body quoted once scrubbed passes
    patch_reading(_deepseek_http, "api_status_error", STATUS_ERROR, STATUS_ERROR.replace(
        "scrub_secrets(text, hidden))", "scrub_secrets(text + ((': ' + reply.body.decode('utf-8', 'replace')[:300]) "
        "if detail is None else ''), hidden))"), monkeypatch)
    passes_rows(outcomes, "SECRET_ECHOES", ECHO, tuple(sorted(E2)), monkeypatch)


# -- E3: a request the provider's own deadline ended ------------------------------------------------

E3 = "answered past timeout_s"
SCHEDULED = "reply = await scheduled(provider, conf, route, (base, key), send, provider.label)"


def _past_deadline(then: str) -> str:
    return (f"try:\n        {SCHEDULED}\n    except WebError as exc:\n        if 'timed out' not in exc.message:\n"
            f"            raise\n        {then}")


def test_the_reference_passes_the_past_deadline_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(outcomes, "FAILURES", CODES, (E3,), monkeypatch)
    only_fetch_table("FAILURES", monkeypatch)
    passes_rows(fetch, "FAILURES", MAPPING, (E3,), monkeypatch)


def test_a_request_past_its_deadline_read_as_an_empty_success_fails_exactly_the_past_deadline_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the provider's own deadline swallowed into a search with no results, a fetch of an empty page
    _tools_api(SCHEDULED, _past_deadline("return {'results': [], 'content': ''}"), monkeypatch)
    fails_exactly_shown(outcomes, "FAILURES", CODES, {E3}, SHOWN, monkeypatch)
    only_fetch_table("FAILURES", monkeypatch)
    fails_exactly_shown(fetch, "FAILURES", MAPPING, {E3}, SHOWN, monkeypatch)


@pytest.mark.parametrize("code", ["ABORTED", "FETCH_TIMEOUT"])
def test_a_request_past_its_deadline_under_another_codepasses_rows(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # open: which WEB_* code a request the provider's own deadline ended carries (WEB_ABORTED, WEB_FETCH_TIMEOUT)
    _tools_api(SCHEDULED, _past_deadline(f"raise WebError(WebErrorCode.{code}, exc.message) from exc"), monkeypatch)
    passes_rows(outcomes, "FAILURES", CODES, (E3,), monkeypatch)
    only_fetch_table("FAILURES", monkeypatch)
    passes_rows(fetch, "FAILURES", MAPPING, (E3,), monkeypatch)


def test_a_target_keeping_no_configured_deadline_passes_the_past_deadline_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # open (a review found the rows failing it): a target that does not keep to configure's timeout_s (here a fixed
    # 30 s, as no seed sets a deadline) waits for the late answer and shows it; a success with that answer is right
    built = targets.reference_settings
    waited: list[float] = []

    def fixed_deadline(config: Any) -> Any:
        waited.append(config.timeout_s)
        return built(dataclasses.replace(config, timeout_s=30.0))

    monkeypatch.setattr(targets, "reference_settings", fixed_deadline)
    passes_rows(outcomes, "FAILURES", CODES, (E3,), monkeypatch)
    only_fetch_table("FAILURES", monkeypatch)
    passes_rows(fetch, "FAILURES", MAPPING, (E3,), monkeypatch)
    assert outcomes.LATE_DEADLINE in waited  # the rows asked for their short deadline, and it was not kept


# -- E4: a transport failure handed to the local HTTP fetcher ---------------------------------------

E4 = "a cut Fetch API answer for a page the local fetcher could read"


def _falling_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Fetch API provider handing a transport failure or its own timeout to the runtime's local HTTP fetcher
    (the hunt's wrong reading: the service unreachable, so the page is fetched here)."""
    right_fetch, right_build = deepseek_fetch_api.DeepSeekFetchApi.fetch, runtime.build_runtime

    async def fetch_or_fall_back(self: Any, request: Any, ctx: Any) -> Any:
        try:
            return await right_fetch(self, request, ctx)
        except WebError as error:
            if "request failed" in error.message or "timed out" in error.message:
                return await self._fallback.fetch(request, ctx)
            raise

    def build(settings: Any, *args: Any, http_fetch: Any = None, **kwargs: Any) -> Any:
        built = right_build(settings, *args, http_fetch=http_fetch, **kwargs)
        for resource in built.resources:
            if isinstance(resource, deepseek_fetch_api.DeepSeekFetchApi):
                resource._fallback = http_fetch or runtime._HttpFetchPerOperation(settings)  # type: ignore[attr-defined]
        return built

    monkeypatch.setattr(deepseek_fetch_api.DeepSeekFetchApi, "fetch", fetch_or_fall_back)
    monkeypatch.setattr(runtime, "build_runtime", build)
    monkeypatch.setattr(targets, "build_runtime", build)


def test_the_reference_passes_the_cut_answer_row(monkeypatch: pytest.MonkeyPatch) -> None:
    only_fetch_table("FALLBACK", monkeypatch)
    passes_rows(fetch, "FALLBACK", MAPPING, (E4,), monkeypatch)


def test_a_transport_failure_fetched_locally_fails_exactly_the_cut_answer_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a Fetch API transport failure (the service unreachable, its answer cut off) handed to the local HTTP
    # fetcher, which reads the page itself; the statuses the other rows inject fail for good
    _falling_back(monkeypatch)
    only_fetch_table("FALLBACK", monkeypatch)
    assert failing_rows(fetch, "FALLBACK", MAPPING, monkeypatch) == {E4}


# -- E6: a transport failure's text -----------------------------------------------------------------

E6 = "a malformed status line quoting the key"
TRANSPORT_TEXT = 'text = scrub_prefix(f"{type(exc).__name__}: {exc}", 500, hidden)'


def test_the_reference_passes_the_malformed_status_line_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(outcomes, "SECRET_ECHOES", ECHO, (E6,), monkeypatch)


def test_a_transport_failure_quoted_unscrubbed_fails_exactly_the_malformed_status_line_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the HTTP library's error text (h11's "illegal status line: bytearray(b'XTTP/1.1 401 bad key sk-...')")
    # quoted in the failure as it stands, unscrubbed
    patch_reading(_deepseek_http, "_exchange", TRANSPORT_TEXT, 'text = f"{type(exc).__name__}: {exc}"', monkeypatch)
    fails_exactly_shown(outcomes, "SECRET_ECHOES", ECHO, {E6}, SHOWN, monkeypatch)

