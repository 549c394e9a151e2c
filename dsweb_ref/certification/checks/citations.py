"""Seed 002: code attaches the filtered source links at the end of the answer.

Enforced (capability ``evidence-cite``: ``evidence_cite`` hands over the agent layer's answer and the evidence
values of the conversation's calls): "ผลลัพธ์ทุก evidence line รักษา source URL ไว้ Agent layer สามารถสังเคราะห์
คำตอบเป็นภาษาไทย แล้วโค้ดแนบ filtered source links ท้ายคำตอบ" (every evidence line keeps its source URL; the agent
layer may write the answer in Thai, then code attaches the filtered source links at the end of the answer,
instead of hoping the 2B model remembers and types every URL right). So the answer comes first, as written; after
it stands a link to each source URL of the values (the sources that gave evidence), whichever call found it
(a source two calls found may be linked once or twice: the seed filters links, it does not say how often one
stands); a URL the values name only as a result the pipeline refused or left out is not linked; and a title's
brackets or a URL's parentheses never change where a link points (no link is written to a URL a title spells out).

Left open (accepted either way): the Markdown form (``[title](url)`` with the parenthesis written ``%29``, ``\\)``
or inside ``<url>``; an autolink ``<url>``; a bare URL; a reference definition), any list or none, a heading or
none, titles shown or not, the order of the links, trailing whitespace of the answer, what is attached when no
source is left, links to URLs the values do not name at all, and a title's URL shown as text (which a renderer
may autolink).
"""

from __future__ import annotations

import html
import re
import string
from typing import Any

from ..cases import Case
from ._base import CALL_TIMEOUT, CheckContext, check, require
from .evidence import resource_key

__all__ = ["CITE_CASES", "UNTITLED", "cite_problems", "evidence_value", "markdown_links"]

CITE = "evidence-cite"
_PUNCTUATION = frozenset(string.punctuation)  # what a backslash escapes in CommonMark
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^<>\x00-\x20]*)>")
_DEFINITION = re.compile(r"^ {0,3}\[(?!\^)((?:[^\[\]\\]|\\.)+)\]:[ \t]*(<[^<>\n]*>|\S+)[^\n]*$", re.MULTILINE)
# A bare URL as GitHub-flavoured Markdown links it: after a start, a space or one of *_~(, up to a space or <.
_BARE = re.compile(r"(?:^|(?<=[\s*_~(]))https?://[^\s<]+", re.IGNORECASE)
_TRAILING = "?!.,:*_~'\""
_PAREN_ESCAPE = re.compile(r"%2([89])", re.IGNORECASE)


def _unescape(text: str) -> str:
    """CommonMark's backslash escapes and entity references in a link destination."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in _PUNCTUATION:
            out.append(text[i + 1])
            i += 2
            continue
        out.append(text[i])
        i += 1
    return html.unescape("".join(out))


# How far one link's destination or title is read: a target's answer is untrusted, and reading each one to the
# end would take quadratic time; the rows' links are far shorter.
_SCAN = 2048


def _closers(text: str) -> dict[int, int]:
    """For each ``[`` whose link text closes, the index of its ``]`` (brackets nest; an escape skips a character
    and a blank line ends every open text), found in one pass so hostile text reads in linear time."""
    found: dict[int, int] = {}
    opened: list[int] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            i += 2
            continue
        if text.startswith("\n\n", i):
            opened.clear()
        elif char == "[":
            opened.append(i)
        elif char == "]" and opened:
            found[opened.pop()] = i
        i += 1
    return found


def _skip_space(text: str, i: int) -> int:
    newline = False
    while i < len(text) and text[i] in " \t\n":
        if text[i] == "\n":
            if newline:
                break
            newline = True
        i += 1
    return i


def _destination(text: str, start: int) -> tuple[str | None, int]:
    """The inline link ``(destination "title")`` opening at ``start`` (just past its ``(``): the destination
    and the index past the closing ``)``, or (None, start)."""
    i = _skip_space(text, start)
    if i < len(text) and text[i] == "<":
        close, stop = i + 1, min(len(text), i + _SCAN)
        while close < stop and text[close] not in "<>\n":
            close += 2 if text[close] == "\\" else 1
        if close >= len(text) or text[close] != ">":
            return None, start
        raw, i = text[i + 1 : close], close + 1
    else:
        depth, j = 0, i
        stop = min(len(text), i + _SCAN)
        while j < stop and not (text[j].isspace() or ord(text[j]) < 0x20):
            if text[j] == "\\" and j + 1 < len(text):
                j += 2
                continue
            if text[j] == "(":
                depth += 1
                if depth > 32:  # CommonMark's own limit on nested parentheses in a destination
                    return None, start
            elif text[j] == ")":
                if depth == 0:
                    break
                depth -= 1
            j += 1
        if depth:
            return None, start
        raw, i = text[i:j], j
    after = _skip_space(text, i)
    if after < len(text) and after > i and text[after] in "\"'(":
        closer = ")" if text[after] == "(" else text[after]
        end, stop = after + 1, min(len(text), after + _SCAN)
        while end < stop and text[end] != closer:
            end += 2 if text[end] == "\\" else 1
        if end >= stop:
            return None, start
        after = _skip_space(text, end + 1)
    if after >= len(text) or text[after] != ")":
        return None, start
    return _unescape(raw), after + 1


def _bare(text: str) -> list[str]:
    """Bare http(s) URLs, trimmed as GitHub-flavoured Markdown trims an extended autolink's end."""
    found = []
    for match in _BARE.finditer(text):
        url = match.group(0)
        while True:
            if url and url[-1] in _TRAILING:
                url = url[:-1]
            elif url.endswith(")") and url.count(")") > url.count("("):
                url = url[:-1]
            else:
                break
        found.append(html.unescape(url))
    return found


