"""Hunt R, part I: wrong readings of seed 003's search model choice that dsweb certify passed, each now failing the
rows added for it: the model an assignment names lower-cased on the search route (I1); web_search's definition
telling the official base from a relay (I2); a save reporting the project's override only when the project's value
differs from the one saved (I3); a save moving the whole [agent] table to the end of the file, which the check let
pass by comparing the rest of the file regardless of order (I4); an assigned model escaping offline mode, the tool
allow-list, connection-access limits or its connection's own state (I5). Each wrong reading is made in the
reference as the hunt made it and fails exactly its rows (I4: the rows whose [agent] has a table after it); the
reference, and the readings seed 003 leaves open, pass them."""

from __future__ import annotations

import tomllib
from typing import Any
from urllib.parse import urlsplit

import pytest
import tomlkit
from tomlkit.container import OutOfOrderTableProxy

from dsweb_ref import standalone_accounts, standalone_config
from dsweb_ref.certification import targets
from dsweb_ref.certification.cases import Case
from dsweb_ref.certification.checks import standalone, standalone_save, standalone_tools

from ._readings import failing_rows, passes_rows, patch_reading

# -- I1: an assigned model ID lower-cased -----------------------------------------------------------

RESOLVE, RESOLUTIONS = "standalone.resolve.table", "RESOLUTION_CASES"
VERBATIM = "assigned-model-id-is-kept-verbatim"


def test_the_reference_passes_the_assigned_verbatim_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone, RESOLUTIONS, RESOLVE, (VERBATIM,), monkeypatch)


@pytest.mark.parametrize(
    ("right", "wrong"),
    [
        # catches: the assigned model lower-cased when the route is built (the saved account model kept)
        ("route=_route(account, model)", "route=_route(account, model.lower())"),
        # catches: the whole reference lower-cased (and stripped) before it is split into connection and model
        ('name, slash, model = reference.partition("/")',
         'name, slash, model = reference.strip().lower().partition("/")'),
    ],
    ids=["model", "reference"],
)
def test_an_assigned_model_lower_cased_fails_exactly_the_verbatim_row(
    right: str, wrong: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_reading(standalone_accounts, "_assigned", right, wrong, monkeypatch)
    assert failing_rows(standalone, RESOLUTIONS, RESOLVE, monkeypatch) == {VERBATIM}


# -- I3: an override reported only when the project's value differs --------------------------------

SAVE, SAVES = "standalone.save.keeps_rest", "SAVE_CASES"
FIELD = "web_search_model"
SAME_VALUE = "project-sets-the-same-value"


def test_the_reference_passes_the_same_value_row(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone_save, SAVES, SAVE, (SAME_VALUE,), monkeypatch)


# catches: overridden_by reported only when the project's value differs from the one saved (None when they agree)
def test_an_override_only_when_the_values_differ_fails_exactly_the_same_value_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    patch_reading(standalone_config, "save_search_model", 'if origin != "project":',
                  'if origin != "project" or effective == value:', monkeypatch, targets)
    assert failing_rows(standalone_save, SAVES, SAVE, monkeypatch) == {SAME_VALUE}


# -- I4: the [agent] table moved to the end of the file ---------------------------------------------

RIGHT_SAVE = targets.reference_save
# the rows whose [agent] holds more than the field and has another table after it (or is written as dotted keys
# before another key), the ones a save moving [agent] to the end fails (an [agent] holding only the field may go
# anywhere: where the field goes is the save's)
AGENT_FOLLOWED = {"agent-table-then-another", "chosen-connection-untouched", "agent-from-dotted-keys"}


def _agent_moved_to_the_end(user: str | None, value: str) -> str | None:
    """The hunt's save: tomlkit pops [agent] (a top-level field dropped), sets the field and appends it last;
    None (the right save, as the hunt's trial kept) where tomlkit cannot (an [agent] split around [agent.ui])."""
    document = tomlkit.parse(user or "")
    if isinstance(document.get("agent"), OutOfOrderTableProxy):
        return None
    if FIELD in document:
        del document[FIELD]
    if "agent" in document:
        agent = document.pop("agent")
        if FIELD in agent:
            agent[FIELD] = value
        else:
            agent.add(FIELD, value)
        document.append("agent", agent)
    else:
        table = tomlkit.table()
        table[FIELD] = value
        document.append("agent", table)
    return tomlkit.dumps(document)


def _field_appended_in_agent(user: str | None, value: str) -> str | None:
    """A save setting the field through tomlkit alone: replaced in place, else the last key of [agent] (a dotted
    agent.* too), else a new [agent] table appended at the end of the file."""
    document = tomlkit.parse(user or "")
    if FIELD in document:
        document[FIELD] = value
    elif "agent" in document:
        document["agent"][FIELD] = value  # type: ignore[index]
    else:
        table = tomlkit.table()
        table[FIELD] = value
        document.append("agent", table)
    return tomlkit.dumps(document)


def _saving(text: Any) -> Any:
    def save(user: str | None, project: str | None, value: str) -> dict[str, Any]:
        saved = RIGHT_SAVE(user, project, value)
        changed = None if user is None or not _parses(user) else text(user, value)
        return saved if changed is None else {**saved, "user": changed}

    return save


def _parses(text: str) -> bool:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    return True


# catches: [agent] popped and appended at the end of the file, after the tables that followed it (tomlkit)
def test_agent_moved_to_the_end_fails_exactly_the_rows_with_a_table_after_agent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(targets, "reference_save", _saving(_agent_moved_to_the_end))
    assert failing_rows(standalone_save, SAVES, SAVE, monkeypatch) == AGENT_FOLLOWED


def test_the_reference_passes_the_rows_with_a_table_after_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone_save, SAVES, SAVE, tuple(AGENT_FOLLOWED), monkeypatch)


