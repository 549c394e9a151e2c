"""Web pages the emulator serves for fetchers under test (``GET /pages/...``): a Thai article, an
article wrapped in boilerplate, same-origin and private redirects, and hostile pages.

The evidence pipeline's tests reach them through the certification sandbox (a name resolves to a
public-looking address that is dialled on the emulator's loopback port), so the fetcher runs with
its shipped address policy. Every page is fixed bytes: same request, same answer. The route needs
no credential and takes no fault, like a public web page.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .quality import QUALITY_PAGES

__all__ = ["PAGES", "Page", "routes"]

HTML = "text/html; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Page:
    body: bytes = b""
    content_type: str = HTML
    status: int = 200
    location: str | None = None


_THAI = """<!doctype html><html lang="th"><head><meta charset="utf-8"><title>ราคาทองคำวันนี้</title>
<script>window.ราคาทองคำ = "tracking";</script><style>.ราคาทองคำ{color:gold}</style></head><body>
<nav><a href="/">หน้าแรก</a> <a href="/gold">ราคาทองคำ</a> <a href="/news">ข่าว</a></nav>
<header>ข่าวเศรษฐกิจ ราคาทองคำ อัปเดตทุกวัน</header>
<main><article><h1>ราคาทองคำวันนี้</h1>
<p>ข่าวกีฬาประจำวัน ทีมชาติไทยชนะการแข่งขัน</p>
<p>ราคาทองคำแท่งวันนี้ขายออกบาทละ 41,000 บาท รับซื้อบาทละ 40,900 บาท ปรับขึ้นจากเมื่อวาน 200 บาท</p>
<p>สมาคมค้าทองคำประกาศราคาทองรูปพรรณขายออกบาทละ 41,600 บาท</p>
</article></main>
<aside>ราคาทองคำย้อนหลัง 30 วัน</aside>
<footer>ราคาทองคำ © 2569 สงวนลิขสิทธิ์</footer></body></html>"""

_BOILERPLATE = """<!doctype html><html><head><title>Spring tides</title></head><body>
<div class="cookie-banner">We use cookies about spring tides. Accept all cookies.</div>
<div id="nav">Home | Tides | Spring tides | Contact</div>
<div role="navigation">Spring tides menu</div>
<div class="content"><h1>Spring tides</h1>
<p>Spring tides happen twice a month, at new moon and full moon, when the tidal range is largest.</p>
<p>Neap tides fall between them.</p></div>
<div class="sidebar">Popular: spring tides calendar</div>
<div class="related">Related: spring tides in Brest</div>
<footer>Copyright spring tides inc.</footer></body></html>"""

_DEEP = "<div>" * 15_000 + "<p>deep page tides data</p>" + "</div>" * 15_000  # under the 100k character cap

PAGES: dict[str, Page] = {
    "/pages/th/gold": Page(_THAI.encode()),
    "/pages/en/spring-tides": Page(_BOILERPLATE.encode()),
    "/pages/redirect/gold": Page(status=301, location="/pages/th/gold"),
    "/pages/redirect/private": Page(status=302, location="http://10.0.0.7/pages/th/gold"),
    "/pages/redirect/metadata": Page(status=307, location="http://169.254.169.254/latest/meta-data/"),
    "/pages/hostile/deep": Page(_DEEP.encode()),
    "/pages/hostile/huge-line": Page(("tides " + "x" * 2_000_000).encode(), "text/plain; charset=utf-8"),
    "/pages/hostile/binary": Page(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64, "application/octet-stream"),
    "/pages/hostile/utf7": Page(b"+ADw-script+AD4-tides", "text/html; charset=utf-7"),
    "/pages/hostile/control": Page("<p>tides \x00\x1b[31m data \u202eevil\u202c</p>".encode(), HTML),
    "/pages/hostile/bad-utf8": Page(b"<p>tides data \xff\xfe\xc3 broken</p>", HTML),
}


async def _page(request: Request) -> Response:
    page = PAGES.get(request.url.path)
    if page is None and request.url.path in QUALITY_PAGES:  # the evidence quality corpus (quality.py)
        page = Page(QUALITY_PAGES[request.url.path])
    if page is None:
        return Response(b"no such page", 404, media_type="text/plain")
    headers = {"Location": page.location} if page.location is not None else None
    return Response(page.body, page.status, headers=headers, media_type=page.content_type)


def routes() -> list[Route]:
    return [Route("/pages/{rest:path}", _page, methods=["GET"])]
