"""What ``dsweb --help`` and each ``dsweb COMMAND --help`` say: one summary line and examples per command.

Kept apart from the command modules so that ``dsweb --help`` can list every command without importing
any of them (they pull in the emulator, the certification suite, httpx, jsonschema, vcrpy ...).
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["COMMANDS", "EXAMPLES", "parser_texts"]

# name -> the one line `dsweb --help` prints (and the command's own --help opens with)
COMMANDS: dict[str, str] = {
    "certify": "certify an implementation, adapter or endpoint",
    "search": "run the web_search tool once and print its answer",
    "fetch": "run the web_fetch tool on one URL and print its answer",
    "record": "record live probes into scrubbed cassettes",
    "emulator": "serve the DeepSeek web API emulator until Ctrl-C",
    "schemas": "list the shipped JSON Schemas and check them",
    "solo": "run the standalone web_search (seed 003) or resolve its account",
}

EXAMPLES: dict[str, tuple[str, ...]] = {
    "certify": (
        "dsweb certify",
        "dsweb certify --explain search.batch.concurrent",
        "dsweb certify --list --markdown",
        'dsweb certify --adapter "python scripts/adapter_minimal.py" --known-failures known.yaml --report-dir out',
        "dsweb certify --cassettes cassettes",
        "DEEPSEEK_API_KEY=... dsweb certify --base https://gateway.example.test --timeout 20 --report-dir out",
    ),
    "search": (
        'dsweb search --emulator "search API" "rate limits"',
        'dsweb search --emulator --new-api --json --prompt "how are searches billed?" "search API pricing"',
    ),
    "fetch": (
        "dsweb fetch https://example.com/",
        "dsweb fetch --emulator --new-api --json https://docs.example.test/api/search",
    ),
    "record": (
        "dsweb record --list",
        "dsweb record --emulator --out /tmp/cassettes search-api",
        "DEEPSEEK_API_KEY=... dsweb record --base https://api.deepseek.com --out cassettes search-api.basic",
    ),
    "emulator": (
        "dsweb emulator --port 8765",
        "dsweb emulator --json --api-key my-test-key",
    ),
    "schemas": (
        "dsweb schemas",
        "dsweb schemas --json",
    ),
    "solo": (
        "dsweb solo resolve --config accounts.toml",
        'dsweb solo search --emulator "search API pricing"',
        'dsweb solo search --emulator --protocol responses --json "search API pricing"',
        'dsweb solo search --config accounts.toml "DeepSeek V4 release date"',
    ),
}


def parser_texts(name: str, description: str | None = None) -> dict[str, Any]:
    """Keyword arguments for ``add_parser(name, ...)``: the summary line, a description and an examples epilog."""
    epilog = "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
    return {
        "help": COMMANDS[name],
        "description": COMMANDS[name] + (f"\n\n{description}" if description else ""),
        "epilog": epilog,
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }
