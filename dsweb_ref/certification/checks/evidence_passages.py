"""Passage extraction of the evidence pipeline (seed 002), over scripted Search and Fetch API answers.

Seed 002 decides: a page fetched successfully is not sent to the model whole; code cuts it down to
short text that matches the query; the search snippet is a fallback only when the page could not
be fetched or had no usable passage. It fixes neither the passage length nor how passages are cut
(sentences, windows, paragraphs), so the check enforces only, for one search result whose page the
Fetch API serves:

* the page's one query-matching paragraph, deep in the page, reaches the evidence (so the page was
  read for passages, not replaced by its snippet or by its first characters);
* the page's opening paragraph, which shares no word with the query (or only stop words such as
  "where is the") and stands far from the match, does not; and the evidence citing the page is
  shorter than a quarter of the page;
* the same for a Thai and a Chinese page (no spaces between words; a Chinese query whose two words
  stand apart in the paragraph), for a one-word query, and when the query carries search operators
  (seed 001 documents site, language, date and exclusion operators, passed to the engine unchanged):
  they steer the search and are not words the page must hold, so the page on the named site still
  yields its matching paragraph.
* a matching paragraph that is a list item starting with its fact (a time) keeps that fact: the passage
  is the page's text, its list marker aside.
* a page that is one long paragraph without sentence punctuation is not sent (nearly) whole: however the
  pipeline cuts it, the evidence stays under a quarter of the page (the bound of the rows above; the seed
  names no number, and more than a quarter of a 4,800-character page is no "short text");
* a long Thai paragraph (Thai ends a sentence with a space, not punctuation) whose last sentence holds the
  fact yields that fact, not the paragraph's unrelated opening;
* in a batch of two queries, each query's passages match that query: the first query's page also answers
  the second in a sentence the first query never cites, while the second query gets its fare (seed 002:
  passages that match the query; the results come back separated by query).
* a page that fails to load (a Fetch API 404 or 500) is its own failure: the query's other result, whose page
  loaded, still yields its passage (not only its snippet, nor [needs_retry]).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...emulator import Status
from ..cases import Case
from ._base import CheckContext, check, expect_success, require
from ._script import row, script
from .evidence import REQUIRES, _evidence, serve_page

QUERY = "harbour pilot boarding"
PAGE_URL = "https://port-authority.example.org/pilotage"
OPENING = "The lighthouse keepers' choir rehearses on Thursdays in the old chapel."
MATCH = "Harbour pilot boarding starts at 06:00 from the outer anchorage, for vessels over 80 metres."
FACT = "outer anchorage"  # in MATCH only: not in the title, the snippet or the query
SNIPPET = "Pilotage for the harbour: how pilot boarding works."


@dataclass(frozen=True)
class _Texts:
    """One page's texts: the query, the page's heading, the title, the snippet, the unrelated opening
    paragraph (with a word of it that must not reach the evidence), the matching paragraph (with a fact
    only it holds), the filler."""

    query: str
    heading: str
    title: str
    snippet: str
    opening: str
    opening_word: str
    match: str
    fact: str
    filler: str  # with {i}


ENGLISH = _Texts(
    QUERY,
    "# Pilotage",
    "Harbour pilot boarding guide",
    SNIPPET,
    OPENING,
    "keepers",
    MATCH,
    FACT,
    "Note {i}: the museum garden hosts a flower show with music, crafts and food stalls for families.",
)
# Seed 002's users write Thai, which has no spaces between words: a pipeline that matches whole
# space-separated runs never finds "ราคาทองคำวันนี้" (gold price today) inside a sentence.
THAI = _Texts(
    "ราคาทองคำวันนี้",
    "# ข่าวราคาทองคำ",
    "ข่าวราคาทองคำ",
    "ติดตามข่าวราคาทองประจำวัน",
    "ชมรมนักร้องประสานเสียงซ้อมทุกวันพฤหัสบดีที่โบสถ์เก่าริมคลอง",
    "ชมรม",
    "ราคาทองคำวันนี้ที่เยาวราชปรับขึ้นสองร้อยบาท ร้านทองเปิดตั้งแต่เจ็ดโมงเช้า",  # a space ends a Thai sentence
    "เยาวราช",
    "หมายเหตุ {i}: สวนพิพิธภัณฑ์จัดงานดอกไม้พร้อมดนตรีงานฝีมือและอาหารสำหรับครอบครัว",
)
# Chinese neither: a query of four characters is matched by its words or character pairs, not whole.
CHINESE = _Texts(
    "上海天气预报",
    "# 上海天气",
    "上海天气",
    "查看每日天气",
    "老教堂的合唱团每周四晚上排练新的曲目。",
    "合唱团",
    "上海明天天气预报：多云转小雨，最高气温十八度，外滩风力较大。",
    "外滩",
    "注释{i}：博物馆花园举办花展，有音乐、手工艺品和家庭美食摊位。",
)

# Words such as "where", "is", "the" match nearly every paragraph: a paragraph sharing only them with the
# query is as unrelated as one sharing nothing (the opening here asks its own "where is the" question).
STOP_WORDS = replace(
    ENGLISH,
    query="where is the harbour pilot boarding",
    opening="Where is the lighthouse keepers' choir? It rehearses on Thursdays in the old chapel.",
)
# A one-word query: its matching paragraph is the one naming the anchorage.
ONE_WORD = replace(ENGLISH, query="anchorage")
# Search operators (seed 001: site, language, date and exclusion operators pass to the engine unchanged)
# steer the search; the page below is on the named site, in English, and never names the excluded word,
# so its matching paragraph matches the query as the engine reads it.
OPERATORS = replace(
    ENGLISH, query="site:port-authority.example.org harbour pilot boarding -cruise lang:en after:2025-01-01"
)

# Shanghai weather (上海天气), its two words apart in the matching paragraph ("上海明天天气预报").
CHINESE_APART = replace(CHINESE, query="上海天气")
# The matching paragraph is a list item that starts with its fact (a time): the item's marker goes, the
# time stays.
LIST_ITEM = replace(
    ENGLISH, match="- 06:00 is when harbour pilot boarding starts, from the outer anchorage.", fact="06:00 is when"
)
# One paragraph of 4,636 characters with no sentence punctuation (comma-separated notes), the query's words
# at its start: a passage cut only at sentences or blocks, with no size bound, is the whole paragraph.
RUN_ON = replace(
    ENGLISH,
    query="harbour pilot boarding notes",
    title="Pilot notes",
    snippet="Notes of the harbour office.",
    match="Harbour pilot boarding notes for the outer anchorage, "
    + ", ".join(f"berth {i} crane {i % 7} tide table {i % 3} gate {i % 5}" for i in range(120))
    + ", end of notes",
)
# A Thai paragraph of 509 characters (Thai ends sentences with a space, not punctuation) whose last sentence
# holds the fare asked for; its opening sentences (pier hours, shops, parking) are unrelated.
THAI_PARAGRAPH = replace(
    THAI,
    query="ค่าโดยสารเรือเฟอร์รี่เกาะช้าง",
    heading="# ท่าเรือแหลมงอบ",
    title="ท่าเรือแหลมงอบ",
    snippet="ข้อมูลท่าเรือแหลมงอบ",
    match="ท่าเรือแหลมงอบเปิดให้บริการทุกวันตั้งแต่เช้าจนถึงค่ำ มีร้านอาหารและร้านกาแฟหลายแห่งรอบท่าเรือ "
    "นักท่องเที่ยวสามารถจอดรถได้ที่ลานจอดรถด้านหน้าท่าเรือ ในช่วงวันหยุดยาวจะมีผู้โดยสารจำนวนมากจึงควรมาถึงก่อนเวลาอย่างน้อยครึ่งชั่วโมง "
    "เจ้าหน้าที่จะตรวจบัตรที่ประตูทางเข้าก่อนขึ้นเรือทุกเที่ยว ผู้โดยสารที่นำสัตว์เลี้ยงมาด้วยต้องใส่กรงให้เรียบร้อย "
    "ห้องน้ำและห้องละหมาดอยู่ทางด้านซ้ายของอาคารผู้โดยสาร ในฤดูมรสุมอาจมีการยกเลิกเที่ยวเรือโดยไม่แจ้งล่วงหน้า "
    "ค่าโดยสารเรือเฟอร์รี่ไปเกาะช้างสำหรับผู้ใหญ่ราคา 120 บาทต่อเที่ยว",
    fact="120 บาท",
)
# From an outside hunt: the same for Chinese, whose sentences end in 。 with no space after it. A paragraph of
# 13 sentences (448 characters) whose last one holds the fare asked for; the others (hours, parking, tickets)
# are unrelated.
CHINESE_PARAGRAPH = replace(
    CHINESE,
    query="上海港渡轮票价",
    heading="# 上海港客运码头",
    title="上海港客运码头",
    snippet="码头信息",
    match="上海港客运码头每天早上六点开门，晚上十点关门，码头周围有很多餐馆和咖啡店。"
    "游客可以把车停在码头前面的停车场，节假日期间乘客很多，建议至少提前半小时到达。"
    "工作人员会在登船前检查每位乘客的船票和身份证件，携带宠物的乘客必须把宠物放进笼子里。"
    "洗手间和母婴室位于候船大厅的左侧，大厅里还有免费的无线网络和手机充电站。"
    "在台风季节，班次可能会在没有提前通知的情况下取消，请随时关注码头的公告。"
    "码头附近的老街有许多传统小吃，比如生煎包和小笼包，很多游客在等船的时候去品尝。"
    "码头的售票窗口每天早上五点半开始售票，也可以通过手机应用提前购票。"
    "候船大厅里有一家书店，出售地图、明信片和当地的旅游指南。"
    "夜间的最后一班船通常在晚上九点半出发，错过末班船的乘客需要在附近过夜。"
    "码头东侧新建了一座观景平台，天气晴朗的时候可以看到远处的灯塔和往来的货轮。"
    "每年春天码头会举办一次海鲜节，附近的渔民会带来新鲜的鱼虾和螃蟹出售。"
    "码头管理处提醒乘客保管好随身物品，遗失物品可以到服务台登记领取。"
    "上海港渡轮票价：成人每人二十五元人民币。",
    fact="二十五元",
)
# One Thai sentence of 212 characters (634 UTF-8 bytes; one ASCII digit puts the three-byte characters off the
# grid of a byte count), longer than the reference's passage bound in bytes. No seed fixes a passage length, so
# the row holds only that a cut keeps whole characters.
THAI_SENTENCE = replace(
    THAI_PARAGRAPH,
    match="ท่าเรือแหลมงอบเปิดให้บริการ7วันตั้งแต่เช้าจนถึงค่ำและมีร้านอาหารกับร้านกาแฟหลายแห่งรอบท่าเรือสำหรับ"
    "นักท่องเที่ยวที่รอขึ้นเรือไปเกาะช้างโดยค่าโดยสารเรือเฟอร์รี่ไปเกาะช้างสำหรับผู้ใหญ่คือหนึ่งร้อยยี่สิบบาทต่อเที่ยว",
    fact="หนึ่งร้อยยี่สิบบาท",
)

# A Thai sentence ending in a full stop: "น." (นาฬิกา, o'clock) after a time is how Thai writes it. The fact is
# in the paragraph's last (here: only) sentence, so a segmenter that ends a sentence at punctuation must still
# hand over the sentence the final stop closes.
THAI_FULL_STOP = replace(THAI, match="ราคาทองคำวันนี้ที่เยาวราชปรับขึ้นสองร้อยบาทเมื่อเวลา 09.30 น.")


def _page(texts: _Texts, fillers: int) -> str:
    filler = [texts.filler.format(i=i) for i in range(fillers + 1)]
    return "\n\n".join([texts.heading, texts.opening, *filler[:-1], texts.match, filler[-1]])


PASSAGES = (
    Case(
        "deep-match",
        "the search snippet used although the fetched page had a matching passage; or the page's first "
        "characters taken for its passage",
        {"fillers": 40, "texts": "english"},
    ),
    Case(
        "snippet-beside-page",
        "the search snippet shown beside the page's passage, or in its place when it holds a value of its own: a "
        "matching snippet (Brackenholt quay at 05:30) cited although the page had a matching passage",
        {"fillers": 16, "texts": "snippet-matching", "never": "Brackenholt"},
    ),
    Case(
        "short-page",
        "the whole page, or every paragraph of it, sent as evidence (its unrelated opening included)",
        {"fillers": 16, "texts": "english"},
    ),
    Case(
        "thai-page",
        "Thai matched by whole space-separated runs (Thai has no spaces between words): the matching paragraph "
        "never found, the snippet or the page's opening sent instead",
        {"fillers": 40, "texts": "thai"},
    ),
    Case(
        "thai-full-stop",
        "a Thai sentence cut that does not hand over a sentence ended by punctuation: a paragraph ending in 'น.' "
        "(a time, 09.30 น.) loses its last sentence, here the whole matching paragraph",
        {"fillers": 40, "texts": "thai-full-stop"},
    ),
    Case(
        "chinese-page",
        "Chinese matched by whole runs (no spaces at all): the matching paragraph never found",
        {"fillers": 40, "texts": "chinese"},
    ),
    Case(
        "chinese-words-apart",
        "Chinese indexed by units longer than the two-character word (trigrams, whole runs): the query 上海天气 "
        "never meets the paragraph where 上海 and 天气 stand apart (上海明天天气预报)",
        {"fillers": 40, "texts": "chinese-apart"},
    ),
    Case(
        "stop-words",
        "stop words (where, is, the) counted as query words: a paragraph sharing only them with the query "
        "reaches the evidence",
        {"fillers": 40, "texts": "stop-words"},
    ),
    Case(
        "one-word",
        "a passage required to hold more than half of the query's content words: a one-word query (anchorage) "
        "never gets the paragraph that names it",
        {"fillers": 40, "texts": "one-word"},
    ),
    Case(
        "operators",
        "search operators (site:, -term, lang:, after:) read as words the page must hold: the page on the "
        "named site with the matching paragraph gives no evidence",
        {"fillers": 40, "texts": "operators"},
    ),
    Case(
        "list-item-number",
        "a list item's leading number (a time, a count, a price) stripped with its bullet: '- 06:00 is when ...' "
        "read as ':00 is when ...', the item's fact lost from its passage",
        {"fillers": 40, "texts": "list-item"},
    ),
    Case(
        "run-on-paragraph",
        "no size bound on a passage: a paragraph without sentence punctuation (4,636 characters of comma-separated "
        "notes) is one unit and goes whole, so the page is sent nearly whole",
        {"fillers": 0, "texts": "run-on"},
    ),
    Case(
        "thai-long-paragraph",
        "Thai text not cut into sentences (only other scripts, at punctuation): a 509-character Thai paragraph is "
        "one unit, its passage is the paragraph's unrelated opening and the fare (120 บาท) in its last sentence "
        "is cut off",
        {"fillers": 40, "texts": "thai-paragraph"},
    ),
    Case(
        "chinese-long-paragraph",
        "sentences cut only at punctuation followed by a space (as in English): a 448-character Chinese paragraph, "
        "whose sentences end in 。 with nothing after it, is one unit; its passage is the paragraph's unrelated "
        "opening and the fare (二十五元) in its last sentence is cut off",
        {"fillers": 40, "texts": "chinese-paragraph"},
    ),
    Case(
        "thai-long-sentence",
        "a passage bounded in UTF-8 bytes (a Go-style len): a Thai sentence of 212 characters (634 bytes) cut "
        "inside a character, shown as U+FFFD (how much of the sentence a passage keeps is open)",
        {"fillers": 40, "texts": "thai-sentence", "any_cut": True},
    ),
)
# A snippet that matches the query and names another quay and time (an engine's stale excerpt): the page has
# its passage, so the snippet is no fallback and Brackenholt never reaches the evidence.
SNIPPET_MATCHING = replace(ENGLISH, snippet="Harbour pilot boarding moved to the Brackenholt quay at 05:30.")
_TEXTS = {
    "english": ENGLISH,
    "snippet-matching": SNIPPET_MATCHING,
    "thai": THAI,
    "thai-full-stop": THAI_FULL_STOP,
    "chinese": CHINESE,
    "chinese-apart": CHINESE_APART,
    "stop-words": STOP_WORDS,
    "one-word": ONE_WORD,
    "operators": OPERATORS,
    "list-item": LIST_ITEM,
    "run-on": RUN_ON,
    "thai-paragraph": THAI_PARAGRAPH,
    "chinese-paragraph": CHINESE_PARAGRAPH,
    "thai-sentence": THAI_SENTENCE,
}

# A batch of two queries, one result each: the harbour office's page answers the first query and also
# carries, as a visitors' note forty paragraphs further down (so a passage window around the first answer
# never reaches it), the sentence answering the second. Each query's passages match that query
# (seed 002: passages that match the query; results returned separated by query): the first query never
# cites the ferry fare, the second gets it.
BATCH_QUERIES = ("harbour pilot boarding time", "lumen bay ferry adult fare")
BATCH_PAGES = (
    ("https://harbour-office.example.org/notices", "Harbour office notices", "Notices from the harbour office.",
     "# Notices\n\nHarbour pilot boarding time is 06:00 at the outer anchorage.\n\n"
     + "".join(ENGLISH.filler.format(i=i) + "\n\n" for i in range(40))
     + "Visitors note: the Lumen Bay ferry adult fare is $12.50 one way.\n"),
    ("https://lumen-ferries.example.com/fares", "Lumen Bay ferries", "Ferry services of Lumen Bay.",
     "# Fares\n\nThe Lumen Bay ferry adult fare is $12.50 one way.\n"),
)  # fmt: skip
OWN_QUERY = (
    Case(
        "batch-own-query",
        "every query's page passages chosen against another query of the batch (the last one, or the whole batch "
        "joined into one; or the first): the first query cites the ferry-fare sentence of its page, or the second "
        "gets no fare",
        {"queries": BATCH_QUERIES, "facts": ("outer anchorage", "12.50"), "absent": ("12.50", "")},
    ),
)

# From a hunt (S3-3): no row had a page fail beside a page that loads, so a pipeline that gathered a query's page
# fetches all or nothing (one Fetch API 404 or 500 cost the query every page it read, leaving it the snippet
# fallback) certified. One query, two results: the first's page loads and holds the fact (its snippet does not),
# the second's page fails to load. Judged only when the loaded page was fetched (a pipeline may read fewer pages).
FAILED_BESIDE_QUERY = "harbour pilot boarding"
BESIDE_PAGE = "https://pilot-office.example.org/boarding-times"
BESIDE_FAILED = (
    Case("beside-a-404", "one page of the query failing to load (a Fetch API 404) throws away its other, fetched "
         "pages: the fact the loaded page holds never reaches the evidence (only its snippet, or [needs_retry])",
         {"status": 404, "failing": "https://pilot-notices.example.net/boarding"}),
    Case("beside-a-500", "the same with a Fetch API 500 (an unresolvable host, seed 001): the loaded page's fact "
         "lost with the failed page", {"status": 500, "failing": "https://pilot-bulletin.example.com/boarding"}),
)


async def _beside_failed(ctx: CheckContext, case: Case) -> None:
    ctx.fresh()
    texts = ENGLISH
    failing = case["failing"]
    script(ctx, FAILED_BESIDE_QUERY, [row(BESIDE_PAGE, texts.title, texts.snippet),
                                      row(failing, "Harbour pilot boarding notices", "Pilot boarding notices.")])
    serve_page(ctx, BESIDE_PAGE, texts.title, _page(texts, 6))
    ctx.emu.inject("fetch", Status(case["status"]), times=None,
                   when=lambda body: isinstance(body, dict) and body.get("url") == failing)
    outcome = await _evidence(ctx, FAILED_BESIDE_QUERY, {"id": f"passages-{case.name}", "local_names": []})
    value = expect_success(outcome, case.name)
    await ctx.settle()
    cited = [str(e.get("text", "")) for g in value.get("queries", []) for e in g.get("evidence", [])
             if isinstance(e, dict) and e.get("url") == BESIDE_PAGE]  # fmt: skip
    # Only a page the pipeline fetched is judged: how many of a query's pages it reads is its own (a review's false
    # failure: a pipeline reading one page per query, its best-ranked the failing one, falling back to its snippet).
    read = any(isinstance(r.json, dict) and r.json.get("url") == BESIDE_PAGE for r in ctx.records("fetch"))
    require(not read or texts.fact in " ".join(cited), f"{case.name}: {BESIDE_PAGE} loaded and holds the query's "
            f"passage ({texts.fact!r}), but no line citing it shows it (the other result's page failed with HTTP "
            f"{case['status']})", evidence=cited, catches=case.catches, text=(outcome.text or "")[:800])


@check(
    "evidence.passages",
    "A fetched page yields its query-matching passage, never the whole page nor only its snippet",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: a page fetched successfully is not sent to the model whole; code reduces it to short "
    "text matching the query; the search snippet is the fallback only when the page cannot be fetched "
    "or has no usable passage; the results of a batch come back separated by query (each query's passages "
    "match that query). A passage is the page's own text: a cut never splits a character (no U+FFFD the page "
    "does not hold). A page that failed to load is that page's failure alone: another result's page of the same "
    "query that was fetched successfully still yields its passage (the snippet is the fallback only for the page "
    "that could not be fetched).",
    cases=(*PASSAGES, *OWN_QUERY, *BESIDE_FAILED),
)
async def passages(ctx: CheckContext) -> None:
    for case in PASSAGES:
        ctx.fresh()
        texts = _TEXTS[case["texts"]]
        page = _page(texts, case["fillers"])
        script(ctx, texts.query, [row(PAGE_URL, texts.title, texts.snippet)])
        serve_page(ctx, PAGE_URL, texts.title, page)
        outcome = await _evidence(ctx, texts.query, {"id": f"passages-{case.name}", "local_names": []})
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
            texts.fact in shown or (case.params.get("any_cut") and bool(cited)),
            f"{case.name}: the page's query-matching passage is not in its evidence",
            evidence=cited,
            catches=case.catches,
        )
        require(
            texts.opening_word not in (outcome.text or "") and texts.opening_word not in shown,
            f"{case.name}: the page's unrelated opening paragraph reached the evidence",
            catches=case.catches,
        )
        require(
            len(shown) <= len(page) // 4,
            f"{case.name}: {len(shown)} characters of evidence from a {len(page)}-character page",
            catches=case.catches,
        )
        never = case.params.get("never")
        require(
            not never or (never not in (outcome.text or "") and never not in shown),
            f"{case.name}: the search snippet ({never!r}) reached the evidence although the page had a matching "
            "passage",
            evidence=cited,
            catches=case.catches,
        )
        # From an outside hunt: a passage cut at a byte count inside a character shows U+FFFD, no page's text.
        require(
            "\ufffd" not in shown and "\ufffd" not in (outcome.text or ""),
            f"{case.name}: the evidence shows U+FFFD, which the page does not hold (a cut inside a character)",
            evidence=cited,
            catches=case.catches,
        )
    for case in BESIDE_FAILED:
        await _beside_failed(ctx, case)
    for case in OWN_QUERY:
        ctx.fresh()
        for query, (url, title, snippet, content) in zip(case["queries"], BATCH_PAGES, strict=True):
            script(ctx, query, [row(url, title, snippet)])
            serve_page(ctx, url, title, content)
        outcome = await _evidence(ctx, list(case["queries"]), {"id": f"passages-{case.name}", "local_names": []})
        value = expect_success(outcome, case.name)
        await ctx.settle()
        groups = [g for g in value.get("queries", []) if isinstance(g, dict)]
        wanted = zip(case["queries"], case["facts"], case["absent"], strict=True)
        for number, (query, fact, absent) in enumerate(wanted, 1):
            lines = [
                str(e.get("text", ""))
                for g in groups
                if g.get("query") == query
                for e in g.get("evidence", [])
                if isinstance(e, dict)
            ]
            shown = " ".join(lines)
            require(
                fact in shown,
                f"{case.name}: query {number} ({query!r}) has no evidence holding {fact!r}",
                evidence=lines,
                catches=case.catches,
            )
            require(
                not absent or absent not in shown,
                f"{case.name}: query {number} ({query!r}) cites {absent!r}, which answers another query of the batch",
                evidence=lines,
                catches=case.catches,
            )
