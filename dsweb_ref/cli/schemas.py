"""``dsweb schemas``: list the shipped schemas and check them against the meta-schema."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..schemas import check_all, schema_dir
from ._commands import parser_texts


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("schemas", **parser_texts("schemas"))
    p.add_argument("--json", action="store_true", help="print the check as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    checks = check_all()
    failed = [c for c in checks if c.problems]
    if args.json:
        print(json.dumps([{"name": c.name, "id": c.schema_id, "problems": list(c.problems)} for c in checks], indent=2))
    else:
        print(f"schemas in {schema_dir()}")
        for c in checks:
            print(f"  {'ok  ' if not c.problems else 'FAIL'} {c.name:<22} {c.schema_id}")
            for problem in c.problems:
                print(f"       - {problem}")
        print(f"{len(checks) - len(failed)} of {len(checks)} schemas valid (JSON Schema 2020-12)")
    return 1 if failed or not checks else 0
