"""Source diversity of the evidence pipeline (seed 002), over scripted Search API answers.

Seed 002 decides: the pipeline does not trust the search engine's ranking alone; it picks sources
with good relevance that do not crowd into one domain without need; it fetches a bounded number of
pages; and a batch of four queries can keep at least one source per query when that is fitting.
It fixes neither the page bound, the results read per query, nor a per-domain number, so the check
enforces only:

* every query of a batch whose search returned a usable result (a valid public URL whose title and
  snippet carry the query's words) keeps at least one source of its own: an evidence line citing one
  of its results, or, where none of its results can be read, one of them picked for reading (sent to the
  Fetch API); also when another query's search failed (or the call fails with a ``WEB_*`` error: seed 001
  says the tool fails the batch if one query fails). The floor rows (only-source, full-site, taken-top,
  failed-search) and the page two queries both found serve readable pages with a passage answering the
  query, so there each query must cite one (a fetch alone cannot tell a page dropped from one that could not
  be read). Where a row is about the snippet fallback itself (queries naming a place, whose pages answer
  404), a call that takes snippets as evidence at all must give each such query a line of its own;
* one registrable domain (Public Suffix List: ``news.bbc.co.uk`` and ``BBC.co.uk`` are one site,
  ``alice.github.io`` and ``bob.github.io`` two) holds more than half of the pages a call used
  (fetched or cited, two or more) only when every other registrable domain the searches returned
  got a page too; each query's own page on that domain (one a query: its floor) is left out of that
  count, since the floor of one source per query is the need that may crowd a small page bound; a
  domain whose pages are on http:// and https:// is still one domain, so it takes no more pages than it
  does with all its pages on https:// (the same call made again to compare); so is a host written with and
  without its final dot (an IP address too, which is a site of its own).

The Fetch API knows none of the other rows' pages (it answers 404), so their evidence can come only from
snippets, which seed 002 allows, not requires, as the fallback ("by policy"); what is judged is which
results the call picked. The scripted Search API answers honour each request's ``count`` (seed 001), and
the crowded rows' shorter answers keep two of the crowd and then other sites, so a target reading fewer
results a query is judged on what it asked for. Those rows have four queries, so three results a query
offer more pages than a page bound of eight reads; where a target used every result it asked for, the row
notes that the share was not judged.

The page bound itself (seed 002: "normally it selects evidence pages, bounded", and its stages "source diversity
selection -> fetch selected pages") is judged by one row whose engine lists 45 results a query, far more than any
page bound reads, whatever count a request asks for (an engine may answer more than the count; seed 000's tool cuts
such an answer to its cap): the call sends fewer Fetch API requests than the results the engine offered. How many
pages, and how many results a query it asks for and keeps, stay the target's own: a target that keeps only its
count reads at most four times its count, which is a bound, so only a pipeline that keeps every result (asking for
them all, or not cutting an answer to its count) and reads every one fails.
"""

from __future__ import annotations

import functools
import ipaddress
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ...emulator import Status
from ..cases import Case
from ._base import CheckContext, check, expect_error, expect_success, require
from ._oracle import offered_urls, query_match
from ._script import Listing, Row, first, row, script, script_listing
from .evidence import REQUIRES, _evidence, serve_page

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList


@functools.cache
def _psl() -> PublicSuffixList:
    from publicsuffixlist import PublicSuffixList  # loaded with the evidence stack, not with the catalogue

    return PublicSuffixList()  # the bundled list; the oracle keeps its own, apart from the reference's


def site(url: str) -> str:
    """The registrable domain of ``url``'s host, case-folded; an IP address is a site of its own."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return _psl().privatesuffix(host) or host
    return host


def _same_page(url: str) -> str:
    """``url`` with its scheme and host case-folded: a target may cite the canonical spelling."""
    parts = urlsplit(url)
    return parts._replace(scheme=parts.scheme.lower(), netloc=parts.netloc.lower()).geturl()


def _rows(topic: str, hosts: Sequence[str], strong: bool) -> list[Row]:
    """One usable result per host; ``strong`` ones repeat the query's words (they rank first)."""
    words = f"{topic} {topic}" if strong else topic
    return [
        row(f"https://{host}/{topic.replace(' ', '-')}/{i}", f"{words} {i}", f"All about {words}, page {i}.")
        for i, host in enumerate(hosts)
    ]