# open: where the field goes in [agent] (its last key here), and a missing [agent] created at the end of the file
def test_the_field_appended_in_agent_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(targets, "reference_save", _saving(_field_appended_in_agent))
    assert failing_rows(standalone_save, SAVES, SAVE, monkeypatch) == set()


# catches: the keys inside a table put in another order (sorted), the tables themselves in place
def test_keys_reordered_inside_a_table_are_a_move() -> None:
    user = '[agent]\nmodel = "deepseek-v4-pro"\nfuture_flag = true\n\n[tools]\nenabled = ["web_search"]\n'
    case = Case("reordered", "keys sorted", {"user": user, "project": None, "value": "c/m", "effective": None})
    right = RIGHT_SAVE(user, None, "c/m")
    assert standalone_save.save_problems(case, True, None, right) == []
    text = '[agent]\nfuture_flag = true\nmodel = "deepseek-v4-pro"\nweb_search_model = "c/m"\n\n'
    text += user.split("\n\n")[1]
    assert standalone_save.save_problems(case, True, None, {**right, "user": text}) == [
        "the rest of the configuration moved (keys or tables in another order at agent: ['model', 'future_flag'] "
        "before, ['future_flag', 'model'] after)"]


# -- I2: a definition telling the official base from a relay ----------------------------------------

TOOLS, TOOL_ROWS = "standalone.tools.listed", "TOOLS_CASES"
OFFICIAL = "official-or-third-party-search"
RIGHT_MODEL_TOOLS = targets.main_model_tools


def test_the_official_row_switches_only_between_the_official_base_and_a_relay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (case,) = (c for c in standalone_tools.TOOLS_CASES if c.name == OFFICIAL)
    environ = dict.fromkeys(standalone_tools.ENV_SET, "set")
    one, other = (standalone_accounts.resolve(d, environ).route for d in case["documents"])
    assert one is not None and other is not None
    assert (one.protocol, one.model) == (other.protocol, other.model) and one.url != other.url
    assert "api.deepseek.com" in one.url and "api.deepseek.com" not in other.url
    passes_rows(standalone_tools, TOOL_ROWS, TOOLS, (OFFICIAL,), monkeypatch)


