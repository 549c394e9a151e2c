"""The value and the model-visible text (seed 000/001): the value follows the shipped schema, the text
shows exactly the value's sources and answer labels, and stays bounded whatever the provider sends."""

from __future__ import annotations

import json
import re
from typing import Any

from ..._types import SearchResult, Source
from ...emulator import Status
from ...emulator.scripted import Script, scripted_base
from ..cases import Case
from ..scenarios import answer_labels, content_answers, shown_at, unjudged_labels
from ._base import CheckContext, check, expect_schema, expect_success, lone_surrogates, require
from ._oracle import observed, query_match
from ._script import row, script
from .merge import A, B

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


def _rows(*urls: str) -> list[dict[str, str]]:
    # Snippets and titles that do not quote the URL: a URL must be found where the text lists it.
    return [row(u, f"Title {i}", f"excerpt number {i}", "2026-01-02") for i, u in enumerate(urls, 1)]


ODD_URLS = ("urn:isbn:0451450523", "https://a..b.example.test/page", "https://bücher.example.test/", "/relative/path")
AGREES = (
    Case("one query", "a source of the value missing from the text", {"cap": 8, "answers": {"tx one": _rows(*A[:3])}}),
    Case("a batch the cap cuts", "the text rendered from the uncapped sources (a dropped source shown)",
         {"cap": 3, "answers": {"tx one": _rows(*A[:3]), "tx two": _rows(*B[:3])}}),
    Case("a batch without answers", "a '### <query>' label shown although no query produced an answer (a query's "
         "heading over another query's sources)",
         {"cap": 8, "answers": {"tx one": _rows(A[0]), "tx two": _rows(B[0])}}),
    Case("URLs without a usual host", "a source whose URL has no host name, or a host IDNA cannot encode, left out "
         "of the text (or failing the call)", {"cap": 8, "answers": {"tx odd": [row(u) for u in ODD_URLS]}}),
    # From an outside hunt: the value merged right, the text re-sorted (newest first) on the way to the model.
    # The first query's second source comes first by date (newest), by title and by URL alike.
    Case("a newer source ranked lower", "the text listing sources in another order than their query's ranking "
         "(newest first, by title or by URL): the first query's second source is its newest",
         {"cap": 8, "answers": {"tx one": [row(A[1], "Zeta notes", "excerpt one", "2026-01-01"),
                                           row(A[0], "Alpha notes", "excerpt two", "2026-03-01")],
                                "tx two": [row(B[0], "Mid notes", "excerpt three", "2026-02-01")]}}),
    # From an outside hunt (L): no row's URL carried a percent-escape, so a text showing each URL decoded was
    # certified. Decoded, a%2Fb?q=c%26d reads as another path and query, and the space of 'résumé v2' ends the
    # Markdown link the model cites: the URL is shown as the value holds it, byte for byte.
    Case("percent-escaped URLs", "source URLs percent-decoded in the text (a%2Fb?q=c%26d shown as a/b?q=c&d, "
         "r%C3%A9sum%C3%A9%20v2 as 'résumé v2')",
         {"cap": 8, "answers": {"tx escaped": _rows("https://a.example.test/a%2Fb?q=c%26d",
                                                    "https://a.example.test/r%C3%A9sum%C3%A9%20v2")}}),
)


_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _spelling(text: str) -> str:
    """``text`` with each URL's percent-escapes in one spelling (RFC 3986 6.2.2: hex in upper case, unreserved
    characters decoded) and non-ASCII characters decoded as an IRI shows them; a reserved character, a space or
    a byte that is no UTF-8 stays escaped, since decoding it changes the URL or ends a Markdown link."""

    def one(match: re.Match[str]) -> str:
        raw = bytes.fromhex(match.group().replace("%", ""))
        out = []
        for char in raw.decode("utf-8", "surrogateescape"):
            if "\udc80" <= char <= "\udcff":  # a byte that is no UTF-8: kept as its escape
                out.append(f"%{ord(char) - 0xDC00:02X}")
            elif char in _UNRESERVED or ord(char) > 0x7F:
                out.append(char)
            else:
                out.append(f"%{ord(char):02X}")
        return "".join(out)

    return _ESCAPES.sub(one, text)


