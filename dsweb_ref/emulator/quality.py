"""A labelled quality corpus for the evidence pipeline (seed 002): fictional Thai and English pages
the emulator serves (``GET /pages/q/...``) and indexes for queries naming ``site:quality.test``.

Every answer page is wrapped in furniture that shares the query's words and carries wrong values:
navigation, cookie dialogs (``role="dialog"``, ``aria-modal``, ``id="cookie-consent"``), sidebars,
hidden SEO blocks (``hidden``, ``aria-hidden``, ``display:none``) and footers. Next to each answer
page sit neighbouring-entity decoys (the previous model or version, last year's edition, a similarly
named place), some with tables and lists. Some queries have no answer anywhere: only decoys match.
One result resolves to a private address (``intranet.quality.test``): it must never be cited.

``CASES`` are the labels (see ``scripts/bench_evidence_quality.py`` for the metric rules). All
names, numbers and events are invented.
"""

from __future__ import annotations

from dataclasses import dataclass

from .corpus import Document

__all__ = ["CASES", "PRIVATE_HOST", "QUALITY_DOCUMENTS", "QUALITY_PAGES", "QUALITY_SITE", "QualityCase"]

QUALITY_SITE = "quality.test"
PRIVATE_HOST = f"intranet.{QUALITY_SITE}"  # resolves to a private address in the bench's network


@dataclass(frozen=True, slots=True)
class QualityCase:
    """One labelled query. ``facts``: each fact is the strings that must all appear in one evidence
    line for the fact to count as found (a table fact names its row label and its value). No facts:
    the corpus holds no answer and the right outcome is ``[needs_retry]``."""

    query: str
    facts: tuple[tuple[str, ...], ...]
    note: str


_COOKIE = (
    '<div role="dialog" aria-modal="true" id="cookie-consent"><p>{words}: we use cookies to show you {words} '
    "offers. Accept all / Reject</p></div>",
    '<div id="cookie-consent"><p>Cookies help us price {words}. Continue to accept.</p></div>',
    '<section class="consent-banner" aria-modal="true"><p>{words} ใช้คุกกี้ ยอมรับทั้งหมด</p></section>',
    '<div role="alertdialog"><p>{words} — sign up for alerts, we use cookies.</p></div>',
)
_HIDDEN = (
    '<div style="display:none">{words} {wrong}</div>',
    "<div hidden><p>{words} {wrong}</p></div>",
    '<p aria-hidden="true">{words} {wrong}</p>',
    '<div style="visibility: hidden; height:0">{words} {wrong}</div>',
)
_SIDE = (
    "<aside><h3>Popular</h3><p>{words} {wrong}</p></aside>",
    '<div role="complementary"><p>Trending: {words} {wrong}</p></div>',
    '<div class="sidebar"><p>อ่านต่อ {words} {wrong}</p></div>',
    '<ul role="navigation"><li>{words}</li><li>{wrong}</li></ul>',
)


def _page(title: str, lang: str, main: str, *, words: str, wrong: str, style: int) -> str:
    """An article inside furniture: every furniture block repeats ``words`` and carries ``wrong``."""
    cookie = _COOKIE[style % 4].format(words=words)
    hidden = _HIDDEN[style % 4].format(words=words, wrong=wrong)
    side = _SIDE[(style + 1) % 4].format(words=words, wrong=wrong)
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>'
        f"<script>var q = '{words} {wrong}';</script></head><body>{cookie}"
        f'<nav><a href="/">Home</a> <a href="/x">{words}</a></nav>'
        f"<header><p>{words} — news and prices</p></header>"
        f"<main><article><h1>{title}</h1>{main}</article></main>{hidden}{side}"
        f'<div role="contentinfo"><p>{words} © 2026 {wrong}</p></div></body></html>'
    )


@dataclass(frozen=True, slots=True)
class _Spec:
    slug: str
    title: str
    snippet: str
    main: str
    words: str
    wrong: str
    lang: str = "en"


