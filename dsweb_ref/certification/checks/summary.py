"""The model-facing summary (seed 001): snippets by default for every target, and the opt-in
``summary-budget`` capability.

Seed 001 ships "the same short excerpt to the model and search card": the tool "does not consume
summary". It lists as remaining work separating the model-facing summary from the display snippet,
"with per-source and total output budgets and matching Session records", and notes that the guide's
typical summary length is not a maximum: summaries measured 1,000-2,300 characters.

A target declaring ``summary-budget`` honours the ``configure`` keys ``search_model_text``,
``search_summary_max_chars`` and ``search_summary_total_chars`` (adapter protocol). Characters are
Unicode code points. What the seed leaves open is accepted: the marker's text and place, trimming a
space left at the cut or backing off to a word (up to ``CUT_SLACK`` characters per cut), which
sources get the total first, whether a summary the total has no room for is cut to what is left or
left out whole, and whether whitespace is folded (the summaries here are
single-spaced, so folding changes nothing). A summary that fits while the total does not bind is
never cut. Each case scripts the Search API's
answer through the emulator's ordinary ``Status(200, body=...)`` fault.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..adapter_protocol import CAP_SUMMARY_BUDGET
from ..cases import Case
from ._base import CheckContext, check, expect_success, require
from ._script import script

__all__ = ["BUDGET_CASES", "SUMMARY_CHECKS", "case_summary", "summary_text"]

WS, API = "web_search", "search-api"
ASTRAL = "😀"  # one character; two UTF-16 units; four UTF-8 bytes
WIDE = 1_000_000  # a budget that never binds


def summary_text(n: int, tag: str) -> str:
    """Exactly ``n`` characters of single-spaced words unique to ``tag`` (no leading/trailing space)."""
    text = " ".join(f"{tag}{i}" for i in range(n // 2 + 2))[:n]
    return text[:-1] + "z" if text.endswith(" ") else text


def case_summary(spec: Sequence[Any]) -> str | None:
    """A case's summary from its spec (kind, length[, tag]), so the case table shows lengths, not text;
    ("none", 0): the row has no summary; ("blank", n): n spaces."""
    kind, n = str(spec[0]), int(spec[1])
    if kind == "none":
        return None
    if kind == "blank":
        return " " * n
    if kind == "words":
        return summary_text(n, str(spec[2]))
    if kind == "cjk":
        return "长" * n
    if kind == "astral":
        return ASTRAL * n
    return "e" * 998 + ASTRAL + "f" * (n - 999)  # "astral-at-999": the astral character is the 999th


def _rows(query: str, summaries: Sequence[str | None]) -> list[dict[str, str]]:
    slug = "".join(c for c in query if c.isalnum())
    rows = [{"url": f"https://sum.example.test/{slug}/{i}", "title": f"{query} {i}", "snippet": f"snip {slug} {i}",
             "summary": s} for i, s in enumerate(summaries)]
    return [{k: v for k, v in r.items() if v is not None} for r in rows]


# -- every target: snippets, as shipped -----------------------------------------------------------

DEFAULT_CASES = (
    Case("long summary beside a short snippet", "the summary shown to the model although snippet mode is configured",
         {"summary": ["words", 1500, "sumword"], "snippet": True}),
    Case("summary but no snippet", "the summary shown when a source has no snippet",
         {"summary": ["words", 1200, "sumword"], "snippet": False}),
    Case("in a batch", "summaries shown on the batch (merge) path while one query shows snippets",
         {"summary": ["words", 1500, "sumword"], "snippet": True, "batch": True}),
)


@check(
    "search.api.summary.snippet_default",
    "With the default snippet mode, the model sees each source's snippet and never its Search API summary",
    seed="001",
    requires=(WS, API),
    provider="api",
    rule="Seed 001: 'The current tool gives the same short excerpt to the model and search card. It does not "
    "consume summary'. Targets with the opt-in summary-budget keep this until configured otherwise.",
    cases=DEFAULT_CASES,
)
async def snippet_default(ctx: CheckContext) -> None:
    for n, case in enumerate(DEFAULT_CASES):
        queries = [f"snippet default {n}", f"snippet default {n} batch"][: 2 if case.params.get("batch") else 1]
        ctx.fresh()
        snippets = []
        for query in queries:
            rows = _rows(query, [case_summary(case["summary"])])
            if not case["snippet"]:
                del rows[0]["snippet"]
            snippets += [r["snippet"] for r in rows if "snippet" in r]
            script(ctx, query, rows)
        outcome = await ctx.search(queries)
        expect_success(outcome, case.name)
        text = outcome.text or ""
        require("sumword" not in text, f"{case.name}: the model-visible text shows the summary", catches=case.catches)
        for snippet in snippets:
            require(snippet in text, f"{case.name}: the snippet is missing from the text")


# -- summary-budget -------------------------------------------------------------------------------

Spec = list[Any]  # (kind, length[, tag]): see case_summary


def _case(name: str, catches: str, per: int, total: int, queries: dict[str, list[Spec]], cap: int = 8) -> Case:
    """``cap``: searchMaxResults; below the sources served, the budgets bind the sources the cap keeps."""
    return Case(name, catches, {"per": per, "total": total, "queries": queries, **({"cap": cap} if cap != 8 else {})})


def _one(summary: Spec) -> dict[str, list[Spec]]:
    return {"budget edge": [summary]}


BUDGET_CASES = (
    _case("one below the per-source budget", "cutting a summary that fits", 1000, WIDE,
          _one(["words", 999, "a"])),
    _case("at the per-source budget", "off by one: a summary exactly at the budget cut", 1000, WIDE,
          _one(["words", 1000, "b"])),
    _case("one above the per-source budget", "off by one: budget + 1 characters shown; marker missing; "
          "truncated not set; the value's summary cut too", 1000, WIDE, _one(["words", 1001, "c"])),
    _case("2,300 characters under 1,000", "a long summary shown whole or cut far short of the budget", 1000, WIDE,
          _one(["words", 2300, "d"])),
    _case("CJK at the budget", "the budget counted in UTF-8 bytes", 1000, WIDE, _one(["cjk", 1000])),
    _case("astral characters at the budget", "the budget counted in UTF-16 units", 1000, WIDE,
          _one(["astral", 1000])),
    _case("an astral character at the cut", "a cut inside a surrogate pair (a lone surrogate shown)", 1000, WIDE,
          _one(["astral-at-999", 2300])),
    _case("total binding, per-source not", "the total budget applied per source", 1000, 2000,
          {"total one query": [["words", 900, f"g{i}x"] for i in range(3)]}),
    _case("total across the queries of a batch", "the total budget applied per query, not per call", 1000, 2000,
          {"total q1": [["words", 900, f"h{i}x"] for i in range(2)],
           "total q2": [["words", 900, f"k{i}x"] for i in range(2)]}),
    _case("total one below the sum", "off by one on the total", 1000, 2099,
          {"total edge": [["words", 700, f"m{i}x"] for i in range(3)]}),
    _case("total at the sum", "cutting when the summaries exactly fill the total", 1000, 2100,
          {"total edge": [["words", 700, f"n{i}x"] for i in range(3)]}),
    _case("both budgets binding", "only one of the two budgets applied", 1000, 2500,
          {"both": [["words", 2300, "p"], ["words", 1000, "q"], ["words", 1200, "r"]]}),
    _case("a source without a summary first", "a source without a summary ends summary mode: the sources after "
          "it lose their summaries", 1000, WIDE,
          {"missing first": [["none", 0], ["words", 1001, "s"], ["words", 500, "t"]]}),
    _case("a blank summary", "a blank summary taken for a summary: the source shows neither it nor its snippet",
          1000, WIDE, {"blank": [["blank", 3], ["words", 800, "u"]]}),
    _case("no source has a summary", "truncated left unset (null) when no summary was budgeted", 1000, WIDE,
          {"no summaries": [["none", 0], ["none", 0]]}),
    _case("the total used up exactly", "a summary left out because the total is used up is not reported "
          "truncated", 1000, 1800, {"used up": [["words", 900, f"v{i}x"] for i in range(3)]}),
    _case("a per-source budget of 400", "the configured per-source budget ignored (the default 1,000 applied)",
          400, WIDE, _one(["words", 600, "w"])),
    # From an outside hunt: the total spent over every source the searches returned, before searchMaxResults
    # cut them, so the sources the cap keeps get less than the budgets allow.
    _case("the total over the sources the cap keeps", "the total budget spent before the searchMaxResults cap (in "
          "query order): the second query's kept source shows nothing", 1000, 1800,
          {"capped q1": [["words", 900, f"x{i}x"] for i in range(3)],
           "capped q2": [["words", 900, f"y{i}x"] for i in range(3)]}, cap=2),
)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _check_snippet_source(name: str, source: dict[str, Any], served: dict[str, str], text: str) -> None:
    """A source served without a summary (or a blank one) shows its snippet, as in snippet mode."""
    require(source.get("snippet") == served["snippet"], f"{name}: the value lost the snippet as served")
    require(served["snippet"] in text,
            f"{name}: {source.get('url')} has no summary but the text does not show its snippet")
    require(not source.get("summary_shown"), f"{name}: summary text recorded for a source without a summary")


def _check_source(name: str, source: dict[str, Any], served: dict[str, str], per: int, text: str) -> tuple[str, bool]:
    """The summary the model saw for one source, and whether it was cut; fails on a wrong reading."""
    full = served["summary"]
    metadata = source.get("metadata")
    require(isinstance(metadata, dict) and metadata.get("summary") == full,
            f"{name}: the value's metadata.summary is not the whole summary as served")
    require(source.get("snippet") == served["snippet"], f"{name}: the value lost the snippet as served")
    shown = source.get("summary_shown")
    require(isinstance(shown, str), f"{name}: summary_shown missing for {source.get('url')}")
    assert isinstance(shown, str)
    require(not any("\ud800" <= c <= "\udfff" for c in shown), f"{name}: a lone surrogate in the shown summary")
    require(len(shown) <= per, f"{name}: {len(shown)} characters of one summary shown, budget {per}")
    require(not shown or shown in text, f"{name}: summary_shown is not what the text shows")
    if shown == full:
        return shown, False
    kept = _common_prefix(shown, full)
    marker = shown[kept:]
    require(shown == "" or marker.strip(), f"{name}: a summary cut at {kept} characters without a visible marker")
    require(full not in text, f"{name}: the whole summary is in the text although it was cut")
    return shown, True


def _expected_total(per: int, total: int, lengths: Sequence[int]) -> int:
    return min(total, sum(min(per, n) for n in lengths))


def _summary_lengths(served: dict[str, dict[str, str]]) -> list[int]:
    return [len(r["summary"]) for r in served.values() if r.get("summary", "").strip()]


CUT_SLACK = 32  # characters a cut may give back (to end on a word, or drop the space before its marker)


def _within_budgets(name: str, per: int, total: int, shown: dict[str, str], served: dict[str, dict[str, str]]) -> None:
    """While the total does not bind, every summary that fits the per-source budget is shown whole."""
    lengths = _summary_lengths(served)
    if sum(min(per, n) for n in lengths) > total:
        return  # which sources get the total first is left open
    for url, excerpt in shown.items():
        full = served[url]["summary"]
        require(len(full) > per or excerpt == full,
                f"{name}: a {len(full)}-character summary was cut although it fits the budgets ({per} per source, "
                f"{total} in all)")


@check(
    "search.api.summary.budget",
    "Summary mode shows each summary within the per-source and total character budgets, cut with a marker",
    seed="001",
    requires=(WS, API, CAP_SUMMARY_BUDGET),
    provider="api",
    rule="Seed 001: separate model-facing summary from display snippet, with per-source and total output budgets "
    "and matching Session records; returned summaries measured 1,000-2,300 characters. Budgets count "
    "characters (code points) and are the configured ones (configure search_summary_max_chars and "
    "search_summary_total_chars); a cut ends in a visible marker and sets truncated; the value keeps snippet "
    "and summary as served and records the summary the model saw. A summary the total has no room left for "
    "(after the summaries shown) may be cut to what is left or left out whole: seed 001 asks for budgets, "
    "limits, not that the total be spent on a fragment. They are output "
    "budgets: they bind the sources the model is shown, after seed 000's searchMaxResults cap, not the ones it "
    "dropped. Summary mode changes what is shown, not what is asked: 'Direct Search sends query, count, "
    "need_content: false' in it too.",
    cases=BUDGET_CASES,
)
async def summary_budget(ctx: CheckContext) -> None:
    for case in BUDGET_CASES:
        per, total, queries = case["per"], case["total"], case["queries"]
        cap = case.params.get("cap", 8)
        ctx.fresh()
        await ctx.configure(search_max_results=cap)
        await ctx.configure_opt_in(search_model_text="summary", search_summary_max_chars=per,
                                   search_summary_total_chars=total)
        served: dict[str, dict[str, str]] = {}
        for query, summaries in queries.items():
            rows = _rows(query, [case_summary(spec) for spec in summaries])
            served.update({r["url"]: r for r in rows})
            script(ctx, query, rows)
        outcome = await ctx.search(list(queries))
        value = expect_success(outcome, case.name)
        content_asked = [r.json.get("need_content") for r in ctx.records("search") if isinstance(r.json, dict)]
        require(content_asked and all(asked is False for asked in content_asked),
                f"{case.name}: need_content={content_asked!r} in summary mode; Direct Search sends need_content: "
                "false (the summary is a field of its own, not the page content)")
        text = outcome.text or ""
        sources = [s for s in value.get("sources", []) if isinstance(s, dict)]
        urls = sorted(str(s.get("url")) for s in sources)
        urls_served = list(served)
        if cap < len(served):  # which sources the cap keeps is search.merge's to judge; the budgets bind those
            require(len(urls) == cap and set(urls) <= set(served), f"{case.name}: sources changed")
            served = {url: served[url] for url in urls}
        require(urls == sorted(served), f"{case.name}: sources changed")
        shown: dict[str, str] = {}
        cuts = 0
        for source in sources:
            row = served[str(source["url"])]
            if not row.get("summary", "").strip():
                _check_snippet_source(case.name, source, row, text)
                continue
            excerpt, cut = _check_source(case.name, source, row, per, text)
            shown[str(source["url"])] = excerpt
            cuts += cut
        used = sum(map(len, shown.values()))
        require(used <= total, f"{case.name}: {used} summary characters shown over the call, total budget {total}",
                catches=case.catches)
        _within_budgets(case.name, per, total, shown, served)
        # A summary the total has no room for is cut to what is left or left out whole (which is open): one
        # shown empty whose per-source share is more than the total has left after every summary shown does
        # not count towards what the budgets allow.
        left_out = {url for url, excerpt in shown.items()
                    if not excerpt and min(per, len(served[url]["summary"])) > total - used}
        want = _expected_total(per, total, _summary_lengths({u: r for u, r in served.items() if u not in left_out}))
        require(used >= want - cuts * CUT_SLACK,
                f"{case.name}: {used} summary characters shown where the budgets allow {want}", catches=case.catches)
        capped = cap < len(urls_served)  # the merge's own cut (seed 000) sets truncated too
        require(value.get("truncated") is (cuts > 0 or capped),
                f"{case.name}: truncated={value.get('truncated')!r} with {cuts} summaries cut"
                + (" and sources cut by searchMaxResults" if capped else ""), catches=case.catches)
    await ctx.configure_opt_in()


SUMMARY_CHECKS = frozenset({"search.api.summary.snippet_default", "search.api.summary.budget"})
