"""The text rules of search.text.agrees and the differential checks, on their own."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks.text import shown_whole
from dsweb_ref.certification.scenarios import Expected, _answers_shown

URL = "https://a.example.test/1"


@pytest.mark.parametrize("text", [f"- [t]({URL})", f"see {URL}. Then", f"{URL}", f"<{URL}>", f"{URL}0 and {URL}\n"])
def test_a_url_shown_whole_may_be_framed_freely(text: str) -> None:
    assert shown_whole(URL, text)


@pytest.mark.parametrize("text", [f"({URL}…)", f"{URL}0", f"{URL}/more", f"{URL}来源", "nothing here"])
def test_a_url_run_on_into_more_url_characters_is_not_shown(text: str) -> None:
    assert not shown_whole(URL, text)


def test_each_answer_must_be_shown_under_its_own_label() -> None:
    want = Expected(value={"sources": [], "truncated": False}, labelled=(("q1", "one\ntwo"), ("q2", "three")))
    assert _answers_shown("### q1\n\none\ntwo\n\n### q2\n\nthree\n\nSources: none", want) == []
    swapped = _answers_shown("### q1\n\nthree\n\n### q2\n\none\ntwo", want)
    assert len(swapped) == 2 and "under its label '### q1'" in swapped[0]
    assert _answers_shown("### q1\n\n### q2\n\n", want) != []  # labels without their answers


def test_a_single_answer_must_be_shown() -> None:
    want = Expected(value={"content": "the answer", "sources": [], "truncated": False}, single=True)
    assert _answers_shown("the answer\n\nSources: ...", want) == []
    assert _answers_shown("Sources: ...", want) == ["the text does not show the provider's answer 'the answer'"]