def _spread(topic: str, crowd: Sequence[str], others: Sequence[str]) -> list[Row]:
    return [*_rows(topic, crowd, True), *_rows(topic, others, False)]


def _page(row_: Row, query: str) -> str:
    """A readable page for a result of ``query``: a passage naming every word of the query."""
    url, title = row_["url"], row_.get("title", query)
    return f"# {title}\n\n{query.capitalize()}: the details are on {url}, checked this week.\n"


def _readable(results: dict[str, list[Row]]) -> dict[str, str]:
    """Every result of ``results`` served as a readable page with a passage answering its query: each query then
    has lines of its own, so it keeps its source by citing one (a fetch alone cannot tell a page dropped from a
    page that could not be read)."""
    return {r["url"]: _page(r, query) for query, rows in results.items() for r in rows}


_ONLY_SOURCE = {
    "harbour tide tables": _rows("harbour tide tables", [f"tides{i}.com" for i in range(8)], True),
    "harbour ferry timetable": _rows("harbour ferry timetable", [f"ferries{i}.org" for i in range(8)], True),
    "harbour parking fees": _rows("harbour parking fees", [f"parking{i}.net" for i in range(8)], True),
    "harbour lighthouse history": _rows("harbour lighthouse history", ["lighthouse-society.org"], False),
}
_SUBS = ["www", "news", "docs", "m", "shop", "blog"]
_CASE = ["WWW.Harbour-News.co.uk", "www.harbour-news.co.uk", "Www.HARBOUR-NEWS.CO.UK", "www.Harbour-news.CO.UK",
         "WWW.harbour-NEWS.co.uk", "www.harbour-news.co.UK"]


_PIER = "pier-weekly.com"  # one site the first queries' best results share
_OTHERS = [f"{name}.{tld}" for name in ("cranewatch", "dockside", "liftlog", "hoistnews") for tld in ("org", "net")]


# Three queries: the first two have their best result on one site and plenty elsewhere; the third's
# only usable result is on that site too (its floor must win over the site's share).
_FULL_SITE = {
    "pier crane rental": _spread("pier crane rental", [_PIER], _OTHERS[:4]),
    "pier crane permits": _spread("pier crane permits", [_PIER], _OTHERS[4:]),
    "pier crane history": _rows("pier crane history", [_PIER], False),
}
# The second query's best result is the first query's best page (one page answers both); the first
# query's runner-up is on that site as well.
_RENTAL = _spread("pier crane rental", [_PIER, _PIER], _OTHERS[:3])
_TAKEN = {
    "pier crane rental": _RENTAL,
    "pier crane permits": [
        row(_RENTAL[0]["url"], "pier crane permits pier crane permits", "All about pier crane permits."),
        *_rows("pier crane permits", _OTHERS[4:], False),
    ],
    "pier crane history": _rows("pier crane history", [_PIER], False),
}


# From a hunt (P-C1): two queries whose every result is a page of one site and a third whose results are on sites
# of their own. A pipeline that relaxed the site's share for a query with no result elsewhere (per query, not per
# call) took every page the bound left for that site, while the third query's other sites went unread.
_ONE_SITE = {
    "pier crane rental": _rows("pier crane rental", [_PIER] * 8, True),
    "pier crane permits": _rows("pier crane permits", [_PIER] * 8, True),
    "pier crane history": _rows("pier crane history", [f"cranes{i}.org" for i in range(8)], True),
}


# Four queries whose three best results each are pages of one site, each with one weaker result on a site of
# its own: the site's share counted per query lets every query take two of its pages, which fill the page bound.
_GAZETTE = "marina-gazette.com"
_SHARED_SITE = {
    topic: _spread(topic, [_GAZETTE] * 3, [other])
    for topic, other in (
        ("marina berth prices", "berthwatch.org"),
        ("marina fuel hours", "fueldock-notes.net"),
        ("marina boat lift rates", "boatlift-club.org"),
        ("marina winter storage", "winterstore-guide.net"),
    )
}


