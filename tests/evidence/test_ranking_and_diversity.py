"""Code-only ranking (BM25 over title/snippet/summary, real tokens for unspaced scripts) and
source diversity (registrable domains from the bundled Public Suffix List)."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from dsweb_ref.tools import _evidence_rank
from dsweb_ref.tools._evidence_rank import Candidate, rank, registrable_domain, select_pages
from dsweb_ref.tools._evidence_text import tokenize
from dsweb_ref.tools.evidence_search import EvidenceSettings

from ._fakes import TableFetch, TableSearch, evidence_tool, html, src


def cand(url: str, text: str, query_index: int = 0, position: int = 0) -> Candidate:
    host = url.split("/")[2]
    return Candidate(query_index, position, url, host, text, "", text)


def test_thai_is_tokenized_into_words_not_sentences() -> None:
    tokens = tokenize("ราคาทองคำวันนี้ปรับขึ้น")
    assert "ราคา" in tokens and "ทองคำ" in tokens
    # A space-only split sees one token, so no Thai query would ever match a Thai title.
    assert "ราคาทองคำวันนี้ปรับขึ้น".split() == ["ราคาทองคำวันนี้ปรับขึ้น"]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # catches: a plain \w+ word run (Thai letters are \w), which made "bangkokไหม" one token
        ("ขายที่Bangkokไหม", ["ขาย", "ที่", "bangkok", "ไหม"]),
        ("iphone价格", ["iphone", "价格"]),  # catches: the same run-on into an unspaced script
        ("ราคาiPhone15ล่าสุด", ["ราคา", "iphone15", "ล่าสุด"]),  # catches: digits split off a Latin word
        ("café naïve", ["café", "naïve"]),  # catches: a word class narrowed to ASCII
    ],
)
def test_a_latin_word_ends_where_thai_or_an_unspaced_script_begins(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_a_thai_query_ranks_the_thai_match_first_whatever_the_provider_order() -> None:
    ranked = rank(
        "ราคาทองคำ",
        [
            cand("https://a.example/1", "ข่าวฟุตบอลวันนี้ผลการแข่งขัน", position=0),
            cand("https://b.example/2", "พยากรณ์อากาศกรุงเทพวันนี้", position=1),
            cand("https://c.example/3", "ราคาทองคำวันนี้ปรับขึ้นสองร้อยบาท", position=2),
        ],
    )
    assert ranked[0].url == "https://c.example/3"
    assert ranked[0].score > 0 and ranked[1].score == 0


def test_chinese_and_japanese_rank_by_character_bigrams() -> None:
    ranked = rank(
        "上海天气",
        [
            cand("https://a.example/1", "北京交通新闻", position=0),
            cand("https://b.example/2", "上海天气预报本周多云", 0, 1),
        ],
    )
    assert ranked[0].url == "https://b.example/2"
    ja = rank(
        "東京タワー",
        [cand("https://a.example/x", "大阪城の歴史"), cand("https://b.example/y", "東京タワーの高さ", 0, 1)],
    )
    assert ja[0].url == "https://b.example/y"


def test_bm25_reorders_the_provider_ranking_and_ties_keep_it() -> None:
    ranked = rank(
        "nvidia gross margin",
        [
            cand("https://a.example/1", "cooking pasta at home", position=0),
            cand("https://b.example/2", "nvidia gross margin rose to 75 percent", position=1),
            cand("https://c.example/3", "weather tomorrow", position=2),
            cand("https://d.example/4", "gardening tips", position=3),
        ],
    )
    assert [c.url for c in ranked] == [
        "https://b.example/2",
        "https://a.example/1",
        "https://c.example/3",
        "https://d.example/4",
    ]


def test_ranking_reads_the_summary_metadata_too() -> None:
    search = TableSearch(
        {
            "tide tables": (
                src("https://a.example/1", "Page one", "nothing here"),
                src("https://b.example/2", "Page two", "nothing here", summary="spring tide tables for the coast"),
            )
        }
    )
    fetch = TableFetch(
        {"https://b.example/2": html("https://b.example/2", "<p>The tide tables list spring tides.</p>")}
    )
    tool = evidence_tool(search, fetch, EvidenceSettings(max_pages=1))
    value = asyncio.run(tool.run({"query": "tide tables"}))
    assert fetch.calls == ["https://b.example/2"]
    assert value["queries"][0]["evidence"][0]["url"] == "https://b.example/2"


def test_registrable_domains_come_from_the_public_suffix_list() -> None:
    assert registrable_domain("news.bbc.co.uk") == "bbc.co.uk"
    assert registrable_domain("a.b.github.io") == "b.github.io"  # a private PSL suffix
    assert registrable_domain("WWW.Example.COM.") == "example.com"
    assert registrable_domain("93.184.215.14") == "93.184.215.14"
    assert registrable_domain("[2606:4700::1111]") == "2606:4700::1111"


def test_the_bundled_suffix_list_needs_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the Public Suffix List must not be downloaded")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    _evidence_rank._psl.cache_clear()
    assert registrable_domain("www.city.kawasaki.jp") == "city.kawasaki.jp"


def test_one_domain_does_not_dominate_while_others_have_pages() -> None:
    big = [cand(f"https://s{i}.big.example/p", "x", position=i) for i in range(6)]
    other = [cand("https://one.example/p", "x", position=6), cand("https://two.example/p", "x", position=7)]
    picked = select_pages([big + other], max_pages=4, max_per_domain=2)
    assert [c.url for c in picked] == [
        "https://s0.big.example/p",
        "https://s1.big.example/p",
        "https://one.example/p",
        "https://two.example/p",
    ]


def test_the_domain_cap_gives_way_when_no_other_domain_is_left() -> None:
    only = [cand(f"https://big.example/{i}", "x", position=i) for i in range(5)]
    picked = select_pages([only], max_pages=4, max_per_domain=2)
    assert len(picked) == 4


def test_every_query_in_a_batch_keeps_a_source() -> None:
    strong = [cand(f"https://strong{i}.example/", "x", 0, i) for i in range(8)]
    weak = [[cand(f"https://q{q}.example/", "x", q, 0)] for q in (1, 2, 3)]
    picked = select_pages([strong, *weak], max_pages=4, max_per_domain=2)
    assert sorted(c.query_index for c in picked) == [0, 1, 2, 3]
    # Even when every query points at the same crowded domain.
    same = [[cand(f"https://big.example/{q}-{i}", "x", q, i) for i in range(3)] for q in range(4)]
    picked = select_pages(same, max_pages=4, max_per_domain=1)
    assert sorted(c.query_index for c in picked) == [0, 1, 2, 3]


def test_a_url_shared_by_two_queries_is_fetched_once() -> None:
    shared = "https://shared.example/page"
    picked = select_pages([[cand(shared, "x", 0)], [cand(shared, "x", 1)]], max_pages=4, max_per_domain=2)
    assert [c.url for c in picked] == [shared]


def test_the_pipeline_fetches_at_most_max_pages() -> None:
    sources = tuple(src(f"https://site{i}.example/", f"gold price {i}", "gold price today") for i in range(8))
    pages = {s.url: html(s.url, "<p>The gold price today is 2,400 dollars.</p>") for s in sources}
    fetch = TableFetch(pages)
    tool = evidence_tool(TableSearch({"gold price": sources}), fetch, EvidenceSettings(max_pages=3))
    asyncio.run(tool.run({"query": "gold price"}))
    assert len(fetch.calls) == 3
