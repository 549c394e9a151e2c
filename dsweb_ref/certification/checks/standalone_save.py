"""Seed 003: saving the assigned search model into the user's configuration, and a project file's override.

Enforced: the save sets ``web_search_model`` to the chosen value and keeps the rest of the configuration
(every other key and table, in its order, and every comment, the one after the field's value and a
commented-out field too: "保存仅更新该字段，保留其余配置内容"; the old generic save "may lose the field,
comments or unknown fields"); a missing file or ``[agent]`` table is created; the model part may hold ``/``;
``auto`` is a value that can be saved; the user's file is saved even when a project ``reasonix.toml`` sets
the field, and the answer then shows the project's value as the one in effect, an override by the project
even when that value equals the one saved ("项目 reasonix.toml 覆盖此字段时，界面标明项目实际值"); a file that
cannot be read as TOML is refused or kept whole, never lost.

Left open (accepted either way): formatting (spacing, quoting style, line endings, where in ``[agent]`` the
field goes, top level or ``[agent]`` when the file has no ``[agent]`` table), how automatic is written
(``auto``, ``""`` or no field), whether a value that is not ``CONNECTION/MODEL`` is refused (a refusal is
``WEB_CONFIG_INVALID``: hostile configuration gets a clear error), and whether a project's empty or ``auto``
value counts as an override (both mean automatic).
"""

from __future__ import annotations

import tomllib
from typing import Any

from ..._exceptions import WebErrorCode
from ..cases import Case
from ._base import CALL_TIMEOUT, CheckContext, check, require

__all__ = ["SAVE_CASES", "save_problems"]

SAVE = "standalone-save"
FIELD = "web_search_model"
AUTOMATIC = (None, "", "auto")  # seed 003: missing, empty or "auto" all mean automatic
REFUSABLE = ("malformed-value",)  # rows whose value a save may refuse (WEB_CONFIG_INVALID)


def _case(name: str, catches: str, user: str | None, value: str, *, project: str | None = None,
          effective: str | None = None) -> Case:
    """``effective``: the project's value the answer must show in effect (None: the saved value)."""
    return Case(name, catches, {"user": user, "project": project, "value": value, "effective": effective})


