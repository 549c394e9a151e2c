"""The loopback servers of the netguard tests, reused for the evidence pipeline over real HTTP."""

from netguard.conftest import private_listener, server

__all__ = ["private_listener", "server"]
