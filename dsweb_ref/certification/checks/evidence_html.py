"""The evidence pipeline over HTML pages it fetches itself (seed 002), on the suite's test network.

Seed 002 decides: a page fetched successfully is not sent to the model whole; code reduces it to short
text that matches the query, to cut the context and the chance that boilerplate or unrelated text mixes
in; every evidence line keeps its source URL. The other evidence checks read pages through the Fetch
API, which answers Markdown; a pipeline that fetches pages itself (search through Messages, fetches by
its own fetcher) reads HTML. This check runs that route: Messages search answers one result whose URL
names a public-looking host, which the ``test_network`` (adapter protocol, ``ssrf-test-mode``) resolves
to a public address dialled to a loopback page server answering ``text/html``. No packet leaves loopback.

It fixes neither how a page is cut (sentences, list items, rows, windows) nor the wording of a line, so
each row enforces only, for one page:

* the page's query-matching fact reaches the evidence citing the page (with its row label or its
  definition term where the page gives the fact in a table row or a definition list, as
  ``evidence.table_rows`` does for Markdown), as the page's text: no tag, attribute or character
  reference, no format character splitting its words, no markup breaking a word (a table cell's
  ``pilot<wbr>boarding<wbr>@...`` is one address), and no word the page does not hold (an unprintable icon
  glyph shown, dropped or read as a space, never as text of its own);
* text that is page furniture by its markup (``script``, ``style``, ``nav``, the site ``header``,
  ``footer``, ``aside``, an element with ``role="navigation"``, ``role="banner"`` or ``role="contentinfo"``, a
  cookie consent banner named by its id, a pop-up: an open ``dialog`` or a ``role="dialog"`` ``aria-modal``
  newsletter box), or text a browser never shows (the ``hidden`` attribute, ``style="display:none"``, the
  contents of a ``template``), never reaches the evidence, though it holds the query's words: that is the
  boilerplate the seed names;
* neighbouring blocks (list items, headings, paragraphs) unrelated to the query do not ride along with
  the matching one, though none of them ends in sentence punctuation;
* a page answered with an error status (404, 403, 500) is no page "fetched successfully": its error text, though it
  holds the query's words, is never cited (the snippet may stand in, or the query says it found nothing);
* a page its reader cannot parse is read or counted unread (the snippet may stand in): it never fails the call,
  and the page of another result beside it still yields its query-matching text.

The refusal rows (a result whose host resolves privately, or whose page redirects to a private or loopback
address) enforce that the address is never dialled, for every target. That the refused result's snippet is never
cited is enforced for a target shown to follow redirects, and for every target where the host itself resolves
privately. Seed 002 validates "URL ที่จะ fetch" (the URLs to be fetched) and says "ถ้า fetch page ไม่ได้หรือไม่มี
passage ที่ใช้ได้ search snippet ยังเป็น fallback ได้ตาม policy" (a page that cannot be fetched, or has no usable
passage, may fall back to the search snippet): a fetcher that follows no redirect never fetches, so never
validates, a Location, and a redirect is for it a page it could not fetch. Whether the target follows redirects is
shown by a control, not assumed: a result whose page redirects (302) to another public page of the same origin (the
redirect every fetcher that follows any follows; the reference declines cross-origin ones as refused) holding a fact
of its own, which the result's snippet does not hold (a line showing it cites the result's URL or the page the
redirect led to: every evidence line keeps its source URL, and which of the two is the source of a page read through
a redirect the target followed and validated is open). The fact in the evidence: the target follows redirects,
so it validates each Location it is given, and a refused redirect taken for a page not fetched (its snippet cited or
listed) fails, as it always did; a Location turned down by the target's own redirect policy (one that
follows redirects within a host only, say) is such a refusal too: a fetcher that follows redirects reads
each Location as a URL to be fetched, and its policy is its redirect validation. No fact: the target follows
none, and the redirect rows accept the snippet cited (the check's notes say so). Left open: whether a
no-redirect fetcher refuses a 3xx or answers it as it came, and whether its pipeline then cites the snippet or
nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ...schemas import validate
from ..cases import Case
from ..targets import CallOutcome
from ._base import CheckContext, check, expect_success, require
from ._script import row, script
from .evidence import _ANY_SOURCE, _evidence, resource_key
from .ssrf import PUBLIC, _Handler, _Net, _network

REQUIRES = ("web_search", "messages-search", "ssrf-test-mode", "evidence-search")
HOST = "harbour-pilots.example.org"
QUERY = "harbour pilot boarding"
MATCH = "<p>Harbour pilot boarding starts at 06:00 from the outer anchorage, for vessels over 80 metres.</p>"
FACT = "outer anchorage"
# The search result's snippet holds none of the facts: only the page can carry them.
SNIPPET = "Notices and guides from the harbour office."
_TITLE = re.compile(r"<title>(.*?)</title>")
OPENING = "<p>The lighthouse keepers' choir rehearses on Thursdays in the old chapel.</p>"


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>\n'
        f"<body>\n{body}\n</body></html>\n"
    )


def _article(*blocks: str) -> str:
    return "<main><article>\n<h1>Pilotage</h1>\n" + "\n".join(blocks) + "\n</article></main>"


# Furniture by its markup, holding every word of the query (and a number, as the matching paragraph
# does), each with a word (MARKERS) no other text of the page has: that word in the evidence shows the
# furniture was read as content.
FURNITURE = {
    "script": ("<script>", "</script>",
               'var harbourPilotBoarding = "harbour pilot boarding 0600"; trackWexcombe("harbour pilot boarding");'),
    "style": ("<style>", "</style>",
              ".harbour-pilot-boarding { color: navy; } .pilot-boarding-harbour-0600 { font: 12px Quillmoor; }"),
    "nav": ("<nav>", "</nav>",
            '<a href="/">Harbour pilot boarding</a> <a href="/times">Pilot boarding times 06:00</a> '
            '<a href="/map">Harbour pilot boarding Brackenfold map</a>'),
    "header": ("<header>", "</header>",
               '<a href="/">Harbour pilot boarding service</a> <span>Harbour pilot boarding desk open 06:00 '
               "Tollinghurst</span>"),
    "footer": ("<footer>", "</footer>",
               "<p>Harbour pilot boarding office, 12 Marrowgate Quay. Harbour pilot boarding enquiries 06:00-22:00."
               "</p>"),
    "aside": ("<aside>", "</aside>",
              "<h2>Related</h2><p>Harbour pilot boarding in winter: Fennimore guide, 2 pages on pilot boarding.</p>"),
    "role-navigation": ('<div role="navigation">', "</div>",
                        '<a href="/">Harbour pilot boarding</a> '
                        '<a href="/b">Pilot boarding Oskarhaven 06:00 harbour</a>'),
    "cookie-consent": ('<div id="cookie-consent">', "</div>",
                       "<p>We use cookies on harbour pilot boarding pages: Gorsemoor analytics and 12 partners. "
                       "Accept harbour pilot boarding cookies?</p>"),
    "dialog": ("<dialog open>", "</dialog>",
               "<p>Harbour pilot boarding survey: rate harbour pilot boarding at 06:00, Pennytarn prize.</p>"),
    "role-dialog": ('<div role="dialog" aria-modal="true" class="newsletter-modal">', "</div>",
                    "<p>Harbour pilot boarding alerts: harbour pilot boarding times from 06:00 by email, Gullwick "
                    "newsletter.</p>"),
    # From the seed-3 mutation draw: a valueless attribute before the one that names the furniture.
    "valueless-attribute": ('<div data-nosnippet id="cookie-consent">', "</div>",
                            "<p>We use cookies on harbour pilot boarding pages: Thornwick analytics and 12 partners. "
                            "Accept harbour pilot boarding cookies?</p>"),
    # From an outside hunt: text the page never shows (HTML's hidden attribute).
    "hidden": ("<div hidden>", "</div>",
               "<p>Harbour pilot boarding archive: harbour pilot boarding moved to 06:00 in Ravensclough.</p>"),
    # From an outside hunt: the aside's ARIA landmark role on a div.
    "role-complementary": ('<div role="complementary">', "</div>",
                           "<h2>Related</h2><p>Harbour pilot boarding elsewhere: Wrenbury guide, harbour pilot "
                           "boarding at 06:00.</p>"),
    # From an outside hunt (seed 002: code cuts a fetched page down to short text matching the query, so that
    # boilerplate and unrelated text do not mix in). The header's and the footer's ARIA landmark roles on a div,
    # at the body's top level where each is the page's one banner or contentinfo.
    "role-banner": ('<div role="banner">', "</div>",
                    '<a href="/">Harbour pilot boarding service</a> <span>Harbour pilot boarding desk open 06:00 '
                    "Kelderby</span>"),
    "role-contentinfo": ('<div role="contentinfo">', "</div>",
                         "<p>Harbour pilot boarding office, 3 Ashcombe Wharf. Harbour pilot boarding enquiries "
                         "06:00-22:00.</p>"),
    # Text the page never shows: the hidden attribute spelled in CSS, in its plainest form (inline, no spaces,
    # lower case), and markup a template keeps for scripts to copy, never rendered where it stands.
    "display-none": ('<div style="display:none">', "</div>",
                     "<p>Harbour pilot boarding notice: harbour pilot boarding moved to 06:00 at Brindlecote.</p>"),
    "template": ("<template>", "</template>",
                 "<p>Harbour pilot boarding slot: harbour pilot boarding booked for 06:00, Mossgrave form.</p>"),
}  # fmt: skip
MARKERS = {
    "script": "Wexcombe",
    "style": "Quillmoor",
    "nav": "Brackenfold",
    "header": "Tollinghurst",
    "footer": "Marrowgate",
    "aside": "Fennimore",
    "role-navigation": "Oskarhaven",
    "cookie-consent": "Gorsemoor",
    "dialog": "Pennytarn",
    "role-dialog": "Gullwick",
    "hidden": "Ravensclough",
    "valueless-attribute": "Thornwick",
    "role-complementary": "Wrenbury",
    "role-banner": "Kelderby",
    "role-contentinfo": "Ashcombe",
    "display-none": "Brindlecote",
    "template": "Mossgrave",
}


def _with_furniture(kind: str) -> str:
    open_tag, close_tag, text = FURNITURE[kind]
    return _page("Harbour pilot boarding", f"{open_tag}{text}{close_tag}\n" + _article(OPENING, MATCH))


MARKUP_PAGE = _page(
    "Harbour pilot boarding",
    _article(
        OPENING,
        '<p>Harbour pilot boarding <strong class="time">starts at 06:00</strong> from the '
        '<a href="/anchorage" title="chart">outer anchorage</a> &amp; the tug pier.</p>',
    ),
)
# Soft hyphens (&shy;, how HTML marks where a long word may break) and a zero-width space inside the
# fact's words, a no-break space between them: its text is "outer anchorage" (any space between the words).
HYPHENATED_PAGE = _page(
    "Harbour pilot boarding",
    _article(OPENING, "<p>Harbour pilot boarding starts at 06:00 from the out&shy;er&nbsp;an&shy;chor\u200bage.</p>"),
)
# The ferry's fares, each row labelled by a header cell (th scope=row) under a header row.
TH_ROWS_PAGE = _page(
    "Lumen Bay ferry fares",
    _article(
        "<p>The Lumen Bay ferry crosses to Gull Island in forty minutes.</p>",
        "<table><thead><tr><th>Ticket</th><th>One way</th><th>Return</th></tr></thead><tbody>"
        '<tr><th scope="row">Adult</th><td>$12.50</td><td>$22.00</td></tr>'
        '<tr><th scope="row">Bicycle</th><td>$3.00</td><td>$5.00</td></tr>'
        "</tbody></table>",
    ),
)
# A table with no header row: every row a header cell (its label) and a value.
TH_NO_HEADER_PAGE = _page(
    "Lumen Bay ferry fares",
    _article(
        "<p>The Lumen Bay ferry crosses to Gull Island in forty minutes.</p>",
        "<table><tr><th>Adult fare</th><td>$12.50</td></tr><tr><th>Child fare</th><td>$6.00</td></tr></table>",
    ),
)
# From an outside hunt: a second table without a header row, after one with a header.
TWO_TABLES_PAGE = _page(
    "Lumen Bay ferry",
    _article(
        "<p>The Lumen Bay ferry crosses to Gull Island in forty minutes.</p>",
        "<table><thead><tr><th>Ticket</th><th>One way</th><th>Return</th></tr></thead><tbody>"
        "<tr><td>Adult</td><td>$12.50</td><td>$22.00</td></tr></tbody></table>",
        "<p>Timetable to Gull Island:</p>",
        "<table><tr><td>Gull Island</td><td>07:00</td><td>07:40</td></tr></table>",
    ),
)
DL_PAGE = _page(
    "Harbour pilotage",
    _article(
        OPENING,
        "<dl><dt>Pilot boarding point</dt><dd>Kestrel buoy, two miles south of the breakwater</dd>"
        "<dt>Tug hire</dt><dd>Booked through the port office</dd></dl>",
    ),
)
LIST_PAGE = _page(
    "Harbour notices",
    _article(
        "<ul><li>Museum garden flower show on Saturday</li><li>Chapel choir rehearsal in the nave</li>"
        "<li>Harbour pilot boarding from the outer anchorage</li><li>Lighthouse keepers' picnic by the dunes</li>"
        "<li>Fish market closed for repairs</li></ul>",
    ),
)
# Blocks whose text ends at their end tag, also where the next text stands loose after it (no start tag).
BLOCKS_PAGE = _page(
    "Harbour notices",
    "<main><h2>Museum garden flower show</h2><div><p>Chapel choir rehearsal in the nave</p>"
    "Harbour pilot boarding from the outer anchorage</div><div>Lighthouse keepers' picnic by the dunes</div></main>",
)

# The article marked with roles that name content (main, article), not furniture: a role's value decides, not
# its presence.
ROLES_PAGE = _page(
    "Harbour pilot boarding",
    '<div role="main"><article role="article">\n<h1>Pilotage</h1>\n' + OPENING + "\n" + MATCH + "\n</article></div>",
)

# From the seed-8 mutation draw (an audit of its judgements): the article inside containers whose attributes say
# "true" for things that do not hide them (a server-rendered app root, an expanded section), as framework pages do.
TRUE_ATTRIBUTES_PAGE = _page(
    "Harbour pilot boarding",
    '<div id="app" data-server-rendered="true"><section aria-expanded="true"><article>\n<h1>Pilotage</h1>\n'
    + OPENING + "\n" + MATCH + "\n</article></section></div>",
)

# A table row standing outside any table (stray <tr>/<td> tags, as CMS fragments leave them; a browser drops the
# tags and shows their text) before the article's matching paragraph: the page is still read.
STRAY_ROW_PAGE = _page(
    "Harbour pilot boarding",
    _article(OPENING, "<tr><td>Tide at the bar</td><td>4.2 m</td></tr>", MATCH),
)

# A line break inside a table cell (a value on two lines, as CMS tables write them) before the matching
# paragraph: the page is still read.
BR_CELL_PAGE = _page(
    "Harbour pilot boarding",
    _article(OPENING, "<table><tr><td>Tide at the bar</td><td>4.2 m<br>at high water</td></tr></table>", MATCH),
)

FURNITURE_CATCHES = {
    "script": "script text read as page text (a parser that strips tags but keeps their contents): a script "
    "holding the query's words taken for a passage",
    "style": "style sheet text read as page text: CSS class names holding the query's words taken for a passage",
    "nav": "the navigation menu (nav) read as content: its links, holding the query's words, taken for a passage",
    "header": "the site header (header) read as content: its banner, holding the query's words, taken for a passage",
    "footer": "the footer read as content: its contact line, holding the query's words, taken for a passage",
    "aside": "the aside (related links) read as content: its teaser, holding the query's words, taken for a passage",
    "role-navigation": 'furniture judged by tag name only: a menu marked role="navigation" on a div read as content',
    "cookie-consent": "a cookie consent banner (a div whose id names it) read as content: its notice, holding the "
    "query's words, taken for a passage",
    "dialog": "a pop-up read as content: a survey in an open <dialog>, holding the query's words, taken for a passage",
    "role-dialog": 'dialogs judged by tag name only: a newsletter pop-up marked role="dialog" aria-modal="true" on a '
    "div, holding the query's words, taken for a passage",
    "valueless-attribute": "an element's attributes read only up to the first one without a value "
    "(data-nosnippet): the cookie banner's id after it never seen, its notice taken for a passage",
    "hidden": "furniture judged by tags, roles and names only: an element with the hidden attribute (never shown "
    "on the page), holding the query's words, taken for a passage",
    "role-complementary": 'landmark roles partly known (navigation and dialog only): related links marked '
    'role="complementary" on a div, the aside\'s role, taken for a passage',
    "role-banner": 'landmark roles partly known (the header element known, not its role): the site header marked '
    'role="banner" on a div, holding the query\'s words, taken for a passage',
    "role-contentinfo": 'landmark roles partly known (the footer element known, not its role): the footer marked '
    'role="contentinfo" on a div, its contact line holding the query\'s words, taken for a passage',
    "display-none": 'hidden state judged by the hidden attribute only: an element styled display:none (never shown '
    "on the page, the hidden attribute spelled in CSS), holding the query's words, taken for a passage",
    "template": "the contents of a <template> (markup kept for scripts, never rendered) read as content: its "
    "form text, holding the query's words, taken for a passage",
}
HTML = (
    Case("markup", "the page's HTML read as text: a tag, an attribute or a character reference (&amp;) shown in "
         "the passage", {"fact": FACT, "absent": ("<strong", "</", "href=", "&amp;")}),
    *(Case(kind, FURNITURE_CATCHES[kind],
           {"furniture": FURNITURE[kind][0], "fact": FACT, "absent": (MARKERS[kind],)}) for kind in FURNITURE),
    Case("content-roles", 'furniture judged by the presence of a role attribute, not its value: the article marked '
         'role="main" and role="article" dropped, so the page\'s fact never reaches the evidence', {"fact": FACT}),
    Case("true-attributes", 'furniture judged by any attribute saying "true" (not aria-hidden or aria-modal alone): '
         'the article inside a server-rendered app root (data-server-rendered="true") or an expanded section '
         '(aria-expanded="true") dropped, so the page\'s fact never reaches the evidence', {"fact": FACT}),
    Case("stray-table-row", "markup read as well-formed only: a table row outside any table (no header state yet) "
         "crashes the page's reading, so the page counts as unread and its fact never reaches the evidence",
         {"fact": FACT}),
    Case("cell-line-break", "a line break (<br>) inside a table cell breaking the page's reading (the break "
         "kept as a non-text value in the cell), so the page counts as unread and its fact never reaches the "
         "evidence", {"fact": FACT}),
    # From the seed-5 mutation draw: the cell-line-break row's break sits beside the fact, not inside it.
    Case("cell-line-break-inside-fact", "a line break (<br>) inside a table cell read as text (something other than "
         "white space put where the break stands): the fact's words on either side of it, 'the Kittiwake', "
         "cited with junk between them", {"fact": "the Kittiwake anchorage"}),
    Case("format-characters", "format characters kept, or read as spaces: soft hyphens (&shy;) and a zero-width "
         "space inside the fact's words make 'outer anchorage' into 'out er an chor age' (or hide the match)",
         {"fact": FACT}),
    Case("th-row-label", "header cells (th) read only as column headers, or left out of their row: a fare reaches "
         "the evidence without the row label (Bicycle) it belongs to",
         {"query": "Lumen Bay ferry bicycle fare", "fact": "3.00", "label": "Bicycle"}),
    Case("th-first-row-header", "a row holding any header cell taken for the table's header row: in a table "
         "without one, the first row (Adult fare) becomes the header and its fare is lost",
         {"query": "Lumen Bay ferry adult fare", "fact": "12.50", "label": "Adult"}),
    Case("second-table-no-header", "a page's first table header kept for a later table that has none: the "
         "timetable's times shown as fares (One way, Return)",
         {"query": "Gull Island ferry times", "fact": "07:00", "label": "Gull Island",
          "mislabelled": r"(?:One way|Return)\W{0,4}\$?07:[04]0"}),
    Case("dl-pair", "a definition list split into terms and descriptions: the description answering the query "
         "(Kestrel buoy) reaches the evidence without its term (Pilot boarding point), or not at all",
         {"query": "harbour pilot boarding point", "fact": "Kestrel buoy", "label": "boarding point"}),
    Case("list-items", "list items read as one run of text (no item ends in sentence punctuation): the matching "
         "item comes with its unrelated neighbours", {"fact": FACT, "absent": ("choir", "picnic")}),
    Case("blocks", "headings, paragraphs and divisions read as inline text, or a block's text not ended at its end "
         "tag: the matching text comes with the unrelated heading, paragraph or division beside it",
         {"fact": FACT, "absent": ("flower", "choir", "picnic")}),
    # Four survivors of the seed-4 mutation draw: ordinary markup the page reader must take in its stride.
    Case("inline-split-fact", "text nodes around inline markup joined with something other than nothing: "
         "'from the <a>outer</a> anchorage' cited with junk between its words", {"fact": FACT}),
    Case("stray-end-tag", "an end tag with no open element (</span>) crashing the page's reading, so the page "
         "counts as unread and its fact never reaches the evidence", {"fact": FACT}),
    Case("nested-furniture", "an element nested in furniture that repeats the furniture's tag (a div in the "
         "cookie banner div) ending the furniture early: the banner's later text taken for a passage",
         {"fact": FACT, "absent": ("Hollowmere",)}),
    Case("unlabelled-row", "a table row whose first cell (its label) is empty under a header row crashing the "
         "page's reading, so its fact never reaches the evidence", {"fact": FACT}),
    # From the seed-5 mutation draw: a definition list's last term left standing after the list.
    Case("term-after-list", "a definition list's term kept once the list has ended: the paragraph after it read "
         "as that term's description, the unrelated term (Fernhollow moorings) put before the matching text",
         {"fact": FACT, "absent": ("Fernhollow",)}),
    # From the seed-6 mutation draw: a passage is the page's own text, whatever markup or characters sit in it.
    Case("private-use-glyph", "an unprintable character read as a placeholder: a private-use icon glyph (U+F017, "
         "as icon fonts put one in the text) between a passage's words shown as words the page does not hold",
         {"fact": FACT, "own_words": True}),
    Case("inline-split-cell", "markup inside a table cell read as a break between words: the word-break "
         "opportunities (<wbr>) of a long email address read as spaces, so 'pilotboarding@harbour-office.example.org' "
         "is cited split", {"query": "harbour pilot boarding email",
                            "fact": "pilotboarding@harbour-office.example.org"}),
    Case("unparseable-declaration", "a page the reader cannot parse (a CDATA marked section opened with a space "
         "after its bracket, which Python's html.parser rejects) failing the whole call, or crashing it, instead of "
         "counting as unread: the other result's page, which holds the query's fact, never cited",
         {"fact": FACT, "beside": True}),
)  # fmt: skip
# Each row's page, by the row's name.
PAGES = {
    "markup": MARKUP_PAGE,
    **{kind: _with_furniture(kind) for kind in FURNITURE},
    "content-roles": ROLES_PAGE,
    "true-attributes": TRUE_ATTRIBUTES_PAGE,
    "stray-table-row": STRAY_ROW_PAGE,
    "cell-line-break": BR_CELL_PAGE,
    # The break between two of the fact's words, a newline after it (so a reader that drops the break, rather
    # than reading it as a space, still keeps the words apart).
    "cell-line-break-inside-fact": _page("Harbour pilot boarding", _article(
        OPENING, "<table><tr><td>Harbour pilot boarding</td><td>06:00 from the<br>\nKittiwake anchorage</td></tr>"
        "</table>")),
    "format-characters": HYPHENATED_PAGE,
    "th-row-label": TH_ROWS_PAGE,
    "th-first-row-header": TH_NO_HEADER_PAGE,
    "second-table-no-header": TWO_TABLES_PAGE,
    "dl-pair": DL_PAGE,
    "list-items": LIST_PAGE,
    "blocks": BLOCKS_PAGE,
    "inline-split-fact": _page("Harbour pilot boarding", _article(
        OPENING, '<p>Harbour pilot boarding starts at 06:00 from the <a href="/a">outer</a> anchorage.</p>')),
    "stray-end-tag": _page("Harbour pilot boarding", _article(OPENING, "</span>", MATCH)),
    "nested-furniture": _page("Harbour pilot boarding", '<div id="cookie-consent"><div class="text"><p>We use '
                              "cookies.</p></div><p>Accept harbour pilot boarding cookies at 06:00, Hollowmere "
                              "partners.</p></div>\n" + _article(OPENING, MATCH)),
    "unlabelled-row": _page("Harbour pilot boarding", _article(
        OPENING, "<table><thead><tr><th>Tide</th><th>Height</th></tr></thead><tr><td>Bar</td><td>4.2 m</td></tr>"
        "<tr><td></td><td>4.6 m at springs</td></tr></table>", MATCH)),
    "term-after-list": _page("Harbour pilot boarding", _article(
        OPENING, "<dl><dt>Fernhollow moorings</dt><dd>Closed for dredging until spring.</dd></dl>", MATCH)),
    # An icon font's glyph (private use, not printable) between two words of the matching sentence: shown, dropped
    # or read as a space, the passage keeps to the page's words.
    "private-use-glyph": _page("Harbour pilot boarding", _article(
        OPENING, "<p>Harbour pilot boarding starts at 06:00 \uf017 from the outer anchorage, for vessels over 80 "
        "metres.</p>")),
    # Long email addresses in a narrow table, with word-break opportunities (<wbr>) where a line may wrap: a browser
    # shows each address whole, with no space.
    "inline-split-cell": _page("Harbour office contacts", _article(
        "<p>The harbour office answers pilot requests around the clock.</p>",
        "<table><thead><tr><th>Desk</th><th>Phone</th><th>Email</th></tr></thead><tbody>"
        "<tr><td>Pilot boarding</td><td>+44 1632 960 118</td>"
        "<td>pilot<wbr>boarding<wbr>@harbour-office.example.org</td></tr>"
        "<tr><td>Tug hire</td><td>+44 1632 960 119</td><td>tug<wbr>hire<wbr>@harbour-office.example.org</td></tr>"
        "</tbody></table>")),
    # Reading this page or counting it unread are both right; the other result's page (BESIDE_PAGE) is read either
    # way. It holds no fact of its own, so a reader that parses it leaves the other page's passage the only one.
    "unparseable-declaration": _page("Harbour archive", _article(
        OPENING, "<p>Older harbour notices were kept as <![ CDATA[ archive ]]> blocks.</p>")),
}
BESIDE_PAGE = _page("Harbour notices", _article(OPENING, MATCH))


# The pipeline's own fetches are SSRF-guarded like web_fetch's (seed 002: every URL it fetches passes host/IP
# validation, and the connection is bound to the public address that passed): a result whose name the test
# network resolves only to a private address is never dialled there (the trap counts connections).
PRIVATE_HOST = "harbour-intranet.example.org"
PRIVATE_ANSWER = "10.0.0.7"
PRIVATE = (
    Case("private-host", "the pipeline's own page fetch left unguarded while web_fetch is guarded: the result "
         "URL checked as text only, or the address it resolves to never judged, or judged and not the one dialled",
         {"host": PRIVATE_HOST}),
    # From an outside hunt of page fetching: the pipeline's own fetch guarded at its validation stage only.
    Case("rebound-host", "the pipeline validating a result's name at its validation stage, then fetching the page "
         "through a fresh lookup (whose later answer, private, is dialled)",
         {"host": "harbour-rebound.example.org", "lookups": [[PUBLIC], [PRIVATE_ANSWER]]}),
    Case("redirect-to-private", "the pipeline's page fetch following a redirect unchecked (only the result URL "
         "validated): a public page redirecting to a private address", {"host": HOST,
                                                                         "redirect": f"http://{PRIVATE_ANSWER}/"}),
)
# From an outside hunt: a fetch refused by validation (a redirect to a private address, a host that resolves
# privately) counted as an ordinary load failure, so the snippet fallback cites the result. Seed 002 puts
# 'URL/IP/redirect validation' before ranking as the pipeline's filter, and code attaches 'filtered source links':
# a result that failed it is no evidence, its snippet included, though this snippet matches the query.
BESIDE_HOST = "harbour-notices.example.net"  # a second public host: its page beside the refused result
REFUSED_SNIPPET = "Harbour pilot boarding starts at 06:00 from the Kittiwake anchorage, the harbour office says."
REFUSED = (
    Case("private-redirect-snippet", "a redirect to a private address counted as an ordinary load failure by a "
         "pipeline that follows redirects (only invalid URLs taken for refusals), so the result's snippet, which "
         "matches the query, is cited as evidence and its URL listed among the sources",
         {"host": HOST, "redirect": f"http://{PRIVATE_ANSWER}/"}),
    Case("private-host-snippet", "a host that resolves privately counted as an ordinary load failure, so the "
         "result's matching snippet is cited and its URL listed among the sources", {"host": PRIVATE_HOST}),
    # From the seed-6 mutation draw: refusals of odd redirect targets are refusals too. An unprintable character in
    # the Location of a redirect to a private address (U+E000, private use, sent as its UTF-8 bytes: the test server
    # writes header text as Latin-1). A Location no parser reads is no row: a client may take it for a page that
    # could not be fetched, whose snippet seed 002 lets stand in (a review of these rows).
    Case("private-redirect-unprintable-snippet", "a refused redirect whose Location holds an unprintable character "
         "(a private-use one) crashing while its refusal is put into words, so the refusal becomes an ordinary load "
         "failure and the result's matching snippet is cited and listed among the sources",
         {"host": HOST, "redirect": f"http://{PRIVATE_ANSWER}/" + "\ue000notices".encode().decode("latin-1")}),
    # From the seed-8 mutation draw: evidence.unsafe_dropped holds the value to the shipped schema, but only for
    # results refused before any fetch; one refused at its page fetch (a redirect hop) is recorded in tried.dropped
    # as well, where the record's fields were misnamed (URL, REASON) unseen.
    Case("private-redirect-recorded", "a result refused at its page fetch (a redirect to a private address) "
         "recorded in the value's tried.dropped outside the shipped evidence_search schema (its url or reason field "
         "misnamed)", {"host": HOST, "redirect": f"http://{PRIVATE_ANSWER}/", "schema": True}),
    # From the seed-10 mutation draw (its review): a Location to another public host, which the reference's redirect
    # policy (the same origin only) turns down. Turning it down is the target's redirect validation refusing it, so a
    # crash while the refusal is made (a TypeError coded WEB_PROVIDER_ERROR) that lets the snippet stand in fails. A
    # fetcher that follows redirects to other hosts fetches that public page and shows its fact: accepted, the row
    # then judges nothing more.
    Case("cross-origin-redirect-snippet", "a redirect to another public host turned down by the target's own policy "
         "(the same origin only) but counted as an ordinary load failure, so the result's matching snippet is cited "
         "as evidence and its URL listed among the sources",
         {"host": HOST, "redirect": f"http://{BESIDE_HOST}/cross-origin-redirect-snippet-page", "cross_origin": True}),
)
# From the seed-5 mutation draw: validation is a filter stage of the pipeline (search, then URL/IP/redirect
# validation, then ranking, fetching and passages): a result it refuses drops out, the others go on.
BESIDE_REFUSED = (
    Case("private-redirect-beside-page", "a result refused by validation at its page fetch (a redirect to a "
         "private address) failing the whole call, or its query: the other result's page, which holds the query's "
         "fact, never cited", {"host": HOST, "redirect": f"http://{PRIVATE_ANSWER}/", "beside": BESIDE_HOST}),
)
# From an outside hunt (M2): a redirect to loopback spelled as one number (2130706433 is 127.0.0.1 as inet_aton and
# getaddrinfo read it). Seed 002: every URL fetched passes host/IP and redirect validation, so that no search result
# leads the tool into localhost, and code attaches the filtered source links. Whether such a host is refused as
# invalid (as the reference does) or read as 127.0.0.1 and blocked is left open: either is a refusal by validation,
# so the result is no evidence, its snippet included. Apart from REFUSED, whose rows are refusals of blocked
# addresses: these are refused as invalid URLs by the reference. The test network resolves the spelling as
# getaddrinfo does and dials 127.0.0.1, and the spelling itself, to the trap: however a target reads the host, a
# connection it makes there is counted, and none leaves loopback. From a review: the other numeric spellings
# inet_aton reads as 127.0.0.1 (hex, octal, short forms), so a pipeline that refuses only the all-digit one, and
# fails the rest as unreadable pages, is caught too. Dotted octal with four parts (0177.0.0.1) is left out: httpx
# cannot parse such a URL at all (InvalidURL), so it is no host the client hands to the network.
LOOPBACK = "127.0.0.1"


def _numeric(name: str, form: str, spelling: str) -> Case:
    return Case(f"{name}-redirect-snippet", f"a redirect to loopback spelled as {form} (http://{spelling}/), "
                "refused as an invalid URL, counted as an ordinary load failure (only blocked addresses, or only "
                "the decimal spelling, taken for refusals), so the result's snippet, which matches the query, is "
                "cited as evidence and its URL listed among the sources",
                {"host": HOST, "redirect": f"http://{spelling}/admin", "spelling": spelling})


NUMERIC_REFUSED = (
    Case("numeric-redirect-snippet", "a redirect to loopback spelled as one decimal number (http://2130706433/), "
         "refused as an invalid URL, counted as an ordinary load failure (only blocked addresses taken for "
         "refusals), so the result's snippet, which matches the query, is cited as evidence and its URL listed among "
         "the sources", {"host": HOST, "redirect": "http://2130706433/admin", "spelling": "2130706433"}),
    _numeric("hex", "one hex number", "0x7f000001"),
    _numeric("octal", "one octal number", "017700000001"),
    _numeric("short-hex", "a short form with a hex part", "0x7f.1"),
    _numeric("short", "a short dotted form", "127.1"),
)
# From a review: the control that shows whether the target follows redirects at all (see the module docstring). A
# result on HOST whose page redirects (302, an absolute Location) to another page of the same origin, public, holding
# a fact of its own; the result's snippet (SNIPPET) holds none, so only a redirect followed puts the fact in the
# evidence. Same origin: the redirect any fetcher that follows redirects follows (the reference declines a
# cross-origin one, public or not, as WEB_REDIRECT_BLOCKED, a refusal by its redirect validation). A fetcher following
# no redirect (no seed makes one follow them) never validates a Location, so for it a redirect is a page not
# fetched, whose snippet may stand in.
CONTROL_PATH = "/redirect-control"
CONTROL_FACT = "Sandpiper jetty"
CONTROL_PAGE = _page("Harbour pilot boarding", _article(
    OPENING, "<p>Harbour pilot boarding starts at 06:00 from the Sandpiper jetty, for vessels over 80 metres.</p>"))
# From a hunt (P-C4): the control's fact was never read for its URL. Every evidence line keeps its source URL: the
# result's as the search returned it, or (open, a review found: no seed says which is the source of a page read
# through a redirect the target followed and validated) the URL the page was read at. Any other URL is neither.
CONTROL = "redirect-control"
CONTROL_CATCHES = ("the control's fact cited under a URL that is neither the search result's nor the page's the "
                   "redirect led to (a line's source URL lost or swapped for another result's)")
CROSS_ORIGIN_FACT = "Curlew pontoon"  # the cross-origin redirect's page: shown only by a target that follows that hop
CROSS_ORIGIN_PAGE = _page("Harbour pilot boarding", _article(
    OPENING, "<p>Harbour pilot boarding starts at 06:00 from the Curlew pontoon, for vessels over 80 metres.</p>"))
FOLLOWED = ("followed: the control's redirect to a public page put its fact in the evidence, so the redirect rows "
            "judge the refused result's snippet strictly (never cited, never listed)")
STRICT = ", though the target follows redirects (the control's was followed)"  # what a redirect row's failure adds
NOT_FOLLOWED = ("not followed: the control's redirect to a public page put none of its fact in the evidence, so for "
                "this target a redirect is a page not fetched (seed 002: its snippet may stand in), and the redirect "
                "rows accept the redirected result's snippet cited or listed; that no refused address is dialled is "
                "still judged")
# A page answered with an error status is no page fetched successfully (seed 002: only such a page is cut into
# passages; one that could not be fetched leaves the snippet as the fallback, or nothing). Its HTML error
# page holds the query's words and a word (Quarrendon) no other text has.
def _error_page(status: str) -> str:
    return _page(
        status,
        f"<h1>{status}</h1><p>Harbour pilot boarding: the harbour pilot boarding page you asked for is not shown "
        "at 06:00; ask the Quarrendon desk.</p>",
    )


ERROR_STATUS = (
    Case("error-404", "the HTTP status of the pipeline's own fetch ignored: a 404 page's text (the query's words, "
         "'ask the Quarrendon desk') cut into passages and cited as evidence",
         {"status": 404, "page": _error_page("404 Not Found"), "absent": ("Quarrendon",)}),
    # From an outside hunt: only the statuses that say the page is gone taken for a failed fetch.
    Case("error-403", "only 'not found' statuses (404, 410) taken for a failed fetch: a 403 login wall's text cut "
         "into passages and cited", {"status": 403, "page": _error_page("403 Forbidden"), "absent": ("Quarrendon",)}),
    Case("error-500", "only client errors taken for a failed fetch: a 500 error page's text cut into passages and "
         "cited", {"status": 500, "page": _error_page("500 Internal Server Error"), "absent": ("Quarrendon",)}),
)  # fmt: skip


def _serve_html(html: str, status: int = 200) -> Callable[[_Handler], None]:
    body = html.encode("utf-8")

    def answer(handler: _Handler) -> None:
        if status == 200:
            handler._send(body, headers={"Content-Type": "text/html; charset=utf-8"})
            return
        handler.send_response(status)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return answer


def _cited(value: Mapping[str, Any], url: str | None = None) -> list[str]:
    """The texts of the evidence lines citing ``url`` (None: every line, whatever the URL it cites)."""
    return [
        str(e.get("text", ""))
        for g in value.get("queries", [])
        if isinstance(g, dict)
        for e in g.get("evidence", [])
        if isinstance(e, dict) and (url is None or e.get("url") == url)
    ]


def _shown(outcome: CallOutcome) -> list[str]:
    """What a call shows of its evidence: its text and every evidence line's, whatever the URL it cites."""
    value = outcome.value if outcome.ok and isinstance(outcome.value, dict) else {}
    return [(outcome.text or "") if outcome.ok else "", *_cited(value)]


