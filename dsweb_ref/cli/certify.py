"""``dsweb certify``: run the certification suite and write reports.

With no target option it certifies the reference implementation in-process against the embedded
emulator (offline, no key). ``--adapter CMD`` drives another implementation over the adapter
protocol; ``--base`` / ``--messages-base --tools-base`` / ``--cassettes`` certify an endpoint.
Exit 0 when every check passed, was skipped or is a known failure; 1 otherwise; 2 on bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from ..certification.known_failures import KnownFailures, KnownFailuresError, load_known_failures
from ..certification.model import CheckResult, Report
from ..certification.report import print_line, summary, write_reports
from ..certification.suite import UnknownCheckError, run_suite, select_checks
from ..certification.targets import AdapterTarget, Target, reference_target


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("certify", help="certify an implementation (default: the reference) or an endpoint")
    target = p.add_argument_group("target (default: the reference implementation, in-process)")
    target.add_argument("--adapter", metavar="CMD", help="adapter command speaking the JSON-lines adapter protocol")
    target.add_argument("--base", metavar="URL", help="endpoint base serving both Messages and Search/Fetch")
    target.add_argument("--messages-base", metavar="URL", help="endpoint Messages base (with --tools-base)")
    target.add_argument("--tools-base", metavar="URL", help="endpoint Search/Fetch base (with --messages-base)")
    target.add_argument("--cassettes", metavar="DIR", help="certify recorded endpoint cassettes in DIR")
    target.add_argument("--api-key-env", default="DEEPSEEK_API_KEY", metavar="NAME",
                        help="environment variable holding the endpoint key (default: DEEPSEEK_API_KEY)")
    p.add_argument("--known-failures", metavar="FILE", help="YAML list of check ids known to fail, with reasons")
    p.add_argument("--only", nargs="+", metavar="ID", help="run only these check ids (or id prefixes)")
    p.add_argument("--list", action="store_true", help="list the checks and exit")
    out = p.add_argument_group("reports")
    out.add_argument("--report-dir", metavar="DIR", help="write junit.xml, report.json, report.md, report.html")
    out.add_argument("--junit", metavar="FILE")
    out.add_argument("--json", metavar="FILE", dest="json_path")
    out.add_argument("--markdown", metavar="FILE")
    out.add_argument("--html", metavar="FILE", dest="html_path")
    p.set_defaults(func=run)


def _usage(message: str) -> int:
    print(f"dsweb certify: {message}", file=sys.stderr)
    return 2


def _endpoint(args: argparse.Namespace) -> tuple[Report, list[str]] | None:
    if not (args.base or args.messages_base or args.tools_base or args.cassettes):
        return None
    # Written by the endpoint-certification work; imported here so the rest works without it.
    from ..certification.endpoint import certify_endpoint  # type: ignore[import-not-found,unused-ignore]
    from ..certification.model import Report as ReportType

    key = os.environ.get(args.api_key_env)
    messages_base = args.messages_base or (args.base and args.base.rstrip("/") + "/anthropic/v1")
    tools_base = args.tools_base or (args.base and args.base.rstrip("/") + "/v1/tools")
    info, results = certify_endpoint(
        messages_base=messages_base, tools_base=tools_base, cassette_dir=args.cassettes, api_key=key
    )
    from .._version import __version__

    return ReportType(__version__, info, tuple(results)), [key] if key else []


def run(args: argparse.Namespace) -> int:
    if args.list:
        for spec in select_checks(None):
            print(f"{spec.check.id:<36} seed {spec.check.seed}  [{', '.join(spec.requires)}]  {spec.check.description}")
        return 0
    if bool(args.messages_base) != bool(args.tools_base):
        return _usage("--messages-base and --tools-base go together")
    known: KnownFailures | None = None
    notes: list[str] = []
    try:
        if args.known_failures:
            known = load_known_failures(args.known_failures)
            ids = [s.check.id for s in select_checks(None)]
            notes += [f"known-failures file names unknown check id {i!r}" for i in known.unknown(ids)]
        select_checks(args.only)
    except (KnownFailuresError, UnknownCheckError) as exc:
        return _usage(str(exc))
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)

    secrets: list[str] = []
    endpoint = _endpoint(args)
    if endpoint is not None:
        report, secrets = endpoint
        if known is not None:
            report = Report(report.suite_version, report.target, tuple(known.apply(report.results)),
                            report.started_at, report.finished_at)
        for result in report.results:
            print_line(result, sys.stdout, secrets)
    else:
        target: Target = AdapterTarget(args.adapter) if args.adapter else reference_target()

        def progress(result: CheckResult) -> None:
            print_line(result, sys.stdout, secrets)

        report = asyncio.run(run_suite(target, only=args.only, known_failures=known, progress=progress))
    print(f"{report.target.description}: {summary(report)}")
    for path in write_reports(
        report,
        secrets=secrets,
        notes=notes,
        junit=args.junit,
        json_path=args.json_path,
        markdown=args.markdown,
        html_path=args.html_path,
        report_dir=args.report_dir,
    ):
        print(f"wrote {path}")
    return 0 if report.ok else 1
