#!/usr/bin/env python3
"""An example certification adapter: the reference implementation behind the JSON-lines protocol.

Run the suite through it with::

    dsweb certify --adapter "python scripts/example_adapter.py"

The protocol (documented in ``dsweb_ref/certification/adapter_protocol.py``): one JSON object per
line; the suite sends ``{"id", "method", "params"}`` on stdin, the adapter answers ``{"id",
"result"}``, ``{"id", "error": {"code", "message"}}`` or ``{"id", "cancelled": true}`` on stdout.
Requests overlap (``cancel`` arrives while a search runs), so stdin is read in its own task and
each call runs in its own task. Logs go to stderr only.

To certify another implementation, keep this shape and replace ``Adapter.configure``,
``Adapter.web_search`` and ``Adapter.web_fetch`` with calls into your code.

``--break MODE`` makes the adapter misbehave on purpose; the suite's own tests use it to prove
that each check catches the fault it names (``--help`` lists the modes). The seed 000/001 modes and
the check ids each one fails are tabled in tests/certification/test_breaks_end_to_end.py; the
seed 002 ones:

    ssrf-no-unwrap      IPv6 forms carrying IPv4 (mapped, NAT64, 6to4) judged as public -> ssrf.resolve.special_ranges
    ssrf-first-answer-only  only the first DNS answer is validated; the others are tried unchecked
                        when it fails                                   -> ssrf.resolve.mixed_answers
    ssrf-re-resolve     validates one lookup, then dials the answer of a fresh one -> ssrf.resolve.rebinding
    ssrf-redirect-unchecked  redirect targets are followed without any check -> ssrf.redirect.private
    ssrf-env-proxy      validated, then sent by a client that honours proxy variables -> ssrf.proxy.ignored
    ssrf-body-uncapped  the configured fetch_max_bytes ignored            -> ssrf.caps.body
    ssrf-hops-uncapped  the configured fetch_max_redirects ignored (up to 100 hops) -> ssrf.caps.redirects
    ssrf-no-deadline    no deadline over the whole fetch: it waits as long as the server -> ssrf.deadline
    ssrf-unwrap-then-is-global  embedded IPv4 unwrapped, then is_global: local-use NAT64 and
                        site-local fec0::/10 pass                      -> ssrf.resolve.special_ranges
    ssrf-other-family-unchecked  the first answer's address family validated; a fallback to the
                        other family (A then AAAA) dialled unchecked   -> ssrf.resolve.mixed_answers
    ssrf-redirect-first-hop-only  the first redirect target is checked, later ones are not -> ssrf.redirect.private
    ssrf-relative-unchecked  a Location without a scheme (//host too) followed unchecked -> ssrf.redirect.private
    ssrf-url-browser-parse  a URL with a backslash judged as a browser reads it, dialled where the
                        client reads it (after the '@')                -> ssrf.url.odd_text
    ssrf-deadline-per-hop  the deadline starts again at every redirect hop -> ssrf.deadline
    ssrf-hops-307-uncounted  307 and 308 hops are followed without counting them -> ssrf.caps.redirects
    evidence-model-call an evidence call also asks a model (Messages)  -> evidence.no_model_call
    evidence-no-urls    evidence lines lose their source URLs           -> evidence.lines_cite_results
    evidence-local-allowed  a refused local query is then sent to web search -> evidence.local_refused
    evidence-retry-allowed  no retry memory across calls of a conversation -> evidence.retry_refused
    evidence-no-query-floor  the page bound filled query after query (no source kept per query) -> evidence.diversity
    evidence-hosts-not-domains  diversity counted per host, not per registrable domain -> evidence.diversity
    evidence-retry-model  on [needs_retry] a model (Responses) is asked for a better query -> evidence.no_model_call
    evidence-local-few-forms  only file: (case-sensitive), C:\\ and ~/ taken for local paths -> evidence.local_refused
    evidence-retry-last-only  only the last attempt is remembered, not every earlier one -> evidence.retry_refused
    evidence-retry-single-only  a repeat is refused only in a one-query call, not in a list
                        -> evidence.retry_refused
    evidence-unsafe-snippets  URLs validated only when fetched: a refused result falls back to its
                        snippet and is cited                          -> evidence.unsafe_dropped
    evidence-snippet-only  pages fetched but never read: every line is a search snippet -> evidence.passages
    evidence-cite-candidates  the citation list holds every ranked result, not those that gave
                        evidence                                      -> evidence.lines_cite_results
    evidence-retry-only-when-empty  [needs_retry] only for a search that returned nothing, not for
                        one whose every result was dropped            -> evidence.unsafe_dropped
    evidence-page-lead  a page's first characters taken for its passage -> evidence.passages
    evidence-retry-zero-width  queries compared with their format characters (U+200B, BOM, soft
                        hyphen) kept                                  -> evidence.retry_refused
    evidence-retry-less-specific  a retry whose words were all in the failed query accepted
                        -> evidence.retry_refused
    evidence-retry-invented  a retry adding only an unsupported number or name accepted
                        -> evidence.retry_refused
    evidence-retry-no-question  the user's question ignored: a detail it states refused as invented
                        -> evidence.retry_refused
    evidence-designators-ignored  versions, models and years not read: the neighbouring model is
                        evidence                                      -> evidence.designators
    evidence-table-cells  a table row's cells without its label       -> evidence.table_rows
    evidence-engine-order  the engine's order passed through as the ranking -> evidence.own_ranking

``--variant NAME`` behaves differently from the reference in a way the seeds allow; the suite
must still certify it:

    ori-cut-keeps-space  ori_question keeps a space the 128-character cut leaves at its end
    retry-full-jitter    a backoff drawn from 0 up to its ceiling (a very short wait is possible)
    localization-trimmed  spaces around a localization address are trimmed, the address forwarded
    pacing-window        up to the rate start at once, then a sliding one-second window (no spreading)

Seed 003 (the standalone search, ``standalone_search`` / ``standalone_resolve``):

    standalone-budget            the search request asks for 4096 output tokens -> standalone.request.isolated
    standalone-no-bound          the JSON result is not cut to 24000 bytes      -> standalone.result.bounded
    standalone-accept-prose      prose without a native search is a success     -> standalone.prose.error
    standalone-mine-urls         URLs are read out of the summary when the
                                 search gave no structured sources              -> standalone.sources.structured_only
    standalone-all-sources       every result URL is kept (no cap, dedupe or
                                 scheme filter)                                 -> standalone.sources.filtered
    standalone-follow-redirects  a 3xx from the search backend is followed      -> standalone.redirect.not_followed
    standalone-leak-reasoning    the search model's thinking joins the summary  -> standalone.reasoning.withheld
    standalone-resolve-last-slash  web_search_model split at the last "/"       -> standalone.resolve.table
    standalone-bound-chars       the 24000 bound counted in characters of the
                                 JSON text, not its UTF-8 bytes                 -> standalone.result.bounded
    standalone-cited-sources-only  only results the summary mentions are kept   -> standalone.sources.filtered
    standalone-any-search-call   a Responses web_search_call counts as a search
                                 whatever its status                            -> standalone.prose.error
    standalone-citations-only    Responses sources read only from url_citation
                                 annotations (a search call's sources ignored)  -> standalone.sources.filtered
    standalone-failure-as-summary  a search request failing with 429 or 5xx answers
                                 a success whose summary reports the failure    -> standalone.prose.error
    standalone-leak-responses-reasoning  a Responses reasoning item is read as
                                 answer text                                    -> standalone.reasoning.withheld
    standalone-system-prompt     the search request also carries an instruction
                                 (Messages system, Responses instructions)      -> standalone.request.isolated
    standalone-tool-version      another native tool version than the backend
                                 documents (web_search_20260209, web_search_preview) -> standalone.request.isolated
    standalone-untitled-sources  a Responses source keeps its first entry's
                                 (empty) title, the url_citation's title lost    -> standalone.sources.titled
    standalone-broker-credentials  a broker or extension model counts as a local
                                 search account                                 -> standalone.resolve.table
    standalone-ignore-access-list  connection_access is ignored                 -> standalone.resolve.table

A seed-003 reading the seed leaves open, which must stay certified:

    standalone-open-fields       other wording around the query, max_uses on the tool, tool_choice and
                                 include on Responses (fields that carry no content)

In the LINGERING modes (early-answer-subtle, cancel-no-wait, cancel-single-early) an upstream
request's teardown takes LINGER seconds (as a graceful close might), which the correct code awaits
and the broken code does not: the answer then provably leaves before the connections close, so
the suite's check must catch it every time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import re
import sys
import threading
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, replace
from ipaddress import IPv6Address, ip_address
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpcore
import httpx

import dsweb_ref.settings as settings_module
from dsweb_ref import (
    CallContext,
    FetchRequest,
    FetchResult,
    SearchRequest,
    SearchResult,
    Source,
    WebError,
    WebErrorCode,
    __version__,
)
from dsweb_ref.certification.sandbox import SandboxNetwork
from dsweb_ref.certification.targets import TargetConfig, reference_settings
from dsweb_ref.netguard import AddressPolicy, IPAddress, PinnedNetworkBackend, Resolver, check_url, vet_host
from dsweb_ref.providers import _deepseek_http, _scheduler, deepseek_search_api
from dsweb_ref.providers.http_fetch import HttpFetchProvider
from dsweb_ref.providers.standalone_messages import MessagesStandaloneSearch
from dsweb_ref.providers.standalone_responses import ResponsesStandaloneSearch
from dsweb_ref.replay._bases import KEY_ENV, credential_environ
from dsweb_ref.runtime import Runtime, build_runtime, http_fetch_config, scripted_runtime
from dsweb_ref.settings import Settings
from dsweb_ref.standalone_accounts import resolve
from dsweb_ref.tools import (
    ToolResult,
    _evidence_guard,
    _evidence_passages,
    _evidence_rank,
    _evidence_units,
    _summary,
    error_result,
    evidence_search,
    merge_results,
    render_search,
)
from dsweb_ref.tools import web_search as web_search_tool
from dsweb_ref.tools._evidence_guard import normalized_query
from dsweb_ref.tools._evidence_passages import Choice, PageUnits, Pick
from dsweb_ref.tools._evidence_rank import Candidate
from dsweb_ref.tools.evidence_search import EvidenceContext, EvidenceSearchTool
from dsweb_ref.tools.standalone_search import (
    MAX_OUTPUT_TOKENS,
    MAX_RESULT_BYTES,
    SEARCH_TIMEOUT_S,
    StandaloneSearchTool,
    bound_sources,
    encode_result,
    parse_query,
)
from dsweb_ref.tools.web_search import WebSearchTool, parse_queries

BREAKS = (
    "thinking-enabled",
    "max-uses-fixed",
    "no-ori-cut",
    "ori-cut-utf16",
    "count-is-max-results",
    "snippet-from-summary",
    "last-citation-wins",
    "body-extra-key",
    "extra-header",
    "sequential",
    "messages-sequential",
    "early-answer",
    "early-answer-subtle",
    "report-sibling-abort",
    "miss-failure-after-success",
    "lost-failure-race",
    "ignore-cancel",
    "cancel-no-wait",
    "cancel-single-early",
    "follow-redirects",
    "accept-300-search",
    "accept-300-fetch",
    "silent-retry",
    "empty-is-error",
    "no-round-robin",
    "duplicate-url",
    "dedup-normalized-url",
    "truncated-from-merge-only",
    "text-uncapped",
    "single-labelled",
    "unbounded-text",
    "wrong-error-code",
    "accept-legacy-query",
    "cap-after-dedup",
    "dedup-folds-queries",
    "schema-extra-field",
    "fetch-normalizes-url",
    "fetch-404-as-page",
    "fetch-title-field",
    "label-single",
    "truncated-cap-only",
    "url-normalise-dedup",
    "generic-failure",
    "text-drops-answers",
    "batch-drops-snippets",
    "unbounded-answers",
    "text-drops-hostless",
    "url-run-on",
    "batch-no-prompt",
    "batch-count-uncapped",
    "fetch-whole-truncated",
    "ssrf-no-unwrap",
    "ssrf-first-answer-only",
    "ssrf-re-resolve",
    "ssrf-redirect-unchecked",
    "ssrf-env-proxy",
    "ssrf-body-uncapped",
    "ssrf-hops-uncapped",
    "ssrf-no-deadline",
    "ssrf-unwrap-then-is-global",
    "ssrf-other-family-unchecked",
    "ssrf-redirect-first-hop-only",
    "ssrf-relative-unchecked",
    "ssrf-url-browser-parse",
    "ssrf-deadline-per-hop",
    "ssrf-hops-307-uncounted",
    "evidence-model-call",
    "evidence-no-urls",
    "evidence-local-allowed",
    "evidence-retry-allowed",
    "evidence-no-query-floor",
    "evidence-hosts-not-domains",
    "evidence-retry-model",
    "evidence-local-few-forms",
    "evidence-retry-last-only",
    "evidence-retry-single-only",
    "evidence-unsafe-snippets",
    "evidence-snippet-only",
    "evidence-cite-candidates",
    "evidence-retry-only-when-empty",
    "evidence-page-lead",
    "evidence-retry-zero-width",
    "evidence-retry-less-specific",
    "evidence-retry-invented",
    "evidence-retry-no-question",
    "evidence-designators-ignored",
    "evidence-table-cells",
    "evidence-engine-order",
    "standalone-budget",
    "standalone-no-bound",
    "standalone-accept-prose",
    "standalone-mine-urls",
    "standalone-all-sources",
    "standalone-follow-redirects",
    "standalone-leak-reasoning",
    "standalone-resolve-last-slash",
    "retry-by-default",
    "retry-ignores-retry-after",
    "retry-402",
    "retry-cancel-late",
    "pacing-burst",
    "pacing-cancel-sends",
    "pacing-retries-unpaced",
    "localization-unvalidated",
    "retry-fetch-by-default",
    "pacing-by-default",
    "pacing-per-request",
    "retry-one-too-many",
    "retry-at-once",
    "retry-past-deadline",
    "localization-untrimmed",
    "localization-refused-late",
    "standalone-bound-chars",
    "standalone-cited-sources-only",
    "standalone-any-search-call",
    "standalone-citations-only",
    "standalone-leak-responses-reasoning",
    "standalone-failure-as-summary",
    "standalone-system-prompt",
    "standalone-tool-version",
    "standalone-untitled-sources",
    "standalone-broker-credentials",
    "standalone-ignore-access-list",
    "retry-deadline-per-attempt",
    "retry-503-only",
    "retry-after-429-only",
    "summary-by-default",
    "summary-budget-bytes",
    "summary-no-marker",
    "summary-total-per-source",
    "summary-cut-at-budget",
    "summary-total-off-by-one",
    "summary-blank-shown",
    "summary-stop-at-missing",
    "summary-in-batches",
    "metadata-summary-cut",
    "tool-error-empty",
    "error-echo-unscrubbed",
    "base-inferred",
    "fetch-malformed-as-empty",
    "no-results-is-empty",
    "tools-fixed-path",
)
# Modes that rebuild the standalone result from the backend's answer instead of the reference tool.
STANDALONE_REBUILT = (
    "standalone-failure-as-summary",
    "standalone-no-bound",
    "standalone-bound-chars",
    "standalone-cited-sources-only",
    "standalone-accept-prose",
    "standalone-mine-urls",
    "standalone-all-sources",
)
RESPONSES_BREAKS = (
    "standalone-any-search-call",
    "standalone-citations-only",
    "standalone-leak-responses-reasoning",
    "standalone-untitled-sources",
)
# Modes that rewrite the standalone search request (STANDALONE_REQUESTS: mode -> protocol -> change).
STANDALONE_REQUESTS: dict[str, dict[str, dict[str, Any]]] = {
    "standalone-system-prompt": {  # wrong: the request carries only the query and the native tool
        "messages": {"system": "You are a careful web search assistant. Answer in English."},
        "responses": {"instructions": "You are a careful web search assistant. Answer in English."},
    },
    "standalone-tool-version": {  # wrong: not the native tool version the backend documents
        "messages": {"tools": [{"type": "web_search_20260209", "name": "web_search"}]},
        "responses": {"tools": [{"type": "web_search_preview"}]},
    },
    "standalone-open-fields": {  # open: fields that carry no content
        "messages": {"tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 2}]},
        "responses": {"tool_choice": "required", "include": ["web_search_call.action.sources"]},
    },
}
VARIANTS = (
    "ori-cut-keeps-space", "retry-full-jitter", "localization-trimmed", "pacing-window", "standalone-open-fields",
)
# Breaks of rules only the conformance search route (provider "scripted") can show.
# Breaks of what each search of a batch sends (a one-query call stays right).
BATCH_REQUEST_BREAKS = ("batch-no-prompt", "batch-count-uncapped")
SCRIPTED_BREAKS = ("label-single", "truncated-cap-only", "url-normalise-dedup", "generic-failure", "text-drops-answers")
LINGERING = ("early-answer-subtle", "cancel-no-wait", "cancel-single-early")
LINGER = 0.3  # seconds an upstream request takes to tear down once cancelled, in the LINGERING modes
OWN_BATCH = (
    "early-answer",
    "early-answer-subtle",
    "report-sibling-abort",
    "miss-failure-after-success",
    "lost-failure-race",
    "no-round-robin",
    "duplicate-url",
    "dedup-normalized-url",
    "truncated-from-merge-only",
    "text-uncapped",
)
CAPABILITIES = (
    "web_search",
    "web_fetch",
    "messages-search",
    "search-api",
    "fetch-api",
    "cancel",
    "ssrf-test-mode",
    "evidence-search",
    "standalone-search",
    "standalone-resolve",
    "scripted-search",
    "retry",
    "pacing",
    "localization",
    "summary-budget",
    "quality-metadata",
)
PROMPT: contextvars.ContextVar[str | None] = contextvars.ContextVar("prompt", default=None)
UNCHECKED_HOP: contextvars.ContextVar[bool] = contextvars.ContextVar("unchecked_hop", default=False)


def log(*parts: object) -> None:
    print("example_adapter:", *parts, file=sys.stderr, flush=True)


# --- deliberate breakage, as small wrappers around the reference ---------------------------------


def _rewrite_json(request: httpx.Request, change: dict[str, Any]) -> httpx.Request:
    body = json.loads(request.content)
    body.update(change)
    headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
    return httpx.Request(request.method, request.url, headers=headers, content=json.dumps(body).encode())


class BreakingTransport(httpx.AsyncBaseTransport):
    """Rewrites outgoing bodies, follows redirects or tears down slowly, depending on the break mode."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.inner = httpx.AsyncHTTPTransport()
        self.error_body = ""  # error-echo-unscrubbed: the last upstream error body, as sent

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.mode in LINGERING:
            return await self.lingering(request)
        return await self.send(request)

    async def lingering(self, request: httpx.Request) -> httpx.Response:
        """Once cancelled, the request takes LINGER seconds to close its connection."""
        inner = asyncio.ensure_future(self.send(request))
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError:
            await asyncio.sleep(LINGER)
            inner.cancel()
            await asyncio.gather(inner, return_exceptions=True)
            raise

    async def send(self, request: httpx.Request) -> httpx.Response:
        request = self.rewrite(request)
        path = request.url.path
        response = await self.inner.handle_async_request(request)
        if self.mode in ("follow-redirects", "standalone-follow-redirects") and response.is_redirect:
            await response.aclose()
            target = request.url.join(response.headers["location"])
            response = await self.inner.handle_async_request(httpx.Request("GET", target))
        if response.status_code == 300 and f"accept-300-{path.rsplit('/', 1)[-1]}" == self.mode:
            # wrong: a 3xx is no answer
            response = httpx.Response(200, headers=response.headers, stream=response.stream)
        if response.status_code == 200 and (self.mode, path.rsplit("/", 1)[-1]) in REWRITTEN_ANSWERS:
            response = await rewrite_answer(response, self.mode)
        if self.mode == "retry-after-429-only" and response.status_code != 429 and "retry-after" in response.headers:
            del response.headers["retry-after"]  # wrong: a 503 may ask for a wait too
        retry = response.status_code == 429 or response.status_code >= 500
        if self.mode == "silent-retry" and retry and not path.endswith("/fetch"):
            await response.aclose()  # wrong: seed 001 leaves retries to a future capability
            response = await self.inner.handle_async_request(self.rewrite(request))
        if self.mode == "standalone-leak-reasoning" and response.status_code == 200:
            response = await leak_thinking(response)
        if self.mode == "no-results-is-empty" and path.endswith("/search") and response.status_code == 200:
            response = await results_or_empty(response)
        if self.mode == "fetch-malformed-as-empty" and path.endswith("/fetch") and response.status_code == 200:
            response = await markdown_or_empty(response)
        if self.mode == "error-echo-unscrubbed" and response.status_code >= 400:
            body = await response.aread()
            self.error_body = body.decode("utf-8", "replace") + " " + response.headers.get("retry-after", "")
            response = httpx.Response(response.status_code, headers=response.headers, content=body)
        if self.mode in RESPONSES_BREAKS and response.status_code == 200 and path.endswith("/responses"):
            response = await bend_search_calls(response, self.mode)
        return response

    def rewrite(self, request: httpx.Request) -> httpx.Request:
        path, mode = request.url.path, self.mode
        if mode == "thinking-enabled" and path.endswith("/messages"):
            return _rewrite_json(request, {"thinking": {"type": "enabled", "budget_tokens": 1024}})
        if path.endswith("/search") and b"ori_question" in request.content:
            cut = {"no-ori-cut": lambda p: p, "ori-cut-utf16": utf16_cut, "ori-cut-keeps-space": space_kept_cut}
            if mode in cut:
                return _rewrite_json(request, {"ori_question": cut[mode](PROMPT.get() or "")})
        if mode == "body-extra-key" and path.endswith("/search"):
            return _rewrite_json(request, {"localization": ""})
        if mode == "fetch-normalizes-url" and path.endswith("/fetch"):
            parts = urlsplit(json.loads(request.content)["url"])
            url = urlunsplit(parts._replace(scheme=parts.scheme.lower(), netloc=parts.netloc.lower()))
            return _rewrite_json(request, {"url": url})
        if mode == "tools-fixed-path" and path.endswith(("/search", "/fetch")):
            # wrong: seed 001's base is complete; this appends a fixed /v1/tools/<route> to the base's origin
            request.url = request.url.copy_with(path="/v1/tools/" + path.rsplit("/", 1)[-1])
        protocol = "messages" if path.endswith("/messages") else "responses" if path.endswith("/responses") else ""
        if mode in STANDALONE_REQUESTS and protocol:
            request = _rewrite_json(request, STANDALONE_REQUESTS[mode][protocol])
            if mode == "standalone-open-fields":  # open: the wording around the query is the implementation's
                body = json.loads(request.content)
                text = json.dumps(body.get("messages") or body.get("input"), ensure_ascii=False)
                text = text.replace("Perform a web search for the query: ", "Search the web for: ")
                request = _rewrite_json(request, {"messages" if "messages" in body else "input": json.loads(text)})
            return request
        if mode == "extra-header" and path.endswith(("/search", "/fetch")):
            request.headers["User-Agent"] = "example-adapter/1"  # wrong: seed 001 allows only two headers
        return request

    async def aclose(self) -> None:
        await self.inner.aclose()


