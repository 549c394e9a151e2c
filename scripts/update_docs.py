"""Rewrite the generated parts of the documentation (dsweb_ref/docs/) from the code.

    python scripts/update_docs.py          # rewrite in place
    python scripts/update_docs.py --check  # exit 1 when a page is out of date

Generated, each between its markers: the check catalogue (checks.md, from `dsweb certify --list
--markdown`, with one anchor per check id), the settings table (settings.md), and in
adapter-protocol.md the WEB_* code table and the table of rules the checks enforce.
tests/test_docs.py fails when a page and the code differ; run this to fix it.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "dsweb_ref" / "docs"

_CHECK_HEADING = re.compile(r"^(#### `([a-z0-9_.]+)`)$", re.MULTILINE)


def catalogue_page() -> str:
    """The catalogue with an anchor per check id (`checks.md#search.batch.race`)."""
    from dsweb_ref.certification.catalogue import markdown

    return _CHECK_HEADING.sub(r"\1 {#\2}", markdown())


def settings_table() -> str:
    from dsweb_ref.settings import describe_settings_keys

    rows = ["| key | environment | default | meaning |", "|---|---|---|---|"]
    for r in describe_settings_keys():
        default = r["default"] if r["default"] != "" else "(blank)"
        rows.append(f"| `{r['key']}` | `{r['env']}` | `{default}` | {r['meaning']} |")
    return "\n".join(rows) + "\n"


def error_codes() -> str:
    from dsweb_ref._exceptions import WebErrorCode

    rows = ["| code |", "|---|"] + [f"| `{c.value}` |" for c in WebErrorCode]
    return "\n".join(rows) + "\n"


def enforced_rules() -> str:
    from dsweb_ref.certification.catalogue import entries

    def cell(text: str) -> str:
        return " ".join(text.split()).replace("|", "\\|")

    rows = ["| check | seed | requires | what it enforces |", "|---|---|---|---|"]
    for e in entries():
        requires = cell(", ".join(e.requires)) or "-"
        rows.append(f"| [`{e.id}`](checks.md#{e.id}) | {e.seed} | {requires} | {cell(e.description)} |")
    return "\n".join(rows) + "\n"


def _marked(name: str) -> tuple[str, str]:
    return f"<!-- {name}:", f"<!-- /{name} -->"


# page -> [(start marker prefix, end marker, generator)]
SECTIONS: dict[str, list[tuple[str, str, Callable[[], str]]]] = {
    "checks.md": [(*_marked("spec-catalogue"), catalogue_page)],
    "settings.md": [(*_marked("settings-table"), settings_table)],
    "adapter-protocol.md": [
        (*_marked("error-codes"), error_codes),
        (*_marked("enforced-rules"), enforced_rules),
    ],
}


def section(text: str, start: str, end: str) -> str:
    """The generated text between a start marker (its whole line) and the end marker."""
    after = text.split(start, 1)[1].split("\n", 1)[1]
    return after.split(end, 1)[0].strip("\n") + "\n"


def updated(text: str, start: str, end: str, body: str) -> str:
    head, rest = text.split(start, 1)
    marker_rest, after = rest.split("\n", 1)
    tail = after.split(end, 1)[1]
    return f"{head}{start}{marker_rest}\n{body}{end}{tail}"


def rendered(page: str) -> str:
    text = (DOCS / page).read_text(encoding="utf-8")
    for start, end, make in SECTIONS[page]:
        text = updated(text, start, end, make())
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    stale = []
    for page in SECTIONS:
        path = DOCS / page
        new = rendered(page)
        if new != path.read_text(encoding="utf-8"):
            stale.append(page)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)} (run: python scripts/update_docs.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