def markdown_links(text: str) -> tuple[list[str], list[str]]:
    """The link targets in ``text`` (Markdown as CommonMark reads it, with GitHub's bare-URL autolinks): those
    written as links (reference definitions, inline links ``[text](destination "title")``, autolinks
    ``<url>``), then the bare http(s) URLs outside them (a link's text links nothing more). Code spans and raw
    HTML are not read."""
    targets = [_unescape(m.group(2).strip("<>")) for m in _DEFINITION.finditer(text)]
    text = _DEFINITION.sub(" ", text)
    closers = _closers(text)
    plain: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in _PUNCTUATION:
            plain.append(" ")  # an escaped character starts nothing
            i += 2
            continue
        if char == "<" and (auto := _AUTOLINK.match(text, i)):
            targets.append(auto.group(1))
            plain.append(" ")
            i = auto.end()
            continue
        if char == "[":
            end = closers.get(i, -1)
            if end > i and end + 1 < len(text) and text[end + 1] == "(":
                target, after = _destination(text, end + 2)
                if target is not None:
                    targets.append(target)
                    plain.append(" ")
                    i = after
                    continue
        plain.append(char)
        i += 1
    return targets, _bare("".join(plain))


def link_key(url: str) -> str:
    """A link target keyed as the URL it names: RFC 3986's equivalences (scheme and host case, escapes of
    unreserved characters) and a parenthesis written as its escape (%28, %29), which Markdown needs."""
    return resource_key(_PAREN_ESCAPE.sub(lambda m: "(" if m.group(1) == "8" else ")", url))


def evidence_value(query: str, sources: list[tuple[str, str]], *, dropped: tuple[str, ...] = (),
                   rejected: tuple[str, ...] = ()) -> dict[str, Any]:
    """An evidence value (schemas/evidence_search.output.schema.json) whose ``sources`` (URL, title) each gave
    one evidence line; ``dropped`` results the pipeline refused, ``rejected`` pages it read and left out."""
    evidence = [{"url": url, "title": title, "text": f"{query.capitalize()}: see {title or 'the page'}.",
                 "from": "page"} for url, title in sources]
    tried: dict[str, Any] = {
        "results": len(sources) + len(dropped) + len(rejected),
        "dropped": [{"url": url, "reason": "blocked: not a public address"} for url in dropped],
        "candidates": len(sources) + len(rejected),
        "fetched": len(sources) + len(rejected),
        "fetch_failed": 0,
        "search_error": None,
    }
    if rejected:
        tried["rejected"] = [{"url": url, "reason": "names another model"} for url in rejected]
    return {"queries": [{"query": query, "needs_retry": False, "evidence": evidence, "tried": tried}],
            "needs_retry": False, "sources": [{"url": url, "title": title} for url, title in sources]}


def _case(name: str, catches: str, answer: str, values: list[dict[str, Any]], *, in_titles: tuple[str, ...] = ()
          ) -> Case:
    """``in_titles``: link targets written in a source's title (never to be linked)."""
    return Case(name, catches, {"answer": answer, "values": values, "in_titles": in_titles})


