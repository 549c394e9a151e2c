"""Seed 002: no user file name reaches a search engine. The local-path test serves the queries and, since
the pipeline sends the latest prompt as ori_question (seed 001), the prompt too; prompts are prose, where a
path may follow Thai or CJK text or a typographic quote with no space before it."""

from __future__ import annotations

import pytest

from dsweb_ref.tools._evidence_guard import names_local

LOCAL = [
    "compare ~/Documents/budget-2026.xlsx with today's gold price",
    "请总结~/notes.txt的内容",  # catches: a path after CJK text (no space before it) missed
    "สรุปไฟล์./minutes-q3.docx",  # catches: the same after Thai
    "比较/home/somchai/budget.xlsx和金价",  # catches: an absolute home path after CJK text missed
    "“~/notes.txt”",  # catches: only ASCII quotes taken for a path's start
    "Summarise the Q3 Board Minutes and today's harbour news",  # the caller-marked name below
]
NOT_LOCAL = [
    "see https://example.com/home/page",  # catches: a URL's /home/ path taken for a local folder
    "https://x.org/./a",  # catches: a URL's ./ segment taken for a relative path
    "the a/b ratio in the U.S./Canada",  # catches: a slash after a word or an abbreviation taken for a path
    "harbour ferry timetable",
]


@pytest.mark.parametrize("prompt", LOCAL)
def test_a_prompt_naming_something_local_is_recognised(prompt: str) -> None:
    assert names_local(prompt, ["Q3 Board Minutes"])


@pytest.mark.parametrize("prompt", NOT_LOCAL)
def test_a_prompt_naming_nothing_local_is_not(prompt: str) -> None:
    assert not names_local(prompt, ["Q3 Board Minutes"])