# From an outside hunt: two queries whose only usable result is one page that answers both (the rest share none
# of their words). Dropping a URL an earlier query of the batch returned leaves the second query with nothing.
_BOARDING = "https://pilotage.org/boarding"
# The page can be read, so each query must cite it, with or without a snippet fallback.
_BOARDING_PAGE = ("# Harbour pilot boarding\n\nHarbour pilot boarding time is 06:00 daily.\n\n"
                  "The harbour pilot boarding fee is 40 dollars a call.\n")
_ONE_PAGE = {
    query: [row(_BOARDING, "Harbour pilot boarding time and fee",
                "Harbour pilot boarding time is 06:00 and the harbour pilot boarding fee is 40 dollars."),
            *(row(f"https://festival-news{i}.com/{n}", f"Festival news {i}", f"Music and food stalls, part {i}.")
              for i in range(3))]
    for n, query in enumerate(("harbour pilot boarding time", "harbour pilot boarding fee"))
}


# Two queries naming a place (capitalised words), each with usable results on sites of its own, none of whose
# pages can be read (the Fetch API answers 404): the snippets are all that is left. The URLs (whose paths come
# from the topic) are lower-cased so that a target changing a path's case fails evidence.lines_cite_results
# ('path-case'), not this row. A third query names no place: a snippet it cites shows the call's fallback, which
# seed 002 leaves to the target's policy (a target with none cites nothing here, and keeps its sources by reading).
_NAMED = {
    topic: [{**r, "url": r["url"].lower()} for r in _rows(topic, [f"{name}{i}.{tld}" for i in range(3)], True)]
    for topic, name, tld in (("Lumen Bay ferry timetable", "lumenferry", "org"),
                             ("Gull Island lighthouse tours", "gulltours", "net"),
                             ("quay water taxi fares", "watertaxi", "org"))
}


def kept_last(rows: Sequence[Row], kept: int) -> Listing:
    """The engine's answer to a request for ``count`` results: the first ``count``, but a shorter answer keeps
    up to ``kept`` of the last rows (the results on sites other than the crowded one), after two of the crowd
    where it has room for both and one other, and leaves out the crowd's weakest instead, so a target asking
    for fewer results still sees the sites whose share the row judges."""

    def listing(count: int) -> Sequence[Row]:
        if count >= len(rows) or not kept:
            return rows[:count]
        # two of the crowd first where the answer has room for one other site: a crowd of one result a query
        # is all floors, which no reading of the share can crowd
        keep = min(kept, max(count - 2, 1)) if count > 1 else 0
        return [*rows[: count - keep], *rows[len(rows) - keep :]]

    return listing


_QUAY = ("quay opening hours", "quay fish market", "quay boat repairs", "quay night parking")


def _crowded(crowd: Sequence[str], others: Sequence[Sequence[str]]) -> dict[str, list[Row]]:
    """Four queries, each answered by ``crowd``'s hosts (turned two places further on for each query) and then
    its own ``others``: at three results a query (two of the crowd's hosts and one other site) they offer twelve
    pages, more than a page bound of eight reads, and a reading that counts the crowd's hosts apart finds new
    ones for every query but the last (six hosts: the fourth query's two are the first's)."""
    pairs = enumerate(zip(_QUAY, others, strict=True))
    return {t: _spread(t, [*crowd[2 * i :], *crowd[: 2 * i]], o) for i, (t, o) in pairs}


def _other_sites(*tlds: str) -> list[list[str]]:
    names = ("quaywatch", "portnotes", "harbourlog", "tidewire", "dockline", "pierpost", "moorings", "seawall")
    return [[f"{names[2 * i]}.{tlds[2 * i % len(tlds)]}", f"{names[2 * i + 1]}.{tlds[(2 * i + 1) % len(tlds)]}"]
            for i in range(4)]  # fmt: skip


# Two queries whose four best results each are pages of one domain, the rest on sites of their own. The
# domain's pages alternate http:// and https:// (``mixed``) or are all https:// (the same call again, to
# compare): one domain either way, so the scheme changes nothing of its share.
_NEWS = "harbour-news.com"


def _on_news(url: str) -> bool:
    # By host name, not site(): the table is built on import, and the Public Suffix List loads only with a run.
    host = urlsplit(url).hostname or ""
    return host == _NEWS or host.endswith("." + _NEWS)


