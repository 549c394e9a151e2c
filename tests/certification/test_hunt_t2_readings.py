"""A read-only hunt (T2) over seed 003's standalone search found five wrong readings dsweb certify passed; these
tests prove the rows added for them catch each, and that the reference and the readings seed 003 leaves open pass.

- T2-1: a network failure (the connection refused, or dropped mid-body) answered as an empty success ("nothing
  found"): standalone.prose.error's messages-body-cut row took a result or a tool error, and no row refused the
  connection. Seed 003: "失败通过普通工具错误返回" (failures come back as ordinary tool errors).
- T2-2: a line-based save finding the field only when written as a double-quoted basic string: a literal
  ('...') or multi-line (triple-quoted) one stayed beside a second field (standalone.save.keeps_rest).
- T2-3: truncated set when only an exact duplicate source was dropped (standalone.result.bounded).
- T2-4: source titles cut to a fixed length unflagged; the reference did it too (its 2 048-byte title bound), and
  now sets truncated when that bound cuts a title.
- T2-5: a Messages answer's cache read and creation tokens, which its input_tokens leaves out, lost from the
  usage; the reference did it too, and now folds them into input_tokens (standalone.usage.reported)."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from dsweb_ref import WebError
from dsweb_ref._exceptions import WebErrorCode
from dsweb_ref._protocols import StandaloneAnswer, StandaloneUsage
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import standalone, standalone_save, standalone_usage
from dsweb_ref.emulator.streaming import messages_events, render_sse
from dsweb_ref.providers import standalone_messages
from dsweb_ref.tools import standalone_search
from dsweb_ref.tools.standalone_search import StandaloneSearchTool

from ._readings import failing_rows, fails_exactly_shown, keep_rows, passes_rows, patch_reading
from .test_sdk_valid_answers import strictly

SHOWN = r"^\[([a-z0-9-]+)\]"  # the row a standalone check's reason names first

# -- T2-1: a network failure answered as an empty success ------------------------------------------------------

PROSE, PROSE_ROWS = "standalone.prose.error", "PROSE_CASES"
NETWORK_ROWS = ("messages-body-cut", "messages-connection-refused")
RIGHT_ANSWER = StandaloneSearchTool._answer


def _network_failures_as(answer: Any) -> Any:
    """The hunt's tool: a search whose request met a transport error (no timeout) answered by ``answer``."""

    async def tolerant(self: StandaloneSearchTool, query: str, ctx: Any) -> StandaloneAnswer:
        try:
            return await RIGHT_ANSWER(self, query, ctx)
        except WebError as error:
            if isinstance(error.cause, httpx.TransportError) and not isinstance(error.cause, httpx.TimeoutException):
                return answer(error)
            raise

    return tolerant


def test_the_reference_fails_a_refused_or_cut_search(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone, PROSE_ROWS, PROSE, NETWORK_ROWS, monkeypatch)


def test_network_failures_answered_as_nothing_found_fail_exactly_the_network_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the connection refused or dropped mid-body answered {"summary": "", "sources": []} (a success)
    empty = _network_failures_as(lambda _: StandaloneAnswer(summary="", sources=(), searched=True,
                                                            usage=StandaloneUsage(http_requests=1)))
    monkeypatch.setattr(StandaloneSearchTool, "_answer", empty)
    fails_exactly_shown(standalone, PROSE_ROWS, PROSE, NETWORK_ROWS, SHOWN, monkeypatch)


def test_a_network_failure_under_another_web_code_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: which WEB_* code and words the tool error carries (seed 003 says only "an ordinary tool error")
    def unavailable(error: WebError) -> StandaloneAnswer:
        raise WebError(WebErrorCode.PROVIDER_UNAVAILABLE, "the search backend cannot be reached") from error

    monkeypatch.setattr(StandaloneSearchTool, "_answer", _network_failures_as(unavailable))
    passes_rows(standalone, PROSE_ROWS, PROSE, NETWORK_ROWS, monkeypatch)


# -- T2-2: a line-based save reading only double-quoted values -------------------------------------------------

SAVE, SAVES = "standalone.save.keeps_rest", "SAVE_CASES"
STRING_ROWS = {"literal-string-field-replaced", "top-level-literal-string-field-replaced",
               "multi-line-string-field-replaced"}
HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-]+)\s*\]")
BASIC_ONLY = r'"(?:[^"\\\n]|\\.)*"'  # the hunt's: the field found only with a basic string value
ANY_ONE_LINE = r"""(?:\"\"\"(?:[^\\]|\\.)*?\"\"\"|'''.*?'''|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
RIGHT_SAVE = targets.reference_save


def _line_save(value_pattern: str) -> Any:
    """The hunt's save: the field's line found by a pattern whose value part is ``value_pattern``, its value
    replaced (the rest of the line kept); else a line added first in [agent], or at the top of the file."""
    field = re.compile(r"^(\s*(?:agent\s*\.\s*)?web_search_model\s*=\s*)" + value_pattern)

    def edit(text: str, value: str) -> str:
        rendered = json.dumps(value, ensure_ascii=False)
        lines = text.split("\n")
        section: str | None = None
        agent_at: int | None = None
        for i, line in enumerate(lines):
            if line.lstrip().startswith("[["):
                section = "array"
                continue
            if (header := HEADER.match(line)) is not None:
                section = header[1]
                agent_at = i if section == "agent" else agent_at
                continue
            found = field.match(line)
            top = section is None and line.strip().startswith(("web_search_model", "agent"))
            if found is not None and (section == "agent" or top):
                lines[i] = found[1] + rendered + line[found.end():]
                return "\n".join(lines)
        newline = "\r\n" if "\r\n" in text else "\n"
        if agent_at is not None:
            rest = newline + "\n".join(lines[agent_at + 1:]) if agent_at + 1 < len(lines) else ""
            return "\n".join(lines[: agent_at + 1]) + "\n" + f"web_search_model = {rendered}" + rest
        return f"web_search_model = {rendered}{newline}{text}"

    def save(user: str | None, project: str | None, value: str) -> dict[str, Any]:
        right = RIGHT_SAVE(user, project, value)  # the effect and any refusal as the reference's
        return {**right, "user": edit(user or "", value)}

    return save


def test_the_reference_replaces_a_field_in_every_string_form(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone_save, SAVES, SAVE, STRING_ROWS, monkeypatch)


def test_a_save_finding_only_basic_strings_fails_exactly_the_string_form_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the field's line found only when its value is "...": a '...' one stays and a second field is added
    # ([agent]: no TOML) or left beside the new one (top level); a """...""" one keeps its old value's rest
    monkeypatch.setattr(targets, "reference_save", _line_save(BASIC_ONLY))
    assert failing_rows(standalone_save, SAVES, SAVE, monkeypatch) == STRING_ROWS


def test_a_line_save_reading_every_one_line_string_form_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a line-based save (the value rewritten as a basic string, the quoting style being the save's own)
    monkeypatch.setattr(targets, "reference_save", _line_save(ANY_ONE_LINE))
    passes_rows(standalone_save, SAVES, SAVE, STRING_ROWS, monkeypatch)


# -- T2-3 and T2-4: truncated for a duplicate dropped, and a long title ----------------------------------------

BOUNDED, BOUNDS = "standalone.result.bounded", "BOUND_CASES"
DUPLICATE, LONG = "duplicate-source-short-answer", "long-title-small-result"
EIGHT = "eight-long-sources-short-summary"
RESULT = "return encode_result(summary, bound_sources(answer.sources), cut), answer.usage"  # StandaloneSearchTool.run
FLAGGED = "cut = cut or titles_cut(answer.sources)"


def _run_returning(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(StandaloneSearchTool, "run", RESULT, line, monkeypatch)


def test_the_reference_passes_the_duplicate_and_long_title_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone, BOUNDS, BOUNDED, (DUPLICATE, LONG), monkeypatch)


def test_truncated_for_fewer_sources_than_listed_fails_exactly_the_duplicate_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: truncated set whenever the kept sources are fewer than the backend listed (a duplicate dropped)
    _run_returning("sources = bound_sources(answer.sources)\n    "
                   "return encode_result(summary, sources, cut or len(sources) < len(answer.sources)), "
                   "answer.usage", monkeypatch)
    fails_exactly_shown(standalone, BOUNDS, BOUNDED, DUPLICATE, SHOWN, monkeypatch)


def test_truncated_for_distinct_sources_past_the_cap_passes_the_duplicate_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a ninth distinct source dropped flagged as a cut (the duplicate here is no loss either way)
    _run_returning("sources = bound_sources(answer.sources)\n    distinct = {s.url for s in answer.sources}\n"
                   "    return encode_result(summary, sources, cut or len(distinct) > len(sources)), "
                   "answer.usage", monkeypatch)
    passes_rows(standalone, BOUNDS, BOUNDED, DUPLICATE, monkeypatch)


@pytest.mark.parametrize(("bound", "rows"), [(2_048, {LONG}), (200, {LONG, EIGHT})],
                         ids=["the-reference's-2048-bytes", "the-hunt's-200"])
def test_titles_cut_unflagged_fail_exactly_the_long_title_row(
    bound: int, rows: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a title cut to a fixed length (the reference's 2 048 bytes before the fix, the hunt's 200) without
    # setting truncated; at 200 bytes the eight long sources fit too, all kept with their titles cut, unflagged
    # (review R2 F4's row)
    patch_reading(StandaloneSearchTool, "run", FLAGGED, "pass", monkeypatch)
    monkeypatch.setattr(standalone_search, "MAX_TITLE_BYTES", bound)
    fails_exactly_shown(standalone, BOUNDS, BOUNDED, rows, SHOWN, monkeypatch)


@pytest.mark.parametrize("bound", [10**6, 200], ids=["kept-whole", "cut-to-200-and-flagged"])
def test_a_long_title_kept_whole_or_cut_and_flagged_passes(bound: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # open: seed 003 sets no title bound: the title whole (unflagged), or a target's own bound with truncated set
    monkeypatch.setattr(standalone_search, "MAX_TITLE_BYTES", bound)
    passes_rows(standalone, BOUNDS, BOUNDED, LONG, monkeypatch)


def test_a_whole_title_flagged_fails_the_long_title_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: truncated set though the title is whole and nothing else was cut
    monkeypatch.setattr(standalone_search, "MAX_TITLE_BYTES", 10**6)
    _run_returning("return encode_result(summary, bound_sources(answer.sources), True), answer.usage", monkeypatch)
    keep_rows(standalone, BOUNDS, (LONG,), monkeypatch)
    assert failing_rows(standalone, BOUNDS, BOUNDED, monkeypatch) == {LONG}


def test_the_long_title_row_is_a_small_result() -> None:
    assert len(standalone.LONG_TITLE) == 5_000 > standalone_search.MAX_TITLE_BYTES
    whole = standalone_search._encode(standalone.ANSWER_TEXT, [{"title": standalone.LONG_TITLE,
                                                                "url": standalone.LONG_TITLE_URL}], False)
    assert len(whole) < standalone.MAX_RESULT_BYTES // 4


# -- T2-5: Messages cache tokens lost from the usage -----------------------------------------------------------

USAGE, USAGES = "standalone.usage.reported", "USAGE_CASES"
CACHE_ROWS = ("messages-cache-tokens", "messages-cache-tokens-streamed")
SUMMED = "input_tokens=sum(counts)"
RAW = "input_tokens=counts[0]"


def test_the_cache_rows_answers_parse_strictly_with_the_anthropic_sdk() -> None:
    body = standalone_usage._messages(tokens=standalone_usage.CACHED)
    assert strictly("messages", body) == 1
    assert strictly("messages", render_sse(messages_events(json.loads(body)))) > 3


def test_the_reference_folds_cache_tokens_into_the_input_count(monkeypatch: pytest.MonkeyPatch) -> None:
    usage = standalone_messages.read_usage(json.loads(standalone_usage._messages(tokens=standalone_usage.CACHED))
                                           ["usage"])
    assert usage.input_tokens == standalone_usage.TOKENS["input_tokens"]
    passes_rows(standalone_usage, USAGES, USAGE, CACHE_ROWS, monkeypatch)


def test_cache_tokens_lost_fail_exactly_the_cache_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: only a Messages answer's input_tokens read, its cache reads and creations lost
    patch_reading(standalone_messages, "read_usage", SUMMED, RAW, monkeypatch)
    fails_exactly_shown(standalone_usage, USAGES, USAGE, CACHE_ROWS, SHOWN, monkeypatch)


WANT = {"source": "web-search", "connection": "c", "model": targets.STANDALONE_MODEL, "output_tokens": 567,
        "http_requests": 1}
BASE = standalone_usage.CACHED["input_tokens"]  # 184: input_tokens as a Messages answer gives it


@pytest.mark.parametrize(
    ("usage", "right"),
    [
        # open: folded into input_tokens (the reference), with or without the counts beside it
        ({"input_tokens": 1_234}, True),
        ({"input_tokens": 1_234, "cache_read_input_tokens": 1_000, "cache_creation_input_tokens": 50}, True),
        # open: both reported apart, under the answer's keys or others naming the cache, at the top or nested
        ({"input_tokens": BASE, "cache_read_input_tokens": 1_000, "cache_creation_input_tokens": 50}, True),
        ({"input_tokens": BASE, "input_tokens_details": {"cache_read_tokens": 1_000, "cache_write_tokens": 50}}, True),
        # open: one folded, the other apart
        ({"input_tokens": BASE + 1_000, "cache_creation_input_tokens": 50}, True),
        ({"input_tokens": BASE + 50, "cached_tokens": 1_000}, True),
        # catches: both lost, or one of them
        ({"input_tokens": BASE}, False),
        ({"input_tokens": BASE + 1_000}, False),
        ({"input_tokens": BASE, "cache_read_input_tokens": 1_000}, False),
        ({"input_tokens": BASE, "cache_creation_input_tokens": 50}, False),
    ],
)
def test_the_cache_rows_accept_every_right_reading(usage: dict[str, Any], right: bool) -> None:
    problems = standalone_usage._problems({**WANT, **usage}, cache=True)
    assert (problems == []) is right, problems
