"""dsweb_ref: the executable specification of the web_search and web_fetch tools.

The public names below load on first use (PEP 562), so that importing a submodule — ``dsweb --version``
imports ``dsweb_ref.cli`` — does not pay for asyncio and the seam.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from ._context import CallContext, OutgoingRequest, RequestRecorder
    from ._exceptions import WebError, WebErrorCode
    from ._protocols import FetchProvider, SearchProvider
    from ._service import ProviderSelection, WebService
    from ._types import FetchBody, FetchRequest, FetchResult, SearchRequest, SearchResult, Source

_HOME = {
    "._context": ("CallContext", "OutgoingRequest", "RequestRecorder"),
    "._exceptions": ("WebError", "WebErrorCode"),
    "._protocols": ("FetchProvider", "SearchProvider"),
    "._service": ("ProviderSelection", "WebService"),
    "._types": ("FetchBody", "FetchRequest", "FetchResult", "SearchRequest", "SearchResult", "Source"),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}

__all__ = [
    "CallContext",
    "FetchBody",
    "FetchProvider",
    "FetchRequest",
    "FetchResult",
    "OutgoingRequest",
    "ProviderSelection",
    "RequestRecorder",
    "SearchProvider",
    "SearchRequest",
    "SearchResult",
    "Source",
    "WebError",
    "WebErrorCode",
    "WebService",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_MODULE_OF])