def _schemes(mixed: bool) -> dict[str, list[Row]]:
    others = (("quaywatch.org", "portnotes.net", "tidewire.org"), ("harbourlog.net", "fishquay.org", "marketpier.net"))
    results = {t: _spread(t, [_NEWS] * 4, o) for t, o in zip(_QUAY[:2], others, strict=True)}
    return {
        topic: [
            {**r, "url": "http" + r["url"].removeprefix("https")} if mixed and _on_news(r["url"]) and i % 2 else r
            for i, r in enumerate(rows)
        ]
        for topic, rows in results.items()
    }


# From the seed-5 mutation draw: the same two queries, the crowded site a public IPv4 address, its pages' host
# written alternately in the absolute form (a final dot, as DNS allows) and without it, or all without it (the same
# call again, to compare): one host either way. A public suffix lookup does not know an address's final dot.
_ADDRESS = "93.184.215.14"


def _absolute(mixed: bool) -> dict[str, list[Row]]:
    others = (("quaywatch.org", "portnotes.net", "tidewire.org"), ("harbourlog.net", "fishquay.org", "marketpier.net"))
    results = {t: _spread(t, [_ADDRESS] * 4, o) for t, o in zip(_QUAY[:2], others, strict=True)}
    return {
        topic: [
            {**r, "url": r["url"].replace(f"//{_ADDRESS}/", f"//{_ADDRESS}./")} if mixed and i % 2 else r
            for i, r in enumerate(rows)
        ]
        for topic, rows in results.items()
    }


# The page bound (a table row of its own kind): four queries whose engine lists 45 usable results each, on sites of
# their own, whatever count a request asks for, each page small and answering its query.
MANY_QUERIES = ("harbour pilot fees", "harbour berth fees", "harbour crane fees", "harbour tug fees")
MANY_RESULTS = 45  # results the engine lists a query: more than any plausible page bound reads of four queries


def many_results(query: str, count: int) -> list[Row]:
    """``count`` usable results for ``query``, each on a registrable domain of its own."""
    topic = query.split()[1]
    return [row(f"https://{topic}-desk{i}.com/fees", f"{query.title()}, notice {i}",
                f"{query.capitalize()} set by the port office, notice {i}.") for i in range(count)]  # fmt: skip


