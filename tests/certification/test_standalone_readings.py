"""The standalone rows added from the mutation survivors of providers/standalone_responses.py and
tools/standalone_search.py (issue 24 item 5), and the streamed rows that reach the stream readers
(providers/standalone_messages.read_events, standalone_responses.read_events, the endpoint's
_exchange) once configure's standalone_stream asks for a stream: each wrong reading, the reference
with one change, is caught by exactly the row that names it; every other row of the same check passes it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dsweb_ref import _secrets, netguard
from dsweb_ref.certification.checks import standalone
from dsweb_ref.certification.checks._base import CheckFailed
from dsweb_ref.certification.targets import CallOutcome
from dsweb_ref.netguard import body
from dsweb_ref.providers import _deepseek_http, _standalone, standalone_messages, standalone_responses
from dsweb_ref.tools import standalone_search

from ._readings import failing_rows, patch_reading

_FAILED_CALL = """            if status == "failed":
                failure = failure or "the native web search failed"
            if status != "completed":"""
_STATUS_OR_ERROR = 'if data.get("status") == "failed" or mapping(data.get("error")):'
_OUTPUT_CHECK = """    if not isinstance(output, list):
        raise unprocessable(label, "output is not a list")
"""
_ITEM_CHECK = """        if not isinstance(raw, dict):
            raise unprocessable(label, f"output[{i}] is not an object")
"""
_PART_CHECK = 'if part.get("type") != "output_text" or not isinstance(part.get("text"), str):'
_JSON_TEXT_READ = """    try:
        shaped = json.loads(answer.summary)
    except ValueError:
        shaped = None
    if isinstance(shaped, dict) and isinstance(shaped.get("sources"), list):
        answer = replace(answer, summary=str(shaped.get("summary", "")), sources=tuple(
            StandaloneSource(str(s.get("url")), str(s.get("title", ""))) for s in shaped["sources"]))
"""

# reading -> (function of standalone_responses, its line(s), the wrong line(s), check, the row that catches it)
READINGS: dict[str, tuple[str, str, str, str, str]] = {
    "failed-call-taken-for-completed": (
        "read_response", _FAILED_CALL, '            if status not in ("completed", "failed"):',
        "standalone.prose.error", "responses-search-failed"),
    "failed-status-ignored": (
        "read_response", _STATUS_OR_ERROR, 'if mapping(data.get("error")):',
        "standalone.prose.error", "responses-failed-status"),
    "error-object-ignored": (
        "read_response", _STATUS_OR_ERROR, 'if data.get("status") == "failed":',
        "standalone.prose.error", "responses-error-object"),
    "output-assumed-a-list": (
        "read_response", _OUTPUT_CHECK, "", "standalone.prose.error", "responses-output-not-a-list"),
    "items-assumed-objects": (
        "read_response", _ITEM_CHECK, "", "standalone.prose.error", "responses-item-not-an-object"),
    "content-assumed-a-list": (
        "_message", "for part in parts if isinstance(parts, list) else []:", "for part in parts:",
        "standalone.prose.error", "responses-content-not-a-list"),
    "text-assumed-a-string": (
        "_message", _PART_CHECK, 'if part.get("type") != "output_text":',
        "standalone.prose.error", "responses-text-not-a-string"),
    "annotations-assumed-a-list": (
        "_message", "for note in annotations if isinstance(annotations, list) else []:", "for note in annotations:",
        "standalone.prose.error", "responses-annotations-not-a-list"),
    "message-read-up-to-a-refusal": (
        "_message", "            continue\n", "            break\n",
        "standalone.sources.titled", "responses-title-after-a-refusal-part"),
    "any-title-taken": (
        "_source", 'title if isinstance(title, str) else ""', "title",
        "standalone.sources.titled", "responses-citation-title-not-a-string"),
    "calls-read-up-to-an-unfinished-one": (
        "read_response", "                continue\n", "                break\n",
        "standalone.sources.filtered", "responses-call-after-an-unfinished-one"),
}
CASES = {"standalone.prose.error": "PROSE_CASES", "standalone.sources.titled": "TITLE_CASES",
         "standalone.sources.filtered": "FILTER_CASES", "standalone.result.bounded": "BOUND_CASES",
         "standalone.request.isolated": "REQUEST_CASES", "standalone.sources.structured_only": "NO_SOURCE_CASES"}

# The same for tools/standalone_search.py: reading -> (its function, line(s), wrong line(s), check, row).
TOOL_READINGS: dict[str, tuple[str, str, str, str, str]] = {
    "bytes-cut-inside-a-character": (
        "_cut_bytes", 'data[:limit].decode("utf-8", "ignore")', 'data[:limit].decode("utf-8")',
        "standalone.result.bounded", "cjk-cut-inside-a-character"),
    "cut-flagged-at-the-bound": (
        "_cut_bytes", "if len(data) <= limit:", "if len(data) < limit:",
        "standalone.result.bounded", "summary-of-12000-bytes"),
    "https-only": (
        "_usable_url", 'parsed.scheme not in ("http", "https")', 'parsed.scheme != "https"',
        "standalone.sources.filtered", "plain-http"),
    "hostless-urls-kept": (
        "_usable_url", 'or not parsed.host or parsed.userinfo', "or parsed.userinfo",
        "standalone.sources.filtered", "no-host"),
    "query-assumed-present": (
        "parse_query", """    if "query" not in arguments:
        raise _invalid('invalid arguments: missing required property "query"')
