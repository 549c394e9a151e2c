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
from dsweb_ref.certification.targets import Saver, reference_save
from dsweb_ref.emulator.server import DEFAULT_API_KEY

from ._readings import failing_rows

CHECK = "standalone.save.keeps_rest"
FIELD = "web_search_model"


def _rewritten(when: Callable[[str], bool], text: Callable[[str, str], str]) -> Saver:
    """A save whose file, when ``when`` holds for the user's text, is ``text(user, value)`` instead."""
    def save(user: str | None, project: str | None, value: str) -> dict[str, Any]:
        saved = reference_save(user, project, value)
        return {**saved, "user": text(user, value)} if user is not None and when(user) else saved

    return save


def _refusing(when: Callable[[str | None, str], bool], code: WebErrorCode = WebErrorCode.CONFIG_INVALID) -> Saver:
    """A save that refuses with ``code`` when ``when(user, value)`` holds."""
    def save(user: str | None, project: str | None, value: str) -> dict[str, Any]:
        if when(user, value):
            raise WebError(code, "refused")
        return reference_save(user, project, value)

    return save


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


def _split_at_any_line_end(user: str, value: str) -> str:
    lines = user.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("[agent]"))
    head = "".join(lines[: at + 1]) + ("" if lines[at].endswith("\n") else "\n")
    return head + _line(value) + "".join(lines[at + 1:])


def _appended(user: str, value: str) -> str:
    return user + _line(value)


def _after_the_header(user: str, value: str) -> str:
    return _after_header(user, _line(value))


# Hunt T2-2's rows: the existing field in another TOML string form ('...', one-line """...""", '...' at the top level)
LITERAL, MULTI_LINE, TOP_LITERAL = ("literal-string-field-replaced", "multi-line-string-field-replaced",
                                    "top-level-literal-string-field-replaced")
READINGS: dict[str, tuple[Saver, set[str]]] = {
    # every comment is lost, the one a U+2028 continues too
    # every comment is lost, the one after the field's value and a commented-out field too (and dotted agent.* keys
    # rendered as an [agent] table after the top-level keys: moved)
    "re-rendered from parsed values": (_rerendered, {"comments-kept", "line-separator-in-a-comment",
                                                     "field-comment-kept", "field-elsewhere-kept",
                                                     "agent-from-dotted-keys"}),
    # (the chosen connection's [[accounts]] table is unknown to it too)
    "only known fields saved": (_known_only, {"unknown-keys-kept", "field-elsewhere-kept",
                                              "chosen-connection-untouched"}),
    # (a second field beside a commented-out one and a profile's, and one more beside the commented field)
    "a second field added": (
        _rewritten(lambda u: FIELD in u and not u.startswith(FIELD), _after_the_header),
        {"existing-field-replaced", "field-comment-kept", "field-elsewhere-kept", LITERAL, MULTI_LINE}),
    # catches: a pattern over the file rewrites every line naming the field (an outside hunt)
    "every line naming the field rewritten": (
        _rewritten(lambda u: FIELD in u, lambda u, v: re.sub(rf'({FIELD}\s*=\s*)"[^"\n]*"',
                                                              lambda m: m[1] + _line(v).split("= ", 1)[1].strip(), u)),
        # (its pattern reads a double-quoted value only: hunt T2-2's rows, a value in another TOML string form)
        {"field-elsewhere-kept", LITERAL, MULTI_LINE, TOP_LITERAL}),
    # catches: the field's line written anew, the comment after its value lost (an outside hunt)
    "the field's line written anew": (
        lambda user, project, value: {**(saved := reference_save(user, project, value)), "user": re.sub(
            rf'^({FIELD}\s*=\s*"[^"\n]*")[ \t]*#.*$', r"\1", saved["user"], flags=re.M)},
        {"field-comment-kept"}),
    "appended at the end, no [agent] table": (_rewritten(lambda u: "[agent]" not in u, _appended), {"no-agent-table"}),
    # (an [[accounts]] table after [agent] takes the field too)
    "appended at the end, after the table that follows [agent]": (
        _rewritten(lambda u: "[agent]" in u and FIELD not in u and u.endswith("\n"), _appended),
        {"agent-table-then-another", "chosen-connection-untouched"}),
    # catches: the save also turns the chosen connection's own search on (an outside hunt)
    "the chosen connection's search switched on": (
        lambda user, project, value: {**(saved := reference_save(user, project, value)), "user": saved["user"].replace(
            "web_search = false", "web_search = true")},
        {"chosen-connection-untouched"}),
    "a missing file refused": (_refusing(lambda u, v: u is None), {"missing-file-created"}),
    "one / only": (_refusing(lambda u, v: v.count("/") > 1), {"model-with-slashes"}),
    "the value written without escaping": (
        _rewritten(lambda u: "[agent]\n" in u and FIELD not in u, lambda u, v: _after_header(u, f'{FIELD} = "{v}"\n')),
        {"value-needing-quotes"}),
    "auto refused": (_refusing(lambda u, v: v == "auto"), {"auto-saved"}),
    # catches: the chosen connection and model saved lower-cased (shown in effect that way too)
    "the value folded to lower case": (
        lambda user, project, value: reference_save(user, project, value.lower()), {"value-case-kept"}),
    "the project file ignored": (_project_ignored, {"project-overrides", "project-sets-the-same-value"}),
    "saved into the project file": (_saved_into_project, {"project-overrides", "project-sets-the-same-value"}),
    "any project file taken for an override": (_any_project_overrides, {"project-without-the-field"}),
    "an unreadable file replaced": (_unreadable_replaced, {"unreadable-file-not-lost"}),
    "the field always written into [agent]": (
        _rewritten(lambda u: u.startswith(FIELD), _after_the_header), {"top-level-field-replaced", TOP_LITERAL}),
    "the field glued to a header that ends the file": (
        _rewritten(lambda u: u.endswith("[agent]"), _appended), {"header-without-final-newline"}),
    "an empty value refused": (_refusing(lambda u, v: v == ""), {"empty-saved"}),
    "a malformed value refused with another code": (
        _refusing(lambda u, v: "/" not in v and v not in ("", "auto"), WebErrorCode.PROVIDER_ERROR),
        {"malformed-value"}),
    "[agent] taken for a table header": (
        _rewritten(lambda u: "[agent]" not in u and "agent." in u, lambda u, v: u + "[agent]\n" + _line(v)),
        {"agent-from-dotted-keys"}),
    "lines ended at U+2028 too": (_rewritten(lambda u: "\u2028" in u, _split_at_any_line_end),
                                  {"line-separator-in-a-comment"}),
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


def test_a_saved_file_nested_too_deeply_fails_its_row_rather_than_erroring() -> None:
    # catches: tomllib's RecursionError let out of the check (an error outcome, not the failure it is)
    case = next(c for c in standalone_save.SAVE_CASES if c["user"] is not None)
    deep = {"user": "x = " + "[" * 5000, "effective": "c/m", "overridden_by": None}
    assert standalone_save.save_problems(case, True, None, deep) == [
        "the saved file is not valid TOML (nested too deeply)"
    ]
