"""The emulator's built-in documents: a small, fixed web under fake ``*.example.test`` hosts.

Every answer the emulator gives is derived from this table, so it must stay deterministic: no
clocks, no randomness. Changing a document changes snapshots and cassettes downstream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import unquote, urlsplit

__all__ = ["DOCUMENTS", "PAGES_SITE", "PAGE_DOCUMENTS", "Document", "FetchOutcome", "find_document", "normalize_url"]

FetchOutcome = Literal["page", "refused", "unreadable"]


@dataclass(frozen=True, slots=True)
class Document:
    url: str
    title: str
    site_name: str
    lang: str
    date: str | None  # ISO-8601 with offset, as the Search API returns it
    authority: int  # -1 (unknown) .. 4
    quality: float  # 0 .. 1.5; the query-independent part of rerank_score
    snippet: str
    body: tuple[str, ...]  # Markdown paragraphs
    fetch: FetchOutcome = "page"
    indexed: bool = True  # False: reachable by Fetch only
    # Derived once at construction: every search answer reads them (no URL parsing per request).
    _host: str = field(init=False, repr=False, compare=False)
    _summary: str = field(init=False, repr=False, compare=False)
    _content: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        summary = " ".join([self.snippet, *(_plain(p) for p in self.body)])
        heading = f"# {self.title}\n\n" if self.title else ""
        object.__setattr__(self, "_host", urlsplit(self.url).hostname or "")
        object.__setattr__(self, "_summary", summary if len(summary) <= 700 else summary[:699].rstrip() + "…")
        object.__setattr__(self, "_content", heading + "\n\n".join(self.body) + "\n")

    @property
    def host(self) -> str:
        return self._host

    @property
    def site_icon(self) -> str:
        return f"https://{self._host}/favicon.ico"

    @property
    def summary(self) -> str:
        return self._summary

    @property
    def content(self) -> str:
        return self._content


def _plain(paragraph: str) -> str:
    return " ".join(line.lstrip("#-*> ").strip() for line in paragraph.splitlines() if line.strip())


def normalize_url(url: str) -> str:
    """Case-fold scheme and host, drop the fragment, and decode the path so that a
    percent-encoded and a raw non-ASCII path name the same page."""
    parts = urlsplit(url)
    path = unquote(parts.path) or "/"
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}{query}"


def find_document(url: str) -> Document | None:
    return _BY_URL.get(normalize_url(url))


DOCUMENTS: tuple[Document, ...] = (
    Document(
        url="https://docs.example.test/api/search",
        title="Search API reference",
        site_name="Example Docs",
        lang="en",
        date="2026-10-16T00:00:00+00:00",
        authority=4,
        quality=1.3,
        snippet="POST /v1/tools/search takes a query of 1 to 128 characters and returns ranked web results with "
        "snippets, summaries and rerank scores.",
        body=(
            "The Search API answers one query per request. Send `query`, and optionally `count` (1-50, default 10), "
            "`ori_question`, `localization` and `need_content`.",
            '## Operators\n\nQueries may use site:, -site:, lang:, after:, before:, -term and "exact phrase".',
            "Empty results are a success and are not billed.",
        ),
    ),
    Document(
        url="https://docs.example.test/api/fetch",
        title="Fetch API reference",
        site_name="Example Docs",
        lang="en",
        date="2026-10-16T00:00:00+00:00",
        authority=4,
        quality=1.2,
        snippet="POST /v1/tools/fetch retrieves one web page and returns its title and body as Markdown.",
        body=(
            "Send a single `url`. The page is fetched by the service, cleaned of navigation, and converted to "
            "Markdown.",
            "A page that cannot be fetched answers 404 `failed to fetch URL`; a crawler-policy refusal answers 403.",
        ),
    ),
    Document(
        url="https://docs.example.test/api/errors",
        title="Error codes and retries",
        site_name="Example Docs",
        lang="en",
        date="2026-09-30T12:00:00+00:00",
        authority=4,
        quality=1.1,
        snippet="400 invalid format, 401 authentication fails, 402 insufficient balance, 429 rate limit, 500 server "
        "error, 503 server overloaded.",
        body=(
            "Retry 408, 429 and 5xx responses after waiting; honour Retry-After when present.",
            "- 402: top up the balance first\n- other 4xx: change the request",
        ),
    ),
    Document(
        url="https://docs.example.test/api/rate-limits",
        title="Rate limits",
        site_name="Example Docs",
        lang="en",
        date="2026-11-10T08:00:00+00:00",
        authority=4,
        quality=1.0,
        snippet="Search and Fetch limits apply per account, not per key, and are independent of model concurrency.",
        body=("Requests above the account QPS limit receive HTTP 429. Fetch also limits requests per target domain.",),
    ),
    Document(
        url="https://docs.example.test/legacy/v0-search",
        title="Legacy search endpoint (deprecated)",
        site_name="Example Docs",
        lang="en",
        date="2019-01-15T00:00:00+00:00",
        authority=4,
        quality=0.2,
        snippet="The v0 search endpoint is deprecated and will be removed; migrate to the Search API.",
        body=("Deprecated since 2019. The legacy endpoint returns at most five results and no summaries.",),
    ),
    Document(
        url="https://news.example.test/2026/10/search-api-launch",
        title="Search and Fetch APIs launch with per-request pricing",
        site_name="Example News",
        lang="en",
        date="2026-10-17T09:30:00+00:00",
        authority=3,
        quality=1.0,
        snippet="The new web Search and Fetch APIs are billed per successful request; empty searches are free.",
        body=(
            "Launch coverage of the Search API and Fetch API. Pricing is per 1,000 successful requests and the "
            "result count does not change the price.",
        ),
    ),
    Document(
        url="https://news.example.test/2025/03/rust-async-runtimes",
        title="Rust async runtimes compared",
        site_name="Example News",
        lang="en",
        date="2025-03-02T14:00:00+01:00",
        authority=3,
        quality=0.9,
        snippet="Tokio, smol and embassy take different approaches to scheduling, timers and cancellation.",
        body=("A comparison of Rust async runtimes: work stealing, timer wheels and structured cancellation.",),
    ),
    Document(
        url="https://news.example.test/2026/01/spring-tides",
        title="Spring tides follow the new moon",
        site_name="Example News",
        lang="en",
        date="2026-01-29T06:00:00+00:00",
        authority=3,
        quality=0.8,
        snippet="Coastal towns expect unusually high spring tides this week as the new moon aligns with the sun.",
        body=("Tide tables show the highest water two days after the new moon.",),
    ),
    Document(
        url="https://news.example.test/2024/12/zurich-cafe-culture",
        title="Zürich's café culture, one espresso at a time",
        site_name="Example News",
        lang="en",
        date="2024-12-05T10:00:00+01:00",
        authority=2,
        quality=0.7,
        snippet="From lakeside kiosks to roasteries, Zürich's cafés mix espresso rituals with long winter evenings.",
        body=("A tour of cafés in Zürich: espresso, roasting, and the winter Kaffeekultur.",),
    ),
    Document(
        url="https://blog.example.test/python/asyncio-cancellation",
        title="Cancelling asyncio tasks without leaking connections",
        site_name="Example Blog",
        lang="en",
        date="2025-11-20T18:00:00+00:00",
        authority=2,
        quality=1.1,
        snippet="Cancellation must close every in-flight HTTP request; a task group and async with blocks make it "
        "reliable.",
        body=(
            "When one asyncio task fails, cancel its siblings and wait for them, so that each connection is closed "
            "before the caller sees the error.",
            "```python\nasync with asyncio.TaskGroup() as tg:\n    ...\n```",
        ),
    ),
    Document(
        url="https://blog.example.test/python/httpx-timeouts",
        title="Timeouts and redirects in httpx",
        site_name="Example Blog",
        lang="en",
        date="2024-06-01T07:00:00+00:00",
        authority=2,
        quality=0.9,
        snippet="httpx does not follow redirects by default; connect, read, write and pool timeouts are separate.",
        body=("Set `follow_redirects=False` explicitly for API clients and treat 3xx answers as errors.",),
    ),
    Document(
        url="https://blog.example.test/coffee/brewing-ratios",
        title="Coffee brewing ratios explained",
        site_name="Example Blog",
        lang="en",
        date="2022-09-09T09:00:00+00:00",
        authority=1,
        quality=0.6,
        snippet="A 1:16 coffee-to-water ratio is a good start for pour-over; espresso uses closer to 1:2.",
        body=("Weigh the coffee, not the scoop. Grind finer for espresso and coarser for pour-over.",),
    ),
    Document(
        url="https://wiki.example.test/HTTP_redirect",
        title="HTTP redirect",
        site_name="Example Wiki",
        lang="en",
        date=None,
        authority=3,
        quality=1.0,
        snippet="A 3xx status with a Location header tells the client to repeat the request at another URL.",
        body=(
            "301 and 302 historically changed POST to GET; 307 and 308 keep the method and body.",
            "API clients often refuse redirects so credentials are never sent to an unexpected host.",
        ),
    ),
    Document(
        url="https://wiki.example.test/Markdown",
        title="Markdown",
        site_name="Example Wiki",
        lang="en",
        date=None,
        authority=3,
        quality=0.9,
        snippet="Markdown is a lightweight markup language for formatted text using plain-text syntax.",
        body=("Headings start with #, lists with - or *, and code spans use backticks.",),
    ),
    Document(
        url="https://wiki.example.test/Unicode_normalization",
        title="Unicode normalization",
        site_name="Example Wiki",
        lang="en",
        date=None,
        authority=3,
        quality=0.8,
        snippet="NFC composes and NFD decomposes characters, so é may be one code point or two.",
        body=("Count characters after normalization: a 128-character limit means 128 code points.",),
    ),
    Document(
        url="https://wiki.example.test/%E6%9D%B1%E4%BA%AC%E3%82%BF%E3%83%AF%E3%83%BC",
        title="東京タワー",
        site_name="Example Wiki",
        lang="ja",
        date="2025-07-01T00:00:00+09:00",
        authority=2,
        quality=0.7,
        snippet="東京タワーは東京都港区にある電波塔で、高さは333メートルです。",
        body=("東京タワーは1958年に完成した電波塔です。展望台から東京の景色を楽しめます。",),
    ),
    Document(
        url="https://forum.example.test/t/429-without-retry-after",
        title="429 Too Many Requests but no Retry-After header?",
        site_name="Example Forum",
        lang="en",
        date="2026-10-20T21:15:00+00:00",
        authority=0,
        quality=0.5,
        snippet="Our search client gets 429 responses during batches of four queries; there is no Retry-After header.",
        body=("Reply: the limit is per account, so other processes share it. Back off and retry later.",),
    ),
    Document(
        url="https://forum.example.test/t/markdown-tables",
        title="Markdown tables render wrong after fetch",
        site_name="Example Forum",
        lang="en",
        date="2021-04-04T04:04:00+00:00",
        authority=-1,
        quality=0.3,
        snippet="Fetched pages turn HTML tables into Markdown tables with escaped pipes.",
        body=("Escaped pipes such as \\| are an artifact of the HTML to Markdown conversion.",),
    ),
    Document(
        url="https://zh.example.test/deepseek/search-api",
        title="深度求索搜索接口入门",
        site_name="示例中文站",
        lang="zh",
        date="2026-10-18T10:00:00+08:00",
        authority=2,
        quality=1.0,
        snippet="搜索接口每次请求处理一个查询，返回带摘要和评分的网页结果。",
        body=("搜索接口支持 site:、lang: 等操作符。空结果表示成功，不计费。",),
    ),
    Document(
        url="https://zh.example.test/weather/shanghai",
        title="上海天气预报：本周多云转晴",
        site_name="示例中文站",
        lang="zh",
        date="2026-11-02T07:00:00+08:00",
        authority=1,
        quality=0.6,
        snippet="上海本周多云转晴，最高气温18度，周末有小雨。",
        body=("天气预报：周一多云，周三转晴，周六小雨。",),
    ),
    Document(
        url="https://shop.example.test/coffee/pour-over-kettle",
        title="Gooseneck pour-over kettle",
        site_name="Example Shop",
        lang="en",
        date="2023-02-14T12:00:00+00:00",
        authority=0,
        quality=0.4,
        snippet="A gooseneck kettle for pour-over coffee with a built-in thermometer.",
        body=("Price on request. Ships in 3-5 days.",),
    ),
    Document(
        url="https://paywall.example.test/reports/search-market-2026",
        title="Web search API market report 2026",
        site_name="Example Research",
        lang="en",
        date="2026-05-05T00:00:00+00:00",
        authority=1,
        quality=0.7,
        snippet="Market share and pricing of web search APIs for AI agents in 2026.",
        body=("Subscribers only.",),
        fetch="refused",
    ),
    Document(
        url="https://spa.example.test/dashboard",
        title="Search dashboard",
        site_name="Example App",
        lang="en",
        date=None,
        authority=-1,
        quality=0.2,
        snippet="Sign in to view your search usage dashboard.",
        body=("(rendered by JavaScript)",),
        fetch="unreadable",
    ),
    Document(
        url="https://files.example.test/notes.txt",
        title="",
        site_name="Example Files",
        lang="en",
        date=None,
        authority=-1,
        quality=0.0,
        snippet="",
        body=("Plain text notes without a title. Fetch returns an empty title for this page.",),
        indexed=False,
    ),
)

# The pages the emulator serves itself (emulator/pages.py, ``GET /pages/...``), as search results:
# a Thai article, an English one wrapped in boilerplate, redirects (one to a private address) and
# hostile pages. They are listed only for queries naming ``site:pages.test`` (emulator/search.py), so
# the answers above, and every cassette and snapshot recorded from them, stay as they are. An HTTP
# fetcher reaches them through test-mode resolution (``*.pages.test`` dialled on the emulator's
# port); the Fetch API answers them from the Markdown below, as the real service extracts a page.
PAGES_SITE = "pages.test"
_GOLD = (
    "ราคาทองคำแท่งวันนี้ขายออกบาทละ 41,000 บาท รับซื้อบาทละ 40,900 บาท ปรับขึ้นจากเมื่อวาน 200 บาท",
    "สมาคมค้าทองคำประกาศราคาทองรูปพรรณขายออกบาทละ 41,600 บาท",
)


def _page(path: str, title: str, snippet: str, body: tuple[str, ...], fetch: FetchOutcome = "page") -> Document:
    lang = "th" if any("\u0e00" <= c <= "\u0e7f" for c in title) else "en"
    return Document(
        url=f"http://{path.split('/')[2]}.{PAGES_SITE}{path}", title=title, site_name="Emulator Pages", lang=lang,
        date=None, authority=1, quality=0.6, snippet=snippet, body=body, fetch=fetch,
    )


PAGE_DOCUMENTS: tuple[Document, ...] = (
    _page("/pages/th/gold", "ราคาทองคำวันนี้", "ราคาทองคำแท่งวันนี้ขายออกบาทละ 41,000 บาท", _GOLD),
    _page("/pages/redirect/gold", "ราคาทองคำวันนี้ (ลิงก์เก่า)", "ราคาทองคำวันนี้ ย้ายไปหน้าใหม่", _GOLD),
    _page("/pages/en/spring-tides", "Spring tides", "Spring tides happen twice a month, at new and full moon.",
          ("Spring tides happen twice a month, at new moon and full moon, when the tidal range is largest.",
           "Neap tides fall between them.")),
    _page("/pages/redirect/private", "Spring tides (moved)", "Spring tides tables moved to the archive.",
          ("moved",), fetch="refused"),
    _page("/pages/hostile/control", "Spring tides data", "Spring tides data with control characters.",
          ("Spring tides \x00\x1b[31m data \u202eevil\u202c",)),
    _page("/pages/hostile/binary", "Spring tides chart", "Spring tides chart as an image.", ("",),
          fetch="unreadable"),
)

_BY_URL = {normalize_url(doc.url): doc for doc in (*DOCUMENTS, *PAGE_DOCUMENTS)}