# fmt: off
_SPECS: tuple[_Spec, ...] = (
    # --- Veltra Orion phones: X5 answer, X4 decoy; X6 has no page ----------------------------------
    _Spec("orion-x5", "Veltra Orion X5 review: price, battery and camera",
          "The Veltra Orion X5 launch price and our verdict on the phone.",
          "<p>The Veltra Orion X5 is the phone Veltra hopes will win back buyers, and its launch price is what "
          "everyone asks about first. We used the Orion X5 for two weeks.</p>"
          "<p>Veltra says the Orion X5 goes on sale on 3 June 2026. It launches at $749 for the 256 GB model, "
          "with the 512 GB model at $849. Colours are slate and sand.</p>"
          "<p>Battery life was strong: the 5,100 mAh cell lasted two days of light use.</p>",
          "Veltra Orion X5 launch price", "Orion X5 from $699 deal"),
    _Spec("orion-x4", "Veltra Orion X4 launch price and review",
          "Veltra Orion X4 launch price: what the phone cost at release.",
          "<p>The Veltra Orion X4 launch price was $649 when it arrived in 2025.</p>"
          "<p>The Orion X4 has a 4,700 mAh battery.</p>",
          "Veltra Orion X4 launch price", "Orion X5 price leak $999"),
    # --- Harbor Lights Festival: 2026 answer, 2025 decoy; 2027 no answer ----------------------------
    _Spec("harbor-2026", "Harbor Lights Festival 2026: dates, tickets and map",
          "Everything about the Harbor Lights Festival 2026 in Port Elva.",
          "<p>The Harbor Lights Festival returns to Port Elva with lantern boats and night markets. "
          "Organisers expect 40,000 visitors.</p>"
          "<p>This year the festival runs from 14 to 16 August 2026 on the east quay. Entry to the quay is free.</p>",
          "Harbor Lights Festival 2026 dates", "Harbor Lights Festival 2026 dates 21 to 23 August"),
    _Spec("harbor-2025", "Harbor Lights Festival 2025 dates announced",
          "Harbor Lights Festival 2025 dates announced for Port Elva.",
          "<p>The Harbor Lights Festival 2025 dates are 9 to 11 August 2025, on the east quay of Port Elva.</p>",
          "Harbor Lights Festival dates", "Harbor Lights Festival 2026 dates 1 to 3 September"),
    # --- Kestrel CLI: 3.2 answer, 3.1 decoy; 4.0 no answer -----------------------------------------
    _Spec("kestrel-32", "Kestrel CLI 3.2 release notes",
          "Kestrel CLI 3.2 release notes: new commands and fixes.",
          "<p>Kestrel CLI 3.2 adds the sync command and drops Python 3.9.</p>"
          "<ul><li>New: kestrel sync</li><li>Fixed: proxy detection on Windows</li>"
          "<li>Released: March 4, 2026</li></ul>",
          "Kestrel CLI 3.2 release date", "Kestrel CLI 3.2 released 2025"),
    _Spec("kestrel-31", "Kestrel CLI 3.1 release date and notes",
          "Kestrel CLI 3.1 release date: January 12, 2026.",
          "<p>Kestrel CLI 3.1 was released on January 12, 2026 with faster installs.</p>",
          "Kestrel CLI release date", "Kestrel CLI 3.2 release date delayed to May"),
    # --- Lumen Bay ferry: table with header cells --------------------------------------------------
    _Spec("lumen-ferry", "Lumen Bay ferry fares and timetable",
          "Lumen Bay ferry fares for adults, children and bikes.",
          "<p>The Lumen Bay ferry links the old town with Gull Island every 40 minutes.</p>"
          "<table><thead><tr><th>Ticket</th><th>One way</th><th>Return</th></tr></thead><tbody>"
          "<tr><td>Adult</td><td>$12.50</td><td>$22.00</td></tr>"
          "<tr><td>Child (4-12)</td><td>$6.00</td><td>$10.50</td></tr>"
          "<tr><td>Bicycle</td><td>$3.00</td><td>$5.00</td></tr></tbody></table>",
          "Lumen Bay ferry adult fare", "adult fare $15.00"),
    # --- Northwind Museum: definition list -------------------------------------------------------------
    _Spec("northwind-hours", "Northwind Museum opening hours",
          "Northwind Museum opening hours and admission.",
          "<p>The Northwind Museum of Maritime Craft is open six days a week.</p>"
          "<dl><dt>Monday</dt><dd>Closed</dd><dt>Tuesday to Saturday</dt><dd>09:00 to 17:00</dd>"
          "<dt>Sunday</dt><dd>10:00 to 16:00</dd></dl><p>Admission is $8.</p>",
          "Northwind Museum opening hours Sunday", "Sunday 08:00 to 20:00"),
    # --- Pell River Bridge vs Pell Creek Bridge (similar name) ----------------------------------------
    _Spec("pell-river", "Pell River Bridge: history",
          "The Pell River Bridge, its history and its length.",
          "<p>The Pell River Bridge is the best known landmark of Harlow County and the Pell River Bridge length "
          "is often quoted in guide books, the Pell River Bridge being the region's pride. Construction began in "
          "1931 under engineer Ada Voss. The main span crosses the river in three arches. In total the bridge is "
          "1,284 metres long, including the approach viaducts. It was restored in 2019.</p>",
          "Pell River Bridge length", "Pell River Bridge length 2,000 metres"),
    _Spec("pell-creek", "Pell Creek Bridge length and photos",
          "Pell Creek Bridge length: the small bridge near Harlow.",
          "<p>The Pell Creek Bridge length is 412 metres; it is often confused with the river bridge.</p>",
          "Pell Creek Bridge length", "Pell River Bridge 900 metres"),
    # --- Quillon tablets: Q7 spec table answer, Q6 decoy; Q9 no answer ------------------------------
    _Spec("quillon-q7", "Quillon Tablet Q7 specifications",
          "Quillon Tablet Q7 full specifications.",
          "<p>Quillon's Q7 tablet replaces the Q6 with a brighter screen.</p>"
          "<table><tr><th>Specification</th><th>Quillon Tablet Q7</th></tr>"
          "<tr><td>Display</td><td>11.2 inch OLED</td></tr><tr><td>Battery</td><td>8,200 mAh</td></tr>"
          "<tr><td>Weight</td><td>512 g</td></tr></table>",
          "Quillon Tablet Q7 battery capacity", "Quillon Q7 battery 9,999 mAh"),
    _Spec("quillon-q6", "Quillon Tablet Q6 battery capacity",
          "Quillon Tablet Q6 battery capacity and charging.",
          "<p>The Quillon Tablet Q6 battery capacity is 7,000 mAh and it charges at 30 W.</p>",
          "Quillon Tablet Q6 battery capacity", "Quillon Tablet Q7 battery 6,000 mAh"),
    # --- Marlow City Marathon: 2026 answer, 2025 decoy ------------------------------------------------
    _Spec("marlow-2026", "Marlow City Marathon 2026 registration",
          "Register for the Marlow City Marathon 2026.",
          "<p>Registration for the Marlow City Marathon 2026 opens on 1 February. The full marathon entry "
          "costs $85 and the half marathon $55. Runners get a medal and a shirt.</p>",
          "Marlow City Marathon 2026 registration fee", "Marlow City Marathon 2026 fee $95"),
    _Spec("marlow-2025", "Marlow City Marathon 2025 registration fee",
          "Marlow City Marathon 2025 registration fee and results.",
          "<p>The Marlow City Marathon 2025 registration fee was $75 for the full marathon.</p>",
          "Marlow City Marathon registration fee", "Marlow City Marathon 2026 fee $60"),
    # --- Sable OS: 14 answer, 13 decoy ---------------------------------------------------------------
    _Spec("sable-14", "Sable OS 14 system requirements",
          "Sable OS 14 system requirements: processor, RAM and storage.",
          "<p>Sable OS 14 runs on most laptops sold since 2020.</p>"
          "<ul><li>Processor: 64-bit, 2 cores</li><li>Memory: at least 6 GB RAM</li>"
          "<li>Storage: 40 GB free</li></ul>",
          "Sable OS 14 minimum RAM", "Sable OS 14 needs 16 GB RAM"),
    _Spec("sable-13", "Sable OS 13 minimum RAM and requirements",
          "Sable OS 13 minimum RAM and other requirements.",
          "<p>Sable OS 13 minimum RAM is 4 GB, and it needs 32 GB of storage.</p>",
          "Sable OS 13 minimum RAM", "Sable OS 14 minimum RAM 2 GB"),
    # --- Greyfield Library: list item -----------------------------------------------------------------
    _Spec("greyfield-fees", "Greyfield Library fees and charges",
          "Greyfield Library fees: cards, printing, late returns.",
          "<p>Greyfield Library keeps its fees low. Joining is free for residents.</p>"
          "<ul><li>Printing: $0.10 per page</li><li>Replacement card: $3</li><li>Late DVD: $1 per day</li></ul>",
          "Greyfield Library card replacement fee", "replacement card $10"),
    # --- Ardent Labs vs Ardent Lab Supplies (similar names) -------------------------------------------
    _Spec("ardent-labs", "About Ardent Labs",
          "Ardent Labs builds sensors for farms.",
          "<p>Ardent Labs was founded in 2018 in Dunmore and builds soil sensors for farms.</p>"
          "<p>Mira Okonkwo has led Ardent Labs as chief executive since 2021.</p>",
          "Ardent Labs CEO", "Ardent Labs CEO Tom Reyes"),
    _Spec("ardent-supplies", "Ardent Lab Supplies CEO interview",
          "Ardent Lab Supplies CEO talks about glassware.",
          "<p>Ardent Lab Supplies CEO Tom Reyes says glassware demand doubled.</p>",
          "Ardent Lab Supplies CEO", "Ardent Labs CEO Tom Reyes"),
    # --- Thai: Lam Phu express boat fares (table), Lam Phong decoy -------------------------------------
    _Spec("lamphu-boat", "ค่าโดยสาร เรือด่วนสายลำพู",
          "ค่าโดยสาร เรือด่วนสายลำพู สำหรับผู้ใหญ่ เด็ก และผู้สูงอายุ",
          "<p>เรือด่วนสายลำพูวิ่งระหว่างท่าน้ำเมืองเก่าและท่าเกาะนางทุก 20 นาที</p>"
          "<table><tr><th>ประเภทผู้โดยสาร</th><th>ค่าโดยสาร</th></tr>"
          "<tr><td>ผู้ใหญ่</td><td>25 บาท</td></tr><tr><td>เด็ก</td><td>12 บาท</td></tr>"
          "<tr><td>ผู้สูงอายุ</td><td>10 บาท</td></tr></table>",
          "ค่าโดยสาร เรือด่วนสายลำพู ผู้ใหญ่", "ผู้ใหญ่ 40 บาท", "th"),
    _Spec("lamphong-boat", "ค่าโดยสาร เรือด่วนสายลำพอง ผู้ใหญ่",
          "ค่าโดยสาร เรือด่วนสายลำพอง ผู้ใหญ่ 30 บาท",
          "<p>ค่าโดยสารเรือด่วนสายลำพอง ผู้ใหญ่ 30 บาท เด็ก 15 บาท</p>",
          "ค่าโดยสาร เรือด่วนสายลำพอง", "เรือด่วนสายลำพู ผู้ใหญ่ 35 บาท", "th"),
    # --- Thai: Chiang Dao lantern festival 2569 (= 2026), 2568 decoy; 2570 no answer --------------------
    _Spec("chiangdao-2569", "เทศกาลโคมไฟเชียงดาว 2569",
          "เทศกาลโคมไฟเชียงดาว 2569 กำหนดการ และการเดินทาง",
          "<p>เทศกาลโคมไฟเชียงดาวเป็นงานประจำปีของอำเภอเชียงดาว มีขบวนโคมและตลาดกลางคืน "
          "ปีนี้คาดว่ามีผู้มาเที่ยวกว่า 20,000 คน</p>"
          "<p>งานปีนี้จัดระหว่างวันที่ 12–14 พฤศจิกายน 2569 ที่ลานวัฒนธรรมเชียงดาว เข้าชมฟรี</p>",
          "เทศกาลโคมไฟเชียงดาว 2569 วันจัดงาน", "วันที่ 20–22 พฤศจิกายน 2569", "th"),
    _Spec("chiangdao-2568", "เทศกาลโคมไฟเชียงดาว 2568 วันจัดงาน",
          "เทศกาลโคมไฟเชียงดาว 2568 วันจัดงาน 8–10 พฤศจิกายน",
          "<p>เทศกาลโคมไฟเชียงดาว 2568 วันจัดงานคือวันที่ 8–10 พฤศจิกายน 2568</p>",
          "เทศกาลโคมไฟเชียงดาว วันจัดงาน", "เทศกาลโคมไฟเชียงดาว 2569 วันที่ 1–3 ธันวาคม", "th"),
    # --- Thai: Nava phones N3 answer, N2 decoy; N5 no answer -------------------------------------------
    _Spec("nava-n3", "สเปก สมาร์ทโฟน Nava N3",
          "สเปก สมาร์ทโฟน Nava N3 หน้าจอ กล้อง แบตเตอรี่",
          "<p>สมาร์ทโฟน Nava N3 เป็นรุ่นกลางที่เน้นความคุ้มค่า</p>"
          "<table><tr><th>หัวข้อ</th><th>รายละเอียด</th></tr><tr><td>หน้าจอ</td><td>6.5 นิ้ว</td></tr>"
          "<tr><td>แบตเตอรี่</td><td>5,000 mAh</td></tr><tr><td>ราคา</td><td>7,990 บาท</td></tr></table>",
          "สมาร์ทโฟน Nava N3 แบตเตอรี่", "แบตเตอรี่ 6,500 mAh", "th"),
    _Spec("nava-n2", "สมาร์ทโฟน Nava N2 แบตเตอรี่",
          "สมาร์ทโฟน Nava N2 แบตเตอรี่ 4,500 mAh",
          "<p>สมาร์ทโฟน Nava N2 แบตเตอรี่ 4,500 mAh ชาร์จเร็ว 18 วัตต์</p>",
          "สมาร์ทโฟน Nava N2 แบตเตอรี่", "Nava N3 แบตเตอรี่ 3,000 mAh", "th"),
    # --- Thai: Bang Phra library card fee (list item) ----------------------------------------------------
    _Spec("bangphra-library", "ค่าธรรมเนียม ห้องสมุดเมืองบางพระ",
          "ค่าธรรมเนียม ห้องสมุดเมืองบางพระ ทำบัตร ถ่ายเอกสาร",
          "<p>ห้องสมุดเมืองบางพระเปิดให้บริการทุกวัน ยกเว้นวันจันทร์</p>"
          "<ul><li>สมัครสมาชิกใหม่ ฟรี</li><li>ทำบัตรสมาชิกใหม่กรณีบัตรหาย 50 บาท</li>"
          "<li>ถ่ายเอกสาร แผ่นละ 1 บาท</li></ul>",
          "ค่าธรรมเนียม ทำบัตร ห้องสมุดเมืองบางพระ", "ทำบัตร 200 บาท", "th"),
    # --- Thai: Sai Mok river bridge (zero-width spaces in the text) vs Sai Mok Noi ---------------------
    _Spec("saimok-bridge", "สะพานข้ามแม่น้ำสายหมอก",
          "ประวัติ สะพานข้ามแม่น้ำสายหมอก",
          "<p>สะพานข้ามแม่น้ำสายหมอกเป็นสะพานคอนกรีตที่เก่าแก่ที่สุดของจังหวัด "
          "สะพาน\u200bนี้\u200bมี\u200bความยาว\u200b 1,120 เมตร สร้างเสร็จในปี 2530 "
          "และได้รับการซ่อมใหญ่ในปี 2562</p>",
          "สะพานข้ามแม่น้ำสายหมอก ความยาว", "ความยาว 3,000 เมตร", "th"),
    _Spec("saimok-noi", "สะพานข้ามแม่น้ำสายหมอกน้อย ความยาว",
          "สะพานข้ามแม่น้ำสายหมอกน้อย ความยาว 240 เมตร",
          "<p>สะพานข้ามแม่น้ำสายหมอกน้อย ความยาว 240 เมตร เป็นสะพานไม้</p>",
          "สะพานข้ามแม่น้ำสายหมอกน้อย ความยาว", "สายหมอก ความยาว 500 เมตร", "th"),
    # --- held out: written after the pipeline was tuned on the cases above, measured once as is ---
    _Spec("brightwater-tickets", "Brightwater Aquarium tickets",
          "Brightwater Aquarium ticket prices for adults, children and seniors.",
          "<p>Brightwater Aquarium is open every day except Christmas. Tickets are cheaper online.</p>"
          "<table><thead><tr><th>Visitor</th><th>Weekday</th><th>Weekend</th></tr></thead>"
          "<tr><td>Adult</td><td>$24</td><td>$28</td></tr><tr><td>Child</td><td>$14</td><td>$16</td></tr>"
          "<tr><td>Senior</td><td>$18</td><td>$20</td></tr></table>",
          "Brightwater Aquarium ticket price child", "child ticket $9"),
    _Spec("corvid-c3", "Corvid Drone C3 hands-on",
          "Corvid Drone C3: camera, range and flight time tested.",
          "<p>The Corvid Drone C3 folds to the size of a paperback.</p>"
          "<ul><li>Camera: 4K at 60 fps</li><li>Range: 12 km</li><li>Flight time: up to 42 minutes</li></ul>",
          "Corvid Drone C3 flight time", "C3 flight time 55 minutes"),
    _Spec("corvid-c2", "Corvid Drone C2 flight time review",
          "Corvid Drone C2 flight time and battery review.",
          "<p>In our tests the Corvid Drone C2 flight time was 31 minutes per battery.</p>",
          "Corvid Drone C2 flight time", "Corvid Drone C3 flight time 25 minutes"),
    _Spec("tamsin-bay", "Tamsin Bay lighthouse",
          "The Tamsin Bay lighthouse guards the northern reef.",
          "<p>Tamsin Bay lighthouse was first lit in 1874 and automated in 1991. "
          "The tower rises 38 metres above the rock. Visitors may climb it in summer.</p>",
          "Tamsin Bay lighthouse height", "Tamsin Bay lighthouse height 60 metres"),
    _Spec("tamsin-point", "Tamsin Point lighthouse height and visits",
          "Tamsin Point lighthouse height: 22 metres.",
          "<p>The Tamsin Point lighthouse height is 22 metres, and the Bay light is its larger cousin.</p>",
          "Tamsin Point lighthouse height", "Tamsin Bay lighthouse 45 metres"),
    _Spec("oakridge-2026", "Oakridge Film Festival 2026 programme",
          "Oakridge Film Festival 2026 programme announced.",
          "<p>The Oakridge Film Festival 2026 programme has 84 films from 31 countries.</p>"
          "<p>The festival opens on 2 October with The Salt Road, directed by Lena Park. "
          "Closing night belongs to a restored silent classic.</p>",
          "Oakridge Film Festival 2026 opening film", "opening film Night Ferry"),
    _Spec("oakridge-2025", "Oakridge Film Festival 2025 opening film",
          "Oakridge Film Festival 2025 opening film: Glass Orchard.",
          "<p>The Oakridge Film Festival 2025 opening film was Glass Orchard by Tomas Reyes.</p>",
          "Oakridge Film Festival opening film", "Oakridge 2026 opening film Blue Hour"),
    _Spec("rivet-2", "Rivet 2.0 is here",
          "Rivet 2.0 brings a new scheduler and a new license.",
          "<p>Rivet 2.0 rewrites the scheduler and cuts memory use in half.</p>"
          "<p>Starting with this release, Rivet is distributed under the Apache License 2.0.</p>",
          "Rivet 2.0 license", "Rivet 2.0 license GPL"),
    _Spec("rivet-1", "Rivet 1.8 license and FAQ",
          "Rivet 1.8 license: MIT.",
          "<p>Rivet 1.8 license: the MIT license applies to all 1.x releases.</p>",
          "Rivet license", "Rivet 2.0 license BSD"),
    _Spec("halden-pass", "Halden Pass",
          "Halden Pass: road, elevation and opening season.",
          "<p>Halden Pass links the two valleys of the Ostmark range.</p>"
          "<dl><dt>Elevation</dt><dd>2,140 m</dd><dt>Open</dt><dd>June to October</dd></dl>",
          "Halden Pass elevation", "Halden Pass elevation 3,000 m"),
    _Spec("halden-ridge", "Halden Ridge elevation",
          "Halden Ridge elevation 1,800 m.",
          "<p>Halden Ridge elevation is 1,800 m at the summit cairn.</p>",
          "Halden Ridge elevation", "Halden Pass elevation 1,200 m"),
    _Spec("phathewada-park", "ค่าเข้าชม อุทยานผาเทวดา",
          "ค่าเข้าชม อุทยานผาเทวดา ชาวไทย ชาวต่างชาติ",
          "<p>อุทยานผาเทวดาเปิดให้เข้าชมทุกวัน ตั้งแต่ 06.00 ถึง 18.00 น.</p>"
          "<table><tr><th>ผู้เข้าชม</th><th>ผู้ใหญ่</th><th>เด็ก</th></tr>"
          "<tr><td>ชาวไทย</td><td>40 บาท</td><td>20 บาท</td></tr>"
          "<tr><td>ชาวต่างชาติ</td><td>200 บาท</td><td>100 บาท</td></tr></table>",
          "ค่าเข้าชม อุทยานผาเทวดา ชาวต่างชาติ", "ชาวต่างชาติ 400 บาท", "th"),
    _Spec("phathewi-park", "ค่าเข้าชม อุทยานผาเทวี ชาวต่างชาติ",
          "ค่าเข้าชม อุทยานผาเทวี ชาวต่างชาติ 300 บาท",
          "<p>ค่าเข้าชมอุทยานผาเทวี ชาวต่างชาติ 300 บาท ชาวไทย 60 บาท</p>",
          "ค่าเข้าชม อุทยานผาเทวี", "อุทยานผาเทวดา ชาวต่างชาติ 150 บาท", "th"),
    _Spec("mekong-run-2569", "งานวิ่งมาราธอนริมโขง 2569",
          "งานวิ่งมาราธอนริมโขง 2569 รับสมัครแล้ว",
          "<p>งานวิ่งมาราธอนริมโขงปีนี้ใช้เส้นทางเลียบแม่น้ำโขงตลอดสาย</p>"
          "<p>ค่าสมัครประเภทมาราธอน 900 บาท ประเภทฮาล์ฟมาราธอน 700 บาท ปิดรับสมัครวันที่ 30 กันยายน 2569</p>",
          "งานวิ่งมาราธอนริมโขง 2569 ค่าสมัคร", "ค่าสมัคร 1,500 บาท", "th"),
    _Spec("mekong-run-2568", "งานวิ่งมาราธอนริมโขง 2568 ค่าสมัคร",
          "งานวิ่งมาราธอนริมโขง 2568 ค่าสมัคร 800 บาท",
          "<p>งานวิ่งมาราธอนริมโขง 2568 ค่าสมัครประเภทมาราธอน 800 บาท</p>",
          "งานวิ่งมาราธอนริมโขง ค่าสมัคร", "ริมโขง 2569 ค่าสมัคร 650 บาท", "th"),
    _Spec("kora-k14", "รีวิว แล็ปท็อป Kora K14",
          "รีวิว แล็ปท็อป Kora K14 สเปก น้ำหนัก แบตเตอรี่",
          "<p>แล็ปท็อป Kora K14 บางเบาและเงียบ</p>"
          "<table><tr><th>สเปก</th><th>Kora K14</th></tr><tr><td>ซีพียู</td><td>8 คอร์</td></tr>"
          "<tr><td>น้ำหนัก</td><td>1.3 กก.</td></tr><tr><td>หน้าจอ</td><td>14 นิ้ว</td></tr></table>",
          "แล็ปท็อป Kora K14 น้ำหนัก", "น้ำหนัก 2.1 กก.", "th"),
    _Spec("kora-k13", "แล็ปท็อป Kora K13 น้ำหนัก",
          "แล็ปท็อป Kora K13 น้ำหนัก 1.5 กก.",
          "<p>แล็ปท็อป Kora K13 น้ำหนัก 1.5 กก. หน้าจอ 13 นิ้ว</p>",
          "แล็ปท็อป Kora K13 น้ำหนัก", "Kora K14 น้ำหนัก 0.9 กก.", "th"),
    _Spec("samwa-market", "ตลาดน้ำคลองสามวา",
          "ตลาดน้ำคลองสามวา ของกิน การเดินทาง เวลาเปิดปิด",
          "<p>ตลาดน้ำคลองสามวาเป็นตลาดริมคลองที่มีอาหารพื้นบ้านมากมาย</p>"
          "<p>ตลาดเปิดทุกวันเสาร์และอาทิตย์ เวลา 08.00–16.00 น. มีที่จอดรถฟรี</p>",
          "เวลาเปิดปิด ตลาดน้ำคลองสามวา", "เวลา 05.00–22.00 น.", "th"),
    # --- held out, second batch: written after all tuning, measured once, left as measured ---------
    _Spec("harlow-tower", "Harlow Tower",
          "Harlow Tower, the city's tallest building.",
          "<div>Harlow Tower opened in 2011 on the old dock site.<br>Its spire tops out at 212 metres, "
          "making it the tallest building in the county.<br>It was designed by architect Ines Duarte.</div>",
          "Harlow Tower height", "Harlow Tower 300 metres"),
    _Spec("nova-compare", "Nova 7 vs Nova 8: specs compared",
          "Nova 7 vs Nova 8 compared: battery, screen, price.",
          "<p>Is the Nova 8 worth the upgrade? We put the two phones side by side.</p>"
          "<table><tr><th>Spec</th><th>Nova 7</th><th>Nova 8</th></tr>"
          "<tr><td>Battery</td><td>4,000 mAh</td><td>4,500 mAh</td></tr>"
          "<tr><td>Screen</td><td>6.1 inch</td><td>6.3 inch</td></tr></table>",
          "Nova 8 battery", "Nova 8 battery 9,000 mAh"),
    _Spec("ramwong-concert", "คอนเสิร์ตรำวงย้อนยุค 2570",
          "คอนเสิร์ตรำวงย้อนยุค 2570 วันที่ และสถานที่",
          "<p>คอนเสิร์ตรำวงย้อนยุคกลับมาอีกครั้งที่สวนลุมพินี</p>"
          "<p>จัดแสดงวันที่ 15 ม.ค. 2570 เวลา 18.00 น. บัตรราคา 500 บาท</p>",
          "คอนเสิร์ตรำวงย้อนยุค 2570 วันที่", "วันที่ 1 ก.พ. 2570", "th"),
    _Spec("greyfield-visit", "Visiting Greyfield Library",
          "Visiting Greyfield Library: opening hours, fees and access.",
          "<p>Greyfield Library is on Mill Street, next to the bus station.</p>"
          "<ul><li>Printing: $0.10 per page</li><li>Wi-Fi: free</li><li>Meeting room: $15 per hour</li></ul>"
          '<p class="sr-only">Greyfield Library parking fee $4</p>',
          "Greyfield Library parking", "parking fee $6"),
    _Spec("pink-line", "รถไฟฟ้าสายสีชมพู",
          "รถไฟฟ้าสายสีชมพู เส้นทาง สถานี และค่าโดยสาร",
          "<p>รถไฟฟ้าสายสีชมพูวิ่งจากแคราย ถึง มีนบุรี รวม 30 สถานี</p>"
          "<p>ค่าโดยสารรถไฟฟ้าสายสีชมพูอยู่ระหว่าง 15–45 บาท ตามระยะทาง</p>",
          "ราคาตั๋ว รถไฟฟ้าสายสีชมพู", "ตั๋ว 100 บาท", "th"),
)
# fmt: on

