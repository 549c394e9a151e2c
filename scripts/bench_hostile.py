"""Benchmark: do the hostile-input defences stay linear in time and bounded in memory?

* scrub: the shared secret rules on hostile texts of N and 8N characters; prints the time ratio
  (8 means linear, 64 quadratic) for each shape;
* inflate: a gzip bomb (64x the cap) read through the DeepSeek reply path from a loopback server;
  prints peak traced memory relative to the cap (a small constant means the cap trips first);
* values: ``parse_json`` on a body of ``{},{},...`` just under 32 MiB; prints peak traced memory
  relative to the body size.

    python scripts/bench_hostile.py [--size N]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from dsweb_ref import CallContext, SearchRequest, WebError
from dsweb_ref._secrets import redact_patterns
from dsweb_ref.providers import _deepseek_http
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.settings import Settings

SHAPES = {"a-": "a-", "x-token-": "x-token-", "eyJ-": "eyJ-", "api_key=": "api_key=", "Bearer a": "Bearer a"}


def _best(text: str, rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        redact_patterns(text, "<x>")
        times.append(time.perf_counter() - start)
    return min(times)


def bench_scrub(size: int) -> None:
    for name, unit in SHAPES.items():
        small, large = unit * (size // len(unit)), unit * (8 * size // len(unit))
        ratio = _best(large) / _best(small)
        print(f"scrub {name!r:12} time_ratio_8x {ratio:.1f}")
    padded = _best("token" + " " * 8 * size + "x") / _best("token" + " " * size + "x")
    print(f"scrub 'token + blanks' time_ratio_8x {padded:.1f}")


def bench_inflate() -> None:
    cap = _deepseek_http.MAX_RESPONSE_BYTES
    bomb = gzip.compress(b"\0" * (64 * cap))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(bomb)))
            self.end_headers()
            try:
                self.wfile.write(bomb)
            except OSError:
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1/tools"
    snapshot = Settings().updated({"deepseek_api.base_url": base})
    provider = DeepSeekSearchApi(lambda: snapshot, environ={"DEEPSEEK_API_KEY": "bench-key-123"})
    tracemalloc.start()
    start = time.perf_counter()
    try:
        asyncio.run(provider.search(SearchRequest("q"), CallContext()))
    except WebError as error:
        outcome = error.message
    else:
        outcome = "no error"
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    server.shutdown()
    print(f"inflate bomb {len(bomb)} B -> {64 * cap} B: {outcome!r}")
    print(f"inflate memory_ratio_to_cap {peak / cap:.2f} seconds {elapsed:.2f}")


def bench_values() -> None:
    body = b'{"results":[' + b"{}," * (31 * 1024 * 1024 // 3) + b"{}]}"
    tracemalloc.start()
    start = time.perf_counter()
    try:
        _deepseek_http.parse_json(body)
        outcome = "parsed"
    except ValueError as error:
        outcome = str(error)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"values {outcome!r}: memory_ratio_to_body {peak / len(body):.4f} seconds {elapsed:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=50_000, help="characters of the smaller scrub input")
    args = parser.parse_args()
    bench_scrub(args.size)
    bench_inflate()
    bench_values()


if __name__ == "__main__":
    main()
