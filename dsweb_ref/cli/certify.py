"""``dsweb certify``: run the certification suite and write reports.

With no target option it certifies the reference implementation in-process against the embedded
emulator (offline, no key). ``--adapter CMD`` drives another implementation over the adapter
protocol; ``--base`` / ``--messages-base --tools-base`` (live) or ``--cassettes`` (offline)
certify an endpoint. The three kinds of target exclude each other.

Exit codes (also in ``--help``, see :data:`._certify_text.EXIT_CODES`): 0 certified, 1 not certified,
2 the run could not start or was stopped by its target (usage, input, preflight, an endpoint that went
silent), 130 interrupted (SIGINT/SIGTERM; the reports hold the checks that finished), 141 output pipe
closed. The verdict rule is :data:`._certify_text.VERDICT_RULE`.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._version import __version__
from ..certification import checks as check_catalogue
from ..certification.adapter_protocol import HELLO_TIMEOUT
from ..certification.checks.differential import seeded
from ..certification.forkserver import forking
from ..certification.known_failures import KnownFailures, KnownFailuresError, load_known_failures
from ..certification.model import Check, CheckResult, Report, TargetInfo
from ..certification.profiles import PROFILES, UnknownProfileError, find_profile, profile_verdicts
from ..certification.report import (
    ReportError,
    RunSecrets,
    check_report_paths,
    given_credentials,
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
from ..certification.targets import (
    AdapterCommandError,
    AdapterTarget,
    Hello,
    Method,
    PendingCall,
    Probe,
    Target,
    TargetConfig,
    reference_target,
    split_command,
    terminate_adapters,
)
from ..emulator.server import quiet_cut_notes
from . import EXIT_INTERRUPTED
from ._certify_run import (
    PREFLIGHT_TIMEOUT,
    Interrupted,
    check_base,
    preflight_adapter,
    reach_base,
    run_guarded,
    stop_if_interrupted,
)
from ._certify_text import EXIT_CODES, VERDICT_RULE, closing, opening, show_catalogue, stopped_line
from ._commands import parser_texts

MIN_KEY_CHARS = 4  # the shortest credential reports redact (certification/report.py)
ENDPOINT_OPTIONS = ("--base", "--messages-base", "--tools-base", "--cassettes")
PATH_OPTIONS = ("cassettes", "known_failures", "report_dir", "junit", "json_path", "markdown", "html_path")
ENDPOINT_TIMEOUT = 30.0  # seconds per request of an endpoint run (--timeout)


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("certify", **parser_texts("certify", f"{VERDICT_RULE}\n\n{EXIT_CODES}"))
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
    target.add_argument("--timeout", type=float, metavar="SECONDS",
                        help=f"endpoint runs: deadline of each request (default {ENDPOINT_TIMEOUT:g}); a live run "
                        "stops (exit 2) after 3 checks in a row get no HTTP answer")
    target.add_argument("--adapter-start-timeout", type=float, metavar="SECONDS",
                        help=f"--adapter: seconds from starting the adapter to its hello answer (default "
                        f"{HELLO_TIMEOUT:g}); answer hello before heavy imports")
    p.add_argument("--known-failures", metavar="FILE", help="YAML list of check ids known to fail, with reasons")
    p.add_argument(
        "--only", nargs="+", action="extend", metavar="ID", help="run only these check ids (or id prefixes); repeatable"
    )
    p.add_argument("--profile", action="append", default=[], metavar="NAME",
                   help="certify this profile (repeatable): run its checks; exit 1 unless it is certified; "
                   "--list names the profiles")
    p.add_argument("--list", action="store_true", help="list the checks (implementation and endpoint) and exit; "
                   "with --markdown [FILE], the whole catalogue (rules and case tables) as Markdown")
    p.add_argument("--explain", metavar="ID", help="print a check's rule, seed, capabilities, profiles and case table")
    p.add_argument("--full", action="store_true", help="with --explain: print each case's params whole (cut to "
                   "one line otherwise)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="seed of the generated scenarios of the search.differential checks (default: fixed; "
                   "a failure names the seed that replays it)")
    p.add_argument("--jobs", type=_positive, default=default_jobs(), metavar="N",
                   help=f"run up to N checks at once, each on its own target instance (default: {default_jobs()}, "
                   "from the CPU count; 1 runs them one by one; the reference on two cores or more hands up to N "
                   "more to a worker process)")
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


def _usage(message: str, secrets: Iterable[str] = ()) -> int:
    print(f"dsweb certify: {scrub_text(message, secrets)}", file=sys.stderr)
    return 2


def endpoint_checks() -> list[Check]:
    """The endpoint checks, in run order (imported lazily: endpoint certification pulls in vcrpy)."""
    from ..certification.endpoint import ENDPOINT_CHECKS

    return list(ENDPOINT_CHECKS)


def _list() -> int:
    print("implementation checks (default target, --adapter):")
    for spec in check_catalogue.all_checks():
        print(f"  {spec.check.id:<36} seed {spec.check.seed}  [{', '.join(spec.requires)}]  {spec.check.description}")
    print("endpoint checks (--base, --messages-base/--tools-base, --cassettes):")
    for c in endpoint_checks():
        print(f"  {c.id:<36} seed {c.seed}  [{c.capability}]  {c.description}")
    print("profiles (--profile NAME; certified when every capability named is declared and each of its checks passes):")
    for profile in PROFILES:
        needs = [*profile.requires, *([" or ".join(profile.requires_any)] if profile.requires_any else [])]
        opt = (", opt-in" if profile.opt_in else "") + (", on request" if profile.on_request else "")
        print(f"  {profile.name:<36} seed {profile.seed}  [{', '.join(needs)}{opt}]  {profile.description}")
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
        if not name or "\0" in spec:  # the value is not repeated: it may be a credential
            raise ValueError("--adapter-env: expected NAME or NAME=VALUE (a name, then an optional =VALUE)")
        if sep:
            env[name] = value
        elif name in os.environ:
            env[name] = os.environ[name]
        else:
            raise ValueError(f"--adapter-env {name}: {name} is not set in this environment")
    return env


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _absolute_paths(args: argparse.Namespace) -> None:
    """Every path option taken from the working directory, whatever later joins or prints it."""
    for name in PATH_OPTIONS:
        value = getattr(args, name, None)
        if isinstance(value, str) and value.strip() and value != "-":
            setattr(args, name, os.path.abspath(value))


def _bases(args: argparse.Namespace) -> tuple[str | None, str | None]:
    messages_base = args.messages_base or (args.base and args.base.rstrip("/") + "/anthropic/v1")
    tools_base = args.tools_base or (args.base and args.base.rstrip("/") + "/v1/tools")
    return messages_base, tools_base


def _seconds_problem(args: argparse.Namespace, is_endpoint: bool) -> str | None:
    for option, value in (("--timeout", args.timeout), ("--adapter-start-timeout", args.adapter_start_timeout)):
        if value is not None and not (math.isfinite(value) and value > 0):
            return f"{option} needs a positive number of seconds, not {value:g}"
    if args.timeout is not None and not is_endpoint:
        return "--timeout applies to endpoint runs (--base, --messages-base/--tools-base, --cassettes)"
    if args.adapter_start_timeout is not None and not args.adapter:
        return "--adapter-start-timeout applies to --adapter only"
    return None


def _preflight_endpoint(args: argparse.Namespace) -> str | None:
    """Why a live endpoint run cannot start (a base that is no URL, no key, a base that does not answer)."""
    if args.cassettes is not None:
        return None
    given = [("--base", args.base), ("--messages-base", args.messages_base), ("--tools-base", args.tools_base)]
    for option, url in given:
        if url and (problem := check_base(option, url)):
            return problem
    if not (os.environ.get(args.api_key_env) or "").strip():
        return (
            f"environment variable {args.api_key_env} is unset or empty: a live endpoint run needs the key "
            "(--api-key-env NAME reads another variable)"
        )
    if len((os.environ.get(args.api_key_env) or "").strip()) < MIN_KEY_CHARS:
        return (
            f"the key in {args.api_key_env} is shorter than {MIN_KEY_CHARS} characters: so short a value "
            "cannot be told apart from ordinary text, so no report could be kept free of it"
        )
    limit = min(PREFLIGHT_TIMEOUT, args.timeout or ENDPOINT_TIMEOUT)
    messages_base, tools_base = _bases(args)
    named = {"--base": args.base} if args.base else {"--messages-base": messages_base, "--tools-base": tools_base}
    for option, url in named.items():
        if url and (problem := reach_base(option, url, limit)):
            return problem
    return None


def _partial_report(
    info: TargetInfo, results: Sequence[CheckResult], started: str, *, implementation: bool
) -> Report:
    """The report of a run that stopped early: the checks that finished, profiles judged on them."""
    verdicts: tuple[Any, ...] = ()
    if implementation:
        verdicts = profile_verdicts(check_catalogue.profile_members(info.capabilities), results, info.capabilities)
    return Report(__version__, info, tuple(results), started, _now(), verdicts)


def _endpoint_coroutine(
    args: argparse.Namespace, only: Sequence[str] | None, known: KnownFailures | None, secrets: RunSecrets,
    finished: list[CheckResult],
) -> Callable[[], Coroutine[Any, Any, tuple[TargetInfo, list[CheckResult]]]]:
    """The endpoint run; each check's line prints as it completes, restricted to ``only`` and with the
    known failures applied, and lands in ``finished`` (what an interrupted run still reports)."""
    from ..certification import endpoint

    key = os.environ.get(args.api_key_env) or None
    selected = set(only) if only is not None else None

    def progress(result: CheckResult) -> None:
        if selected is not None and result.check.id not in selected:
            return
        shown = known.apply([result])[0] if known is not None else result
        finished.append(shown)
        print_line(shown, sys.stdout, secrets)
        stop_if_interrupted()

    messages_base, tools_base = _bases(args)
    return lambda: endpoint.run_endpoint(
        messages_base=messages_base,
        tools_base=tools_base,
        cassette_dir=args.cassettes,
        api_key=key,
        timeout_s=args.timeout or ENDPOINT_TIMEOUT,
        progress=progress,
    )


class _HelloKept:
    """The target as the suite drives it, keeping its hello answer for the report of an interrupted run."""

    def __init__(self, inner: Target) -> None:
        self.inner = inner
        self.answer: Hello | None = None

    def info(self) -> TargetInfo:
        a = self.answer
        caps = tuple(sorted(a.capabilities)) if a else ()
        return TargetInfo("implementation", self.inner.describe(), a.name if a else "", a.version if a else "", caps)

    def describe(self) -> str:
        return self.inner.describe()

    def recipe(self) -> dict[str, Any] | None:
        """The inner target's (the check worker makes its own copy from it), or None."""
        make = getattr(self.inner, "recipe", None)
        return make() if callable(make) else None

    async def hello(self) -> Hello:
        self.answer = await self.inner.hello()
        return self.answer

    async def configure(self, config: TargetConfig) -> None:
        await self.inner.configure(config)

    def start_call(self, method: Method, params: dict[str, Any], probe: Probe | None = None) -> PendingCall:
        return self.inner.start_call(method, params, probe)

    def use_environment(self, variables: Mapping[str, str]) -> None:
        self.inner.use_environment(variables)

    async def close(self) -> None:
        await self.inner.close()


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # outside the run's own handling: `dsweb` prints one line and exits 130


