"""Endpoint certification: which DeepSeek web protocols and routes an endpoint serves, and
whether each answers as the contract says (seed 001).

Each check runs one named probe (see :mod:`.probes`), either live against the given bases with
the given key, or offline by replaying that probe's cassette from ``cassette_dir``.

Route discovery, as decided: each route is discovered on its own, by the first check that uses
it — ``messages.search`` for Messages, ``search-api.basic`` for ``POST {tools}/search`` and
``fetch-api.success`` for ``POST {tools}/fetch`` (Search and Fetch share one base, but a gateway
may serve one without the other). A route found *not served* has every check that uses it
SKIPPED with the reason :data:`NOT_SERVED`: a gateway that serves Messages web search and has no
``/v1/tools`` routes is a legitimate deployment (seed 001 keeps Messages search for it), so its
missing routes are reported, not failed. What counts as not served:

* Messages and Search document no 404 at all, so a 404 to their discovery probe means the route
  is missing;
* Fetch answers 404 ``failed to fetch URL`` (in the API's error envelope) when a page has no
  usable content, so a 404 there means the route is missing only when the body is *not* an API
  error envelope (a framework's or proxy's own not-found page), or when the envelope's message
  is not the API's ``failed to fetch`` and a request with an invalid URL (probe
  ``fetch-api.bad-url``, which a served route rejects with 400) gets a 404 as well. If that
  confirmation cannot run, the route counts as served and the check fails with the 404's message
  rather than hiding behind a skip.

A base that was not given skips its checks with ``no <messages|tools> base given``. A check
that cannot run (timeout, unmatched replay, crash) is ERROR; a served route that answers
wrongly is FAILED.

Offline (``cassette_dir``): a missing directory, or one that holds no cassette for any endpoint
check, raises ValueError — replaying nothing must never produce an all-skipped run that looks
like a pass. A *partially* populated directory (e.g. only some probes re-recorded) runs what it
has and skips each check whose cassette is missing with ``no cassette <protocol>/<name>.yaml``.
A probe the endpoint failed while recording (a status the probe did not expect, no answer in
time) is not missing: ``dsweb record`` keeps its cassette marked ``failed`` in the provenance, and
the replay judges the recorded answer by the same verdict as a live run, so the check gets the
outcome that answer earns live. The mark alone decides nothing: mostly the check FAILS (the probe's
expected statuses and the check's verdict agree), but a check whose verdict is wider than its
probe's statuses passes (``endpoint.fetch.unavailable_page`` accepts a recorded 500 although probe
``fetch-api.not-found`` expects 404), a route found not served is SKIPPED, as live, and a probe
recorded without any answer is ERROR, naming the recorded failure (kept in the details as
``recorded_failure`` whatever the outcome).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._exceptions import WebError
from .._types import FetchResult, SearchResult
from ..replay.cassettes import cassette_replay, provenance_of
from ..replay.probes import Probe, ProbeContext, ProbeRun, RateLimiter, envelope_message, get_probe
from ..replay.record import replay_context
from .model import Check, CheckResult, Outcome, TargetInfo

__all__ = [
    "ENDPOINT_CHECKS",
    "ENDPOINT_SPECS",
    "MAX_RPS",
    "NOT_SERVED",
    "UNANSWERED_LIMIT",
    "EndpointCheck",
    "EndpointStopped",
    "Progress",
    "certify_endpoint",
    "endpoint_description",
    "run_endpoint",
]

MAX_RPS = 4.0  # live request starts per second: under the account-wide 5 QPS of seed 001
NOT_SERVED = "route not served (404)"
UNANSWERED_LIMIT = 3  # live checks in a row without any HTTP answer (timeout, connection lost) stop the run
Progress = Callable[[CheckResult], None]
_LIVE_FETCH_URL = "https://api-docs.deepseek.com/"  # used only when the search check found no URL


Verdict = Callable[[ProbeRun], str | None]  # None: passed; otherwise the failure reason


def _status(run: ProbeRun) -> str:
    return ", ".join(str(e.status) for e in run.exchanges) or "none"


def _outcome(run: ProbeRun) -> object:
    return run.outcomes[0] if run.outcomes else None


def _sources(minimum: int) -> Verdict:
    def verdict(run: ProbeRun) -> str | None:
        result = _outcome(run)
        if not isinstance(result, SearchResult):
            return f"expected search results, got {_describe(result)} (HTTP {_status(run)})"
        if len(result.sources) < minimum:
            return f"expected at least {minimum} source(s), got {len(result.sources)}"
        return None

    return verdict


def _thinking_blocks(run: ProbeRun) -> tuple[int, list[str]]:
    """How many thinking blocks the run's Messages answers held, and which kept answers could not be read
    (those are not judged: never counted as holding none)."""
    found, unread = 0, []
    for number, exchange in enumerate(run.exchanges, 1):
        if exchange.answer is None:
            continue
        try:
            answer = json.loads(exchange.answer)
        except (ValueError, RecursionError) as exc:
            unread.append(f"answer {number} ({len(exchange.answer)} bytes) is not readable JSON: {exc}"[:300])
            continue
        content = answer.get("content") if isinstance(answer, dict) else None
        if isinstance(content, list):
            found += sum(
                1 for b in content if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")
            )
    return found, unread


def _messages_sources(run: ProbeRun) -> str | None:
    """At least one source, and no thinking block: the probe sends ``thinking: {"type": "disabled"}``."""
    reason = _sources(1)(run)
    if reason is not None:
        return reason
    blocks, _ = _thinking_blocks(run)
    if blocks:
        return f"the answer holds {blocks} thinking block(s) although the request disabled thinking"
    return None


def _messages_notes(run: ProbeRun) -> dict[str, Any]:
    """What the Messages check could not judge: an answer it could not read for thinking blocks."""
    _, unread = _thinking_blocks(run)
    if not unread:
        return {}
    return {"not judged": {"thinking": "; ".join(unread) + ": whether it holds a thinking block was not judged"}}


def _sources_at_most(maximum: int) -> Verdict:
    def verdict(run: ProbeRun) -> str | None:
        result = _outcome(run)
        if not isinstance(result, SearchResult):
            return f"expected search results, got {_describe(result)} (HTTP {_status(run)})"
        if len(result.sources) > maximum:
            return f"asked for count {maximum}, got {len(result.sources)} results: count was not honoured"
        return None

    return verdict


def _status_is(*expected: int) -> Verdict:
    def verdict(run: ProbeRun) -> str | None:
        statuses = {e.status for e in run.exchanges}
        if not statuses or not statuses <= set(expected):
            return f"expected HTTP {'/'.join(map(str, expected))}, got {_status(run)}"
        if not isinstance(_outcome(run), WebError):
            return "the provider did not report the rejection as an error"
        return None

    return verdict


# A whole HTML document where Markdown belongs: its text opens with a doctype, <html> or <body> tag.
# Conservative on purpose: Markdown may hold inline HTML, but never starts as an HTML document.
_HTML_DOCUMENT = re.compile(r"(?i)\A\s*(?:<!doctype\s+html|<html[\s>]|<body[\s>])")


def _fetched(run: ProbeRun) -> str | None:
    result = _outcome(run)
    if not isinstance(result, FetchResult):
        return f"expected a fetched page, got {_describe(result)} (HTTP {_status(run)})"
    if not result.body.content.strip():
        return "the fetched Markdown body is empty"
    if _HTML_DOCUMENT.match(result.body.content):
        return "the fetched body is an HTML document (it opens with <!DOCTYPE html>, <html> or <body>), not Markdown"
    return None


def _fetch_failure(run: ProbeRun) -> str | None:
    statuses = [e.status for e in run.exchanges]
    if not statuses or any(s < 400 or s in (401, 402, 429) for s in statuses):
        return f"expected a retrieval failure (404, or another non-auth error status), got {_status(run)}"
    return None


def _describe(value: object) -> str:
    if isinstance(value, WebError):
        return f"error {value.code}: {value.message}"
    return type(value).__name__


@dataclass(frozen=True)
class EndpointCheck:
    check: Check
    probe: str
    verdict: Verdict
    rule: str = ""  # the catalogue's rule text; empty: the description and what the probe sends
    # What the verdict could not judge (kept in the result's details, passed or not), e.g. an answer
    # it could not read: reported, never taken as a pass of that part.
    notes: Callable[[ProbeRun], dict[str, Any]] | None = None

    @property
    def route(self) -> str:
        """``messages``, ``search`` or ``fetch``: the route the check's probe uses."""
        return get_probe(self.probe).route


