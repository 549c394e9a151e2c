"""The value and the model-visible text (seed 000/001): the value follows the shipped schema, the text
shows exactly the value's sources and answer labels, and stays bounded whatever the provider sends."""

from __future__ import annotations

from ..cases import Case
from ._base import CheckContext, check, expect_schema, expect_success, require
from ._oracle import observed
from ._script import row, script
from .merge import A, B, _urls

WS = "web_search"

SCHEMA = (
    Case("one query", "a value with extra or missing keys", {"cap": 8, "queries": ["markdown"]}),
    Case("a merged batch", "a merged value shaped differently from a single one", {"cap": 8,
                                                                                 "queries": ["markdown", "coffee"]}),
    Case("a truncated merge", "truncated carried in another shape",
         {"cap": 3, "queries": ["search api", "rate limit"]}),
)


@check(
    "search.value.schema",
    "Search values follow schemas/web_search.output (one query, a merged batch, a truncated merge)",
    seed="000",
    requires=(WS,),
    rule="Seed 000 keeps the seam's single-query result shape for every call ('A one-item array returns the "
    "provider's result'; a batch returns the combined sources, answers and truncation): the value follows the "
    "shipped web_search output schema.",
    cases=SCHEMA,
)
async def value_schema(ctx: CheckContext) -> None:
    for case in SCHEMA:
        await ctx.configure(search_max_results=case["cap"])
        value = expect_success(await ctx.search(case["queries"]), f"search {case['queries']}")
        expect_schema(value, "web_search.output", f"search {case['queries']} with searchMaxResults={case['cap']}")


AGREES = (
    Case("one query", "a source of the value missing from the text", {"cap": 8, "answers": {"tx one": _urls(*A[:3])}}),
    Case("a batch the cap cuts", "the text rendered from the uncapped sources (a dropped source shown)",
         {"cap": 3, "answers": {"tx one": _urls(*A[:3]), "tx two": _urls(*B[:3])}}),
    Case("a batch without answers", "'### <query>' labels shown although no query produced an answer",
         {"cap": 8, "answers": {"tx one": _urls(A[0]), "tx two": _urls(B[0])}}),
)


@check(
    "search.text.agrees",
    "The model-visible text shows every source of the value, none beyond the cap, and labels only with answers",
    seed="000",
    requires=(WS,),
    rule="Seed 000: 'Combined sources remain bounded by searchMaxResults' and 'Provider answers in a "
    "multi-query result are prefixed with ### <query> headings'. The text the model sees agrees with the "
    "value: every source URL of the value appears in it, no source the cap dropped does, and a '### <query>' "
    "label appears exactly for the queries whose answer the value carries.",
    cases=AGREES,
)
async def text_agrees(ctx: CheckContext) -> None:
    for case in AGREES:
        answers = case["answers"]
        await ctx.configure(search_max_results=case["cap"])
        ctx.fresh()
        for query, rows in answers.items():
            script(ctx, query, rows)
        outcome = await ctx.search(list(answers))
        value = expect_success(outcome, case.name)
        text = outcome.text or ""
        shown = [s.get("url") for s in value.get("sources", []) if isinstance(s, dict)]
        missing = [u for u in shown if str(u) not in text]
        require(not missing, f"{case.name}: sources of the value missing from the text: {missing}")
        served = observed(ctx.records(ctx.search_route), list(answers))
        dropped = sorted({s.url for r in served.values() for s in r.sources} - {str(u) for u in shown})
        leaked = [u for u in dropped if u in text]
        require(not leaked, f"{case.name}: the text shows sources the cap dropped: {leaked}")
        content = str(value.get("content") or "")
        for query in answers:
            label = f"### {query}"
            require((label in content) == (label in text),
                    f"{case.name}: the text {'lacks' if label in content else 'adds'} the label {label!r}")


HUGE = 300_000  # characters per field: far above any bound a model-visible text would keep
BOUNDED = (
    Case("huge URL, title, snippet and date", "an unbounded echo of provider fields into the text",
         {"rows": [row("https://huge.example.test/" + "u" * HUGE, "T" * HUGE, "s" * HUGE, "2026-" + "9" * HUGE),
                   row("https://huge.example.test/two/" + "v" * HUGE, None, None, "d" * HUGE)]}),
)


@check(
    "search.text.bounded",
    "Huge provider fields (URL, title, snippet, date) do not make the model-visible text unbounded",
    seed="001",
    requires=(WS,),
    rule="Seed 001: Harness 'retains cancellation and bounded tool output', and seed 000 keeps output growth "
    "under deployment control. Whatever bound an implementation applies is accepted; a text that echoes a "
    f"{HUGE:,}-character provider field in full is not bounded.",
    cases=BOUNDED,
)
async def text_bounded(ctx: CheckContext) -> None:
    for case in BOUNDED:
        ctx.emu.faults.clear()
        script(ctx, "huge fields", case["rows"])
        outcome = await ctx.search(["huge fields"])
        if outcome.error_code is not None:
            continue  # refusing such an answer is a bound too
        text = outcome.text or ""
        require(len(text) < HUGE, f"{case.name}: the text is {len(text):,} characters: a provider field was "
                f"echoed unbounded", length=len(text))
