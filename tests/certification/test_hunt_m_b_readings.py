"""Issue 24, an outside hunt (M2) over seeds 002 and 003: wrong readings dsweb certify passed. The engine's order kept
for a one-word query or one carrying a search operator (every ranking row had multi-word, operator-free batches),
and a standalone search whose text beside the query depends on the conversation's latest prompt (a reply-language
note). Each wrong reading is made in the reference and must fail exactly the row that names it; the reference and
the readings the seeds leave open pass it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dsweb_ref.certification.checks import evidence_relevance, standalone
from dsweb_ref.providers import standalone_messages, standalone_responses
from dsweb_ref.tools import _evidence_text, evidence_search
from dsweb_ref.tools._evidence_rank import Candidate

from . import test_open_choice_evidence
from ._readings import failing_rows, fails_exactly, patch_reading

RANKING, ISOLATED = "evidence.own_ranking", "standalone.request.isolated"
ONE_WORD_OR_OPERATOR = "one-word-and-operator-queries"
MESSAGES_PROMPT, RESPONSES_PROMPT = "messages-prompt-independent", "responses-prompt-independent"
RANKED = "q.ranked = rank(q.topic, self._candidates(index, q, answer))"


def _rows(module: object, table: str, names: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``table`` cut to ``names`` (the other rows prove nothing here)."""
    monkeypatch.setattr(module, table, tuple(c for c in getattr(module, table) if c.name in names))


def test_the_reference_passes_the_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(evidence_relevance, "RANKING", RANKING, monkeypatch) == set()
    _rows(standalone, "REQUEST_CASES", {MESSAGES_PROMPT, RESPONSES_PROMPT}, monkeypatch)
    assert failing_rows(standalone, "REQUEST_CASES", ISOLATED, monkeypatch) == set()


# -- the pipeline's own ranking (seed 002: "does not trust the search engine's ranking alone") -----------------------


def _ranking(wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    patch_reading(evidence_search.EvidenceSearchTool, "run", RANKED, wrong, monkeypatch)


def test_a_one_word_query_kept_in_the_engine_order_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: M85, "scoring a single word says nothing, keep the engine's order" (only multi-word topics ranked)
    _ranking("cands = self._candidates(index, q, answer)\n"
             "            from dsweb_ref.tools._evidence_text import content_tokens, tokenize\n"
             "            q.ranked = rank(q.topic, cands) if len(content_tokens(tokenize(q.topic))) > 1 else cands",
             monkeypatch)  # fmt: skip
    fails_exactly(evidence_relevance, "RANKING", RANKING, ONE_WORD_OR_OPERATOR, monkeypatch)


def test_an_operator_query_kept_in_the_engine_order_fails_exactly_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: M110, "the engine already filtered an operator query, trust its order" (-term, site:, lang:)
    _ranking("cands = self._candidates(index, q, answer)\n"
             "            q.ranked = rank(q.topic, cands) if q.topic == q.text else cands", monkeypatch)
    fails_exactly(evidence_relevance, "RANKING", RANKING, ONE_WORD_OR_OPERATOR, monkeypatch)


@pytest.mark.parametrize("bound", sorted(test_open_choice_evidence.BOUNDS))
@pytest.mark.parametrize("reading", ["test_a_one_word_query_kept_in_the_engine_order_fails_exactly_its_row",
                                     "test_an_operator_query_kept_in_the_engine_order_fails_exactly_its_row"])
def test_each_reading_fails_the_row_with_an_open_bound(
    reading: str, bound: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # right by seed: fewer results a query (6) or fewer pages (5) than the reference's; the readings still fail
    test_open_choice_evidence.settings(monkeypatch, **test_open_choice_evidence.BOUNDS[bound])
    globals()[reading](monkeypatch)


def test_other_relevance_scorings_pass_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # right by seed: which signals score relevance, and how ties are ordered, are open. Here a bare count of the
    # query's words (operators read as words too, M6) in title and snippet, ties in the engine's order reversed.
    def overlap(query: str, candidates: Sequence[Candidate]) -> list[Candidate]:
        words = set(_evidence_text.tokenize(query.replace("-", " ")))
        scored = [(len(words & set(_evidence_text.tokenize(c.text))), -c.rank, c) for c in candidates]
        return [c for *_, c in sorted(scored, key=lambda s: (s[0], s[1]), reverse=True)]

    monkeypatch.setattr(evidence_search, "rank", overlap)
    _rows(evidence_relevance, "RANKING", {ONE_WORD_OR_OPERATOR}, monkeypatch)
    assert failing_rows(evidence_relevance, "RANKING", RANKING, monkeypatch) == set()


# -- the standalone search's request (seed 003: "the search request carries only the query") --------------------------

# M14: a reply-language note beside the query, taken from the conversation's latest prompt.
LANGUAGE_NOTE = ('query + (" (answer in Thai)" if any("\\u0e00" <= c <= "\\u0e7f" for c in (ctx.latest_prompt or "")) '
                 'else " (answer in English)" if ctx.latest_prompt else "")')


def _prompt_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    _rows(standalone, "REQUEST_CASES", {"messages", "responses", "messages-no-prompt", MESSAGES_PROMPT,
                                        RESPONSES_PROMPT}, monkeypatch)  # fmt: skip


def test_a_reply_language_note_from_the_prompt_fails_exactly_the_messages_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: M14 on Messages (the marker row sees only the prompt's own text, not what is derived from it)
    patch_reading(standalone_messages.MessagesStandaloneSearch, "standalone_search", "PROMPT_PREFIX + query",
                  "PROMPT_PREFIX + " + LANGUAGE_NOTE, monkeypatch)
    _prompt_rows(monkeypatch)
    assert failing_rows(standalone, "REQUEST_CASES", ISOLATED, monkeypatch) == {MESSAGES_PROMPT}


def test_a_reply_language_note_from_the_prompt_fails_exactly_the_responses_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches: the same reading on Responses
    patch_reading(standalone_responses.ResponsesStandaloneSearch, "standalone_search", "PROMPT_PREFIX + query",
                  "PROMPT_PREFIX + " + LANGUAGE_NOTE, monkeypatch)
    _prompt_rows(monkeypatch)
    assert failing_rows(standalone, "REQUEST_CASES", ISOLATED, monkeypatch) == {RESPONSES_PROMPT}


@pytest.mark.parametrize("wrapped", ["query", 'query + "\\n\\nAnswer concisely and cite your sources."',
                                     '"Search the web: " + query'])
def test_any_fixed_wording_round_the_query_passes_the_rows(wrapped: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # right by seed: the bare query, a fixed instruction after it (M37, open), another fixed prefix
    for backend in (standalone_messages.MessagesStandaloneSearch, standalone_responses.ResponsesStandaloneSearch):
        patch_reading(backend, "standalone_search", "PROMPT_PREFIX + query", wrapped, monkeypatch)
    _rows(standalone, "REQUEST_CASES", {MESSAGES_PROMPT, RESPONSES_PROMPT}, monkeypatch)
    assert failing_rows(standalone, "REQUEST_CASES", ISOLATED, monkeypatch) == set()


def test_the_one_word_rows_weak_results_never_name_the_word_anywhere() -> None:
    # catches: the word in the weak results' hosts (the review's false failure: a scorer that reads the URL too, open
    # by seed 002, tied every result and kept the engine's order, so the relevant one, listed last, was never read)
    from dsweb_ref.certification.checks import evidence_relevance

    word, rows, weak_count, *_ = evidence_relevance._one_word("anchorage", 7)
    for result in rows[:weak_count]:
        assert word not in " ".join(str(v) for v in result.values()).casefold(), result
