"""dsweb_ref: the executable specification of the web_search and web_fetch tools."""

from ._context import CallContext, OutgoingRequest, RequestRecorder
from ._exceptions import WebError, WebErrorCode
from ._protocols import FetchProvider, SearchProvider
from ._service import ProviderSelection, WebService
from ._types import FetchBody, FetchRequest, FetchResult, SearchRequest, SearchResult, Source
from ._version import __version__

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
