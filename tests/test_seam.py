"""The seam: registry, per-call selection, result cap, provider-error mapping (seed 000, SEAM-*)."""

from __future__ import annotations

import asyncio

import pytest
from fakes import FakeFetch, FakeSearch, result

from dsweb_ref import (
    CallContext,
    FetchBody,
    FetchRequest,
    FetchResult,
    OutgoingRequest,
    ProviderSelection,
    SearchRequest,
    SearchResult,
    Source,
    WebError,
    WebErrorCode,
    WebService,
)


def search(web: WebService, query: str = "q", max_results: int | None = None) -> SearchResult:
    return asyncio.run(web.search(SearchRequest(query, max_results)))


def error_of(fn: object) -> WebError:
    with pytest.raises(WebError) as info:
        fn()  # type: ignore[operator]
    return info.value


def test_duplicate_search_id_is_rejected_at_registration() -> None:
    web = WebService()
    web.register_search(FakeSearch("a"))
    err = error_of(lambda: web.register_search(FakeSearch("a")))
    assert err.code == WebErrorCode.DUPLICATE_PROVIDER
    assert '"a"' in err.message


def test_search_and_fetch_ids_are_separate_namespaces() -> None:
    web = WebService()
    web.register_search(FakeSearch("same"))
    web.register_fetch(FakeFetch("same"))  # no error
    assert web.search_provider_ids() == ["same"]
    assert web.fetch_provider_ids() == ["same"]


def test_configured_missing_provider() -> None:
    web = WebService(ProviderSelection(search="nope"))
    web.register_search(FakeSearch("a"))
    err = error_of(lambda: search(web))
    assert err.code == WebErrorCode.PROVIDER_CONFIGURED_MISSING
    assert '"nope"' in err.message


def test_configured_but_unavailable_provider() -> None:
    web = WebService(ProviderSelection(search="a"))
    fake = FakeSearch("a", is_available=False)
    web.register_search(fake)
    web.register_search(FakeSearch("b"))
    err = error_of(lambda: search(web))
    assert err.code == WebErrorCode.PROVIDER_CONFIGURED_UNAVAILABLE
    assert fake.calls == []


def test_configured_available_provider_runs_even_with_other_usable_ones() -> None:
    web = WebService(ProviderSelection(search="b"))
    a, b = FakeSearch("a"), FakeSearch("b")
    web.register_search(a)
    web.register_search(b)
    search(web)
    assert (len(a.calls), len(b.calls)) == (0, 1)


def test_no_provider_registered_is_unavailable() -> None:
    err = error_of(lambda: search(WebService()))
    assert err.code == WebErrorCode.PROVIDER_UNAVAILABLE


def test_only_unavailable_providers_is_unavailable() -> None:
    web = WebService()
    web.register_search(FakeSearch("a", is_available=False))
    err = error_of(lambda: search(web))
    assert err.code == WebErrorCode.PROVIDER_UNAVAILABLE


def test_several_usable_providers_are_ambiguous_never_picked_by_order() -> None:
    web = WebService()
    a, b = FakeSearch("b-second"), FakeSearch("a-first")
    web.register_search(a)
    web.register_search(b)
    err = error_of(lambda: search(web))
    assert err.code == WebErrorCode.PROVIDER_AMBIGUOUS
    assert "a-first, b-second" in err.message
    assert a.calls == [] and b.calls == []


@pytest.mark.parametrize("order", ["unusable-first", "usable-first"])
def test_exactly_one_usable_provider_runs_whatever_the_registration_order(order: str) -> None:
    web = WebService()
    usable, unusable = FakeSearch("u"), FakeSearch("x", is_available=False)
    for p in (unusable, usable) if order == "unusable-first" else (usable, unusable):
        web.register_search(p)
    search(web)
    assert len(usable.calls) == 1


def test_fetch_does_not_fall_back_to_a_search_provider() -> None:
    web = WebService()
    web.register_search(FakeSearch("a"))
    err = error_of(lambda: asyncio.run(web.fetch(FetchRequest("https://a.test/"))))
    assert err.code == WebErrorCode.PROVIDER_UNAVAILABLE


