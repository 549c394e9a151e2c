"""``dsweb emulator``: serve the DeepSeek web API emulator until Ctrl-C.

Keys come from ``--api-key`` (repeatable), else from ``$DSWEB_EMULATOR_API_KEYS`` (comma-separated),
else the built-in public test key. Only the source and count are printed, never the values, except
for the built-in key, which is public anyway.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from types import FrameType
from typing import Any

from ..emulator.server import DEFAULT_API_KEY, Emulator, is_loopback
from ._commands import parser_texts

KEYS_ENV = "DSWEB_EMULATOR_API_KEYS"
BUILTIN_SOURCE = f"the built-in test key {DEFAULT_API_KEY!r}"
TOKENS_ENV = "DSWEB_EMULATOR_ACCOUNT_TOKENS"


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("emulator", **parser_texts("emulator"))
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port to listen on (default 0: any free port)")
    p.add_argument("--api-key", action="append", default=[], metavar="KEY", help=f"accepted API key (or ${KEYS_ENV})")
    p.add_argument(
        "--account-token",
        action="append",
        default=[],
        metavar="TOKEN",
        help=f"accepted account token (or ${TOKENS_ENV})",
    )
    p.add_argument(
        "--tools-prefix", default="/v1/tools", help="path of the Search/Fetch routes; 'none' serves Messages only"
    )
    p.add_argument("--allow-non-loopback", action="store_true", help="allow a host other than a loopback address")
    p.add_argument("--json", action="store_true", help="print the addresses as one JSON line")
    p.set_defaults(func=run)


def _from_env(name: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, "").split(",") if part.strip()]


def _credentials(args: argparse.Namespace) -> tuple[list[str], list[str], str]:
    keys, tokens = list(args.api_key), list(args.account_token) or _from_env(TOKENS_ENV)
    if keys:
        source = f"{len(keys)} API key(s) from --api-key"
    elif env_keys := _from_env(KEYS_ENV):
        keys, source = env_keys, f"{len(env_keys)} API key(s) from ${KEYS_ENV}"
    elif tokens:
        source = "no API keys"
    else:
        keys, source = [DEFAULT_API_KEY], BUILTIN_SOURCE
    if tokens:
        origin = "--account-token" if args.account_token else f"${TOKENS_ENV}"
        source += f", {len(tokens)} account token(s) from {origin}"
    return keys, tokens, source


def run(args: argparse.Namespace) -> int:
    if not args.allow_non_loopback and not is_loopback(args.host):
        print(
            f"dsweb emulator: refusing to listen on non-loopback host {args.host!r}; "
            "pass --allow-non-loopback to expose the emulator beyond this machine",
            file=sys.stderr,
        )
        return 2
    keys, tokens, source = _credentials(args)
    prefix = None if args.tools_prefix.lower() == "none" else args.tools_prefix
    try:
        emulator = Emulator(
            api_keys=keys,
            account_tokens=tokens,
            host=args.host,
            port=args.port,
            tools_prefix=prefix,
            allow_non_loopback=args.allow_non_loopback,
            log_limit=1000,  # nobody reads the log of a CLI server; keep its memory bounded
        )
    except ValueError as exc:
        print(f"dsweb emulator: {exc}", file=sys.stderr)
        return 2
    try:
        emulator.start()
    except (OSError, RuntimeError) as exc:
        print(f"dsweb emulator: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()
    previous = _on_sigterm(stop)
    try:
        _announce(emulator, source, as_json=args.json)
        # Wake periodically so Ctrl-C is handled promptly on every platform.
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        emulator.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0


EXAMPLE_QUERY = "search API"
EXAMPLE_URL = "https://docs.example.test/api/search"  # a page of the emulator's corpus


def _curl(url: str, auth: str, body: dict[str, Any]) -> str:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return f"curl -s {url} -H '{auth}' -H 'content-type: application/json' -d '{data}'"


def examples(addresses: dict[str, Any], key: str) -> dict[str, dict[str, str]]:
    """Per route: the base URL a client takes and a one-line curl call with ``key``.

    The Anthropic SDK takes ``.../anthropic`` and appends ``/v1/messages`` itself; the reference
    providers take ``.../anthropic/v1`` (the messages base) and append ``/messages``.
    """
    messages = addresses["anthropic_base"] + "/v1/messages"
    out = {
        "messages": {
            "anthropic_sdk_base_url": addresses["anthropic_base"],
            "curl": _curl(
                messages,
                f"x-api-key: {key}",
                {
                    "model": "deepseek-v4-flash",
                    "max_tokens": 1024,
                    "messages": [{"role": "user", "content": EXAMPLE_QUERY}],
                    "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 1}],
                },
            ),
        }
    }
    if addresses.get("openai_base"):
        out["responses"] = {
            "openai_sdk_base_url": addresses["openai_base"],
            "curl": _curl(
                addresses["openai_base"] + "/responses",
                f"Authorization: Bearer {key}",
                {"model": "deepseek-v4-flash", "input": EXAMPLE_QUERY, "tools": [{"type": "web_search"}]},
            ),
        }
    tools = addresses["tools_base"]
    if tools is not None:
        auth = f"Authorization: Bearer {key}"
        out["search"] = {"base_url": tools, "curl": _curl(f"{tools}/search", auth, {"query": EXAMPLE_QUERY})}
        out["fetch"] = {"base_url": tools, "curl": _curl(f"{tools}/fetch", auth, {"url": EXAMPLE_URL})}
    return out


def _announce(emulator: Emulator, source: str, *, as_json: bool) -> None:
    addresses = emulator.describe()
    # Only the built-in test key is printed (it is public); keys the user gave show as a placeholder.
    key = DEFAULT_API_KEY if source == BUILTIN_SOURCE else "$KEY"
    calls = examples(addresses, key)
    if as_json:
        print(json.dumps({**addresses, "credentials": source, "examples": calls}), flush=True)
        return
    print(f"dsweb emulator listening on {emulator.base_url}")
    print(f"  accepts:           {source}")
    print("  Messages (Anthropic-compatible, web_search server tool)")
    sdk_base = calls["messages"]["anthropic_sdk_base_url"]
    print(f"    Anthropic SDK:   base_url={sdk_base}  (the SDK appends /v1/messages)")
    print(f"    dsweb providers: messages base {emulator.messages_base}  (append /messages)")
    print(f"    try:  {calls['messages']['curl']}")
    if "responses" in calls:
        print("  Responses (OpenAI-style, web_search tool; seed 003)")
        sdk = calls["responses"]["openai_sdk_base_url"]
        print(f"    OpenAI SDK:      base_url={sdk}  (the SDK appends /responses)")
        print(f"    try:  {calls['responses']['curl']}")
    if "search" in calls:
        print(f"  Search and Fetch APIs: base {calls['search']['base_url']}  (append /search or /fetch)")
        print(f"    try:  {calls['search']['curl']}")
        print(f"    try:  {calls['fetch']['curl']}")
    else:
        print("  Search and Fetch APIs: not served (--tools-prefix none)")
    print("press Ctrl-C to stop", flush=True)


def _on_sigterm(stop: threading.Event) -> Any:
    """Treat SIGTERM like Ctrl-C; returns the previous handler (None off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    return signal.signal(signal.SIGTERM, handler)