DIVERSITY = (
    Case(
        "only-source",
        "pages picked by one global order with no floor per query: a query whose only usable result "
        "ranks below the others' keeps no source",
        {"results": _ONLY_SOURCE, "pages": _readable(_ONLY_SOURCE)},
    ),
    Case(
        "full-site",
        "the per-domain share applied before the floor of one source per query: a query whose only usable "
        "result is on a site the other queries already filled keeps no source",
        {"results": _FULL_SITE, "pages": _readable(_FULL_SITE)},
    ),
    Case(
        "taken-top",
        "the pass that gives each query a source stops at a query whose best page another query already "
        "took: the queries after it lose their floor to the site's share",
        {"results": _TAKEN, "pages": _readable(_TAKEN)},
    ),
    Case(
        "subdomains",
        "hosts counted instead of registrable domains: www., news., docs. ... of one site taken as six sites",
        {"results": _crowded([f"{s}.harbour-news.co.uk" for s in _SUBS], _other_sites("com", "org", "net")),
         "kept_last": 2},
    ),
    Case(
        "absolute-names",
        "a host in its absolute form (a trailing dot) looked up as written: no public suffix found, so www., "
        "news., docs. ... of one site, each written with its final dot, taken as six sites",
        {"results": _crowded([f"{s}.harbour-news.co.uk." for s in _SUBS], _other_sites("com", "org", "net")),
         "kept_last": 2},
    ),
    Case(
        "letter-case",
        "hosts compared without case folding: one host in six spellings taken as six sites",
        {"results": _crowded(_CASE, _other_sites("com", "org", "net")), "kept_last": 2},
    ),
    Case(
        "co-uk",
        "the last two labels taken as the site: every *.co.uk site lumped into 'co.uk'",
        {"results": _crowded(["harbour-news.co.uk"] * 6, _other_sites("co.uk")), "kept_last": 2},
    ),
    Case(
        "failed-search",
        "one search of the batch failing (the engine answers 500) crashing the call (no WEB_* error), or costing "
        "the other queries their sources when the call succeeds (seed 001 lets the batch fail with a WEB_* error)",
        {"results": {q: rows for q, rows in _ONLY_SOURCE.items() if q != "harbour lighthouse history"},
         "failing": ("harbour lighthouse history",), "pages": _readable(_ONLY_SOURCE)},
    ),
    Case(
        "github-io",
        "private suffixes left out of the list: every *.github.io site lumped into 'github.io'",
        {"results": _crowded(["alice.github.io"] * 6, _other_sites("github.io")), "kept_last": 2},
    ),
    Case(
        "shared-site",
        "the per-domain share counted per query, not per call: four queries whose best results share one site "
        "each take two of its pages, filling the page bound while the other sites' results go unread",
        {"results": _SHARED_SITE, "kept_last": 1},
    ),
    Case(
        "one-site-queries",
        "the per-domain share relaxed per query instead of per call: two queries whose every result is on one site "
        "each take its pages past their floors (the share waived for them), filling the page bound while the third "
        "query's results on other sites go unread",
        {"results": _ONE_SITE},
    ),
    Case(
        "one-page-two-queries",
        "a URL an earlier query of the batch returned dropped from the later queries' results (deduplicated across "
        "the batch before ranking): the second query's only usable result is gone, so it keeps no source (cites "
        "none, though the call cites the readable page for the first)",
        {"results": _ONE_PAGE, "pages": {_BOARDING: _BOARDING_PAGE}},
    ),
    Case(
        "named-queries",
        "a query's names (a place in capitalised words) checked against the pages read even when none was read: "
        "with no page to name them the query keeps no source, and its snippets are never tried (though the call "
        "cites a snippet for the query that names no place)",
        {"results": _NAMED, "snippets": True},
    ),
    Case(
        "http-and-https",
        "the per-domain share keyed by scheme and domain (the 'schemeful site'): http:// and https:// pages of one "
        "domain counted as two sources, so the domain takes twice the pages it takes when its pages share one scheme",
        {"results": _schemes(mixed=True), "one_scheme": _schemes(mixed=False), "site": _NEWS, "kept_last": 3},
    ),
    Case(
        "absolute-address",
        "the final dot stripped only where a public suffix is looked up: an IP address written with its final dot "
        "taken for another site than the same address without it, so the address takes twice the pages it takes "
        "when its pages are written one way",
        {"results": _absolute(mixed=True), "one_scheme": _absolute(mixed=False), "site": _ADDRESS, "kept_last": 3,
         "spelled": ("its host written with and without a final dot", "none written with it")},
    ),
    Case(
        "many-results",
        "no page bound (or one far above what the engine offers) in a pipeline that keeps every result (asking for "
        "the Search API's most, 50, or keeping an answer longer than its count): four queries of 45 results each "
        "read all 180 pages instead of a bounded pick",
        {"queries": MANY_QUERIES, "each": MANY_RESULTS},
    ),
)


def _fetched(ctx: CheckContext, foreign: frozenset[str] = frozenset()) -> list[str]:
    """The pages the call sent to the Fetch API, each once. A fetch of a ``foreign`` page (a result of an earlier
    case only) is not this call's: a case whose batch failed can leave fetches the target aborted before the
    emulator read them, which it then reads during this case."""
    fetched = []
    for record in ctx.records("fetch"):
        url = record.json.get("url") if isinstance(record.json, dict) else None
        if isinstance(url, str) and _same_page(url) not in foreign:
            fetched.append(url)
    return list(dict.fromkeys(fetched))


def _used(ctx: CheckContext, value: dict[str, Any], foreign: frozenset[str] = frozenset()) -> list[str]:
    """The pages the call used: sent to the Fetch API (not ``foreign``, see :func:`_fetched`) or cited, each once."""
    cited = [e.get("url") for g in value.get("queries", []) for e in g.get("evidence", []) if isinstance(e, dict)]
    return list(dict.fromkeys(u for u in (*_fetched(ctx, foreign), *cited) if isinstance(u, str)))