def _check(cid: str, description: str, capability: str) -> Check:
    return Check(cid, description, "001", capability)


# A validation rejection: seed 001 says only that the API rejects such values, not with which status.
# 400 is what the service has been seen to answer; 422 ("invalid parameters") is DeepSeek's other
# documented status for a request it cannot accept, so a right service may use either.
_VALIDATION = (400, 422)
_VALIDATION_NOTE = (
    "Either status is a rejection: seed 001 says the value is rejected, not which 4xx says so, and 422 "
    "(invalid parameters) is the service's other documented status for a request it cannot accept."
)


# Order matters: the first check of each route discovers whether that route is served.
ENDPOINT_SPECS: tuple[EndpointCheck, ...] = (
    EndpointCheck(
        _check(
            "endpoint.messages.web_search",
            "Messages with the web_search server tool returns structured sources",
            "messages.web_search",
        ),
        "messages.search",
        _messages_sources,
        # From a hunt (Q-G9): a Messages gateway that stripped thinking: disabled (so the answer
        # gained a thinking block) was certified: only the sources were looked at.
        "POST {messages}/messages with the web_search server tool and thinking: {\"type\": \"disabled\"} must "
        "answer HTTP 200 with at least one web_search_tool_result source and no thinking block: seed 001 has "
        "the Messages path send thinking disabled so the auxiliary request does no reasoning work, and a "
        "service that honours it answers without thinking (probe messages.search). Catches: a gateway that "
        "drops the thinking parameter, so the answer carries reasoning the request turned off. The whole "
        "answer is read, however large; one that cannot be read as JSON is reported as not judged for "
        "thinking (in the result's details), never counted as holding none.",
        _messages_notes,
    ),
    EndpointCheck(
        _check(
            "endpoint.auth.rejects_bad_key", "Messages rejects a wrong API key with HTTP 401", "messages.web_search"
        ),
        "messages.auth-invalid",
        _status_is(401),
    ),
    EndpointCheck(
        _check("endpoint.tools.search", "POST {tools}/search returns results for a plain query", "tools.search"),
        "search-api.basic",
        _sources(1),
    ),
    EndpointCheck(
        _check("endpoint.tools.fetch", "POST {tools}/fetch returns a page as Markdown", "tools.fetch"),
        "fetch-api.success",
        _fetched,
        # From a hunt (Q-G5): an endpoint answering the page's HTML where Markdown belongs was certified.
        "POST {tools}/fetch for a fetchable page must answer HTTP 200 with a non-empty body that is not a whole "
        "HTML document (one opening with <!DOCTYPE html>, <html> or <body>): seed 001 has the Fetch API return "
        "the page as Markdown (probe fetch-api.success; live, it fetches the first URL the Search check found). "
        "Inline HTML inside Markdown is allowed. Catches: an endpoint that returns the page's HTML unconverted.",
    ),
    EndpointCheck(
        _check("endpoint.tools.auth.rejects_bad_key", "Search rejects a wrong API key with HTTP 401", "tools.search"),
        "search-api.auth-invalid",
        _status_is(401),
    ),
    # From a hunt (Q-G1): a Fetch route that answered any key (a gateway putting its own key on
    # every request) was certified: only the Search route's 401 was asked for.
    EndpointCheck(
        _check(
            "endpoint.tools.fetch.auth.rejects_bad_key", "Fetch rejects a wrong API key with HTTP 401", "tools.fetch"
        ),
        "fetch-api.auth-invalid",
        _status_is(401),
        "POST {tools}/fetch with a key no service issued must answer HTTP 401: seed 001 has both the Search and "
        "the Fetch API authenticate every request with the caller's API key (probe fetch-api.auth-invalid). "
        "Catches: a Fetch route (or a gateway in front of it) that answers any key.",
    ),
    # From a hunt (Q-G8): a gateway that puts its own key on a request carrying none was certified.
    EndpointCheck(
        _check(
            "endpoint.tools.auth.requires_key",
            "Search rejects a request without any credential with HTTP 401 or 403",
            "tools.search",
        ),
        "search-api.auth-missing",
        _status_is(401, 403),
        "POST {tools}/search without an Authorization header must be refused with HTTP 401 or 403: seed 001 has "
        "every Search request authenticate with the caller's API key as a Bearer credential "
        "(probe search-api.auth-missing). The service is known to answer 401 to a wrong key; what it answers a "
        "request with no credential at all is not decided, and a service or gateway may refuse it as forbidden, "
        "so either status is a refusal. Catches: a gateway that injects its own key into a request that carries "
        "none and answers 200.",
    ),
    EndpointCheck(
        _check(
            "endpoint.search.empty_results_ok",
            "a query matching nothing answers HTTP 200 (results may be empty)",
            "tools.search",
        ),
        "search-api.empty",
        _sources(0),
    ),
    EndpointCheck(
        _check(
            "endpoint.search.query_limit",
            "a 129-character query is rejected with HTTP 400 or 422, not truncated",
            "tools.search",
        ),
        "search-api.too-long",
        _status_is(*_VALIDATION),
        "A query of 129 characters must be rejected with HTTP 400 or 422: seed 001 has the service enforce a "
        "query of 1-128 characters and reject a longer one rather than cut it (probe search-api.too-long). "
        + _VALIDATION_NOTE
        + " Catches: an endpoint that truncates an over-long query and answers 200.",
    ),
    # From a hunt (Q-G3): an endpoint counting the query in UTF-8 bytes (or UTF-16 units) rejected
    # 128-character CJK or astral-plane queries and was still certified: only a 129-letter ASCII
    # query was sent.
    EndpointCheck(
        _check(
            "endpoint.search.query_characters",
            "a 128-character CJK and astral-plane query is accepted (the limit counts characters)",
            "tools.search",
        ),
        "search-api.query-characters",
        _sources(0),
        "A query of 128 characters must be accepted whatever its script: seed 001 has the service enforce a "
        "limit of 1-128 Unicode characters, i.e. code points. The probe's query mixes CJK (3 UTF-8 bytes each) "
        "and astral-plane characters (4 UTF-8 bytes, 2 UTF-16 units each): 448 bytes, 192 UTF-16 units "
        "(probe search-api.query-characters). Only the query's unit is decided: seed 001 names the query's limit "
        "in Unicode characters, but says of ori_question only that the API limits it to 128 characters, and its "
        "client counts text in UTF-16 units, so a service counting ori_question that way is not ruled out and no "
        "check sends one past 128 UTF-16 units. Catches: a query limit counted in UTF-8 bytes or UTF-16 code units.",
    ),
    # From a hunt (Q-G11): an endpoint answering an empty query with 200 and no results was certified.
    EndpointCheck(
        _check("endpoint.search.query_empty", "an empty query is rejected with HTTP 400 or 422", "tools.search"),
        "search-api.query-empty",
        _status_is(*_VALIDATION),
        "An empty query must be rejected with HTTP 400 or 422: seed 001 has the service enforce a query of 1-128 "
        "characters, so zero characters is outside it (probe search-api.query-empty). "
        + _VALIDATION_NOTE
        + " Catches: an endpoint that answers an empty query as a search that found nothing.",
    ),
    EndpointCheck(
        _check(
            "endpoint.search.operators",
            "a query with site:/lang:/after:/-term/phrase operators is accepted",
            "tools.search",
        ),
        "search-api.operators",
        _sources(0),
    ),
    EndpointCheck(
        _check("endpoint.search.ori_question", "a 128-character non-ASCII ori_question is accepted", "tools.search"),
        "search-api.ori-question-cut",
        _sources(0),
    ),
    # From a hunt (Q-G7): an endpoint that dropped, or silently cut, an over-long ori_question was
    # certified: nothing sent one.
    EndpointCheck(
        _check(
            "endpoint.search.ori_question_limit",
            "a 129-character ori_question is rejected with HTTP 400 or 422",
            "tools.search",
        ),
        "search-api.ori-question-too-long",
        _status_is(*_VALIDATION),
        "An ori_question of 129 characters must be rejected with HTTP 400 or 422: seed 001 says the API rejects "
        "longer values than its 128-character limit (that is why the client cuts it). The probe sends the "
        "field raw, since the reference client never sends one (probe search-api.ori-question-too-long). "
        + _VALIDATION_NOTE
        + " Catches: an endpoint that drops or truncates an over-long ori_question and answers 200.",
    ),
    EndpointCheck(
        _check(
            "endpoint.search.ori_question_blank",
            "a blank ori_question is rejected with HTTP 400 or 422",
            "tools.search",
        ),
        "search-api.ori-question-blank",
        _status_is(*_VALIDATION),
        "A blank ori_question must be rejected with HTTP 400 or 422: seed 001 says the API rejects blank values "
        "(that is why the client omits the field when there is no prompt). Sent raw "
        "(probe search-api.ori-question-blank). "
        + _VALIDATION_NOTE
        + " Catches: an endpoint that drops a blank ori_question and answers 200.",
    ),
    # From a hunt (Q-G4): an endpoint that ignored count (always the service's 10) or capped it below
    # 50 was certified: no check looked at count.
    EndpointCheck(
        _check("endpoint.search.count_lowered", "count 3 gives at most 3 results", "tools.search"),
        "search-api.count-lowered",
        _sources_at_most(3),
        "A search sent with count 3 must answer HTTP 200 with at most 3 results: seed 001 sends count as the "
        "number of results wanted (the configured 1-50, lowered to the request's smaller result bound) "
        "(probe search-api.count-lowered). Catches: an endpoint that ignores count and answers its default 10.",
    ),
    EndpointCheck(
        _check("endpoint.search.count_max", "count 50 is accepted", "tools.search"),
        "search-api.count-max",
        _sources(0),
        "A search sent with count 50 must answer HTTP 200: seed 001 lets count be configured from 1 to 50 "
        "(probe search-api.count-max). Catches: an endpoint whose count range stops short of 50.",
    ),
    EndpointCheck(
        _check(
            "endpoint.fetch.unavailable_page", "an unavailable page is a retrieval failure (HTTP 404)", "tools.fetch"
        ),
        "fetch-api.not-found",
        _fetch_failure,
    ),
)
# The endpoint checks, in run order (ids are stable; ``dsweb certify --list/--only`` shows them).
ENDPOINT_CHECKS: tuple[Check, ...] = tuple(spec.check for spec in ENDPOINT_SPECS)

