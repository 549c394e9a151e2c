"""``dsweb solo``: the standalone model-backed web_search (seed 003).

``resolve --config FILE``: which account and model it would use for a configuration document
(TOML, or JSON when the file ends in .json), printed as JSON. Exit 0 when a tool would be
registered, 1 when not (``none`` or ``invalid``; the reason is in the output), 2 for an
unreadable or malformed document.

``search QUERY (--emulator [--protocol messages|responses] | --config FILE)``: one call of the
tool; prints the model-visible JSON (``--json``: the whole tool result, usage included). Exit 0,
or 1 with the ``WEB_*`` code on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from .._exceptions import WebError
from ..runtime import standalone_search_tool
from ..standalone_accounts import Resolution, SearchRoute, resolve
from ..tools import ToolResult
from ._commands import parser_texts


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("solo", **parser_texts("solo", __doc__))
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = actions.add_parser("resolve", help="show which account and model the standalone search would use")
    r.add_argument("--config", metavar="FILE", required=True, help="configuration document (TOML or .json)")
    r.set_defaults(func=run_resolve)
    q = actions.add_parser("search", help="run the standalone web_search once and print the model-visible JSON")
    q.add_argument("query", metavar="QUERY", help="the one search query")
    where = q.add_mutually_exclusive_group(required=True)
    where.add_argument("--emulator", action="store_true", help="search on the embedded emulator (loopback)")
    where.add_argument("--config", metavar="FILE", help="configuration document whose selection searches")
    q.add_argument("--protocol", choices=("messages", "responses"), default="messages",
                   help="with --emulator: the wire protocol (default: messages)")
    q.add_argument("--json", action="store_true", help="print the whole tool result (usage included) as JSON")
    q.set_defaults(func=run_search)


def _load(path: str) -> object:
    raw = Path(path).read_bytes()
    if path.endswith(".json"):
        return json.loads(raw.decode("utf-8"))
    return tomllib.loads(raw.decode("utf-8"))


def run_resolve(args: argparse.Namespace) -> int:
    try:
        document = _load(args.config)
        if not isinstance(document, dict):
            raise ValueError("the document must be a table/object")
        # Only whether each key variable is set is read; the values never leave this process.
        result = resolve(document, os.environ)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        print(f"dsweb: cannot read {args.config}: {exc}", file=sys.stderr)
        return 2
    except WebError as error:
        print(f"dsweb: {error.code}: {error.message}", file=sys.stderr)
        return 2
    print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    return 0 if result.registers_tool else 1


# The emulator's fixed public test key reaches the backend through this private variable, so a
# real key in the environment is never read or sent to the emulator.
_EMULATOR_KEY_ENV = "DSWEB_STANDALONE_EMULATOR_KEY"


def _emulator_search(args: argparse.Namespace) -> ToolResult:
    from ..emulator import Emulator
    from ..emulator.server import DEFAULT_API_KEY

    with Emulator() as emu:
        url = emu.messages_base + "/messages" if args.protocol == "messages" else emu.openai_base + "/responses"
        route = SearchRoute("emulator", args.protocol, url, "deepseek-v4-flash", _EMULATOR_KEY_ENV)
        tool = standalone_search_tool(
            Resolution("selected", route=route), environ={_EMULATOR_KEY_ENV: DEFAULT_API_KEY}
        )
        assert tool is not None
        return asyncio.run(tool.execute({"query": args.query}))


def run_search(args: argparse.Namespace) -> int:
    try:
        if args.emulator:
            result = _emulator_search(args)
        else:
            document = _load(args.config)
            if not isinstance(document, dict):
                raise ValueError("the document must be a table/object")
            resolution = resolve(document, os.environ)
            tool = standalone_search_tool(resolution)
            if tool is None:
                print(json.dumps(resolution.to_json(), ensure_ascii=False, indent=2))
                print("dsweb: no standalone web_search for this configuration", file=sys.stderr)
                return 1
            result = asyncio.run(tool.execute({"query": args.query}))
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        print(f"dsweb: cannot read {args.config}: {exc}", file=sys.stderr)
        return 2
    except WebError as error:
        result = ToolResult(text=f"Error: {error.message}", error_code=error.code)
    print(json.dumps(result.to_json(), ensure_ascii=False, indent=2) if args.json else result.text)
    if result.is_error:
        print(f"dsweb: {result.error_code}", file=sys.stderr)
    return 1 if result.is_error else 0