_PRIVATE = Document(
    url=f"http://{PRIVATE_HOST}/pages/q/intranet",
    title="Internal price list: Veltra Orion X5 launch price, Quillon Tablet Q7 battery capacity, Sable OS 14 RAM",
    site_name="Quality",
    lang="en",
    date=None,
    authority=2,
    quality=1.2,
    snippet="Veltra Orion X5 launch price $499 internal. Quillon Tablet Q7 battery capacity 7,777 mAh. "
    "Sable OS 14 minimum RAM 3 GB. Harbor Lights Festival 2026 dates 2 to 4 August.",
    body=("internal",),
)


def _document(spec: _Spec) -> Document:
    host = spec.slug.split("-")[0]
    return Document(
        url=f"http://{host}.{QUALITY_SITE}/pages/q/{spec.slug}", title=spec.title, site_name="Quality",
        lang=spec.lang, date=None, authority=1, quality=0.6, snippet=spec.snippet, body=(spec.snippet,),
    )  # fmt: skip


QUALITY_DOCUMENTS: tuple[Document, ...] = (*(_document(s) for s in _SPECS), _PRIVATE)
QUALITY_PAGES: dict[str, bytes] = {
    f"/pages/q/{s.slug}": _page(s.title, s.lang, s.main, words=s.words, wrong=s.wrong, style=i).encode()
    for i, s in enumerate(_SPECS)
}