def _shows(outcome: CallOutcome, fact: str) -> bool:
    """Whether the call shows ``fact`` anywhere in its evidence (any run of spaces read as one)."""
    return any(fact in " ".join(text.split()) for text in _shown(outcome))


async def _follows_redirects(ctx: CheckContext, net: _Net) -> bool:
    """The control: whether the target's pipeline follows a redirect to a public page (its fact in the evidence)."""
    ctx.fresh()
    url = f"http://{HOST}{CONTROL_PATH}"
    net.pages.redirects[CONTROL_PATH] = (302, f"http://{HOST}{CONTROL_PATH}-page")
    net.pages.special[f"{CONTROL_PATH}-page"] = _serve_html(CONTROL_PAGE)
    script(ctx, QUERY, [row(url, "Harbour pilot boarding", SNIPPET)])
    outcome = await _evidence(ctx, QUERY, {"id": "html-redirect-control", "local_names": []})
    follows = _shows(outcome, CONTROL_FACT)
    value = outcome.value if follows and outcome.ok and isinstance(outcome.value, dict) else {}
    lines = [e for g in value.get("queries", []) if isinstance(g, dict) for e in g.get("evidence", [])
             if isinstance(e, dict) and CONTROL_FACT in " ".join(str(e.get("text", "")).split())]  # fmt: skip
    final = f"http://{HOST}{CONTROL_PATH}-page"
    sources = {resource_key(url), resource_key(final)}  # the result's URL, or the page's it was read at (open)
    elsewhere = sorted({u for u in (str(e.get("url")) for e in lines) if resource_key(u) not in sources})
    require(not elsewhere, f"{CONTROL}: the fact of the page {url} redirects to is cited under {', '.join(elsewhere)}, "
            f"neither the result's URL {url} nor the page's {final}", catches=CONTROL_CATCHES)
    return follows


