"""What ``dsweb certify`` prints around the run: the catalogue (``--list --markdown``, ``--explain``), the
opening lines (what is being certified, against what) and the closing lines (verdict, where reports went).

Kept out of certify.py so that file stays the option parsing and the run."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .._version import __version__

__all__ = ["EXIT_CODES", "VERDICT_RULE", "closing", "opening", "show_catalogue", "stopped_line"]

# The one rule the verdict line and every profile line follow (README states it in the same words).
VERDICT_RULE = (
    "verdict: CERTIFIED (exit 0) when no check failed, errored or went stale, at least one check passed, "
    "and every profile named with --profile is certified. A profile is certified when the target declares "
    "its capabilities and every one of its checks ran and passed; when some of its checks did not run "
    "(--only, or another --profile) its line says 'partial run': the run judged the checks it ran, not "
    "the profile."
)
EXIT_CODES = (
    "exit codes: 0 certified; 1 not certified (a check failed, errored or went stale, nothing passed, a "
    "--profile is not certified, or the known-failures file names an unknown check); 2 the run could not "
    "start (bad option or input, a base that is not a URL or does not answer, no key for a live run, an "
    "adapter that does not start or answer hello in time) or an endpoint stopped answering (3 checks in a "
    "row); 130 interrupted (SIGINT/SIGTERM: the reports hold the checks that finished, marked "
    "interrupted); 141 the output pipe closed. A failure line shows the first "
    "160 characters of its reason (… marks a cut; report.json keeps it whole) and ends with the command "
    "that explains the check."
)


def show_catalogue(args: argparse.Namespace) -> int | None:
    """Answer ``--explain ID`` or ``--list --markdown [FILE]``; None when neither was asked."""
    if args.explain is None and not (args.list and args.markdown is not None):
        return None
    from ..certification.catalogue import AmbiguousCheck, UnknownCheck, explain, markdown

    if args.explain is not None:
        try:
            text = explain(args.explain, full=args.full)
        except UnknownCheck as exc:
            print(f"dsweb certify: {exc.args[0]}", file=sys.stderr)
            return 2
        except AmbiguousCheck as exc:  # a prefix, a shared name or a misspelling: list the ids to pick from
            stream = sys.stderr if exc.near else sys.stdout
            prefix = "dsweb certify: " if exc.near else ""
            print(f"{prefix}{exc.args[0]}; run `dsweb certify --explain ID` with one of:", file=stream)
            print("\n".join(f"  {i}" for i in exc.matches), file=stream)
            return 2 if exc.near else 0
        print(text, end="")
        return 0
    text = markdown()
    if args.markdown == "-":
        print(text, end="")
    else:
        Path(args.markdown).write_text(text, encoding="utf-8")
        print(f"wrote the check catalogue to {args.markdown}")
    return 0


def _choice(args: argparse.Namespace, *names: str) -> str | None:
    """A selection option another part of the CLI may add (``--profile``, ``--seed``), rendered, or None."""
    for name in names:
        value = getattr(args, name, None)
        if value:
            return ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
    return None


def opening(args: argparse.Namespace, *, is_endpoint: bool) -> list[str]:
    """What is being certified: target, profiles (or the selection), emulator address."""
    if args.adapter:
        target = f"adapter {args.adapter!r} over the JSON-lines adapter protocol"
    elif args.cassettes:
        target = f"endpoint cassettes in {args.cassettes} (offline replay)"
    elif is_endpoint:
        messages = args.messages_base or f"{args.base.rstrip('/')}/anthropic/v1"
        tools = args.tools_base or f"{args.base.rstrip('/')}/v1/tools"
        target = f"endpoint: Messages base {messages}, Search/Fetch base {tools} (key from ${args.api_key_env})"
    else:
        target = f"the reference implementation (dsweb_ref {__version__}), in-process"
    if is_endpoint:
        emulator = "none (the endpoint itself answers)"
    else:
        emulator = "embedded, a fresh one per check on 127.0.0.1 at an ephemeral port, with its public test key"
    lines = [
        f"dsweb certify {__version__}",
        f"  target:    {target}",
        f"  profiles:  {_choice(args, 'profile', 'profiles') or 'all checks (no --profile)'}",
    ]
    if (seeds := _choice(args, "seed", "seeds")) is not None:
        lines.append(f"  seeds:     {seeds}")
    if args.only:
        lines.append(f"  only:      {', '.join(args.only)}")
    if args.known_failures:
        lines.append(f"  known failures: {args.known_failures}")
    lines.append(f"  emulator:  {emulator}")
    return lines


def stopped_line(cause: str, done: int, total: int, paths: Sequence[Path | str], code: int) -> str:
    """The one line of a run that stopped early (interrupted, or its endpoint went silent)."""
    where = (
        "reports with the finished checks: " + ", ".join(str(p) for p in paths)
        if paths
        else "no report asked for (--report-dir DIR keeps one)"
    )
    return f"dsweb certify: {cause} after {done} of {total} checks; {where}; exit {code}"


def closing(ok: bool, summary: str, paths: Sequence[Path | str]) -> list[str]:
    """The last lines: the verdict, then where the reports went."""
    verdict = "CERTIFIED" if ok else "NOT CERTIFIED"
    where = ", ".join(str(p) for p in paths) if paths else "none written (--report-dir DIR writes all four)"
    return [f"verdict:   {verdict} ({summary}); exit {0 if ok else 1}", f"reports:   {where}"]
