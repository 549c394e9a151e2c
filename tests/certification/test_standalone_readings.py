"""The standalone rows added from the mutation survivors of providers/standalone_responses.py and
tools/standalone_search.py (issue 24 item 5): each wrong reading, the reference's Responses reader or
standalone tool with one change, is caught by exactly the row that names it; every other row of the
same check passes it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dsweb_ref import _secrets
from dsweb_ref.certification.checks import standalone
from dsweb_ref.providers import standalone_responses
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
         "standalone.sources.filtered": "FILTER_CASES", "standalone.result.bounded": "BOUND_CASES"}

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


def _failing_rows(check: str, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    return failing_rows(standalone, CASES[check], check, monkeypatch)


MODULES = {"responses": (standalone_responses, READINGS), "tool": (standalone_search, TOOL_READINGS)}


@pytest.mark.parametrize(("module", "reading"), [(m, r) for m, (_, table) in MODULES.items() for r in sorted(table)])
def test_each_row_catches_the_reading_it_names(module: str, reading: str, monkeypatch: pytest.MonkeyPatch) -> None:
    target, table = MODULES[module]
    function, right, wrong, check, row = table[reading]
    patch_reading(target, function, right, wrong, monkeypatch)
    assert _failing_rows(check, monkeypatch) == {row}


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
