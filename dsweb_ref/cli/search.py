"""``dsweb search QUERY...``: run the real web_search tool with the configured providers."""

from __future__ import annotations

import argparse
from typing import Any

from .._context import CallContext
from ..runtime import Runtime
from ..tools import ToolResult
from ._commands import parser_texts
from ._tooling import add_common_options, run_tool


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("search", **parser_texts("search"))
    p.add_argument("queries", nargs="+", metavar="QUERY", help="one query per argument")
    p.add_argument("--prompt", help="the conversation's latest human prompt (the Search API sends it as ori_question)")
    p.add_argument("--evidence", action="store_true", help="the seed 002 evidence pipeline (passages + URLs, no model)")
    add_common_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    async def call(runtime: Runtime, ctx: CallContext) -> ToolResult:
        if args.evidence:
            return await runtime.evidence_tool().execute({"query": list(args.queries)}, ctx)
        return await runtime.search_tool().execute({"queries": list(args.queries)}, ctx)

    return run_tool(args, call)
