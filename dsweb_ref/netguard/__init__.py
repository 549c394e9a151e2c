"""Network guard for fetching untrusted URLs: public addresses only, pinned connections, bounded bodies.

Layers, outermost first:

* ``check_url`` refuses malformed, ambiguous and credentialed URLs, special
  host names and non-public IP literals (in any numeric spelling) with no I/O.
* ``PinnedNetworkBackend`` resolves each connection's host once, refuses the
  host if any answer is non-public, and dials one of the checked answers, while
  TLS and the ``Host`` header keep the original name.
* ``read_capped`` and friends bound what is read and decoded.
"""

from .addresses import DEFAULT_POLICY, METADATA_ADDRESSES, AddressPolicy, IPAddress, IPNetwork, blocked_reason
from .body import classify_content_type, decode_text, pick_charset, read_capped
from .hosts import BLOCKED_NAME_SUFFIXES, BLOCKED_NAMES, parse_host, parse_ipv4_literal
from .resolve import Resolver, system_resolver, vet_host
from .transport import PinnedNetworkBackend, PinnedTransport
from .urls import check_url, check_url_text, effective_port

__all__ = [
    "BLOCKED_NAMES",
    "BLOCKED_NAME_SUFFIXES",
    "DEFAULT_POLICY",
    "METADATA_ADDRESSES",
    "AddressPolicy",
    "IPAddress",
    "IPNetwork",
    "PinnedNetworkBackend",
    "PinnedTransport",
    "Resolver",
    "blocked_reason",
    "check_url",
    "check_url_text",
    "classify_content_type",
    "decode_text",
    "effective_port",
    "parse_host",
    "parse_ipv4_literal",
    "pick_charset",
    "read_capped",
    "system_resolver",
    "vet_host",
]
