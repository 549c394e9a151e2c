"""Benchmark: a 4-query web_search batch over four fake searches of fixed latency L.

Prints `ratio <batch time / L>`: 1.0 is ideal (all four overlap), 4.0 is
sequential. A benchmark, not a test: run it on a quiet machine.

    python scripts/bench_batch.py [--latency 0.2] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from dsweb_ref import CallContext, SearchRequest, SearchResult, Source, WebService
from dsweb_ref.tools import WebSearchTool


class FixedLatency:
    id = "fixed-latency"

    def __init__(self, latency: float) -> None:
        self.latency = latency

    def available(self) -> bool:
        return True

    async def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult:
        await asyncio.sleep(self.latency)
        return SearchResult(sources=(Source(f"https://{request.query}.test/"),))


async def one_round(tool: WebSearchTool) -> float:
    start = time.perf_counter()
    out = await tool.execute({"queries": ["q1", "q2", "q3", "q4"]})
    assert not out.is_error
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    web = WebService()
    web.register_search(FixedLatency(args.latency))
    tool = WebSearchTool(web)
    times = [asyncio.run(one_round(tool)) for _ in range(args.rounds)]
    ratio = statistics.median(times) / args.latency
    print(f"latency {args.latency:.3f}s rounds {args.rounds} median {statistics.median(times):.3f}s")
    print(f"ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
