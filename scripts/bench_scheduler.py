"""Benchmark: the Search/Fetch API scheduler through the real Search API provider and the emulator.

1. A burst of N concurrent searches with pacing on at --qps: prints the rate the emulator saw
   (from its request start times) against the configured one, and the most starts in any
   1-second window. Goal: ratio >= 0.9, and never above the limit: a window above it (or a rate
   above it) makes the script exit 1, so a run that breaks the limit cannot pass for a good one.
2. The extra latency the scheduler adds to an unthrottled call: sequential searches alternating
   scheduler off and on (pacing far above the call rate, retries on, nothing retried), the median
   of the paired differences; plus the scheduler's own cost around a no-op send. Goal: <= 1 ms.

A benchmark, not a test: run it on a quiet machine.

    python scripts/bench_scheduler.py [--qps 5] [-n 20] [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import statistics
import sys
import time
from collections.abc import Mapping

from dsweb_ref import CallContext, SearchRequest
from dsweb_ref.emulator import Emulator
from dsweb_ref.providers._scheduler import Policy, SchedulerRegistry
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.settings import Settings

KEY = "bench-scheduler-key"


def provider(emulator: Emulator, **values: object) -> DeepSeekSearchApi:
    snapshot = Settings().updated({"deepseek_api.base_url": emulator.tools_base, **values})
    return DeepSeekSearchApi(lambda: snapshot, environ={"DEEPSEEK_API_KEY": KEY})


async def burst(search: DeepSeekSearchApi, n: int) -> None:
    await asyncio.gather(*(search.search(SearchRequest(f"search api {i}"), CallContext()) for i in range(n)))


def most_in_one_second(starts: list[float]) -> int:
    return max(bisect.bisect_left(starts, s + 1.0) - i for i, s in enumerate(starts))


def verdict(starts: list[float], qps: float) -> tuple[float, int, bool]:
    """The achieved rate, the most starts in any 1-second window, and whether either is above ``qps``."""
    starts = sorted(starts)
    achieved = (len(starts) - 1) / (starts[-1] - starts[0])
    window = most_in_one_second(starts)
    return achieved, window, window > qps or achieved > qps


async def timed(search: DeepSeekSearchApi, query: str) -> float:
    start = time.perf_counter()
    await search.search(SearchRequest(query), CallContext())
    return time.perf_counter() - start


async def paired(off: DeepSeekSearchApi, on: DeepSeekSearchApi, calls: int) -> tuple[list[float], list[float]]:
    """Alternating off/on calls (the order flips each pair), so drift and load hit both alike."""
    off_times, on_times = [], []
    for i in range(calls):
        first, second = (off, on) if i % 2 else (on, off)
        a, b = await timed(first, f"search api {i}"), await timed(second, f"search api {i}")
        off_times.append(a if first is off else b)
        on_times.append(b if first is off else a)
    return off_times, on_times


class _Ok:
    status = 200
    headers: Mapping[str, str] = {}


async def own_cost(calls: int) -> tuple[float, float]:
    """Median seconds of a no-op send, direct and through the scheduler (pacing unthrottled, retries on)."""
    scheduler = SchedulerRegistry().for_account("https://bench.test/v1/tools", KEY)
    policy = Policy(pacing=True, qps=1e4, retries=3)

    async def send(_timeout: float) -> _Ok:
        return _Ok()

    direct, scheduled = [], []
    for _ in range(calls):
        start = time.perf_counter()
        await send(60.0)
        direct.append(time.perf_counter() - start)
        start = time.perf_counter()
        await scheduler.run("search", policy, 60.0, send, "bench")
        scheduled.append(time.perf_counter() - start)
        await asyncio.sleep(1e-4)  # stay under 10 000 QPS so the pacer never waits
    return statistics.median(direct), statistics.median(scheduled)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--qps", type=float, default=5.0)
    parser.add_argument("-n", type=int, default=20, help="concurrent searches in the burst")
    parser.add_argument("--calls", type=int, default=200, help="sequential calls per latency sample")
    args = parser.parse_args()

    with Emulator(api_keys=(KEY,), log_limit=100_000) as emulator:
        paced = provider(emulator, **{"deepseek_api.pacing": True, "deepseek_api.search_qps": args.qps})
        asyncio.run(burst(paced, args.n))
        emulator.wait_until_idle(30.0)
        achieved, window, over = verdict([r.started for r in emulator.log.for_route("search")], args.qps)
        above = "  ABOVE LIMIT" if over else ""
        print(f"burst n {args.n} configured {args.qps:g}/s achieved {achieved:.3f}/s ratio {achieved / args.qps:.3f}")
        print(f"most starts in any 1 s window {window} (limit {args.qps:g}){above}")

        off = provider(emulator)
        on = provider(emulator, **{"deepseek_api.pacing": True, "deepseek_api.search_qps": 1e4,
                                   "deepseek_api.retries": 3})
        asyncio.run(paired(off, on, 10))  # warm up
        off_times, on_times = asyncio.run(paired(off, on, args.calls))
    extra_ms = statistics.median(b - a for a, b in zip(off_times, on_times, strict=True)) * 1000
    print(f"unthrottled call median off {statistics.median(off_times) * 1000:.3f} ms "
          f"on {statistics.median(on_times) * 1000:.3f} ms; median paired extra {extra_ms:.3f} ms (goal <= 1 ms)")
    direct, scheduled = asyncio.run(own_cost(args.calls * 10))
    print(f"scheduler own cost around a no-op send: median {(scheduled - direct) * 1e6:.1f} us")
    if above:
        print("FAIL: the emulator saw more starts in one second than the limit", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
