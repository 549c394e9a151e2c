"""The seam: provider registry, per-call selection and the result cap.

Selection happens on every call, never at registration, so a provider
registered (or a setting changed) later is used by the next call. With nothing
configured exactly one available provider may run; registration order never
breaks a tie.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ._context import CallContext
from ._exceptions import WebError, WebErrorCode
from ._protocols import FetchProvider, SearchProvider
from ._types import FetchBody, FetchRequest, FetchResult, SearchRequest, SearchResult, Source
from ._validate import is_int_at_least

__all__ = ["ProviderSelection", "WebService"]

P = TypeVar("P", SearchProvider, FetchProvider)


@dataclass(frozen=True, slots=True)
class ProviderSelection:
    """Configured provider ids; ``None`` means pick the single available one."""

    search: str | None = None
    fetch: str | None = None


class _Registry(Generic[P]):
    def __init__(self, kind: str, protocol: type[SearchProvider] | type[FetchProvider]) -> None:
        self.kind = kind
        self._protocol = protocol
        self._providers: dict[str, P] = {}

    def register(self, provider: P) -> Callable[[], None]:
        # Refused here rather than failing at the first call with an AttributeError.
        if not isinstance(provider, self._protocol):
            raise WebError(
                WebErrorCode.CONFIG_INVALID,
                f"not a web {self.kind} provider: {type(provider).__name__} lacks id, available() or {self.kind}()",
            )
        pid = provider.id
        if not isinstance(pid, str) or not pid:
            raise WebError(WebErrorCode.CONFIG_INVALID, f"a {self.kind} provider needs a non-empty string id")
        if pid in self._providers:
            raise WebError(
                WebErrorCode.DUPLICATE_PROVIDER,
                f'a web {self.kind} provider with id "{pid}" is already registered',
            )
        self._providers[pid] = provider

        def dispose() -> None:
            if self._providers.get(pid) is provider:
                del self._providers[pid]

        return dispose

    def ids(self) -> list[str]:
        return list(self._providers)

    def select(self, configured: str | None) -> P:
        if configured:
            provider = self._providers.get(configured)
            if provider is None:
                raise WebError(
                    WebErrorCode.PROVIDER_CONFIGURED_MISSING,
                    f'configured web {self.kind} provider "{configured}" is not registered',
                )
            if not _available(provider):
                raise WebError(
                    WebErrorCode.PROVIDER_CONFIGURED_UNAVAILABLE,
                    f'configured web {self.kind} provider "{configured}" is registered but unavailable',
                )
            return provider
        usable = [p for p in self._providers.values() if _available(p)]
        if not usable:
            raise WebError(WebErrorCode.PROVIDER_UNAVAILABLE, f"no usable web {self.kind} provider is registered")
        if len(usable) > 1:
            ids = ", ".join(sorted(p.id for p in usable))
            raise WebError(
                WebErrorCode.PROVIDER_AMBIGUOUS,
                f"multiple usable web {self.kind} providers are registered ({ids}); configure one explicitly",
            )
        return usable[0]


def _available(provider: SearchProvider | FetchProvider) -> bool:
    # available() must be cheap and must not fail; one that raises cannot be used.
    try:
        return provider.available() is True
    except Exception:
        return False


class WebService:
    """Registry and dispatcher for search and fetch providers (separate namespaces)."""

    def __init__(
        self,
        selection: ProviderSelection | Callable[[], ProviderSelection] = ProviderSelection(),
    ) -> None:
        self._selection = selection if callable(selection) else (lambda: selection)
        self._search = _Registry[SearchProvider]("search", SearchProvider)
        self._fetch = _Registry[FetchProvider]("fetch", FetchProvider)

    def register_search(self, provider: SearchProvider) -> Callable[[], None]:
        return self._search.register(provider)

    def register_fetch(self, provider: FetchProvider) -> Callable[[], None]:
        return self._fetch.register(provider)

    def search_provider_ids(self) -> list[str]:
        return self._search.ids()

    def fetch_provider_ids(self) -> list[str]:
        return self._fetch.ids()

    def _current_selection(self) -> ProviderSelection:
        try:
            selection = self._selection()
        except WebError:
            raise
        except Exception as exc:
            raise WebError(WebErrorCode.CONFIG_INVALID, f"reading the provider selection failed: {exc}") from exc
        if not isinstance(selection, ProviderSelection):
            raise WebError(WebErrorCode.CONFIG_INVALID, "the provider selection source returned no ProviderSelection")
        return selection

    def select_search(self) -> SearchProvider:
        return self._search.select(self._current_selection().search)

    def select_fetch(self) -> FetchProvider:
        return self._fetch.select(self._current_selection().fetch)

    async def search(self, request: SearchRequest, ctx: CallContext | None = None) -> SearchResult:
        max_results = request.max_results
        if max_results is not None and not is_int_at_least(max_results):
            raise WebError(WebErrorCode.INVALID_ARGUMENTS, "max_results must be a positive integer")
        provider = self.select_search()
        result = await _guard(provider.id, lambda: provider.search(request, ctx or CallContext()))
        result = _checked_search_result(provider.id, result)
        if max_results is not None and len(result.sources) > max_results:
            return SearchResult(sources=result.sources[:max_results], content=result.content, truncated=True)
        return result

    async def fetch(self, request: FetchRequest, ctx: CallContext | None = None) -> FetchResult:
        provider = self.select_fetch()
        result = await _guard(provider.id, lambda: provider.fetch(request, ctx or CallContext()))
        return _checked_fetch_result(provider.id, result)


T = TypeVar("T")


async def _guard(provider_id: str, call: Callable[[], Awaitable[T]]) -> T:
    # A provider bug must still surface as a coded error, never a raw exception; the call is
    # made inside the guard so a synchronous raise (e.g. a non-async search) is caught too.
    try:
        return await call()
    except (WebError, asyncio.CancelledError):
        raise
    except Exception as exc:
        raise WebError(
            WebErrorCode.PROVIDER_ERROR,
            f'web provider "{provider_id}" failed: {type(exc).__name__}: {exc}',
            cause=exc,
        ) from exc


def _bad(provider_id: str, what: str) -> WebError:
    return WebError(WebErrorCode.PROVIDER_ERROR, f'web provider "{provider_id}" returned a malformed result: {what}')


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(value: object) -> bool:
    # A lone surrogate is not Unicode: it cannot be encoded as UTF-8, so it must never reach a model.
    return isinstance(value, str) and _SURROGATE.search(value) is None


def _opt_str(value: object) -> bool:
    return value is None or _text(value)


def _json_safe(value: object) -> bool:
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError):  # UnicodeEncodeError (a lone surrogate) is a ValueError
        return False
    return True


def _checked_search_result(provider_id: str, result: object) -> SearchResult:
    if not isinstance(result, SearchResult):
        raise _bad(provider_id, f"expected SearchResult, got {type(result).__name__}")
    if not _opt_str(result.content):
        raise _bad(provider_id, "content must be a string (valid Unicode) or None")
    if not isinstance(result.truncated, bool):
        raise _bad(provider_id, "truncated must be a bool")
    sources = result.sources
    if not isinstance(sources, Sequence) or isinstance(sources, (str, bytes)):
        raise _bad(provider_id, "sources must be a sequence")
    for i, s in enumerate(sources):
        if not isinstance(s, Source):
            raise _bad(provider_id, f"sources[{i}] is not a Source")
        if not _text(s.url) or not s.url:
            raise _bad(provider_id, f"sources[{i}].url must be a non-empty string (valid Unicode)")
        for name in ("title", "snippet", "published_at"):
            if not _opt_str(getattr(s, name)):
                raise _bad(provider_id, f"sources[{i}].{name} must be a string (valid Unicode) or None")
        if not isinstance(s.metadata, Mapping) or not _json_safe(dict(s.metadata)):
            raise _bad(provider_id, f"sources[{i}].metadata must be JSON-serialisable (finite numbers, string keys)")
    if not isinstance(sources, tuple):
        result = SearchResult(sources=tuple(sources), content=result.content, truncated=result.truncated)
    return result


def _checked_fetch_result(provider_id: str, result: object) -> FetchResult:
    if not isinstance(result, FetchResult):
        raise _bad(provider_id, f"expected FetchResult, got {type(result).__name__}")
    if not _text(result.url) or not result.url:
        raise _bad(provider_id, "url must be a non-empty string (valid Unicode)")
    if isinstance(result.status_code, bool) or not isinstance(result.status_code, int):
        raise _bad(provider_id, "status_code must be an integer")
    if not 100 <= result.status_code <= 599:
        raise _bad(provider_id, f"status_code {result.status_code} is not an HTTP status")
    if not isinstance(result.body, FetchBody) or result.body.kind not in ("html", "text"):
        raise _bad(provider_id, "body must be a FetchBody of kind html or text")
    if not _text(result.body.content):
        raise _bad(provider_id, "body.content must be a string (valid Unicode)")
    if not isinstance(result.truncated, bool):
        raise _bad(provider_id, "truncated must be a bool")
    return result