def test_selection_happens_at_every_call() -> None:
    web = WebService()
    assert error_of(lambda: search(web)).code == WebErrorCode.PROVIDER_UNAVAILABLE
    late = FakeSearch("late")
    dispose = web.register_search(late)
    search(web)
    assert len(late.calls) == 1
    dispose()
    assert error_of(lambda: search(web)).code == WebErrorCode.PROVIDER_UNAVAILABLE


def test_selection_source_is_read_per_call() -> None:
    current = {"sel": ProviderSelection(search="a")}
    web = WebService(lambda: current["sel"])
    a, b = FakeSearch("a"), FakeSearch("b")
    web.register_search(a)
    web.register_search(b)
    search(web)
    current["sel"] = ProviderSelection(search="b")
    search(web)
    assert (len(a.calls), len(b.calls)) == (1, 1)


def test_seam_cap_truncates_and_sets_truncated() -> None:
    web = WebService()
    web.register_search(FakeSearch(canned={"q": result("u1", "u2", "u3", content="ans")}))
    out = search(web, max_results=2)
    assert [s.url for s in out.sources] == ["u1", "u2"]
    assert out.truncated is True
    assert out.content == "ans"


def test_seam_leaves_results_within_the_cap_unchanged() -> None:
    original = result("u1", "u2", content="", truncated=True)
    web = WebService()
    web.register_search(FakeSearch(canned={"q": original}))
    assert search(web, max_results=2) == original
    assert search(web, max_results=None) == original


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_seam_rejects_a_bad_max_results(bad: object) -> None:
    web = WebService()
    fake = FakeSearch()
    web.register_search(fake)
    err = error_of(lambda: search(web, max_results=bad))  # type: ignore[arg-type]
    assert err.code == WebErrorCode.INVALID_ARGUMENTS
    assert fake.calls == []


def test_provider_bug_becomes_a_coded_provider_error() -> None:
    async def boom(request: SearchRequest, ctx: CallContext) -> SearchResult:
        raise KeyError("results")

    web = WebService()
    web.register_search(FakeSearch("buggy", handler=boom))
    err = error_of(lambda: search(web))
    assert err.code == WebErrorCode.PROVIDER_ERROR
    assert isinstance(err.cause, KeyError)
    assert "buggy" in err.message


@pytest.mark.parametrize(
    "bad",
    [
        {"not": "a result"},
        SearchResult(sources=(Source(url=""),)),
        SearchResult(sources=(Source(url="u", title=3),)),  # type: ignore[arg-type]
        SearchResult(sources=("u",)),  # type: ignore[arg-type]
        SearchResult(content=5),  # type: ignore[arg-type]
        SearchResult(truncated="yes"),  # type: ignore[arg-type]
    ],
    ids=["not-a-result", "empty-url", "int-title", "str-source", "int-content", "str-truncated"],
)
def test_malformed_provider_result_is_a_provider_error(bad: object) -> None:
    async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
        return bad  # type: ignore[return-value]

    web = WebService()
    web.register_search(FakeSearch(handler=handler))
    assert error_of(lambda: search(web)).code == WebErrorCode.PROVIDER_ERROR


def test_malformed_fetch_result_is_a_provider_error() -> None:
    class BadFetch(FakeFetch):
        async def fetch(self, request: FetchRequest, ctx: CallContext) -> FetchResult:
            return FetchResult(url=request.url, status_code="200", body=FetchBody("text", "x"))  # type: ignore[arg-type]

    web = WebService()
    web.register_fetch(BadFetch())
    err = error_of(lambda: asyncio.run(web.fetch(FetchRequest("https://a.test/"))))
    assert err.code == WebErrorCode.PROVIDER_ERROR


def test_call_context_reaches_the_provider_unchanged() -> None:
    seen: list[OutgoingRequest] = []
    ctx = CallContext(latest_prompt="what changed?", record_request=seen.append)
    fake = FakeSearch()
    web = WebService()
    web.register_search(fake)
    asyncio.run(web.search(SearchRequest("q"), ctx))
    assert fake.contexts == [ctx]
    fake.contexts[0].record(OutgoingRequest("fake", "POST", "https://x.test", b"{}"))
    assert len(seen) == 1


