#!/usr/bin/env python3
"""An example certification adapter: the reference implementation behind the JSON-lines protocol.

Run the suite through it with::

    dsweb certify --adapter "python scripts/example_adapter.py"

The protocol (documented in ``dsweb_ref/certification/adapter_protocol.py``): one JSON object per
line; the suite sends ``{"id", "method", "params"}`` on stdin, the adapter answers ``{"id",
"result"}``, ``{"id", "error": {"code", "message"}}`` or ``{"id", "cancelled": true}`` on stdout.
Requests overlap (``cancel`` arrives while a search runs), so stdin is read in its own task and
each call runs in its own task. Logs go to stderr only.

To certify another implementation, keep this shape and replace ``Adapter.configure``,
``Adapter.web_search`` and ``Adapter.web_fetch`` with calls into your code.

``--break MODE`` makes the adapter misbehave on purpose; the suite's own tests use it to prove
that each check catches the fault it names:

    thinking-enabled    Messages body sends thinking enabled            -> search.messages.thinking_disabled
    no-ori-cut          ori_question is the raw prompt (not collapsed/cut) -> search.api.ori_question
    sequential          queries run one after another                   -> search.batch.concurrent
    messages-sequential Messages searches run one after another         -> search.batch.concurrent ([Messages])
    early-answer        a failing batch answers before siblings settle  -> search.batch.quiescence
    early-answer-subtle a failing batch cancels its siblings but answers
                        without awaiting them                           -> search.batch.quiescence
    ignore-cancel       cancel answers at once, the batch keeps running -> search.cancel.quiescence
    cancel-no-wait      a cancelled call answers at once, before its
                        upstream requests are closed                    -> search.cancel.quiescence
    follow-redirects    a 3xx from the provider API is followed         -> search.redirect.not_followed
    no-round-robin      sources are concatenated query by query         -> search.merge.round_robin
    duplicate-url       duplicate URLs across queries are kept          -> search.merge.dedup
    wrong-error-code    rejected arguments are reported as WEB_PROVIDER_ERROR -> search.validation.query_cap
    schema-extra-field  search values carry a key the schema does not allow   -> search.value.schema
    label-single        a one-item array gets the multi-query format (labels) -> search.differential.merge
    truncated-cap-only  truncated ignores a query's own truncated flag     -> search.differential.merge
    url-normalise-dedup sources deduplicated by a trimmed, lower-cased URL -> search.differential.merge
    generic-failure     a batch failure is reported as WEB_PROVIDER_ERROR  -> search.differential.failure

In the two subtle modes an upstream request's teardown takes LINGER seconds (as a graceful close
might), which the correct code awaits and the broken code does not: the answer then provably
leaves before the connections close, so the suite's check must catch it every time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import sys
from collections.abc import Coroutine, Sequence
from typing import Any

import httpx

from dsweb_ref import CallContext, SearchRequest, SearchResult, Source, WebError, __version__
from dsweb_ref.replay._bases import credential_environ, settings_for_bases
from dsweb_ref.runtime import Runtime, build_runtime, scripted_runtime
from dsweb_ref.settings import Settings
from dsweb_ref.tools import ToolResult, merge_results, render_search
from dsweb_ref.tools.web_search import parse_queries

BREAKS = (
    "thinking-enabled",
    "no-ori-cut",
    "sequential",
    "messages-sequential",
    "early-answer",
    "early-answer-subtle",
    "ignore-cancel",
    "cancel-no-wait",
    "follow-redirects",
    "no-round-robin",
    "duplicate-url",
    "wrong-error-code",
    "schema-extra-field",
    "label-single",
    "truncated-cap-only",
    "url-normalise-dedup",
    "generic-failure",
)
# Breaks of rules only the conformance search route (provider "scripted") can show.
SCRIPTED_BREAKS = ("label-single", "truncated-cap-only", "url-normalise-dedup", "generic-failure")
LINGERING = ("early-answer-subtle", "cancel-no-wait")
LINGER = 0.3  # seconds an upstream request takes to tear down once cancelled, in the LINGERING modes
CAPABILITIES = ("web_search", "web_fetch", "messages-search", "search-api", "fetch-api", "cancel", "scripted-search")
PROMPT: contextvars.ContextVar[str | None] = contextvars.ContextVar("prompt", default=None)


def log(*parts: object) -> None:
    print("example_adapter:", *parts, file=sys.stderr, flush=True)


# --- deliberate breakage, as small wrappers around the reference ---------------------------------


def _rewrite_json(request: httpx.Request, change: dict[str, Any]) -> httpx.Request:
    body = json.loads(request.content)
    body.update(change)
    headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
    return httpx.Request(request.method, request.url, headers=headers, content=json.dumps(body).encode())


class BreakingTransport(httpx.AsyncBaseTransport):
    """Rewrites outgoing bodies, follows redirects or tears down slowly, depending on the break mode."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.mode in LINGERING:
            return await self.lingering(request)
        return await self.send(request)

    async def lingering(self, request: httpx.Request) -> httpx.Response:
        """Once cancelled, the request takes LINGER seconds to close its connection."""
        inner = asyncio.ensure_future(self.send(request))
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError:
            await asyncio.sleep(LINGER)
            inner.cancel()
            await asyncio.gather(inner, return_exceptions=True)
            raise

    async def send(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if self.mode == "thinking-enabled" and path.endswith("/messages"):
            request = _rewrite_json(request, {"thinking": {"type": "enabled", "budget_tokens": 1024}})
        elif self.mode == "no-ori-cut" and path.endswith("/search") and b"ori_question" in request.content:
            request = _rewrite_json(request, {"ori_question": PROMPT.get()})
        response = await self.inner.handle_async_request(request)
        if self.mode == "follow-redirects" and response.is_redirect:
            await response.aclose()
            target = request.url.join(response.headers["location"])
            response = await self.inner.handle_async_request(httpx.Request("GET", target))
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def concat_merge(results: list[SearchResult], cap: int) -> SearchResult:
    """no-round-robin: query after query instead of rank after rank."""
    seen: dict[str, Source] = {}
    for result in results:
        for source in result.sources:
            seen.setdefault(source.url, source)
    merged = list(seen.values())
    return SearchResult(sources=tuple(merged[:cap]), truncated=len(merged) > cap)


def no_dedup_merge(results: list[SearchResult], cap: int) -> SearchResult:
    """duplicate-url: round-robin, but every URL kept."""
    merged = [r.sources[i] for i in range(max(len(r.sources) for r in results)) for r in results if i < len(r.sources)]
    return SearchResult(sources=tuple(merged[:cap]), truncated=len(merged) > cap)


def normalised_merge(queries: list[str], results: list[SearchResult], cap: int) -> SearchResult:
    """url-normalise-dedup: round-robin and cap as the reference, but URLs compared trimmed and lower-cased."""
    merged: list[Source] = []
    seen: set[str] = set()
    dropped = False
    for rank in range(max(len(r.sources) for r in results)):
        for result in results:
            if rank >= len(result.sources) or dropped:
                continue
            source = result.sources[rank]
            key = source.url.strip().lower()  # wrong: only the exact URL string identifies a source
            if key in seen:
                continue
            if len(merged) >= cap:
                dropped = True
                continue
            seen.add(key)
            merged.append(source)
    reference = merge_results(queries, results, cap)
    truncated = dropped or any(r.truncated for r in results)
    return SearchResult(sources=tuple(merged), content=reference.content, truncated=truncated)


async def cancel_and_wait(tasks: Sequence[asyncio.Future[SearchResult]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


# --- the adapter ---------------------------------------------------------------------------------


class Adapter:
    def __init__(self, mode: str | None, capabilities: tuple[str, ...]) -> None:
        self.mode = mode
        self.capabilities = capabilities
        self.runtime: Runtime | None = None
        self.settings = Settings()
        self.provider = "api"
        self.background: set[asyncio.Task[Any]] = set()  # early-answer's abandoned searches

    def hello(self) -> dict[str, Any]:
        return {"name": "dsweb_ref example adapter", "version": __version__, "capabilities": list(self.capabilities)}

    def configure(self, p: dict[str, Any]) -> dict[str, Any]:
        # The key travels in a private mapping, never the real environment; timeouts stay at their defaults.
        self.settings = settings_for_bases(
            p["messages_base"],
            p["tools_base"],
            new_api=p.get("provider") == "api",
            overrides={
                "tools.search_max_queries": int(p.get("search_max_queries", 4)),
                "tools.search_max_results": int(p.get("search_max_results", 8)),
                "deepseek_api.send_original_question": bool(p.get("send_original_question", True)),
            },
        )
        settings = self.settings
        self.provider = str(p.get("provider", "api"))
        if self.provider == "scripted":  # the emulator's conformance search route
            self.runtime = scripted_runtime(str(p.get("scripted_base", "")), lambda: settings)
        else:
            transport = BreakingTransport(self.mode) if self.mode else None  # its TLS context costs ~15 ms
            environ = credential_environ(p["api_key"])
            self.runtime = build_runtime(lambda: settings, transport=transport, environ=environ)
        return {}

    def _runtime(self) -> Runtime:
        if self.runtime is None:
            raise WebError("WEB_CONFIG_INVALID", "configure first")
        return self.runtime

    async def web_search(self, p: dict[str, Any]) -> ToolResult:
        PROMPT.set(p.get("latest_prompt"))
        ctx = CallContext(latest_prompt=p.get("latest_prompt"))
        tool = self._runtime().search_tool()
        sequential = self.mode == "sequential" or (self.mode == "messages-sequential" and self.provider == "messages")
        own_batch = ("early-answer", "early-answer-subtle", "no-round-robin", "duplicate-url", *SCRIPTED_BREAKS)
        if not sequential and self.mode not in own_batch:
            result = await tool.execute(p.get("arguments"), ctx)
            if self.mode == "schema-extra-field" and result.value is not None:
                result = ToolResult(text=result.text, value={**result.value, "provider": "example"})
            return result
        queries: list[str] = []
        try:
            queries = parse_queries(p.get("arguments"), tool.settings.search_max_queries)
            cap = tool.settings.search_max_results
            if len(queries) == 1 and self.mode != "label-single":
                return await tool.execute(p.get("arguments"), ctx)
            requests = [SearchRequest(q, cap) for q in queries]
            web = self._runtime().web
            if sequential:
                results = [await web.search(r, ctx) for r in requests]
            else:
                results = await self.batch([web.search(r, ctx) for r in requests])
        except WebError as error:
            code = error.code
            if self.mode == "generic-failure" and len(queries) > 1:
                code = "WEB_PROVIDER_ERROR"  # wrong: the batch returns the first failure itself, code included
            return ToolResult(text=f"Error: {error.message}", error_code=code)
        if self.mode == "no-round-robin":
            merged = concat_merge(results, cap)
        elif self.mode == "duplicate-url":
            merged = no_dedup_merge(results, cap)
        elif self.mode == "truncated-cap-only":  # wrong: a query's own truncated flag is dropped
            merged = merge_results(queries, [SearchResult(r.sources, r.content) for r in results], cap)
        elif self.mode == "url-normalise-dedup":
            merged = normalised_merge(queries, results, cap)
        else:
            merged = merge_results(queries, results, cap)
        return ToolResult(text=render_search(merged), value=merged.to_json())

    async def batch(self, coros: list[Coroutine[Any, Any, SearchResult]]) -> list[SearchResult]:
        """All-or-nothing with quiescence, except that the early-answer modes skip the wait after a failure."""
        tasks = [asyncio.ensure_future(c) for c in coros]
        try:
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        except asyncio.CancelledError:
            await cancel_and_wait(tasks)
            raise
        failed = [t for t in done if t.exception() is not None]
        if failed:
            if self.mode == "early-answer":
                self.background.update(pending)  # wrong: siblings are left running
            elif self.mode == "early-answer-subtle":
                for task in pending:  # wrong: cancelled, but the answer does not wait for them to settle
                    task.cancel()
                self.background.update(pending)
            else:
                await cancel_and_wait(tasks)
            raise failed[0].exception()  # type: ignore[misc]
        return [t.result() for t in tasks]

    async def web_fetch(self, p: dict[str, Any]) -> ToolResult:
        return await self._runtime().fetch_tool().execute(p.get("arguments"), CallContext())


class Server:
    """Reads requests from stdin, runs each in a task, writes one answer line per request."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.calls: dict[int, asyncio.Task[None]] = {}
        self.answered: set[int] = set()

    def write(self, message: dict[str, Any]) -> None:
        if message["id"] in self.answered:
            return  # ignore-cancel already answered this call
        self.answered.add(message["id"])
        sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    async def call(self, request_id: int, method: str, params: dict[str, Any]) -> None:
        try:
            run = self.adapter.web_search if method == "web_search" else self.adapter.web_fetch
            result = await run(params)
        except asyncio.CancelledError:
            # Reached only after the reference tool settled every upstream request (seed 000).
            self.write({"id": request_id, "cancelled": True})
            return
        except WebError as error:
            self.write({"id": request_id, "error": {"code": error.code, "message": error.message}})
            return
        finally:
            self.calls.pop(request_id, None)
        if result.error_code is not None:
            code = result.error_code
            if self.adapter.mode == "wrong-error-code" and code == "WEB_INVALID_ARGUMENTS":
                code = "WEB_PROVIDER_ERROR"  # wrong: the arguments were at fault, not the provider
            self.write({"id": request_id, "error": {"code": code, "message": result.text}})
        else:
            self.write({"id": request_id, "result": {"text": result.text, "value": result.value}})

    def handle(self, message: dict[str, Any]) -> bool:
        """Dispatch one request; False after shutdown."""
        request_id, method, params = message["id"], message.get("method"), message.get("params") or {}
        if method in ("web_search", "web_fetch"):
            self.calls[request_id] = asyncio.ensure_future(self.call(request_id, method, params))
        elif method == "cancel":
            target = self.calls.get(int(params.get("id", 0)))
            if target is not None and self.adapter.mode == "ignore-cancel":
                self.write({"id": params["id"], "cancelled": True})  # wrong: the batch keeps running
            elif target is not None and self.adapter.mode == "cancel-no-wait":
                target.cancel()
                self.write({"id": params["id"], "cancelled": True})  # wrong: before its upstream requests closed
            elif target is not None:
                target.cancel()
            self.write({"id": request_id, "result": {}})
        elif method == "hello":
            self.write({"id": request_id, "result": self.adapter.hello()})
        elif method == "configure":
            self.write({"id": request_id, "result": self.adapter.configure(params)})
        elif method == "shutdown":
            self.write({"id": request_id, "result": {}})
            return False
        else:
            self.write({"id": request_id, "error": {"code": "WEB_INVALID_ARGUMENTS", "message": f"unknown {method}"}})
        return True

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            if line.strip() and not self.handle(json.loads(line)):
                break
        for task in list(self.calls.values()):
            task.cancel()
        await asyncio.gather(*self.calls.values(), return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--break", dest="mode", choices=BREAKS, help="misbehave on purpose (suite self-tests)")
    parser.add_argument("--without", action="append", default=[], metavar="CAP", help="do not declare CAP")
    args = parser.parse_args()
    capabilities = tuple(c for c in CAPABILITIES if c not in args.without)
    log("starting", f"break={args.mode}", f"capabilities={','.join(capabilities)}")
    asyncio.run(Server(Adapter(args.mode, capabilities)).serve())


if __name__ == "__main__":
    main()
