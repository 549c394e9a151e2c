"""A read-only hunt (S2) over web_fetch on the Fetch API and Messages search found wrong readings the suite certified;
the rows added for them reject each. Seed 001: 'The provider keeps the requested URL, returns the Markdown body';
'the shared result has no title field'; 'The shared fetch result and its consumers stay unchanged'; Harness 'retains
... bounded tool output'; Messages search 'extracts sources and citation excerpts but discards the generated answer'.

- S2-1: web_fetch's output cut at a UTF-8 byte budget, the flag still counted in characters: a CJK page within the
  bound in characters came back cut to a third, truncated false (BOUNDS served ASCII pages only).
- S2-2: the other half: the flag counted in UTF-8 bytes, the cut in characters: a whole CJK page flagged truncated.
- S2-3: a Fetch API 200 whose content is null read as an empty page.
- S2-4: the API's title shown to the model as a '# title' heading in the text only (the rows compared the value).
- S2-5: a URL the Messages answer cites that no web_search_result lists made a source of its own.
- S2-6: a Messages answer paused (stop_reason pause_turn) after its server_tool_use, before any
  web_search_tool_result, read as a search that found nothing.

Each wrong reading is made in the reference as the hunt made it and fails exactly its rows; the reference passes
them, and the readings the seeds leave open (a bound counted in bytes for both cut and flag, another framing of the
text, continuing a paused turn) pass too."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import anthropic
import anthropic._models
import pytest

from dsweb_ref._types import FetchResult, Source
from dsweb_ref.certification.checks import fetch, mapping, outcomes
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers import deepseek_fetch_api, deepseek_official
from dsweb_ref.tools import _fetch_render, web_fetch

from ._readings import (
    failing_rows,
    fails_exactly,
    fails_exactly_shown,
    keep_rows,
    only_fetch_table,
    passes_rows,
    patch_reading,
)
from .conftest import run

MAPPING, MESSAGES, CODES = "fetch.api.mapping", "search.messages.mapping", "errors.codes"
SHOWN = r"(?:^|\] )([^:\[\]]+?): "  # the rows of errors.codes a reason names ("<row>: ..." after "[messages] ")

CJK_WITHIN = "a CJK page of 119,998 characters, 303,990 bytes of UTF-8"
EMOJI_WITHIN = "an emoji page of 80,000 characters, 279,950 bytes of UTF-8"
CJK_OVER = "a CJK page of 250,000 characters"
WITHIN = {CJK_WITHIN, EMOJI_WITHIN}
NULL, NUMBER, NO_CONTENT = "content null", "content a number", "no content field"
NO_HEADING, OTHER_TITLE = "a page whose Markdown has no heading", "a title other than the page's heading"
CITED_ELSEWHERE = "a citation of a URL no result lists"
PAUSED = "200 paused before its search result"


# --- S2-1, S2-2: the bound in UTF-8 bytes for the cut or for the flag --------------------------------------------


def test_the_new_pages_are_within_the_bound_in_characters_and_over_it_in_bytes() -> None:
    from dsweb_ref.settings import ToolSettings

    bound = ToolSettings().fetch_max_output_chars
    head = len(f"Fetched {fetch.PAGE} (HTTP 200)\n\n") + len(_fetch_render.TRUNCATION_NOTE)
    for case in fetch.BOUNDS:
        if "script" not in case.params:
            continue
        page = fetch.long_page(case["chars"], case["script"])
        assert len(page) == case["chars"] and len(page.encode()) > bound, case.name
        assert (len(page) + head < bound) == (case.name in WITHIN), case.name
        if case.name in WITHIN:  # within a bound counted in UTF-16 units too (a JavaScript string's length)
            assert len(page.encode("utf-16-le")) // 2 + head < bound, case.name
            assert f"{len(page.encode()):,} bytes" in case.name, case.name


def byte_render(flag_in_bytes: bool) -> Any:
    """The hunt's render_fetch: the text cut at a UTF-8 byte budget (on a character boundary); the flag counted in
    characters as before (``flag_in_bytes`` False, the hunt's reading) or by the same byte budget (an open one)."""

    def render(result: FetchResult, body: str, kind: Any, *, source_truncated: bool,
               max_chars: int) -> tuple[str, dict[str, Any]]:
        head = f"Fetched {result.url} (HTTP {result.status_code})\n\n"
        prefix = head + body
        over = len(prefix.encode()) > max_chars if flag_in_bytes else len(prefix) > max_chars
        truncated = result.truncated or source_truncated or over
        note = _fetch_render.TRUNCATION_NOTE if truncated else ""
        raw = prefix.encode("utf-8")
        budget = max_chars - len(note.encode("utf-8"))
        if len(raw) <= budget:
            text, shown = prefix + note, body
        else:  # the cut: in bytes, on a character boundary
            text = raw[:budget].decode("utf-8", errors="ignore") + note
            shown = text[len(head):len(text) - len(note)] if note else text[len(head):]
        value = {"url": result.url, "status_code": result.status_code,
                 "body": {"kind": kind, "content": shown}, "truncated": truncated}
        return text, value

    return render


def test_the_reference_passes_the_non_ascii_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    only_fetch_table("BOUNDS", monkeypatch)
    passes_rows(fetch, "BOUNDS", MAPPING, (CJK_WITHIN, EMOJI_WITHIN, CJK_OVER), monkeypatch)


def test_a_byte_cut_flagged_in_characters_fails_exactly_the_pages_within_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (S2-1): the cut at 200,000 bytes of UTF-8, the flag in characters: a CJK page of 119,998 characters
    # shown as 66,652, an emoji page of 80,000 as 50,000, each flagged whole
    only_fetch_table("BOUNDS", monkeypatch)
    monkeypatch.setattr(web_fetch, "render_fetch", byte_render(flag_in_bytes=False))
    fails_exactly(fetch, "BOUNDS", MAPPING, WITHIN, monkeypatch)


def test_a_byte_flag_with_a_character_cut_fails_exactly_the_pages_within_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (S2-2): the flag by the text's UTF-8 size, the cut in characters: the whole page flagged truncated
    only_fetch_table("BOUNDS", monkeypatch)
    patch_reading(_fetch_render, "render_fetch", "len(prefix) > max_chars", "len(prefix.encode('utf-8')) > max_chars",
                  monkeypatch, web_fetch)
    fails_exactly(fetch, "BOUNDS", MAPPING, WITHIN, monkeypatch)


def test_a_bound_counted_in_bytes_for_the_cut_and_the_flagpasses_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: seed 001 fixes no bound, so one of 200,000 UTF-8 bytes, the cut flagged as such, is as right as the
    # reference's 200,000 characters
    only_fetch_table("BOUNDS", monkeypatch)
    monkeypatch.setattr(web_fetch, "render_fetch", byte_render(flag_in_bytes=True))
    assert failing_rows(fetch, "BOUNDS", MAPPING, monkeypatch) == set()


def test_a_cut_keeping_the_end_fails_the_page_over_the_bound_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the non-ASCII page over the bound judged as the ASCII ones: a cut keeping its end instead of its start
    only_fetch_table("BOUNDS", monkeypatch)
    keep_rows(fetch, "BOUNDS", (CJK_WITHIN, EMOJI_WITHIN, CJK_OVER), monkeypatch)
    patch_reading(_fetch_render, "render_fetch",
                  "text, shown = prefix[:keep] + TRUNCATION_NOTE, body[: max(0, keep - len(head))]",
                  "text, shown = head + body[-(keep - len(head)):] + TRUNCATION_NOTE, body[-(keep - len(head)):]",
                  monkeypatch, web_fetch)
    assert failing_rows(fetch, "BOUNDS", MAPPING, monkeypatch) == {CJK_OVER}


# --- S2-3: a null content read as an empty page ------------------------------------------------------------------

CONTENT = 'content = data.get("content")'


def test_the_reference_fails_the_null_and_number_contents(monkeypatch: pytest.MonkeyPatch) -> None:
    only_fetch_table("FAILURES", monkeypatch)
    passes_rows(fetch, "FAILURES", MAPPING, (NULL, NUMBER), monkeypatch)


def test_null_read_as_an_empty_page_fails_exactly_the_null_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (S2-3): "content" required, its null value defaulted to "" (a TypeScript `data.content ?? ""` after an
    # `in` test): the 200 becomes an empty page
    only_fetch_table("FAILURES", monkeypatch)
    patch_reading(deepseek_fetch_api.DeepSeekFetchApi, "fetch", CONTENT,
                  'content = "" if "content" in data and data["content"] is None else data.get("content")', monkeypatch)
    fails_exactly(fetch, "FAILURES", MAPPING, NULL, monkeypatch)


def test_a_falsy_content_defaulted_fails_the_null_number_and_missing_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: `data.get("content") or ""`: a missing, null or zero content all read as an empty page
    only_fetch_table("FAILURES", monkeypatch)
    patch_reading(deepseek_fetch_api.DeepSeekFetchApi, "fetch", CONTENT, 'content = data.get("content") or ""',
                  monkeypatch)
    fails_exactly(fetch, "FAILURES", MAPPING, {NULL, NUMBER, NO_CONTENT}, monkeypatch)


# --- S2-4: the API's title in the text -----------------------------------------------------------------------------


def test_the_reference_passes_the_title_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    only_fetch_table("MAPPING", monkeypatch)
    passes_rows(fetch, "MAPPING", MAPPING, (NO_HEADING, OTHER_TITLE), monkeypatch)


def _title_in_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hunt's reading: the API's title kept beside the shared result and shown as a heading in the text only."""
    holder: dict[str, str] = {}
    call = deepseek_fetch_api.call_tools_api

    async def keep_title(*args: Any, **kwargs: Any) -> Any:
        data = await call(*args, **kwargs)
        if isinstance(data, dict) and isinstance(data.get("title"), str):
            holder["title"] = data["title"]
        return data

    render = web_fetch.render_fetch

    def titled(result: FetchResult, body: str, kind: Any, **kw: Any) -> tuple[str, dict[str, Any]]:
        text, value = render(result, body, kind, **kw)
        title = holder.pop("title", None)
        if title:
            head = f"Fetched {result.url} (HTTP {result.status_code})\n\n"
            text = text.replace(head, head + f"# {title}\n\n", 1)
        return text, value

    monkeypatch.setattr(deepseek_fetch_api, "call_tools_api", keep_title)
    monkeypatch.setattr(web_fetch, "render_fetch", titled)


def test_the_title_in_the_text_fails_exactly_the_title_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (S2-4): the value unchanged, the text showing '# <the API's title>' above the Markdown (the corpus
    # pages, whose Markdown opens with their title, and the rows titled "T" are not judged on it)
    only_fetch_table("MAPPING", monkeypatch)
    _title_in_text(monkeypatch)
    fails_exactly(fetch, "MAPPING", MAPPING, {NO_HEADING, OTHER_TITLE}, monkeypatch)


def test_a_text_framed_otherwisepasses_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: the text frames the Markdown as it likes (its own header and footer lines), so long as it shows the
    # Markdown as the value holds it and no title of the API's
    only_fetch_table("MAPPING", monkeypatch)
    render = web_fetch.render_fetch

    def framed(result: FetchResult, body: str, kind: Any, **kw: Any) -> tuple[str, dict[str, Any]]:
        text, value = render(result, body, kind, **kw)
        head = f"Fetched {result.url} (HTTP {result.status_code})\n\n"
        return text.replace(head, f"URL: {result.url}\nStatus: 200\n---\n", 1) + "\n--- end of page ---", value

    monkeypatch.setattr(web_fetch, "render_fetch", framed)
    assert failing_rows(fetch, "MAPPING", MAPPING, monkeypatch) == set()


@pytest.mark.parametrize("shown", ["folded", "escaped", "cut"])
def test_a_text_laying_out_or_bounding_the_page_its_own_way_passes_the_mapping_rows(
    shown: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # open (a review, M1 and M2): how the text lays out whitespace (runs of blank lines folded) or escapes the page
    # (HTML-escaped inside a <page> element) is its own, and so is a text bound of its own (the text cut at 100,000
    # characters with a note while the value holds the page whole, its flag false); the value is judged as before
    only_fetch_table("MAPPING", monkeypatch)
    render = web_fetch.render_fetch

    def own(result: FetchResult, body: str, kind: Any, **kw: Any) -> tuple[str, dict[str, Any]]:
        text, value = render(result, body, kind, **kw)
        if shown == "folded":
            return re.sub(r"\n{2,}", "\n", text), value
        if shown == "escaped":
            return f"<page>{html.escape(text)}</page>", value
        return (text[:100_000] + "\n[the text is cut here]" if len(text) > 100_000 else text), value

    monkeypatch.setattr(web_fetch, "render_fetch", own)
    assert failing_rows(fetch, "MAPPING", MAPPING, monkeypatch) == set()


# --- S2-5: a cited URL no result lists made a source ---------------------------------------------------------------


def cited_sources(original: Any) -> Any:
    """The hunt's map_sources: a URL a text block cites that no web_search_result lists appended as a source."""

    def map_sources(data: Any, *, secrets: Any = ()) -> tuple[Source, ...]:
        sources = list(original(data, secrets=secrets))
        seen = {s.url for s in sources}
        for block in data.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                for c in block.get("citations") or []:
                    url = c.get("url") if isinstance(c, dict) else None
                    if isinstance(url, str) and url and url not in seen:
                        seen.add(url)
                        sources.append(Source(url=url, title=c.get("title") or None,
                                              snippet=c.get("cited_text") or None))
        return tuple(sources)

    return map_sources


def test_the_reference_passes_the_cited_elsewhere_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(mapping, "MESSAGES_CASES", MESSAGES, (CITED_ELSEWHERE,), monkeypatch)


def test_cited_urls_made_sources_fail_exactly_the_cited_elsewhere_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (S2-5): sources built from the citations too
    monkeypatch.setattr(deepseek_official, "map_sources", cited_sources(deepseek_official.map_sources))
    fails_exactly(mapping, "MESSAGES_CASES", MESSAGES, CITED_ELSEWHERE, monkeypatch)


# --- S2-6: a paused answer read as nothing found -------------------------------------------------------------------


def paused_empty(original: Any) -> Any:
    """The hunt's map_sources: a paused answer without a result block read as a search that found nothing."""

    def map_sources(data: Any, *, secrets: Any = ()) -> tuple[Source, ...]:
        if isinstance(data, dict) and data.get("stop_reason") == "pause_turn" and not any(
                isinstance(b, dict) and b.get("type") == "web_search_tool_result" for b in data.get("content") or []):
            return ()
        result: tuple[Source, ...] = original(data, secrets=secrets)
        return result

    return map_sources


def test_the_reference_passes_the_paused_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(outcomes, "FAILURES", CODES, (PAUSED,), monkeypatch)


def test_a_paused_answer_read_as_nothing_found_fails_exactly_the_paused_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (S2-6): the paused turn, its search never given its result, an empty success
    monkeypatch.setattr(deepseek_official, "map_sources", paused_empty(deepseek_official.map_sources))
    fails_exactly_shown(outcomes, "FAILURES", CODES, PAUSED, SHOWN, monkeypatch)


POST = "reply = await self._post(base, key, conf.timeout_s, url, body, headers)"
CONTINUES = f"""{POST}
    for _ in range(3):
        paused = parse_json(reply.body) if 200 <= reply.status < 300 else None
        if not (isinstance(paused, dict) and paused.get("stop_reason") == "pause_turn"):
            break
        {{turn}}
        reply = await self._post(base, key, conf.timeout_s, url, encode_json(payload), headers)"""
CONTINUATION = 'payload["messages"] = [payload["messages"][0], {"role": "assistant", "content": paused["content"]}]'


def test_continuing_the_paused_turnpasses_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # open: a client that continues a paused turn (sends its content back, as Messages API clients do; up to three
    # times here), then fails when no result ever comes
    patch_reading(deepseek_official.DeepSeekMessagesSearch, "search", POST, CONTINUES.format(turn=CONTINUATION),
                  monkeypatch)
    passes_rows(outcomes, "FAILURES", CODES, (PAUSED,), monkeypatch)


def test_a_paused_turn_sent_again_fails_the_paused_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the first request sent again (a silent retry), not the paused turn continued
    patch_reading(deepseek_official.DeepSeekMessagesSearch, "search", POST, CONTINUES.format(turn="pass"),
                  monkeypatch)
    keep_rows(outcomes, "FAILURES", (PAUSED,), monkeypatch)
    (result,) = run(reference_target(), only=[CODES]).results
    assert result.outcome.value == "failed" and "instead of continuing the paused turn" in result.reason, result.reason


def test_the_new_messages_answers_parse_strictly_with_the_sdk() -> None:
    # an implementation parsing with the official SDK (strict validation) is never failed for the suite's answers
    case = next(c for c in mapping.MESSAGES_CASES if c.name == CITED_ELSEWHERE)
    for body in (mapping._messages(case.params), outcomes.PAUSED):
        data = json.loads(body)
        anthropic._models.validate_type(type_=anthropic.types.Message, value=data)
        anthropic.types.Message.model_validate(data, strict=True)
    assert json.loads(outcomes.PAUSED)["stop_reason"] == "pause_turn"
