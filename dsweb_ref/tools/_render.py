"""Model-visible text for web_search values. The wording is ours; snapshots pin it."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from .._types import SearchResult, Source

__all__ = ["ANSWER_CUT_NOTE", "CITE_REMINDER", "NO_RESULTS", "OUTPUT_CUT_NOTE", "render_search", "source_label"]

NO_RESULTS = "No results found."
CITE_REMINDER = "Cite the relevant URLs above as markdown links in your answer."
# Provider text is untrusted and unbounded; the model gets a short line per source.
# The structured value keeps the full strings.
MAX_TITLE_CHARS = 200
MAX_SNIPPET_CHARS = 500
# A URL or date this long is hostile, not citable; cut with the same visible "…".
MAX_URL_CHARS = 2048
MAX_DATE_CHARS = 64
DEFAULT_MAX_OUTPUT_CHARS = 20_000


def _short(text: str, limit: int) -> str:
    text = " ".join(text[: limit * 4 + 64].split())  # a field far past its limit is not read whole
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _cut(text: str, limit: int) -> str:
    # Raw (no whitespace folding): a URL is shown as the provider sent it, only cut.
    return text if len(text) <= limit else text[: limit - 1] + "…"


def source_label(source: Source) -> str:
    """The title, else the URL's hostname (IDNA-encoded, lowercase), else the raw URL."""
    if source.title:
        return _short(source.title, MAX_TITLE_CHARS)
    try:
        host = urlsplit(source.url).hostname
    except ValueError:
        host = None
    if not host:
        return _cut(source.url, MAX_URL_CHARS)
    try:
        return _cut(host.encode("idna").decode("ascii"), MAX_TITLE_CHARS)
    except UnicodeError:
        return _cut(host, MAX_TITLE_CHARS)


def _source_line(source: Source, summary: str | None = None) -> str:
    # The (url) part is the provider's raw string: rewriting it would change what the model cites.
    line = f"- [{source_label(source)}]({_cut(source.url, MAX_URL_CHARS)})"
    extras = []
    if summary is not None:  # summary mode: already folded and cut to its budgets ("" = no room left)
        if summary:
            extras.append(summary)
    elif source.snippet:
        extras.append(_short(source.snippet, MAX_SNIPPET_CHARS))
    if source.published_at:
        extras.append(f"({_short(source.published_at, MAX_DATE_CHARS)})")
    if extras:
        line += " — " + " ".join(extras)
    return line


OUTPUT_CUT_NOTE = "(Output cut at {limit} characters: later text and sources were left out.)"
ANSWER_CUT_NOTE = "(Answer cut to keep the output within {limit} characters: its later text was left out.)"


def render_search(
    result: SearchResult,
    max_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    summaries: Sequence[str | None] | None = None,
) -> str:
    """The model-visible text, never longer than ``max_chars``. Past the bound the provider's answer is
    cut first (at a line end, with a note), so the sources stay whole; if they alone are past it, the
    answer is left out and the sources are cut at a line end, a note saying so before the citation
    reminder. ``summaries`` (summary mode, one per source) replaces a source's snippet where it is not None."""
    content = result.content[: max_chars + 1] if result.content else ""  # never more than could be shown
    rest: list[str] = []
    if result.sources:
        shown = summaries if summaries is not None else [None] * len(result.sources)
        lines = (_source_line(s, m) for s, m in zip(result.sources, shown, strict=True))
        rest.append("Sources:\n" + "\n".join(lines))
    elif not content:
        rest.append(NO_RESULTS)
    if result.truncated:
        rest.append(f"(Showing the first {len(result.sources)} sources. Refine the query for more.)")
    rest.append(CITE_REMINDER)
    parts = [content, *rest] if content else rest
    text = "\n\n".join(parts)
    if len(text) <= max_chars:
        return text
    if content:
        # A long answer is cut before the sources are: they are what the model cites. If they alone fill
        # the bound, the answer is left out and the sources are cut as below.
        kept = "\n\n".join([ANSWER_CUT_NOTE.format(limit=max_chars), *rest])
        room = max_chars - len(kept) - 2
        if room > 0:
            return _cut_at_line_end(content, room) + "\n\n" + kept
        text = "\n\n".join(rest)
    end = "\n\n" + OUTPUT_CUT_NOTE.format(limit=max_chars) + "\n\n" + CITE_REMINDER
    room = max_chars - len(end)
    if room <= 0:
        return end.strip()[:max_chars]
    return _cut_at_line_end(text, room) + end


def _cut_at_line_end(text: str, room: int) -> str:
    """``text`` cut to ``room`` characters, at a line end unless that would drop most of the room."""
    head = text[:room]
    line_end = head.rfind("\n")
    if line_end > room // 2:
        head = head[:line_end]
    return head.rstrip()
