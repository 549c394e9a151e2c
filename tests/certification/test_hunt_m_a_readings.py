"""Issue 24, an outside hunt (M2) over seeds 002 and 003: wrong readings dsweb certify passed, in the evidence
pipeline's lines, links and local-path refusal. A snippet-fallback line shown without its URL or left out of the
value's sources; an evidence line's URL shown through a 2,000-character display cut; ../ paths, drive letters other
than C: and mounted or external drives (/Volumes/, /media/) taken for public text; no link attached for a source
without a title. The hunt also found spellings of local paths the reference itself sent (~name/, $HOME/,
%USERPROFILE%\\, //server/share/, smb://): its path rule was widened, and the rule as it was fails exactly those
rows. Each wrong reading is made in the reference and must fail exactly the rows that name it; the reference and
the right-by-seed variants pass them."""

from __future__ import annotations

import re

import pytest

from dsweb_ref.certification.checks import citations, evidence
from dsweb_ref.tools import _evidence_guard, evidence_search

from ._readings import failing_rows, fails_exactly, patch_reading

CITES, LOCAL = "evidence.lines_cite_results", "evidence.local_refused"
APPENDED = "citations.appended"
SNIPPET, LONGEST = "snippet-fallback", "longest-url"
PARENT, OTHER_DRIVE, EXTERNAL, MOUNTED = "parent-relative", "other-drive", "external-drive", "mounted-drive"
NAMED_HOME, HOME_VAR, PROFILE_VAR, UNC_SLASH, SMB = (
    "named-home", "home-variable", "profile-variable", "unc-forward-slash", "smb-url")
UNTITLED_ROW = "untitled-source"
LINE = """f'- "{e["text"]}" (source: {e["url"]})'"""  # render_evidence's evidence line


