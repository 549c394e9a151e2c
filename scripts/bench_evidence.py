"""Benchmark: the evidence pipeline (seed 002) overlaps its searches and its fetches, and stays bounded.

A 4-query evidence call runs over fake searches of fixed latency L and real pages from a
local HTTP server that answers each request after L seconds, fetched by the real ``http``
provider through netguard (strict policy; simulated public DNS answers, dialled on loopback).

* ``ratio``: wall time of the call / (slowest single search + slowest single fetch), each
  measured alone. 1.0 means every search overlapped and every fetch overlapped; a pipeline
  that serialised its 4 searches and 8 fetches would print about 10. Goal: <= 1.3.
* ``first_over_warm``: in a fresh process (a child of this script), the first call's wall time
  over a warm call's (the same 4 queries, two of them Thai, over the same pages). The tool loads
  its Thai segmenters and suffix list in a background thread when it is built, so the first call
  overlaps that load with its searches. Goal: <= 2. ``first_over_warm_after_build`` is the same
  ratio when the first call comes once that background load is done (an agent that builds its
  tools at start-up).
* ``peak``: the Python heap peak (tracemalloc) of one call over 4 x 8 pages of 5 MB each
  (every page selected), against the 160 MB of page bytes. The provider reads at most its
  byte cap per page and keeps its character cap, so the peak stays a small multiple of
  (concurrent pages x cap), not of the total.

    python scripts/bench_evidence.py [--latency 0.3] [--rounds 3] [--page-mb 5] [--skip-memory]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from dsweb_ref import CallContext, FetchRequest, SearchRequest, SearchResult, Source, WebService
from dsweb_ref.certification.sandbox import SandboxDialer
from dsweb_ref.providers.http_fetch import HttpFetchConfig, HttpFetchProvider
from dsweb_ref.tools._evidence_units import warm_up
from dsweb_ref.tools.evidence_search import EvidenceSearchTool, EvidenceSettings

QUERIES = ["gold price bangkok", "ราคาทองคำวันนี้", "baht exchange rate", "ดัชนีตลาดหุ้นปิด"]
PUBLIC = "93.184.215.14"  # what the simulated DNS answers for every host; dialled on loopback


def page(query: str, size: int) -> bytes:
    head = f"<html><body><nav>home news</nav><p>Today {query} was reported at 41,000.</p>"
    filler = "<p>Unrelated paragraph about gardening and weather patterns.</p>" * (size // 64)
    return (head + filler + "</body></html>").encode()[:size]


class Pages(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # 32 concurrent connects must not overflow the listen backlog

    def __init__(self, latency: float, size: int) -> None:
        self.latency = latency
        self.bodies = {q: page(q, size) for q in QUERIES}
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: Pages
    protocol_version = "HTTP/1.0"

    def do_GET(self) -> None:
        time.sleep(self.server.latency)
        index = int(self.path.split("/")[1])
        body = self.server.bodies[QUERIES[index]]
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def public_dns(host: str) -> list[str]:
    return [PUBLIC]


class FixedLatencySearch:
    id = "fixed-latency"

    def __init__(self, latency: float, port: int, per_query: int) -> None:
        self.latency, self.port, self.per_query = latency, port, per_query

    def available(self) -> bool:
        return True

    async def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult:
        await asyncio.sleep(self.latency)
        q = QUERIES.index(request.query)
        sources = tuple(
            Source(f"http://site{i}-q{q}.example:{self.port}/{q}/{i}", request.query, f"{request.query} today")
            for i in range(self.per_query)
        )
        return SearchResult(sources=sources)


def service(latency: float, port: int, per_query: int, max_bytes: int) -> WebService:
    web = WebService()
    web.register_search(FixedLatencySearch(latency, port, per_query))
    config = HttpFetchConfig(timeout_s=60, max_response_bytes=max_bytes)
    web.register_fetch(HttpFetchProvider(config, resolver=public_dns, dialer=SandboxDialer({PUBLIC: port})))
    return web


async def timed(call: Any) -> float:
    start = time.perf_counter()
    await call
    return time.perf_counter() - start


async def ratio_round(web: WebService, port: int) -> tuple[float, float, float]:
    tool = EvidenceSearchTool(web, EvidenceSettings(deadline_s=60))
    search_alone = await timed(web.search(SearchRequest(QUERIES[0], 8)))
    fetch_alone = await timed(web.fetch(FetchRequest(f"http://one.example:{port}/0/0")))
    start = time.perf_counter()
    value = await tool.run({"query": QUERIES})
    wall = time.perf_counter() - start
    assert not value["needs_retry"], value
    return wall, search_alone, fetch_alone


async def memory_round(web: WebService) -> tuple[float, int]:
    tool = EvidenceSearchTool(
        web, EvidenceSettings(deadline_s=120, max_pages=32, max_per_domain=32, max_concurrent_fetches=8)
    )
    tracemalloc.start()
    start = time.perf_counter()
    value = await tool.run({"query": QUERIES})
    wall = time.perf_counter() - start
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    fetched = sum(group["tried"]["fetched"] for group in value["queries"])
    assert fetched == 32, fetched
    return wall, peak


async def first_and_warm(port: int, latency: float, settled: bool) -> tuple[float, float]:
    web = service(latency, port, 4, 5_000_000)
    tool = EvidenceSearchTool(web, EvidenceSettings(deadline_s=60))  # built as the runtime builds it
    if settled:  # an agent builds its tools at start-up: the load has finished before the first call
        await asyncio.wrap_future(warm_up())
    start = time.perf_counter()
    value = await tool.run({"query": QUERIES})
    first = time.perf_counter() - start
    assert not value["needs_retry"], value
    start = time.perf_counter()
    await tool.run({"query": QUERIES})
    return first, time.perf_counter() - start


def first_call_child(latency: float, settled: bool) -> None:
    """In this fresh process: the first call and a warm one, printed as JSON for the parent."""
    pages = Pages(latency, 20_000)
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    first, warm = asyncio.run(first_and_warm(pages.server_address[1], latency, settled))
    pages.shutdown()
    print(json.dumps({"first": first, "warm": warm}))


def first_over_warm(latency: float, rounds: int, settled: bool) -> tuple[float, float, float]:
    runs = []
    for _ in range(rounds):
        command = [sys.executable, __file__, "--first-call-child", "--latency", str(latency)]
        out = subprocess.run(command + (["--settled"] if settled else []),
                             capture_output=True, text=True, check=True, timeout=120)  # fmt: skip
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    first = statistics.median(r["first"] for r in runs)
    warm = statistics.median(r["warm"] for r in runs)
    return first, warm, first / warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--page-mb", type=float, default=5.0)
    parser.add_argument("--skip-memory", action="store_true", help="leave out the 160 MB memory round")
    parser.add_argument("--first-call-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--settled", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_call_child:
        first_call_child(args.latency, args.settled)
        return

    small = Pages(args.latency, 20_000)
    threading.Thread(target=small.serve_forever, daemon=True).start()
    web = service(args.latency, small.server_address[1], 8, 5_000_000)
    rounds = [asyncio.run(ratio_round(web, small.server_address[1])) for _ in range(args.rounds)]
    small.shutdown()
    wall = statistics.median(r[0] for r in rounds)
    base = max(r[1] for r in rounds) + max(r[2] for r in rounds)
    print(f"latency {args.latency:.3f}s rounds {args.rounds}: 4 queries, 8 pages fetched")
    print(f"median call {wall:.3f}s, slowest single search + slowest single fetch {base:.3f}s")
    print(f"ratio {wall / base:.2f} (goal <= 1.3)")

    first, warm, over = first_over_warm(args.latency, args.rounds, settled=False)
    print(f"fresh process, first call right after the tool is built: {first:.3f}s, warm call {warm:.3f}s")
    print(f"first_over_warm {over:.2f} (goal <= 2)")
    first, warm, over = first_over_warm(args.latency, args.rounds, settled=True)
    print(f"fresh process, first call once the build's background load is done: {first:.3f}s, warm {warm:.3f}s")
    print(f"first_over_warm_after_build {over:.2f}")
    if args.skip_memory:
        return

    size = int(args.page_mb * 1_000_000)
    big = Pages(args.latency, size)
    threading.Thread(target=big.serve_forever, daemon=True).start()
    web = service(args.latency, big.server_address[1], 8, size)
    took, peak = asyncio.run(memory_round(web))
    big.shutdown()
    total = 32 * size
    print(f"4 x 8 pages of {args.page_mb:g} MB ({total / 1e6:.0f} MB of pages) in {took:.2f}s")
    print(f"peak {peak / 1e6:.1f} MB ({peak / total:.2f} of the page bytes, {peak / size:.1f} x one page)")


if __name__ == "__main__":
    main()