SAVE_CASES = (
    _case("comments-kept", "re-rendering the file from its parsed values (every comment lost)",
          "# my settings\nlanguage = \"th\"  # the interface's\n[agent]\n# the main model\n"
          "model = \"deepseek-v4-pro\"  # fast enough\n",
          "search-conn/deepseek-v4-flash"),
    _case("unknown-keys-kept", "saving only the fields this version knows (unknown keys and tables dropped)",
          "config_version = 9\n[plugins.weather]\nurl = \"https://weather.example.test\"\n\n"
          "[agent]\nfuture_flag = true\nnested = { a = 1, b = [1, 2] }\n",
          "search-conn/deepseek-v4-flash"),
    # From an outside hunt: a save that also edits the chosen connection.
    _case("chosen-connection-untouched", "also editing the chosen connection (its web_search switch turned on)",
          "[agent]\nmodel = \"deepseek-v4-pro\"\n\n[[accounts]]\nname = \"search-conn\"\nprotocol = \"messages\"\n"
          "base_url = \"https://relay.example.test/anthropic\"\nweb_search = false\n", "search-conn/deepseek-v4-flash"),
    _case("existing-field-replaced", "adding a second web_search_model instead of replacing the first",
          "[agent]\nweb_search_model = \"old-conn/old-model\"\nmodel = \"deepseek-v4-pro\"\n",
          "new-conn/deepseek-v4-flash"),
    # From a hunt (T2-2): a line-based save finding the field only when written as a double-quoted basic string
    # passed; with a literal ('...') or multi-line ("""...""") string it added a second field to [agent] (no TOML) or
    # left the top-level one beside a new one. The field is the same whichever TOML string form holds it.
    _case("literal-string-field-replaced", "finding the field only when its value is a double-quoted basic string, "
          "so a single-quoted literal one stays and a second field is added (the file no TOML)",
          "[agent]\nweb_search_model = 'old-conn/old-model'\nmodel = \"deepseek-v4-pro\"\n",
          "new-conn/deepseek-v4-flash"),
    _case("top-level-literal-string-field-replaced", "the same at the top level (the field then given twice)",
          "web_search_model = 'old-conn/old-model'\nlanguage = \"th\"\n\n[agent]\nmodel = \"deepseek-v4-pro\"\n",
          "new-conn/deepseek-v4-flash"),
    _case("multi-line-string-field-replaced", "the same for a multi-line basic string (\"\"\"...\"\"\"): its "
          "first two quotes taken for the value, the rest of the old value left on the line",
          "[agent]\nweb_search_model = \"\"\"old-conn/old-model\"\"\"\nmodel = \"deepseek-v4-pro\"\n",
          "new-conn/deepseek-v4-flash"),
    _case("no-agent-table", "appending the field at the end of the file, inside the last table",
          "[tools]\nenabled = [\"web_search\"]\n", "search-conn/deepseek-v4-flash"),
    # From a hunt (R-I4): a save moving the whole [agent] table to the end of the file passed, the rest compared
    # regardless of order; seed 003's save updates only the field, so every other key and table keeps its place.
    _case("agent-table-then-another", "appending the field at the end of the file, inside the table after [agent], "
          "or moving [agent] to the end, after that table",
          "[agent]\nmodel = \"deepseek-v4-pro\"\n\n[tools]\nenabled = [\"web_search\"]\n",
          "search-conn/deepseek-v4-flash"),
    _case("top-level-field-replaced", "writing the field into [agent] while the one at the top level stays "
          "(the field given twice)",
          "web_search_model = \"old-conn/old-model\"\nlanguage = \"th\"\n\n[agent]\nmodel = \"deepseek-v4-pro\"\n",
          "new-conn/deepseek-v4-flash"),
    _case("header-without-final-newline", "putting the field right after the [agent] header with no line break "
          "when the header ends the file, or dropping that header",
          "language = \"th\"\n[agent.ui]\ntheme = \"dark\"\n[agent]", "search-conn/deepseek-v4-flash"),
    _case("agent-from-dotted-keys", "assuming [agent] is written as a table header (a second [agent] table, or "
          "a crash, when dotted keys define it; or the keys rewritten as an [agent] table after the next key)",
          "agent.model = \"deepseek-v4-pro\"\nlanguage = \"th\"\n", "search-conn/deepseek-v4-flash"),
    _case("line-separator-in-a-comment", "ending lines at Unicode line separators (U+2028 may stand in a comment) "
          "when placing the field after the [agent] header",
          "[agent] # the agent\u2028still the comment\nmodel = \"deepseek-v4-pro\"\n", "search-conn/deepseek-v4-flash"),
    # From an outside hunt: the field rewritten by a pattern over the file, or its line written anew.
    _case("field-elsewhere-kept", "rewriting every web_search_model line (a commented-out one, another table's) "
          "instead of the one field", "[agent]\nweb_search_model = \"old-conn/old-model\"\n"
          "# web_search_model = \"spare-conn/spare-model\"\n\n[profiles.work]\n"
          "web_search_model = \"work-conn/work-model\"\n", "new-conn/deepseek-v4-flash"),
    _case("field-comment-kept", "writing the field's whole line anew, so the comment after its value is lost",
          "[agent]\nweb_search_model = \"old-conn/old-model\"  # chosen for the Thai docs\n",
          "new-conn/deepseek-v4-flash"),
    _case("missing-file-created", "failing, or saving nothing, when the user has no configuration file yet",
          None, "search-conn/deepseek-v4-flash"),
    _case("model-with-slashes", "refusing a model name that holds / (seed 003: it may), or splitting at the last /",
          "[agent]\n", "router/org/deepseek-v4-flash"),
    # An outside hunt's find: every value above is lower case, so a save folding the case passed them all.
    _case("value-case-kept", "the chosen value folded to lower case (the save 'updates only that field', to the "
          "connection and model as chosen)", "[agent]\n", "Search-Conn/DeepSeek-V4-Flash"),
    _case("value-needing-quotes", "writing the value without TOML escaping (another value, or no TOML at all)",
          "[agent]\n", 'my "search" conn/模型\\v4'),
    _case("auto-saved", 'refusing "auto", which seed 003 names as the automatic choice', "[agent]\n", "auto"),
    _case("empty-saved", 'refusing "" (seed 003: an empty string is automatic too), taking only "auto" for it',
          "[agent]\nmodel = \"deepseek-v4-pro\"\n", ""),
    _case("malformed-value", "a crash, or a refusal without WEB_CONFIG_INVALID, for a value that is not "
          "CONNECTION/MODEL (refusing it or saving it as given are both accepted)",
          "[agent]\n", "deepseek-v4-flash"),
    _case("project-overrides", "showing the saved value as in effect though the project file sets the field, "
          "or saving into the project file",
          "[agent]\n", "user-conn/deepseek-v4-flash",
          project="[agent]\nweb_search_model = \"project-conn/deepseek-v4-pro\"\n",
          effective="project-conn/deepseek-v4-pro"),
    # From a hunt (R-I3): a save reporting the project's override only when its value differs from the one saved
    # passed; the project file sets the field, so its value is the one in effect (a later save would not change
    # it), whichever value that is.
    _case("project-sets-the-same-value", "reporting no override when the project file sets the field to the "
          "value just saved (an override reported only when the two values differ)",
          "[agent]\n", "user-conn/deepseek-v4-flash",
          project="[agent]\nweb_search_model = \"user-conn/deepseek-v4-flash\"\n",
          effective="user-conn/deepseek-v4-flash"),
    _case("project-without-the-field", "taking any project file for an override of the field",
          "[agent]\n", "user-conn/deepseek-v4-flash", project="[agent]\nmodel = \"deepseek-v4-pro\"\n"),
    _case("unreadable-file-not-lost", "overwriting a file that is not valid TOML (its content lost)",
          "[agent\nmodel = \"deepseek-v4-pro\"\n# keep me\n", "search-conn/deepseek-v4-flash"),
)


