"""Benchmark: the whole test suite serial (`pytest -n 0`) against two workers (`pytest -n 2`, with
the scheduling pytest config chooses), same machine, back to back.

Prints both wall times, the load average around each run (other work on the machine skews the
figure: run it when the machine is quiet) and `ratio <serial / parallel>` (goal >= 1.7 on a
2-core machine). A benchmark, not a test; it runs the full suite twice per --runs.

    python scripts/bench_suite.py [--runs 1] [--workers 2] [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed_run(workers: int, extra: list[str]) -> float:
    argv = [sys.executable, "-m", "pytest", "-q", "-n", str(workers), "-p", "no:cacheprovider", *extra]
    before = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-200:]
    if done.returncode != 0:
        raise SystemExit(f"pytest -n {workers} failed ({done.returncode}): {summary}")
    print(f"-n {workers}: {elapsed:7.1f} s  load {before:.2f} -> {os.getloadavg()[0]:.2f}  ({summary})", flush=True)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    serial: list[float] = []
    parallel: list[float] = []
    for _ in range(args.runs):
        serial.append(timed_run(0, args.extra))
        parallel.append(timed_run(args.workers, args.extra))
    s, p = statistics.median(serial), statistics.median(parallel)
    print(f"serial {s:.1f} s  parallel ({args.workers} workers) {p:.1f} s  cores {os.cpu_count()}")
    print(f"ratio {s / p:.2f}")


if __name__ == "__main__":
    main()
