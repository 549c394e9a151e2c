"""The ``dsweb`` command. Each subcommand is one module in this package exposing
``register(subparsers)``; adding a command is adding a file and a name below."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .._version import __version__

# Imported lazily so `dsweb --version` does not pay for the emulator's imports.
COMMANDS = ("certify", "search", "fetch", "record", "emulator", "schemas", "standalone")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dsweb", description="Reference web_search / web_fetch tools and their spec.")
    parser.add_argument("--version", action="version", version=f"dsweb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    code: int = args.func(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
