"""Model-facing tools. They call the seam (``WebService``), never a provider."""

from ._merge import merge_results
from ._render import render_search
from ._result import ToolResult, error_result
from .web_fetch import WebFetchTool
from .web_search import SearchToolSettings, WebSearchTool, parse_queries

__all__ = [
    "SearchToolSettings",
    "ToolResult",
    "WebFetchTool",
    "WebSearchTool",
    "error_result",
    "merge_results",
    "parse_queries",
    "render_search",
]
