"""Connection pinning: dial exactly the address that was checked.

``PinnedNetworkBackend`` sits under httpcore's connection pool. Each new
connection resolves the host once, checks every answer, and dials one of those
checked IPs. The URL is never rewritten, so httpcore still uses the original
hostname for the TLS server name (SNI), certificate verification, the ``Host``
header and the pool key. Because the check and the dial happen in the same call
on the same answer, DNS rebinding between "check" and "connect" has no window.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import contextmanager

import httpcore
import httpx

from .._exceptions import WebError, WebErrorCode
from .addresses import DEFAULT_POLICY, AddressPolicy
from .resolve import Resolver, system_resolver, vet_host

__all__ = ["PinnedNetworkBackend", "PinnedTransport"]


class PinnedNetworkBackend(httpcore.AsyncNetworkBackend):
    """A network backend that only dials vetted public addresses."""

    def __init__(
        self,
        *,
        policy: AddressPolicy = DEFAULT_POLICY,
        resolver: Resolver = system_resolver,
        inner: httpcore.AsyncNetworkBackend | None = None,
        max_attempts: int = 4,
    ) -> None:
        self.policy = policy
        self.resolver = resolver
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()
        self._max_attempts = max_attempts

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore backend interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await vet_host(host, policy=self.policy, resolver=self.resolver)
        error: Exception | None = None
        for address in addresses[: self._max_attempts]:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc  # try the next checked answer, never a fresh lookup
        assert error is not None
        raise error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore backend interface)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise WebError(WebErrorCode.BLOCKED_URL, "Unix socket connections are not allowed")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


# httpcore errors and their httpx equivalents, most specific first.
_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.ProxyError, httpx.ProxyError),
)


@contextmanager
def _mapped_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core_type, httpx_type in _ERRORS:
            if isinstance(exc, core_type):
                raise httpx_type(str(exc)) from exc
        raise


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: httpcore.Response) -> None:
        self._response = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped_errors():
            async for chunk in self._response.aiter_stream():
                yield chunk

    async def aclose(self) -> None:
        with _mapped_errors():
            await self._response.aclose()


class PinnedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over an httpcore pool that uses ``PinnedNetworkBackend``.
    No proxy support on purpose: a proxy would resolve and dial on our behalf."""

    def __init__(self, backend: PinnedNetworkBackend, ssl_context: ssl.SSLContext, *, max_connections: int = 4) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            network_backend=backend,
            max_connections=max_connections,
            http1=True,
            http2=False,
            retries=0,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _mapped_errors():
            response = await self._pool.handle_async_request(core_request)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
