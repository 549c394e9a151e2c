"""Read-only hunt W2 looked for values in provider answers the checks only tried in plain forms; it found that no
row put an astral character (an emoji: two UTF-16 units, four UTF-8 bytes) where a text gets cut, so a target
cutting in UTF-16 units, as JavaScript's slice and length do, was certified:

- W2-1: seed 003's result cut to its 24 000 bytes with the summary sliced in UTF-16 units, the JSON written as
  JSON.stringify writes it (a lone surrogate as its escape, \\ud83d): standalone.result.bounded's new row.
- W2-2: web_search's long titles and snippets cut in UTF-16 units, half an emoji left in the text the model reads
  (seed 001's mapping: a lone surrogate never reaches the model): search.text.bounded's new row.

Each wrong reading is made in the reference and fails exactly its new row; the reference passes it."""

from __future__ import annotations

import json
import re

import pytest

from dsweb_ref.certification.checks import standalone, text
from dsweb_ref.tools import _render, _result, standalone_search

from ._readings import failing_rows, passes_rows

BOUNDED, ASTRAL_SUMMARY = "standalone.result.bounded", "astral-cut-inside-a-pair"
TEXT_BOUNDED, ASTRAL_FIELDS = "search.text.bounded", "huge fields of astral characters"
_LONE = re.compile("[\ud800-\udfff]")


def _units(value: str) -> int:  # JavaScript's length
    return len(value.encode("utf-16-le", "surrogatepass")) // 2


def _slice(value: str, end: int) -> str:  # JavaScript's slice(0, end)
    return value.encode("utf-16-le", "surrogatepass")[: 2 * max(end, 0)].decode("utf-16-le", "surrogatepass")


def _stringify(value: object) -> bytes:  # JSON.stringify: a lone surrogate written as its escape
    dumped = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped).encode("utf-8")


def test_the_reference_cuts_whole_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone, "BOUND_CASES", BOUNDED, ASTRAL_SUMMARY, monkeypatch)
    passes_rows(text, "BOUNDED", TEXT_BOUNDED, ASTRAL_FIELDS, monkeypatch)


def test_a_summary_cut_in_utf16_units_fails_the_astral_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (W2-1): the summary cut to the longest slice(0, k) that fits, in its own bound and in the result's,
    # the JSON written by JSON.stringify
    def encode_result(summary: str, sources: list[dict[str, str]], truncated: bool = False,
                      limit: int = standalone_search.MAX_RESULT_BYTES) -> str:
        kept = list(sources)

        def encoded(cut: str, flag: bool) -> bytes:
            return _stringify({"summary": cut, "sources": kept, **({"truncated": True} if flag else {})})

        if len(encoded(summary, truncated)) <= limit:
            return encoded(summary, truncated).decode("utf-8")
        while kept and len(encoded("", True)) > limit:  # sources go from the end, as the reference's do
            kept.pop()
        low, high = 0, _units(summary)
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if len(encoded(_slice(summary, middle), True)) <= limit else (low, middle - 1)
        return encoded(_slice(summary, low), True).decode("utf-8")

    def cut_bytes(value: str, limit: int) -> tuple[str, bool]:  # the longest slice(0, k) of Buffer.byteLength <= limit
        def size(cut: str) -> int:
            return len(cut.encode("utf-8", "surrogatepass"))

        if size(value) <= limit:
            return value, False
        low, high = 0, _units(value)
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if size(_slice(value, middle)) <= limit else (low, middle - 1)
        return _slice(value, low), True

    monkeypatch.setattr(standalone_search, "_cut_bytes", cut_bytes)
    monkeypatch.setattr(standalone_search, "encode_result", encode_result)
    assert failing_rows(standalone, "BOUND_CASES", BOUNDED, monkeypatch) == {ASTRAL_SUMMARY}


def test_fields_cut_in_utf16_units_fail_the_astral_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (W2-2): a title or snippet over its bound cut with slice(0, limit - 1) + "…", no guard after it
    def short(value: str, limit: int) -> str:
        value = " ".join(_slice(value, limit * 4 + 64).split())
        return value if _units(value) <= limit else _slice(value, limit - 1).rstrip() + "…"

    monkeypatch.setattr(_render, "_short", short)
    monkeypatch.setattr(_render, "_cut", lambda value, limit: value if _units(value) <= limit
                        else _slice(value, limit - 1) + "…")
    monkeypatch.setattr(_result, "visible", lambda value: value)
    assert failing_rows(text, "BOUNDED", TEXT_BOUNDED, monkeypatch) == {ASTRAL_FIELDS}