_DISCOVERY = {"messages": "messages.search", "search": "search-api.basic", "fetch": "fetch-api.success"}
_CAPABILITY = {"messages": "messages.web_search", "search": "tools.search", "fetch": "tools.fetch"}
_FETCH_CONFIRM = "fetch-api.bad-url"  # an invalid URL: a served Fetch route answers 400, never 404
_FETCH_FAILED = re.compile(r"(?i)failed to fetch")  # the API's own 404 message for an unusable page


class EndpointStopped(Exception):
    """A live run stopped early: :data:`UNANSWERED_LIMIT` checks in a row got no HTTP answer at all.
    The checks that finished were already passed to ``progress``."""


def _unanswered(run: ProbeRun | None) -> bool:
    """No HTTP answer at all: the deadline fired (``run`` None) or the run recorded no exchange."""
    return run is None or not run.exchanges


def _base_name(route: str) -> str:
    return "messages" if route == "messages" else "tools"


@dataclass
class _Runner:
    messages_base: str | None
    tools_base: str | None
    cassette_dir: Path | None
    api_key: str | None
    timeout_s: float
    limiter: RateLimiter | None = None

    def has_cassette(self, probe: Probe) -> bool:
        return self.cassette_dir is not None and (self.cassette_dir / probe.cassette).is_file()

    def recorded_failure(self, probe: Probe) -> str | None:
        """Why ``dsweb record`` marked the probe's cassette failed (provenance ``failed``), or None."""
        if self.cassette_dir is None:
            return None
        try:
            failed = provenance_of(self.cassette_dir / probe.cassette).get("failed")
        except Exception:  # an unreadable cassette: the replay itself reports it
            return None
        return failed if isinstance(failed, str) else None

    async def run(self, probe: Probe, params: dict[str, Any]) -> ProbeRun:
        if self.cassette_dir is not None:
            cassette = self.cassette_dir / probe.cassette
            ctx = replay_context(probe, cassette)
            with cassette_replay(cassette):
                async with asyncio.timeout(self.timeout_s):
                    return await probe.run(ctx)
        if self.limiter is None:
            self.limiter = RateLimiter(MAX_RPS)
        ctx = ProbeContext(
            self.messages_base,
            self.tools_base,
            self.api_key or "",
            params,
            self.timeout_s,
            self.limiter,
            overrides=dict(probe.settings),  # e.g. deepseek_api.count = 50, as the cassette records them
        )
        async with asyncio.timeout(self.timeout_s + 5.0):
            return await probe.run(ctx)


