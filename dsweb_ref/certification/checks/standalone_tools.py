"""Seed 003: the main model's tool list, where the standalone search is one ordinary function tool.

Enforced (capability ``standalone-tools``: ``standalone_tools`` answers the Chat Completions ``tools`` array a
runtime assembled from a configuration gives the main model): ``web_search`` is exposed as an ordinary function
tool ("Reasonix 将 web_search 暴露为普通函数工具"; "把原生工具声明换成普通函数 schema"), so its entry is
``{"type": "function", "function": {"name", "description", "parameters"}}`` and its parameters take the query
("搜索请求只携带查询"); switching only between two valid search models leaves the tool definitions the main
model sees unchanged ("仅在两个有效搜索模型之间切换时，主模型可见的工具定义保持不变"), whichever connection,
protocol or model the search uses, whether it goes to the official base or a relay, and whether it was
chosen automatically; switching the search off changes the list ("搜索工具启停会改变工具列表"): offline
mode, an allow-list without ``web_search``, an explicit off and an unusable assigned model register no
search tool ("离线模式不注册搜索工具"; "新运行时不注册搜索工具"), offline mode, the allow-list and
connection-access limits applying to an assigned model too ("离线模式、工具白名单以及连接访问限制仍然
生效"), and an assigned connection that switched its search off or lost its credentials being unusable
("指定连接被删除、关闭搜索或失去凭据时 ... 新运行时不注册搜索工具").

Left open (accepted either way): the description's wording, the parameter schema beyond a string ``query``
(limits, ``required``, ``additionalProperties``), the other tools listed and their order, and what else of the
list changes when the search is switched off.
"""

from __future__ import annotations

from typing import Any

from ..cases import Case
from ._base import CALL_TIMEOUT, CheckContext, check, require

__all__ = ["ENV_SET", "TOOLS_CASES", "tools_problems", "web_search_entries"]

ST = "standalone-tools"
WS = "web_search"
ENV_SET = ("DS_KEY", "RELAY_KEY")  # the key variables set (the documents' accounts name these)


def _acct(name: str, protocol: str = "chat", base_url: str = "https://api.deepseek.com", *, key: str = "DS_KEY",
          model: str = "deepseek-v4-flash", **extra: Any) -> dict[str, Any]:
    return {"name": name, "protocol": protocol, "base_url": base_url, "model": model, "api_key_env": key, **extra}


# Two official accounts (search via the official Messages base) and two opted-in relays with one model name,
# one on Messages and one on Responses: every switch a row makes is between valid search models.
ACCOUNTS = [
    _acct("main"),
    _acct("second", model="deepseek-v4-pro"),
    _acct("relay-m", "messages", "https://relay.example.test/anthropic", key="RELAY_KEY", model="gpt-x",
          web_search=True),
    _acct("relay-r", "responses", "https://relay.example.test/v1", key="RELAY_KEY", model="gpt-x", web_search=True),
]


SECOND = "second/deepseek-v4-pro"  # an assignment valid in ACCOUNTS


def _with(name: str, **changed: Any) -> list[dict[str, Any]]:
    """ACCOUNTS with the account ``name`` changed."""
    return [{**account, **changed} if account["name"] == name else account for account in ACCOUNTS]


def _doc(**fields: Any) -> dict[str, Any]:
    return {"current": "main", "accounts": ACCOUNTS, **fields}


def _same(name: str, catches: str, first: dict[str, Any], second: dict[str, Any]) -> Case:
    return Case(name, catches, {"kind": "same", "documents": (first, second)})


def _off(name: str, catches: str, document: dict[str, Any]) -> Case:
    return Case(name, catches, {"kind": "off", "documents": (document,)})