""", "", "standalone.prose.error", "arguments-without-a-query"),
    "other-property-crashes": (
        "parse_query", 'raise _invalid(f"invalid arguments: unknown property', 'raise TypeError(f"unknown property',
        "standalone.prose.error", "arguments-with-another-property"),
}


# The same for StandaloneSearchTool's own methods.
TOOL_RUN_READINGS: dict[str, tuple[str, str, str, str, str]] = {
    # From an outside hunt: seed 001's ori_question habit, the user's latest prompt sent along with the query.
    "latest-prompt-carried": (
        "run", "ctx = ctx or CallContext()\n", "ctx = ctx or CallContext()\n"
        '    query = f"{query}\\n(The user asked: {ctx.latest_prompt})" if ctx.latest_prompt else query\n',
        "standalone.request.isolated", "messages-no-prompt"),
    # From an outside hunt: the search model's JSON-shaped text taken for the result.
    "json-shaped-text-taken-for-the-result": (
        "run", "    summary, cut = _cut_bytes(", _JSON_TEXT_READ + "    summary, cut = _cut_bytes(",
        "standalone.sources.structured_only", "messages-json-shaped-text"),
}


# Issue 24 item 5: the stream readers (read_events), reached once configure's standalone_stream asks for a
# streamed answer. reading -> (function, line(s), wrong line(s), check, the streamed row that catches it).
_UNFINISHED = "if failure is None and (streamed.cut or not stopped):"
_NO_FINAL = """    if final is None:
        return _failed(label, "the answer stream ended before the response completed", read_usage(None, 0))
