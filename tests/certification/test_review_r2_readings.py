"""A read-only review (R2) of hunt T2's rows in seed 003's standalone checks (commit 399d257) found two false
failures and two false passes; these tests prove the rows now take each right reading and reject each wrong one,
and that the reference passes them.

- F1 (standalone.prose.error): a tool that retries a search request once after a transport failure (and, as the
  official SDKs do, after an HTTP 429 or 5xx) failed messages-body-cut (and the 429/5xx rows): only the first
  request met the failure, so the retry got a whole answer. Seed 003 says nothing of retries ("失败通过普通工具错误
  返回" speaks of failures) and standalone.deadline.enforced accepts them: every request of a row now meets its
  failure. Hunt T2-1's empty success still fails (test_hunt_t2_readings).
- F2 (standalone.usage.reported): cache tokens reported apart in an object under a key naming the cache
  (Anthropic's own cache_creation: {ephemeral_5m_input_tokens, ...}, or cache_tokens: {read, creation}) were not
  read: the rows wanted them folded into input_tokens. The Responses reading of cached input had the same limit.
- F3 (standalone.result.bounded, long-title-small-result): the source dropped for its 5 000-character title,
  unflagged, passed. Seed 003 keeps up to eight distinct HTTP(S) sources ("最多保留八个不重复的 HTTP(S) 来源"):
  the source lost is a cut the result flags.
- F4 (the same check, eight-long-sources-short-summary): every title cut to 100 bytes to fit the bound, all eight
  sources kept, unflagged, passed (only fewer sources were judged); a cut title is a cut the result flags."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from dsweb_ref import WebError
from dsweb_ref._protocols import StandaloneSource, StandaloneUsage
from dsweb_ref.certification.checks import standalone, standalone_usage
from dsweb_ref.providers import _standalone, standalone_messages
from dsweb_ref.tools import standalone_search
from dsweb_ref.tools.standalone_search import StandaloneSearchTool

from ._readings import fails_exactly_shown, passes, passes_rows, patch_reading

SHOWN = r"^\[([a-z0-9-]+)\]"  # the row a standalone check's reason names first

# -- F1: a retry after a failed request ------------------------------------------------------------------------

PROSE, PROSES = "standalone.prose.error", "PROSE_CASES"
NETWORK_ROWS = ("messages-body-cut", "messages-connection-refused")
# The rows a retry after an HTTP 429 or 5xx met (each failed when only the first request failed).
STATUS_ROWS = ("http-500", "http-500-with-an-answer-body", "http-500-with-an-answer-stream", "responses-http-429",
               "http-500-body-a-string-with-a-lone-surrogate")
RIGHT_POST = _standalone.post


async def _retry_transport(*args: Any, **kwargs: Any) -> Any:
    """The review's p_retry_transport: a request whose transport failed (reset, cut, refused; no timeout, status or
    redirect) sent once more, its answer taken."""
    try:
        return await RIGHT_POST(*args, **kwargs)
    except WebError as error:
        cause = error.__cause__
        if isinstance(cause, httpx.TimeoutException) or not isinstance(cause, (httpx.TransportError, OSError)):
            raise
        return await RIGHT_POST(*args, **kwargs)


async def _retry_all(*args: Any, **kwargs: Any) -> Any:
    """The review's p_retry_all: any failed request (no timeout) and any HTTP 429 or 5xx sent once more."""
    try:
        reply = await RIGHT_POST(*args, **kwargs)
    except WebError as error:
        if "timed out" in str(error).lower() or "deadline" in str(error).lower():
            raise
        return await RIGHT_POST(*args, **kwargs)
    if reply.status == 429 or reply.status >= 500:
        return await RIGHT_POST(*args, **kwargs)
    return reply


def test_the_reference_passes_the_failure_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone, PROSES, PROSE, (*NETWORK_ROWS, *STATUS_ROWS), monkeypatch)