_PILOT = "https://harbour.example.org/pilot-fees"
_BERTH = "https://port-office.example.net/berths?year=2026&unit=hour"
_FERRY = "https://lumen-ferries.example.com/fares"
_INJECTED = "https://harbour-dues.example.net/other"
_UNTITLED_URL = "https://pilot-notices.example.org/2026/tariff"
CITE_CASES = (
    _case("links-follow-the-answer",
          "the answer returned without its source links, the links put before it, or the answer's own text changed "
          "(its Markdown escaped or rewritten)",
          "ค่านำร่องของท่าเรือ Harbour Bay คือ **50 บาท**ต่อตัน และค่าจอดเรือคิด_รายชั่วโมง_\n\n",
          [evidence_value("harbour pilot fees", [(_PILOT, "Pilot fees"), (_BERTH, "Berth dues")])]),
    _case("each-source-linked",
          "only one call's sources linked (a source the second call alone found left without a link)",
          "ค่าโดยสารเรือเฟอร์รี่ผู้ใหญ่คือ 12 ดอลลาร์",
          [evidence_value("harbour pilot fees", [(_PILOT, "Pilot fees"), (_FERRY, "Ferry fares")]),
           evidence_value("lumen bay ferry fare", [(_FERRY, "Ferry fares"), (_BERTH, "Berth dues")])]),
    _case("refused-and-left-out-results-not-linked",
          "linking every URL the value names: results the pipeline refused (a private address) or read and left out",
          "ค่านำร่องคือ 50 บาทต่อตัน",
          [evidence_value("harbour pilot fees", [(_PILOT, "Pilot fees")], dropped=("http://10.0.0.5/harbour-fees",),
                          rejected=("https://veltra-phones.example.com/x2-fees",))]),
    _case("brackets-in-a-title",
          "a title pasted into an inline Markdown link as it is: its ] ends the link text early and the rest "
          "links where the title says",
          "ค่าธรรมเนียมท่าเรือปี 2569",
          [evidence_value("harbour dues", [(_PILOT, f"Harbour dues]({_INJECTED}) [archive"),
                                           (_FERRY, "[PDF] Ferry fares 2026")])],
          in_titles=(_INJECTED,)),
    _case("parentheses-in-a-url",
          "a URL pasted into an inline Markdown link as it is: an unbalanced ) ends the link early, so it points "
          "elsewhere",
          "ค่าธรรมเนียมท่าเรือปี 2569",
          [evidence_value("harbour dues", [("https://harbour.example.org/dues)2026", "Dues"),
                                           ("https://harbour.example.org/wiki/Pilot_(maritime)", "Pilot")])]),
)
# From an outside hunt (M2): a result with no title still gave evidence, so it is a filtered source too (a table of
# its own, run after CITE_CASES).
UNTITLED = (
    _case("untitled-source",
          "links attached only for sources with a title: a source whose result had none (it gave evidence) left "
          "without a link, so the model has to type its URL",
          "ค่านำร่องคือ 50 บาทต่อตัน",
          [evidence_value("harbour pilot fees", [(_PILOT, "Pilot fees"), (_UNTITLED_URL, "")])]),
)


def cite_problems(case: Case, ok: bool, brief: str, text: str | None) -> list[str]:
    """What is wrong with ``text``, the answer to ``case`` (empty: nothing)."""
    if not ok or text is None:
        return [f"expected the answer with its links, got {brief}"]
    answer = str(case["answer"]).rstrip()
    if not text.startswith(answer):
        return [f"the answer does not come first as written: {text[:160]!r}"]
    written, bare = markdown_links(text[len(answer):])
    links = [link_key(target) for target in (*written, *bare)]
    sources = list(dict.fromkeys(str(s["url"]) for v in case["values"] for s in v["sources"]))
    problems = []
    for url in sources:
        count = links.count(link_key(url))
        if not count:  # a source two calls found may be linked twice: the seed says "filtered", not "once"
            problems.append(f"{url} is not linked after the answer")
    elsewhere = [str(item["url"]) for v in case["values"] for q in v["queries"]
                 for item in (*q["tried"]["dropped"], *q["tried"].get("rejected", ()))]
    for url in elsewhere:
        if link_key(url) in links and url not in sources:
            problems.append(f"{url} is linked, but the values name it only as a result the pipeline refused or "
                            "left out")
    # A URL a title spells out may show as text, which a renderer may autolink; a link written to it may not.
    for url in case["in_titles"]:
        if link_key(url) in {link_key(target) for target in written}:
            problems.append(f"a link points to {url}, which only a source's title names")
    return problems


@check(
    "citations.appended",
    "code attaches each filtered source link after the answer; a title or URL never bends a link",
    seed="002",
    requires=(CITE,),
    provider="messages",
    rule="Seed 002: every evidence line keeps its source URL; the agent layer may write the answer (in Thai), then "
    "code attaches the filtered source links at the end of the answer instead of hoping a small model remembers "
    "and types every URL right. The answer comes first, as written (its trailing whitespace may go); after it, "
    "each source URL of the evidence values (the sources that gave evidence, with a title or none) is linked, "
    "whichever call found "
    "it (once or, for a source two calls found, twice: the seed does not say); a URL the values name only as a "
    "result the pipeline refused or left out is not linked; a title's "
    "brackets and a URL's parentheses never change where a link points (no link is written to a URL a title "
    "spells out). Any Markdown form "
    "(an inline link, an autolink, a bare URL, a reference definition; a list or none) is accepted.",
    cases=(*CITE_CASES, *UNTITLED),
    profiles=("seed-002-citations",),
)
async def appended(ctx: CheckContext) -> None:
    wrong: list[str] = []
    for case in (*CITE_CASES, *UNTITLED):
        params = {"answer": case["answer"], "values": list(case["values"])}
        outcome = await ctx.target.start_call("evidence_cite", params).outcome(CALL_TIMEOUT)
        found = cite_problems(case, outcome.ok, outcome.brief(), outcome.text)
        if found:
            wrong.append(f"{case.name}: " + "; ".join(found))
    require(not wrong, "; ".join(wrong)[:1500], rows=wrong)
