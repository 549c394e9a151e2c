"""Saving the assigned search model (seed 003) and telling which file's value is in effect.

Seed 003: saving this setting updates only that field and keeps the rest of the configuration
(an older generic save re-renders the file and may lose the field, comments or unknown keys).
``save_search_model`` therefore edits the TOML text with ``tomlkit`` (format preserving) and then
proves the edit: the new text parses to the old document with only ``web_search_model`` changed,
and every other line is kept byte for byte. A project file that sets the field overrides the
user's value; the report names it so a caller can show the value actually in effect.
"""

from __future__ import annotations

import difflib
import os
import re
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Table

from ._exceptions import WebError, WebErrorCode
from .standalone_accounts import search_model_of

__all__ = ["SaveReport", "effective_search_model", "save_search_model", "validate_reference"]

KEY = "web_search_model"
_AGENT_HEADER = re.compile(r"^[ \t]*\[[ \t]*agent[ \t]*\][ \t]*(?:#.*)?$")


@dataclass(frozen=True, slots=True)
class SaveReport:
    """What a save did: the file, the value before and after, and a project file whose own value
    overrides the saved one (``effective`` is then the project's)."""

    path: str
    previous: str | None
    saved: str
    overridden_by: str | None = None
    effective: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "previous": self.previous, "saved": self.saved,
                # A project's "" (automatic) is a value in effect too, not a missing one.
                "overridden_by": self.overridden_by,
                "effective": self.effective if self.overridden_by is not None else self.saved}


def _bad(why: str) -> WebError:
    return WebError(WebErrorCode.CONFIG_INVALID, f"web_search_model: {why}")


def validate_reference(value: str) -> str:
    """``"auto"``, ``""`` or ``connection/model`` (split at the first ``/``, both parts non-empty)."""
    if value in ("", "auto"):
        return value
    name, slash, model = value.partition("/")
    if not slash or not name.strip() or not model.strip():
        raise _bad(f'{value[:80]!r} is not "auto" or CONNECTION/MODEL')
    if any(ord(c) < 0x20 or c == "\x7f" for c in value):
        raise _bad("control characters are not allowed")
    return value


def _load(text: str, path: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise WebError(WebErrorCode.CONFIG_INVALID, f"{path}: not valid TOML ({exc})") from exc
    except RecursionError:  # tomllib recurses per level of nesting
        raise WebError(WebErrorCode.CONFIG_INVALID, f"{path}: nested too deeply") from None


def effective_search_model(user: Mapping[str, Any], project: Mapping[str, Any] | None) -> tuple[str | None, str]:
    """The value in effect and where it comes from: ``"project"``, ``"user"`` or ``"default"``."""
    if project is not None and (value := search_model_of(project)) is not None:
        return value, "project"
    if (value := search_model_of(user)) is not None:
        return value, "user"
    return None, "default"


def _edited(text: str, value: str) -> str:
    document = tomlkit.parse(text)
    if KEY in document:
        document[KEY] = value
        return tomlkit.dumps(document)
    agent = document.get("agent")
    if agent is None:
        table = tomlkit.table()
        table[KEY] = value
        document.append("agent", table)
        return tomlkit.dumps(document)
    if isinstance(agent, Table) and KEY not in agent:
        inserted = _insert_after_header(text, value)
        if inserted is not None:
            return inserted
    agent[KEY] = value
    return tomlkit.dumps(document)


def _insert_after_header(text: str, value: str) -> str | None:
    """The key as the first line of the ``[agent]`` table, so nothing else moves (tomlkit may add a
    blank line before a sub-table when it appends at the table's end). Lines end at LF only (CRLF ends
    in LF too): ``splitlines`` would also end one at a U+2028 a comment may hold."""
    lines = text.split("\n")
    headers = [i for i, line in enumerate(lines) if _AGENT_HEADER.match(line.rstrip("\r"))]
    if len(headers) != 1:
        return None
    at = headers[0]
    newline = "\r\n" if lines[at].endswith("\r") else "\n"
    rendered = f"{KEY} = {tomlkit.item(value).as_string()}{newline}"
    return "\n".join(lines[: at + 1]) + "\n" + rendered + "\n".join(lines[at + 1 :])


def _without_key(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` without the field (and without an ``agent`` table left empty by that)."""
    rest = {k: v for k, v in document.items() if k != KEY}
    if isinstance(rest.get("agent"), dict):
        rest["agent"] = {k: v for k, v in rest["agent"].items() if k != KEY}
        if not rest["agent"]:
            del rest["agent"]
    return rest


def _only_the_field_changed(old: str, new: str, before: dict[str, Any], value: str, path: str) -> dict[str, Any]:
    """The edited document, once the edit is proven to change nothing but the field."""
    after = _load(new, path)
    if search_model_of(after) != value or _without_key(after) != _without_key(before):
        raise WebError(WebErrorCode.CONFIG_INVALID, f"{path}: the edit would change more than {KEY}; not saved")
    changed = [
        line
        for line in difflib.ndiff(old.splitlines(), new.splitlines())
        if line.startswith(("- ", "+ ")) and KEY not in line and line[2:].strip() not in ("", "[agent]")
    ]
    if changed:
        raise WebError(WebErrorCode.CONFIG_INVALID, f"{path}: the edit would rewrite other lines; not saved")
    return after


def _write(path: Path, data: str) -> None:
    """Write beside the file and rename over it, so a crash leaves the old file or the new one."""
    mode = path.stat().st_mode if path.exists() else None
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(data)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def save_search_model(config: str | Path, value: str, *, project: str | Path | None = None) -> SaveReport:
    """Set ``web_search_model`` in the user file ``config`` (created if missing) to ``value``,
    changing nothing else; report a ``project`` file whose own value overrides it."""
    validate_reference(value)
    path = Path(config)
    before, old = _read(path)
    previous = search_model_of(before)  # a file giving the field twice is refused before anything is written
    # The project file is read before the user file is written: a bad one leaves nothing changed.
    project_document = None
    if project is not None and Path(project).exists():
        project_document = _read(Path(project))[0]
    try:
        new = _edited(old, value)
    except (TOMLKitError, RecursionError) as exc:  # a document tomllib reads but tomlkit refuses (nested over 100)
        raise WebError(WebErrorCode.CONFIG_INVALID, f"{path}: cannot be edited ({exc})") from exc
    after = _only_the_field_changed(old, new, before, value, str(path))
    if new != old:
        _write(path, new)
    # The same rule as reading the configuration: a project file that sets the field wins.
    effective, origin = effective_search_model(after, project_document)
    if origin != "project":
        return SaveReport(str(path), previous, value)
    return SaveReport(str(path), previous, value, str(project), effective)


def _read(path: Path) -> tuple[dict[str, Any], str]:
    """A TOML file's document and text ("" for a missing file); unreadable or invalid is CONFIG_INVALID."""
    try:
        text = path.read_bytes().decode("utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise WebError(WebErrorCode.CONFIG_INVALID, f"{path}: cannot be read ({exc})") from exc
    return _load(text, str(path)), text