def run(args: argparse.Namespace) -> int:
    """``dsweb certify``; SIGTERM outside the run's own handling ends it like Ctrl-C (one line, exit 130)."""
    quiet_cut_notes()
    try:
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    except ValueError:  # not the main thread: leave signals alone
        return _run(args)
    try:
        return _run(args)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    if args.full and args.explain is None:
        return _usage("--full goes with --explain ID")
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
    if (problem := _seconds_problem(args, is_endpoint)) is not None:
        return _usage(problem)
    _absolute_paths(args)
    try:
        for name in args.profile:
            find_profile(name)
    except UnknownProfileError as exc:
        return _usage(str(exc))
    if args.profile and is_endpoint:
        return _usage("--profile certifies an implementation; it does not apply to an endpoint")
    implementation_ids = [s.check.id for s in check_catalogue.all_checks()]  # those run on request too

    def endpoint_ids() -> list[str]:  # loads the endpoint catalogue (probes, cassettes): only when asked
        return [c.id for c in endpoint_checks()]

    problems: list[str] = []
    known: KnownFailures | None = None
    only: list[str] | None = None
    try:
        if args.known_failures:
            known = load_known_failures(args.known_failures)
            problems += [
                f"known-failures file {args.known_failures} names unknown check id {i!r}"
                for i in known.unknown([*implementation_ids, *endpoint_ids()])
            ]
        if args.only:
            only, unknown = select_ids(endpoint_ids() if is_endpoint else implementation_ids, args.only)
            other = (implementation_ids if is_endpoint else endpoint_ids()) if unknown else []
            misplaced = [o for o in unknown if not select_ids(other, [o])[1]]
            if misplaced:
                kind = "implementation" if is_endpoint else "endpoint"
                raise UnknownCheckError(f"{kind} check ids do not apply to this target: {', '.join(misplaced)}")
            if unknown:
                raise UnknownCheckError(f"unknown check ids: {', '.join(unknown)}")
            if args.profile and not is_endpoint:
                # --profile narrows the catalogue before --only picks from it: an id outside every named
                # profile would select nothing, so it is a usage error here, not a traceback later.
                in_profiles = [s.check.id for s in select_checks(None, args.profile)]
                outside = [o for o in args.only if select_ids(in_profiles, [o])[1]]
                if outside:
                    raise UnknownCheckError(
                        f"check ids not in the profiles {', '.join(args.profile)}: {', '.join(outside)} "
                        "(drop --profile, or name a profile that holds them: dsweb certify --list)"
                    )
        check_report_paths(
            junit=args.junit,
            json_path=args.json_path,
            markdown=args.markdown,
            html_path=args.html_path,
            report_dir=args.report_dir,
        )
        adapter_env = _adapter_env(args.adapter_env) if args.adapter else {}
        # Credentials the run is handed (an adapter's credential-named variables and options) are
        # redacted like the key an endpoint run sends, from the first line printed on.
        given = given_credentials(adapter_env, split_command(args.adapter)) if args.adapter else []
    except (KnownFailuresError, UnknownCheckError, ReportError, AdapterCommandError, ValueError) as exc:
        return _usage(str(exc))
    if is_endpoint and not args.cassettes:
        given.append((os.environ.get(args.api_key_env) or "").strip())
    secrets = run_secrets(given=given)  # the environment is scanned once, not per line
    # Preflight: each problem is one line and exit 2, before any check runs.
    if is_endpoint:
        preflight = _preflight_endpoint(args)
    elif args.adapter:
        start_timeout = args.adapter_start_timeout or HELLO_TIMEOUT
        try:
            preflight = run_guarded(
                lambda: preflight_adapter(args.adapter, adapter_env, start_timeout),
                terminate_adapters,
            )
        except Interrupted as exc:
            print(f"dsweb certify: interrupted ({exc.args[0]}) before any check ran; no report written",
                  file=sys.stderr)
            return EXIT_INTERRUPTED
    else:
        preflight = None
    if preflight is not None:
        return _usage(preflight, secrets)

    for note in problems:
        print(f"dsweb certify: error: {note}", file=sys.stderr)
    print(scrub_text("\n".join(opening(args, is_endpoint=is_endpoint)), secrets), flush=True)

    finished: list[CheckResult] = []
    started = _now()
    if is_endpoint:
        from ..certification.endpoint import EndpointStopped, endpoint_description

        try:
            info, _ = run_guarded(
                _endpoint_coroutine(args, only, known, secrets, finished), terminate_adapters
            )
        except ValueError as exc:  # e.g. a cassette directory that is missing or holds no cassette
            return _usage(str(exc))
        except (Interrupted, EndpointStopped) as exc:
            partial = _partial_report(
                endpoint_description(*_bases(args), args.cassettes), finished, started, implementation=False
            )
            code = EXIT_INTERRUPTED if isinstance(exc, Interrupted) else 2
            return _stopped(args, partial, secrets, problems, exc, code, len(only or endpoint_ids()))
        report = Report(__version__, info, tuple(finished), started, _now())
    else:
        hello_timeout = args.adapter_start_timeout or HELLO_TIMEOUT
        lanes: TargetFactory = reference_target
        if args.adapter:
            command = args.adapter
            lanes = lambda: AdapterTarget(command, env=adapter_env, hello_timeout=hello_timeout)  # noqa: E731 (a process per lane)
        target: Target = lanes()

        def progress(result: CheckResult) -> None:
            finished.append(result)
            print_line(result, sys.stdout, secrets)
            stop_if_interrupted()  # a check that swallowed the cancellation stops the run here

        chosen = _HelloKept(target)
        # Workers forked from a copy of this process, not new interpreters that import it all again
        # (a run without workers only pays one fork).
        fork = forking() if args.jobs >= 2 else contextlib.nullcontext()
        try:
            with seeded(args.seed), fork:
                report = run_guarded(
                    lambda: run_suite(
                        chosen, only=only, known_failures=known, progress=progress, profiles=args.profile,
                        jobs=args.jobs, lanes=lanes,
                    ),
                    terminate_adapters,
                )
        except Interrupted as exc:
            info = chosen.info()
            partial = _partial_report(info, finished, started, implementation=True)
            total = len(select_checks(only, args.profile))
            return _stopped(args, partial, secrets, problems, exc, EXIT_INTERRUPTED, total)
    return _finish(args, report, secrets, problems)


