"""Scripted upstream answers: the emulator answers one query with exactly the sources a case names,
on either search protocol, through its ordinary ``Status(200, body=...)`` fault.

Case tables then say what each query returns (shared URLs, more than the cap, URLs differing only
by case or a trailing slash, huge fields) instead of relying on what the corpus happens to rank.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...emulator import Fault, Status
from ._base import CheckContext, CheckFailed
from ._oracle import query_match

__all__ = ["MAX_COUNT", "Listing", "Row", "answer_body", "first", "row", "script", "script_listing", "value_sources"]

Row = Mapping[str, str]  # {"url", and optionally "title", "snippet", "date"}
Listing = Callable[[int], Sequence[Row]]  # a Search API request's count -> what the engine answers it
SERVICE_COUNT = 10  # the Search API's count when a request sends none (seed 001: "the service's 10")
MAX_COUNT = 50  # the largest count the Search API takes (seed 001: "from 1 to 50")


def row(url: str, title: str | None = None, snippet: str | None = None, date: str | None = None) -> dict[str, str]:
    out = {"url": url}
    for name, value in (("title", title), ("snippet", snippet), ("date", date)):
        if value is not None:
            out[name] = value
    return out


def _search_api(rows: Sequence[Row]) -> dict[str, Any]:
    return {"results": [dict(r) for r in rows]}


def _messages(query: str, rows: Sequence[Row]) -> dict[str, Any]:
    tool_id = "srvtoolu_scripted"
    results = [
        {
            "type": "web_search_result",
            "url": r["url"],
            "title": r.get("title", ""),
            "encrypted_content": "c2NyaXB0ZWQ=",
            "page_age": r.get("date"),
        }
        for r in rows
    ]
    citations = [
        {
            "type": "web_search_result_location",
            "url": r["url"],
            "title": r.get("title"),
            "cited_text": r["snippet"],
            "encrypted_index": "aW5kZXg=",
        }
        for r in rows
        if r.get("snippet")
    ]
    content: list[dict[str, Any]] = [
        {"type": "server_tool_use", "id": tool_id, "name": "web_search", "input": {"query": query}},
        {"type": "web_search_tool_result", "tool_use_id": tool_id, "content": results},
    ]
    if citations:
        content.append({"type": "text", "text": "Scripted answer.", "citations": citations})
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": "deepseek-v4-flash",
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        # Every field the official SDK requires with strict validation (web_fetch_requests too), so an
        # implementation that parses with the SDK is never failed for the script's omission.
        "usage": {
            "input_tokens": 1,
            "output_tokens": 1,
            "server_tool_use": {"web_fetch_requests": 0, "web_search_requests": 1},
        },
    }


def answer_body(route: str, query: str, rows: Sequence[Row]) -> bytes:
    """A successful upstream answer listing ``rows`` in order, in the route's own format."""
    data = _search_api(rows) if route == "search" else _messages(query, rows)
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def scripted(route: str, query: str, rows: Sequence[Row]) -> Fault:
    return Status(200, body=answer_body(route, query, rows))


def script(ctx: CheckContext, query: str, rows: Sequence[Row], *, times: int | None = 1) -> None:
    """The next ``times`` upstream searches for ``query`` answer ``rows``."""
    route = ctx.search_route
    ctx.emu.inject(route, scripted(route, query, rows), times=times, when=query_match(route, query))


def first(rows: Sequence[Row]) -> Listing:
    """The real Search API's listing: the first ``count`` of ``rows``."""
    return lambda count: rows[:count]


def _count(body: Any) -> int:
    """The count a Search API request asks for: the service's 10 when it sends none; one the service would
    refuse (not an integer from 1 to 50) gets the whole listing, as :func:`script` answers any request."""
    count = body.get("count", SERVICE_COUNT) if isinstance(body, dict) else SERVICE_COUNT
    if count is None:
        return SERVICE_COUNT
    return count if isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= MAX_COUNT else MAX_COUNT


class _Uses:
    """The uses the rules of one scripted query share: whichever answers a request uses one."""

    def __init__(self, times: int | None) -> None:
        self.left = times

    def take(self) -> bool:
        if self.left is None:
            return True
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def script_listing(ctx: CheckContext, query: str, listing: Listing, *, times: int | None = 1) -> None:
    """Like :func:`script`, but a Search API answer honours the request's ``count`` as the service does (seed
    001: the tool sends its limit as ``count``, which bounds the results): ``listing(count)`` is what the engine
    answers a request for ``count`` results (:func:`first` for the service's own cut). A target reading fewer
    results per query than the reference (seed 002 only bounds them) then gets an answer it asked for. On the
    Messages route, which sends no count, the answer is ``listing(MAX_COUNT)``."""
    route = ctx.search_route
    match = query_match(route, query)
    if route != "search":
        ctx.emu.inject(route, scripted(route, query, listing(MAX_COUNT)), times=times, when=match)
        return
    counts: dict[tuple[tuple[tuple[str, str], ...], ...], list[int]] = {}
    answers: dict[tuple[tuple[tuple[str, str], ...], ...], Sequence[Row]] = {}
    for count in range(1, MAX_COUNT + 1):
        rows = listing(count)
        key = tuple(tuple(sorted(r.items())) for r in rows)
        counts.setdefault(key, []).append(count)
        answers.setdefault(key, rows)
    uses = _Uses(times)  # one rule per distinct answer; the rules share the query's uses
    for key, asked in counts.items():

        def when(body: Any, asked: frozenset[int] = frozenset(asked)) -> bool:
            return match(body) and _count(body) in asked and uses.take()  # taken only by the rule that answers

        ctx.emu.inject(route, scripted(route, query, answers[key]), times=None, when=when)


def value_sources(value: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """(url, title, snippet, published_at) of every source in a web_search value."""
    sources = value.get("sources")
    if not isinstance(sources, list):
        raise CheckFailed("value has no sources list", value=dict(value))
    return [
        tuple(s.get(k) for k in ("url", "title", "snippet", "published_at")) if isinstance(s, dict) else (s,)
        for s in sources
    ]