def shown_whole(url: str, text: str) -> bool:
    """``url`` occurs in ``text`` not followed by a character that would read as more of the URL
    (the end, a space, a bracket, a quote or sentence punctuation may follow)."""
    return shown_at(url, text) >= 0


def own_sources(served: dict[str, SearchResult]) -> dict[str, list[Source]]:
    """Each query's sources that no other query returned, in its ranking (a shared one sits where the merge
    put it first, so it says nothing of the others' order)."""
    urls = {query: {s.url for s in result.sources} for query, result in served.items()}
    return {query: [s for s in result.sources if not any(s.url in u for q, u in urls.items() if q != query)]
            for query, result in served.items()}


async def _answered(ctx: CheckContext, case: Case) -> tuple[dict[str, Any], str]:
    """Script each query's rows, search them all with the case's cap: (value, text)."""
    await ctx.configure(search_max_results=case["cap"])
    ctx.fresh()
    for query, rows in case["answers"].items():
        script(ctx, query, rows)
    outcome = await ctx.search(list(case["answers"]))
    return expect_success(outcome, case.name), outcome.text or ""


@check(
    "search.text.agrees",
    "The model-visible text shows every source of the value, none beyond the cap, and labels only with answers",
    seed="000",
    requires=(WS,),
    rule="Seed 000: 'Combined sources remain bounded by searchMaxResults' and 'Provider answers in a "
    "multi-query result are prefixed with ### <query> headings'. The text the model sees agrees with the "
    "value: every source URL of the value appears in it whole, as the value spells it or in an equivalent "
    "spelling (escapes' hex in either case, unreserved or non-ASCII characters decoded; never a reserved "
    "character or a space decoded), not run on into characters that would read as more of the URL, which the "
    "model would then cite), no source the cap "
    "dropped does, and a '### <query>' label appears exactly for the queries whose answer the value carries (in a "
    "batch, a '### <query>' line over that query's own sources alone, each on one line or several, or over a note "
    "that it found nothing, is no answer label). 'Combined sources ... "
    "preserve each query's result ranking': the text shows a query's sources in its ranking (how it lays them "
    "out, merged or under each query, is open).",
    cases=AGREES,
)
async def text_agrees(ctx: CheckContext) -> None:
    for case in AGREES:
        answers = case["answers"]
        value, text = await _answered(ctx, case)
        shown = [s.get("url") for s in value.get("sources", []) if isinstance(s, dict)]
        spelled = _spelling(text)  # an equivalent spelling of a URL is the URL (a review's false failure)
        missing = [u for u in shown if not shown_whole(_spelling(str(u)), spelled)]
        require(not missing, f"{case.name}: sources of the value missing from the text (or only run on into "
                f"other characters): {missing}", catches=case.catches)
        served = observed(ctx.records(ctx.search_route), list(answers))
        dropped = sorted({s.url for r in served.values() for s in r.sources} - {str(u) for u in shown})
        leaked = [u for u in dropped if u in text or _spelling(u) in spelled]
        require(not leaked, f"{case.name}: the text shows sources the cap dropped: {leaked}")
        # Each query's own sources in its ranking; the layout is open.
        for query, own in own_sources(served).items():
            ranked = [s.url for s in own if s.url in shown]
            places = [shown_at(_spelling(u), spelled) for u in ranked]
            require(places == sorted(places), f"{case.name}: the text lists {query!r}'s sources out of its ranking",
                    ranking=ranked, catches=case.catches)
        content = str(value.get("content") or "")
        # A batch's '### <query>' line over that query's own sources alone labels no answer (the layout is open);
        # one query's text carries no such line at all.
        said = content_answers(content)
        labelled = answer_labels(text, {q.strip(): [s.url for s in r.sources] for q, r in served.items()}, said)
        unjudged = unjudged_labels({q.strip(): [f for s in r.sources for f in (s.title, s.snippet) if f]
                                    for q, r in served.items()}, said)
        for query in answers:
            if len(answers) > 1 and query.strip() in unjudged:
                continue
            label = f"### {query}"
            shows = label in text if len(answers) == 1 else query.strip() in labelled
            require((label in content) == shows,
                    f"{case.name}: the text {'lacks' if label in content else 'adds'} the label {label!r}")


