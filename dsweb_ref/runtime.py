"""Composition root: settings -> providers -> seam -> tools.

The only place that knows every provider. Tools receive the seam, providers
receive the settings source; neither knows the other (seed 000's split).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self

import httpx

from ._context import CallContext
from ._exceptions import WebError
from ._protocols import StandaloneUsage
from ._service import ProviderSelection, WebService
from ._types import FetchRequest, FetchResult
from .netguard import AddressPolicy
from .providers.deepseek_fetch_api import DeepSeekFetchApi
from .providers.deepseek_official import DeepSeekMessagesSearch
from .providers.deepseek_search_api import PROVIDER_ID as SEARCH_API_ID
from .providers.deepseek_search_api import DeepSeekSearchApi
from .providers.http_fetch import HttpFetchConfig, HttpFetchProvider
from .providers.scripted import PROVIDER_ID as SCRIPTED_ID
from .providers.scripted import ScriptedSearch
from .providers.standalone_messages import MessagesStandaloneSearch
from .providers.standalone_responses import ResponsesStandaloneSearch
from .settings import Settings
from .standalone_accounts import Resolution
from .tools.standalone_search import StandaloneSearchTool
from .tools.web_fetch import WebFetchTool
from .tools.web_search import SearchToolSettings, WebSearchTool

__all__ = [
    "Runtime",
    "build_runtime",
    "chat_tool_definitions",
    "http_fetch_config",
    "main_model_tools",
    "scripted_runtime",
    "standalone_search_tool",
]


if TYPE_CHECKING:
    from .tools.evidence_search import EvidenceSearchTool


def http_fetch_config(settings: Settings) -> HttpFetchConfig:
    return HttpFetchConfig.from_settings(settings.http_fetch)


def _policy(settings: Settings) -> AddressPolicy:
    return AddressPolicy(nat64_prefixes=AddressPolicy.parse_nat64_prefixes(settings.netguard.nat64_prefixes))


class _HttpFetchPerOperation:
    """The ``http`` provider with its limits read from the settings snapshot of each fetch,
    so a settings change applies to the next operation like every other setting does."""

    id = "http"

    def __init__(self, settings: Callable[[], Settings]) -> None:
        self._settings = settings

    def available(self) -> bool:
        return True

    async def fetch(self, request: FetchRequest, ctx: CallContext) -> FetchResult:
        settings = self._settings()
        return await HttpFetchProvider(http_fetch_config(settings), policy=_policy(settings)).fetch(request, ctx)


class _Closable(Protocol):
    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class Runtime:
    """The tools over the registered providers. The DeepSeek providers keep pooled HTTP clients:
    ``await runtime.aclose()`` or ``async with runtime:`` closes those of the running event loop
    (the end of an ``asyncio.run`` closes its own anyway)."""

    settings: Callable[[], Settings]
    web: WebService
    resources: tuple[_Closable, ...] = ()

    async def aclose(self) -> None:
        for resource in self.resources:
            await resource.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def search_tool(self) -> WebSearchTool:
        t = self.settings().tools
        return WebSearchTool(
            self.web,
            SearchToolSettings(
                search_max_queries=t.search_max_queries,
                search_max_results=t.search_max_results,
                search_max_output_chars=t.search_max_output_chars,
                model_text="summary" if t.search_model_text == "summary" else "snippet",
                summary_max_chars=t.search_summary_max_chars,
                summary_total_chars=t.search_summary_total_chars,
                search_operators=self._search_api_selected(),
            ),
        )

    def _search_api_selected(self) -> bool:
        """Whether searches go to the Search API now (its operators are then worth naming to the model)."""
        try:
            return self.web.select_search().id == SEARCH_API_ID
        except WebError:
            return False

    def fetch_tool(self) -> WebFetchTool:
        return WebFetchTool(self.web, max_output_chars=self.settings().tools.fetch_max_output_chars)

    def evidence_tool(self) -> EvidenceSearchTool:
        """The seed 002 evidence ``web_search``; its URL checks use the fetch provider's address policy."""
        # Imported here: its ranking stack (bm25s, numpy, pythainlp) costs ~0.2 s, which every other
        # command and every adapter start would otherwise pay.
        from .tools.evidence_search import EvidenceSearchTool

        return EvidenceSearchTool(self.web, policy=_policy(self.settings()))