TOOLS_CASES = (
    Case("web-search-is-an-ordinary-function-tool",
         "keeping the native search declaration ({type: web_search_20250305} or Responses' {type: web_search}), "
         "declaring web_search in another API's shape ({name, description, input_schema}, or parameters under "
         "another key), or a schema without its string query",
         {"kind": "shape", "documents": (_doc(),)}),
    _same("another-model-on-the-same-connection",
          "naming the search model in web_search's definition, so switching between two models of one connection "
          "changes the main model's tools",
          _doc(web_search_model="second/deepseek-v4-pro"), _doc(web_search_model="second/deepseek-v4-flash")),
    _same("another-protocol-with-the-same-model",
          "a definition that depends on the search's protocol or connection (a Responses search declared or "
          "described otherwise than a Messages one)",
          _doc(web_search_model="relay-m/gpt-x"), _doc(web_search_model="relay-r/gpt-x")),
    # From a hunt (R-I2): no row switched between the official base and a relay, so a definition telling them
    # apart (or naming the search's host) passed; both are valid search models, so the definition stays the same.
    _same("official-or-third-party-search",
          "a definition that depends on whether the search goes to the official base or a relay (or names its host)",
          _doc(web_search_model="main/deepseek-v4-flash"), _doc(web_search_model="relay-m/deepseek-v4-flash")),
    _same("automatic-or-assigned-same-model",
          "a definition that tells whether the search model was chosen automatically or assigned by hand",
          _doc(), _doc(web_search_model="main/deepseek-v4-flash")),
    _off("offline-lists-no-web-search", "listing web_search in offline mode", _doc(offline=True)),
    _off("allow-list-without-web-search-lists-none", "listing web_search although an explicit tool allow-list "
         "leaves it out", _doc(tools_enabled=["web_fetch"])),
    _off("explicit-off-lists-no-web-search", "listing web_search although the current search-capable account "
         "switched it off", _doc(accounts=[_acct("main", web_search=False), *ACCOUNTS[1:]])),
    _off("unusable-assignment-lists-no-web-search", "listing web_search for an assigned model that cannot be used "
         "(its connection removed), or falling back to another account", _doc(web_search_model="gone/model")),
    # From a hunt (R-I5): every off row above chose automatically (or named a removed connection), so a runtime
    # taking an assigned model before offline mode, the allow-list or the connection's own state passed; seed 003
    # keeps those limits for an assignment, and an assigned connection that cannot search registers no tool.
    _off("offline-with-an-assigned-model-lists-none", "listing web_search in offline mode because a search model "
         "was assigned (the assignment taken before offline mode)",
         _doc(offline=True, web_search_model=SECOND)),
    _off("allow-list-with-an-assigned-model-lists-none", "listing web_search for an assigned model although an "
         "explicit tool allow-list leaves it out", _doc(tools_enabled=["web_fetch"], web_search_model=SECOND)),
    _off("assigned-connection-search-off-lists-none", "listing web_search for an assigned connection that turned "
         "its search off (the switch read as whether it could search)",
         _doc(accounts=_with("relay-m", web_search=False), web_search_model="relay-m/gpt-x")),
    _off("assigned-connection-left-out-by-access-lists-none", "listing web_search for an assigned connection the "
         "connection-access list leaves out", _doc(connection_access=["main"], web_search_model=SECOND)),
    _off("assigned-connection-without-credentials-lists-none", "listing web_search for an assigned connection "
         "whose key variable is unset (its credentials lost)",
         _doc(accounts=_with("relay-m", api_key_env="LOST_KEY"), web_search_model="relay-m/gpt-x")),
)


def web_search_entries(tools: list[Any]) -> list[Any]:
    """The entries that declare web_search, in whatever shape: a function tool, a native declaration
    (``type`` web_search...), or a tool with a top-level name."""
    found = []
    for entry in tools:
        if not isinstance(entry, dict):
            continue
        function = entry.get("function")
        # A target's names may be anything JSON holds (a list is unhashable): compared, never put in a set.
        names = [entry.get("name"), function.get("name") if isinstance(function, dict) else None]
        kind = entry.get("type")
        if WS in names or (isinstance(kind, str) and kind.startswith(WS)):
            found.append(entry)
    return found


def _shape_problem(entry: Any) -> str | None:
    """Why ``entry`` is no ordinary Chat Completions function tool taking a string query (None: it is)."""
    function = entry.get("function") if isinstance(entry, dict) else None
    if not isinstance(entry, dict) or entry.get("type") != "function" or not isinstance(function, dict):
        return f"web_search is not declared as {{type: function, function: {{...}}}}: {str(entry)[:200]}"
    missing = [k for k, kind in (("name", str), ("description", str), ("parameters", dict))
               if not isinstance(function.get(k), kind)]
    if missing:
        return f"web_search's function lacks {', '.join(missing)} (keys: {sorted(function)})"
    parameters = function["parameters"]
    properties = parameters.get("properties")
    query = properties.get("query") if isinstance(properties, dict) else None
    kind = query.get("type") if isinstance(query, dict) else None
    if parameters.get("type") != "object" or not (kind == "string" or (isinstance(kind, list) and "string" in kind)):
        return f"web_search's parameters are not an object schema with a string query: {str(parameters)[:200]}"
    return None