REWRITTEN_ANSWERS = {
    ("snippet-from-summary", "search"),
    ("last-citation-wins", "messages"),
    ("metadata-summary-cut", "search"),
    ("tool-error-empty", "messages"),
}


async def rewrite_answer(response: httpx.Response, mode: str | None) -> httpx.Response:
    """The answer-mapping breaks, applied to the upstream answer before the reference maps it."""
    data = json.loads(await response.aread())
    if mode == "snippet-from-summary":
        for item in data.get("results") or []:
            if isinstance(item, dict) and item.get("summary"):
                item["snippet"] = item["summary"]  # wrong: the snippet is the snippet
    elif mode == "metadata-summary-cut":
        for item in data.get("results") or []:
            if isinstance(item, dict) and isinstance(item.get("summary"), str):
                item["summary"] = item["summary"][:1000]  # wrong: quality metadata is kept as served
    elif mode == "tool-error-empty":
        for block in data.get("content") or []:
            if isinstance(block, dict) and isinstance(block.get("content"), dict):
                block["content"] = []  # wrong: a search that failed is not a search that found nothing
    else:
        for block in data.get("content") or []:
            if isinstance(block, dict) and isinstance(block.get("citations"), list):
                block["citations"].reverse()  # wrong: the first citation of a URL is its snippet
    headers = [(k, v) for k, v in response.headers.items() if k.lower() not in ("content-length", "content-encoding")]
    return httpx.Response(response.status_code, headers=headers, content=json.dumps(data).encode())


