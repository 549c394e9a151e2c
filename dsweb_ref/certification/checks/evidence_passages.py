"""Passage extraction of the evidence pipeline (seed 002), over scripted Search and Fetch API answers.

Seed 002 decides: a page fetched successfully is not sent to the model whole; code cuts it down to
short text that matches the query; the search snippet is a fallback only when the page could not
be fetched or had no usable passage. It fixes neither the passage length nor how passages are cut
(sentences, windows, paragraphs), so the check enforces only, for one search result whose page the
Fetch API serves:

* the page's one query-matching paragraph, deep in the page, reaches the evidence (so the page was
  read for passages, not replaced by its snippet or by its first characters);
* the page's opening paragraph, which shares no word with the query and stands far from the match,
  does not; and the evidence citing the page is shorter than a quarter of the page.
"""

from __future__ import annotations

import json
from typing import Any

from ...emulator import Status
from ..cases import Case
from ._base import CheckContext, check, expect_success, require
from ._script import row, script
from .evidence import REQUIRES, _evidence

QUERY = "harbour pilot boarding"
PAGE_URL = "https://port-authority.example.org/pilotage"
OPENING = "The lighthouse keepers' choir rehearses on Thursdays in the old chapel."
MATCH = "Harbour pilot boarding starts at 06:00 from the outer anchorage, for vessels over 80 metres."
FACT = "outer anchorage"  # in MATCH only: not in the title, the snippet or the query
SNIPPET = "Pilotage for the harbour: how pilot boarding works."


def _filler(i: int) -> str:
    return f"Note {i}: the museum garden hosts a flower show with music, crafts and food stalls for families."


def _page(fillers: int) -> str:
    return "\n\n".join(["# Pilotage", OPENING, *(_filler(i) for i in range(fillers)), MATCH, _filler(fillers)])


PASSAGES = (
    Case(
        "deep-match",
        "the search snippet used although the fetched page had a matching passage; or the page's first "
        "characters taken for its passage",
        {"fillers": 40},
    ),
    Case(
        "short-page",
        "the whole page, or every paragraph of it, sent as evidence (its unrelated opening included)",
        {"fillers": 16},
    ),
)


@check(
    "evidence.passages",
    "A fetched page yields its query-matching passage, never the whole page nor only its snippet",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: a page fetched successfully is not sent to the model whole; code reduces it to short "
    "text matching the query; the search snippet is the fallback only when the page cannot be fetched "
    "or has no usable passage.",
    cases=PASSAGES,
)
async def passages(ctx: CheckContext) -> None:
    for case in PASSAGES:
        ctx.fresh()
        page = _page(case["fillers"])
        script(ctx, QUERY, [row(PAGE_URL, "Harbour pilot boarding guide", SNIPPET)])
        answer = json.dumps({"title": "Pilotage", "content": page}).encode()
        ctx.emu.inject("fetch", Status(200, body=answer), times=None, when=_fetch_of(PAGE_URL))
        outcome = await _evidence(ctx, QUERY, {"id": f"passages-{case.name}", "local_names": []})
        value = expect_success(outcome, case.name)
        await ctx.settle()
        cited = [
            str(e.get("text", ""))
            for g in value.get("queries", [])
            for e in g.get("evidence", [])
            if isinstance(e, dict) and e.get("url") == PAGE_URL
        ]
        shown = " ".join(cited)
        require(
            FACT in shown,
            f"{case.name}: the page's query-matching passage is not in its evidence",
            evidence=cited,
            catches=case.catches,
        )
        require(
            "keepers" not in (outcome.text or "") and "keepers" not in shown,
            f"{case.name}: the page's unrelated opening paragraph reached the evidence",
            catches=case.catches,
        )
        require(
            len(shown) <= len(page) // 4,
            f"{case.name}: {len(shown)} characters of evidence from a {len(page)}-character page",
            catches=case.catches,
        )


def _fetch_of(url: str) -> Any:
    def match(body: Any) -> bool:
        return isinstance(body, dict) and body.get("url") == url

    return match
