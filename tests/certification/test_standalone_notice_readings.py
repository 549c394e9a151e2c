"""Seed 003's notice for an unusable assigned search model (capability standalone-notice, check
standalone.notice.once): the seed-decision audit found no route for "新运行时不注册搜索工具并通知一次" (the notice
was told only to a callback no check could reach). Each wrong reading is made in the reference and must fail
exactly the rows that name it; the reference passes them."""

from __future__ import annotations

import pytest

from dsweb_ref import runtime, standalone_accounts
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import REGISTRY, standalone_notice
from dsweb_ref.certification.checks.standalone_notice import NOTICE_CASES, notice_problems
from dsweb_ref.certification.targets import reference_tools

from ._readings import failing_rows, patch_reading

CHECK, TABLE = "standalone.notice.once", "NOTICE_CASES"
TOLD = {"connection-deleted-tells-once", "search-switched-off-tells-once", "credentials-lost-tells-once"}
SILENT = {"valid-assignment-tells-nothing", "automatic-selection-tells-nothing"}
AGAIN = "each-new-runtime-tells-again"


def test_the_reference_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(standalone_notice, TABLE, CHECK, monkeypatch) == set()


def test_each_row_is_the_case_it_names() -> None:
    """A telling row's document is one of the seed's three cases (deleted, search off, credentials lost), each
    unusable by its own reason; a silent row's selects a search route."""
    reasons = {}
    for case in NOTICE_CASES:
        found = standalone_accounts.resolve(case["document"], dict.fromkeys(case["environ_set"], "set"))
        reasons[case.name] = found.reason if found.status == "invalid" else found.status
    assert {reasons[name] for name in TOLD} == {"not_found", "search_off", "no_credentials"}
    assert {reasons[name] for name in SILENT} == {"selected"} and reasons[AGAIN] == "not_found"
    assert {c.name for c in NOTICE_CASES} == TOLD | SILENT | {AGAIN}
    assert REGISTRY[CHECK].rule.startswith("Seed 003:") and all(case.catches for case in NOTICE_CASES)


def test_the_reference_tells_the_runtimes_notice_through_standalone_tools() -> None:
    gone = next(c for c in NOTICE_CASES if c.name == AGAIN)
    first = reference_tools(gone["document"], gone["environ_set"])
    second = reference_tools(gone["document"], gone["environ_set"])
    assert len(first["notices"]) == 1 and first["notices"] == second["notices"]
    assert "gone/deepseek-v4-flash" in first["notices"][0] and first["tools"] == []


@pytest.mark.parametrize(
    ("answers", "told", "builds", "expected"),
    [
        ([(True, "", {"tools": [], "notices": ["x"]})], 1, 1, []),
        # catches: a notice of whitespace only counted as telling the user
        ([(True, "", {"tools": [], "notices": [" \n"]})], 1, 1, ["expected 1 notice(s), got 1 (' \\n')"]),
        # catches: a blank notice alone, in a row that expects none, taken as silence
        ([(True, "", {"tools": [], "notices": [""]})], 0, 1, ["expected 0 notice(s), got 1 ('')"]),
        ([(True, "", {"tools": []})], 0, 1, ["value.notices is not an array of strings: {'tools': []}"]),
        # catches (a review): the notice told, yet web_search still registered (its calls failing later)
        ([(True, "", {"tools": [{"type": "function", "function": {"name": "web_search"}}], "notices": ["x"]})], 1, 1,
         ["web_search is listed (or no tools array) beside the notice"]),
        ([(True, "", {"tools": [], "notices": [1]})], 1, 1, ["value.notices is not an array of strings"]),
        ([(False, "error WEB_CONFIG_INVALID", None)], 1, 1, ["expected the tools and notices, got error"]),
        ([(True, "", {"tools": [], "notices": ["x"]}), (True, "", {"tools": [], "notices": []})], 1, 2,
         ["assembly 2: expected 1 notice(s), got 0 (none)"]),
    ],
)
def test_notice_problems_judges_each_answer(answers: list, told: int, builds: int, expected: list[str]) -> None:
    from dsweb_ref.certification.cases import Case

    found = notice_problems(Case("row", "a test", {"told": told, "builds": builds}), answers)
    assert len(found) == len(expected) and all(f.startswith(e) for f, e in zip(found, expected, strict=True)), found


# catches: the runtime assembled for an unusable model registers no tool and tells nobody
def test_an_unusable_model_left_out_silently_fails_the_telling_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(runtime, "standalone_search_tool", "on_notice(resolution.notice)", "pass", monkeypatch)
    assert failing_rows(standalone_notice, TABLE, CHECK, monkeypatch) == TOLD | {AGAIN}


# catches: one assembly telling the notice twice (the selection and the registration each tell it)
def test_a_notice_told_twice_fails_the_telling_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(runtime, "standalone_search_tool", "on_notice(resolution.notice)",
                  "on_notice(resolution.notice)\n            on_notice(resolution.notice)", monkeypatch)
    assert failing_rows(standalone_notice, TABLE, CHECK, monkeypatch) == TOLD | {AGAIN}


# catches: a notice remembered across runtimes, so a runtime assembled again says nothing
def test_a_notice_told_once_per_process_fails_exactly_the_new_runtime_row(monkeypatch: pytest.MonkeyPatch) -> None:
    told: set[str] = set()
    right = targets.main_model_tools

    def remembering(resolution: standalone_accounts.Resolution, others: object = (), **assembly: object) -> list:
        tell = assembly.pop("on_notice")
        return right(resolution, others, on_notice=lambda n: None if n in told else (told.add(n), tell(n)),
                     **assembly)  # type: ignore[arg-type]

    monkeypatch.setattr(targets, "main_model_tools", remembering)
    # Each row runs alone, in table order, while the memory lasts: the deleted connection's row tells it first.
    assert failing_rows(standalone_notice, TABLE, CHECK, monkeypatch) == {AGAIN}
