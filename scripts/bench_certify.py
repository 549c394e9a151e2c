"""Benchmark: `dsweb certify` for every profile together, the reference in-process and the example
adapter, each as its own fresh process, with figures that stay meaningful on a busy machine.

For each target it prints:

* ``certify_wall_s``: the whole command, start to exit;
* ``certify_cpu_s``: CPU (user + system) of the command and everything it started (adapter lanes);
* ``longest_check_s``: the slowest check of that same run (its report's ``duration_s``);
* ``ratio = wall / longest check`` (goal <= 1.5): how close the run comes to its physical limit, the
  longest single wait; both sides are measured in the one run, so load slows them alike;
* ``checks_sum_s`` and ``overlap = checks_sum / wall``: what running checks side by side saved;
* the load average before and after (other work on the machine skews every absolute figure).

Goals on a quiet two-core machine: reference wall <= 8 s, adapter wall <= 12 s. A benchmark, not a test.

    python scripts/bench_certify.py [--runs 1] [--jobs N] [--no-adapter]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADAPTER = f"{sys.executable} {ROOT / 'tests' / 'fixtures' / 'example_adapter.py'}"


@dataclass(frozen=True)
class Figures:
    wall: float
    cpu: float
    longest: float
    longest_id: str
    checks_sum: float
    load: tuple[float, float]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def certify(extra: list[str]) -> Figures:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        argv = [sys.executable, "-m", "dsweb_ref", "certify", *extra, "--json", str(report)]
        load_before = os.getloadavg()[0]
        cpu_before = children_cpu()
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        cpu = children_cpu() - cpu_before
        if done.returncode != 0 or not report.exists():
            tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
            raise SystemExit(f"dsweb certify {' '.join(extra)} failed ({done.returncode}):\n" + "\n".join(tail))
        checks = json.loads(report.read_text(encoding="utf-8"))["checks"]
    slowest = max(checks, key=lambda c: c["duration_s"])
    total = sum(c["duration_s"] for c in checks)
    return Figures(wall, cpu, slowest["duration_s"], slowest["id"], total, (load_before, os.getloadavg()[0]))


def show(name: str, runs: list[Figures]) -> None:
    wall = statistics.median(f.wall for f in runs)
    cpu = statistics.median(f.cpu for f in runs)
    longest = statistics.median(f.longest for f in runs)
    checks_sum = statistics.median(f.checks_sum for f in runs)
    ratio = statistics.median(f.wall / f.longest for f in runs)
    overlap = statistics.median(f.checks_sum / f.wall for f in runs)
    loads = ", ".join(f"{f.load[0]:.2f}->{f.load[1]:.2f}" for f in runs)
    print(f"{name}:")
    print(f"  certify_wall_s   {wall:7.2f}")
    print(f"  certify_cpu_s    {cpu:7.2f}")
    print(f"  longest_check_s  {longest:7.2f}  ({runs[-1].longest_id})")
    print(f"  ratio            {ratio:7.2f}  (wall / longest check; goal <= 1.5)")
    print(f"  checks_sum_s     {checks_sum:7.2f}  overlap {overlap:.2f} (sum of check durations / wall)")
    print(f"  load average     {loads}  (cores {os.cpu_count()})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1, help="runs per target (medians are printed)")
    parser.add_argument("--jobs", type=int, help="pass --jobs N to dsweb certify (default: its own)")
    parser.add_argument("--no-adapter", action="store_true", help="skip the example adapter")
    args = parser.parse_args()
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    targets = {"reference (in-process)": jobs}
    if not args.no_adapter:
        targets["example adapter"] = ["--adapter", ADAPTER, *jobs]
    for name, extra in targets.items():
        show(name, [certify(extra) for _ in range(args.runs)])


if __name__ == "__main__":
    main()
