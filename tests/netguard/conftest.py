from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import trustme

from ._servers import Listener, LocalServer

TLS_HOST = "fetch.test"


@dataclass(frozen=True)
class TLSSetup:
    ca: trustme.CA
    client: ssl.SSLContext

    def server_context(self, hostname: str = TLS_HOST) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert(hostname).configure_cert(ctx)
        return ctx


@pytest.fixture(scope="session")
def tls() -> TLSSetup:
    ca = trustme.CA()
    client = ssl.create_default_context()
    ca.configure_trust(client)
    return TLSSetup(ca, client)


@pytest.fixture
def server() -> Iterator[LocalServer]:
    srv = LocalServer()
    yield srv
    srv.close()


@pytest.fixture
def other_server() -> Iterator[LocalServer]:
    srv = LocalServer()
    yield srv
    srv.close()


@pytest.fixture
def tls_server(tls: TLSSetup) -> Iterator[LocalServer]:
    srv = LocalServer(tls=tls.server_context())
    yield srv
    srv.close()


@pytest.fixture
def private_listener() -> Iterator[Listener]:
    """A listener on 127.0.0.2: loopback to the kernel, non-public to every policy
    the tests use, so any connection counted here is a guard failure."""
    listener = Listener("127.0.0.2")
    yield listener
    listener.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    sock = Listener("127.0.0.1")
    yield sock
    sock.close()


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown so handlers parked on it finish."""
    event = threading.Event()
    yield event
    event.set()
