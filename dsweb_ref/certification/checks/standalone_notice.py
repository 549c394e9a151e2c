"""Seed 003: an unusable assigned search model is told to the user once, by each runtime assembled for it.

Enforced (capabilities ``standalone-tools`` and ``standalone-notice``: ``standalone_tools``'s ``value`` carries
the ``notices`` saying web_search is unavailable that the runtime's assembly raised, one string each, before any
user interface merges repeats): when the assigned connection is deleted, has its search switched off or loses its
credentials, the new runtime registers no search tool and notifies once
("指定连接被删除、关闭搜索或失去凭据时……新运行时不注册搜索工具并通知一次"), so the assembly lists no web_search and
raises exactly one non-blank notice; a valid or automatic selection is no such case and raises none. Each
``standalone_tools`` call is a runtime assembled anew ("新运行时" is the subject of both), so it tells again.

Left open (accepted either way): the notice's wording (the reason and the kept reference are the settings' to
show: ``standalone.resolve.table`` judges the reason), other messages an assembly gives (they are no such
notice), notices for cases the sentence does not name (offline mode, an allow-list, the current account's
``web_search = false`` under automatic selection, a malformed reference, a disabled connection, one outside
``connection_access``, or a model the connection no longer lists), and how a user interface shows repeats.
"""

from __future__ import annotations

from typing import Any

from ..cases import Case
from ._base import CALL_TIMEOUT, CheckContext, check, require
from .standalone_tools import ACCOUNTS, ENV_SET, _acct, _doc, web_search_entries

__all__ = ["NOTICE_CASES", "notice_problems"]

ST, SN = "standalone-tools", "standalone-notice"
ONLY_DS_KEY = ["DS_KEY"]  # the relays' key variable unset: their credentials are lost
SEARCH_OFF = [*ACCOUNTS[:2], _acct("relay-m", "messages", "https://relay.example.test/anthropic", key="RELAY_KEY",
                                   model="gpt-x", web_search=False), ACCOUNTS[3]]
GONE = _doc(web_search_model="gone/deepseek-v4-flash")


def _case(name: str, catches: str, document: dict[str, Any], told: int, *, builds: int = 1,
          environ_set: list[str] | None = None) -> Case:
    return Case(name, catches, {"document": document, "environ_set": list(environ_set or ENV_SET), "told": told,
                                "builds": builds})


NOTICE_CASES = (
    _case("connection-deleted-tells-once",
          "an unusable model left out silently (no notice), or told twice in one assembly (by the selection and "
          "again by the tool's registration)", GONE, 1),
    _case("search-switched-off-tells-once",
          "a notice only for a deleted connection, not for one whose search was switched off",
          _doc(accounts=SEARCH_OFF, web_search_model="relay-m/gpt-x"), 1),
    _case("credentials-lost-tells-once",
          "a notice only for what the configuration itself says, not for a connection whose key is not set",
          _doc(web_search_model="relay-m/gpt-x"), 1, environ_set=ONLY_DS_KEY),
    _case("valid-assignment-tells-nothing",
          "a notice for every model assigned by hand, or one saying the selection worked",
          _doc(web_search_model="second/deepseek-v4-pro"), 0),
    _case("automatic-selection-tells-nothing", "a notice when the search model is chosen automatically", _doc(), 0),
    _case("each-new-runtime-tells-again",
          "told once per process (remembered across runtimes), so a runtime assembled again for the same unusable "
          "model says nothing", GONE, 1, builds=2),
)


def notice_problems(case: Case, answers: list[tuple[bool, str, Any]]) -> list[str]:
    """What is wrong with the answers to ``case``'s assemblies: (ok, brief, value) each."""
    wrong = []
    for build, (ok, brief, value) in enumerate(answers, 1):
        notices = value.get("notices") if ok and isinstance(value, dict) else None
        where = f"assembly {build}: " if case["builds"] > 1 else ""
        if not ok:
            return [f"{where}expected the tools and notices, got {brief}"]
        if not isinstance(notices, list) or not all(isinstance(n, str) for n in notices):
            return [f"{where}value.notices is not an array of strings: {str(value)[:200]}"]
        tools = value.get("tools")
        if case["told"] and (not isinstance(tools, list) or web_search_entries(tools)):
            wrong.append(f"{where}web_search is listed (or no tools array) beside the notice: {str(tools)[:200]}")
        told = [n for n in notices if n.strip()]
        if len(told) != case["told"] or len(notices) != len(told):
            shown = "; ".join(repr(n[:120]) for n in notices) or "none"
            wrong.append(f"{where}expected {case['told']} notice(s), got {len(notices)} ({shown})")
    return wrong


@check(
    "standalone.notice.once",
    "an unusable assigned search model is told once by each runtime assembled for it, a valid one never",
    seed="003",
    requires=(ST, SN),
    provider="messages",
    rule="Seed 003: when the assigned connection is deleted, its search is switched off or it loses its "
    "credentials, the reference is kept and the reason shown; the new runtime registers no search tool and "
    "notifies once, ordinary chat goes on and no other account is used. So a runtime assembled for such a "
    "configuration lists no web_search and raises exactly one non-blank notice that web_search is unavailable, "
    "a runtime assembled for a valid or automatic selection raises none, and each runtime assembled anew raises it "
    "again (before any user interface merges repeats). The wording, other messages, and notices for cases the "
    "sentence does not name (offline mode, an allow-list, the current account's web_search = false, a malformed "
    "reference, a disabled connection, one outside connection_access, a model no longer listed) are the "
    "implementation's.",
    cases=NOTICE_CASES,
    profiles=("seed-003-notice",),
)
async def notice_once(ctx: CheckContext) -> None:
    wrong: list[str] = []
    for case in NOTICE_CASES:
        answers = []
        for _ in range(case["builds"]):
            params = {"document": case["document"], "environ_set": case["environ_set"]}
            outcome = await ctx.target.start_call("standalone_tools", params).outcome(CALL_TIMEOUT)
            answers.append((outcome.ok, outcome.brief(), outcome.value))
        found = notice_problems(case, answers)
        if found:
            wrong.append(f"{case.name}: " + "; ".join(found))
    require(not wrong, "; ".join(wrong)[:1500], rows=wrong)