CASES: tuple[QualityCase, ...] = (
    QualityCase("Veltra Orion X5 launch price", (("$749",),), "the price sentence, not the lead; X4 is a decoy"),
    QualityCase("Veltra Orion X6 launch price", (), "no X6 page: X5 and X4 only share words"),
    QualityCase("Harbor Lights Festival 2026 dates", (("14 to 16 August 2026",),), "2025 edition is a decoy"),
    QualityCase("Harbor Lights Festival 2027 dates", (), "no 2027 edition anywhere"),
    QualityCase("Kestrel CLI 3.2 release date", (("March 4, 2026",),), "a list item; 3.1 is a decoy"),
    QualityCase("Kestrel CLI 4.0 release date", (), "no 4.0 page"),
    QualityCase("Lumen Bay ferry adult fare", (("Adult", "$12.50"),), "a table row with its header"),
    QualityCase("Northwind Museum opening hours Sunday", (("Sunday", "10:00 to 16:00"),), "a definition pair"),
    QualityCase("Pell River Bridge length", (("1,284 metres",),), "buried sentence; Pell Creek is a decoy"),
    QualityCase("Quillon Tablet Q7 battery capacity", (("Battery", "8,200 mAh"),), "spec table; Q6 decoy"),
    QualityCase("Quillon Tablet Q9 battery capacity", (), "no Q9 page"),
    QualityCase("Marlow City Marathon 2026 registration fee", (("$85",),), "2025 edition is a decoy"),
    QualityCase("Marlow City Marathon 2027 registration fee", (), "no 2027 edition"),
    QualityCase("Sable OS 14 minimum RAM", (("6 GB",),), "a list item; Sable OS 13 is a decoy"),
    QualityCase("Greyfield Library card replacement fee", (("Replacement card", "$3"),), "a list item"),
    QualityCase("Ardent Labs CEO", (("Mira Okonkwo",),), "Ardent Lab Supplies is a similar name"),
    QualityCase("ค่าโดยสาร เรือด่วนสายลำพู ผู้ใหญ่", (("ผู้ใหญ่", "25 บาท"),), "Thai table row; ลำพอง decoy"),
    QualityCase("เทศกาลโคมไฟเชียงดาว 2569 วันจัดงาน", (("12–14 พฤศจิกายน 2569",),), "Thai; 2568 decoy"),
    QualityCase("เทศกาลโคมไฟเชียงดาว 2026 วันจัดงาน", (("12–14 พฤศจิกายน 2569",),), "Gregorian year, BE page"),
    QualityCase("เทศกาลโคมไฟเชียงดาว 2570 วันจัดงาน", (), "no 2570 edition"),
    QualityCase("สมาร์ทโฟน Nava N3 แบตเตอรี่", (("แบตเตอรี่", "5,000 mAh"),), "Thai spec table; N2 decoy"),
    QualityCase("สมาร์ทโฟน Nava N5 แบตเตอรี่", (), "no N5 page"),
    QualityCase("ค่าธรรมเนียม ทำบัตร ห้องสมุดเมืองบางพระ", (("50 บาท",),), "Thai list item"),
    QualityCase("สะพานข้ามแม่น้ำสายหมอก ความยาว", (("1,120 เมตร",),), "zero-width spaces; สายหมอกน้อย decoy"),
    QualityCase("Brightwater Aquarium ticket price child", (("Child", "$14"),), "held out: table with header"),
    QualityCase("Corvid Drone C3 flight time", (("42 minutes",),), "held out: list item; C2 decoy"),
    QualityCase("Corvid Drone C4 flight time", (), "held out: no C4 page"),
    QualityCase("Tamsin Bay lighthouse height", (("38 metres",),), "held out: Tamsin Point is a similar name"),
    QualityCase("Oakridge Film Festival 2026 opening film", (("The Salt Road",),), "held out: 2025 decoy"),
    QualityCase("Oakridge Film Festival 2024 opening film", (), "held out: no 2024 edition"),
    QualityCase("Rivet 2.0 license", (("Apache",),), "held out: Rivet 1.8 decoy, 2.0 also in the licence"),
    QualityCase("Halden Pass elevation", (("Elevation", "2,140 m"),), "held out: definition; Halden Ridge"),
    QualityCase("ค่าเข้าชม อุทยานผาเทวดา ชาวต่างชาติ", (("ชาวต่างชาติ", "200 บาท"),), "held out: Thai table"),
    QualityCase("งานวิ่งมาราธอนริมโขง 2026 ค่าสมัคร", (("900 บาท",),), "held out: Gregorian query, BE page"),
    QualityCase("งานวิ่งมาราธอนริมโขง 2571 ค่าสมัคร", (), "held out: no 2571 edition"),
    QualityCase("แล็ปท็อป Kora K14 น้ำหนัก", (("น้ำหนัก", "1.3 กก."),), "held out: Thai spec table; K13"),
    QualityCase("เวลาเปิดปิด ตลาดน้ำคลองสามวา", (("08.00–16.00",),), "held out: Thai opening hours"),
    QualityCase("Harlow Tower height", (("212 metres",),), "held out 2: 'tall' and 'tops out', lines by <br>"),
    QualityCase("Who designed Harlow Tower", (("Ines Duarte",),), "held out 2: a name, no 'designer' word"),
    QualityCase("Nova 8 battery", (("Nova 8", "4,500 mAh"),), "held out 2: a comparison table, both models"),
    QualityCase("คอนเสิร์ตรำวงย้อนยุค 2570 วันที่", (("15 ม.ค. 2570",),), "held out 2: Thai month abbreviation"),
    QualityCase("Greyfield Library parking fee", (), "held out 2: other fees only; the parking fee is hidden"),
    QualityCase("ราคาตั๋ว รถไฟฟ้าสายสีชมพู", (("15–45 บาท",),), "held out 2: ตั๋ว asked, ค่าโดยสาร written"),
    QualityCase("Lumen Bay ferry fares 2019", (), "held out 2: no 2019 fares anywhere"),
)
