"""Test-mode name resolution and dialling for the SSRF checks (adapter protocol ``test_network``).

The suite decides what every name resolves to and where every address is dialled, so an
implementation's fetcher can be tested against private, metadata and rebinding answers while no
packet leaves loopback and the implementation's address policy stays exactly as shipped:

* ``resolve``: name -> a list of successive answers (each a list of IP strings). Lookup *n* of a
  name gets answer *n*; the last answer repeats. A name not listed does not resolve.
* ``dial``: IP string -> a loopback port. A connection to a listed address goes to
  ``127.0.0.1:<port>``; any other address refuses the connection.

The policy check must run on the resolved addresses (never on the loopback port behind them): the
suite dials every address it marks private to a trap that counts connections.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpcore

__all__ = ["SandboxDialer", "SandboxNetwork", "SandboxResolver"]


@dataclass
class SandboxResolver:
    """An async resolver (``host -> [ip, ...]``) answering from the suite's table."""

    answers: Mapping[str, Sequence[Sequence[str]]]
    lookups: dict[str, int] = field(default_factory=dict)

    async def __call__(self, host: str) -> list[str]:
        name = host.rstrip(".").lower()
        table = self.answers.get(name)
        if not table:
            raise OSError(f"test network: {host!r} does not resolve")
        count = self.lookups.get(name, 0)
        self.lookups[name] = count + 1
        return list(table[min(count, len(table) - 1)])


class SandboxDialer(httpcore.AsyncNetworkBackend):
    """Dials each listed address on its loopback port; refuses every other address."""

    def __init__(self, ports: Mapping[str, int]) -> None:
        self.ports = dict(ports)
        self.dialled: list[str] = []
        self._real = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore backend interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.dialled.append(host)
        target = self.ports.get(host)
        if target is None:
            raise httpcore.ConnectError(f"test network: no route to {host}")
        return await self._real.connect_tcp("127.0.0.1", target, timeout=timeout)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("test network: no Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._real.sleep(seconds)


@dataclass(frozen=True)
class SandboxNetwork:
    """The ``test_network`` configure param, parsed."""

    resolve: Mapping[str, Sequence[Sequence[str]]]
    dial: Mapping[str, int]

    @classmethod
    def from_json(cls, data: Any) -> SandboxNetwork | None:
        if not isinstance(data, Mapping):
            return None
        resolve = {str(k).lower(): [list(map(str, a)) for a in v] for k, v in dict(data.get("resolve", {})).items()}
        dial = {str(k): int(v) for k, v in dict(data.get("dial", {})).items()}
        return cls(resolve, dial)

    def to_json(self) -> dict[str, Any]:
        return {"resolve": {k: [list(a) for a in v] for k, v in self.resolve.items()}, "dial": dict(self.dial)}

    def resolver(self) -> SandboxResolver:
        return SandboxResolver(self.resolve)

    def dialer(self) -> SandboxDialer:
        return SandboxDialer(self.dial)