def _snippets(host: str, *snippets: str | None) -> list[dict[str, str]]:
    return [row(f"https://{host}.example.test/{i}", f"T {i}" if i % 2 else None, snippet)
            for i, snippet in enumerate(snippets, 1)]


SNIPPETS = (
    Case("one query", "snippets kept in the value but not shown to the model",
         {"cap": 8, "answers": {"sn one": _snippets("sa", "first short excerpt", "second short excerpt")}}),
    Case("a merged batch", "snippets dropped from the text of a merged result only",
         {"cap": 8, "answers": {"sn one": _snippets("sa", "alpha excerpt"),
                                "sn two": _snippets("sb", "beta excerpt")}}),
    Case("a source without a title", "the snippet shown only beside a title",
         {"cap": 8, "answers": {"sn one": [row("https://sc.example.test/untitled", None, "untitled excerpt")]}}),
    Case("non-ASCII excerpts", "an excerpt transliterated, escaped or cut at a byte",
         {"cap": 8, "answers": {"sn one": _snippets("sd", "数据检索 résumé naïve", "emoji 🔎 excerpt")}}),
    Case("some sources without a snippet", "another source's snippet shown in place of a missing one",
         {"cap": 8, "answers": {"sn one": _snippets("se", None, "only the second has one", None)}}),
    # From an outside hunt: each line given the next source's snippet (the last the first's). With a source
    # between them that has none, a shift either way loses a snippet or shows the two out of order (a row with
    # two snippets of one query shows the order too).
    Case("snippets on their own sources", "snippets shifted by one source (each shown with its neighbour, a "
         "zip off by one): the first source's excerpt shown after the third's",
         {"cap": 8, "answers": {"sn one": _snippets("sf", "alpha excerpt", None, "gamma excerpt")}}),
)
SHIFTED = SNIPPETS[-1].catches


@check(
    "search.text.snippets",
    "The model-visible text shows each source's snippet that the value carries",
    seed="001",
    requires=(WS,),
    rule="Seed 001: the provider maps 'URL, title, snippet, and nullable date into shared sources' and 'the "
    "current tool gives the same short excerpt to the model and search card'. Each short snippet of the value's "
    "sources (one line, single spaces) appears verbatim in the text the model sees, and a query's snippets come "
    "in its ranking (a shift to a neighbouring source shows as another order); where and how each is framed is "
    "free, and a long snippet may be shortened (how is open).",
    cases=SNIPPETS,
)
async def text_snippets(ctx: CheckContext) -> None:
    for case in SNIPPETS:
        value, text = await _answered(ctx, case)
        # What the value carries is search.*.mapping's business; here only its agreement with the text.
        snippets = [s.get("snippet") for s in value.get("sources", []) if isinstance(s, dict)]
        missing = [x for x in snippets if isinstance(x, str) and x and x not in text]
        require(not missing, f"{case.name}: snippets of the value not shown in the text: {missing}")
        # Each with its own source: a query's own snippets (on no other query's sources) in its ranking, wherever
        # the layout puts them (merged or under each query, as in search.text.agrees).
        served = observed(ctx.records(ctx.search_route), list(case["answers"]))
        for query, own in own_sources(served).items():
            shown_snippets = [s.snippet for s in own if s.snippet and s.snippet in text]
            places = [text.find(x) for x in shown_snippets]
            require(places == sorted(places), f"{case.name}: the text shows {query!r}'s snippets out of its ranking: "
                    "a snippet beside another source", snippets=shown_snippets, catches=SHIFTED)


