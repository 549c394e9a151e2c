"""Model-visible text for web_search values. The wording is ours; snapshots pin it."""

from __future__ import annotations

from urllib.parse import urlsplit

from .._types import SearchResult, Source

__all__ = ["CITE_REMINDER", "NO_RESULTS", "render_search", "source_label"]

NO_RESULTS = "No results found."
CITE_REMINDER = "Cite the relevant URLs above as markdown links in your answer."
# Provider text is untrusted and unbounded; the model gets a short line per source.
# The structured value keeps the full strings.
MAX_TITLE_CHARS = 200
MAX_SNIPPET_CHARS = 500


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def source_label(source: Source) -> str:
    """The title, else the URL's hostname (IDNA-encoded, lowercase), else the raw URL."""
    if source.title:
        return _short(source.title, MAX_TITLE_CHARS)
    try:
        host = urlsplit(source.url).hostname
    except ValueError:
        host = None
    if not host:
        return source.url
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _source_line(source: Source) -> str:
    # The (url) part is the provider's raw string: rewriting it would change what the model cites.
    line = f"- [{source_label(source)}]({source.url})"
    extras = []
    if source.snippet:
        extras.append(_short(source.snippet, MAX_SNIPPET_CHARS))
    if source.published_at:
        extras.append(f"({source.published_at})")
    if extras:
        line += " — " + " ".join(extras)
    return line


def render_search(result: SearchResult) -> str:
    parts: list[str] = []
    if result.content:
        parts.append(result.content)
    if result.sources:
        parts.append("Sources:\n" + "\n".join(_source_line(s) for s in result.sources))
    elif not result.content:
        parts.append(NO_RESULTS)
    if result.truncated:
        parts.append(f"(Showing the first {len(result.sources)} sources. Refine the query for more.)")
    parts.append(CITE_REMINDER)
    return "\n\n".join(parts)
