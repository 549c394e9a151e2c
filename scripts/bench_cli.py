"""Benchmark: how fast the command line starts, and how long `dsweb certify` takes.

Prints `ratio <dsweb --version / python -c pass>` (median wall time of fresh interpreters; goal <= 4)
and `certify_s <wall time of one dsweb certify run>` (the reference implementation against the
embedded emulator, every check). A benchmark, not a test: run it on a quiet machine.

    python scripts/bench_cli.py [--rounds 15] [--no-certify]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time


def wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def median_wall(argv: list[str], rounds: int) -> float:
    wall(argv)  # warm the page cache and .pyc files
    return statistics.median(wall(argv) for _ in range(rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--no-certify", action="store_true", help="skip the `dsweb certify` timing")
    args = parser.parse_args()
    bare = median_wall([sys.executable, "-c", "pass"], args.rounds)
    version = median_wall([sys.executable, "-m", "dsweb_ref", "--version"], args.rounds)
    helped = median_wall([sys.executable, "-m", "dsweb_ref", "--help"], args.rounds)
    print(f"python -c pass   {bare * 1000:8.1f} ms")
    print(f"dsweb --version  {version * 1000:8.1f} ms")
    print(f"dsweb --help     {helped * 1000:8.1f} ms")
    print(f"ratio {version / bare:.2f}  (goal <= 4)")
    if not args.no_certify:
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "dsweb_ref", "certify", "--report-dir", out], stdout=subprocess.DEVNULL
            )
            took = time.perf_counter() - start
        print(f"certify_s {took:.2f}  (exit {done.returncode})")


if __name__ == "__main__":
    main()
