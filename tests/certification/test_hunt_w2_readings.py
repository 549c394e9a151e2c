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
from typing import Any

import pytest

from dsweb_ref.certification.checks import standalone, text
from dsweb_ref.tools import _render, _result, standalone_search

from ._readings import failing_rows, passes_rows

BOUNDED = "standalone.result.bounded"
ASTRAL_SUMMARY = tuple(f"astral-cut-inside-a-pair-after-{n}" for n in range(4))
TEXT_BOUNDED = "search.text.bounded"
ASTRAL_FIELDS = ("huge fields of astral characters", "huge fields of astral characters, shifted by one")
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


def _js_summary_cut(monkeypatch: pytest.MonkeyPatch, reserve: int = 0, tail: str = "") -> None:
    """The summary cut to the longest slice(0, k) whose UTF-8 size fits ``limit - reserve``, then ``tail``, in its own
    bound and in the result's, the JSON written by JSON.stringify."""

    def size(cut: str) -> int:  # Buffer.byteLength: a lone surrogate counts 3 bytes
        return len(cut.encode("utf-8", "surrogatepass"))

    def longest(value: str, fits: Any) -> str:
        low, high = 0, _units(value)
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if fits(_slice(value, middle)) else (low, middle - 1)
        return _slice(value, low)

    def cut_bytes(value: str, limit: int) -> tuple[str, bool]:
        if size(value) <= limit:
            return value, False
        return longest(value, lambda cut: size(cut) <= limit - reserve) + tail, True

    def encode_result(summary: str, sources: list[dict[str, str]], truncated: bool = False,
                      limit: int = standalone_search.MAX_RESULT_BYTES) -> str:
        kept = list(sources)

        def encoded(cut: str, flag: bool) -> bytes:
            return _stringify({"summary": cut, "sources": kept, **({"truncated": True} if flag else {})})

        if len(encoded(summary, truncated)) <= limit:
            return encoded(summary, truncated).decode("utf-8")
        while kept and len(encoded("", True)) > limit:  # sources go from the end, as the reference's do
            kept.pop()
        return encoded(longest(summary, lambda cut: len(encoded(cut, True)) <= limit), True).decode("utf-8")

    monkeypatch.setattr(standalone_search, "_cut_bytes", cut_bytes)
    monkeypatch.setattr(standalone_search, "encode_result", encode_result)


def test_a_summary_cut_in_utf16_units_fails_an_astral_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (W2-1): the longest slice that fits the 12 000 bytes splits the emoji after a 1-character prefix
    _js_summary_cut(monkeypatch)
    assert failing_rows(standalone, "BOUND_CASES", BOUNDED, monkeypatch) == {ASTRAL_SUMMARY[1]}


def test_a_summary_cut_with_room_for_an_ellipsis_fails_another_astral_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (review R9-1): 3 bytes kept for "…" move the split to the 2-character prefix, which the one row of W2
    # did not have
    _js_summary_cut(monkeypatch, reserve=3, tail="…")
    assert failing_rows(standalone, "BOUND_CASES", BOUNDED, monkeypatch) == {ASTRAL_SUMMARY[2]}


def test_fields_cut_in_utf16_units_fail_the_astral_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (W2-2): a title or snippet over its bound cut with slice(0, limit - 1) + "…", no guard after it
    def short(value: str, limit: int) -> str:
        value = " ".join(_slice(value, limit * 4 + 64).split())
        return value if _units(value) <= limit else _slice(value, limit - 1).rstrip() + "…"

    monkeypatch.setattr(_render, "_short", short)
    monkeypatch.setattr(_render, "_cut", lambda value, limit: value if _units(value) <= limit
                        else _slice(value, limit - 1) + "…")
    monkeypatch.setattr(_result, "visible", lambda value: value)
    assert failing_rows(text, "BOUNDED", TEXT_BOUNDED, monkeypatch) == set(ASTRAL_FIELDS)