def tools_problems(case: Case, answers: list[tuple[bool, str, Any]]) -> list[str]:
    """What is wrong with the answers to ``case``'s documents: (ok, brief, value) each."""
    lists: list[list[Any]] = []
    for ok, brief, value in answers:
        tools = value.get("tools") if ok and isinstance(value, dict) else None
        if not ok:
            return [f"expected the tools array, got {brief}"]
        if not isinstance(tools, list):
            return [f"value.tools is not an array: {str(value)[:200]}"]
        lists.append(tools)
    searches = [web_search_entries(tools) for tools in lists]
    if case["kind"] == "off":
        return [f"web_search is listed: {str(searches[0][0])[:200]}"] if searches[0] else []
    if any(len(found) != 1 for found in searches):
        return [f"expected web_search listed once for a valid search model, found {[len(f) for f in searches]}"]
    if case["kind"] == "shape":
        problem = _shape_problem(searches[0][0])
        return [problem] if problem else []
    first, second = lists
    if first != second:
        where, one, other = _difference(first, second, "tools")
        return [f"the tools differ at {where}: {one!r:.240} against {other!r:.240}"]
    return []


def _difference(one: Any, other: Any, path: str) -> tuple[str, Any, Any]:
    """Where two unequal JSON values first differ, and what each holds there."""
    if isinstance(one, dict) and isinstance(other, dict) and one.keys() == other.keys():
        key = next(k for k in one if one[k] != other[k])
        return _difference(one[key], other[key], f"{path}.{key}")
    if isinstance(one, list) and isinstance(other, list) and len(one) == len(other):
        index = next(i for i, (a, b) in enumerate(zip(one, other, strict=True)) if a != b)
        return _difference(one[index], other[index], f"{path}[{index}]")
    if isinstance(one, str) and isinstance(other, str):  # from a little before where the texts part
        parted = next((i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b), None)
        start = max(0, (min(len(one), len(other)) if parted is None else parted) - 20)
        return f"{path} (from character {start})", one[start:], other[start:]
    return path, one, other


@check(
    "standalone.tools.listed",
    "web_search is one ordinary function tool, the same for every valid search model, and unlisted when off",
    seed="003",
    requires=(ST,),
    provider="messages",
    rule="Seed 003: web_search is exposed as an ordinary function tool: the native search tool declaration is "
    "replaced by an ordinary function schema, so the main model's Chat Completions tools array lists it as "
    "{type: function, function: {name, description, parameters}} with the query as its argument (the search "
    "request carries only the query). Switching only between two valid search models leaves the tool "
    "definitions the main model sees unchanged (another model, connection or protocol, the official base or a "
    "relay, chosen automatically or by hand); switching the search tool on or off changes the list: offline mode, "
    "an explicit allow-list without web_search, an explicit off on the current search-capable account and an "
    "unusable assigned model register no search tool; offline mode, the allow-list and connection-access limits "
    "still apply to an assigned model, and an assigned connection that switched search off or lost its credentials "
    "is unusable. The description's wording, the schema beyond a string query and the other tools are the "
    "implementation's.",
    cases=TOOLS_CASES,
    profiles=("seed-003-tool-list",),
)
async def tools_listed(ctx: CheckContext) -> None:
    wrong: list[str] = []
    for case in TOOLS_CASES:
        answers = []
        for document in case["documents"]:
            params = {"document": document, "environ_set": list(ENV_SET)}
            outcome = await ctx.target.start_call("standalone_tools", params).outcome(CALL_TIMEOUT)
            answers.append((outcome.ok, outcome.brief(), outcome.value))
        found = tools_problems(case, answers)
        if found:
            wrong.append(f"{case.name}: " + "; ".join(found))
    require(not wrong, "; ".join(wrong)[:1500], rows=wrong)