def _field(document: dict[str, Any]) -> tuple[bool, Any]:
    """Whether the field is set once (top level or in ``[agent]``), and its value."""
    agent = document.get("agent")
    places = [document[FIELD]] if FIELD in document else []
    if isinstance(agent, dict) and FIELD in agent:
        places.append(agent[FIELD])
    return len(places) <= 1, places[0] if places else None


def _without_field(document: dict[str, Any]) -> dict[str, Any]:
    rest = {k: v for k, v in document.items() if k != FIELD}
    agent = rest.get("agent")
    if isinstance(agent, dict):
        rest["agent"] = {k: v for k, v in agent.items() if k != FIELD}
        if not rest["agent"]:
            del rest["agent"]
    return rest


def _moved(before: Any, after: Any, path: str = "") -> str | None:
    """Where two equal values (as dicts compare: regardless of order) hold a table's keys in another order, in
    document order (tomllib keeps it), with both orders; None where every table keeps its order."""
    if isinstance(before, dict) and isinstance(after, dict):
        if list(before) != list(after):
            return f"{path or 'the top level'}: {list(before)[:8]!r} before, {list(after)[:8]!r} after"
        found = (_moved(before[key], after[key], f"{path}.{key}" if path else key) for key in before)
        return next((where for where in found if where is not None), None)
    if isinstance(before, list) and isinstance(after, list):
        found = (_moved(one, other, f"{path}[{i}]") for i, (one, other) in enumerate(zip(before, after, strict=True)))
        return next((where for where in found if where is not None), None)
    return None


def _comments(text: str) -> list[str]:
    """The comment of each line that has one: a whole comment line (a commented-out field too), or what
    follows ``#`` after a line's last quote (a ``#`` inside a string is rare in these cases, and the field's
    value holds none), the field's own line included: its comment is not the field's value."""
    found = []
    for line in text.splitlines():
        at = 0 if line.lstrip().startswith("#") else line.find("#", line.rfind('"') + 1 if FIELD in line else 0)
        if at >= 0:
            found.append(line[at:].strip())
    return found