async def _empty_unless(response: httpx.Response, usable: Callable[[object], bool], empty: bytes) -> httpx.Response:
    """A 200 whose parsed body is not ``usable`` answered with ``empty`` instead."""
    body = await response.aread()
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    return httpx.Response(200, headers={"content-type": "application/json"}, content=body if usable(data) else empty)


async def results_or_empty(response: httpx.Response) -> httpx.Response:
    """no-results-is-empty: a Search API 200 without results becomes an empty search (as LiteLLM reads it)."""
    # wrong: a 200 that is no search answer is a failure, not "nothing found"
    return await _empty_unless(response, lambda d: not (isinstance(d, dict) and "results" not in d), b'{"results": []}')


async def markdown_or_empty(response: httpx.Response) -> httpx.Response:
    """fetch-malformed-as-empty: a Fetch API success without Markdown text becomes an empty page."""
    # wrong: an unreadable answer is a failure, not an empty page
    return await _empty_unless(response, lambda d: isinstance(d, dict) and isinstance(d.get("content"), str),
                               b'{"content": ""}')


def utf16_cut(prompt: str) -> str:
    """ori-cut-utf16: 128 UTF-16 code units instead of 128 characters."""
    units = " ".join(prompt.split()).encode("utf-16-le")[: 128 * 2]
    return units.decode("utf-16-le", "ignore").rstrip()


def space_kept_cut(prompt: str) -> str:
    """ori-cut-keeps-space (a variant the seed allows): the cut is not trimmed again."""
    return " ".join(prompt.split())[:128]


def normalized_dedup_merge(results: list[SearchResult], cap: int) -> SearchResult:
    """dedup-normalized-url: round-robin, but URLs compared case-folded and without a trailing slash."""
    merged: list[Source] = []
    seen: set[str] = set()
    for rank in range(max(len(r.sources) for r in results)):
        for source in (r.sources[rank] for r in results if rank < len(r.sources)):
            key = source.url.casefold().rstrip("/")
            if key not in seen and len(merged) < cap:
                seen.add(key)
                merged.append(source)
    return SearchResult(sources=tuple(merged), truncated=any(r.truncated for r in results))


@dataclass(frozen=True, slots=True)
class NoUnwrapPolicy(AddressPolicy):
    """ssrf-no-unwrap: the is_global reading, blind to the IPv4 an IPv6 address carries."""

    def blocked_reason(self, address: IPAddress) -> str | None:
        if isinstance(address, IPv6Address) and address.is_global:
            return None
        return AddressPolicy.blocked_reason(self, address)


@dataclass(frozen=True, slots=True)
class GlobalAfterUnwrapPolicy(AddressPolicy):
    """ssrf-unwrap-then-is-global: the embedded IPv4 forms the reference knows are judged, anything
    else IPv6 by is_global alone (wrong: local-use NAT64 and fec0::/10 count as global)."""

    def blocked_reason(self, address: IPAddress) -> str | None:
        reason = AddressPolicy.blocked_reason(self, address)
        if isinstance(address, IPv6Address) and address.is_global and reason is not None and " of " not in reason:
            return None
        return reason


UNCHECKED_HOP_MODES = ("ssrf-redirect-unchecked", "ssrf-redirect-first-hop-only", "ssrf-relative-unchecked",
                       "ssrf-url-browser-parse")


class BreakingBackend(PinnedNetworkBackend):
    """The pinned backend with one SSRF mistake, depending on the break mode."""

    def __init__(self, mode: str, resolver: Resolver, dialer: httpcore.AsyncNetworkBackend) -> None:
        super().__init__(resolver=resolver, inner=dialer)
        self.mode = mode
        self.dialer = dialer

    async def _answers(self, host: str) -> list[str]:
        try:
            return [str(ip_address(host))]
        except ValueError:
            return await self.resolver(host)

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, **kwargs: Any) -> Any:  # noqa: ASYNC109
        if self.mode in UNCHECKED_HOP_MODES and UNCHECKED_HOP.get():
            return await self.dialer.connect_tcp((await self._answers(host))[0], port, timeout=timeout)
        if self.mode == "ssrf-other-family-unchecked":
            answers = await self._answers(host)
            family = ip_address(answers[0]).version
            for answer in answers:  # wrong: the other family's answers are a fallback never judged
                if ip_address(answer).version != family:
                    continue
                if self.policy.blocked_reason(ip_address(answer)) is not None:
                    raise WebError(WebErrorCode.BLOCKED_URL, f"{answer} is not public")
            return await _first_connect(self.dialer, answers, port, timeout)
        if self.mode == "ssrf-first-answer-only":
            answers = await self._answers(host)
            first = ip_address(answers[0])
            if self.policy.blocked_reason(first) is not None:
                raise WebError(WebErrorCode.BLOCKED_URL, f"{first} is not public")
            return await _first_connect(self.dialer, answers, port, timeout)  # wrong: the later ones unchecked
        if self.mode == "ssrf-re-resolve":
            await vet_host(host, policy=self.policy, resolver=self.resolver)
            again = await self._answers(host)  # wrong: a second lookup, dialled unchecked
            return await self.dialer.connect_tcp(again[0], port, timeout=timeout)
        return await super().connect_tcp(host, port, timeout=timeout, **kwargs)


async def _first_connect(dialer: httpcore.AsyncNetworkBackend, answers: list[str], port: int,
                         timeout: float | None) -> Any:  # noqa: ASYNC109
    error: Exception | None = None
    for answer in answers:
        try:
            return await dialer.connect_tcp(answer, port, timeout=timeout)
        except (httpcore.ConnectError, OSError) as exc:
            error = exc
    assert error is not None
    raise error


