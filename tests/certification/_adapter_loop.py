"""The JSON-lines loop the small SDK adapters in this folder share (see
dsweb_ref/certification/adapter_protocol.py): ``answer(method, params)`` gives a request's result, or
None for a method it does not serve, or raises WebError; configure and shutdown are answered in order,
every other request in its own task (cancel is acknowledged and ignored: these adapters do not
declare it)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from dsweb_ref import WebError, WebErrorCode
from dsweb_ref.certification.adapter_protocol import stdin_reader
from dsweb_ref.tools import ToolResult

Answer = Callable[[Any, dict[str, Any]], Awaitable[dict[str, Any] | None]]


def tool_answer(result: ToolResult) -> dict[str, Any]:
    """A tool's result as the protocol's result, or its error raised."""
    if result.error_code is not None:
        raise WebError(result.error_code, result.text)
    return {"text": result.text, "value": result.value}


async def serve(answer: Answer) -> None:
    tasks: set[asyncio.Task[None]] = set()
    reader = await stdin_reader()

    async def reply(request: dict[str, Any]) -> None:
        method = request.get("method")
        try:
            result = {} if method in ("cancel", "shutdown") else await answer(method, request.get("params") or {})
            if result is None:
                raise WebError(WebErrorCode.INVALID_ARGUMENTS, f"unsupported method {method}")
            message: dict[str, Any] = {"result": result}
        except WebError as error:
            message = {"error": {"code": error.code, "message": error.message}}
        sys.stdout.write(json.dumps({"id": request["id"], **message}, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    while line := await reader.readline():
        request = json.loads(line)
        if request.get("method") in ("configure", "shutdown"):
            await reply(request)  # in order: a configure lands before the calls that follow it
            if request["method"] == "shutdown":
                break
            continue
        task = asyncio.ensure_future(reply(request))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks, return_exceptions=True)
