"""A read-only review (R4) found a false pass in ssrf.deadline: a fetcher that resolved and connected with no time limit
and started its timeout_s only once connected was certified by the whole ssrf profile; against a connect that hangs,
a call with timeout_s 1 stayed open 134 s. The check's rule: configure's timeout_s covers the whole fetch (seed 001's
HTTP provider "retains its own ... resource limits"). No row had a fetch that hangs before reaching the server: the
test network dials loopback, where the kernel completes the handshake even if the server never accepts.

The slow-connect row's host is dialled to a loopback listener that never accepts, its accept queue filled, so the
kernel drops the fetcher's handshake; the call is timed from when it was sent. The review's reading is made here in
the reference by wrapping its pinned backend's connect (resolve, vet, dial) so the deadline does not bound it, and
fails exactly that row; the reference passes it, and so does a kernel that refuses or completes the connect at once.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable
from typing import Any

import pytest

from dsweb_ref.certification.checks import ssrf_limits
from dsweb_ref.netguard.transport import PinnedNetworkBackend

from ._readings import fails_exactly, passes_rows

DEADLINE, TABLE, ROW = "ssrf.deadline", "DEADLINE_CASES", "slow-connect"


def _listeners(monkeypatch: pytest.MonkeyPatch, after: Callable[[ssrf_limits._HungConnect], None] | None = None,
               ) -> list[ssrf_limits._HungConnect]:
    """Every listener the check opens, kept for the test to look at; ``after`` run on each once it is open."""
    opened: list[ssrf_limits._HungConnect] = []
    original = ssrf_limits._HungConnect.open

    def open_(self: ssrf_limits._HungConnect) -> None:
        original(self)
        opened.append(self)
        if after is not None:
            after(self)

    monkeypatch.setattr(ssrf_limits._HungConnect, "open", open_)
    return opened


def test_the_reference_passes_the_slow_connect_row_and_closes_its_listener(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _listeners(monkeypatch)
    passes_rows(ssrf_limits, TABLE, DEADLINE, ROW, monkeypatch)
    assert opened and all(hung.ended for hung in opened)
    assert all(made.fileno() == -1 for hung in opened for made in hung._sockets)  # listener and queue closed


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the dropped handshake is Linux's behaviour")
def test_a_connect_to_the_listener_hangs_here() -> None:
    with ssrf_limits._hung_connect() as hung:
        probe = socket.socket()
        probe.settimeout(0.5)
        try:
            with pytest.raises(TimeoutError):
                probe.connect(("127.0.0.1", hung.port))
        finally:
            probe.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the dropped handshake is Linux's behaviour")
def test_a_connect_outside_the_deadline_fails_exactly_the_slow_connect_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """The review's reading: the deadline does not bound the connect (resolve and dial); cancelled at the deadline,
    the fetch still waits for its connect to end (here, refused once the check closes the listener)."""
    original = PinnedNetworkBackend.connect_tcp

    async def connect_tcp(self: PinnedNetworkBackend, host: str, port: int, **options: Any) -> Any:
        dialling = asyncio.ensure_future(original(self, host, port, **options))
        try:
            return await asyncio.shield(dialling)
        except asyncio.CancelledError:
            await asyncio.wait({dialling})  # the connect runs to its end, whatever the deadline
            if not dialling.cancelled() and dialling.exception() is None:
                await dialling.result().aclose()
            raise

    monkeypatch.setattr(PinnedNetworkBackend, "connect_tcp", connect_tcp)
    fails_exactly(ssrf_limits, TABLE, DEADLINE, ROW, monkeypatch)


def _refusing(hung: ssrf_limits._HungConnect) -> None:
    """A kernel that refuses the connect at once: nothing listens at the port (the row still names the listener
    open, as such a kernel's would be)."""
    for made in hung._sockets:
        made.close()


def test_a_kernel_refusing_the_connect_at_once_passes_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _listeners(monkeypatch, _refusing)
    passes_rows(ssrf_limits, TABLE, DEADLINE, ROW, monkeypatch)
    assert opened


def test_a_kernel_completing_the_connect_passes_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    # No connection of its own in the accept queue: the fetcher's handshake completes, and the request goes
    # unanswered (as on a kernel that never drops a handshake).
    monkeypatch.setattr(ssrf_limits, "FILL", 0)
    passes_rows(ssrf_limits, TABLE, DEADLINE, ROW, monkeypatch)
