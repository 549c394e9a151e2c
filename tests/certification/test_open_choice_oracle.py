"""Right-by-seed variants an outside hunt found failed (session of 2026-12-06): each differs from the
reference only where the seeds leave a choice open, and each is certified now.

- A Messages prompt that wraps the query in quotes and an instruction after it: seed 001 fixes only the
  thinking block and the omitted tool_choice of the Messages body, and the adapter protocol asks for one
  user message carrying the query. The checks recognised a request only when its text ended with the query.
- A merge that dedups URLs with their scheme and host compared without letter case: seed 000 dedups
  "by URL", and URLs so written are one URL (RFC 3986, 6.2.2.1). search.differential.merge expected the
  two spellings kept apart."""

from __future__ import annotations

import pytest

from dsweb_ref.certification import scenarios
from dsweb_ref.certification.checks import all_checks
from dsweb_ref.certification.scenarios import url_key
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.providers import deepseek_official
from dsweb_ref.tools import _merge, web_search

from ._readings import patch_reading
from .conftest import outcomes, run

# Every check that reads which query a Messages request carries (the families the hunt saw fail).
PROMPT_CHECKS = ("search.validation.dedup", "search.single", "search.merge", "search.batch", "errors",
                 "search.messages", "search.outcome", "evidence.html_page")


WORDINGS = {
    "quoted, an instruction after": "'Search the web for \"' + request.query + '\", then list the sources you found.'",
    "on the first line, an instruction below": "request.query + '\\n\\nSearch the web for this query.'",
    # The wording holds a word that is also a query of the call ("markdown"): still one query a request.
    "quoted, a query word in the wording": "'Search the web for \"' + request.query + '\" and list the sources as a "
    "markdown list.'",
    "in corner brackets": "'\u8bf7\u641c\u7d22\u300c' + request.query + '\u300d\u5e76\u5217\u51fa\u6765\u6e90\u3002'",
}


@pytest.mark.parametrize("wording", sorted(WORDINGS))
def test_a_messages_prompt_holding_the_query_delimited_is_certified(
    wording: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_reading(deepseek_official.DeepSeekMessagesSearch, "search", "PROMPT_PREFIX + request.query",
                  WORDINGS[wording], monkeypatch)
    report = run(reference_target(), only=list(PROMPT_CHECKS))
    messages = {s.check.id for s in all_checks() if s.check.id.startswith(PROMPT_CHECKS)}
    assert len(report.results) == len(messages)
    failed = {k: v.value for k, v in outcomes(report).items() if v.value not in ("passed", "skipped")}
    assert failed == {}, [(r.check.id, r.reason) for r in report.results if r.check.id in failed]


def test_a_messages_prompt_that_adds_words_to_the_query_still_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # Seed 001: 'Queries pass through unchanged'. Words added after the query (no quotes, no line end between)
    # make another query, which no delimited reading takes for the one asked.
    patch_reading(deepseek_official.DeepSeekMessagesSearch, "search", "PROMPT_PREFIX + request.query",
                  "PROMPT_PREFIX + request.query + ' 2026'", monkeypatch)
    report = run(reference_target(), only=["search.single.passthrough", "search.validation.dedup"])
    assert {r.outcome.value for r in report.results} == {"failed"}, [(r.check.id, r.reason) for r in report.results]


class _FoldedSeen(set[str]):
    """A merge's set of URLs seen, keyed by ``fold`` (the one change each variant below makes)."""

    fold = staticmethod(url_key)

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and super().__contains__(self.fold(url))

    def add(self, url: str) -> None:
        super().add(self.fold(url))


class _LowerSeen(_FoldedSeen):
    fold = staticmethod(str.lower)


def _fold_merge(seen: type[set[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the tool's merge changes; the oracle has its own (certification/seed_merge.py).
    monkeypatch.setattr(_merge, "_Seen", seen, raising=False)
    patch_reading(_merge, "merge_results", "seen: set[str] = set()", "seen = _Seen()", monkeypatch, web_search)
    assert web_search.merge_results.__code__.co_filename == "<string>"
    assert not hasattr(scenarios, "merge_results")


def test_a_merge_that_folds_the_case_of_scheme_and_host_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    _fold_merge(_FoldedSeen, monkeypatch)
    (result,) = run(reference_target(), only=["search.differential.merge"]).results
    assert result.outcome.value == "passed", result.reason


def test_a_merge_that_folds_the_whole_url_still_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # A path's letter case is meaningful: "/Page" and "/page" are two URLs, so this merge loses a source.
    _fold_merge(_LowerSeen, monkeypatch)
    (result,) = run(reference_target(), only=["search.differential.merge"]).results
    assert result.outcome.value == "failed" and "sources" in result.reason, result.reason


@pytest.mark.parametrize(("url", "key"), [
    ("HTTPS://A.Example.TEST/Page?Q=1#Frag", "https://a.example.test/Page?Q=1#Frag"),
    ("https://User@Host.TEST:8443/P", "https://User@host.test:8443/P"),
    ("https://a.example.test", "https://a.example.test"),
    ("no-scheme/Path", "no-scheme/Path"),
])
def test_only_scheme_and_host_lose_their_case(url: str, key: str) -> None:
    assert url_key(url) == key
