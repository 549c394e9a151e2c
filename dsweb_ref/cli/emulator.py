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

KEYS_ENV = "DSWEB_EMULATOR_API_KEYS"
TOKENS_ENV = "DSWEB_EMULATOR_ACCOUNT_TOKENS"


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("emulator", help="serve a local emulator of the DeepSeek Search, Fetch and Messages APIs")
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
        keys, source = [DEFAULT_API_KEY], f"the built-in test key {DEFAULT_API_KEY!r}"
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


def _announce(emulator: Emulator, source: str, *, as_json: bool) -> None:
    addresses = emulator.describe()
    if as_json:
        print(json.dumps({**addresses, "credentials": source}), flush=True)
        return
    print(f"dsweb emulator listening on {emulator.base_url}")
    print(f"  search/fetch base: {addresses['tools_base'] or '(not served)'}")
    print(f"  messages base:     {emulator.messages_base}  (for clients that append /messages)")
    print(f"  Anthropic SDK:     base_url={emulator.anthropic_base}")
    print(f"  OpenAI SDK:        base_url={emulator.openai_base}")
    print(f"  accepts:           {source}")
    print("press Ctrl-C to stop", flush=True)


def _on_sigterm(stop: threading.Event) -> Any:
    """Treat SIGTERM like Ctrl-C; returns the previous handler (None off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    return signal.signal(signal.SIGTERM, handler)
