"""Benchmark: does the HTTP fetch provider stay bounded when a body is far over the byte cap?

Serves, from a local server, one body of exactly the cap and one body 100 times
the cap (streamed without Content-Length, so only the streaming cap can stop
it), fetches each with ``HttpFetchProvider`` and prints the peak traced memory
and the wall time of the huge fetch relative to the exact-cap fetch. Ratios near
1 mean the work done does not grow with the body size.

    python scripts/bench_fetch.py [--cap BYTES] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from dsweb_ref import FetchRequest
from dsweb_ref.netguard import AddressPolicy
from dsweb_ref.providers.http_fetch import HttpFetchConfig, HttpFetchProvider

CHUNK = b"x" * 65536  # allocated once so the server adds nothing per request


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        size = self.server.sizes[self.path]
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        view = memoryview(CHUNK)
        try:
            while size > 0:
                self.wfile.write(view[: min(size, len(CHUNK))])
                size -= len(CHUNK)
        except OSError:
            pass  # the client stopped reading at its cap

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    sizes: dict[str, int]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


async def _resolve(host: str) -> list[str]:
    return ["127.0.0.1"]


def _measure(provider: HttpFetchProvider, url: str, rounds: int) -> tuple[int, float, bool]:
    peaks: list[int] = []
    times: list[float] = []
    truncated = False
    for _ in range(rounds):
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        started = time.perf_counter()
        result = asyncio.run(provider.fetch(FetchRequest(url)))
        times.append(time.perf_counter() - started)
        peaks.append(tracemalloc.get_traced_memory()[1] - base)
        truncated = result.truncated
    return max(peaks), statistics.median(times), truncated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cap", type=int, default=1_000_000, help="max_response_bytes (default 1000000)")
    parser.add_argument("--rounds", type=int, default=5, help="fetches per body (default 5)")
    args = parser.parse_args()
    cap: int = args.cap

    server = _Server(("127.0.0.1", 0), _Handler)
    server.sizes = {"/cap": cap, "/huge": 100 * cap}
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    port = server.server_address[1]
    config = HttpFetchConfig(max_response_bytes=cap, max_body_chars=cap, timeout_s=120)
    provider = HttpFetchProvider(config, policy=AddressPolicy.allowing("127.0.0.1/32"), resolver=_resolve)
    try:
        tracemalloc.start()
        _measure(provider, f"http://bench.test:{port}/cap", 1)  # warm-up: imports, TLS context, pools
        cap_peak, cap_time, cap_cut = _measure(provider, f"http://bench.test:{port}/cap", args.rounds)
        huge_peak, huge_time, huge_cut = _measure(provider, f"http://bench.test:{port}/huge", args.rounds)
        tracemalloc.stop()
    finally:
        server.shutdown()
        server.server_close()
    assert not cap_cut and huge_cut, "the exact-cap body must be whole and the huge body cut"
    print(f"cap_bytes {cap}")
    print(f"huge_body_bytes {100 * cap}")
    print(f"peak_memory_cap_bytes {cap_peak}")
    print(f"peak_memory_huge_bytes {huge_peak}")
    print(f"time_cap_s {cap_time:.4f}")
    print(f"time_huge_s {huge_time:.4f}")
    print(f"memory_ratio {huge_peak / cap_peak:.2f}")
    print(f"time_ratio {huge_time / cap_time:.2f}")


if __name__ == "__main__":
    main()
