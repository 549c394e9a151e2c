"""``dsweb fetch URL``: run the real web_fetch tool with the configured fetch provider.

With the shipped selection that is the local ``http`` provider, whose strict
address policy refuses loopback and private targets before any socket opens.
"""

from __future__ import annotations

import argparse
from typing import Any

from .._context import CallContext
from ..runtime import Runtime
from ..tools import ToolResult
from ._commands import parser_texts
from ._tooling import add_common_options, run_tool


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("fetch", **parser_texts("fetch", __doc__))
    p.add_argument("url", metavar="URL")
    add_common_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    async def call(runtime: Runtime, ctx: CallContext) -> ToolResult:
        return await runtime.fetch_tool().execute({"url": args.url}, ctx)

    return run_tool(args, call)
