"""Test-mode name resolution and dialling for the SSRF checks (adapter protocol ``test_network``).

The suite decides what every name resolves to and where every address is dialled, so an
implementation's fetcher can be tested against private, metadata and rebinding answers while no
packet leaves loopback and the implementation's address policy stays exactly as shipped:

* ``resolve``: name -> a list of successive answers (each a list of IP strings). Lookup *n* of a
  name gets answer *n*; the last answer repeats. A name not listed does not resolve.
* ``dial``: IP string -> a loopback port. A connection to a listed address goes to
  ``127.0.0.1:<port>``; any other address refuses the connection. A dial is matched by address
  value, never by its text: any spelling of a listed address reaches its port (IPv6 compressed or
  not, in brackets, with a zone id; an IPv4-mapped IPv6 address as its IPv4 address; IPv4 in every
  numeric form ``inet_aton`` reads: ``127.1``, ``0x7f.0.0.1``, ``0177.0.0.1``, ``2130706433``), as
  the operating system would connect it. From a hunt (Q-F1): matched as exact text, a private address
  dialled in another spelling (``0:0:0:0:0:0:0:1``, ``0x7f.1``) got no route, a ``WEB_*`` error the
  rows accept, and never reached the trap.

The policy check must run on the resolved addresses (never on the loopback port behind them): the
suite dials every address it marks private to a trap that counts connections.

Environment proxies: a run starts the target with every proxy variable (``HTTP_PROXY``,
``HTTPS_PROXY``, ``ALL_PROXY`` and their lower-case forms) pointing at a trap of its own
(:class:`ProxyTraps`), and ``NO_PROXY`` naming loopback only, so provider traffic to the emulator
is untouched whichever way a client reads them. A fetcher that routes through a proxy would let the
proxy resolve and dial on its behalf, outside its address policy: one connection to a proxy trap
fails the proxy check, and names the variable that was honoured.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import Any

import httpcore

__all__ = ["PROXY_VARIABLES", "ConnectionTrap", "ProxyTraps", "SandboxDialer", "SandboxNetwork", "SandboxResolver",
           "dial_address"]

PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
NO_PROXY = "127.0.0.1,localhost,::1"  # the emulator; every other name would go through the traps


class ConnectionTrap:
    """A loopback listener that accepts, counts and closes every connection at once, so a client
    that reaches it fails fast (empty reply) and the count is final before the client can answer."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port: int = self.sock.getsockname()[1]
        self._count = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            with self._lock:
                self._count += 1  # counted before the close the client is waiting on
            conn.close()

    def connections(self) -> int:
        with self._lock:
            return self._count

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class ProxyTraps:
    """One :class:`ConnectionTrap` per proxy variable, for a whole run (a process's environment is
    fixed when it starts): :meth:`environment` is what the target starts with."""

    def __init__(self) -> None:
        self.traps = {name: ConnectionTrap() for name in PROXY_VARIABLES}

    def environment(self) -> dict[str, str]:
        env = {name: f"http://127.0.0.1:{trap.port}" for name, trap in self.traps.items()}
        return {**env, "NO_PROXY": NO_PROXY, "no_proxy": NO_PROXY}

    def connections(self) -> dict[str, int]:
        """Connections so far, per variable."""
        return {name: trap.connections() for name, trap in self.traps.items()}

    def close(self) -> None:
        for trap in self.traps.values():
            trap.close()


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


_IPV4_NUMERIC = re.compile(r"[0-9a-fA-FxX.]+")  # only a number: inet_aton would read "127.1 junk" as 127.0.0.1


def _ipv4_numeric(text: str) -> IPv4Address | None:
    """``text`` as the operating system's ``inet_aton`` reads it (one to four parts, each decimal, ``0x`` hex or
    ``0`` octal; the last part fills the remaining bytes), the reader a real connection to it goes through; None
    for anything else, and for anything after the number."""
    if not _IPV4_NUMERIC.fullmatch(text):
        return None
    try:
        return IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


def dial_address(host: str) -> IPv4Address | IPv6Address | None:
    """The address a dial of ``host`` connects to, or None for a name: brackets and an IPv6 zone id dropped, an
    IPv4-mapped IPv6 address read as its IPv4 address, IPv4 in any numeric form ``inet_aton`` accepts."""
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    text = text.split("%", 1)[0]
    try:
        address = ip_address(text)
    except ValueError:
        return _ipv4_numeric(text)
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class SandboxDialer(httpcore.AsyncNetworkBackend):
    """Dials each listed address on its loopback port; refuses every other address. Matched by address
    value (:func:`dial_address`), so every spelling of a listed address reaches its port."""

    def __init__(self, ports: Mapping[str, int]) -> None:
        self.ports: dict[IPv4Address | IPv6Address | str, int] = {}
        for key, port in ports.items():
            self.ports.setdefault(dial_address(key) or key, port)  # the first listing of an address wins
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
        target = self.ports.get(dial_address(host) or host)
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