def _official_or_not(resolution: standalone_accounts.Resolution) -> str:
    route = resolution.route
    return "" if route is None or "api.deepseek.com" in route.url else "This backend may return no sources."


def _host(resolution: standalone_accounts.Resolution) -> str:
    route = resolution.route
    return "" if route is None else f"Searches via {urlsplit(route.url).hostname}."


@pytest.mark.parametrize(
    "extra",
    [
        # catches: a caveat added to web_search's description when the search goes to a relay, not the official base
        _official_or_not,
        # catches: the search's host named in web_search's description
        _host,
    ],
    ids=["relay-caveat", "host"],
)
def test_a_definition_telling_the_official_base_from_a_relay_fails_exactly_the_official_row(
    extra: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def bent(resolution: standalone_accounts.Resolution, others: Any = (), **assembly: Any) -> list[dict[str, Any]]:
        tools = RIGHT_MODEL_TOOLS(resolution, others, **assembly)
        for tool in tools:
            if tool["function"]["name"] == "web_search" and (added := extra(resolution)):
                tool["function"]["description"] += f" {added}"
        return tools

    monkeypatch.setattr(targets, "main_model_tools", bent)
    assert failing_rows(standalone_tools, TOOL_ROWS, TOOLS, monkeypatch) == {OFFICIAL}


# -- I5: an assigned model escaping offline mode, the allow-list and an unusable connection ----------

ASSIGNED_OFF = ("offline-with-an-assigned-model-lists-none", "allow-list-with-an-assigned-model-lists-none",
                "assigned-connection-search-off-lists-none", "assigned-connection-left-out-by-access-lists-none",
                "assigned-connection-without-credentials-lists-none")
BEFORE_LIMITS = '''    if offline:
        return Resolution("none", reason="offline")
    if allowed is not None and "web_search" not in allowed:
        return Resolution("none", reason="not_allowed")
    if reference is not None and reference.strip() not in ("", "auto"):
        return _assigned(reference, accounts, environ, access)
'''
AFTER_LIMITS = '''    if reference is not None and reference.strip() not in ("", "auto"):
        return _assigned(reference, accounts, environ, access)
    if offline:
        return Resolution("none", reason="offline")
    if allowed is not None and "web_search" not in allowed:
        return Resolution("none", reason="not_allowed")
'''


def test_the_reference_lists_no_search_for_the_unusable_assignments(monkeypatch: pytest.MonkeyPatch) -> None:
    passes_rows(standalone_tools, TOOL_ROWS, TOOLS, ASSIGNED_OFF, monkeypatch)


@pytest.mark.parametrize(
    ("function", "right", "wrong", "rows"),
    [
        # catches: an assignment resolved before offline mode and the allow-list are looked at
        ("resolve", BEFORE_LIMITS, AFTER_LIMITS, set(ASSIGNED_OFF[:2])),
        # catches: the assigned connection's own search switch read as whether it could search
        ("_assigned", "if not _search_on(account):", "if not _capable(account):", {ASSIGNED_OFF[2]}),
        # catches: connection-access limits applied to the automatic choice only
        ("_assigned", "if (why := _excluded(account, access)) is not None:",
         "if (why := _excluded(account, None)) is not None:", {ASSIGNED_OFF[3]}),
        # catches: an assigned connection used without checking its credentials
        ("_assigned", "if not _configured(account, environ):", "if False:", {ASSIGNED_OFF[4]}),
    ],
    ids=["before-the-limits", "search-off", "access", "credentials"],
)
def test_an_assigned_model_escaping_a_limit_fails_exactly_its_rows(
    function: str, right: str, wrong: str, rows: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_reading(standalone_accounts, function, right, wrong, monkeypatch, targets)
    assert failing_rows(standalone_tools, TOOL_ROWS, TOOLS, monkeypatch) == rows
