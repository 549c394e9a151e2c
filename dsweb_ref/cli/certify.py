"""``dsweb certify``: run the certification suite and write reports.

With no target option it certifies the reference implementation in-process against the embedded
emulator (offline, no key). ``--adapter CMD`` drives another implementation over the adapter
protocol; ``--base`` / ``--messages-base --tools-base`` (live) or ``--cassettes`` (offline)
certify an endpoint. The three kinds of target exclude each other.

Exit 0 when at least one check passed and every other one was skipped or is a known failure;
1 when a check failed, errored or went stale, when nothing was certified (every check skipped),
or when the known-failures file names an unknown check; 2 on bad usage or input (options, the
adapter command, the known-failures file, the cassette directory, a report path).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ..certification.checks.differential import seeded
from ..certification.known_failures import KnownFailures, KnownFailuresError, load_known_failures
from ..certification.model import Check, CheckResult, Report
from ..certification.profiles import UnknownProfileError, find_profile
from ..certification.report import (
    ReportError,
    RunSecrets,
    check_report_paths,
    nothing_certified,
    print_line,
    report_ok,
    run_secrets,
    scrub_text,
    summary,
    write_reports,
)
from ..certification.suite import (
    TargetFactory,
    UnknownCheckError,
    default_jobs,
    run_suite,
    select_checks,
    select_ids,
)
from ..certification.targets import AdapterCommandError, AdapterTarget, Target, reference_target
from ._certify_text import closing, opening, show_catalogue
from ._commands import parser_texts

ENDPOINT_OPTIONS = ("--base", "--messages-base", "--tools-base", "--cassettes")


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("certify", **parser_texts("certify"))
    target = p.add_argument_group("target (default: the reference implementation, in-process; one kind only)")
    target.add_argument("--adapter", metavar="CMD", help="adapter command speaking the JSON-lines adapter protocol")
    target.add_argument(
        "--adapter-env",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="pass NAME (from this environment, or set to VALUE) to the adapter, which otherwise gets only "
        "PATH, HOME, locale and Python path variables; repeatable",
    )
    target.add_argument("--base", metavar="URL", help="endpoint base serving both Messages and Search/Fetch")
    target.add_argument("--messages-base", metavar="URL", help="endpoint Messages base (with --tools-base)")
    target.add_argument("--tools-base", metavar="URL", help="endpoint Search/Fetch base (with --messages-base)")
    target.add_argument("--cassettes", metavar="DIR", help="certify recorded endpoint cassettes in DIR (offline)")
    target.add_argument("--api-key-env", default="DEEPSEEK_API_KEY", metavar="NAME",
                        help="environment variable holding the endpoint key (default: DEEPSEEK_API_KEY)")
    p.add_argument("--known-failures", metavar="FILE", help="YAML list of check ids known to fail, with reasons")
    p.add_argument("--only", nargs="+", metavar="ID", help="run only these check ids (or id prefixes)")
    p.add_argument("--profile", action="append", default=[], metavar="NAME",
                   help="certify this profile (repeatable): run its checks; exit 1 unless it is certified")
    p.add_argument("--list", action="store_true", help="list the checks (implementation and endpoint) and exit; "
                   "with --markdown [FILE], the whole catalogue (rules and case tables) as Markdown")
    p.add_argument("--explain", metavar="ID", help="print a check's rule, seed, capabilities, profiles and case table")
    p.add_argument("--seed", type=int, metavar="N",
                   help="seed of the generated scenarios of the search.differential checks (default: fixed; "
                   "a failure names the seed that replays it)")
    p.add_argument("--jobs", type=_positive, default=default_jobs(), metavar="N",
                   help=f"run up to N checks at once, each on its own target instance (default: {default_jobs()}, "
                   "from the CPU count; 1 runs them one by one)")
    p.add_argument("--durations", type=_positive, default=0, metavar="N", help="print the N slowest checks")
    out = p.add_argument_group("reports")
    out.add_argument("--report-dir", metavar="DIR", help="write junit.xml, report.json, report.md, report.html")
    out.add_argument("--junit", metavar="FILE")
    out.add_argument("--json", metavar="FILE", dest="json_path")
    out.add_argument("--markdown", metavar="FILE", nargs="?", const="-")
    out.add_argument("--html", metavar="FILE", dest="html_path")
    p.set_defaults(func=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _slowest(report: Report, count: int) -> list[str]:
    """``--durations N``: the N slowest checks, slowest first."""
    ranked = sorted(report.results, key=lambda r: -r.duration_s)[:count]
    return [f"slowest checks ({len(ranked)}):", *(f"  {r.duration_s:7.2f}s  {r.check.id}" for r in ranked)]


def _usage(message: str) -> int:
    print(f"dsweb certify: {scrub_text(message)}", file=sys.stderr)
    return 2


def endpoint_checks() -> list[Check]:
    """The endpoint checks, in run order (imported lazily: endpoint certification pulls in vcrpy)."""
    from ..certification.endpoint import ENDPOINT_CHECKS

    return list(ENDPOINT_CHECKS)


def _list() -> int:
    print("implementation checks (default target, --adapter):")
    for spec in select_checks(None):
        print(f"  {spec.check.id:<36} seed {spec.check.seed}  [{', '.join(spec.requires)}]  {spec.check.description}")
    print("endpoint checks (--base, --messages-base/--tools-base, --cassettes):")
    for c in endpoint_checks():
        print(f"  {c.id:<36} seed {c.seed}  [{c.capability}]  {c.description}")
    return 0


def _given(args: argparse.Namespace, option: str) -> bool:
    return getattr(args, option.lstrip("-").replace("-", "_")) is not None


def _target_problem(args: argparse.Namespace) -> str | None:
    endpoint = [o for o in ENDPOINT_OPTIONS if _given(args, o)]
    if args.adapter is not None:
        if not args.adapter.strip():
            return "--adapter needs a command (an empty string would silently certify the reference)"
        if endpoint:
            return f"--adapter certifies an implementation; it cannot be combined with {', '.join(endpoint)}"
    elif args.adapter_env:
        return "--adapter-env applies to --adapter only"
    if args.cassettes is not None and len(endpoint) > 1:
        return f"--cassettes replays offline; it cannot be combined with {', '.join(o for o in endpoint[:-1])}"
    if bool(args.messages_base) != bool(args.tools_base):
        return "--messages-base and --tools-base go together"
    for option in endpoint:
        if not str(getattr(args, option.lstrip("-").replace("-", "_"))).strip():
            return f"{option} needs a value"
    return None


def _adapter_env(specs: Sequence[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not name or "\0" in spec:
            raise ValueError(f"--adapter-env {spec!r}: expected NAME or NAME=VALUE")
        if sep:
            env[name] = value
        elif name in os.environ:
            env[name] = os.environ[name]
        else:
            raise ValueError(f"--adapter-env {name}: {name} is not set in this environment")
    return env


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _run_endpoint(
    args: argparse.Namespace, only: Sequence[str] | None, known: KnownFailures | None
) -> tuple[Report, RunSecrets]:
    """Certify the endpoint; each check's line prints as it completes (when the endpoint module can report
    progress), restricted to ``only`` and with the known failures applied."""
    from .._version import __version__
    from ..certification.endpoint import certify_endpoint

    key = os.environ.get(args.api_key_env) or None
    secrets = run_secrets([key] if key else [])  # the environment is scanned once, not per line
    selected = set(only) if only is not None else None

    def finish(result: CheckResult) -> CheckResult | None:
        if selected is not None and result.check.id not in selected:
            return None
        return known.apply([result])[0] if known is not None else result

    def progress(result: CheckResult) -> None:
        shown = finish(result)
        if shown is not None:
            print_line(shown, sys.stdout, secrets)

    messages_base = args.messages_base or (args.base and args.base.rstrip("/") + "/anthropic/v1")
    tools_base = args.tools_base or (args.base and args.base.rstrip("/") + "/v1/tools")
    kwargs: dict[str, Any] = {
        "messages_base": messages_base,
        "tools_base": tools_base,
        "cassette_dir": args.cassettes,
        "api_key": key,
    }
    started = _now()
    info, results = certify_endpoint(**kwargs, progress=progress)
    kept = [r for r in (finish(r) for r in results) if r is not None]
    return Report(__version__, info, tuple(kept), started, _now()), secrets


def run(args: argparse.Namespace) -> int:
    if (shown := show_catalogue(args)) is not None:
        return shown
    if args.list:
        return _list()
    if args.markdown == "-":
        return _usage("--markdown needs a FILE (a bare --markdown goes with --list)")
    problem = _target_problem(args)
    if problem is not None:
        return _usage(problem)
    is_endpoint = any(_given(args, o) for o in ENDPOINT_OPTIONS)
    try:
        for name in args.profile:
            find_profile(name)
    except UnknownProfileError as exc:
        return _usage(str(exc))
    if args.profile and is_endpoint:
        return _usage("--profile certifies an implementation; it does not apply to an endpoint")
    implementation_ids = [s.check.id for s in select_checks(None)]
    endpoint_ids = [c.id for c in endpoint_checks()]

    problems: list[str] = []
    known: KnownFailures | None = None
    only: list[str] | None = None
    try:
        if args.known_failures:
            known = load_known_failures(args.known_failures)
            problems += [
                f"known-failures file {args.known_failures} names unknown check id {i!r}"
                for i in known.unknown([*implementation_ids, *endpoint_ids])
            ]
        if args.only:
            ids, other = (endpoint_ids, implementation_ids) if is_endpoint else (implementation_ids, endpoint_ids)
            only, unknown = select_ids(ids, args.only)
            misplaced = [o for o in unknown if not select_ids(other, [o])[1]]
            if misplaced:
                kind = "implementation" if is_endpoint else "endpoint"
                raise UnknownCheckError(f"{kind} check ids do not apply to this target: {', '.join(misplaced)}")
            if unknown:
                raise UnknownCheckError(f"unknown check ids: {', '.join(unknown)}")
        check_report_paths(
            junit=args.junit,
            json_path=args.json_path,
            markdown=args.markdown,
            html_path=args.html_path,
            report_dir=args.report_dir,
        )
    except (KnownFailuresError, UnknownCheckError, ReportError) as exc:
        return _usage(str(exc))
    for note in problems:
        print(f"dsweb certify: error: {note}", file=sys.stderr)
    print(scrub_text("\n".join(opening(args, is_endpoint=is_endpoint))), flush=True)

    secrets: RunSecrets
    if is_endpoint:
        try:
            report, secrets = _run_endpoint(args, only, known)
        except ValueError as exc:  # e.g. a cassette directory that is missing or holds no cassette
            return _usage(str(exc))
    else:
        try:
            lanes: TargetFactory = reference_target
            if args.adapter:
                command, env = args.adapter, _adapter_env(args.adapter_env)
                lanes = lambda: AdapterTarget(command, env=env)  # noqa: E731 (one adapter process per lane)
            target: Target = lanes()
        except (AdapterCommandError, ValueError) as exc:
            return _usage(str(exc))
        secrets = run_secrets()

        def progress(result: CheckResult) -> None:
            print_line(result, sys.stdout, secrets)

        with seeded(args.seed):
            report = asyncio.run(
                run_suite(target, only=only, known_failures=known, progress=progress, profiles=args.profile,
                          jobs=args.jobs, lanes=lanes)
            )
    if args.durations:
        print("\n".join(_slowest(report, args.durations)))
    print(scrub_text(f"{report.target.description}: {summary(report, problems)}", secrets))
    for verdict in report.profiles:
        print(f"profile {verdict.name}: {verdict.explain()}")
    wanted = [v for v in report.profiles if v.name in args.profile]
    why = nothing_certified(report) if report.ok else None
    if why is not None:
        print(f"dsweb certify: {why}", file=sys.stderr)
    try:
        paths = write_reports(
            report,
            secrets=secrets,
            problems=problems,
            junit=args.junit,
            json_path=args.json_path,
            markdown=args.markdown,
            html_path=args.html_path,
            report_dir=args.report_dir,
        )
    except ReportError as exc:
        return _usage(str(exc))
    ok = report_ok(report) and not problems and all(v.certified for v in wanted)
    print(scrub_text("\n".join(closing(ok, summary(report, problems), paths)), secrets))
    return 0 if ok else 1