def build_runtime(
    settings: Callable[[], Settings] = Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    environ: Mapping[str, str] | None = None,
    http_fetch: HttpFetchProvider | None = None,
) -> Runtime:
    """Register the four shipped providers; selection follows ``settings`` at every call.

    ``transport`` and ``environ`` reach the DeepSeek providers only (tests, the
    emulator); the local HTTP fetch provider keeps its own strict network path.
    """
    web = WebService(lambda: settings().provider_selection())
    messages = DeepSeekMessagesSearch(settings, transport=transport, environ=environ)
    search_api = DeepSeekSearchApi(settings, transport=transport, environ=environ)
    fetch_api = DeepSeekFetchApi(settings, transport=transport, environ=environ)
    web.register_search(messages)
    web.register_search(search_api)
    web.register_fetch(fetch_api)
    web.register_fetch(http_fetch or _HttpFetchPerOperation(settings))
    return Runtime(settings=settings, web=web, resources=(messages, search_api, fetch_api))


def standalone_search_tool(
    resolution: Resolution,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    environ: Mapping[str, str] | None = None,
    on_usage: Callable[[StandaloneUsage], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    stream: bool = False,
) -> StandaloneSearchTool | None:
    """The seed-003 tool for a selection made once, at assembly (``standalone_accounts.resolve``):
    the route is copied into the backend here, so a later config change needs a new runtime.
    None when the selection registers no tool. An unusable assigned search model is told to
    ``on_notice`` exactly once per call: once per runtime built (seed 003: notify once).
    ``stream`` asks the backend for server-sent events (seed 003 leaves streaming open)."""
    route = resolution.route
    if route is None:
        if resolution.notice is not None and on_notice is not None:
            on_notice(resolution.notice)
        return None
    kind = MessagesStandaloneSearch if route.protocol == "messages" else ResponsesStandaloneSearch
    backend = kind(route.url, route.model, route.api_key_env, transport=transport, environ=environ, stream=stream)
    return StandaloneSearchTool(backend, on_usage=on_usage, connection=route.account, model=route.model)


class _Described(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> dict[str, Any]: ...


def chat_tool_definitions(tools: Sequence[_Described]) -> list[dict[str, Any]]:
    """The Chat Completions ``tools`` array the main model sees for ``tools``, in order."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in tools
    ]


def main_model_tools(
    resolution: Resolution, others: Sequence[_Described] = (), **assembly: Any
) -> list[dict[str, Any]]:
    """The main model's tool list for one runtime: the standalone ``web_search`` first when the
    selection registers it, then ``others``. Seed 003: switching between two valid search models
    leaves this list byte-identical (nothing of the route reaches a definition); only switching
    the search on or off changes it."""
    search = standalone_search_tool(resolution, **assembly)
    return chat_tool_definitions([search, *others] if search is not None else list(others))


def scripted_runtime(
    scripted_base: str, settings: Callable[[], Settings] = Settings, transport: httpx.AsyncBaseTransport | None = None
) -> Runtime:
    """The tools over the emulator's conformance search route alone (provider ``scripted``, no fetch):
    what certification's differential checks compare an implementation with. Caps come from ``settings``;
    ``transport``, when given, carries every search and stays open (else each search opens and closes one)."""
    web = WebService(ProviderSelection(search=SCRIPTED_ID))
    web.register_search(ScriptedSearch(scripted_base, transport=transport))
    return Runtime(settings=settings, web=web)