def _first_404(run: ProbeRun) -> bytes | None:
    """The body of the run's only exchange when that exchange answered 404 (b"" if it had none)."""
    if [e.status for e in run.exchanges] != [404]:
        return None
    return run.exchanges[0].body or b""


async def _route_missing(runner: _Runner, route: str, run: ProbeRun, details: dict[str, Any]) -> bool:
    """Whether the discovery probe's answer says ``route`` is not served (see the module docstring)."""
    body = _first_404(run)
    if body is None:
        return False
    if route != "fetch":
        return True  # Messages and Search document no 404: the route itself is missing
    message = envelope_message(body)
    if message is None:
        details["not_served_evidence"] = "HTTP 404 without the API's error envelope"
        return True
    if _FETCH_FAILED.search(message):
        return False  # the API's own "failed to fetch URL": the route is served
    # An enveloped 404 that is not the API's fetch failure, e.g. a gateway's generic "Not Found":
    # ask with an invalid URL, which a served route rejects (400) before fetching anything.
    confirm = get_probe(_FETCH_CONFIRM)
    if runner.cassette_dir is not None and not runner.has_cassette(confirm):
        return False
    try:
        check = await runner.run(confirm, dict(confirm.params))
    except Exception:  # undecided: count the route as served; the check then reports the 404
        return False
    details["confirmation"] = {"probe": confirm.id, "statuses": [e.status for e in check.exchanges]}
    if _first_404(check) is not None:
        details["not_served_evidence"] = f"HTTP 404 ({message[:200]}), also to an invalid URL"
        return True
    return False