def _new_rows(table: str, names: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``evidence.table`` cut to the rows named (the older rows have readings tests of their own)."""
    rows = tuple(case for case in getattr(evidence, table) if case.name in names)
    assert {case.name for case in rows} == names
    monkeypatch.setattr(evidence, table, rows)


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(evidence, "CITES", CITES, monkeypatch) == set()
    assert failing_rows(evidence, "LOCAL", LOCAL, monkeypatch) == set()
    assert failing_rows(citations, "UNTITLED", APPENDED, monkeypatch) == set()


def test_right_variants_of_the_fallback_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right by seed 002 ('search snippet is still a fallback, by policy'): no fallback at all ([needs_retry]), or a
    # fallback line marked as a snippet that still carries its URL.
    _new_rows("CITES", {SNIPPET}, monkeypatch)
    with monkeypatch.context() as inner:
        patch_reading(evidence_search.EvidenceSearchTool, "_collect", "if not choice.picks and snippets:",
                      "if False:", inner)
        assert failing_rows(evidence, "CITES", CITES, inner) == set()
    marked = ("""f'- "{e["text"]}" (search snippet; source: {e["url"]})' if e.get("from") == "snippet" """
              f"else {LINE}")
    patch_reading(evidence_search, "render_evidence", LINE, marked, monkeypatch)
    assert failing_rows(evidence, "CITES", CITES, monkeypatch) == set()


def test_a_snippet_line_without_its_url_fails_exactly_the_fallback_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: seed 002 'every evidence line keeps its source URL': the snippet-fallback line marked "(search
    # snippet)" instead of carrying its URL.
    wrong = ("""f'- "{e["text"]}" (source: {e["url"]})' if e.get("from") != "snippet" """
             """else f'- "{e["text"]}" (search snippet)'""")
    patch_reading(evidence_search, "render_evidence", LINE, wrong, monkeypatch)
    fails_exactly(evidence, "CITES", CITES, SNIPPET, monkeypatch)


def test_snippet_lines_left_out_of_the_sources_fail_exactly_the_fallback_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: seed 002 'code attaches the filtered source links': only page lines listed among the value's sources,
    # so no link is attached for a snippet line.
    right = 'sources.setdefault(line["url"], line["title"])'
    patch_reading(evidence_search, "_value", right, f'{right} if line.get("from") == "page" else None', monkeypatch)
    fails_exactly(evidence, "CITES", CITES, SNIPPET, monkeypatch)


def test_a_url_shown_through_a_display_cut_fails_exactly_the_longest_url_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: seed 002 'every evidence line keeps its source URL': a line's URL shown cut to 2,000 characters.
    patch_reading(evidence_search, "render_evidence", LINE,
                  """f'- "{e["text"]}" (source: {clean_text(e["url"], 2000)})'""", monkeypatch)
    fails_exactly(evidence, "CITES", CITES, LONGEST, monkeypatch)


def _path_rule(right: str, wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference's local-path rule with its one ``right`` text replaced by ``wrong``."""
    rule = _evidence_guard._LOCAL_PATH
    assert rule.pattern.count(right) == 1, right
    monkeypatch.setattr(_evidence_guard, "_LOCAL_PATH", re.compile(rule.pattern.replace(right, wrong), rule.flags))


def test_parent_paths_not_taken_for_local_fail_exactly_their_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: seed 002 'the user's file names are never sent to a search engine': ./ taken for local, ../ not (with
    # a single dot, the lookbehind also keeps the ./ inside ../ from matching).
    _path_rule(r"(?:~|\.{1,2})[\\/]", r"(?:~|\.)[\\/]", monkeypatch)
    fails_exactly(evidence, "LOCAL", LOCAL, PARENT, monkeypatch)


def test_drive_c_alone_fails_exactly_the_other_drive_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the same sentence: drive paths recognised for C: only, a file on D: sent.
    _path_rule(r"(?<![A-Za-z0-9])[A-Za-z]:[\\/]", r"(?<![A-Za-z0-9])[Cc]:[\\/]", monkeypatch)
    fails_exactly(evidence, "LOCAL", LOCAL, OTHER_DRIVE, monkeypatch)


def test_mount_folders_not_taken_for_local_fail_exactly_the_drive_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the same sentence: /Volumes/, /mnt/ and /media/ (external and mounted drives) not taken for local.
    _path_rule("home|users|etc|var|tmp|mnt|media|opt|root|private|volumes|srv|data",
               "home|users|etc|var|tmp|opt|root|private|srv|data", monkeypatch)
    assert failing_rows(evidence, "LOCAL", LOCAL, monkeypatch) == {EXTERNAL, MOUNTED}


# The alternatives the hunt's rows brought into the reference's path rule, each with the row it alone passes.
WIDENED = {
    NAMED_HOME: r"| (?<![A-Za-z0-9_.~/\\:])~[A-Za-z_][A-Za-z0-9_.-]*[\\/][^\s\\/]*[.\\/]",
    HOME_VAR: r"| \$(?:env:)?\{?(?:home|userprofile)\}?[\\/](?!\.)",
    PROFILE_VAR: r"| %(?:userprofile|homepath|onedrive)%[\\/](?!\.)",
    UNC_SLASH: r"| (?<![A-Za-z0-9_.~/\\:])//[A-Za-z0-9_-]+/[^/\\\s]+/",
    SMB: r"| \b(?:smb|cifs|afp|nfs)://[^/\s]+/\S",
}


def test_the_path_rule_before_the_hunt_fails_exactly_the_widened_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the reference as it was: ~name/, $HOME/, %USERPROFILE%\, //server/share/ and smb:// sent.
    _new_rows("LOCAL", set(WIDENED), monkeypatch)
    rule = _evidence_guard._LOCAL_PATH
    pattern = rule.pattern
    for alternative in WIDENED.values():
        assert pattern.count(alternative) == 1, alternative
        pattern = pattern.replace(alternative, "| (?!)")
    monkeypatch.setattr(_evidence_guard, "_LOCAL_PATH", re.compile(pattern, rule.flags))
    assert failing_rows(evidence, "LOCAL", LOCAL, monkeypatch) == set(WIDENED)


@pytest.mark.parametrize("row", sorted(WIDENED))
def test_each_widened_spelling_fails_exactly_its_row(row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: each spelling the reference sent before the hunt, one at a time.
    _new_rows("LOCAL", set(WIDENED), monkeypatch)
    _path_rule(WIDENED[row], "| (?!)", monkeypatch)
    fails_exactly(evidence, "LOCAL", LOCAL, row, monkeypatch)


def test_any_absolute_path_taken_for_local_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # A right-by-seed variant: every absolute POSIX path taken for local, not a list of folders (the control row
    # "unrelated" still searched).
    _path_rule("/(?:home|users|etc|var|tmp|mnt|media|opt|root|private|volumes|srv|data)/", r"/[^/\s]+/", monkeypatch)
    _new_rows("LOCAL", {EXTERNAL, MOUNTED, "posix-path", "unrelated"}, monkeypatch)
    assert failing_rows(evidence, "LOCAL", LOCAL, monkeypatch) == set()


def test_untitled_sources_left_unlinked_fail_exactly_their_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: seed 002 'code attaches the filtered source links after the answer': a source with no title not linked.
    right = 'parsed.scheme in ("http", "https") and parsed.host and not parsed.userinfo:'
    patch_reading(evidence_search, "append_citations", right, right[:-1] + " and title:", monkeypatch)
    fails_exactly(citations, "UNTITLED", APPENDED, UNTITLED_ROW, monkeypatch)


@pytest.mark.parametrize("shown", ["- [{url}]({url})", "- [pilot-notices.example.org]({url})", "<{url}>", "{url}",
                                   "[source]({url})"])
def test_any_link_text_for_the_untitled_source_passes(shown: str) -> None:
    # Right by seed 002: the link's text (the URL, the host, "source") and its Markdown form are open.
    (case,) = citations.UNTITLED
    links = [f"- [Pilot fees]({citations._PILOT})", shown.format(url=citations._UNTITLED_URL)]
    text = str(case["answer"]) + "\n\nSources:\n" + "\n".join(links)
    assert citations.cite_problems(case, True, "", text) == []


# The widened path rule still searches text that names no file: prices, fractions, URLs, pairs and comments.
@pytest.mark.parametrize("query", ["$5/month hosting plans", "about ~2/3 of residents", "$BTC/USD price today",
                                   "https://example.com/a/b docs", "comments // in javascript", "and/or usage",
                                   "smb protocol v3 vs nfs", "home/office chairs", "site:example.com/docs",
                                   # A review of the widened rule found these refused (none names a user's file):
                                   "how to add $HOME/.local/bin to PATH ubuntu",
                                   "npm global packages %APPDATA%\\npm location windows 11",
                                   "where is %LOCALAPPDATA%\\Temp on windows",
                                   "%USERPROFILE%\\.ssh\\config permissions windows openssh",
                                   "connect to smb:// server from macOS Finder", "nfs:// URL syntax RFC 2224",
                                   "afp:// deprecated macOS Sonoma",
                                   "protocol-relative URL //cdn.jsdelivr.net/npm/ https mixed content",
                                   "jquery script src //ajax.googleapis.com/ajax/libs/jquery/3.7.1/jquery.min.js",
                                   "javascript //TODO/FIXME comment highlighting vscode", "regex //g/ flag meaning",
                                   "dose ~mg/kg paracetamol children", "speed ~km/h world record cheetah",
                                   "bash ~user/ tilde expansion documentation", "apple stock ~AAPL/USD",
                                   "markdown link syntax [text](//example.com/page)"])
def test_the_widened_path_rule_leaves_text_that_names_no_file(query: str) -> None:
    assert not _evidence_guard.names_local(query, ())


# From the read-only review of hunt M's rows: a pipeline with no snippet fallback that fails the whole call when the
# Fetch API itself fails (a 5xx, a service failure) failed the fallback row, which served a 503. Seed 002 makes the
# fallback policy and says nothing of a call without it; the row now serves the page's own failure (a 404).
def test_a_fetch_service_failure_failing_the_call_passes_the_fallback_row(monkeypatch: pytest.MonkeyPatch) -> None:
    right = "    bodies = dict(zip((c.url for c in pages), fetched, strict=True))\n"  # as dedented from the class
    wrong = right + (
        "    if fetched and all(isinstance(b, WebError) and 'service error' in b.message for b in fetched):\n"
        "        raise next(b for b in fetched if isinstance(b, WebError))\n")
    patch_reading(evidence_search.EvidenceSearchTool, "run", right, wrong, monkeypatch)
    assert SNIPPET not in failing_rows(evidence, "CITES", CITES, monkeypatch)
