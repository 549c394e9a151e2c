"""Seed 003: broker/extension models bring no search credential, connection-access limits still
apply, and an unusable named search connection is notified once per runtime built."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsweb_ref._exceptions import WebError
from dsweb_ref.cli import main
from dsweb_ref.runtime import standalone_search_tool
from dsweb_ref.standalone_accounts import resolve

ENV = {"DS_KEY": "k1", "RELAY_KEY": "k2"}


def acct(name: str, *, source: str | None = None, key: str = "DS_KEY", **extra: Any) -> dict[str, Any]:
    account = {"name": name, "protocol": "chat", "base_url": "https://api.deepseek.com", "model": "deepseek-v4-flash",
               "api_key_env": key, **extra}
    if source is not None:
        account["source"] = source
    return account


# (name, document, expected status, route account or reason, expected skipped)
ROWS: list[tuple[str, dict[str, Any], str, str | None, list[tuple[str, str]]]] = [
    ("broker-current-falls-back-to-a-local-account",
     {"current": "bk", "accounts": [acct("bk", source="broker"), acct("main")]},
     "selected", "main", [("bk", "not_local")]),
    ("extension-current-falls-back-to-a-local-account",
     {"current": "ext", "accounts": [acct("ext", source="extension"), acct("main")]},
     "selected", "main", [("ext", "not_local")]),
    ("broker-only-no-local-account-registers-nothing",
     {"current": "bk", "accounts": [acct("bk", source="broker")]}, "none", "no_search_account", [("bk", "not_local")]),
    ("broker-with-explicit-off-does-not-block-fallback",
     {"current": "bk", "accounts": [acct("bk", source="broker", web_search=False), acct("main")]},
     "selected", "main", [("bk", "not_local")]),
    ("assigned-broker-model-is-invalid",
     {"web_search_model": "bk/m", "accounts": [acct("bk", source="broker"), acct("main")]},
     "invalid", "not_local", [("bk", "not_local")]),
    ("local-source-is-the-default",
     {"current": "main", "accounts": [acct("main", source="local")]}, "selected", "main", []),
    ("access-list-removes-the-current-account",
     {"current": "main", "connection_access": ["second"], "accounts": [acct("main"), acct("second")]},
     "selected", "second", [("main", "access_denied")]),
    ("access-list-removing-every-account-registers-nothing",
     {"current": "main", "connection_access": [], "accounts": [acct("main")]},
     "none", "no_search_account", [("main", "access_denied")]),
    ("assigned-connection-outside-the-access-list-is-invalid",
     {"web_search_model": "second/m", "connection_access": ["main"], "accounts": [acct("main"), acct("second")]},
     "invalid", "access_denied", [("second", "access_denied")]),
    ("assigned-connection-inside-the-access-list-is-used",
     {"web_search_model": "second/m", "connection_access": ["second"], "accounts": [acct("main"), acct("second")]},
     "selected", "second", []),
    ("agent-table-spelling-is-read",
     {"agent": {"web_search_model": "second/m"}, "accounts": [acct("main"), acct("second")]},
     "selected", "second", []),
]


@pytest.mark.parametrize(("document", "status", "what", "skipped"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_account_sources_and_access_table(
    document: dict[str, Any], status: str, what: str, skipped: list[tuple[str, str]]
) -> None:
    result = resolve(document, ENV)
    assert result.status == status
    if status == "selected":
        assert result.route is not None and result.route.account == what
    else:
        assert result.reason == what
    assert [list(s) for s in result.skipped] == [list(s) for s in skipped]
    assert result.to_json()["skipped"] == [{"connection": c, "reason": r} for c, r in skipped]


@pytest.mark.parametrize(
    ("document", "message"),
    [({"accounts": [acct("a", source="cloud")]}, "source"),
     ({"connection_access": "a", "accounts": []}, "connection_access"),
     ({"web_search_model": "a/b", "agent": {"web_search_model": "a/b"}, "accounts": []}, "both"),
     ({"agent": "x", "accounts": []}, "agent")],
    ids=["unknown-source", "access-not-a-list", "model-given-twice", "agent-not-a-table"],
)
def test_malformed_new_fields_are_config_errors(document: dict[str, Any], message: str) -> None:
    with pytest.raises(WebError, match=message) as raised:
        resolve(document, ENV)
    assert raised.value.code == "WEB_CONFIG_INVALID"


UNAVAILABLE = {"current": "main", "web_search_model": "gone/m", "accounts": [acct("main")]}


def test_an_unusable_named_connection_is_notified_once_per_runtime_build() -> None:
    notices: list[str] = []
    resolution = resolve(UNAVAILABLE, ENV)
    assert resolution.notice is not None and "gone/m" in resolution.notice and "not_found" in resolution.notice
    assert resolution.to_json()["notice"] == resolution.notice
    for builds in (1, 2, 3):
        assert standalone_search_tool(resolution, on_notice=notices.append) is None
        assert len(notices) == builds  # exactly one per build, and no tool registered
    assert set(notices) == {resolution.notice}


@pytest.mark.parametrize(
    "document",
    [{"current": "main", "accounts": [acct("main")]},  # selected
     {"offline": True, "accounts": [acct("main")]},  # none by design
     {"current": "main", "accounts": [acct("main", web_search=False), acct("b")]}],  # explicit off
    ids=["selected", "offline", "explicit-off"],
)
def test_no_notice_unless_a_named_connection_is_unavailable(document: dict[str, Any]) -> None:
    notices: list[str] = []
    resolution = resolve(document, ENV)
    standalone_search_tool(resolution, environ=ENV, on_notice=notices.append)
    assert resolution.notice is None and notices == []


def test_solo_resolve_shows_skipped_candidates_and_the_notice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DS_KEY", "k")
    path = tmp_path / "c.json"
    path.write_text(json.dumps({**UNAVAILABLE, "accounts": [acct("main"), acct("bk", source="broker")],
                                "web_search_model": "bk/m"}))
    assert main(["solo", "resolve", "--config", str(path)]) == 1
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "invalid" and shown["reason"] == "not_local"
    assert shown["skipped"] == [{"connection": "bk", "reason": "not_local"}] and "bk/m" in shown["notice"]
    assert shown["web_search_model"] == {"value": "bk/m", "from": "user"}