class BreakingFetch(HttpFetchProvider):
    """A redirect target followed without any check: every one (ssrf-redirect-unchecked), all but the
    first (ssrf-redirect-first-hop-only), or one whose Location has no scheme (ssrf-relative-unchecked)."""

    def __init__(self, mode: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.mode = mode

    async def fetch(self, request: FetchRequest, ctx: CallContext | None = None) -> FetchResult:
        raw = request.url
        if self.mode != "ssrf-url-browser-parse" or not isinstance(raw, str) or "\\" not in raw:
            return await super().fetch(request, ctx)
        # wrong: the URL judged as a browser reads it (a backslash ends the host), then fetched as the
        # client reads it (the host after the '@'), and that host trusted when dialled
        check_url(raw.replace("\\", "/"), max_length=self.config.max_url_length, policy=self.policy)
        token = UNCHECKED_HOP.set(True)
        try:
            return await self._follow(httpx.URL(raw), ctx or CallContext())
        finally:
            UNCHECKED_HOP.reset(token)

    def _next_hop(self, url: httpx.URL, response: httpx.Response, hops: int) -> httpx.URL:
        if hops >= self.config.max_redirects:  # the hop cap is kept: only the target goes unchecked
            raise WebError(WebErrorCode.REDIRECT_BLOCKED, "too many redirects")
        location = response.headers.get("location", "")
        if self.mode == "ssrf-url-browser-parse" or (self.mode == "ssrf-redirect-first-hop-only" and hops == 0):
            return super()._next_hop(url, response, hops)
        if self.mode == "ssrf-relative-unchecked" and urlsplit(location).scheme:
            return super()._next_hop(url, response, hops)
        UNCHECKED_HOP.set(True)
        return url.join(location)


class EnvProxyFetch(HttpFetchProvider):
    """ssrf-env-proxy: the host is validated, then the page is fetched by a client that reads proxy
    variables from the environment (wrong: the proxy resolves and dials on the fetcher's behalf)."""

    async def _follow(self, url: httpx.URL, ctx: CallContext) -> FetchResult:
        await vet_host(url.host, policy=self.policy, resolver=self._backend.resolver)
        async with httpx.AsyncClient(trust_env=True, timeout=self.config.timeout_s) as client:
            try:
                response = await client.send(client.build_request("GET", url), stream=True)
            except httpx.HTTPError as exc:
                raise WebError(WebErrorCode.PROVIDER_ERROR, f"web fetch failed: {exc!r}") from exc
            try:
                return await self._read(url, response)
            finally:
                await response.aclose()


class NoDeadlineFetch(HttpFetchProvider):
    """ssrf-no-deadline: the same fetch without its one deadline (wrong: a silent or dripping server
    holds the call as long as it likes)."""

    async def fetch(self, request: FetchRequest, ctx: CallContext | None = None) -> FetchResult:
        url = check_url(request.url, max_length=self.config.max_url_length, policy=self.policy)
        return await self._follow(url, ctx or CallContext())


HOP_DEADLINE: contextvars.ContextVar[asyncio.Timeout | None] = contextvars.ContextVar("hop_deadline", default=None)


class PerHopDeadlineFetch(HttpFetchProvider):
    """ssrf-deadline-per-hop: the deadline starts again at every redirect (wrong: a chain of hops, each
    under the deadline, holds the call for their sum)."""

    async def fetch(self, request: FetchRequest, ctx: CallContext | None = None) -> FetchResult:
        url = check_url(request.url, max_length=self.config.max_url_length, policy=self.policy)
        try:
            async with asyncio.timeout(self.config.timeout_s) as deadline:
                HOP_DEADLINE.set(deadline)
                return await self._follow(url, ctx or CallContext())
        except TimeoutError as exc:
            raise WebError(WebErrorCode.FETCH_TIMEOUT, "web fetch timed out") from exc

    def _next_hop(self, url: httpx.URL, response: httpx.Response, hops: int) -> httpx.URL:
        deadline = HOP_DEADLINE.get()
        if deadline is not None:
            deadline.reschedule(asyncio.get_running_loop().time() + self.config.timeout_s)
        return super()._next_hop(url, response, hops)


class Uncounted307Fetch(HttpFetchProvider):
    """ssrf-hops-307-uncounted: only the method-changing redirects count toward the hop cap."""

    def _next_hop(self, url: httpx.URL, response: httpx.Response, hops: int) -> httpx.URL:
        return super()._next_hop(url, response, 0 if response.status_code in (307, 308) else hops)


def sandboxed_fetch(mode: str | None, settings: Settings, network: SandboxNetwork) -> HttpFetchProvider:
    """The http provider on the suite's test network, broken as ``mode`` says."""
    resolver, dialer = network.resolver(), network.dialer()
    config = http_fetch_config(settings)
    if mode == "ssrf-body-uncapped":
        config = replace(config, max_response_bytes=1 << 30)  # wrong: the configured cap ignored
    if mode == "ssrf-hops-uncapped":
        config = replace(config, max_redirects=100)  # wrong: the configured hop cap ignored
    whole = {"ssrf-env-proxy": EnvProxyFetch, "ssrf-no-deadline": NoDeadlineFetch,
             "ssrf-deadline-per-hop": PerHopDeadlineFetch, "ssrf-hops-307-uncounted": Uncounted307Fetch}
    if mode in whole:
        return whole[mode](config, resolver=resolver, dialer=dialer)
    policies = {"ssrf-no-unwrap": NoUnwrapPolicy, "ssrf-unwrap-then-is-global": GlobalAfterUnwrapPolicy}
    if mode in policies:
        return HttpFetchProvider(config, policy=policies[mode](), resolver=resolver, dialer=dialer)
    if mode in UNCHECKED_HOP_MODES:
        provider: HttpFetchProvider = BreakingFetch(mode, config, resolver=resolver, dialer=dialer)
    else:
        provider = HttpFetchProvider(config, resolver=resolver, dialer=dialer)
    if mode in ("ssrf-first-answer-only", "ssrf-re-resolve", "ssrf-other-family-unchecked", *UNCHECKED_HOP_MODES):
        provider._backend = BreakingBackend(mode, resolver, dialer)
    return provider


async def leak_thinking(response: httpx.Response) -> httpx.Response:
    """Each thinking block of a Messages answer becomes a text block (wrong: reasoning reaches the summary)."""
    body = json.loads(await response.aread())
    blocks: list[Any] = body.get("content") or [] if isinstance(body, dict) else []
    for i, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") == "thinking":
            blocks[i] = {"type": "text", "text": f"{block.get('thinking', '')} {block.get('signature', '')}"}
    headers = [(k, v) for k, v in response.headers.raw if k.lower() != b"content-length"]
    return httpx.Response(response.status_code, headers=headers, content=json.dumps(body).encode())


async def bend_search_calls(response: httpx.Response, mode: str) -> httpx.Response:
    """A Responses answer read wrongly: standalone-any-search-call takes every web_search_call as
    completed (one still in progress found nothing yet); standalone-citations-only ignores their
    sources (only url_citation annotations count); standalone-leak-responses-reasoning reads a
    reasoning item (its summary and encrypted content) as answer text."""
    body = json.loads(await response.aread())
    items: list[Any] = body.get("output") or [] if isinstance(body, dict) else []
    for i, item in enumerate(items):
        if mode == "standalone-leak-responses-reasoning" and isinstance(item, dict) and item.get("type") == "reasoning":
            said = " ".join(str(p.get("text", "")) for p in item.get("summary") or [] if isinstance(p, dict))
            text = f"{said} {item.get('encrypted_content', '')}"
            items[i] = {"type": "message", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}
        if not (isinstance(item, dict) and item.get("type") == "web_search_call"):
            continue
        if mode == "standalone-any-search-call" and item.get("status") != "failed":
            item["status"] = "completed"
        if mode == "standalone-citations-only" and isinstance(item.get("action"), dict):
            item["action"].pop("sources", None)
    if mode == "standalone-untitled-sources":  # wrong: the first (untitled) entry of a URL keeps its empty title
        searched = {s.get("url") for i in items if isinstance(i, dict) and isinstance(i.get("action"), dict)
                    for s in i["action"].get("sources") or [] if isinstance(s, dict)}
        for item in items:
            for part in item.get("content") or [] if isinstance(item, dict) else []:
                for note in part.get("annotations") or [] if isinstance(part, dict) else []:
                    if isinstance(note, dict) and note.get("url") in searched:
                        note["title"] = ""
    headers = [(k, v) for k, v in response.headers.raw if k.lower() != b"content-length"]
    return httpx.Response(response.status_code, headers=headers, content=json.dumps(body).encode())


def chars_bound(summary: str, sources: list[dict[str, str]]) -> str:
    """standalone-bound-chars: the 24000 bound counted in characters of the JSON text, not in bytes."""
    truncated = False
    while True:
        value: dict[str, Any] = {"summary": summary, "sources": sources}
        text = json.dumps({**value, "truncated": True} if truncated else value, ensure_ascii=False)
        if len(text) <= MAX_RESULT_BYTES:
            return text
        summary, truncated = summary[: max(0, len(summary) - (len(text) - MAX_RESULT_BYTES) - 20)], True


def concat_merge(results: list[SearchResult], cap: int) -> SearchResult:
    """no-round-robin: query after query instead of rank after rank."""
    seen: dict[str, Source] = {}
    for result in results:
        for source in result.sources:
            seen.setdefault(source.url, source)
    merged = list(seen.values())
    return SearchResult(sources=tuple(merged[:cap]), truncated=len(merged) > cap or any(r.truncated for r in results))


def no_dedup_merge(results: list[SearchResult], cap: int) -> SearchResult:
    """duplicate-url: round-robin, but every URL kept."""
    merged = [r.sources[i] for i in range(max(len(r.sources) for r in results)) for r in results if i < len(r.sources)]
    return SearchResult(sources=tuple(merged[:cap]), truncated=len(merged) > cap or any(r.truncated for r in results))


def normalised_merge(queries: list[str], results: list[SearchResult], cap: int) -> SearchResult:
    """url-normalise-dedup: round-robin and cap as the reference, but URLs compared trimmed and lower-cased."""
    merged: list[Source] = []
    seen: set[str] = set()
    dropped = False
    for rank in range(max(len(r.sources) for r in results)):
        for result in results:
            if rank >= len(result.sources) or dropped:
                continue
            source = result.sources[rank]
            key = source.url.strip().lower()  # wrong: only the exact URL string identifies a source
            if key in seen:
                continue
            if len(merged) >= cap:
                dropped = True
                continue
            seen.add(key)
            merged.append(source)
    reference = merge_results(queries, results, cap)
    truncated = dropped or any(r.truncated for r in results)
    return SearchResult(sources=tuple(merged), content=reference.content, truncated=truncated)


async def cancel_and_wait(tasks: Sequence[asyncio.Future[SearchResult]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def wake_from_wait(tasks: Sequence[asyncio.Future[SearchResult]]) -> list[SearchResult]:
    """lost-failure-race (issue 14's defect): completions are recorded by done-callbacks but the
    batch wakes from asyncio.wait's own callback, so a failure landing in the loop step between that
    wake-up and its recording is lost, and the batch waits for the slowest sibling."""
    finished: list[asyncio.Future[SearchResult]] = []
    for task in tasks:
        task.add_done_callback(finished.append)
    pending: set[asyncio.Future[SearchResult]] = set(tasks)
    while pending:
        _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        if any(t.cancelled() or t.exception() is not None for t in finished):
            break
    failed = [t for t in finished if t.cancelled() or t.exception() is not None]
    if failed:
        await cancel_and_wait(tasks)
        raise failed[0].exception() or WebError("WEB_ABORTED", "a search of the batch was cancelled")
    return [t.result() for t in tasks]


async def stubborn_sleep(_clock: object, seconds: float) -> None:
    """retry-cancel-late: a retry wait that, cancelled, first runs to its end (the call answers late)."""
    wait = asyncio.ensure_future(asyncio.sleep(seconds))
    try:
        await asyncio.shield(wait)
    except asyncio.CancelledError:
        await wait
        raise


def untrimmed(value: object) -> str | None:
    """localization-untrimmed: the address is validated without its spaces but forwarded with them."""
    return value if isinstance(value, str) and RIGHT_IP_LITERAL(value.strip()) is not None else None


RIGHT_IP_LITERAL = deepseek_search_api.ip_literal


class FirstPaced:
    """pacing-retries-unpaced: a policy whose pacing holds for an operation's first attempt only; its
    retries go out whenever their backoff ends (wrong: a retry is a request against the account's rate)."""

    def __init__(self, policy: _scheduler.Policy) -> None:
        self.policy, self.asked = policy, 0
        self.qps, self.retries, self.max_wait_s = policy.qps, policy.retries, policy.max_wait_s

    @property
    def pacing(self) -> bool:
        self.asked += 1
        return self.policy.pacing and self.asked == 1


RIGHT_RUN = _scheduler.AccountScheduler.run


async def first_paced(self: _scheduler.AccountScheduler, api: str, policy: Any, *rest: Any) -> Any:
    return await RIGHT_RUN(self, api, FirstPaced(policy), *rest)  # type: ignore[arg-type]


def one_too_many(conf: Any, api: str) -> _scheduler.Policy:
    """retry-one-too-many: the configured bound counts the retries after the first one."""
    policy = RIGHT_POLICY(conf, api)
    return replace(policy, retries=policy.retries + 1) if policy.retries else policy


RIGHT_POLICY = _scheduler.Policy.of


async def deadline_per_attempt(
    provider: object, conf: Any, api: str, account: tuple[str, str], send: Any, label: str
) -> Any:
    """retry-past-deadline: each attempt gets the whole timeout, and a Retry-After wait is taken
    whatever its length (no cap, no deadline over the operation)."""
    policy = replace(_scheduler.Policy.of(conf, api), max_wait_s=float("inf"))
    if not policy.active:
        return await send(conf.timeout_s)
    scheduler = _scheduler.process_schedulers().for_account(*account)
    return await scheduler.run(api, policy, 3600.0, lambda _left: send(conf.timeout_s), label)


async def attempt_timeouts(
    provider: object, conf: Any, api: str, account: tuple[str, str], send: Any, label: str
) -> Any:
    """retry-deadline-per-attempt: waits stay within the deadline, but every attempt gets the whole
    timeout_s again (the operation runs past its one deadline)."""
    policy = _scheduler.Policy.of(conf, api)
    if not policy.active:
        return await send(conf.timeout_s)
    scheduler = _scheduler.process_schedulers().for_account(*account)
    return await scheduler.run(api, policy, conf.timeout_s, lambda _left: send(conf.timeout_s), label)


def refused_late(setting: str, override: object) -> str | None:
    """localization-refused-late: the settings take any text; the search then fails as a provider
    error (nothing is forwarded, but the code names no configuration problem)."""
    found = RIGHT_IP_LITERAL(setting) if setting else None
    if setting and found is None:
        raise WebError(WebErrorCode.PROVIDER_ERROR, "the Search API request could not be built")
    return found


def trimmed(value: object) -> str | None:
    """localization-trimmed (a variant the seeds allow): spaces around the address are dropped."""
    return RIGHT_IP_LITERAL(value.strip()) if isinstance(value, str) else None


class WindowPacer:
    """pacing-window (a variant the seeds allow): up to the rate start at once, then each start waits
    until a second (and a little) has passed since the start the rate's count before it."""

    AFTER = 1.05  # seconds after that start: room for transport jitter, as the reference's spacing

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._starts: list[float] = []

    def reserve(self, now: float, interval: float, latest: float) -> float | None:
        rate = round((1.0 + _scheduler.PACING_SLACK) / interval)
        with self._lock:
            slot = now if len(self._starts) < rate else max(now, self._starts[-rate] + self.AFTER)
            if slot > latest:
                return None
            self._starts.append(slot)
            return slot

    def start(self, now: float, interval: float, slot: float) -> tuple[float, object | None]:
        return 0.0, object()  # the reserved slot is the start; the window, not the wire, spaces them

    def on_wire(self, ticket: object, now: float) -> None:
        pass

    def ended(self, ticket: object) -> None:
        pass

    def give_back(self, slot: float) -> None:
        with self._lock:
            if slot in self._starts:
                self._starts.remove(slot)


def unvalidated(value: object) -> str | None:
    """localization-unvalidated: any non-empty text counts as an address."""
    return value if isinstance(value, str) and value else None


def query_after_query(ranked: Sequence[Sequence[Candidate]], *, max_pages: int, max_per_domain: int) -> list[Candidate]:
    """evidence-no-query-floor: the first query's results take the page slots before the next query's."""
    picked: dict[str, Candidate] = {}
    for candidate in (c for queue in ranked for c in queue):
        if len(picked) < max_pages:
            picked.setdefault(candidate.url, candidate)
    return list(picked.values())


def remember_last_only(self: EvidenceContext, queries: Iterable[str]) -> None:
    """evidence-retry-last-only: the attempt before the last is forgotten."""
    self.exhausted = {normalized_query(q) for q in queries}


RIGHT_REPEATS = evidence_search.refuse_repeats


def repeats_single_only(queries: Sequence[str], context: EvidenceContext) -> None:
    """evidence-retry-single-only: a list of queries is never checked against the retry memory."""
    if len(queries) == 1:
        RIGHT_REPEATS(queries, context)


def parsed_only(url: object, *, max_length: int, policy: AddressPolicy) -> httpx.URL:
    """evidence-unsafe-snippets: a result URL is only parsed when it becomes a candidate."""
    return httpx.URL(str(url)[:max_length])


async def blocks_validated_late(tool: EvidenceSearchTool, url: str, ctx: CallContext, slots: asyncio.Semaphore) -> Any:
    check_url(url, max_length=tool.settings.max_url_length, policy=tool.policy)  # refused here: snippet fallback
    return await RIGHT_BLOCKS(tool, url, ctx, slots)


RIGHT_BLOCKS = EvidenceSearchTool._blocks


async def never_fetched(tool: EvidenceSearchTool, url: str, ctx: CallContext, slots: asyncio.Semaphore) -> Any:
    """evidence-snippet-only: a page is fetched but never read; each source falls back to its snippet."""
    await RIGHT_BLOCKS(tool, url, ctx, slots)
    return []


RIGHT_VALUE = evidence_search._value


def retry_only_when_empty(state: Sequence[Any]) -> dict[str, Any]:
    """evidence-retry-only-when-empty: a query whose results were all dropped is not marked."""
    value = RIGHT_VALUE(state)
    for group in value["queries"]:
        tried = group["tried"]
        everything_dropped = tried["results"] > 0 and tried["candidates"] == 0
        group["needs_retry"] = not group["evidence"] and not everything_dropped
    value["needs_retry"] = all(g["needs_retry"] for g in value["queries"])
    return value


def cite_candidates(state: Sequence[Any]) -> dict[str, Any]:
    """evidence-cite-candidates: every validated, ranked result is listed as a source to cite."""
    value = RIGHT_VALUE(state)
    ranked = {c.url: c.title for q in state for c in q.ranked}
    value["sources"] = [{"url": url, "title": title} for url, title in ranked.items()]
    return value


RIGHT_CHOOSE = evidence_search.choose


def page_lead(query: str, pages: Sequence[PageUnits], *, max_lines: int = 2, size: int = 360) -> Choice:
    """evidence-page-lead: a chosen page's opening characters, whatever the query."""
    choice = RIGHT_CHOOSE(query, pages, max_lines=max_lines, size=size)
    opening = {p.url: " ".join(u.text for u in p.units)[:size] for p in pages}
    return Choice([Pick(p.url, opening[p.url], p.score) for p in choice.picks], choice.rejected, choice.why_none)


RIGHT_UNSUPPORTED = _evidence_guard._unsupported


def unsupported_without_question(query: str, words: frozenset[str], context: EvidenceContext) -> list[str]:
    """evidence-retry-no-question: the user's question is not read; only earlier evidence supports."""
    blind = EvidenceContext(question="?", attempts=context.attempts, evidence_text=context.evidence_text)
    return RIGHT_UNSUPPORTED(query, words, blind)


def engine_order(query: str, candidates: Sequence[Candidate]) -> list[Candidate]:
    """evidence-engine-order: the search engine's order is the ranking."""
    return list(candidates)


def bend_evidence(mode: str | None) -> None:
    """The evidence breaks that live in the reference's pipeline modules (this process only)."""
    if mode == "evidence-local-few-forms":
        _evidence_guard._LOCAL_PATH = re.compile(r"file:|\b[A-Za-z]:\\|~/")  # wrong: /abs, C:/, UNC, FILE:
    elif mode == "evidence-retry-last-only":
        EvidenceContext.remember_empty = remember_last_only  # type: ignore[method-assign]
    elif mode == "evidence-retry-single-only":
        evidence_search.refuse_repeats = repeats_single_only
    elif mode == "evidence-unsafe-snippets":
        evidence_search.check_url = parsed_only
        evidence_search._REFUSED = frozenset()  # wrong: a URL refused at fetch keeps its snippet
        EvidenceSearchTool._blocks = blocks_validated_late  # type: ignore[method-assign]
    elif mode == "evidence-retry-only-when-empty":
        evidence_search._value = retry_only_when_empty
    elif mode == "evidence-cite-candidates":
        evidence_search._value = cite_candidates
    elif mode == "evidence-snippet-only":
        EvidenceSearchTool._blocks = never_fetched  # type: ignore[method-assign]
    elif mode == "evidence-page-lead":
        evidence_search.choose = page_lead
    elif mode == "evidence-retry-zero-width":
        _evidence_guard._visible = lambda text, separator="": text  # wrong: U+200B & co. make a new query
    elif mode == "evidence-retry-less-specific":
        _evidence_guard._less_specific = lambda words, context: False
    elif mode == "evidence-retry-invented":
        _evidence_guard._unsupported = lambda query, words, context: []
    elif mode == "evidence-retry-no-question":
        _evidence_guard._unsupported = unsupported_without_question
    elif mode == "evidence-designators-ignored":
        _evidence_passages.designators = lambda query: []
    elif mode == "evidence-table-cells":
        _evidence_units._row_text = lambda cells, header: " | ".join(cells[1:])  # wrong: the label is lost
    elif mode == "evidence-engine-order":
        evidence_search.rank = engine_order


def bend_scheduling(mode: str | None) -> None:
    """The breaks that live in the reference's modules (scheduler, validation, page selection), in
    this process only."""
    if mode == "evidence-no-query-floor":
        evidence_search.select_pages = query_after_query  # wrong: no floor of one source per query
    elif mode == "evidence-hosts-not-domains":
        _evidence_rank.registrable_domain = str.lower  # wrong: www. and news. of one site count as two
    elif mode == "retry-ignores-retry-after":
        _scheduler.retry_after_seconds = lambda _headers, _now: 0.0  # wrong: the server's wait ignored
    elif mode == "retry-402":
        right = _scheduler.retryable
        _scheduler.retryable = lambda status: status == 402 or right(status)  # wrong: 402 needs funding
    elif mode == "retry-cancel-late":
        _scheduler.MonotonicClock.sleep = stubborn_sleep  # type: ignore[method-assign]
    elif mode == "retry-fetch-by-default":
        right_scheduled = _deepseek_http.scheduled

        async def fetch_retried(provider: object, conf: Any, api: str, account: tuple[str, str], send: Any,
                                label: str) -> Any:
            if api == "fetch" and conf.retries == 0:
                policy = replace(_scheduler.Policy.of(conf, api), retries=2)
                scheduler = _scheduler.process_schedulers().for_account(*account)
                return await scheduler.run(api, policy, conf.timeout_s, send, label)
            return await right_scheduled(provider, conf, api, account, send, label)

        _deepseek_http.scheduled = fetch_retried
    elif mode == "pacing-per-request":
        _scheduler.SchedulerRegistry.for_account = (  # type: ignore[method-assign]
            lambda self, base, credential: _scheduler.AccountScheduler(self._clock, self._rand))
    elif mode == "retry-one-too-many":
        _scheduler.Policy.of = one_too_many  # type: ignore[assignment]
    elif mode == "pacing-retries-unpaced":
        _scheduler.AccountScheduler.run = first_paced  # type: ignore[method-assign]
    elif mode == "retry-at-once":
        _scheduler.AccountScheduler.backoff = lambda _self, _retry, _cap: 0.0  # type: ignore[method-assign]
    elif mode == "retry-503-only":
        _scheduler.retryable = lambda status: status in (408, 429, 503)  # wrong: every 5xx is retried
    elif mode == "retry-deadline-per-attempt":
        _deepseek_http.scheduled = attempt_timeouts
    elif mode == "retry-past-deadline":
        _deepseek_http.scheduled = deadline_per_attempt
    elif mode == "localization-refused-late":
        settings_module.ip_literal = lambda value: value if isinstance(value, str) else None
        deepseek_search_api._localization = refused_late
    elif mode == "retry-full-jitter":
        def full_jitter(self: _scheduler.AccountScheduler, retry: int, cap: float) -> float:
            return self._rand.uniform(0.0, min(cap, _scheduler.BACKOFF_FIRST_S * 2.0**retry))

        _scheduler.AccountScheduler.backoff = full_jitter  # type: ignore[method-assign]
    elif mode == "localization-trimmed":
        deepseek_search_api.ip_literal = trimmed
        settings_module.ip_literal = trimmed
    elif mode == "pacing-window":
        _scheduler._Pacer = WindowPacer  # type: ignore[misc]
    elif mode == "localization-untrimmed":
        deepseek_search_api.ip_literal = untrimmed
        settings_module.ip_literal = untrimmed
    elif mode == "localization-unvalidated":
        deepseek_search_api.ip_literal = unvalidated  # wrong: seed 001 asks for a bounded input
        settings_module.ip_literal = unvalidated


def bytes_cut(text: str, budget: int) -> tuple[str, bool]:
    """summary-budget-bytes: the summary budget counted in UTF-8 bytes."""
    folded = " ".join(text.split())
    if len(folded.encode()) <= budget:
        return folded, False
    keep = folded.encode()[: max(0, budget - len("…".encode()))].decode("utf-8", "ignore")
    return keep.rstrip() + "…", True


def cut_at_budget(text: str, budget: int) -> tuple[str, bool]:
    """summary-cut-at-budget: off by one, a summary exactly at the budget is cut too."""
    folded = " ".join(text.split())
    if len(folded) < budget:
        return folded, False
    return (folded[: budget - 1] + "…" if budget > 0 else ""), True


def bend_summary(mode: str | None) -> None:
    """The summary-budget breaks that live in the reference's budgeting (this process only)."""
    if mode == "summary-budget-bytes":
        _summary.cut_to = bytes_cut  # wrong: a character is not a byte
    elif mode == "summary-no-marker":
        _summary.SUMMARY_CUT_MARKER = ""  # wrong: a cut summary must say so
    elif mode == "summary-total-per-source":
        right = _summary.budget_summaries
        # wrong: the total bounds the whole call, not each source
        web_search_tool.budget_summaries = lambda sources, per, total: right(sources, min(per, total), 10**9)
    elif mode == "summary-cut-at-budget":
        _summary.cut_to = cut_at_budget
    elif mode == "summary-total-off-by-one":
        whole = _summary.budget_summaries
        # wrong: summaries that exactly fill the total lose a character
        web_search_tool.budget_summaries = lambda sources, per, total: whole(sources, per, total - 1)
    elif mode == "summary-blank-shown":
        # wrong: a blank summary is no summary; the source keeps its snippet
        _summary.summary_of = lambda source: source.metadata.get("summary")
    elif mode == "summary-stop-at-missing":
        web_search_tool.budget_summaries = stop_at_missing


def stop_at_missing(sources: Sequence[Source], per: int, total: int) -> _summary.SummaryView:
    """summary-stop-at-missing: a source without a summary ends summary mode (later ones show snippets)."""
    view = _summary.budget_summaries(sources, per, total)
    first = next((i for i, shown in enumerate(view.shown) if shown is None), len(view.shown))
    return _summary.SummaryView(view.shown[:first] + (None,) * (len(view.shown) - first), view.cut)


def bend_config(mode: str | None, config: TargetConfig) -> TargetConfig:
    """The configure-level breaks: the deployment's keys replaced before the reference sees them."""
    if mode == "count-is-max-results":
        return replace(config, count=config.search_max_results)  # wrong: the configured count ignored
    if mode == "max-uses-fixed":
        return replace(config, max_uses=5)  # wrong: the configured max_uses ignored
    if mode == "retry-by-default" and config.retries == 0:
        return replace(config, retries=2)  # wrong: seed 001 ships fail-fast
    if mode == "pacing-by-default" and config.pacing_qps is None:
        return replace(config, pacing_qps=5.0)  # wrong: seed 001 ships no scheduler
    if mode == "summary-by-default":
        return replace(config, search_model_text="summary")  # wrong: seed 001 shows snippets as shipped
    if mode == "pacing-burst" and config.pacing_qps is not None:
        return replace(config, pacing_qps=config.pacing_qps * 10)  # wrong: a whole batch in one second
    if mode == "base-inferred" and not config.tools_base.strip():
        # wrong: seed 001 never infers the tools prefix from the Messages base; a blank base is unavailable
        return replace(config, tools_base=config.messages_base.replace("/anthropic/v1", "/v1/tools"))
    return config


# --- the adapter ---------------------------------------------------------------------------------


def _usual_host(url: str) -> bool:
    try:
        host = urlsplit(url).hostname
        return bool(host) and bool(host.encode("idna"))  # type: ignore[union-attr]
    except (ValueError, UnicodeError):
        return False


def rewrite_arguments(mode: str | None, arguments: Any) -> Any:
    """The argument-level breaks: a model's arguments bent before the reference sees them."""
    if not isinstance(arguments, dict):
        return arguments
    queries = arguments.get("queries")
    if mode == "accept-legacy-query" and "queries" not in arguments and isinstance(arguments.get("query"), str):
        return {"queries": [arguments["query"]]}  # wrong: seed 000 rejected accepting query too
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        return arguments
    if mode == "cap-after-dedup":
        return {**arguments, "queries": list(dict.fromkeys(queries))}  # wrong: duplicates count against the cap
    if mode == "dedup-folds-queries":
        folded: dict[str, str] = {}
        for q in queries:
            folded.setdefault(q.strip().casefold(), q)  # wrong: only exact duplicates are the same search
        return {**arguments, "queries": list(folded.values())}
    return arguments


class Adapter:
    def __init__(self, mode: str | None, capabilities: tuple[str, ...]) -> None:
        self.mode = mode
        self.capabilities = capabilities
        self.runtime: Runtime | None = None
        self.settings = Settings()
        self.provider = "api"
        self.bases: dict[str, str] = {}
        self.background: set[asyncio.Task[Any]] = set()  # early-answer's abandoned searches
        self.evidence_contexts: dict[str, EvidenceContext] = {}
        self.api_key = ""
        self.paced = False
        self.transport: BreakingTransport | None = None

    def hello(self) -> dict[str, Any]:
        return {"name": "dsweb_ref example adapter", "version": __version__, "capabilities": list(self.capabilities)}

    def configure(self, p: dict[str, Any]) -> dict[str, Any]:
        # Every configure key maps onto one reference setting (reference_settings); the key travels in a
        # private mapping, never the real environment.
        config = bend_config(self.mode, TargetConfig.from_json(p))
        settings = self.settings = reference_settings(config)  # WebError for a bad key (localization, ...)
        self.paced = config.pacing_qps is not None
        self.evidence_contexts = {}
        self.provider = config.provider
        self.api_key = config.api_key
        if self.provider == "scripted":  # the emulator's conformance search route
            self.runtime = scripted_runtime(config.scripted_base, lambda: settings)
            return {}
        self.bases = {"messages": config.standalone_url("messages"), "responses": config.standalone_url("responses")}
        # Seed-003 breaks touch only the standalone path, so no seed-000 check sees them.
        seed000 = self.mode is not None and not self.mode.startswith("standalone-")
        transport = self.transport = BreakingTransport(self.mode) if seed000 and self.mode else None
        network = SandboxNetwork.from_json(p.get("test_network"))
        http = sandboxed_fetch(self.mode, settings, network) if network is not None else None
        self.runtime = build_runtime(
            lambda: settings, transport=transport, environ=credential_environ(config.api_key), http_fetch=http
        )
        return {}

    def _runtime(self) -> Runtime:
        if self.runtime is None:
            raise WebError("WEB_CONFIG_INVALID", "configure first")
        return self.runtime

    async def web_search(self, p: dict[str, Any]) -> ToolResult:
        PROMPT.set(p.get("latest_prompt"))
        ctx = CallContext(latest_prompt=p.get("latest_prompt"))
        tool = self._runtime().search_tool()
        arguments = rewrite_arguments(self.mode, p.get("arguments"))
        if self.mode == "pacing-cancel-sends" and self.paced:
            return await self.detached(tool.execute(arguments, ctx))
        sequential = self.mode == "sequential" or (self.mode == "messages-sequential" and self.provider == "messages")
        if not sequential and self.mode not in (*OWN_BATCH, *SCRIPTED_BREAKS, *BATCH_REQUEST_BREAKS):
            return self.bend(await tool.execute(arguments, ctx), arguments)
        queries: list[str] = []
        try:
            queries = parse_queries(arguments, tool.settings.search_max_queries)
            cap = tool.settings.search_max_results
            if len(queries) == 1 and self.mode != "label-single":
                return await tool.execute(arguments, ctx)
            # wrong (batch-count-uncapped): the batch's searches not bounded by searchMaxResults
            requests = [SearchRequest(q, 50 if self.mode == "batch-count-uncapped" else cap) for q in queries]
            web = self._runtime().web
            if self.mode == "batch-no-prompt":
                ctx = CallContext()  # wrong: the batch's searches lose the latest prompt (ori_question)
            if sequential:
                results = [await web.search(r, ctx) for r in requests]
            else:
                results = await self.batch([web.search(r, ctx) for r in requests])
        except WebError as error:
            code = error.code
            if self.mode == "generic-failure" and len(queries) > 1:
                code = "WEB_PROVIDER_ERROR"  # wrong: the batch returns the first failure itself, code included
            return ToolResult(text=f"Error: {error.message}", error_code=code)
        return self.merge(queries, results, cap, tool)

    async def detached(self, coro: Coroutine[Any, Any, ToolResult]) -> ToolResult:
        """pacing-cancel-sends: cancelling answers at once, but the call runs on (its queued queries are sent)."""
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return await asyncio.shield(task)

    def merge(self, queries: list[str], results: list[SearchResult], cap: int, tool: WebSearchTool) -> ToolResult:
        if self.mode == "no-round-robin":
            merged = concat_merge(results, cap)
        elif self.mode == "duplicate-url":
            merged = no_dedup_merge(results, cap)
        elif self.mode == "dedup-normalized-url":
            merged = normalized_dedup_merge(results, cap)
        elif self.mode == "truncated-from-merge-only":  # wrong: a query's own truncation forgotten
            merged = merge_results(queries, [replace(r, truncated=False) for r in results], cap)
        elif self.mode == "truncated-cap-only":  # wrong: a query's own truncated flag is dropped
            merged = merge_results(queries, [SearchResult(r.sources, r.content) for r in results], cap)
        elif self.mode == "url-normalise-dedup":
            merged = normalised_merge(queries, results, cap)
        else:
            merged = merge_results(queries, results, cap)
        if self.mode == "text-uncapped":
            text_from = merge_results(queries, results, 10**6)  # wrong: the model sees what the cap dropped
            return ToolResult(text=render_search(text_from), value=merged.to_json())
        if self.mode == "text-drops-answers" and merged.content:  # wrong: the labels shown, their answers not
            labels = [line for line in merged.content.split("\n") if line.startswith("### ")]
            shown = tool.present(replace(merged, content="\n\n".join(labels)))
            return ToolResult(text=shown.text, value=merged.to_json())
        return tool.present(merged)  # the reference's rendering (snippet or summary mode) of this merge

    def bend(self, result: ToolResult, arguments: Any) -> ToolResult:
        """The result-level breaks, applied to the reference tool's answer."""
        value = result.value
        if self.mode == "error-echo-unscrubbed" and result.error_code and self.transport is not None:
            quoted = f"{result.text} (upstream said: {self.transport.error_body[:2000]})"  # wrong: unscrubbed
            return ToolResult(text=quoted, error_code=result.error_code)
        if value is None:
            return result
        if self.mode == "schema-extra-field":
            return ToolResult(text=result.text, value={**value, "provider": "example"})
        if self.mode == "unbounded-answers" and value.get("content"):  # wrong: the answers echoed uncut
            return ToolResult(text=f"{value['content']}\n\n{result.text}", value=value)
        if self.mode == "text-drops-hostless":  # wrong: a source whose URL has no usual host is not listed
            listed = tuple(Source(s["url"], s.get("title"), s.get("snippet"), s.get("published_at"))
                           for s in value["sources"] if _usual_host(s["url"]))
            return ToolResult(text=render_search(SearchResult(listed, value.get("content"), value["truncated"])),
                              value=value)
        if self.mode == "url-run-on":  # wrong: every listed URL marked as cut, so the model cites "URL…"
            text = result.text
            for source in value["sources"]:
                text = text.replace(f"({source['url']})", f"({source['url']}…)")
            return ToolResult(text=text, value=value)
        if self.mode == "batch-drops-snippets" and len(set(arguments["queries"])) > 1:
            # wrong: a merged result's snippets kept in the value, not shown to the model
            bare = tuple(Source(s["url"], s.get("title"), None, s.get("published_at")) for s in value["sources"])
            shown = SearchResult(bare, value.get("content"), value["truncated"])
            return ToolResult(text=render_search(shown), value=value)
        if self.mode == "unbounded-text":  # wrong: provider fields echoed to the model uncut
            echo = "\n".join(f"{s['url']} {s.get('published_at') or ''}" for s in value["sources"])
            return ToolResult(text=f"{result.text}\n{echo}", value=value)
        if self.mode == "empty-is-error" and not value["sources"] and not value.get("content"):
            return ToolResult(text="Error: no results", error_code="WEB_PROVIDER_ERROR")  # wrong: empty is success
        queries = list(dict.fromkeys(arguments["queries"]))
        snippets = self.settings.tools.search_model_text == "snippet"
        if self.mode == "summary-in-batches" and snippets and len(queries) > 1:  # wrong: the merge shows summaries
            summaries = [str(s.get("metadata", {}).get("summary") or "")[:1000] for s in value["sources"]]
            return ToolResult(text="\n".join([result.text, *filter(None, summaries)]), value=value)
        if self.mode == "single-labelled" and len(queries) == 1:
            labelled = replace(SearchResult(), content=f"### {queries[0]}\n\n(no answer)")
            value = {**value, "content": labelled.content}  # wrong: a single query gets batch formatting
            return ToolResult(text=f"{labelled.content}\n\n{result.text}", value=value)
        return result

    async def batch(self, coros: list[Coroutine[Any, Any, SearchResult]]) -> list[SearchResult]:
        """All-or-nothing with quiescence, except where a break mode bends it."""
        tasks = [asyncio.ensure_future(c) for c in coros]
        try:
            if self.mode == "miss-failure-after-success":
                return await self.watch_until_success(tasks)
            if self.mode == "lost-failure-race":
                return await wake_from_wait(tasks)
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        except asyncio.CancelledError:
            await cancel_and_wait(tasks)
            raise
        failed = [t for t in done if t.exception() is not None]
        if failed:
            if self.mode == "early-answer":
                self.background.update(pending)  # wrong: siblings are left running
            elif self.mode == "early-answer-subtle":
                for task in pending:  # wrong: cancelled, but the answer does not wait for them to settle
                    task.cancel()
                self.background.update(pending)
            else:
                await cancel_and_wait(tasks)
            if self.mode == "report-sibling-abort":  # wrong: the first error in query order, not in time
                first = next(t for t in tasks if t.cancelled() or t.exception() is not None)
                if first.cancelled():
                    raise WebError("WEB_ABORTED", "a search of the batch was cancelled")
            raise failed[0].exception()  # type: ignore[misc]
        return [t.result() for t in tasks]

    async def watch_until_success(self, tasks: Sequence[asyncio.Future[SearchResult]]) -> list[SearchResult]:
        """miss-failure-after-success: failures are watched for only until a sibling succeeds."""
        pending: set[asyncio.Future[SearchResult]] = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if any(t.exception() is None for t in done):
                await asyncio.gather(*pending, return_exceptions=True)  # wrong: waits for the slowest sibling
                break
            if any(t.exception() is not None for t in done):
                await cancel_and_wait(tasks)
                break
        failed = [t for t in tasks if t.cancelled() or t.exception() is not None]
        if failed:
            raise failed[0].exception() or WebError("WEB_ABORTED", "cancelled")
        return [t.result() for t in tasks]

    async def evidence_search(self, p: dict[str, Any]) -> ToolResult:
        data = p.get("context") if isinstance(p.get("context"), dict) else {}
        key = str(data.get("id", ""))
        names = frozenset(n for n in data.get("local_names", ()) if isinstance(n, str))
        context = self.evidence_contexts.setdefault(key, EvidenceContext(local_names=names))
        if isinstance(data.get("question"), str):
            context.question = str(data["question"])[:2000]
        if self.mode == "evidence-retry-allowed":
            context = EvidenceContext(local_names=names)  # wrong: the conversation's retry memory is dropped
        ctx = CallContext()
        result = await self._runtime().evidence_tool().execute(p.get("arguments"), ctx, context)
        if self.mode == "evidence-local-allowed" and result.error_code and "local" in result.text:
            arguments = p.get("arguments") or {}
            query = arguments.get("query") if isinstance(arguments, dict) else None
            for q in [query] if isinstance(query, str) else list(query or []):
                await self._runtime().web.search(SearchRequest(str(q), 8), ctx)  # wrong: local "falls back" to web
        if self.mode == "evidence-model-call":
            base = self.settings.deepseek_messages.base_url
            async with httpx.AsyncClient() as client:  # wrong: a model summarizes the evidence
                await client.post(
                    f"{base}/messages",
                    headers={"x-api-key": self.api_key, "anthropic-version": "2023-06-01"},
                    json={"model": "x", "max_tokens": 16, "messages": [{"role": "user", "content": result.text}]},
                )
        if self.mode == "evidence-retry-model" and "[needs_retry]" in result.text:
            async with httpx.AsyncClient() as client:  # wrong: a model rewrites the query that found nothing
                await client.post(
                    self.bases["responses"],
                    headers={"authorization": f"Bearer {self.api_key}"},
                    json={"model": "x", "input": f"Make this query more specific: {result.text[:500]}"},
                )
        if self.mode == "evidence-no-urls":
            text = re.sub(r" \(source: \S+\)$", "", result.text, flags=re.MULTILINE)  # wrong: URLs dropped
            result = ToolResult(text=text, value=result.value, error_code=result.error_code)
        return result

    async def web_fetch(self, p: dict[str, Any]) -> ToolResult:
        result = await self._runtime().fetch_tool().execute(p.get("arguments"), CallContext())
        url = (p.get("arguments") or {}).get("url")
        if self.mode == "fetch-404-as-page" and result.error_code and "404" in result.text:
            value = {"url": url, "status_code": 404, "body": {"kind": "text", "content": ""}, "truncated": False}
            return ToolResult(text=f"Fetched {url} (HTTP 404)", value=value)  # wrong: a failure is no page
        if self.mode == "fetch-whole-truncated" and result.value is not None:  # wrong: a whole body flagged cut
            return ToolResult(text=result.text, value={**result.value, "truncated": True})
        if self.mode == "fetch-title-field" and result.value is not None:
            return ToolResult(text=result.text, value={**result.value, "title": "a title"})  # wrong: no title field
        return result

    def standalone_tool(self, protocol: object) -> StandaloneSearchTool:
        kind = "responses" if protocol == "responses" else "messages"
        backend = ResponsesStandaloneSearch if kind == "responses" else MessagesStandaloneSearch
        standalone_breaks = ("standalone-follow-redirects", "standalone-leak-reasoning", *RESPONSES_BREAKS,
                             *STANDALONE_REQUESTS)
        transport = BreakingTransport(self.mode) if self.mode in standalone_breaks and self.mode else None
        search = backend(
            self.bases.get(kind, ""),
            "deepseek-v4-flash",
            KEY_ENV,
            transport=transport,
            environ=credential_environ(self.api_key),
        )
        budget = 4096 if self.mode == "standalone-budget" else MAX_OUTPUT_TOKENS
        return StandaloneSearchTool(search, max_output_tokens=budget)

    async def standalone_search(self, p: dict[str, Any]) -> ToolResult:
        tool = self.standalone_tool(p.get("protocol"))
        if self.mode not in STANDALONE_REBUILT:
            return await tool.execute(p.get("arguments"), CallContext())
        try:
            query = parse_query(p.get("arguments"))
            answer = await tool.backend.standalone_search(
                query, CallContext(), max_tokens=MAX_OUTPUT_TOKENS, timeout_s=SEARCH_TIMEOUT_S
            )
        except WebError as error:
            if self.mode == "standalone-failure-as-summary" and re.search(r"HTTP (429|5\d\d)", str(error)):
                text = encode_result(f"Search failed: {error}", [])  # wrong: a failure is a tool error
                return ToolResult(text=text, value={"result": json.loads(text)})
            return error_result(error)
        if not answer.searched and self.mode != "standalone-accept-prose":
            return ToolResult(text="Error: no native search", error_code="WEB_PROVIDER_ERROR")
        sources = bound_sources(answer.sources)
        if self.mode == "standalone-all-sources":
            sources = [{"title": s.title, "url": s.url} for s in answer.sources]
        if self.mode == "standalone-mine-urls" and not sources:
            sources = [{"title": "", "url": u} for u in re.findall(r"https?://[^\s)\]]+", answer.summary)]
        if self.mode == "standalone-cited-sources-only":
            sources = [s for s in sources if s["url"] in answer.summary]
        if self.mode == "standalone-no-bound":
            text = json.dumps({"summary": answer.summary, "sources": sources}, ensure_ascii=False)
        elif self.mode == "standalone-bound-chars":
            text = chars_bound(answer.summary, sources)
        else:
            text = encode_result(answer.summary, sources)
        return ToolResult(text=text, value={"result": json.loads(text)})

    async def standalone_resolve(self, p: dict[str, Any]) -> ToolResult:
        document = p.get("document")
        if self.mode == "standalone-ignore-access-list" and isinstance(document, dict):
            document = {k: v for k, v in document.items() if k != "connection_access"}  # wrong: limits apply
        if self.mode == "standalone-broker-credentials" and isinstance(document, dict):
            accounts = document.get("accounts")
            if isinstance(accounts, list):  # wrong: a broker's or extension's model is no local search account
                document = {**document, "accounts": [{k: v for k, v in a.items() if k != "source"}
                                                     if isinstance(a, dict) else a for a in accounts]}
        value = resolve(document, {name: "set" for name in p.get("environ_set") or []}).to_json()  # type: ignore[arg-type]
        reference = document.get("web_search_model") if isinstance(document, dict) else None
        if self.mode == "standalone-resolve-last-slash" and isinstance(reference, str) and reference.count("/") > 1:
            value = {"status": "invalid", "route": None, "reason": "not_found", "reference": reference}
        return ToolResult(text=json.dumps(value), value=value)


class Server:
    """Reads requests from stdin, runs each in a task, writes one answer line per request."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.calls: dict[int, asyncio.Task[None]] = {}
        self.answered: set[int] = set()
        self.single: set[int] = set()  # calls with one distinct query (cancel-single-early)

    def write(self, message: dict[str, Any]) -> None:
        if message["id"] in self.answered:
            return  # ignore-cancel already answered this call
        self.answered.add(message["id"])
        sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    async def call(self, request_id: int, method: str, params: dict[str, Any]) -> None:
        try:
            run = {
                "web_search": self.adapter.web_search,
                "web_fetch": self.adapter.web_fetch,
                "standalone_search": self.adapter.standalone_search,
                "standalone_resolve": self.adapter.standalone_resolve,
                "evidence_search": self.adapter.evidence_search,
            }[method]
            result = await run(params)
        except asyncio.CancelledError:
            # Reached only after the reference tool settled every upstream request (seed 000).
            self.write({"id": request_id, "cancelled": True})
            return
        except WebError as error:
            self.write({"id": request_id, "error": {"code": error.code, "message": error.message}})
            return
        finally:
            self.calls.pop(request_id, None)
        if result.error_code is not None:
            code = result.error_code
            if self.adapter.mode == "wrong-error-code" and code == "WEB_INVALID_ARGUMENTS":
                code = "WEB_PROVIDER_ERROR"  # wrong: the arguments were at fault, not the provider
            self.write({"id": request_id, "error": {"code": code, "message": result.text}})
        else:
            self.write({"id": request_id, "result": {"text": result.text, "value": result.value}})

    def handle(self, message: dict[str, Any]) -> bool:
        """Dispatch one request; False after shutdown."""
        request_id, method, params = message["id"], message.get("method"), message.get("params") or {}
        if method in ("web_search", "web_fetch", "standalone_search", "standalone_resolve", "evidence_search"):
            queries = (params.get("arguments") or {}).get("queries")
            if isinstance(queries, list) and len(set(map(str, queries))) == 1:
                self.single.add(request_id)
            self.calls[request_id] = asyncio.ensure_future(self.call(request_id, method, params))
        elif method == "cancel":
            target = self.calls.get(int(params.get("id", 0)))
            mode = self.adapter.mode
            early = mode == "cancel-no-wait" or (mode == "cancel-single-early" and params.get("id") in self.single)
            if target is not None and mode == "ignore-cancel":
                self.write({"id": params["id"], "cancelled": True})  # wrong: the batch keeps running
            elif target is not None and early:
                target.cancel()
                self.write({"id": params["id"], "cancelled": True})  # wrong: before its upstream requests closed
            elif target is not None:
                target.cancel()
            self.write({"id": request_id, "result": {}})
        elif method == "hello":
            self.write({"id": request_id, "result": self.adapter.hello()})
        elif method == "configure":
            try:
                self.write({"id": request_id, "result": self.adapter.configure(params)})
            except WebError as error:  # a key the implementation refuses (seed 001: a bad localization)
                self.write({"id": request_id, "error": {"code": error.code, "message": error.message}})
        elif method == "shutdown":
            self.write({"id": request_id, "result": {}})
            return False
        else:
            self.write({"id": request_id, "error": {"code": "WEB_INVALID_ARGUMENTS", "message": f"unknown {method}"}})
        return True

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            if line.strip() and not self.handle(json.loads(line)):
                break
        for task in list(self.calls.values()):
            task.cancel()
        await asyncio.gather(*self.calls.values(), return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--break", dest="mode", choices=BREAKS, help="misbehave on purpose (suite self-tests)")
    parser.add_argument("--variant", choices=VARIANTS, help="differ from the reference where the seeds allow it")
    parser.add_argument("--without", action="append", default=[], metavar="CAP", help="do not declare CAP")
    args = parser.parse_args()
    capabilities = tuple(c for c in CAPABILITIES if c not in args.without)
    mode = args.mode or args.variant
    bend_scheduling(mode)
    bend_evidence(mode)
    bend_summary(mode)
    log("starting", f"mode={mode}", f"capabilities={','.join(capabilities)}")
    asyncio.run(Server(Adapter(mode, capabilities)).serve())


if __name__ == "__main__":
    main()
