"""Seed 003: saving the search model updates only that field and keeps the rest of the file; a
project file overriding it is reported as the value in effect."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from dsweb_ref._exceptions import WebError
from dsweb_ref.cli import main
from dsweb_ref.standalone_config import effective_search_model, save_search_model

USER = """\
# my settings: keep this comment
offline = false   # odd spacing stays

[agent]
# the search model
web_search_model = "old-conn/model-a"  # trailing comment
thinking = "high"

[[accounts]]
name = "old-conn"   # the relay
protocol = "messages"
base_url = "https://relay.example.test/anthropic"
model = "model-a"
api_key_env = "RELAY_KEY"
web_search = true

[future.unknown_table]
keys = [ 1,2 ,3 ]   # a field this version does not know
"quoted key" = { inline = true }
"""

# (name, original text, value, expected text)
ROWS = [
    ("replaces-the-value-only", USER, "new-conn/vendor/model-b",
     USER.replace('"old-conn/model-a"  #', '"new-conn/vendor/model-b"  #')),
    ("auto-resets-to-automatic", USER, "auto", USER.replace('"old-conn/model-a"  #', '"auto"  #')),
    ("adds-the-key-first-in-an-existing-agent-table",
     "# top\n[agent]\nthinking = 'high'\n[agent.sub]\nx = 1\n\n[zz]\ny = 2 # y\n", "c/m",
     "# top\n[agent]\nweb_search_model = \"c/m\"\nthinking = 'high'\n[agent.sub]\nx = 1\n\n[zz]\ny = 2 # y\n"),
    ("adds-an-agent-table-at-the-end", "# only accounts\n[[accounts]]\nname = \"a\"  # a\n", "c/m",
     "# only accounts\n[[accounts]]\nname = \"a\"  # a\n\n[agent]\nweb_search_model = \"c/m\"\n"),
    ("keeps-a-top-level-key-where-it-is", "web_search_model = \"a/b\"   # here\n[x]\ny=1\n", "c/d",
     "web_search_model = \"c/d\"   # here\n[x]\ny=1\n"),
    ("dotted-key", "agent.web_search_model = \"a/b\" # c\nb = 2\n", "c/d",
     "agent.web_search_model = \"c/d\" # c\nb = 2\n"),
    ("inline-agent-table", "agent = { web_search_model = \"a/b\", z = 1 }\n", "c/d",
     "agent = { web_search_model = \"c/d\", z = 1 }\n"),
    ("crlf-line-endings", "[agent]\r\nweb_search_model = \"a/b\"\r\n\r\n[x]\r\ny=1\r\n", "c/模型",
     "[agent]\r\nweb_search_model = \"c/模型\"\r\n\r\n[x]\r\ny=1\r\n"),
    ("empty-file", "", "c/m", "[agent]\nweb_search_model = \"c/m\"\n"),
]


@pytest.mark.parametrize(("original", "value", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_save_changes_only_the_field_byte_for_byte(tmp_path: Path, original: str, value: str, expected: str) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(original.encode())
    report = save_search_model(path, value)
    assert path.read_bytes() == expected.encode()
    assert report.saved == value and report.overridden_by is None


def test_a_missing_file_is_created_with_only_the_field(tmp_path: Path) -> None:
    path = tmp_path / "new.toml"
    assert save_search_model(path, "c/m").previous is None
    assert path.read_text() == '[agent]\nweb_search_model = "c/m"\n'


def test_the_file_mode_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(USER)
    path.chmod(0o600)
    save_search_model(path, "c/m")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("original", "value", "message"),
    [(USER, "no-slash", "CONNECTION/MODEL"), (USER, "/model", "CONNECTION/MODEL"), (USER, "conn/", "CONNECTION/MODEL"),
     (USER, "c/m\nx = 1", "control"), ("[agent\nbroken", "c/m", "not valid TOML"),
     ('web_search_model = "a/b"\n[agent]\nweb_search_model = "c/d"\n', "e/f", "both"),
     # catches: tomllib's RecursionError, and tomlkit's refusal past 100 levels of what tomllib reads, let out
     ("x = " + "[" * 2000, "c/m", "nested too deeply"),
     ("x = " + "[" * 150 + "]" * 150 + "\n", "c/m", "cannot be edited")],
    ids=["no-slash", "no-connection", "no-model", "newline-injection", "malformed-toml", "given-twice",
         "nested-past-tomllib", "nested-past-tomlkit"],
)
def test_an_unusable_value_or_file_writes_nothing(tmp_path: Path, original: str, value: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(original)
    with pytest.raises(WebError, match=message) as raised:
        save_search_model(path, value)
    assert raised.value.code == "WEB_CONFIG_INVALID"
    assert path.read_text() == original and sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_a_project_file_that_sets_the_field_is_reported_as_the_value_in_effect(tmp_path: Path) -> None:
    user, project = tmp_path / "user.toml", tmp_path / "reasonix.toml"
    user.write_text(USER)
    project.write_text('# project\n[agent]\nweb_search_model = "team/deepseek-v4-pro"\n')
    report = save_search_model(user, "c/m", project=project)
    assert (report.overridden_by, report.effective, report.saved) == (str(project), "team/deepseek-v4-pro", "c/m")
    assert project.read_text() == '# project\n[agent]\nweb_search_model = "team/deepseek-v4-pro"\n'  # untouched
    project.write_text("[agent]\nthinking = 'low'\n")
    assert save_search_model(user, "c/m", project=project).overridden_by is None


def test_a_bad_project_file_leaves_the_user_file_unwritten(tmp_path: Path) -> None:
    user, project = tmp_path / "user.toml", tmp_path / "reasonix.toml"
    user.write_text(USER)
    project.write_text("[agent\nweb_search_model = ")
    with pytest.raises(WebError) as raised:
        save_search_model(user, "c/m", project=project)
    assert raised.value.code == "WEB_CONFIG_INVALID" and str(project) in raised.value.message
    assert user.read_text() == USER


def test_a_project_set_to_automatic_is_the_value_in_effect(tmp_path: Path) -> None:
    user, project = tmp_path / "user.toml", tmp_path / "reasonix.toml"
    user.write_text(USER)
    project.write_text('[agent]\nweb_search_model = ""\n')
    report = save_search_model(user, "c/m", project=project)
    assert report.to_json()["effective"] == "" and report.to_json()["overridden_by"] == str(project)


def test_resolve_names_the_file_it_could_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user, project = tmp_path / "user.toml", tmp_path / "reasonix.toml"
    user.write_text("not = [toml")
    project.write_text("")
    assert main(["solo", "resolve", "--config", str(user), "--project", str(project)]) == 2
    assert f"cannot read {user}" in capsys.readouterr().err


def test_effective_search_model_names_its_origin() -> None:
    user = {"agent": {"web_search_model": "u/m"}}
    assert effective_search_model(user, {"web_search_model": "p/m"}) == ("p/m", "project")
    assert effective_search_model(user, {}) == ("u/m", "user")
    assert effective_search_model({}, None) == (None, "default")


def test_cli_saves_and_reports_the_project_override(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    user, project = tmp_path / "user.toml", tmp_path / "reasonix.toml"
    user.write_text(USER)
    project.write_text('[agent]\nweb_search_model = "old-conn/model-p"\n')
    assert main(["solo", "set-search-model", "old-conn/model-b", "--config", str(user), "--project", str(project)]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["effective"] == "old-conn/model-p" and "value in effect" in out.err
    assert user.read_text() == USER.replace("old-conn/model-a\"", "old-conn/model-b\"")
    monkeypatch.setenv("RELAY_KEY", "k")
    assert main(["solo", "resolve", "--config", str(user), "--project", str(project)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["web_search_model"] == {"value": "old-conn/model-p", "from": "project"}
    assert shown["route"]["model"] == "model-p"
    assert main(["solo", "set-search-model", "bad", "--config", str(user)]) == 2
    assert "CONNECTION/MODEL" in capsys.readouterr().err


@pytest.mark.parametrize(
    "rewrite",
    [lambda text, value: text.replace("# my settings: keep this comment\n", "") + f'web_search_model = "{value}"\n',
     lambda text, value: text.replace('thinking = "high"', 'thinking = "low"').replace("old-conn/model-a", value)],
    ids=["drops-a-comment", "changes-another-value"],
)
def test_an_edit_that_would_touch_anything_else_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rewrite: object
) -> None:
    """The proof after the edit: a library that re-rendered more than the field would be caught."""
    from dsweb_ref import standalone_config

    monkeypatch.setattr(standalone_config, "_edited", rewrite)
    path = tmp_path / "config.toml"
    path.write_text(USER)
    with pytest.raises(WebError, match="not saved"):
        save_search_model(path, "c/m")
    assert path.read_text() == USER


def test_a_line_separator_in_a_comment_after_the_header_does_not_end_its_line(tmp_path: Path) -> None:
    # str.splitlines would end the comment's line at U+2028, putting the field inside the comment's
    # second half, which then reads as a key without a value: the save was refused.
    user = tmp_path / "config.toml"
    user.write_text('[agent] # the agent\u2028still the comment\nmodel = "m"\n', encoding="utf-8")
    save_search_model(user, "c/m")
    assert user.read_text(encoding="utf-8") == (
        '[agent] # the agent\u2028still the comment\nweb_search_model = "c/m"\nmodel = "m"\n'
    )
