"""Benchmark: the whole test suite with two workers (`pytest -n 2`, with the scheduling pytest config
chooses), and its wall time next to what a bare interpreter costs to start.

Prints ``suite_wall_s`` (goal <= 120 s on a quiet two-core machine), ``workers``,
``python_startup_s`` (median `python -c pass`, the unit every subprocess of the suite pays),
``suite_over_startup`` (the suite's wall in interpreter starts: a figure that load inflates on both
sides alike) and the load average around the run. With ``--serial`` it also runs the suite with
`-n 0` first and prints `ratio <serial / parallel>` (goal >= 1.7 on a 2-core machine). A benchmark,
not a test: run it when the machine is quiet.

    python scripts/bench_suite.py [--runs 1] [--workers 2] [--serial] [-- extra pytest args]
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


def python_startup(rounds: int = 9) -> float:
    """Median wall time of `python -c pass` (after one warm-up start)."""
    times = []
    for _ in range(rounds + 1):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--serial", action="store_true", help="also run `-n 0` and print serial / parallel")
    parser.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    serial: list[float] = []
    parallel: list[float] = []
    startup: list[float] = []
    for _ in range(args.runs):
        if args.serial:
            serial.append(timed_run(0, args.extra))
        startup.append(python_startup())
        parallel.append(timed_run(args.workers, args.extra))
        startup.append(python_startup())
    p, bare = statistics.median(parallel), statistics.median(startup)
    print(f"suite_wall_s {p:.1f}  workers {args.workers}  cores {os.cpu_count()}")
    print(f"python_startup_s {bare:.3f}  suite_over_startup {p / bare:.0f}")
    if serial:
        s = statistics.median(serial)
        print(f"serial {s:.1f} s  parallel ({args.workers} workers) {p:.1f} s")
        print(f"ratio {s / p:.2f}")


if __name__ == "__main__":
    main()
