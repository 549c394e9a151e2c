"""Relevance checks of the evidence pipeline (seed 002), over scripted Search and Fetch API answers.

Seed 002 decides: the pipeline does not trust the search engine's ranking alone but picks sources
whose relevance is good; it sends the model only the short passages of a page that match the
query; and when nothing usable was found it says ``[needs_retry]`` so the agent makes the query
more specific (subject, place, time). It fixes no ranking formula, passage length or wording, so
the checks accept any of them and enforce only:

* ``evidence.designators``: a query naming a model, version or year that no page names gets
  ``[needs_retry]``, not the neighbouring model's passage; asked for the model a page does name,
  that page is cited and the neighbour is not; a year in the Buddhist Era (2569) never gets last
  year's page (2568), though reading it as 2026 is not required (seed 002 names no calendar); a
  proper name stands whole (Pell Creek Bridge is not Pell River Bridge, สายหมอกน้อย is not
  สายหมอก). So does a query whose subject no page names, however many of its other words a page
  shares: a two-letter subject ("AI"), a Thai word with SARA AM
  (ทองคำ, gold, against ทองแดง, copper), a one- or two-character Chinese word (雪, snow; 上海).
* ``evidence.table_rows``: a fact that lives in a table row reaches the evidence with its row
  label (a value cut off from its row answers nothing), also from a row with fewer cells than its
  header, when the search snippet does not hold the fact (the page was fetched and has the passage,
  so the snippet is no fallback).
* ``evidence.own_ranking``: when a batch has more results than pages are read, the pages read are
  the pipeline's own pick: a relevant result is read and cited wherever the engine listed it (last,
  first or in between; no order fixed in advance, such as the engine's reversed, reads them all), and
  in a Thai query too, whose words no space separates, in a one-word query and in one carrying a search
  operator (``-cruise``: it steers the engine, and does not make the engine's order the pipeline's pick;
  that page must be read, its passage being ``evidence.passages``' judgement).
  The scripted answers honour each request's ``count`` (seed 001), the relevant result kept in a shorter
  answer at its place or last, so a target reading fewer results a query (seed 002 fixes no number) is
  judged on what it asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..cases import Case
from ._base import CheckContext, check, expect_success, require
from ._oracle import offered_urls
from ._script import Listing, Row, row, script, script_listing
from .evidence import REQUIRES, _evidence, serve_page

X5 = "https://veltra-phones.example.com/orion-x5"
X4 = "https://veltra-phones.example.com/orion-x4"
X5_PAGE = "# Veltra Orion X5\n\nThe Veltra Orion X5 launch price is $749 for the 256 GB model.\n"
X4_PAGE = "# Veltra Orion X4\n\nThe Veltra Orion X4 launch price was $649 for the 128 GB model.\n"
# (url, search title, snippet, page): each row's search answers with these results, whose pages are served.
PHONES = (
    (X5, "Veltra Orion X5 launch price", "Veltra Orion X5 launch price and review.", X5_PAGE),
    (X4, "Veltra Orion X4 launch price", "Veltra Orion X4 launch price and review.", X4_PAGE),
)
CHIPS = "https://trade-desk.example.org/potato-chip-exports"
CHIPS_PAGE = (
    "# Potato chip export rules\n\nThe new potato chip export rules take effect in May: every carton "
    "shipped abroad needs a customs label and a batch number.\n"
)
# Copper (ทองแดง) is not gold (ทองคำ), though both start with ทอง (metal) and the page's "คำแนะนำ"
# (advice) holds the letters of คำ.
COPPER = "https://metal-prices.example.co.th/copper"
COPPER_PAGE = "# ราคาทองแดง\n\nราคาทองแดงวันนี้ปรับขึ้นห้าบาทต่อกิโลกรัม\n\nคำแนะนำสำหรับผู้ซื้อคือรอดูราคาอีกสองวัน\n"
RAIN = "https://weather.example.cn/shanghai"
RAIN_PAGE = "# 上海天气\n\n上海明天多云转小雨，最高气温十八度，外滩风力较大。\n"
BEIJING = "https://weather.example.cn/beijing"
BEIJING_PAGE = "# 北京天气\n\n北京明天：雪，最低气温零下三度，出行注意路面结冰。\n"
# Seed 002's users write years in the Buddhist Era (the seed itself is dated 2569): 2569 is 2026, 2568 is 2025.
LANTERNS_2026 = "https://chiangdao-lanterns.example.com/2026"
LANTERNS_2025 = "https://chiangdao-lanterns.example.com/2025"
LANTERNS = (
    (
        LANTERNS_2026,
        "Chiang Dao Lantern Festival 2026",
        "เทศกาลโคมไฟเชียงดาว 2026",
        "# Chiang Dao Lantern Festival 2026\n\nเทศกาลโคมไฟเชียงดาว 2026 จัดวันที่ 14-16 พฤศจิกายน ที่ลานวัดถ้ำเชียงดาว\n",
    ),
    (
        LANTERNS_2025,
        "เทศกาลโคมไฟเชียงดาว 2568",
        "เทศกาลโคมไฟเชียงดาว 2568",
        "# เทศกาลโคมไฟเชียงดาว 2568\n\nเทศกาลโคมไฟเชียงดาว 2568 จัดวันที่ 15-17 พฤศจิกายน ที่ลานวัดถ้ำเชียงดาว\n",
    ),
)
# A proper name must stand whole: Pell Creek Bridge is not Pell River Bridge though its page names the river
# too, and น้ำตกสายหมอกน้อย (Little Saimok Falls) is not น้ำตกสายหมอก (Saimok Falls). Titles alike on
# purpose, so only the name tells the pages apart.
PELL_RIVER = "https://bridges.example.org/pell-river-bridge"
PELL_CREEK = "https://bridges.example.org/pell-creek-bridge"
BRIDGES = (
    (
        PELL_RIVER,
        "Bridges of Pell",
        "Pell River Bridge facts.",
        "# Bridges of Pell\n\nThe Pell River Bridge is 412 metres long and opened to traffic in 1998.\n",
    ),
    (
        PELL_CREEK,
        "Bridges of Pell",
        "Pell Creek Bridge facts.",
        "# Bridges of Pell\n\nThe Pell Creek Bridge over the river is 86 metres long and opened in 1931.\n",
    ),
)
# From the seed-10 mutation draw: the page naming the asked bridge says nothing of the query's other words (its search
# title and snippet neither), so it gives no passage; the Pell Creek page, a similar name, is left out as a near miss.
# The query has no evidence, and the account of what was tried lists the near miss.
PELL_RIVER_WORKS = "https://bridge-works.example.org/pell-river-bridge"
PELL_CREEK_WORKS = "https://bridge-works.example.org/pell-creek-bridge"
NEAR_MISS_ONLY = (
    (
        PELL_RIVER_WORKS,
        "Works notices",
        "Closures and opening dates.",
        "# Works notices\n\n## Pell River Bridge\n\nOpened to traffic in 1998 after six years of work.\n",
    ),
    (
        PELL_CREEK_WORKS,
        "Works notices",
        "Closures and opening dates.",
        "# Works notices\n\nThe Pell Creek Bridge over the river is 86 metres long and opened in 1931.\n",
    ),
)
SAIMOK = "https://waterfalls.example.co.th/saimok"
SAIMOK_NOI = "https://waterfalls.example.co.th/saimok-noi"
FALLS = (
    (SAIMOK, "น้ำตกในเชียงใหม่", "น้ำตกสายหมอก", "# น้ำตกในเชียงใหม่\n\nน้ำตกสายหมอก มีความสูง 30 เมตร ไหลลงแอ่งน้ำใสกลางป่า\n"),
    (
        SAIMOK_NOI,
        "น้ำตกในเชียงใหม่",
        "น้ำตกสายหมอกน้อย",
        "# น้ำตกในเชียงใหม่\n\nน้ำตกสายหมอกน้อย มีความสูง 12 เมตร ไหลลงแอ่งน้ำใสกลางป่า\n",
    ),
)
# One page naming two models of a line, a sentence each: a model number of one digit after the line's name.
CORVAN = "https://corvan-phones.example.com/pixel-batteries"
BATTERIES = (
    (
        CORVAN,
        "Corvan Pixel battery capacities",
        "Battery capacities of Corvan Pixel phones.",
        "# Corvan Pixel battery capacities\n\nThe Corvan Pixel 8 battery capacity is 4575 mAh. "
        "The Corvan Pixel 9 battery capacity is 4700 mAh.\n",
    ),
)
# A bare version number belongs to the product named before it (Kestrel CLI 3.2); the pages' titles alike.
KESTREL_32 = "https://kestrel-cli.example.dev/releases/3.2"
KESTREL_31 = "https://kestrel-cli.example.dev/releases/3.1"
RELEASES = (
    (
        KESTREL_32,
        "Kestrel CLI releases",
        "Kestrel CLI release notes.",
        "# Kestrel CLI releases\n\nKestrel CLI 3.2 was released on 4 May 2026 with a new plugin system.\n",
    ),
    (
        KESTREL_31,
        "Kestrel CLI releases",
        "Kestrel CLI release notes.",
        "# Kestrel CLI releases\n\nKestrel CLI 3.1 was released on 9 January 2026 with faster startup.\n",
    ),
)
# A query naming a model and a year: last year's review of the same model is no passage for this year's.
REVIEW_2025 = "https://phone-reviews.example.net/orion-x5-2025"
REVIEWS = (
    (
        REVIEW_2025,
        "Veltra Orion X5 review",
        "Veltra Orion X5 review.",
        "# Veltra Orion X5 review\n\nOur 2025 review of the Veltra Orion X5: the battery lasts one day and the "
        "camera is soft.\n",
    ),
)

# A longer model number that begins with the asked one (X50 against X5): another model.
ORION_X50 = "https://veltra-phones.example.com/orion-x50"
X50_RESULTS = (
    (
        ORION_X50,
        "Veltra Orion X50 launch",
        "Veltra Orion X50 launch details.",
        "# Veltra Orion X50 launch\n\nThe Veltra Orion X50 launched at a price of $899 in March 2026.\n",
    ),
)

# From the seed-3 mutation draw: the query's year before its model number.
REVIEW_X4_2026 = "https://phone-reviews.example.net/orion-x4-2026"
X4_REVIEWS = (
    (
        REVIEW_X4_2026,
        "Veltra Orion X4 review",
        "Veltra Orion X4 review.",
        "# Veltra Orion X4 review\n\nOur 2026 review of the Veltra Orion X4: the battery lasts two days and the "
        "camera is sharp.\n",
    ),
)

DESIGNATORS = (
    Case(
        "absent-model",
        "the previous model's passage cited (or a near-miss snippet) when no page names the asked model, "
        "instead of [needs_retry]",
        {"query": "Veltra Orion X6 launch price", "cite": None, "never": (X5, X4), "results": PHONES},
    ),
    Case(
        "present-model",
        "the neighbouring model cited next to the asked one because the two share every other word",
        {"query": "Veltra Orion X5 launch price", "cite": X5, "never": (X4,), "results": PHONES},
    ),
    # From an outside hunt: a designator taken as named by any longer one that contains it.
    Case(
        "model-number-prefix",
        "a model number taken as named by a longer one that contains it: the Orion X50 page cited for the Orion "
        "X5, instead of [needs_retry]",
        {"query": "Veltra Orion X5 launch price", "cite": None, "never": (ORION_X50,), "results": X50_RESULTS},
    ),
    Case(
        "model-and-year",
        "only the query's first designator read (the model X5), its year (2026) ignored: last year's review of the "
        "same model cited for this year's, instead of [needs_retry]",
        {"query": "Veltra Orion X5 review 2026", "cite": None, "never": (REVIEW_2025,), "results": REVIEWS},
    ),
    Case(
        "sentence-per-model",
        "a sentence naming only the neighbouring model (Pixel 8) taken for the asked one's (Pixel 9) because the "
        "page names both, or the asked model's sentence dropped: the 4575 mAh of the Pixel 8 cited for the Pixel 9",
        {"query": "Corvan Pixel 9 battery capacity", "cite": CORVAN, "line": "4700", "never_text": ("4575",),
         "never": (), "results": BATTERIES},
    ),
    Case(
        "version-number",
        "a bare version number (3.2) read with the word after it (3.2 release, 3.2 was) instead of the product "
        "before it (CLI 3.2): the 3.2 release page refused as naming another version, or 3.1 cited",
        {"query": "Kestrel CLI 3.2 release date", "cite": KESTREL_32, "never": (KESTREL_31,), "results": RELEASES},
    ),
    Case(
        "buddhist-era",
        "a Buddhist Era year (2569) read as a bare number, or years ignored: last year's edition (2568, which is "
        "2025) cited for 2569 (2026). Reading 2569 as 2026 and citing the 2026 edition is not required (seed 002 "
        "names no calendar): [needs_retry] is accepted instead",
        {"query": "เทศกาลโคมไฟเชียงดาว 2569", "cite": LANTERNS_2026, "or_retry": True, "never": (LANTERNS_2025,),
         "results": LANTERNS},
    ),
    Case(
        "year-first",
        "designators read only up to the query's first year: for 2026 Veltra Orion X5 the model is lost and the "
        "2026 review of the Orion X4 cited, instead of [needs_retry]",
        {"query": "2026 Veltra Orion X5 review", "cite": None, "never": (REVIEW_X4_2026,), "results": X4_REVIEWS},
    ),
    Case(
        "similar-name",
        "a proper name matched word by word, not whole: the Pell Creek Bridge page (which also names the river) "
        "cited for the Pell River Bridge",
        {"query": "Pell River Bridge length", "cite": PELL_RIVER, "never": (PELL_CREEK,), "results": BRIDGES},
    ),
    # From the seed-10 mutation draw: a near miss recorded as nothing (no url, no reason) passes while the query
    # still has evidence, and breaks the [needs_retry] line's account of what was tried when it has none. Citing
    # the asked bridge's page (any line of it) or [needs_retry] are both the target's choice; crashing is not.
    Case(
        "similar-name-no-passage",
        "a page left out for a similar name recorded without its URL and reason: when the page that names the "
        "subject gives no passage either, the [needs_retry] line cannot say what was left out and the tool raises "
        "instead of answering",
        {"query": "Pell River Bridge length", "cite": PELL_RIVER_WORKS, "or_retry": True,
         "never": (PELL_CREEK_WORKS,), "results": NEAR_MISS_ONLY},
    ),
    Case(
        "thai-similar-name",
        "a Thai name taken as standing whole when more Thai letters follow it: น้ำตกสายหมอกน้อย (Little Saimok "
        "Falls) cited for น้ำตกสายหมอก (Saimok Falls)",
        {"query": "น้ำตกสายหมอก ความสูง", "cite": SAIMOK, "never": (SAIMOK_NOI,), "results": FALLS},
    ),
    Case(
        "two-letter-subject",
        "two-letter words (AI, UK, EV) dropped from the query as if they were stop words or single letters: "
        "a page about potato chip export rules cited for AI chip export rules",
        {
            "query": "AI chip export rules",
            "cite": None,
            "never": (CHIPS,),
            "results": ((CHIPS, "Potato chip export rules", "Potato chip export rules from May.", CHIPS_PAGE),),
        },
    ),
    Case(
        "thai-sara-am",
        "Thai SARA AM left split by NFKC (NIKHAHIT + SARA AA), so ทองคำ (gold) falls apart into ทอง + คํา and "
        "a copper price page (ราคาทองแดง, with คำแนะนำ) is cited for today's gold price",
        {
            "query": "ราคาทองคำวันนี้",
            "cite": None,
            "never": (COPPER,),
            "results": ((COPPER, "ราคาทองแดง", "ราคาทองแดงวันนี้", COPPER_PAGE),),
        },
    ),
    Case(
        "cjk-one-character",
        "a one-character Chinese or Japanese word (雪, snow) of the query lost to bigram tokens: Shanghai's "
        "rain forecast cited for Shanghai snow",
        {
            "query": "上海 雪",
            "cite": None,
            "never": (RAIN,),
            "results": ((RAIN, "上海天气", "上海明天天气预报。", RAIN_PAGE),),
        },
    ),
    Case(
        "cjk-two-character",
        "a two-character Chinese word standing alone (上海) lost to the bigram edges: Beijing's snow report "
        "cited for Shanghai snow",
        {
            "query": "上海 雪",
            "cite": None,
            "never": (BEIJING,),
            "results": ((BEIJING, "北京天气", "北京明天有雪。", BEIJING_PAGE),),
        },
    ),
)


def _serve(ctx: CheckContext, url: str, content: str) -> None:
    serve_page(ctx, url, url.rsplit("/", 1)[-1], content)


def _cited(value: Any) -> list[tuple[str, str]]:
    return [
        (str(e.get("url", "")), str(e.get("text", "")))
        for g in (value.get("queries", []) if isinstance(value, dict) else [])
        for e in g.get("evidence", [])
        if isinstance(e, dict)
    ]


@check(
    "evidence.designators",
    "A query naming a model or subject no page names gets [needs_retry]; the neighbouring one is never its evidence",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: code keeps only the passages that match the query (a page about the previous model, "
    "or about another subject sharing the query's other words, does not), and when no usable passage is "
    "found the result says [needs_retry] so the agent makes the query more specific instead of answering "
    "from a near miss.",
    cases=DESIGNATORS,
)
async def designators(ctx: CheckContext) -> None:
    for case in DESIGNATORS:
        ctx.fresh()
        query = case["query"]
        script(ctx, query, [row(url, title, snippet) for url, title, snippet, _page in case["results"]])
        for url, _title, _snippet, page in case["results"]:
            _serve(ctx, url, page)
        outcome = await _evidence(ctx, query, {"id": f"designators-{case.name}", "local_names": []})
        value = expect_success(outcome, case.name)
        await ctx.settle()
        cited = _cited(value)
        urls = {url for url, _ in cited}
        for url in case["never"]:
            require(url not in urls, f"{case.name}: {url} is cited for {query!r}", evidence=cited,
                    catches=case.catches)  # fmt: skip
        for text in case.params.get("never_text", ()):
            require(not any(text in line for _url, line in cited), f"{case.name}: {text!r} is cited for {query!r}",
                    evidence=cited, catches=case.catches)  # fmt: skip
        if "line" in case.params:
            require(any(url == case["cite"] and case["line"] in line for url, line in cited),
                    f"{case.name}: no line citing {case['cite']} holds {case['line']!r}", evidence=cited,
                    catches=case.catches)  # fmt: skip
        if case["cite"] is None:
            require("[needs_retry]" in (outcome.text or ""), f"{case.name}: no [needs_retry] for {query!r}",
                    catches=case.catches, text=(outcome.text or "")[:1000])  # fmt: skip
        else:
            retried = case.params.get("or_retry") and "[needs_retry]" in (outcome.text or "")
            require(case["cite"] in urls or retried, f"{case.name}: {case['cite']} is not cited for {query!r}",
                    evidence=cited, catches=case.catches)  # fmt: skip


FERRY = "https://lumen-ferry.example.org/fares"
FERRY_PAGE = (
    "# Lumen Bay ferry fares\n\nThe Lumen Bay ferry links the old town with Gull Island every 40 minutes. "
    "Adult and child fares changed in March.\n\n"
    "| Ticket | One way | Return |\n| --- | --- | --- |\n| Adult | $12.50 | $22.00 |\n"
    "| Child | $6.00 | $10.50 |\n| Bicycle | $3.00 |\n"  # no return fare for a bicycle: a row shorter than its header
    "| Pet |  | $4.00 |\n"  # return only: an empty cell keeps its column
    "\nTimetable to Gull Island:\n\n| Route | Departs | Arrives |\n| --- | --- | --- |\n"
    "| Gull Island | 07:00 | 07:40 |\n"  # a second table, with its own header
)
# What the engine shows for the page: the first row's snippet holds its fare too (engines show such
# snippets); the second's holds none, so only the page's own row can carry the fact.
ADULT_SNIPPET = "Lumen Bay ferry fares: Adult one way $12.50."
TABLES = (
    Case(
        "row-label",
        "table cells split into separate passages, so the fare reaches the evidence without the row "
        "(Adult) it belongs to, or not at all",
        {"query": "Lumen Bay ferry adult fare", "label": "Adult", "value": "12.50", "snippet": ADULT_SNIPPET},
    ),
    Case(
        "page-row",
        "a table the parser cannot read (a row with fewer cells than its header, or any table line) failing the "
        "whole page, so the search snippet stands in for a page that was fetched and holds the fact: the fare "
        "never reaches the evidence",
        {"query": "Lumen Bay ferry bicycle fare", "label": "Bicycle", "value": "3.00",
         "snippet": "Lumen Bay ferry fares and timetable for the Gull Island crossing."},
    ),
    # From an outside hunt: a row's values kept with its label but not their column headers.
    Case(
        "column-header",
        "a row's values joined without their column headers ('Adult — $12.50; $22.00'): which fare is the return "
        "fare is lost",
        {"query": "Lumen Bay ferry adult return fare", "label": "Adult", "value": "22.00", "column": "Return",
         "snippet": "Lumen Bay ferry fares and timetable for the Gull Island crossing."},
    ),
    # From an outside hunt (the third session of 2026-12-05): values put under another column's header.
    Case(
        "empty-cell",
        "a row's empty cells dropped before its values are paired with the column headers: the pet's return fare "
        "shown as its one-way fare",
        {"query": "Lumen Bay ferry pet return fare", "label": "Pet", "value": "4.00", "column": "Return",
         "snippet": "Lumen Bay ferry fares and timetable for the Gull Island crossing."},
    ),
    Case(
        "second-table",
        "a page's first table header kept for the tables after it (not reset where a table ends): the timetable's "
        "times shown under the fare columns",
        {"query": "Gull Island ferry departs arrives", "label": "Gull Island", "value": "07:00", "column": "Departs",
         "snippet": "Lumen Bay ferry fares and timetable for the Gull Island crossing."},
    ),
)


@check(
    "evidence.table_rows",
    "A fact in a table row reaches the evidence with its row label",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: code reduces a fetched page to the short text that matches the query, so the passage "
    "must still carry the fact: a table value without the row it belongs to, or without the column that says "
    "what it is, is no usable passage.",
    cases=TABLES,
)
async def table_rows(ctx: CheckContext) -> None:
    for case in TABLES:
        ctx.fresh()
        query = case["query"]
        # Where the snippet holds the fact too, this row is about the page's passage; a pipeline that never
        # reads pages is evidence.passages' catch.
        script(ctx, query, [row(FERRY, "Lumen Bay ferry fares and timetable", case["snippet"])])
        _serve(ctx, FERRY, FERRY_PAGE)
        outcome = await _evidence(ctx, query, {"id": f"tables-{case.name}", "local_names": []})
        value = expect_success(outcome, case.name)
        await ctx.settle()
        cited = _cited(value)
        wanted = [case["label"], case["value"], *([case["column"]] if "column" in case.params else [])]
        together = [text for url, text in cited if all(w in text for w in wanted)]
        require(together, f"{case.name}: no evidence line holds {' and '.join(map(repr, wanted))}",
                evidence=cited, catches=case.catches)  # fmt: skip


PILOT = "harbour pilot boarding"
TUGS = "harbour tug hire"
FESTIVAL_PAGE = "# Festival\n\nThe harbour festival has music and food stalls.\n"
# Seed 002's users write Thai without spaces between words: "ticket price, boat, Koh Chang". The
# relevant result never holds the query as one run of letters, so only words can match it.
KOH_CHANG = "ราคาตั๋วเรือเกาะช้าง"
KOH_CHANG_URL = "https://koh-chang-ferry.co.th/tickets"
KOH_CHANG_PAGE = "# ตั๋วเรือไปเกาะช้าง\n\nราคาตั๋วเรือไปเกาะช้างสำหรับผู้ใหญ่ 120 บาทต่อเที่ยว\n"
BEACH_PAGE = "# ตลาดนัดริมหาด\n\nตลาดนัดริมหาดมีดนตรีและอาหารทุกเย็น\n"


def _results(query: str, topic: str, weak_count: int, at: int | None = None) -> list[dict[str, str]]:
    """Weak results (one shared word) the engine lists around the relevant one, which is at index ``at``
    (last by default). Every result is on a site of its own, so source diversity neither picks nor skips
    the relevant one for the ranking."""
    head = query.split()[0]
    weak = [
        row(f"https://{topic}-news{i}.com/festival", f"{head.title()} festival news {i}",
            f"Festival programme and {head} market stalls, part {i}.")
        for i in range(weak_count)
    ]  # fmt: skip
    weak.insert(weak_count if at is None else at, _best(query, topic))
    return weak


def _best(query: str, topic: str) -> dict[str, str]:
    """The relevant result: its title and snippet name every word of ``query``."""
    return row(f"https://{topic}-guide.org/", f"{query.title()} guide", f"How {query} works, step by step.")


def _guide_page(query: str) -> str:
    return f"# {query}\n\n{query.capitalize()} is booked through the port office.\n"


def _english(query: str, topic: str, weak_count: int, at: int | None = None) -> tuple[Any, ...]:
    """(query, the engine's results, the relevant result's index, its page, the weak results' page)."""
    at_index = weak_count if at is None else at
    return query, _results(query, topic, weak_count, at), at_index, _guide_page(query), FESTIVAL_PAGE


def _near_misses(query: str, topic: str, miss: str, count: int) -> tuple[Any, ...]:
    """Like :func:`_english`, but every other result shares all of the query's words but its last (``miss``
    in its place), and the relevant result is listed last: a gate on shared words lets them all through."""
    kept = " ".join(query.split()[:-1])
    near = [row(f"https://{topic}-notes{i}.com/{miss}", f"{kept.title()} {miss} {i}",
                f"{kept.capitalize()} {miss} notes, part {i}.") for i in range(count)]  # fmt: skip
    return query, [*near, _best(query, topic)], count, _guide_page(query), FESTIVAL_PAGE


# Weak Thai results share one word with the query (ราคา, price: of beach rooms and market food).
_BEACH = [
    row(f"https://beach-news{i}.co.th/market", f"ราคาห้องพักริมทะเล {i}", f"ราคาห้องพักและตลาดนัดริมหาด ตอนที่ {i}")
    for i in range(7)
]
_THAI = (KOH_CHANG, [*_BEACH, row(KOH_CHANG_URL, "ตั๋วเรือไปเกาะช้าง", "ราคาตั๋วเรือเฟอร์รี่ไปเกาะช้าง ผู้ใหญ่และเด็ก")],
         7, KOH_CHANG_PAGE, BEACH_PAGE)  # fmt: skip

def _behind_its_site(query: str, topic: str) -> tuple[Any, ...]:
    """Like :func:`_english`, but the relevant result comes third, behind two weak pages of its own site (the
    other weak results on sites of their own): a per-domain share applied to the engine's list before the
    ranking pushes it to the back."""
    site = f"https://{topic}-times.com"
    weak = [row(f"{site}/n{i}", f"Harbour festival news {i}", f"Festival programme and market stalls, part {i}.")
            for i in range(2)]  # fmt: skip
    best = row(f"{site}/{query.replace(' ', '-')}", f"{query.title()} guide", f"How {query} works, step by step.")
    rest = _results(query, topic, 5)[:5]
    return query, [*weak, best, *rest], 2, _guide_page(query), FESTIVAL_PAGE


def _one_word(word: str, weak_count: int) -> tuple[Any, ...]:
    """Like :func:`_english` for a query of one word, whose weak results (festival pages) never name it: any
    scoring tells the result naming the word from those that do not."""
    # The weak hosts do not carry the word either: a scorer reading the URL too (open) would otherwise tie them all
    # with the relevant result and keep the engine's order (a review's false failure).
    weak = [row(f"https://harbour-news{i}.com/festival", f"Harbour festival news {i}",
                f"Festival programme and market stalls, part {i}.") for i in range(weak_count)]  # fmt: skip
    return word, [*weak, _best(word, word)], weak_count, _guide_page(word), FESTIVAL_PAGE


def _with_operator(query: str, operator: str, topic: str, weak_count: int) -> tuple[Any, ...]:
    """Like :func:`_english`, but the query sent carries a search operator (``operator``, a word no result
    names, as the engine answering it would return them); the results and pages are the plain query's."""
    plain, rows, at, page, weak_page = _english(query, topic, weak_count)
    return f"{plain} {operator}", rows, at, page, weak_page


FERRY_FARES = "Lumen Bay ferry adult return fares"
LIGHTHOUSE = "Gull Island lighthouse hours"


def _other_query_words() -> tuple[Any, ...]:
    """The second query of a batch whose decoys carry the first query's words (and three of its own, all but
    "hours"): ranked against the whole batch's words, the decoys fill its pages and the relevant result, last, is
    never read. (Sharing "lighthouse" keeps it so in a shorter answer too: with only the relevant result and a
    weak one naming the lighthouse, the word would weigh enough to lift it above the decoys.)"""
    titles = ("Lumen Bay ferry", "Adult return fares", "Lumen adult fares", "Bay ferry return")
    decoys = [row(f"https://ferry-trips{i}.net/", title, f"On the Gull Island lighthouse crossing, part {i}.")
              for i, title in enumerate(titles)]  # fmt: skip
    weak = [row(f"https://gull-news{i}.com/festival", "Gull Island lighthouse", f"Festival news, part {i}.")
            for i in range(3)]  # fmt: skip
    best = row("https://gull-lighthouse.org/hours", "Gull Island lighthouse hours",
               "Gull Island lighthouse opening hours, daily.")
    page = "# Gull Island lighthouse\n\nGull Island lighthouse hours are 9 to 5 daily.\n"
    return LIGHTHOUSE, [*decoys, *weak, best], 7, page, FESTIVAL_PAGE


# 4 + 8 results for 8 pages: the engine's order reads the first query's relevant result (4th) but
# never the second's (8th); a pipeline ranking its own reads both first. 7 + 8 results: four pages a
# query, so the engine's order reversed never reads the first query's relevant result (1st), nor the
# engine's order (or an order from either end) the second's (5th). (Filling the pages query after
# query, with a ranking of its own, still reads every row's relevant results: that reading is
# evidence.diversity's catch, not this check's.)
RANKING = (
    Case(
        "engine-last",
        "the engine's order passed through as the pipeline's ranking: with more results than pages read, "
        "the relevant result the engine listed last is never read",
        {"queries": (_english(PILOT, "pilot", 3), _english(TUGS, "tug", 7))},
    ),
    Case(
        "engine-first",
        "an order fixed in advance taken for the ranking, with no relevance score: the engine's order reversed "
        "(its last result read first) never reads the relevant result the engine listed first, nor the engine's "
        "own order one it listed in the middle",
        {"queries": (_english(PILOT, "pilot", 6, 0), _english(TUGS, "tug", 7, 4))},
    ),
    # From an outside hunt: a gate on shared words over the engine's order, with no score inside it.
    Case(
        "near-misses",
        "a relevance gate (half the query's words shared) in front of the engine's order, with no score ordering "
        "what passes it: every result sharing all words but one passes, so the full match the engine listed last "
        "is never read",
        {"queries": (_near_misses(PILOT, "pilot", "roster", 3), _near_misses(TUGS, "tug", "fleet", 7))},
    ),
    # From an outside hunt: two more orders that pass for the pipeline's own.
    Case(
        "relevant-behind-its-site",
        "the per-domain share applied to the engine's list before the ranking (a site's third result and later sent "
        "to the back): the relevant result, listed behind two weak pages of its own site, is never read",
        {"queries": (_english(TUGS, "tug", 3), _behind_its_site(PILOT, "pilot"))},
    ),
    Case(
        "other-query-words",
        "each query's results ranked against the words of the whole batch: the second query's decoys, which "
        "carry the first query's words, fill its pages and its relevant result is never read",
        {"queries": (_english(FERRY_FARES, "ferry", 3), _other_query_words())},
    ),
    Case(
        "thai-words",
        "Thai queries and results ranked by whole space-separated runs of letters (Thai not cut into words): "
        "every result of a Thai query scores nothing and the engine's order passes through, so the relevant "
        "result the engine listed last is never read",
        {"queries": (_english(PILOT, "pilot", 3), _THAI)},
    ),
    # From an outside hunt (M2): the engine's order kept for the queries a developer might think need no ranking.
    # Seed 002 ranks every query's results ("does not trust the search engine's ranking alone"), one word or
    # operators included (seed 001 passes operators to the engine; they do not make its order the pick).
    Case(
        "one-word-and-operator-queries",
        "the engine's order passed through for some queries only: a one-word query ('scoring one word says "
        "nothing') or a query carrying a search operator such as -term ('the engine already filtered it'), so its "
        "relevant result, listed last, is never read",
        {"queries": (_one_word("anchorage", 7), _with_operator(TUGS, "-cruise", "tug", 7)),
         # the operator query's page read is the ranking; its passage (the operator no word the page must hold)
         # is evidence.passages' "operators" row
         "read_only": (f"{TUGS} -cruise",)},
    ),
)


def listed_at(rows: Sequence[Row], at: int) -> Listing:
    """The engine's answer to a request for ``count`` results: ``rows`` cut to ``count``, the relevant result
    (``rows[at]``) still among them, at its place or, when that is cut, last. A target reading fewer results a
    query (seed 002 only bounds them; seed 001's Search API returns ``count``) still gets the relevant one where
    the engine's order puts it: last (engine-last), first, or in between."""
    best, others = rows[at], [r for i, r in enumerate(rows) if i != at]

    def listing(count: int) -> Sequence[Row]:
        place = min(at, count - 1)
        return [*others[:place], best, *others[place:]][:count]

    return listing


@check(
    "evidence.own_ranking",
    "With more results than pages read, the pages read are the pipeline's own pick, not the engine's order",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: the system does not trust the search engine's ranking alone; it picks sources whose "
    "relevance is good (code-only relevance ranking after URL validation, before fetching). Where the "
    "engine lists the relevant result (first, last or in between), in English or in Thai, for a query of one "
    "word or one carrying a search operator too, is not what decides whether it is read; which signals score "
    "relevance and how ties are ordered are left open.",
    cases=RANKING,
)
async def own_ranking(ctx: CheckContext) -> None:
    not_judged: dict[str, str] = {}
    for case in RANKING:
        ctx.fresh()
        best: dict[str, str] = {}
        for query, rows, at, page, weak_page in case["queries"]:
            script_listing(ctx, query, listed_at(rows, at))
            best[query] = rows[at]["url"]
            for result in rows:
                _serve(ctx, result["url"], page if result is rows[at] else weak_page)
        queries = [query for query, *_ in case["queries"]]
        outcome = await _evidence(ctx, queries, {"id": f"ranking-{case.name}", "local_names": []})
        value = expect_success(outcome, case.name)
        await ctx.settle()
        fetched = {r.json.get("url") for r in ctx.records("fetch") if isinstance(r.json, dict)}
        cited = {url for url, _ in _cited(value)}
        offered = offered_urls(ctx.records("search"), queries)
        if offered and all(urls and urls <= fetched for urls in offered.values()):
            # every result the target was offered was read: no order can leave the relevant one unread, so the
            # row cannot show the ranking it exists for (its few results a query are the target's choice)
            not_judged[case.name] = "every result offered was read: the ranking not judged"
            ctx.note("not judged", not_judged)
        for query, url in best.items():
            require(url in fetched, f"{case.name}: the relevant result for {query!r} ({url}) was never read",
                    catches=case.catches, fetched=sorted(str(u) for u in fetched))  # fmt: skip
            if query not in case.params.get("read_only", ()):
                require(url in cited, f"{case.name}: the relevant result for {query!r} ({url}) is not cited",
                        catches=case.catches)  # fmt: skip
