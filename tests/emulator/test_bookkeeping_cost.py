"""The emulator's per-request bookkeeping stays small: a stream of distinct wrong keys neither grows
its memory nor rebuilds its scrubber, and the request log builds one record per request.

Structural, not timed: each test counts what the slow versions did per request.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from dsweb_ref.emulator import Emulator, log, wire
from dsweb_ref.emulator.auth import Scrubber, mask

from ._support import SEARCH


def _wrong_key(i: int) -> str:
    return f"dsweb-wrong-key-{i:06d}"


def test_wrong_keys_are_remembered_within_a_bound(emulator: Emulator) -> None:
    limit = 32  # wire.REMEMBERED_CREDENTIALS
    with httpx.Client(base_url=emulator.base_url) as client:
        for i in range(4 * limit):
            response = client.post(SEARCH, json={"query": "x"}, headers={"Authorization": f"Bearer {_wrong_key(i)}"})
            assert response.status_code == 401
        # The newest wrong key is still scrubbed from a later request that carries it elsewhere.
        newest = _wrong_key(4 * limit - 1)
        client.post(SEARCH, json={"query": newest}, headers={"X-Custom": newest})
    assert len(emulator._state.presented) == limit == wire.REMEMBERED_CREDENTIALS
    assert emulator._state.presented[-1] == newest
    emulator.wait_until_idle()
    records = emulator.log.records()
    assert all(_wrong_key(i) not in repr(r) for r in records for i in range(4 * limit))
    assert records[-1].header("x-custom") == "****0127"


def test_scrubber_is_built_once(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []

    class Counting(Scrubber):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(wire, "Scrubber", Counting)
    with httpx.Client(base_url=emulator.base_url) as client:
        for i in range(40):
            client.post(SEARCH, json={"query": "x"}, headers={"Authorization": f"Bearer {_wrong_key(i)}"})
    assert built == []


def test_one_record_per_request(emulator: Emulator, monkeypatch: pytest.MonkeyPatch, auth: dict[str, str]) -> None:
    """A request's record is built once, when it finishes (no copy per update)."""
    made: list[int] = []

    class Counting(log.RequestRecord):
        __slots__ = ()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(log, "RequestRecord", Counting)
    with httpx.Client(base_url=emulator.base_url, headers=auth) as client:
        for query in ("coffee", "markdown", "asyncio"):
            assert client.post(SEARCH, json={"query": query}).status_code == 200
    emulator.wait_until_idle()  # reads only the in-flight count: builds no record
    assert len(made) == 3
    records = emulator.log.records()
    assert [r.json for r in records] == [{"query": q} for q in ("coffee", "markdown", "asyncio")]
    assert len(made) == 3 and emulator.log.records()[0] is records[0]


def test_remembered_values_stay_longest_first_and_bounded() -> None:
    fixed, longer = "dsweb-secret-0001", "dsweb-secret-0001-extended"
    scrubber = Scrubber([fixed], remember_limit=2)
    scrubber.remember(longer)
    scrubber.remember(fixed)  # a configured secret is scrubbed anyway: not remembered twice
    assert scrubber.text(f"{longer} {fixed}") == f"{mask(longer)} {mask(fixed)}"
    assert scrubber.bytes(longer.encode()) == mask(longer).encode()
    scrubber.remember("dsweb-other-0002")
    scrubber.remember("dsweb-other-0003")
    assert scrubber.remembered == ("dsweb-other-0002", "dsweb-other-0003")
    assert scrubber.text(longer) == mask(fixed) + "-extended"  # forgotten: only the configured part goes


def test_a_repeated_query_is_ranked_once_and_the_memo_is_bounded() -> None:
    """The default corpus never changes, so a query's ranking is computed once; the memo has a fixed bound so a
    stream of distinct hostile queries cannot grow it."""
    from dsweb_ref.emulator import search as search_module

    search_module._ranked_default.cache_clear()
    first = search_module.search("search api", 10)
    again = search_module.search("search api", 3)
    info = search_module._ranked_default.cache_info()
    assert (info.misses, info.hits) == (1, 1)
    assert again == first[:3] and first == search_module._rank("search api", search_module._corpus_index())[:10]
    assert info.maxsize == 1024