def test_recorder_failure_propagates_to_the_provider() -> None:
    def broken(_: OutgoingRequest) -> None:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        CallContext(record_request=broken).record(OutgoingRequest("p", "POST", "https://x.test", b"{}"))


def test_cancellation_reaches_the_provider() -> None:
    cancelled = []

    async def hang(request: SearchRequest, ctx: CallContext) -> SearchResult:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(request.query)
            raise
        raise AssertionError("unreachable")

    async def main() -> None:
        web = WebService()
        started = asyncio.Event()

        async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
            started.set()
            return await hang(request, ctx)

        web.register_search(FakeSearch(handler=handler))
        task = asyncio.create_task(web.search(SearchRequest("q")))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cancelled == ["q"]


def test_web_error_keeps_code_message_and_cause() -> None:
    cause = OSError("reset")
    err = WebError(WebErrorCode.PROVIDER_ERROR, "went wrong", cause=cause)
    assert (err.code, err.message, err.cause, str(err)) == ("WEB_PROVIDER_ERROR", "went wrong", cause, "went wrong")
    assert err.__cause__ is cause


# -- fetch namespace selection ---------------------------------------------------------------------


def fetch(web: WebService) -> FetchResult:
    return asyncio.run(web.fetch(FetchRequest("https://a.test/")))


def test_fetch_selection_errors_mirror_search() -> None:
    missing = WebService(ProviderSelection(fetch="nope"))
    missing.register_fetch(FakeFetch("a"))
    assert error_of(lambda: fetch(missing)).code == WebErrorCode.PROVIDER_CONFIGURED_MISSING

    unavailable = WebService(ProviderSelection(fetch="a"))
    unavailable.register_fetch(FakeFetch("a", is_available=False))
    assert error_of(lambda: fetch(unavailable)).code == WebErrorCode.PROVIDER_CONFIGURED_UNAVAILABLE

    ambiguous = WebService()
    ambiguous.register_fetch(FakeFetch("a"))
    ambiguous.register_fetch(FakeFetch("b"))
    assert error_of(lambda: fetch(ambiguous)).code == WebErrorCode.PROVIDER_AMBIGUOUS

    assert error_of(lambda: ambiguous.register_fetch(FakeFetch("a"))).code == WebErrorCode.DUPLICATE_PROVIDER


# -- provider bugs never escape as raw exceptions -------------------------------------------------


def test_registering_something_that_is_not_a_provider_is_refused() -> None:
    web = WebService()
    assert error_of(lambda: web.register_fetch(FakeSearch("s"))).code == WebErrorCode.CONFIG_INVALID  # type: ignore[arg-type]
    assert error_of(lambda: web.register_search(object())).code == WebErrorCode.CONFIG_INVALID  # type: ignore[arg-type]


def test_an_available_check_that_raises_makes_the_provider_unusable() -> None:
    class Broken(FakeSearch):
        def available(self) -> bool:
            raise KeyError("settings")

    web = WebService()
    web.register_search(Broken("broken"))
    assert error_of(lambda: search(web)).code == WebErrorCode.PROVIDER_UNAVAILABLE
    configured = WebService(ProviderSelection(search="broken"))
    configured.register_search(Broken("broken"))
    assert error_of(lambda: search(configured)).code == WebErrorCode.PROVIDER_CONFIGURED_UNAVAILABLE


def test_a_search_that_raises_before_returning_a_coroutine_is_coded() -> None:
    class Sync(FakeSearch):
        def search(self, request: SearchRequest, ctx: CallContext) -> SearchResult:  # type: ignore[override]
            raise TypeError("not async")

    web = WebService()
    web.register_search(Sync("sync"))
    assert error_of(lambda: search(web)).code == WebErrorCode.PROVIDER_ERROR


