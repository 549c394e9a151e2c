"""Benchmark: the emulator's requests per second on POST /v1/tools/search against a bare
Starlette+uvicorn app that answers the same route with the same JSON bytes (precomputed).
``--wrong-keys N`` also loads the emulator after N requests with distinct wrong keys and prints
`wrong_keys_ratio` (req/s after / before; the emulator must not slow down with them).

Each server runs in its own child process, configured like the emulator's uvicorn (h11, no
lifespan, no server/date headers); the same keep-alive client (raw asyncio streams, --clients
concurrent connections, all on loopback) loads each in turn, --runs times, alternating. Load is
bounded by --seconds per run and --max-requests. Prints req/s and p50/p99 latency of each and
`ratio <emulator req/s / bare req/s>` (goal >= 0.6). A benchmark, not a test: run it on a quiet
machine.

    python scripts/bench_emulator.py [--seconds 3] [--clients 32] [--runs 2] [--wrong-keys 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import dataclass

from _child_server import child_server, serve_until_stdin_closes

QUERY = {"query": "asyncio cancellation", "count": 8, "need_content": False}
ROUTE = "/v1/tools/search"


# --- the servers (child processes) ------------------------------------------------------------


def serve(kind: str) -> None:
    """Start one server, print its port, run until stdin closes."""
    if kind == "emulator":
        from dsweb_ref.emulator import Emulator

        with Emulator() as emu:
            serve_until_stdin_closes(emu.port)
        return
    import socket
    import threading

    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from dsweb_ref.emulator.errors import render_json
    from dsweb_ref.emulator.tools import search_answer

    answer = render_json(search_answer(json.dumps(QUERY).encode()))

    async def endpoint(request: Request) -> Response:
        await request.body()
        return Response(answer, media_type="application/json")

    app = Starlette(routes=[Route(ROUTE, endpoint, methods=["POST"])])
    config = uvicorn.Config(
        app, http="h11", ws="none", lifespan="off", log_config=None, server_header=False, date_header=False
    )
    server = uvicorn.Server(config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    threading.Thread(
        target=lambda: (serve_until_stdin_closes(port), setattr(server, "should_exit", True)), daemon=True
    ).start()
    server.run(sockets=[sock])


# --- the client (this process) ----------------------------------------------------------------


@dataclass
class RunResult:
    rate: float
    latencies: list[float]
    sizes: set[int]
    server_cpu_us: float | None = None  # the server process's CPU per request (load-independent)


def request_bytes(port: int, key: str | None = None) -> bytes:
    from dsweb_ref.emulator import DEFAULT_API_KEY

    body = json.dumps(QUERY).encode()
    head = (
        f"POST {ROUTE} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {key or DEFAULT_API_KEY}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes, status: int) -> int:
    """Send one request on a keep-alive connection and read its whole answer; its body length."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(f"HTTP/1.1 {status}".encode()):
        raise SystemExit(f"unexpected answer: {head[:80]!r}")
    length = next(
        int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
    )
    await reader.readexactly(length)
    return length


async def present_wrong_keys(port: int, count: int) -> None:
    """``count`` requests, each with a distinct wrong key (issue: the emulator slowed down with them)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for i in range(count):
            await exchange(reader, writer, request_bytes(port, f"dsweb-wrong-key-{i:06d}"), 401)
    finally:
        writer.close()
        await writer.wait_closed()


async def load(port: int, clients: int, seconds: float, max_requests: int) -> RunResult:
    request = request_bytes(port)
    latencies: list[float] = []
    sizes: set[int] = set()
    stop_at = time.perf_counter() + seconds

    async def one_client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while time.perf_counter() < stop_at and len(latencies) < max_requests:
                start = time.perf_counter()
                sizes.add(await exchange(reader, writer, request, 200))
                latencies.append(time.perf_counter() - start)
        finally:
            writer.close()
            await writer.wait_closed()

    began = time.perf_counter()
    await asyncio.gather(*(one_client() for _ in range(clients)))
    return RunResult(len(latencies) / (time.perf_counter() - began), latencies, sizes)


def measure(kind: str, args: argparse.Namespace, wrong_keys: int = 0) -> RunResult:
    with child_server(__file__, "--serve", kind) as child:
        asyncio.run(load(child.port, args.clients, min(0.5, args.seconds), args.max_requests))  # warm-up
        if wrong_keys:
            asyncio.run(present_wrong_keys(child.port, wrong_keys))
        before = child.cpu_seconds()
        result = asyncio.run(load(child.port, args.clients, args.seconds, args.max_requests))
        after = child.cpu_seconds()
        if before is not None and after is not None and result.latencies:
            result.server_cpu_us = 1e6 * (after - before) / len(result.latencies)
        return result


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="load time per run")
    parser.add_argument("--clients", type=int, default=32, help="concurrent keep-alive connections")
    parser.add_argument("--runs", type=int, default=2, help="runs per server, alternating")
    parser.add_argument("--max-requests", type=int, default=100_000, help="cap per run")
    parser.add_argument(
        "--wrong-keys", type=int, default=0, help="also measure after this many distinct wrong keys (e.g. 3000)"
    )
    parser.add_argument("--serve", choices=["emulator", "bare"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    results: dict[str, list[RunResult]] = {"emulator": [], "bare": []}
    for _ in range(args.runs):
        for kind in results:
            results[kind].append(measure(kind, args))
    rates = {}
    for kind, runs in results.items():
        rates[kind] = statistics.median(r.rate for r in runs)
        latencies = [x for r in runs for x in r.latencies]
        sizes = sorted({s for r in runs for s in r.sizes})
        cpu = [r.server_cpu_us for r in runs if r.server_cpu_us is not None]
        print(
            f"{kind:8} {rates[kind]:8.0f} req/s  p50 {1000 * percentile(latencies, 0.5):.2f} ms  "
            f"p99 {1000 * percentile(latencies, 0.99):.2f} ms  body {sizes} bytes"
            + (f"  server cpu {statistics.median(cpu):.0f} us/request" if cpu else "")
        )
    if args.wrong_keys:
        tainted = measure("emulator", args, args.wrong_keys)
        after = tainted.rate
        cpu = f"  server cpu {tainted.server_cpu_us:.0f} us/request" if tainted.server_cpu_us else ""
        print(f"emulator {after:8.0f} req/s after {args.wrong_keys} distinct wrong keys{cpu}")
        print(f"wrong_keys_ratio {after / rates['emulator']:.3f}")
    print(f"clients {args.clients} seconds {args.seconds} runs {args.runs}")
    print(f"ratio {rates['emulator'] / rates['bare']:.3f}")


if __name__ == "__main__":
    main()
