#!/usr/bin/env python3
"""Certify the timing and race checks on a deliberately loaded machine (issue 24 item 1).

While CPU hogs (bounded busy-loop subprocesses, one per core) saturate the machine, runs ``dsweb
certify --only <the timing and race checks>`` RUNS times for the reference and for the example
adapter, two certify runs at a time, and each timing and race break mode of the example adapter
RUNS times too (with ``--alongside``, beside every other timing check, as in a whole run).
``--beside CHECK...`` adds checks to every run (which must pass), e.g. a CPU-bound one the run hands
to its check worker, so the worker computes while the timing checks measure. Prints, per target,
the false failures (a correct target not certified) and, per break mode, how often its check
caught it. Exit status 1 on any false failure or missed catch.

    python scripts/loaded_certify.py --runs 20

The full 20-run proof takes minutes, so the test suite runs it with ``--runs 1`` (see
tests/certification/test_loaded_certify.py); run the full one by hand or in a nightly job.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADAPTER = f"{sys.executable} {ROOT / 'tests' / 'fixtures' / 'example_adapter.py'}"
TIMING_CHECKS = (  # every check of slot "quiet" (tests/certification/test_loaded_certify.py), the race check, and
    # search.messages.recorded, whose held row judges an order (the record is there while the request is in flight)
    "search.api.fail_fast",
    "search.api.retry.never",
    "ssrf.deadline",
    "search.batch.race",
    "search.api.retry.waits",
    "search.api.retry.cancel",
    "search.api.retry.deadline",
    "search.api.pacing.rate",
    "search.api.pacing.lowered",
    "search.api.pacing.shared",
    "search.api.pacing.fraction",
    "fetch.api.pacing.fraction",
    "search.api.pacing.retries",
    "search.api.pacing.cancel",
    "search.api.pacing.failure",
    "search.api.pacing.cancel_slots",
    "fetch.api.pacing.rate",
    "fetch.api.pacing.retries",
    "fetch.api.retry.waits",
    "search.messages.recorded",
)
# break mode -> the one timing or race check that must fail
BREAKS = {
    "ssrf-no-deadline": "ssrf.deadline",
    "ssrf-deadline-per-hop": "ssrf.deadline",
    "miss-failure-after-success": "search.batch.race",
    "lost-failure-race": "search.batch.race",
    "retry-ignores-retry-after": "search.api.retry.waits",
    "retry-at-once": "search.api.retry.waits",
    "retry-fetch-at-once": "fetch.api.retry.waits",
    "retry-after-429-503-only": "search.api.retry.waits",  # Retry-After on 408 and 500 too
    "retry-cancel-late": "search.api.retry.cancel",
    "retry-past-deadline": "search.api.retry.deadline",
    "retry-deadline-per-attempt": "search.api.retry.deadline",
    "pacing-burst": "search.api.pacing.rate",
    "pacing-per-request": "search.api.pacing.rate",
    "pacing-retries-unpaced": "search.api.pacing.retries",
    "pacing-backoff-retries-unpaced": "search.api.pacing.retries",
    "pacing-cancel-sends": "search.api.pacing.cancel",
    "pacing-by-default": "search.api.fail_fast",
    "record-after-reply": "search.messages.recorded",
    "pacing-cancel-keeps-slots": "search.api.pacing.cancel_slots",
    "fetch-unpaced": "fetch.api.pacing.rate",
    "fetch-retries-unpaced": "fetch.api.pacing.retries",
    "pacing-rate-kept": "search.api.pacing.lowered",
    "pacing-failure-spares-slots": "search.api.pacing.failure",
    "pacing-evidence-unpaced": "search.api.pacing.shared",
    "pacing-whole-rate": "search.api.pacing.fraction",
    "fetch-pacing-whole-rate": "fetch.api.pacing.fraction",
    "timeout-whole-seconds": "ssrf.deadline",
    "retry-after-date-local": "search.api.retry.waits",
    "pacing-full-bucket": "search.api.pacing.rate",
    "retry-after-date-capped": "search.api.retry.waits",
    "endpoint-at-slot": "settings.snapshot.per_operation",
}
DSWEB = "import sys; from dsweb_ref.cli import main; sys.exit(main())"
HOG_SECONDS = 3600.0  # a hog ends on its own after this long even if this script is killed


def start_hogs(count: int) -> list[subprocess.Popen[bytes]]:
    code = f"import time\nend = time.monotonic() + {HOG_SECONDS}\nwhile time.monotonic() < end:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


def certify(only: tuple[str, ...], adapter: str | None) -> dict[str, str]:
    """check id -> outcome of one ``dsweb certify --only`` run."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        argv = [sys.executable, "-c", DSWEB, "certify", "--only", *only, "--json", str(report)]
        if adapter is not None:
            argv += ["--adapter", adapter]
        subprocess.run(argv, capture_output=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
        data = json.loads(report.read_text()) if report.exists() else {"checks": []}
    for c in data["checks"]:
        if c["details"] or c["reason"]:
            NOTES.append(f"{c['id']} {c['outcome']}: {c['reason'][:200]} {json.dumps(c['details'])[:600]}")
    return {c["id"]: c["outcome"] for c in data["checks"]}


NOTES: list[str] = []  # every reason and note seen, printed with --verbose


TARGETS = {"reference": None, "example adapter": ADAPTER}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--hogs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--checks", nargs="+", default=list(TIMING_CHECKS), help="the correct targets' checks")
    parser.add_argument("--targets", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    parser.add_argument("--breaks", nargs="*", default=list(BREAKS), choices=list(BREAKS))
    parser.add_argument("--beside", nargs="*", default=[], metavar="CHECK",
                        help="checks every run adds, which must pass (e.g. search.differential.failure, which "
                        "a run hands to its check worker: it then computes beside the timing checks)")
    parser.add_argument("--alongside", action="store_true",
                        help="run each break's check beside every other timing check, as a whole certify run does "
                        "(their shared loop lag is what the load calibration must not let excuse a break)")
    parser.add_argument("--verbose", action="store_true", help="print every failure reason and late-under-load note")
    args = parser.parse_args(argv)
    # a check named twice made every run's outcome count disagree with the list: each correct run read as failed
    args.checks = list(dict.fromkeys(args.checks))
    jobs: list[tuple[str, tuple[str, ...], str | None, str | None]] = []
    for _ in range(args.runs):
        jobs += [(name, (*args.checks, *args.beside), TARGETS[name], None) for name in args.targets]
        jobs += [(mode, (check, *args.beside, *(c for c in args.checks if c != check and args.alongside)),
                  f"{ADAPTER} --break {mode}", check)
                 for mode, check in ((m, BREAKS[m]) for m in args.breaks)]
    began = time.monotonic()
    hogs = start_hogs(args.hogs)
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:  # two certify runs at once
            results = list(pool.map(lambda job: (job, certify(job[1], job[2])), jobs))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    bad = 0
    tally: dict[str, list[int]] = {}
    for (name, only, _, must_fail), outcomes in results:
        counts = tally.setdefault(name, [0, 0])
        counts[1] += 1
        if must_fail is None:
            good = len(outcomes) == len(only) and all(o in ("passed", "skipped") for o in outcomes.values())
        else:
            others = {i: o for i, o in outcomes.items() if i != must_fail}
            # Alongside, a break may fail other checks too (retry-cancel-late's stubborn sleep also holds a
            # paced wait): only its own check is counted; the end-to-end break tests prove "exactly".
            good = outcomes.get(must_fail) == "failed" and (args.alongside or (
                set(others) == set(only) - {must_fail} and all(o in ("passed", "skipped") for o in others.values())))
        counts[0] += good
        bad += not good
    for name, (good, total) in tally.items():
        what = "certified" if name in TARGETS else "caught"
        print(f"{name:28} {what} {good}/{total}")
    print(f"hogs: {args.hogs}; concurrent certify runs: 2; wall: {time.monotonic() - began:.0f} s")
    if args.verbose:
        print("\n".join(NOTES))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