def test_a_selection_source_that_misbehaves_is_a_config_error() -> None:
    web = WebService(lambda: None)  # type: ignore[arg-type,return-value]
    web.register_search(FakeSearch())
    assert error_of(lambda: search(web)).code == WebErrorCode.CONFIG_INVALID


@pytest.mark.parametrize(
    "metadata",
    [{"score": float("nan")}, {"when": object()}, {"nested": {"x": float("inf")}}],
    ids=["nan", "object", "nested-infinity"],
)
def test_metadata_that_is_not_json_is_a_provider_error(metadata: dict[object, object]) -> None:
    async def handler(request: SearchRequest, ctx: CallContext) -> SearchResult:
        return SearchResult(sources=(Source("https://a.test", metadata=metadata),))  # type: ignore[arg-type]

    web = WebService()
    web.register_search(FakeSearch(handler=handler))
    assert error_of(lambda: search(web)).code == WebErrorCode.PROVIDER_ERROR


def test_a_fetch_status_outside_http_is_a_provider_error() -> None:
    class Odd(FakeFetch):
        async def fetch(self, request: FetchRequest, ctx: CallContext) -> FetchResult:
            return FetchResult(url=request.url, status_code=42, body=FetchBody("text", "x"))

    web = WebService()
    web.register_fetch(Odd())
    assert error_of(lambda: fetch(web)).code == WebErrorCode.PROVIDER_ERROR


@pytest.mark.parametrize("kind", ["markdown", "json", "HTML", ""])
def test_the_fetch_body_kind_is_the_closed_union_html_or_text(kind: str) -> None:
    """The shared fetch result is unchanged by seed 001: body kind is html or text, nothing else (Markdown
    from the Fetch API is "text"); any other kind is a provider bug, and the schema refuses it too."""

    class Odd(FakeFetch):
        async def fetch(self, request: FetchRequest, ctx: CallContext) -> FetchResult:
            return FetchResult(url=request.url, status_code=200, body=FetchBody(kind, "x"))  # type: ignore[arg-type]

    web = WebService()
    web.register_fetch(Odd())
    assert error_of(lambda: fetch(web)).code == WebErrorCode.PROVIDER_ERROR
    from dsweb_ref.schemas import validate

    good = {"url": "https://a.test/", "status_code": 200, "body": {"kind": "text", "content": "x"}, "truncated": False}
    assert validate("web_fetch.output", good) == []
    assert validate("web_fetch.output", {**good, "body": {"kind": kind, "content": "x"}}) != []
    assert validate("web_fetch.output", {**good, "title": "t"}) != []  # no title field


# -- immutability --------------------------------------------------------------------------------


def test_seam_values_cannot_be_changed_through_the_callers_objects() -> None:
    meta = {"tags": ["a"]}
    src = Source("https://a.test", metadata=meta)
    meta["tags"].append("b")
    meta["new"] = 1
    assert dict(src.metadata) == {"tags": ["a"]}
    with pytest.raises(TypeError):
        src.metadata["x"] = 1  # type: ignore[index]
    assert hash(src) == hash(Source("https://a.test", metadata={"other": 1}))
    listed = [src]
    result = SearchResult(sources=listed)  # type: ignore[arg-type]
    listed.append(Source("https://b.test"))
    assert isinstance(result.sources, tuple) and len(result.sources) == 1
    out = result.to_json()
    out["sources"][0]["metadata"]["tags"].append("c")
    assert dict(src.metadata) == {"tags": ["a"]}


# -- the seam / provider / tool split --------------------------------------------------------------


def test_tools_never_import_providers_and_providers_never_import_tools() -> None:
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "dsweb_ref"

    def imports(folder: str) -> set[str]:
        names: set[str] = set()
        for path in (package / folder).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom):
                    names.add(("." * node.level) + (node.module or ""))
                elif isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
        return names

    def touches(names: set[str], *packages: str) -> list[str]:
        return sorted(n for n in names if set(n.split(".")) & set(packages))

    assert touches(imports("tools"), "providers") == []
    assert touches(imports("providers"), "tools", "certification") == []