@pytest.mark.parametrize("retry", [_retry_transport, _retry_all], ids=["transport-failures", "and-429-or-5xx"])
def test_a_tool_retrying_a_failed_request_passes(retry: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a retry of a failed request (seed 003 says nothing of retries); the search still failed, a tool error
    monkeypatch.setattr(_standalone, "post", retry)
    passes(PROSE)


def test_every_request_of_a_failure_row_meets_its_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    # the retry is sent, and fails too: the rows' faults meet every request (the review's tool had its retry given a
    # whole answer, and took it for the search's)
    sent: list[str] = []

    async def counted(*args: Any, **kwargs: Any) -> Any:
        try:
            reply = await RIGHT_POST(*args, **kwargs)
        except WebError as error:
            sent.append(type(error.__cause__).__name__)
            raise
        sent.append(str(reply.status))
        return reply

    monkeypatch.setattr(_standalone, "post", lambda *a, **k: _retrying(counted, *a, **k))
    passes_rows(standalone, PROSES, PROSE, ("messages-body-cut", "http-500"), monkeypatch)
    assert len(sent) == 4 and "500" in sent and "200" not in sent, sent


async def _retrying(send: Any, *args: Any, **kwargs: Any) -> Any:
    """A request sent once more after any failure (a status of 500 too)."""
    try:
        reply = await send(*args, **kwargs)
    except WebError:
        return await send(*args, **kwargs)
    return await send(*args, **kwargs) if reply.status >= 500 else reply


# -- F2: cache counts reported apart in an object under a key naming the cache ---------------------------------

USAGE, USAGES = "standalone.usage.reported", "USAGE_CASES"
CACHE_ROWS = ("messages-cache-tokens", "messages-cache-tokens-streamed")
READ, CREATION = standalone_usage.CACHE_READ, standalone_usage.CACHE_CREATION
BASE = standalone_usage.CACHED["input_tokens"]  # 184: input_tokens as a Messages answer gives it
RIGHT_USAGE = standalone_messages.read_usage


@dataclass(frozen=True)
class _CacheApart(StandaloneUsage):
    """The review's tools: the answer's input_tokens as it stands, its cache counts reported apart in ``shape``."""

    cache_read: int = 0
    cache_creation: int = 0
    shape: str = "anthropic"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(StandaloneUsage.to_json(self))
        if self.shape == "anthropic":  # the Anthropic API's own shape
            out["cache_read_input_tokens"] = self.cache_read
            out["cache_creation"] = {"ephemeral_5m_input_tokens": self.cache_creation, "ephemeral_1h_input_tokens": 0}
        elif self.shape == "nested":
            out["cache_tokens"] = {"read": self.cache_read, "creation": self.cache_creation}
        else:  # flat, under keys of the tool's own naming the cache
            out["cache_read_tokens"], out["cache_write_tokens"] = self.cache_read, self.cache_creation
        return out


def _reporting_apart(shape: str) -> Any:
    def read_usage(usage: object) -> StandaloneUsage:
        given, right = standalone_messages.mapping(usage), RIGHT_USAGE(usage)
        return _CacheApart(input_tokens=standalone_messages.count(given.get("input_tokens")),
                           output_tokens=right.output_tokens, http_requests=right.http_requests,
                           web_search_requests=right.web_search_requests,
                           cache_read=standalone_messages.count(given.get("cache_read_input_tokens")),
                           cache_creation=standalone_messages.count(given.get("cache_creation_input_tokens")),
                           shape=shape)

    return read_usage


@pytest.mark.parametrize("shape", ["anthropic", "nested", "flat"])
def test_cache_counts_reported_apart_in_any_shape_pass(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # open: the cache counts reported apart, at the usage's top level or in an object under a key naming the cache
    monkeypatch.setattr(standalone_messages, "read_usage", _reporting_apart(shape))
    passes_rows(standalone_usage, USAGES, USAGE, CACHE_ROWS, monkeypatch)


WANT = {"source": "web-search", "connection": "c", "model": "deepseek-v4-flash", "output_tokens": 567,
        "http_requests": 1}


@pytest.mark.parametrize(
    ("usage", "right"),
    [
        # open: Anthropic's shape (the creation count also, or only, in cache_creation), or an object of one's own
        ({"input_tokens": BASE, "cache_read_input_tokens": READ,
          "cache_creation": {"ephemeral_5m_input_tokens": CREATION, "ephemeral_1h_input_tokens": 0}}, True),
        ({"input_tokens": BASE, "cache_read_input_tokens": READ, "cache_creation_input_tokens": CREATION,
          "cache_creation": {"ephemeral_5m_input_tokens": CREATION, "ephemeral_1h_input_tokens": 0}}, True),
        ({"input_tokens": BASE, "cache_tokens": {"read": READ, "creation": CREATION}}, True),
        ({"input_tokens": BASE, "input_tokens_details": {"cache": {"read": READ, "write": CREATION}}}, True),
        ({"input_tokens": BASE + READ, "cache": {"creation": CREATION}}, True),
        # catches: one of them lost all the same, or a count in an object under another key
        ({"input_tokens": BASE, "cache_tokens": {"read": READ}}, False),
        ({"input_tokens": BASE, "cache_creation": {"ephemeral_5m_input_tokens": CREATION}}, False),
        ({"input_tokens": BASE, "prompt": {"read": READ, "creation": CREATION}}, False),
        ({"input_tokens": BASE, "cache_tokens": {"read": READ, "creation": CREATION, "miss": 7}, "x": {"y": 1}},
         True),
        ({"input_tokens": BASE, "cache_tokens": {"read": READ, "miss": CREATION}}, False),
    ],
)
def test_the_cache_rows_read_counts_in_an_object_naming_the_cache(usage: dict[str, Any], right: bool) -> None:
    problems = standalone_usage._problems({**WANT, **usage}, cache=True)
    assert (problems == []) is right, problems


@pytest.mark.parametrize(
    ("usage", "right"),
    [
        # open: Responses' cached input reported apart in an object under a key naming the cache
        ({"input_tokens": 234, "cache": {"read": 1_000}}, True),
        ({"input_tokens": 234, "prompt_cache": {"hit_tokens": 1_000, "miss_tokens": 234}}, True),
        # catches: a write, a creation or a miss taken for the cached input
        ({"input_tokens": 234, "cache": {"write": 1_000}}, False),
        ({"input_tokens": 234, "cache_creation": {"ephemeral_5m_input_tokens": 1_000}}, False),
        ({"input_tokens": 234, "prompt_cache": {"miss_tokens": 1_000}}, False),
    ],
)
def test_the_responses_rows_read_cached_input_in_an_object_naming_the_cache(
    usage: dict[str, Any], right: bool
) -> None:
    problems = standalone_usage._problems({**WANT, **usage})
    assert (problems == []) is right, problems


def test_the_message_names_the_cache_counts_it_read() -> None:
    (problem,) = standalone_usage._problems({**WANT, "input_tokens": BASE, "cache_tokens": {"read": READ}},
                                            cache=True)
    assert problem.startswith(f"input_tokens={BASE}, expected 1234") and f"[{READ}]" in problem, problem


def test_many_cache_counts_are_judged_at_once() -> None:
    # the counts reported apart are summed as sets of sums up to the input wanted: forty keys take no 2**40 steps
    many = {f"cache_{n}": 1 for n in range(40)}
    assert standalone_usage._problems({**WANT, "input_tokens": 1_234 - 40, **many}, cache=True) == []


# -- F3 and F4: a source dropped for its long title, titles cut to keep eight sources, unflagged -----------------

BOUNDED, BOUNDS = "standalone.result.bounded", "BOUND_CASES"
LONG, EIGHT = "long-title-small-result", "eight-long-sources-short-summary"
FLAGGED = "cut = cut or titles_cut(answer.sources)"  # StandaloneSearchTool.run: a title cut is a cut
RIGHT_BOUND, RIGHT_ENCODE = standalone_search.bound_sources, standalone_search.encode_result


def _dropping_titles_over(chars: int) -> Any:
    """The review's p_drop_title_over_3000: a source whose title is over ``chars`` characters dropped, unflagged."""

    def bound(sources: tuple[StandaloneSource, ...]) -> list[dict[str, str]]:
        return RIGHT_BOUND(tuple(s for s in sources if not (isinstance(s.title, str) and len(s.title) > chars)))

    return bound


def _fit_by_titles(flagged: bool) -> Any:
    """The review's p_fit_by_titles: over the bound, every title cut to 100 bytes first (the summary and every source
    kept), flagged or not; the reference's way when that is not enough."""

    def encode(summary: str, sources: list[dict[str, str]], truncated: bool = False, limit: int = 24_000) -> str:
        if len(standalone_search._encode(summary, sources, truncated)) > limit:
            short = [{**s, "title": standalone_search._cut_bytes(s["title"], 100)[0]} for s in sources]
            fitted = standalone_search._encode(summary, short, truncated or flagged)
            if len(fitted) <= limit:
                return fitted.decode("utf-8")
        return RIGHT_ENCODE(summary, sources, truncated, limit)

    return encode


def test_the_reference_passes_the_long_title_and_eight_sources_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone, BOUNDS, BOUNDED, (LONG, EIGHT), monkeypatch)


def test_a_source_dropped_for_its_long_title_unflagged_fails_exactly_the_long_title_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the one source of a small result dropped for its 5 000-character title, truncated not set
    monkeypatch.setattr(standalone_search, "bound_sources", _dropping_titles_over(3_000))
    fails_exactly_shown(standalone, BOUNDS, BOUNDED, LONG, SHOWN, monkeypatch)


def test_a_source_dropped_for_its_long_title_and_flagged_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a target's own title bound may drop the source, a cut the result flags
    monkeypatch.setattr(standalone_search, "bound_sources", _dropping_titles_over(3_000))
    patch_reading(StandaloneSearchTool, "run", FLAGGED, FLAGGED + " or not bound_sources(answer.sources)", monkeypatch)
    passes_rows(standalone, BOUNDS, BOUNDED, LONG, monkeypatch)


def test_titles_cut_to_keep_eight_sources_unflagged_fail_exactly_the_eight_sources_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: every title cut to 100 bytes so that all eight sources and the summary fit, truncated not set
    monkeypatch.setattr(standalone_search, "encode_result", _fit_by_titles(flagged=False))
    fails_exactly_shown(standalone, BOUNDS, BOUNDED, EIGHT, SHOWN, monkeypatch)


def test_titles_cut_to_keep_eight_sources_and_flagged_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: how a target gets under the bound (titles cut, sources dropped, the summary cut), the cut flagged
    monkeypatch.setattr(standalone_search, "encode_result", _fit_by_titles(flagged=True))
    passes(BOUNDED)


@pytest.mark.parametrize("bound", [10**9, 16], ids=["titles-whole", "titles-cut-to-16-bytes-and-flagged"])
def test_a_title_bound_of_a_targets_own_passes(bound: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # open: no title bound, or one of a target's own that flags its cuts (the review's p_titles_*)
    monkeypatch.setattr(standalone_search, "MAX_TITLE_BYTES", bound)
    passes(BOUNDED)
