"""``dsweb record``: run named probes and write scrubbed vcrpy cassettes with provenance."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
from pathlib import Path
from typing import Any

from ..replay.probes import ACCOUNT_QPS_LIMIT, PROBES, Probe
from ..replay.record import CassetteWriteError, RecordResult, RecordTarget, record_probes, select_probes
from ._certify_run import check_base
from ._commands import parser_texts

OVERRIDE_FLAG = "--i-know-the-account-limit"


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("record", **parser_texts("record", "Probes: " + ", ".join(probe.id for probe in PROBES)))
    p.add_argument("probes", nargs="*", metavar="PROBE", help="probe ids or protocols (default: all)")
    p.add_argument("--base", help="one origin serving both protocols, e.g. https://api.deepseek.com")
    p.add_argument("--messages-base", help="Messages base (…/anthropic/v1); default: BASE/anthropic/v1")
    p.add_argument("--tools-base", help="Search/Fetch base (…/v1/tools); default: BASE/v1/tools")
    p.add_argument("--emulator", action="store_true", help="record against an embedded emulator on loopback")
    p.add_argument("--key-env", default="DEEPSEEK_API_KEY", metavar="NAME", help="variable holding the API key")
    p.add_argument(
        "--account-token-env",
        default="DEEPSEEK_ACCOUNT_TOKEN",
        metavar="NAME",
        help="variable holding the account token (account-route probes are skipped when it is unset)",
    )
    p.add_argument("--out", default="cassettes", metavar="DIR", help="cassette directory (default: cassettes/)")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace existing cassettes (one marked failed is recorded again without it)",
    )
    p.add_argument("--timeout", type=float, default=30.0, metavar="S", help="per-probe timeout in seconds")
    p.add_argument(
        "--max-rps",
        type=float,
        default=2.0,
        metavar="N",
        help=f"request starts per second, > 0 (default 2); at most {ACCOUNT_QPS_LIMIT:g}, the account-wide "
        f"Search/Fetch limit (seed 001), unless {OVERRIDE_FLAG} is given",
    )
    p.add_argument(
        OVERRIDE_FLAG,
        dest="above_account_limit",
        action="store_true",
        help=f"allow --max-rps above {ACCOUNT_QPS_LIMIT:g} (e.g. an account with a raised limit, or the emulator)",
    )
    p.add_argument("--list", action="store_true", help="list the probes and exit")
    p.set_defaults(func=run)


def _print(results: list[RecordResult]) -> None:
    for r in results:
        where = f" {r.path}" if r.path else ""
        reason = f" ({r.reason})" if r.reason else ""
        print(f"{r.status:<9} {r.probe}{where}{reason}")


def run(args: argparse.Namespace) -> int:
    if args.list:
        for probe in PROBES:
            flag = " [emulator]" if probe.needs_emulator else ""
            print(f"{probe.id:<36} {probe.description}{flag}")
        return 0
    if not (math.isfinite(args.max_rps) and args.max_rps > 0) or not (math.isfinite(args.timeout) and args.timeout > 0):
        print("error: --max-rps and --timeout must be positive numbers", file=sys.stderr)
        return 2
    if args.max_rps > ACCOUNT_QPS_LIMIT and not args.above_account_limit:
        print(
            f"error: --max-rps {args.max_rps:g} is above the account limit of {ACCOUNT_QPS_LIMIT:g} requests/s "
            f"(seed 001: Search and Fetch each allow {ACCOUNT_QPS_LIMIT:g} QPS per account, shared by all its keys); "
            f"pass {OVERRIDE_FLAG} to go faster anyway",
            file=sys.stderr,
        )
        return 2
    try:
        probes = select_probes(args.probes)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    out = Path(args.out).absolute()  # the working directory's, whatever joins it later
    if os.path.lexists(out) and not out.is_dir():
        print(f"error: --out {out} exists and is not a directory", file=sys.stderr)
        return 2
    try:
        results = _record(args, probes, out)
    except CassetteWriteError as exc:
        _print(exc.results)
        print(f"error: {exc}; recording stopped", file=sys.stderr)
        return 2
    if results is None:
        return 2
    _print(results)
    return 1 if any(r.status in ("failed", "refused", "exists") for r in results) else 0


def _record(args: argparse.Namespace, probes: list[Probe], out: Path) -> list[RecordResult] | None:
    """Run the probes (None: a usage error was printed)."""
    if args.emulator:
        from ..emulator import DEFAULT_API_KEY, Emulator
        from ..emulator.server import DEFAULT_ACCOUNT_TOKEN

        with Emulator(api_keys=(DEFAULT_API_KEY,), account_tokens=(DEFAULT_ACCOUNT_TOKEN,)) as emu:
            target = RecordTarget(
                emu.messages_base, emu.tools_base, DEFAULT_API_KEY, emulator=emu, account_token=DEFAULT_ACCOUNT_TOKEN
            )
            results = asyncio.run(
                record_probes(
                    probes, target, out, overwrite=args.overwrite, timeout_s=args.timeout, max_rps=args.max_rps
                )
            )
    else:
        base = (args.base or "").rstrip("/")
        messages = args.messages_base or (f"{base}/anthropic/v1" if base else None)
        tools = args.tools_base or (f"{base}/v1/tools" if base else None)
        if messages is None and tools is None:
            print("error: give --base, --messages-base/--tools-base, or --emulator", file=sys.stderr)
            return None
        given = [("--base", args.base), ("--messages-base", args.messages_base), ("--tools-base", args.tools_base)]
        for option, url in given:
            if url and (problem := check_base(option, url)):
                print(f"error: {problem}", file=sys.stderr)
                return None
        key = (os.environ.get(args.key_env) or "").strip()
        if not key:
            print(f'error: environment variable "{args.key_env}" is unset or empty', file=sys.stderr)
            return None
        token = (os.environ.get(args.account_token_env) or "").strip() or None
        target = RecordTarget(messages, tools, key, account_token=token)
        results = asyncio.run(
            record_probes(probes, target, out, overwrite=args.overwrite, timeout_s=args.timeout, max_rps=args.max_rps)
        )
    return results


def main(argv: list[str] | None = None) -> int:
    """``python -m dsweb_ref.cli.record`` (the same as ``dsweb record``)."""
    parser = argparse.ArgumentParser(prog="dsweb")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["record", *(sys.argv[1:] if argv is None else argv)])
    code: int = args.func(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