async def _certify(runner: _Runner, progress: Progress | None) -> tuple[list[CheckResult], set[str]]:
    results: list[CheckResult] = []
    served: set[str] = set()
    skip: dict[str, str] = {}
    found_url: str | None = None
    offline = runner.cassette_dir is not None
    silent = 0  # live checks in a row that got no HTTP answer
    for item in ENDPOINT_SPECS:
        if silent >= UNANSWERED_LIMIT:
            raise EndpointStopped(
                f"stopped after {silent} checks in a row got no HTTP answer within --timeout {runner.timeout_s:g}s "
                f"(last: {results[-1].check.id}: {results[-1].reason.splitlines()[0][:120]})"
            )
        check, probe, route = item.check, get_probe(item.probe), item.route
        started = time.perf_counter()
        details: dict[str, Any] = {"probe": probe.id}

        def done(
            outcome: Outcome,
            reason: str = "",
            *,
            check: Check = check,
            started: float = started,
            details: dict[str, Any] = details,
        ) -> None:
            elapsed = time.perf_counter() - started
            result = CheckResult(check, outcome, reason, dict(details), elapsed)
            results.append(result)
            if progress is not None:
                progress(result)

        if route in skip:
            done(Outcome.SKIPPED, skip[route])
            continue
        if not offline and probe.base(runner.messages_base, runner.tools_base) is None:
            skip[route] = f"no {_base_name(route)} base given"
            done(Outcome.SKIPPED, skip[route])
            continue
        if offline:
            details["cassette"] = probe.cassette
            if not runner.has_cassette(probe):
                done(Outcome.SKIPPED, f"no cassette {probe.cassette}")
                continue
            failed = runner.recorded_failure(probe)
            if failed:
                details["recorded_failure"] = failed  # dsweb record kept what the endpoint answered
        elif runner.api_key is None:
            done(Outcome.ERROR, "no API key given for a live run")
            continue
        params = dict(probe.params)
        if probe.id == "fetch-api.success" and not offline:
            params["url"] = found_url or _LIVE_FETCH_URL
        try:
            run = await runner.run(probe, params)
        except TimeoutError:
            silent += 0 if offline else 1
            done(Outcome.ERROR, f"timed out after {runner.timeout_s:g}s")
            continue
        except Exception as exc:  # replay mismatch, transport crash: the check could not run
            recorded = details.get("recorded_failure")
            prefix = f"the recording failed ({recorded}); " if recorded else ""
            done(Outcome.ERROR, f"{prefix}{type(exc).__name__}: {exc}"[:500])
            continue
        details["statuses"] = [e.status for e in run.exchanges]
        silent = silent + 1 if not offline and _unanswered(run) else 0
        if probe.id == _DISCOVERY[route] and await _route_missing(runner, route, run, details):
            skip[route] = NOT_SERVED
            done(Outcome.SKIPPED, NOT_SERVED)
            continue
        if run.exchanges:
            served.add(route)
        result = _outcome(run)
        if probe.id == "search-api.basic" and isinstance(result, SearchResult) and result.sources:
            found_url = result.sources[0].url
        reason = item.verdict(run)
        if item.notes is not None:
            details.update(item.notes(run))
        done(Outcome.PASSED if reason is None else Outcome.FAILED, reason or "")
    return results, served


