"""``dsweb standalone resolve --config FILE``: which account and model the standalone web_search
(seed 003) would use for a configuration document (TOML, or JSON when the file ends in .json).

Prints the resolution as JSON. Exit 0 when a tool would be registered, 1 when not (``none`` or
``invalid``; the reason is in the output), 2 for an unreadable or malformed document.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from .._exceptions import WebError
from ..standalone_accounts import resolve


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("standalone", help="the standalone model-backed web_search (seed 003)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = actions.add_parser("resolve", help="show which account and model the standalone search would use")
    r.add_argument("--config", metavar="FILE", required=True, help="configuration document (TOML or .json)")
    r.set_defaults(func=run_resolve)


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
