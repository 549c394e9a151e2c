"""The evidence pipeline over the real ``http`` fetch provider and netguard, on loopback.

The default address policy stays strict: DNS is simulated with public-looking answers and the
certification suite's sandbox dialer maps each vetted public address to a loopback test server.
Anything that resolves to a non-public address is refused before dialling, so the listener on
127.0.0.2 counts every guard failure."""

from __future__ import annotations

import asyncio

from netguard._servers import FakeDNS, Listener, LocalServer, reply

from dsweb_ref import WebService
from dsweb_ref.certification.sandbox import SandboxDialer
from dsweb_ref.providers.http_fetch import HttpFetchConfig, HttpFetchProvider
from dsweb_ref.tools.evidence_search import EvidenceSearchTool

from ._fakes import TableSearch, src

THAI = (
    "<html><body><nav>หน้าแรก ราคาทองคำ</nav>"
    "<p>ราคาทองคำแท่งวันนี้ขายออกบาทละ 41,000 บาท</p><footer>ราคาทองคำ ลิขสิทธิ์</footer></body></html>"
)


def test_pages_are_fetched_through_netguard_and_private_targets_never_reached(
    server: LocalServer, private_listener: Listener
) -> None:
    server.routes["/gold"] = lambda h: reply(h, 200, THAI.encode(), content_type="text/html; charset=utf-8")
    server.routes["/old-gold"] = lambda h: reply(h, 301, headers={"Location": "/gold"})
    server.routes["/to-private"] = lambda h: reply(
        h, 302, headers={"Location": f"http://127.0.0.2:{private_listener.port}/"}
    )
    dns = FakeDNS(
        {
            "th.example": ["93.184.215.14"],
            "mirror.example": ["93.184.215.15"],
            "rebind.example": ["93.184.215.16", "10.0.0.7"],  # one private answer refuses the host
            "inside.example": ["127.0.0.2"],
        }
    )
    dialer = SandboxDialer({"93.184.215.14": server.port, "93.184.215.15": server.port})
    web = WebService()
    web.register_fetch(HttpFetchProvider(HttpFetchConfig(timeout_s=5), resolver=dns, dialer=dialer))
    port = server.port
    results = (
        src(f"http://th.example:{port}/old-gold", "ราคาทองคำ", "ราคาทองคำวันนี้ตามสมาคม"),
        src(f"http://mirror.example:{port}/to-private", "ราคาทองคำ mirror", "ราคาทองคำวันนี้ mirror"),
        src(f"http://rebind.example:{private_listener.port}/", "ราคาทองคำ rebind", "ราคาทองคำวันนี้ rebind"),
        src(f"http://inside.example:{private_listener.port}/", "ราคาทองคำ inside", "ราคาทองคำวันนี้ inside"),
        src(f"http://127.0.0.2:{private_listener.port}/", "ราคาทองคำ literal", "ราคาทองคำ literal"),
    )
    web.register_search(TableSearch({"ราคาทองคำวันนี้": results}))
    value = asyncio.run(EvidenceSearchTool(web).run({"query": "ราคาทองคำวันนี้"}))
    group = value["queries"][0]
    page_lines = [line for line in group["evidence"] if line["from"] == "page"]
    assert page_lines == [
        {
            "url": f"http://th.example:{port}/old-gold",
            "title": "ราคาทองคำ",
            "text": "ราคาทองคำแท่งวันนี้ขายออกบาทละ 41,000 บาท",
            "from": "page",
        }
    ]
    # A URL refused anywhere (literal address before fetching; private DNS answer, rebinding or a
    # private redirect at fetch) is never cited, not even by its snippet; each keeps its reason.
    assert [line["url"] for line in group["evidence"]] == [f"http://th.example:{port}/old-gold"]
    dropped = {d["url"]: d["reason"] for d in group["tried"]["dropped"]}
    assert set(dropped) == {
        f"http://127.0.0.2:{private_listener.port}/",
        f"http://mirror.example:{port}/to-private",
        f"http://rebind.example:{private_listener.port}/",
        f"http://inside.example:{private_listener.port}/",
    }
    assert all(reason for reason in dropped.values())
    assert group["tried"]["fetch_failed"] == 0
    assert value["sources"] == [{"url": f"http://th.example:{port}/old-gold", "title": "ราคาทองคำ"}]
    assert private_listener.connections() == 0
    assert set(dialer.dialled) <= {"93.184.215.14", "93.184.215.15"}