@check(
    "evidence.diversity",
    "Each query with a usable result keeps a source; no registrable domain dominates while another goes unused",
    seed="002",
    requires=REQUIRES,
    provider="api",
    rule="Seed 002: the pipeline picks sources with good relevance that do not crowd into one domain "
    "without need, and a batch of queries keeps at least one source per query when it has a usable one; results "
    "come back grouped by query, so a page two queries both found is each one's source (fetching it once, and "
    "listing it once in the call-wide sources, stay open). A query's source is a page picked for reading or a "
    "result its evidence cites: whether a snippet stands in for a page that cannot be read is the target's policy. "
    "It 'normally selects evidence pages, bounded' ('source diversity selection -> fetch selected pages'): a call "
    "whose searches offer far more results than any page bound reads fetches fewer pages than it was offered (the "
    "bound, and the results a query it asks for, are the target's own).",
    cases=DIVERSITY,
)
async def diversity(ctx: CheckContext) -> None:
    earlier: set[str] = set()  # the pages earlier cases' searches offered
    not_judged: dict[str, str] = {}
    for case in DIVERSITY:
        ctx.fresh()
        if "each" in case.params:  # the page bound
            earlier |= await _bounded(ctx, case)
            continue
        results: dict[str, list[Row]] = case["results"]
        offered = {_same_page(r["url"]) for rows in results.values() for r in rows}
        foreign = frozenset(earlier - offered)
        earlier |= offered
        _script_case(ctx, case, results)
        served: dict[str, str] = case.params.get("pages", {})
        for url, content in served.items():
            serve_page(ctx, url, urlsplit(url).path.strip("/") or url, content)
        failing: tuple[str, ...] = case.params.get("failing", ())
        for query in failing:
            ctx.emu.inject(ctx.search_route, Status(500), times=None, when=query_match(ctx.search_route, query))
        outcome = await _evidence(ctx, [*results, *failing], {"id": case.name, "local_names": []})
        if failing and not outcome.ok:  # seed 001: the tool may fail the batch when one of its queries fails
            expect_error(outcome, case.name)
            await ctx.settle()
            continue
        value = expect_success(outcome, case.name)
        await ctx.settle()
        groups = {g.get("query"): g for g in value.get("queries", []) if isinstance(g, dict)}
        cites = {
            query: [e.get("url") for e in groups.get(query, {}).get("evidence", []) if isinstance(e, dict)]
            for query in results
        }
        fetched = {_same_page(u) for u in _fetched(ctx, foreign)}
        # Seed 002 leaves the snippet fallback to the target's policy: where none of a query's pages can be read, a
        # row about the fallback judges citations only when the call takes snippets as evidence at all, and any
        # other row takes a page picked for reading as the query's source. A query with a readable page of its own
        # (with a passage answering it) must cite one: a fetch alone cannot tell a page dropped from a page the
        # target could not read.
        by_citation = bool(case.params.get("snippets")) and any(cites.values())
        readable = {_same_page(u) for u in served}
        for query, rows in results.items():
            own = {_same_page(r["url"]) for r in rows}
            cited = {_same_page(u) for u in cites[query] if isinstance(u, str)}
            mine = own & (cited if by_citation or own & readable else cited | fetched)
            require(mine, f"{case.name}: query {query!r} kept no source of its own", cited=cites[query],
                    fetched=sorted(own & fetched))  # fmt: skip
        used = _used(ctx, value, foreign)
        counts = _per_site(used)
        top, most = max(counts.items(), key=lambda kv: kv[1], default=("", 0))
        floors = _floors(results, [u for u in used if site(u) == top])
        asked = offered_urls(ctx.records("search"), list(results))
        answered = {_same_page(u) for urls in asked.values() for u in urls}
        left = sorted({site(u) for u in answered} - set(counts))
        if case.params.get("kept_last") and answered and answered <= {_same_page(u) for u in used}:  # a crowded row
            # every result the target asked for was used: no pick can crowd a domain while another goes unused, so
            # the row cannot show the share it exists for (its few results a query are the target's choice)
            not_judged[case.name] = "every result offered was used: the domain share not judged"
            ctx.note("not judged", not_judged)
        rest, pages = most - floors, len(used) - floors  # the pages beyond the floors
        require(
            not (most >= 2 and rest >= 1 and 2 * rest > pages and left),
            f"{case.name}: {most} of {len(used)} pages from {top} ({floors} of them its queries' floors) while "
            f"{', '.join(left)} got none",
            used=used,
        )
        if "one_scheme" in case.params:  # the same call, the domain's pages all on https://: no fewer of them
            await _same_share(ctx, case, counts.get(case["site"], 0), used)