def _checked_cassette_dir(cassette_dir: Path) -> Path:
    if not cassette_dir.exists():
        raise ValueError(f"cassette directory {cassette_dir} does not exist")
    if not cassette_dir.is_dir():
        raise ValueError(f"cassette directory {cassette_dir} is not a directory")
    if not any((cassette_dir / get_probe(spec.probe).cassette).is_file() for spec in ENDPOINT_SPECS):
        expected = ", ".join(sorted({get_probe(spec.probe).cassette for spec in ENDPOINT_SPECS})[:3])
        raise ValueError(
            f"cassette directory {cassette_dir} holds no cassette for any endpoint check "
            f"(expected <protocol>/<probe>.yaml files such as {expected})"
        )
    return cassette_dir


def _cassette_directory(cassette_dir: Path | str | None) -> Path | None:
    """The checked directory; a relative one is the working directory's, never the shipped cassettes' folder."""
    return _checked_cassette_dir(Path(os.path.abspath(cassette_dir))) if cassette_dir is not None else None


def endpoint_description(
    messages_base: str | None, tools_base: str | None, cassette_dir: Path | str | None = None
) -> TargetInfo:
    """The endpoint as a report names it (no capabilities: those are what a run finds served)."""
    if cassette_dir is not None:
        how = f"replayed from cassettes in {os.path.abspath(cassette_dir)}"
    else:
        how = f"live: messages={messages_base or '-'} tools={tools_base or '-'}"
    name = messages_base or tools_base or (os.path.abspath(cassette_dir) if cassette_dir is not None else "")
    return TargetInfo(kind="endpoint", description=f"DeepSeek web API endpoint ({how})", name=name)


