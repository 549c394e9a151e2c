"""standalone.save.keeps_rest (seed 003: saving the assigned search model): each row of its table rejects the
wrong reading it names, and only that row does. A reading is a save that goes wrong one way, put in place of
the reference's (``targets.reference_save``); the seed-open variants it must accept pass every row."""

from __future__ import annotations

import asyncio
import re
import tomllib
from collections.abc import Callable
from typing import Any

import pytest
import tomlkit

from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import standalone_save
from dsweb_ref.certification.targets import reference_save
from dsweb_ref.emulator.server import DEFAULT_API_KEY

from ._readings import failing_rows

CHECK = "standalone.save.keeps_rest"
FIELD = "web_search_model"
Saver = Callable[[str | None, str | None, str], dict[str, Any]]


def _refuse(why: str) -> WebError:
    return WebError(WebErrorCode.CONFIG_INVALID, why)


def _rerendered(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    saved = reference_save(user, project, value)
    return {**saved, "user": tomlkit.dumps(tomllib.loads(saved["user"]))}


def _known_only(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    saved = reference_save(user, project, value)
    document = tomlkit.parse(saved["user"])
    known = {"language": set(), FIELD: set(), "agent": {"model", FIELD, "ui"}, "tools": {"enabled"}}
    for key in list(document):
        if key not in known:
            del document[key]
        elif known[key]:
            for inner in list(document[key]):  # type: ignore[union-attr]
                if inner not in known[key]:
                    del document[key][inner]  # type: ignore[union-attr]
    return {**saved, "user": tomlkit.dumps(document)}


def _line(value: str) -> str:
    return f"{FIELD} = {tomlkit.item(value).as_string()}\n"


def _after_header(text: str, line: str) -> str:
    return re.sub(r"^\[agent\]\n", lambda m: m.group(0) + line, text, count=1, flags=re.M)


def _second_field(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if user is not None and FIELD in user and not user.startswith(FIELD):  # the field in [agent]
        return {**reference_save(user, project, value), "user": _after_header(user, _line(value))}
    return reference_save(user, project, value)


def _at_end_without_agent(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if user is not None and "[agent]" not in user:
        return {**reference_save(user, project, value), "user": user + _line(value)}
    return reference_save(user, project, value)


def _at_end_with_agent(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if user is not None and "[agent]" in user and FIELD not in user and user.endswith("\n"):
        return {**reference_save(user, project, value), "user": user + _line(value)}
    return reference_save(user, project, value)


def _no_missing_file(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if user is None:
        raise _refuse("no configuration file to save into")
    return reference_save(user, project, value)


def _one_slash_only(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if value.count("/") > 1:
        raise _refuse("not CONNECTION/MODEL")
    return reference_save(user, project, value)


def _unescaped(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if user is not None and "[agent]\n" in user and FIELD not in user:
        return {**reference_save(user, project, value), "user": _after_header(user, f'{FIELD} = "{value}"\n')}
    return reference_save(user, project, value)


def _auto_refused(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if value == "auto":
        raise _refuse("not CONNECTION/MODEL")
    return reference_save(user, project, value)


def _project_ignored(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    return reference_save(user, None, value)


def _any_project_overrides(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    saved = reference_save(user, project, value)
    if project is None:
        return saved
    agent = tomllib.loads(project).get("agent", {})
    return {**saved, "overridden_by": "project", "effective": agent.get(FIELD)}


def _saved_into_project(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if project is None or FIELD not in project:
        return reference_save(user, project, value)
    reference_save(project, None, value)  # the project's field updated, the user's file left as it was
    return {"user": user or "", "effective": value, "overridden_by": None}


def _unreadable_replaced(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    try:
        tomllib.loads(user or "")
    except tomllib.TOMLDecodeError:
        return reference_save(None, project, value)
    return reference_save(user, project, value)


def _agent_always(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if user is not None and user.startswith(FIELD):
        return {**reference_save(user, project, value), "user": _after_header(user, _line(value))}
    return reference_save(user, project, value)


def _glued_to_header(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if user is not None and user.endswith("[agent]"):
        return {**reference_save(user, project, value), "user": user + _line(value)}
    return reference_save(user, project, value)


def _empty_refused(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if value == "":
        raise _refuse("not CONNECTION/MODEL")
    return reference_save(user, project, value)


def _malformed_other_code(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if "/" not in value and value not in ("", "auto"):
        raise WebError(WebErrorCode.PROVIDER_ERROR, "not CONNECTION/MODEL")
    return reference_save(user, project, value)


def _header_assumed(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if user is not None and "[agent]" not in user and "agent." in user:
        return {**reference_save(user, project, value), "user": user + "[agent]\n" + _line(value)}
    return reference_save(user, project, value)


def _split_at_any_line_end(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if user is not None and "\u2028" in user:
        lines = user.splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if line.startswith("[agent]"))
        text = "".join(lines[: at + 1]) + ("" if lines[at].endswith("\n") else "\n") + _line(value)
        return {**reference_save(None, project, value), "user": text + "".join(lines[at + 1:])}
    return reference_save(user, project, value)


READINGS: dict[str, tuple[Saver, set[str]]] = {
    # every comment is lost, the one a U+2028 continues too
    "re-rendered from parsed values": (_rerendered, {"comments-kept", "line-separator-in-a-comment"}),
    "only known fields saved": (_known_only, {"unknown-keys-kept"}),
    "a second field added": (_second_field, {"existing-field-replaced"}),
    "appended at the end, no [agent] table": (_at_end_without_agent, {"no-agent-table"}),
    "appended at the end, after the table that follows [agent]": (_at_end_with_agent, {"agent-table-then-another"}),
    "a missing file refused": (_no_missing_file, {"missing-file-created"}),
    "one / only": (_one_slash_only, {"model-with-slashes"}),
    "the value written without escaping": (_unescaped, {"value-needing-quotes"}),
    "auto refused": (_auto_refused, {"auto-saved"}),
    "the project file ignored": (_project_ignored, {"project-overrides"}),
    "saved into the project file": (_saved_into_project, {"project-overrides"}),
    "any project file taken for an override": (_any_project_overrides, {"project-without-the-field"}),
    "an unreadable file replaced": (_unreadable_replaced, {"unreadable-file-not-lost"}),
    "the field always written into [agent]": (_agent_always, {"top-level-field-replaced"}),
    "the field glued to a header that ends the file": (_glued_to_header, {"header-without-final-newline"}),
    "an empty value refused": (_empty_refused, {"empty-saved"}),
    "a malformed value refused with another code": (_malformed_other_code, {"malformed-value"}),
    "[agent] taken for a table header": (_header_assumed, {"agent-from-dotted-keys"}),
    "lines ended at U+2028 too": (_split_at_any_line_end, {"line-separator-in-a-comment"}),
}


@pytest.mark.parametrize("reading", sorted(READINGS))
def test_each_row_rejects_the_reading_it_names_and_only_that_row_does(
    reading: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    saver, rows = READINGS[reading]
    monkeypatch.setattr(targets, "reference_save", saver)
    assert failing_rows(standalone_save, "SAVE_CASES", CHECK, monkeypatch) == rows


def test_every_row_names_a_reading_that_it_rejects() -> None:
    named = set().union(*(rows for _, rows in READINGS.values()))
    assert named == {case.name for case in standalone_save.SAVE_CASES}


def _top_level_when_no_agent(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if user is None:
        return {**reference_save(user, project, value), "user": _line(value)}
    return reference_save(user, project, value)


def _auto_as_removal(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if value == "auto":
        return {**reference_save(user, project, value), "user": user or "", "effective": None}
    return reference_save(user, project, value)


def _spacing_normalised(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    saved = reference_save(user, project, value)
    return {**saved, "user": re.sub(r"^(\w+)\s*=\s*", r"\1=", saved["user"], flags=re.M)}


def _malformed_saved(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    if "/" not in value and value not in ("", "auto"):
        text = _after_header(user or "[agent]\n", _line(value))
        return {"user": text, "effective": value, "overridden_by": None}
    return reference_save(user, project, value)


ALLOWED: dict[str, Saver] = {
    "a value that is not CONNECTION/MODEL saved as given (refusing it is open too)": _malformed_saved,
    # seed 003's example puts the field under [agent]; a file without one may hold it at the top level
    "the field at the top level of a new file": _top_level_when_no_agent,
    "auto saved as no field (missing means automatic)": _auto_as_removal,
    "spacing around = normalised (formatting is left open)": _spacing_normalised,
}


@pytest.mark.parametrize("variant", sorted(ALLOWED))
def test_the_variants_the_seed_leaves_open_pass_every_row(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(targets, "reference_save", ALLOWED[variant])
    assert failing_rows(standalone_save, "SAVE_CASES", CHECK, monkeypatch) == set()


def test_the_reference_reports_the_project_value_in_effect_and_saves_the_user_file() -> None:
    saved = reference_save("[agent]\n", '[agent]\nweb_search_model = "p/m"\n', "u/m")
    assert saved == {"user": '[agent]\nweb_search_model = "u/m"\n', "effective": "p/m", "overridden_by": "project"}


def test_the_reference_refuses_params_of_the_wrong_type_with_a_web_error() -> None:
    async def call(params: dict[str, Any]) -> str | None:
        target = targets.reference_target()
        base = "http://127.0.0.1:9"  # never dialled: a save makes no request
        await target.configure(targets.TargetConfig(messages_base=base, tools_base=base, api_key=DEFAULT_API_KEY))
        return (await target.start_call("standalone_save", params).outcome(10)).error_code

    for params in ({"user": 1, "project": None, "value": "c/m"}, {"user": None, "project": None, "value": None}):
        assert asyncio.run(call(params)) == "WEB_INVALID_ARGUMENTS"