HUGE = 300_000  # characters per field: far above any bound a model-visible text would keep
WAVE, ASTRAL = "\U0001F30A", 20_000  # an emoji, and how many per field: above any bound a text would keep whole
BOUNDED = (
    Case("huge URL, title, snippet and date", "an unbounded echo of provider fields into the text",
         {"rows": [row("https://huge.example.test/" + "u" * HUGE, "T" * HUGE, "s" * HUGE, "2026-" + "9" * HUGE),
                   row("https://huge.example.test/two/" + "v" * HUGE, None, None, "d" * HUGE)]}),
    # From a hunt (W2-2): every huge field was ASCII, so fields cut in UTF-16 units (JavaScript's slice) were certified:
    # an emoji at the cut split, half a surrogate pair in the text the model reads (search.api.mapping: a lone
    # surrogate never reaches the model). One prefix of each parity, so a bound of any length splits one of them.
    # From a review (R9-2): a target bounding only the whole text, cut once in UTF-16 units, splits at one offset whose
    # parity the row's layout fixed; the second row shifts every later offset by one unit.
    *(Case(f"huge fields of astral characters{suffix}", "fields, or the whole text, cut in UTF-16 units: an astral "
           "character (an emoji) at the cut split, half a surrogate pair left in the text",
           {"rows": [row(f"https://astral.example.test/{n}", prefix + title + WAVE * ASTRAL, prefix + WAVE * ASTRAL,
                         None)
                     for n, prefix in enumerate(("a", "ab"))]})
      for suffix, title in (("", ""), (", shifted by one", "s"))),
    # From a hunt (P-A6): only answers carried huge fields, so a failure quoting the provider's error message
    # whole (neither the quote nor the tool's error text cut) was certified. The search fails either way; its text
    # is tool output too.
    Case("a 500 whose error message is huge", "the provider's error message quoted whole into the failure the "
         "model sees (no bound on the quote, none on the tool's error text)",
         {"error_message": "x" * HUGE}),
)


@check(
    "search.text.bounded",
    "Huge provider fields (URL, title, snippet, date) do not make the model-visible text unbounded",
    seed="001",
    requires=(WS,),
    rule="Seed 001: Harness 'retains cancellation and bounded tool output', and seed 000 keeps output growth "
    "under deployment control. Whatever bound an implementation applies is accepted; a text that echoes a "
    f"{HUGE:,}-character provider field in full is not bounded. A failure's text is tool output too: the "
    "message of a provider's error body is such a field, and quoting it (or not) is free, whole it is not. A cut "
    "never leaves half a surrogate pair: an astral character (an emoji) is one character (seed 001's mapping: a "
    "lone surrogate never reaches the model); how a cut character is shown otherwise is open.",
    cases=BOUNDED,
)
async def text_bounded(ctx: CheckContext) -> None:
    for case in BOUNDED:
        ctx.emu.faults.clear()
        message = case.params.get("error_message")
        if message is None:
            script(ctx, "huge fields", case["rows"])
        else:  # every request for the query fails so (a target retrying a 500 gets it again)
            route = ctx.search_route
            body = json.dumps({"error": {"message": message, "type": "server_error"}}).encode()
            ctx.emu.inject(route, Status(500, body=body), times=None, when=query_match(route, "huge fields"))
        outcome = await ctx.search(["huge fields"])
        if outcome.error_code is not None and message is None:
            continue  # refusing such an answer is a bound too
        text = outcome.text or ""
        require(len(text) < HUGE, f"{case.name}: the text is {len(text):,} characters: a provider field was "
                f"echoed unbounded", length=len(text), catches=case.catches)
        lone = lone_surrogates(text)
        require(not lone, f"{case.name}: the text holds lone surrogate(s) {lone}: a character was cut inside its "
                "surrogate pair", catches=case.catches)
    ctx.emu.faults.clear()


