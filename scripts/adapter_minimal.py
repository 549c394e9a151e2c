#!/usr/bin/env python3
"""A minimal certification adapter, to read in one sitting and copy.

    dsweb certify --adapter "python scripts/adapter_minimal.py" --profile seed-000-web-search \
        --profile seed-001-search-api

It speaks the adapter protocol (dsweb_ref/docs/adapter-protocol.md): JSON lines on stdin/stdout,
one task per call so that ``cancel`` can arrive while a search runs. The implementation it wraps is
dsweb_ref's own ``web_search`` tool over its DeepSeek Search API provider, built from public
settings; to certify your implementation, replace ``Implementation`` with calls into your code and
keep the rest.
"""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from typing import Any

from dsweb_ref import CallContext, WebError
from dsweb_ref.certification.adapter_protocol import stdin_reader
from dsweb_ref.runtime import Runtime, build_runtime, scripted_runtime
from dsweb_ref.settings import Settings
from dsweb_ref.tools import ToolResult

# What this adapter implements; the suite skips (never passes) checks that need anything else.
CAPABILITIES = ["web_search", "tool-schema", "search-api", "messages-search", "cancel", "scripted-search"]
KEY_VARIABLE = "ADAPTER_DEEPSEEK_KEY"  # read from a private mapping below, never the real environment


class Implementation:
    """The code under test. Everything the suite configures maps onto one setting."""

    def __init__(self) -> None:
        self.runtime: Runtime | None = None

    async def configure(self, p: dict[str, Any]) -> None:
        if self.runtime is not None:
            await self.runtime.aclose()  # pooled connections belong to the previous configuration
        settings = Settings().updated(
            {
                "credentials.auth": "api_key",
                "credentials.api_key_env": KEY_VARIABLE,
                "deepseek_messages.base_url": p["messages_base"],
                "deepseek_api.base_url": p["tools_base"],
                "deepseek_messages.timeout_s": float(p["timeout_s"]),
                "deepseek_api.timeout_s": float(p["timeout_s"]),
                "tools.search_max_queries": p["search_max_queries"],
                "tools.search_max_results": p["search_max_results"],
                "deepseek_api.send_original_question": p["send_original_question"],
                "deepseek_api.count": p["count"],
                "deepseek_messages.model": p["model"],
                "deepseek_messages.max_tokens": p["max_tokens"],
                "deepseek_messages.max_uses": p["max_uses"],
            }
        ).with_new_search_api(p["provider"] == "api")
        if p["provider"] == "scripted":  # the suite's conformance route: scripted answers and failures
            self.runtime = scripted_runtime(p["scripted_base"], lambda: settings)
        else:
            self.runtime = build_runtime(lambda: settings, environ={KEY_VARIABLE: p["api_key"]})

    async def web_search(self, p: dict[str, Any]) -> ToolResult:
        if self.runtime is None:
            raise WebError("WEB_CONFIG_INVALID", "configure was not called")
        ctx = CallContext(latest_prompt=p.get("latest_prompt"))  # the source of ori_question
        return await self.runtime.search_tool().execute(p.get("arguments"), ctx)

    def tool_schema(self) -> dict[str, Any]:
        """What the model is shown of web_search: the tool's description, argument schema and guidance."""
        if self.runtime is None:
            raise WebError("WEB_CONFIG_INVALID", "configure was not called")
        tool = self.runtime.search_tool()
        return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema,
                "guidance": tool.system_prompt}

    async def close(self) -> None:
        if self.runtime is not None:
            await self.runtime.aclose()


class Server:
    """Reads requests, runs each call in its own task, writes exactly one answer line per request."""

    def __init__(self) -> None:
        self.impl = Implementation()
        self.calls: dict[int, asyncio.Task[None]] = {}

    def answer(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")  # one write per line, then flush
        sys.stdout.flush()

    async def call(self, request_id: int, params: dict[str, Any]) -> None:
        try:
            result = await self.impl.web_search(params)
        except asyncio.CancelledError:
            # The tool re-raises cancellation only after every upstream request it started has
            # closed, which is what the protocol asks before answering "cancelled".
            self.answer({"id": request_id, "cancelled": True})
            return
        except WebError as error:
            self.answer({"id": request_id, "error": {"code": error.code, "message": error.message}})
            return
        finally:
            self.calls.pop(request_id, None)
        if result.error_code is not None:  # a tool error is an error answer, never a result
            self.answer({"id": request_id, "error": {"code": result.error_code, "message": result.text}})
        else:
            self.answer({"id": request_id, "result": {"text": result.text, "value": result.value}})

    def settled(self, request_id: int, task: asyncio.Task[None]) -> None:
        """A cancel read before the call's task began ends the task without running ``call``: answer it
        here (it sent nothing upstream), or the call would never be answered."""
        self.calls.pop(request_id, None)
        if task.cancelled():
            self.answer({"id": request_id, "cancelled": True})

    async def handle(self, message: dict[str, Any]) -> bool:
        request_id, method = message["id"], message.get("method")
        params = message.get("params") or {}
        if method == "hello":
            self.answer({"id": request_id, "result": {"name": "adapter_minimal", "version": "1",
                                                       "capabilities": CAPABILITIES}})
        elif method == "configure":
            try:
                await self.impl.configure(params)
                self.answer({"id": request_id, "result": {}})
            except WebError as error:
                self.answer({"id": request_id, "error": {"code": error.code, "message": error.message}})
        elif method == "web_search":
            task = self.calls[request_id] = asyncio.create_task(self.call(request_id, params))
            task.add_done_callback(functools.partial(self.settled, request_id))
        elif method == "tool_schema":
            try:
                shown = self.impl.tool_schema()
                self.answer({"id": request_id, "result": {"text": shown["description"], "value": shown}})
            except WebError as error:
                self.answer({"id": request_id, "error": {"code": error.code, "message": error.message}})
        elif method == "cancel":
            pending = self.calls.get(params.get("id", 0))
            if pending is not None:
                pending.cancel()  # the call answers "cancelled" itself once it has settled
            self.answer({"id": request_id, "result": {}})
        elif method == "shutdown":
            self.answer({"id": request_id, "result": {}})
            return False
        else:
            self.answer({"id": request_id, "error": {"code": "WEB_INVALID_ARGUMENTS",
                                                     "message": f"unknown method {method!r}"}})
        return True

    async def serve(self) -> None:
        reader = await stdin_reader()
        while line := await reader.readline():  # EOF ends the run as shutdown does
            if line.strip() and not await self.handle(json.loads(line)):
                break
        for task in list(self.calls.values()):
            task.cancel()
        await asyncio.gather(*self.calls.values(), return_exceptions=True)
        await self.impl.close()


if __name__ == "__main__":
    asyncio.run(Server().serve())
