"""One module per provider. Wire details stay private to each module; the seam
types are all a provider shares with the rest of the package."""

from .deepseek_fetch_api import DeepSeekFetchApi
from .deepseek_official import DeepSeekMessagesSearch
from .deepseek_search_api import DeepSeekSearchApi
from .http_fetch import HttpFetchConfig, HttpFetchProvider

__all__ = ["DeepSeekFetchApi", "DeepSeekMessagesSearch", "DeepSeekSearchApi", "HttpFetchConfig", "HttpFetchProvider"]