def _stopped(
    args: argparse.Namespace,
    report: Report,
    secrets: RunSecrets,
    problems: list[str],
    why: Exception,
    code: int,
    total: int,
) -> int:
    """A run that stopped early: every report written with the checks that finished and the reason,
    then one line (the reports' paths, or that none was asked for) and ``code``."""
    cause = f"interrupted ({why.args[0]})" if isinstance(why, Interrupted) else str(why)
    marker = f"{cause} after {len(report.results)} of {total} checks; the checks that did not finish are not listed"
    try:
        paths = _write(args, report, secrets, [*problems, marker], marker)
    except ReportError as exc:
        return _usage(f"{cause}; and {exc}")
    print(scrub_text(stopped_line(cause, len(report.results), total, paths, code), secrets), file=sys.stderr)
    return code


def _write(
    args: argparse.Namespace, report: Report, secrets: RunSecrets, problems: list[str], interrupted: str | None = None
) -> list[Path]:
    return write_reports(
        report,
        secrets=secrets,
        problems=problems,
        interrupted=interrupted,
        junit=args.junit,
        json_path=args.json_path,
        markdown=args.markdown,
        html_path=args.html_path,
        report_dir=args.report_dir,
    )


def _finish(args: argparse.Namespace, report: Report, secrets: RunSecrets, problems: list[str]) -> int:
    """Summary, profile lines, reports and the verdict of a run that finished."""
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
        paths = _write(args, report, secrets, problems)
    except ReportError as exc:
        return _usage(str(exc))
    ok = report_ok(report) and not problems and all(v.certified for v in wanted)
    print(scrub_text("\n".join(closing(ok, summary(report, problems), paths)), secrets))
    return 0 if ok else 1