def save_problems(case: Case, ok: bool, error_code: str | None, value: Any) -> list[str]:
    """What is wrong with one answer to ``case`` (empty: nothing)."""
    user: str | None = case["user"]
    try:
        before = tomllib.loads(user or "")
    except tomllib.TOMLDecodeError:
        before = None
    if not ok:
        refusable = before is None or case.name in REFUSABLE
        if refusable and error_code == WebErrorCode.CONFIG_INVALID.value:
            return []  # refused, the file untouched (the protocol answers no file)
        return [f"the save failed ({error_code})"]
    if not isinstance(value, dict) or not isinstance(value.get("user"), str):
        return ["the answer has no user file text (value.user)"]
    text: str = value["user"]
    if before is None:  # a file that is not TOML: whatever is saved, none of its lines may be lost
        lost = [line for line in (user or "").splitlines() if line.strip() and line not in text]
        return [f"lines of the unreadable file lost: {lost[:3]!r}"] if lost else []
    try:
        after = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return [f"the saved file is not valid TOML ({exc})"]
    except RecursionError:  # tomllib recurses per level of nesting
        return ["the saved file is not valid TOML (nested too deeply)"]
    problems = []
    once, saved = _field(after)
    if not once:
        problems.append("the field is set twice (top level and [agent])")
    if case["value"] in AUTOMATIC and saved in AUTOMATIC:
        pass
    elif saved != case["value"]:
        problems.append(f"the saved file gives {FIELD} = {saved!r}, expected {case['value']!r}")
    rest_after, rest_before = _without_field(after), _without_field(before)
    if rest_after != rest_before:
        problems.append("the rest of the configuration changed (a key or table lost, moved or altered)")
    elif (where := _moved(rest_before, rest_after)) is not None:  # only the field's own place is the save's
        problems.append(f"the rest of the configuration moved (keys or tables in another order at {where})")
    lost = [c for c in _comments(user or "") if c not in text]
    if lost:
        problems.append(f"comments lost: {lost[:3]!r}")
    problems += _effect_problems(case, value)
    return problems


def _effect_problems(case: Case, value: dict[str, Any]) -> list[str]:
    shown, by = value.get("effective"), value.get("overridden_by")
    if case["effective"] is not None:
        if by != "project" or shown != case["effective"]:
            return [f"the project's value is not shown in effect: effective={shown!r}, overridden_by={by!r}"]
        return []
    if by is not None:
        return [f"an override by {by!r} is reported, but no file overrides the saved value"]
    if case["value"] in AUTOMATIC and shown in AUTOMATIC:
        return []
    return [] if shown == case["value"] else [f"effective={shown!r}, expected the saved {case['value']!r}"]


@check(
    "standalone.save.keeps_rest",
    "saving the search model updates only that field; a project file's value is shown in effect",
    seed="003",
    requires=(SAVE,),
    provider="messages",
    rule="Seed 003: the assigned search model is saved as [agent] web_search_model = \"connection/model\" "
    "(the model name may contain /; missing, empty or auto is automatic); this version's save updates only "
    "that field ('新版此设置的保存仅更新该字段'), whichever TOML string form (basic, literal, multi-line) "
    "holds its old value, and keeps the rest of the configuration, every other key and table in its place (the "
    "old generic save could lose the field, comments or unknown fields); Desktop saves the user's global settings, "
    "and when a project reasonix.toml sets the field, the project's value is shown as the one in effect, as the "
    "project's (also when it equals the value saved). A file that is not TOML is refused or kept whole.",
    cases=SAVE_CASES,
    profiles=("seed-003-settings-save",),
)
async def keeps_rest(ctx: CheckContext) -> None:
    wrong: list[str] = []
    for case in SAVE_CASES:
        params = {"user": case["user"], "project": case["project"], "value": case["value"]}
        outcome = await ctx.target.start_call("standalone_save", params).outcome(CALL_TIMEOUT)
        found = save_problems(case, outcome.ok, outcome.error_code, outcome.value)
        if found:
            wrong.append(f"{case.name}: " + "; ".join(found))
    require(not wrong, f"{len(wrong)} save row(s) wrong: " + "; ".join(wrong)[:900], rows=wrong)
