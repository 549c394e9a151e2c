"""The ``dsweb`` command. Each subcommand is one module in this package exposing ``register(subparsers)``;
adding a command is adding a file and a line in :mod:`._commands`.

Parsing runs in two steps so that a command's imports are paid only when it runs: ``dsweb --version``,
``dsweb --help`` and usage errors are answered by a parser built from :data:`._commands.COMMANDS` alone;
``dsweb NAME ...`` imports ``dsweb_ref.cli.NAME`` and parses the rest with that module's parser.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .._version import __version__
from ._commands import COMMANDS

__all__ = ["COMMANDS", "build_parser", "main"]


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dsweb",
        description="Reference web_search / web_fetch tools and their executable spec.",
        epilog="Run 'dsweb COMMAND --help' for a command's options and examples.",
    )
    parser.add_argument("--version", action="version", version=f"dsweb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary in COMMANDS.items():
        sub.add_parser(name, help=summary, add_help=False)
    return parser


def build_parser(name: str) -> argparse.ArgumentParser:
    """The full parser for command ``name`` (imports that command's module)."""
    parser = argparse.ArgumentParser(prog="dsweb")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in COMMANDS:
        top = _top_parser()
        top.parse_args(args)  # --version, --help and unknown commands exit here
        top.print_help(sys.stderr)
        return 2
    parsed = build_parser(args[0]).parse_args(args)
    code: int = parsed.func(parsed)
    return code



if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
