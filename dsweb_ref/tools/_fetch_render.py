"""What web_fetch shows the model: HTML converted to Markdown, capped with a note.

markdownify does the conversion (pure Python on BeautifulSoup's lenient
``html.parser``, ATX headings and ``-`` bullets configurable, no native code).
It recurses once per element level, so documents nested deeper than
``MAX_HTML_DEPTH`` pass through raw instead of risking a RecursionError, and any
converter failure passes the raw text through too: a degraded page beats an error.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from dsweb_ref._types import BodyKind, FetchResult

if TYPE_CHECKING:
    from bs4 import Tag

__all__ = ["MAX_HTML_DEPTH", "TRUNCATION_NOTE", "html_to_markdown", "render_fetch"]

TRUNCATION_NOTE = "\n\n(Content truncated. Fetch a more specific URL or section for the full text.)"
# markdownify overflows Python's default recursion limit a little past 300 levels.
MAX_HTML_DEPTH = 256
_DROPPED = ("script", "style", "noscript", "template")
_BLANK_RUNS = re.compile(r"\n{3,}")


def _too_deep(root: Tag) -> bool:
    import bs4

    # Iterative walk: the check itself must not recurse.
    stack: list[tuple[Tag, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_HTML_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in node.contents if isinstance(child, bs4.Tag))
    return False


def html_to_markdown(source: str) -> str | None:
    """Markdown for ``source``, or ``None`` when it should pass through raw."""
    # Imported here, not at the top: BeautifulSoup and its CSS engine cost ~0.1 s in a fresh process,
    # which every command importing the tools would pay; only an HTML page needs them.
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    try:
        soup = BeautifulSoup(source, "html.parser")
        if _too_deep(soup):
            return None
        for tag in soup.find_all(_DROPPED):
            tag.decompose()
        markdown = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    except Exception:
        return None
    if not isinstance(markdown, str):
        return None
    return _BLANK_RUNS.sub("\n\n", markdown).strip()


def render_fetch(
    result: FetchResult, body: str, kind: BodyKind, *, source_truncated: bool, max_chars: int
) -> tuple[str, dict[str, Any]]:
    """The model-visible text (never longer than ``max_chars``) and the structured value.

    The text is a ``Fetched <url> (HTTP <status>)`` header, a blank line and the
    body; when anything was cut (by the provider, the source pre-cut or this cap)
    the truncation note ends it. The value's content is the part of the body the
    text shows, and its ``truncated`` is that same effective flag."""
    head = f"Fetched {result.url} (HTTP {result.status_code})\n\n"
    prefix = head + body
    truncated = result.truncated or source_truncated or len(prefix) > max_chars
    full = prefix + (TRUNCATION_NOTE if truncated else "")
    if len(full) <= max_chars:
        text, shown = full, body
    elif max_chars < len(TRUNCATION_NOTE):
        text, shown = full[:max_chars], body[: max(0, max_chars - len(head))]
    else:
        keep = max_chars - len(TRUNCATION_NOTE)
        text, shown = prefix[:keep] + TRUNCATION_NOTE, body[: max(0, keep - len(head))]
    value: dict[str, Any] = {
        "url": result.url,
        "status_code": result.status_code,
        "body": {"kind": kind, "content": shown},
        "truncated": truncated,
    }
    return text, value