async def run_endpoint(
    *,
    messages_base: str | None,
    tools_base: str | None,
    cassette_dir: Path | str | None = None,
    api_key: str | None = None,
    timeout_s: float = 30.0,
    progress: Progress | None = None,
) -> tuple[TargetInfo, list[CheckResult]]:
    """Run the endpoint checks live (bases + ``api_key``) or offline (``cassette_dir``), on the running loop.

    ``progress``, when given, is called with each :class:`CheckResult` as soon as its check
    completes, in run order (the same objects, in the same order, as the returned list); an
    exception it raises propagates and ends the run. ``timeout_s`` bounds each request; a live run
    in which :data:`UNANSWERED_LIMIT` checks in a row get no HTTP answer raises :class:`EndpointStopped`.

    Offline, ValueError is raised before anything runs when ``cassette_dir`` does not exist, is
    not a directory, or holds no cassette for any endpoint check; a partially populated directory
    runs what it has and skips the checks whose cassette is missing (``no cassette ...``). A
    relative ``cassette_dir`` is taken from the working directory.
    """
    directory = _cassette_directory(cassette_dir)
    runner = _Runner(messages_base, tools_base, directory, api_key, timeout_s)
    results, served = await _certify(runner, progress)
    capabilities = [_CAPABILITY[route] for route in ("messages", "search", "fetch") if route in served]
    info = endpoint_description(messages_base, tools_base, directory)
    return TargetInfo(info.kind, info.description, info.name, capabilities=tuple(capabilities)), results


def certify_endpoint(**options: Any) -> tuple[TargetInfo, list[CheckResult]]:
    """:func:`run_endpoint` (the same keyword arguments) on an event loop of its own."""
    return asyncio.run(run_endpoint(**options))
