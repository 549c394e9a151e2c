"""The ``dsweb`` command. Each subcommand is one module in this package exposing ``register(subparsers)``;
adding a command is adding a file and a line in :mod:`._commands`.

Parsing runs in two steps so that a command's imports are paid only when it runs: ``dsweb --version``,
``dsweb --help`` and usage errors are answered by a parser built from :data:`._commands.COMMANDS` alone;
``dsweb NAME ...`` imports ``dsweb_ref.cli.NAME`` and parses the rest with that module's parser, so a
usage error shows that command's usage, not the top-level one.

Every command ends the same way when its output pipe closes early (``dsweb certify --list | head``):
quietly, with exit 141 (what a shell reports for a command killed by SIGPIPE), never a traceback.
Ctrl-C outside a command's own handling ends with one line and exit 130.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from .._version import __version__
from ._commands import COMMANDS

__all__ = ["COMMANDS", "EXIT_BROKEN_PIPE", "EXIT_INTERRUPTED", "build_parser", "main"]

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a command its reader went away from
EXIT_INTERRUPTED = 130  # 128 + SIGINT


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


def command_parser(name: str) -> argparse.ArgumentParser:
    """Command ``name``'s own parser (``prog`` "dsweb NAME"): its usage errors show its usage."""
    parser = build_parser(name)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    chosen: argparse.ArgumentParser = sub.choices[name]
    return chosen


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush of a closed pipe raises nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (captured output)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if not args or args[0] not in COMMANDS:
            top = _top_parser()
            top.parse_args(args)  # --version, --help and unknown commands exit here
            top.print_help(sys.stderr)
            return 2
        parsed = command_parser(args[0]).parse_args(args[1:])
        parsed.command = args[0]
        code: int = parsed.func(parsed)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print(f"dsweb {args[0]}: interrupted" if args else "dsweb: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED



if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