async def _bounded(ctx: CheckContext, case: Case) -> set[str]:
    """Seed 002 fetches the pages it selected, a bounded number: a call offered far more results than any page
    bound reads sends fewer Fetch API requests than the results it was offered. Every result is usable and its
    page readable, so nothing but the bound leaves one unread. Returns the pages the engine offered."""
    queries: tuple[str, ...] = case["queries"]
    for query in queries:
        results = many_results(query, case["each"])
        # The whole list whatever count the request asks for: the target's count leaves the offer as large.
        script(ctx, query, results)
        urls = frozenset(r["url"] for r in results)
        page = {"title": query.title(), "content": f"# {query.title()}\n\n{query.capitalize()} are set by the port "
                "office each spring and paid at the harbour desk.\n"}  # fmt: skip
        ctx.emu.inject("fetch", Status(200, body=json.dumps(page).encode()), times=None,
                       when=lambda body, urls=urls: isinstance(body, dict) and body.get("url") in urls)  # fmt: skip
    outcome = await _evidence(ctx, list(queries), {"id": case.name, "local_names": []})
    expect_success(outcome, case.name)
    await ctx.settle()
    offered = {_same_page(u) for urls in offered_urls(ctx.records("search"), list(queries)).values() for u in urls}
    # Every request counts (a page fetched twice is read twice); a late fetch of an earlier case's page does not.
    fetches = [u for u in (r.json.get("url") for r in ctx.records("fetch") if isinstance(r.json, dict))
               if isinstance(u, str) and _same_page(u) in offered]  # fmt: skip
    require(offered, f"{case.name}: the searches offered no result", catches=case.catches)
    require(len(fetches) < len(offered), f"{case.name}: {len(fetches)} Fetch API requests for the {len(offered)} "
            "results the searches offered: every result read, no bounded pick of pages", catches=case.catches)
    return offered


def _script_case(ctx: CheckContext, case: Case, results: dict[str, list[Row]]) -> None:
    """Each query's scripted answer, honouring the request's count (a crowded row's shorter answer keeps its
    other sites)."""
    kept = int(case.params.get("kept_last", 0))
    for query, rows in results.items():
        script_listing(ctx, query, kept_last(rows, kept) if kept else first(rows))


def _floors(results: dict[str, list[Row]], pages: Sequence[str]) -> int:
    """How many of ``pages`` can be floors: each a result of a different query (a matching of queries to pages).
    Seed 002 keeps a source per query, so a query's own page on the crowded domain may be its floor."""
    owners = {query: {_same_page(r["url"]) for r in rows} for query, rows in results.items()}
    floor_of: dict[str, str] = {}  # page -> the query it is the floor of

    def place(query: str, seen: set[str]) -> bool:
        for page in (p for p in map(_same_page, pages) if p in owners[query] and p not in seen):
            seen.add(page)
            if page not in floor_of or place(floor_of[page], seen):
                floor_of[page] = query
                return True
        return False

    return sum(place(query, set()) for query in owners)


def _per_site(used: Sequence[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for url in used:
        counts[site(url)] = counts.get(site(url), 0) + 1
    return counts


async def _same_share(ctx: CheckContext, case: Case, mixed: int, used: Sequence[str]) -> None:
    """A domain is one source whatever the scheme of its pages (or the spelling of its host): the call with them
    on http:// and https:// takes no more of its pages than the same call with them all on https://. (The bound
    of a domain's share is the target's own; only its being the same is judged.)"""
    ctx.fresh()
    results: dict[str, list[Row]] = case["one_scheme"]
    _script_case(ctx, case, results)
    outcome = await _evidence(ctx, list(results), {"id": f"{case.name}-one-scheme", "local_names": []})
    value = expect_success(outcome, f"{case.name} (one scheme)")
    await ctx.settle()
    same = _per_site(_used(ctx, value)).get(case["site"], 0)
    spelled, one_way = case.params.get("spelled", ("its pages on http:// and https://", "them all on https://"))
    require(
        mixed <= same,
        f"{case.name}: {mixed} pages from {case['site']} with {spelled}, {same} with {one_way}",
        used=list(used),
    )
