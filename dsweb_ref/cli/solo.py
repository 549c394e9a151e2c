"""``dsweb solo``: the standalone model-backed web_search (seed 003).

``resolve --config FILE [--project FILE]``: which account and model it would use for a
configuration document (TOML, or JSON when the file ends in .json), printed as JSON; a project
file's ``web_search_model`` overrides the user's, and ``web_search_model.from`` says which one is
in effect. Exit 0 when a tool would be registered, 1 when not (``none`` or ``invalid``; the reason
and the notice are in the output), 2 for an unreadable or malformed document.

``set-search-model CONNECTION/MODEL --config FILE [--project FILE]``: save the search model
(``auto`` for automatic) into the TOML user file, changing only that field (comments, order and
unknown keys are kept byte for byte); a project file that overrides it is reported. Exit 0, 2 when
the value or the file is unusable (nothing is written then).

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
from ..standalone_config import effective_search_model, save_search_model
from ..tools import ToolResult
from ._commands import parser_texts


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("solo", **parser_texts("solo", __doc__))
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = actions.add_parser("resolve", help="show which account and model the standalone search would use")
    r.add_argument("--config", metavar="FILE", required=True, help="configuration document (TOML or .json)")
    r.add_argument("--project", metavar="FILE", help="project file whose web_search_model overrides the user's")
    r.set_defaults(func=run_resolve)
    m = actions.add_parser("set-search-model", help="save web_search_model, changing nothing else in the file")
    m.add_argument("reference", metavar="CONNECTION/MODEL", help='the search model, or "auto" for automatic')
    m.add_argument("--config", metavar="FILE", required=True, help="the user TOML file to update")
    m.add_argument("--project", metavar="FILE", help="project file to check for an overriding value")
    m.set_defaults(func=run_set_search_model)
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
    try:
        if path.endswith(".json"):
            return json.loads(raw.decode("utf-8"))
        return tomllib.loads(raw.decode("utf-8"))
    except RecursionError:  # both parsers recurse per level of nesting
        raise ValueError("the document is nested too deeply") from None


def _table(path: str) -> dict[str, Any]:
    document = _load(path)
    if not isinstance(document, dict):
        raise ValueError("the document must be a table/object")
    return document


def run_resolve(args: argparse.Namespace) -> int:
    reading = args.config
    try:
        document = _table(args.config)
        reading = args.project
        project = _table(args.project) if args.project else None
        reading = None
        value, origin = effective_search_model(document, project)
        if origin == "project":  # the project's value is the one in effect (seed 003)
            document = {k: v for k, v in document.items() if k != "web_search_model"}
            document["agent"] = {**(document.get("agent") or {}), "web_search_model": value}
        # Only whether each key variable is set is read; the values never leave this process.
        result = resolve(document, os.environ)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        print(f"dsweb: cannot read {reading or args.config}: {exc}", file=sys.stderr)
        return 2
    except (WebError, TypeError) as error:
        message = f"{error.code}: {error.message}" if isinstance(error, WebError) else str(error)
        print(f"dsweb: {message}", file=sys.stderr)
        return 2
    shown = {**result.to_json(), "web_search_model": {"value": value, "from": origin}}
    print(json.dumps(shown, ensure_ascii=False, indent=2))
    return 0 if result.registers_tool else 1


def run_set_search_model(args: argparse.Namespace) -> int:
    try:
        report = save_search_model(args.config, args.reference, project=args.project)
    except WebError as error:
        print(f"dsweb: {error.code}: {error.message}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"dsweb: cannot write {args.config}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    if report.overridden_by is not None:
        print(f"dsweb: {report.overridden_by} sets web_search_model = {report.effective!r}, which is the "
              "value in effect", file=sys.stderr)
    return 0


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
