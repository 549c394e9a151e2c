"""Shared plumbing for the commands that run the real tools (`dsweb search`, `dsweb fetch`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

from .._context import CallContext
from .._exceptions import WebError
from ..runtime import Runtime, build_runtime
from ..settings import Settings, load_settings
from ..tools import ToolResult

ERROR_PREFIX = "Error: "  # how a tool renders an error for the model (tools.error_result)


def add_common_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", help="settings TOML file (default: $DSWEB_CONFIG)")
    p.add_argument("--json", action="store_true", help="print the structured value (or the error) as JSON")
    p.add_argument(
        "--emulator",
        action="store_true",
        help="start the embedded DeepSeek web API emulator on loopback and point the providers at it",
    )
    p.add_argument(
        "--new-api",
        action="store_true",
        help="turn on 'use the new Web Search API' (deepseek-search-api + deepseek-fetch-api) for this run",
    )


@contextmanager
def runtime_for(args: argparse.Namespace) -> Iterator[Runtime]:
    settings = load_settings(args.config)
    if args.new_api:
        settings = settings.with_new_search_api(True)
    if not args.emulator:
        yield build_runtime(_fixed(settings))
        return
    # Imported here: `dsweb --version` and runs without --emulator never load the certification modules.
    from ..emulator import Emulator
    from ..emulator.server import DEFAULT_API_KEY
    from ..replay._bases import credential_environ, settings_for_bases

    with Emulator() as emu:
        # The emulator's key is a fixed, non-secret test value; it reaches the providers through a
        # private mapping (replay._bases.KEY_ENV), so the user's real DEEPSEEK_API_KEY is
        # never read or sent to the emulator. Timeouts stay as configured.
        settings = settings_for_bases(emu.messages_base, emu.tools_base, settings=settings)
        yield build_runtime(_fixed(settings), environ=credential_environ(DEFAULT_API_KEY))


def _fixed(settings: Settings) -> Callable[[], Settings]:
    return lambda: settings


def run_tool(
    args: argparse.Namespace,
    call: Callable[[Runtime, CallContext], Coroutine[Any, Any, ToolResult]],
) -> int:
    """Run one tool call and print it; exit 0 on success, 1 with the WEB_* code on error."""
    try:
        with runtime_for(args) as runtime:
            ctx = CallContext(latest_prompt=getattr(args, "prompt", None))
            result: ToolResult = asyncio.run(call(runtime, ctx))
    except WebError as error:  # bad settings, emulator start-up
        result = ToolResult(text=ERROR_PREFIX + error.message, error_code=error.code)
    _print(result, as_json=args.json)
    return 1 if result.is_error else 0



def result_json(result: ToolResult) -> dict[str, Any]:
    """What ``--json`` prints: ``{"is_error", "text", "value"}``, or on error ``{"is_error", "text", "error"}``
    whose ``error`` follows schemas/web_error.schema.json (``code`` and ``message``)."""
    out: dict[str, Any] = result.to_json()
    if result.error_code is not None:
        out["error"] = {"code": result.error_code, "message": result.text.removeprefix(ERROR_PREFIX)}
    return out


def _print(result: ToolResult, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result_json(result), ensure_ascii=False, indent=2))
    else:
        print(result.text)
    if result.is_error:
        print(f"dsweb: {result.error_code}", file=sys.stderr)