def _follows_evidence_schema(value: Mapping[str, Any], case: Case) -> None:
    """The value follows the shipped evidence_search schema (the adapter protocol's), the row named if not."""
    problems = validate("evidence_search.output", value)
    require(not problems, f"{case.name}: the value does not follow evidence_search.output: {'; '.join(problems[:2])}",
            catches=case.catches)


@check(
    "evidence.html_page",
    "An HTML page the pipeline fetches itself yields its query-matching text: no markup, no page furniture",
    seed="002",
    requires=REQUIRES,
    provider="messages",
    rule="Seed 002: a page fetched successfully is not sent to the model whole; code reduces it to short text "
    "matching the query, so that boilerplate and unrelated text do not mix in; every evidence line keeps its "
    "source URL (the result's URL as the search returned it; for a page read through a redirect the target "
    "followed and validated, the URL it was read at is accepted too: the seeds do not say which is its source); "
    "a page that cannot be fetched, or has "
    "no usable passage, leaves the snippet as the fallback: a page its reader cannot parse counts as unread, it "
    "never fails the call. A passage is the page's own text: no word the page does not hold, no break inside a "
    "word the page shows whole. Checked on HTML pages the "
    "pipeline fetches itself (Messages search, the test network). And "
    "'a URL to be fetched must pass host/IP validation every time; the connection is bound to the public IP "
    "that passed': a result whose host resolves only to a private address, or later to one, or whose page "
    "redirects to one, is never dialled there. Such a result failed the pipeline's 'URL/IP/redirect validation', "
    "and code attaches 'filtered source links': its snippet is no fallback (that is for a page that could not be "
    "fetched, not for a result validation refused), so even a snippet matching the query is neither cited nor "
    "listed in the sources. Validation is a stage of the pipeline ('URL/IP/redirect validation' between the "
    "search and the ranking): a result it refuses drops out and the others go on, so a page beside it that was "
    "fetched successfully still yields its query-matching text. The value of a call with such a result follows the "
    "shipped evidence_search schema (the adapter protocol's), whatever it records of the refusal. A redirect to "
    "loopback spelled as one number (2130706433) or in another numeric form inet_aton reads (0x7f000001, "
    "017700000001, 0x7f.1, 127.1) may be refused as an invalid URL or read as 127.0.0.1 and blocked: "
    "either is a refusal by validation, never an ordinary load failure. Whatever the target, no refused address "
    "is dialled. The snippet rule holds, for a result whose page redirects, only for a target that follows "
    "redirects: validation is of 'URL ที่จะ fetch' (the URLs to be fetched), a Location a fetcher never follows is "
    "never validated, and for it the redirect is a page that could not be fetched, whose snippet may stand in "
    "('ถ้า fetch page ไม่ได้หรือไม่มี passage ที่ใช้ได้ search snippet ยังเป็น fallback ได้ตาม policy'). A control "
    "shows which: a result whose page redirects (302) to another public page of the same origin holding a fact of "
    "its own (cited, when shown, under the result's URL or that page's). That fact in the evidence, and the "
    "target validates the Locations it is given: a refused redirect "
    "taken for a page not fetched (its snippet cited or listed) fails, and so does a Location turned down by the "
    "target's own redirect policy (another host, another scheme): a fetcher that follows redirects reads each "
    "Location as a URL to be fetched, and turning one down is its redirect validation refusing it (one that "
    "follows the hop to another public host fetches that page, whose fact then shows it followed: accepted); no "
    "fact, and "
    "the redirect rows accept the snippet cited, as the check's notes say. A host resolving privately is refused "
    "before any fetch, so its snippet is never cited, whatever the target.",
    cases=(*HTML, *ERROR_STATUS, *PRIVATE, *REFUSED, *BESIDE_REFUSED, *NUMERIC_REFUSED),
    profiles=("seed-002-evidence-html",),
)
async def html_page(ctx: CheckContext) -> None:
    with _network() as net:
        private_hosts = {c["host"]: c.params.get("lookups", [[PRIVATE_ANSWER]]) for c in (*PRIVATE, *REFUSED)
                         if "redirect" not in c.params}
        spellings = {c["spelling"]: [[LOOPBACK]] for c in NUMERIC_REFUSED}
        config = net.config({HOST: [[PUBLIC]], BESIDE_HOST: [[PUBLIC]], **private_hosts, **spellings},
                            [PRIVATE_ANSWER, LOOPBACK])
        config["dial"] |= {spelling: net.trap.port for spelling in spellings}  # a target dialling the text as it is
        await ctx.configure(provider="messages", test_network=config)
        for case in HTML:
            ctx.fresh()
            query = case.params.get("query", QUERY)
            path = f"/{case.name}"
            url = f"http://{HOST}{path}"
            page = PAGES[case.name]
            net.pages.special[path] = _serve_html(page)
            title = _TITLE.search(page)
            rows = [row(url, title.group(1) if title else "", SNIPPET)]
            if case.params.get("beside"):  # the fact is on a second result's page, the row's page beside it
                url = f"http://{BESIDE_HOST}{path}-page"
                net.pages.special[f"{path}-page"] = _serve_html(BESIDE_PAGE)
                rows.append(row(url, "Harbour notices", SNIPPET))
                page = BESIDE_PAGE
            script(ctx, query, rows)
            outcome = await _evidence(ctx, query, {"id": f"html-{case.name}", "local_names": []})
            value = expect_success(outcome, case.name)
            cited = _cited(value, url)
            fact, label = case["fact"], case.params.get("label")
            # Any run of spaces (a no-break space kept, too) between words is one space.
            lines = [t for t in cited if fact in " ".join(t.split()) and (label is None or label in t)]
            want = f"both {label!r} and {fact!r}" if label else repr(fact)
            require(lines, f"{case.name}: no evidence line citing {url} holds {want}", evidence=cited,
                    catches=case.catches)  # fmt: skip
            if "mislabelled" in case.params:  # another table's column put over the fact (the pairing itself)
                wrong = [t for t in lines if re.search(case["mislabelled"], t)]
                require(not wrong, f"{case.name}: another table's column labels the fact {fact!r}",
                        evidence=wrong, catches=case.catches)
            if case.params.get("own_words"):  # a passage is the page's text: no word the page does not hold
                words = set(re.findall(r"\w+", page.casefold()))
                foreign = sorted({w for t in cited for w in re.findall(r"\w+", t.casefold())} - words)
                require(not foreign, f"{case.name}: the evidence citing {url} holds words the page does not: "
                        f"{', '.join(foreign[:5])}", evidence=cited, catches=case.catches)
            shown = "\n".join([outcome.text or "", *cited])
            for marker in case.params.get("absent", ()):
                require(marker not in shown, f"{case.name}: {marker!r} reached the evidence", evidence=cited,
                        catches=case.catches)  # fmt: skip
        for case in ERROR_STATUS:
            ctx.fresh()
            path = f"/{case.name}"
            url = f"http://{HOST}{path}"
            net.pages.special[path] = _serve_html(case["page"], case["status"])
            script(ctx, QUERY, [row(url, "Harbour pilot boarding", SNIPPET)])
            outcome = await _evidence(ctx, QUERY, {"id": f"html-{case.name}", "local_names": []})
            if not outcome.ok:  # a refusal is the pipeline's to make; a WEB_* code, never a crash
                require(
                    str(outcome.error_code).startswith("WEB_"),
                    f"{case.name}: failed without a WEB_* code ({outcome.error_code!r})",
                    catches=case.catches,
                )
            cited = _cited(outcome.value or {}, url)
            # Evidence is what a successful call shows; an error's wording (which may quote the upstream answer)
            # is not evidence, and the seed does not decide it.
            shown = "\n".join([(outcome.text or "") if outcome.ok else "", *cited])
            for marker in case["absent"]:
                require(
                    marker not in shown,
                    f"{case.name}: the text of the page answered HTTP {case['status']} "
                    f"reached the evidence ({marker!r})",
                    evidence=cited,
                    catches=case.catches,
                )
        for case in PRIVATE:
            ctx.fresh()
            before = net.trap.connections()
            url = f"http://{case['host']}/{case.name}"
            if "redirect" in case.params:
                net.pages.redirects[f"/{case.name}"] = (302, case["redirect"])
            script(ctx, QUERY, [row(url, "Harbour office notices", SNIPPET)])
            outcome = await _evidence(ctx, QUERY, {"id": f"html-{case.name}", "local_names": []})
            require(net.trap.connections() == before, f"{case.name}: the pipeline's page fetch of {url} reached "
                    f"the private address {PRIVATE_ANSWER}", catches=case.catches)
            if not outcome.ok:  # a refusal is the pipeline's to make; a WEB_* code, never a crash
                require(str(outcome.error_code).startswith("WEB_"), f"{case.name}: failed without a WEB_* code "
                        f"({outcome.error_code!r})", catches=case.catches)
        # What is cited; whether the private address was dialled is PRIVATE's to judge. A redirect row judges the
        # snippet only for a target the control shows following redirects.
        refusals = (*REFUSED, *BESIDE_REFUSED, *NUMERIC_REFUSED)
        follows = True
        if any("redirect" in case.params for case in refusals):
            follows = await _follows_redirects(ctx, net)
            ctx.note("redirects", FOLLOWED if follows else NOT_FOLLOWED)
        for case in refusals:
            ctx.fresh()
            before = net.trap.connections()
            url = f"http://{case['host']}/{case.name}"
            if "redirect" in case.params:
                net.pages.redirects[f"/{case.name}"] = (302, case["redirect"])
            if case.params.get("cross_origin"):
                net.pages.special[f"/{case.name}-page"] = _serve_html(CROSS_ORIGIN_PAGE)
            rows = [row(url, "Harbour pilot boarding", REFUSED_SNIPPET)]
            beside = f"http://{case['beside']}/{case.name}-page" if "beside" in case.params else None
            if beside is not None:
                page = _page("Harbour notices", _article(OPENING, MATCH))
                net.pages.special[f"/{case.name}-page"] = _serve_html(page)
                rows.append(row(beside, "Harbour notices", SNIPPET))
            script(ctx, QUERY, rows)
            outcome = await _evidence(ctx, QUERY, {"id": f"html-{case.name}", "local_names": []})
            if "spelling" in case.params:  # no PRIVATE row dials a numeric spelling: this row judges it
                require(net.trap.connections() == before, f"{case.name}: the pipeline's page fetch of {url} followed "
                        f"the redirect to {case['redirect']} and reached {LOOPBACK}", catches=case.catches)
            if beside is not None:  # the other result's page was fetched successfully: its fact is evidence
                value = expect_success(outcome, case.name, case.catches)
                cited = [t for t in _cited(value, beside) if FACT in " ".join(t.split())]
                require(cited, f"{case.name}: no evidence line citing {beside} holds {FACT!r}, beside a result "
                        "refused by validation", evidence=_cited(value, beside), catches=case.catches)
            elif not outcome.ok:  # a refusal is the pipeline's to make; a WEB_* code, never a crash
                require(str(outcome.error_code).startswith("WEB_"), f"{case.name}: failed without a WEB_* code "
                        f"({outcome.error_code!r})", catches=case.catches)
                continue
            value = outcome.value or {}
            if case.params.get("schema"):
                _follows_evidence_schema(value, case)
            if "redirect" in case.params and not follows:
                continue  # a redirect not followed is a page not fetched: its snippet may stand in (NOT_FOLLOWED)
            if case.params.get("cross_origin") and _shows(outcome, CROSS_ORIGIN_FACT):
                continue  # the hop to the other host followed: that page is evidence, and the policy is the target's
            sources = [s.get("url") for s in value.get("sources", []) if isinstance(s, dict)]
            lines = [m.group(1) for m in map(_ANY_SOURCE.search, (outcome.text or "").splitlines()) if m is not None]
            # A redirect row names the control's verdict: the target follows redirects, so it refused this one.
            why = STRICT if "redirect" in case.params else ""
            require(not _cited(value, url) and url not in lines, f"{case.name}: {url}, refused by validation, is "
                    f"cited as evidence (its snippet taken for a fallback{why})", catches=case.catches)
            require(url not in sources, f"{case.name}: {url}, refused by validation, is listed among the sources{why}",
                    catches=case.catches)
