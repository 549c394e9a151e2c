"""The evidence pipeline fetching the emulator's pages (emulator/pages.py) with the real ``http``
provider and its shipped strict policy: names resolve through the certification sandbox to a
public-looking address that is dialled on the emulator's loopback port."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from syrupy.assertion import SnapshotAssertion

from dsweb_ref import WebService
from dsweb_ref.certification.sandbox import SandboxNetwork
from dsweb_ref.emulator import Emulator
from dsweb_ref.emulator.corpus import PAGE_DOCUMENTS
from dsweb_ref.emulator.pages import PAGES
from dsweb_ref.emulator.search import search as search_corpus
from dsweb_ref.emulator.server import DEFAULT_API_KEY
from dsweb_ref.providers.http_fetch import HttpFetchConfig, HttpFetchProvider
from dsweb_ref.replay._bases import credential_environ, settings_for_bases
from dsweb_ref.runtime import build_runtime
from dsweb_ref.schemas import validate
from dsweb_ref.tools.evidence_search import EvidenceSearchTool, EvidenceSettings

from ._fakes import TableSearch, src

PUBLIC = "93.184.215.14"


def tool_over(emulator: Emulator, results: dict[str, tuple[object, ...]]) -> EvidenceSearchTool:
    hosts = ("th.pages.test", "tides.pages.test", "hop.pages.test", "bad.pages.test")
    network = SandboxNetwork({h: [[PUBLIC]] for h in hosts}, {PUBLIC: emulator.port})
    web = WebService()
    web.register_fetch(
        HttpFetchProvider(HttpFetchConfig(timeout_s=10), resolver=network.resolver(), dialer=network.dialer())
    )
    web.register_search(TableSearch(results))  # type: ignore[arg-type]
    return EvidenceSearchTool(web, EvidenceSettings(max_pages=8, max_per_domain=8))


def test_thai_boilerplate_and_redirect_pages_give_clean_passages(
    emulator: Emulator, snapshot_text: SnapshotAssertion
) -> None:
    results = {
        "ราคาทองคำวันนี้": (
            src("http://hop.pages.test/pages/redirect/gold", "ราคาทองคำ (ลิงก์เก่า)", "ราคาทองคำ"),
            src("http://th.pages.test/pages/th/gold", "ราคาทองคำวันนี้", "ราคาทองคำวันนี้"),
        ),
        "spring tides": (src("http://tides.pages.test/pages/en/spring-tides", "Spring tides"),),
    }
    result = asyncio.run(tool_over(emulator, results).execute({"query": ["ราคาทองคำวันนี้", "spring tides"]}))
    assert result.value is not None and validate("evidence_search.output", result.value) == []
    for furniture in ("tracking", "color:gold", "หน้าแรก", "ลิขสิทธิ์", "ย้อนหลัง", "cookies", "menu", "Popular", "Related"):
        assert furniture not in result.text
    assert result.text == snapshot_text
    paths = [r.path for r in emulator.log.records()]
    assert "/pages/redirect/gold" in paths and paths.count("/pages/th/gold") >= 1  # the redirect was followed


def test_private_redirects_and_hostile_pages_fall_back_without_raw_errors(emulator: Emulator) -> None:
    hostile = ["deep", "huge-line", "binary", "utf7", "control", "bad-utf8"]
    pages = [
        src(f"http://bad.pages.test/pages/hostile/{name}", f"tides data {name}", f"tides data from {name}")
        for name in hostile
    ]
    sources = (
        *pages,
        src("http://hop.pages.test/pages/redirect/private", "tides data private", "tides data private"),
        src("http://hop.pages.test/pages/redirect/metadata", "tides data metadata", "tides data metadata"),
    )
    result = asyncio.run(tool_over(emulator, {"tides data": sources}).execute({"query": "tides data"}))
    assert result.error_code is None and result.value is not None
    assert validate("evidence_search.output", result.value) == []
    group = result.value["queries"][0]
    by_url = {line["url"].rsplit("/", 1)[-1]: line["from"] for line in group["evidence"]}
    # Refused redirects are never cited (not even by their snippets) and keep their reason; unreadable
    # pages keep their snippets; readable hostile pages give passages.
    assert "private" not in by_url and "metadata" not in by_url
    dropped = {d["url"].rsplit("/", 1)[-1] for d in group["tried"]["dropped"]}
    assert dropped == {"private", "metadata"}
    # Readable hostile pages give passages, so the unreadable ones' snippets are not needed.
    assert by_url and set(by_url.values()) == {"page"} and set(by_url) <= {"control", "bad-utf8", "deep"}
    assert group["tried"]["fetch_failed"] >= 2  # binary and utf-7: unreadable, a clear failure each
    assert "\x00" not in result.text and "\u202e" not in result.text and "\x1b" not in result.text
    result.text.encode("utf-8")
    assert not [r for r in emulator.log.records() if r.path.startswith("/latest")]  # metadata never asked


def test_the_site_pages_test_family_lists_exactly_the_pages_the_emulator_serves() -> None:
    listed = search_corpus("site:pages.test spring tides", 10) + search_corpus("site:pages.test ราคาทองคำวันนี้", 10)
    assert {h.document.url for h in listed} == {d.url for d in PAGE_DOCUMENTS}
    for document in PAGE_DOCUMENTS:
        assert urlsplit(document.url).path in PAGES, document.url  # every result points at a served page
        assert (urlsplit(document.url).hostname or "").endswith(".pages.test")
    # Without site:pages.test the corpus answers as before: no served page among its results.
    assert search_corpus("spring tides", 10) and not any(
        "pages.test" in h.document.url for h in search_corpus("spring tides", 10)
    )


def test_evidence_over_emulator_search_and_its_own_pages_through_test_mode_resolution(
    emulator: Emulator, snapshot_text: SnapshotAssertion
) -> None:
    """Messages search finds the served pages; the strict ``http`` fetcher reaches them only because
    test-mode resolution dials ``*.pages.test`` on the emulator's port (its policy is as shipped)."""
    hosts = {urlsplit(d.url).hostname or "" for d in PAGE_DOCUMENTS}
    network = SandboxNetwork({h: [[PUBLIC]] for h in hosts}, {PUBLIC: emulator.port})
    http = HttpFetchProvider(HttpFetchConfig(timeout_s=10), resolver=network.resolver(), dialer=network.dialer())
    settings = settings_for_bases(emulator.messages_base, emulator.tools_base, new_api=False)
    runtime = build_runtime(lambda: settings, environ=credential_environ(DEFAULT_API_KEY), http_fetch=http)
    queries = ["site:pages.test ราคาทองคำวันนี้", "site:pages.test spring tides"]
    result = asyncio.run(runtime.evidence_tool().execute({"query": queries}))
    assert result.error_code is None and result.value is not None
    assert validate("evidence_search.output", result.value) == []
    paths = [r.path for r in emulator.log.records()]
    assert "/pages/th/gold" in paths and "/pages/en/spring-tides" in paths  # fetched over real HTTP
    assert "/pages/redirect/gold" in paths and "/pages/hostile/binary" in paths
    for furniture in ("tracking", "หน้าแรก", "ลิขสิทธิ์", "cookies", "Popular", "\x1b", "\u202e"):
        assert furniture not in result.text
    assert result.text == snapshot_text
