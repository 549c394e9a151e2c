"""Benchmark: a 4-query web_search batch against one search, through the real providers and the
real emulator (in a child process), which delays every search by L (an injected Delay fault).

For both search protocols (the Search API and Messages) it prints a cold line (a fresh runtime per
round: new HTTP client, new connections) and a warm line (one runtime, pooled connections), each
with the median single-search and batch times and their ratio (1.0 ideal: the four searches fully
overlap; 4.0 sequential). The last line is `ratio <worst of the four>` (goal <= 1.05). The TLS
context is loaded once per process; its cost is printed separately. A benchmark, not a test:
run it on a quiet machine.

    python scripts/bench_batch.py [--latency 0.2] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable

from _child_server import child_server, serve_until_stdin_closes

from dsweb_ref.emulator import DEFAULT_API_KEY, Delay, Emulator
from dsweb_ref.providers._client_pool import tls_context
from dsweb_ref.replay._bases import credential_environ, settings_for_bases
from dsweb_ref.runtime import Runtime, build_runtime
from dsweb_ref.settings import Settings

QUERIES = ["coffee", "markdown", "asyncio cancellation", "http redirect"]
PROTOCOLS = {"search-api": True, "messages": False}  # name -> "use the new Web Search API"


async def timed(runtime: Runtime, queries: list[str]) -> float:
    start = time.perf_counter()
    out = await runtime.search_tool().execute({"queries": queries})
    elapsed = time.perf_counter() - start
    if out.is_error:
        raise SystemExit(f"search failed: {out.text}")
    return elapsed


def cold(make: Callable[[], Runtime], queries: list[str], rounds: int) -> float:
    """Median time of the first call of a fresh runtime, each in its own event loop."""

    async def once() -> float:
        async with make() as runtime:
            return await timed(runtime, queries)

    return statistics.median(asyncio.run(once()) for _ in range(rounds))


def warm(make: Callable[[], Runtime], rounds: int) -> tuple[float, float]:
    """Median single and batch times on one runtime after one warm-up batch (rounds interleaved)."""

    async def run() -> tuple[float, float]:
        async with make() as runtime:
            await timed(runtime, QUERIES)
            singles, batches = [], []
            for _ in range(rounds):
                singles.append(await timed(runtime, QUERIES[:1]))
                batches.append(await timed(runtime, QUERIES))
            return statistics.median(singles), statistics.median(batches)

    return asyncio.run(run())


def serve(latency: float) -> None:
    """The emulator, delaying every search on both protocols by ``latency``."""
    with Emulator() as emu:
        for route in ("search", "messages"):
            emu.inject(route, Delay(latency), times=None)
        serve_until_stdin_closes(emu.port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the emulator delays each search")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    start = time.perf_counter()
    tls_context()
    print(f"tls context load {1000 * (time.perf_counter() - start):.1f} ms (once per process)")
    ratios: list[float] = []
    with child_server(__file__, "--serve", str(args.latency)) as child:
        base = f"http://127.0.0.1:{child.port}"
        environ = credential_environ(DEFAULT_API_KEY)
        for name, new_api in PROTOCOLS.items():
            settings: Settings = settings_for_bases(f"{base}/anthropic/v1", f"{base}/v1/tools", new_api=new_api)

            def make(settings: Settings = settings) -> Runtime:
                return build_runtime(lambda: settings, environ=environ)

            single, batch = cold(make, QUERIES[:1], args.rounds), cold(make, QUERIES, args.rounds)
            ratios.append(batch / single)
            print(f"{name} cold  single {single:.4f}s batch {batch:.4f}s ratio {batch / single:.3f}")
            single, batch = warm(make, args.rounds)
            ratios.append(batch / single)
            print(f"{name} warm  single {single:.4f}s batch {batch:.4f}s ratio {batch / single:.3f}")
    print(f"latency {args.latency:.3f}s rounds {args.rounds}")
    print(f"ratio {max(ratios):.3f}")


if __name__ == "__main__":
    main()