"""
MESSAGES_STREAM_READINGS: dict[str, tuple[str, str, str, str, str]] = {
    "text-deltas-lost": (
        "read_events", 'texts[index].append(delta["text"])', "pass",
        "standalone.result.bounded", "huge-messages-summary-streamed"),
    "deltas-joined-with-a-space": (
        "read_events", 'blocks[index]["text"] = "".join(parts)', 'blocks[index]["text"] = " ".join(parts)',
        "standalone.result.bounded", "summary-of-11900-bytes-streamed"),
    "clean-end-taken-for-complete": (
        "read_events", _UNFINISHED, "if failure is None and streamed.cut:",
        "standalone.prose.error", "messages-stream-ended-early"),
    "cut-stream-kept-as-the-answer": (
        "read_events", _UNFINISHED, "if failure is None and not stopped and not streamed.cut:",
        "standalone.prose.error", "messages-stream-cut"),
    "error-event-ignored": (
        "read_events", 'failure = f"{label}: the stream reported an error"', "pass",
        "standalone.prose.error", "messages-stream-error-event"),
    "block-start-text-lost": (
        "read_events", 'texts[index] = [blocks[index]["text"]] if isinstance(blocks[index].get("text"), str) else []',
        "texts[index] = []", "standalone.result.bounded", "huge-summary-in-the-block-start-streamed"),
    "any-index-taken": (
        "read_events", "index = raw_index if isinstance(raw_index, int) and not isinstance(raw_index, bool) else None",
        "index = raw_index", "standalone.prose.error", "messages-stream-index-not-an-integer"),
    "deltas-assumed-after-their-block": (
        "read_events", 'elif kind == "content_block_delta" and index in texts:', 'elif kind == "content_block_delta":',
        "standalone.prose.error", "messages-stream-delta-before-its-block"),
    "delta-text-assumed-a-string": (
        "read_events", 'if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):',
        'if delta.get("type") == "text_delta":', "standalone.prose.error", "messages-stream-text-delta-not-a-string"),
}
RESPONSES_STREAM_READINGS: dict[str, tuple[str, str, str, str, str]] = {
    "error-event-ignored": (
        "read_events", 'return _failed(label, "the stream reported an error", read_usage((final or {}).get("usage"), '
        '0))', "continue", "standalone.prose.error", "responses-stream-error-event"),
    "clean-end-read-from-the-items": (
        "read_events", _NO_FINAL, _NO_FINAL.replace("final is None", "final is None and streamed.cut")
        + "    final = final or {}\n", "standalone.prose.error", "responses-stream-ended-early"),
    "cut-stream-read-from-the-items": (
        "read_events", _NO_FINAL, _NO_FINAL.replace("final is None", "final is None and not streamed.cut")
        + "    final = final or {}\n", "standalone.prose.error", "responses-stream-cut"),
    "output-items-alone": (
        "read_events", """    if not (isinstance(output, list) and output) and items:
        final = {**final, "output": [items[i] for i in sorted(items)]}""", """    if items:
        final = {"output": [items[i] for i in sorted(items)]}""",
        "standalone.prose.error", "responses-failed-status-streamed"),
    "final-event-misnamed": (
        "read_events", "if kind in _FINAL:", 'if kind == "response.done":',
        "standalone.result.bounded", "huge-responses-summary-streamed"),
    "items-counted-from-one": (
        "read_events", "[items[i] for i in sorted(items)]", "[items[i] for i in range(1, len(items) + 1)]",
        "standalone.prose.error", "responses-stream-final-without-output"),
    "any-index-but-a-bool-taken": (
        "read_events", "if isinstance(index, int) and not isinstance(index, bool):",
        "if isinstance(index, int) or not isinstance(index, bool):",
        "standalone.prose.error", "responses-stream-output-index-not-an-integer"),
}
# The same for the endpoint both backends share (providers/_standalone.py).
ENDPOINT_STREAM_READINGS: dict[str, tuple[str, str, str, str, str]] = {
    "cut-plain-answer-to-a-stream-crashes": (
        "_exchange", 'raise WebError(WebErrorCode.PROVIDER_ERROR, f"{self.label} response was cut off")',
        'raise RuntimeError(f"{self.label} response was cut off")',
        "standalone.prose.error", "messages-stream-answered-plainly-and-cut"),
    # A survivor of the seed-3 draw: the refusal of a JSON answer that is not an object built without its reason.
    "non-object-refusal-crashes": (
        "_exchange", 'raise unprocessable(self.label, "expected a JSON object")', "raise unprocessable(self.label)",
        "standalone.prose.error", "answer-not-an-object"),
    # A survivor of the seed-2 draw: an event-stream body read as the answer whatever the HTTP status.
    "event-stream-read-whatever-the-status": (
        "_exchange", "if partial is not None and 200 <= reply.status < 300 and _is_event_stream(reply.headers):",
        "if partial is not None and _is_event_stream(reply.headers):",
        "standalone.prose.error", "http-500-with-an-answer-stream"),
}
# The same for the HTTP layer under every DeepSeek endpoint (providers/_deepseek_http.py): a transport error
# (here a body cut mid-way) let out raw. The seam turns that into WEB_PROVIDER_ERROR for web_search; the
# standalone tool has no seam around it. (A survivor of the seed-2 draw: the secrets it scrubs passed as None.)
HTTP_READINGS: dict[str, tuple[str, str, str, str, str]] = {
    "transport-error-let-out": (
        "_exchange", "except (httpx.HTTPError, OSError) as exc:", "except OSError as exc:",
        "standalone.prose.error", "messages-body-cut"),
    # Also of the seed-2 draw: the trim of the quoting window's split last word computed as a float, so the
    # slice raises (errors.secret_echo's 4,580-spaces row meets it behind the seam, which hides the crash).
    # Of the seed-4 draw: the window's bound compared one off, so an error exactly as long as the window reads the
    # character after it (the trim now applies to any cut, so the reading peeks at that character as the old
    # split-word test did).
    "window-bound-one-off": (
        "scrub_prefix", "if len(text) <= limit:", "if len(text) < limit or text[limit].isspace():",
        "standalone.prose.error", "http-401-message-as-long-as-the-scrub-window"),
    "split-word-trim-raises": (
        "scrub_prefix", "len(window) - _ENCODED_PER_BYTE * longest", "len(window) - _ENCODED_PER_BYTE / longest",
        "standalone.prose.error", "http-401-quoting-the-key-after-4580-spaces"),
}


def _failing_rows(check: str, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    return failing_rows(standalone, CASES[check], check, monkeypatch)


# The body reader under every fetch and DeepSeek endpoint (netguard/body.py), of the seed-4 draw: a gzip stream
# followed by other bytes returned as bytes(None), which raises.
BODY_READINGS: dict[str, tuple[str, str, str, str, str]] = {
    "trailing-bytes-raise": (
        "read_capped", "return bytes(body), False  # trailing bytes", "return bytes(None), False  # trailing bytes",
        "standalone.prose.error", "gzip-answer-with-trailing-bytes"),
}
MODULES = {"responses": (standalone_responses, READINGS), "tool": (standalone_search, TOOL_READINGS),
           "tool-run": (standalone_search.StandaloneSearchTool, TOOL_RUN_READINGS),
           "messages-stream": (standalone_messages, MESSAGES_STREAM_READINGS),
           "responses-stream": (standalone_responses, RESPONSES_STREAM_READINGS),
           "endpoint-stream": (_standalone.StandaloneEndpoint, ENDPOINT_STREAM_READINGS),
           "http": (_deepseek_http, HTTP_READINGS), "body": (body, BODY_READINGS)}


# Another row a reading of this row also fails (and nothing else). A plain row whose answer a streamed row asks
# for as a stream: the stream reader hands the answer it rebuilt to the plain reader, so a wrong plain reading
# fails both. And two streamed rows that both read their items from output_item.done events (the final event
# lists none), so a wrong reading of those items fails both. And a streamed answer whose text is lost: the short
# answer's row (test_standalone_content_readings.py) sees an empty summary.
ALSO_FAILED = {"responses-failed-status": ("responses-failed-status-streamed",),
               "responses-stream-final-without-output": ("responses-stream-output-index-not-an-integer",),
               "huge-messages-summary-streamed": ("messages-answer-in-the-summary-streamed",),
               "huge-responses-summary-streamed": ("responses-answer-in-the-summary-streamed",),
               # the prompt sent along with the query changes the text of a query searched under two prompts
               "messages-no-prompt": ("messages-prompt-independent", "responses-prompt-independent"),
               # the transport error let out: a refused connection (hunt T2-1's row) is one too
               "messages-body-cut": ("messages-connection-refused",),
               # a strict decode of a byte cut raises inside an emoji too (hunt W2-1's row)
               "cjk-cut-inside-a-character": tuple(f"astral-cut-inside-a-pair-after-{n}" for n in (1, 2, 3))}


@pytest.mark.parametrize(("module", "reading"), [(m, r) for m, (_, table) in MODULES.items() for r in sorted(table)])
def test_each_row_catches_the_reading_it_names(module: str, reading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    target, table = MODULES[module]
    function, right, wrong, check, row = table[reading]
    patch_reading(target, function, right, wrong, monkeypatch, *([_deepseek_http, netguard] if target is body else []))
    assert _failing_rows(check, monkeypatch) == {row, *ALSO_FAILED.get(row, ())}


def test_the_reference_passes_every_row_of_the_checks_read_here(monkeypatch: pytest.MonkeyPatch) -> None:
    for check in CASES:
        assert _failing_rows(check, monkeypatch) == set(), check


def _raises(match: object) -> bool:
    raise RuntimeError("a credential rule crashed")


@pytest.mark.parametrize("kind", [rule.kind for rule in _secrets.SECRET_RULES])
def test_a_scrubber_crashing_on_other_credential_shapes_fails_exactly_the_credential_shapes_row(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scrubber whose rule for one credential shape raises: the tool raises instead of answering with a
    tool error, which only an upstream error holding that shape shows."""
    rules = tuple(replace(r, validator=_raises) if r.kind == kind else r for r in _secrets.SECRET_RULES)
    monkeypatch.setattr(_secrets, "SECRET_RULES", rules)
    assert _failing_rows("standalone.prose.error", monkeypatch) == {"http-401-quoting-credential-shapes"}


def test_a_model_visible_text_nested_too_deeply_fails_the_check_rather_than_erroring() -> None:
    # catches: json's RecursionError let out of the check (an error outcome, not the failure it is)
    with pytest.raises(CheckFailed, match="not JSON"):
        standalone._visible(CallOutcome(text="[" * 100_000, value={}), "a search")