def _lines(total: int, width: int = 79) -> str:
    line = "answer text " * (width // 12)
    return "\n".join(line for _ in range(total // (len(line) + 1)))


SOURCE = {"url": "https://answers.example.test/1", "title": "T", "snippet": "s"}
OVER_CAP_ANSWER = "The provider answered over the source cap."
BESIDE_ANSWER = "The provider answered beside long sources."
BOUNDED_ANSWERS = (
    Case("one huge single-line answer", "a provider answer passed to the model whole",
         {"answers": {"huge line": {"content": "a" * HUGE, "sources": [SOURCE], "truncated": False}}}),
    Case("one huge answer of short lines", "the same, for an answer with line ends to cut at",
         {"answers": {"huge lines": {"content": _lines(HUGE), "sources": [SOURCE], "truncated": False}}}),
    Case("a batch of two half-huge answers", "each answer bounded alone, their concatenation not",
         {"answers": {"half one": {"content": _lines(HUGE // 2 + 100), "sources": [SOURCE], "truncated": False},
                      "half two": {"content": "b" * (HUGE // 2 + 100), "sources": [], "truncated": True}}}),
    # Ten sources against the default cap of eight: the cap cuts them, and only them.
    Case("an answer whose sources overflow the cap", "the provider's answer dropped along with the sources "
         "searchMaxResults cuts", {"answers": {"over the cap": {
             "content": OVER_CAP_ANSWER, "truncated": False,
             "sources": [{"url": f"https://answers.example.test/over/{i}", "title": f"T{i}"} for i in range(10)]}},
             "kept": OVER_CAP_ANSWER}),
    # Eight sources whose lines (each field at the reference's display bound or a little past it) fill a text
    # bound of 20,000 characters on their own: the answer beside them is still a result.
    Case("an answer beside sources that alone fill the text", "the bound's second cut (the sources cut once the "
         "answer is left out) breaking the call when an answer stands beside them", {"answers": {"long sources": {
             "content": BESIDE_ANSWER, "truncated": False,
             "sources": [{"url": f"https://answers.example.test/long/{i}/" + "p" * 1_990, "title": "T" * 300,
                          "snippet": "s" * 800, "published_at": "2026-01-0" + str(i + 1)} for i in range(8)]}},
             "kept": BESIDE_ANSWER}),
)


@check(
    "search.text.bounded_answers",
    "Huge provider answers (one query or a batch) are returned, with a bounded model-visible text",
    seed="000",
    requires=(WS, "scripted-search"),
    provider="scripted",
    rule="Seed 000: 'A one-item array returns the provider's result' and a batch labels every provider answer, "
    "so a long answer is a result, not a failure; and an unbounded array was rejected because it could "
    "'concatenate an arbitrary number of provider answers', keeping output growth under deployment control "
    f"(seed 001: 'bounded tool output'). Any bound is accepted; a text of {HUGE:,} characters or more, "
    "echoing the answers whole, is not bounded. 'searchMaxResults bounds only the combined sources returned "
    "to the caller', so a short answer whose sources overflow the cap is still returned (in the value's "
    "content or the text). What a bound cuts first, the answers or the sources after them, is open (the "
    "reference cuts the answers).",
    cases=BOUNDED_ANSWERS,
)
async def text_bounded_answers(ctx: CheckContext) -> None:
    store = ctx.emu.scripted
    for case in BOUNDED_ANSWERS:
        answers = case["answers"]
        scenario = store.load(Script(answers))
        try:
            await ctx.configure(provider="scripted", scripted_base=scripted_base(ctx.emu.base_url, scenario))
            outcome = await ctx.search(list(answers))
        finally:
            store.drop(scenario)
        expect_success(outcome, case.name)
        text = outcome.text or ""
        require(len(text) < HUGE, f"{case.name}: the text is {len(text):,} characters: the provider answers were "
                f"echoed unbounded", length=len(text))
        kept = case.params.get("kept")
        if kept is not None:
            content = (outcome.value or {}).get("content")
            require(kept in text or (isinstance(content, str) and kept in content),
                    f"{case.name}: the provider's answer is missing from the value and the text", text=text[:500])
