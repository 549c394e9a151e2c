"""The emulator as a real HTTP server: uvicorn on loopback, in a background thread with its own loop.

``start()`` returns once the socket is listening and uvicorn serves it; ``stop()`` releases every
held request, shuts uvicorn down and joins the thread. Both sync tests and asyncio code can use it,
since nothing runs on the caller's loop.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import sys
import threading
from collections.abc import Iterable
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any, Self

from .auth import Credentials
from .faults import BodyMatch, Fault, FaultQueue, FaultRule, RouteName
from .gate import Gate
from .log import RequestLog
from .scripted import ScriptedStore
from .wire import EmulatorState, RouteTable

if TYPE_CHECKING:
    from ._serve import Serve

__all__ = ["DEFAULT_ACCOUNT_TOKEN", "DEFAULT_API_KEY", "OTHER_TOOLS_PREFIXES", "Emulator", "is_loopback"]

# Public test values, deliberately unlike real DeepSeek keys.
DEFAULT_API_KEY = "dsweb-emulator-key-0001"
DEFAULT_ACCOUNT_TOKEN = "dsweb-emulator-account-0001"
# Other deployments of the Search/Fetch APIs, served beside the public /v1/tools: a gateway's own prefix
# without /v1, the verified development shape (a prefix before /v1), a gateway serving the routes at its
# bare origin (the empty prefix), and a gateway prefix that itself ends in /search. Each is a complete base.
OTHER_TOOLS_PREFIXES = ("/deepseek/tools", "/api/v1/tools", "", "/gw/search")


def quiet_cut_notes() -> None:
    """Drop uvicorn's notes on the answers the emulator's faults cut on purpose ("ASGI callable returned
    without completing response."): with logging unconfigured Python prints them to stderr, over a run's
    own one-line errors. Only when nothing handles them; a configured root still gets them."""
    notes = logging.getLogger("uvicorn.error")
    if not notes.handlers:
        notes.addHandler(logging.NullHandler())


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Emulator:
    """A local DeepSeek web API (Search, Fetch, Anthropic-compatible Messages) on loopback.

    Credentials: any of ``api_keys`` or ``account_tokens`` as ``Authorization: Bearer``; Messages
    also reads ``x-api-key``. ``tools_prefix`` moves the Search/Fetch routes (None drops them, like
    a Messages-only gateway); ``other_tools_prefixes`` serves them under other deployments' bases too
    (default :data:`OTHER_TOOLS_PREFIXES`; ``tools_base`` stays the first one, ``tools_bases`` lists all).
    ``log_limit`` keeps only the newest request records.
    """

    def __init__(
        self,
        *,
        api_keys: Iterable[str] = (DEFAULT_API_KEY,),
        account_tokens: Iterable[str] = (),
        host: str = "127.0.0.1",
        port: int = 0,
        tools_prefix: str | None = "/v1/tools",
        other_tools_prefixes: Iterable[str] = OTHER_TOOLS_PREFIXES,
        allow_non_loopback: bool = False,
        log_limit: int | None = None,
        startup_timeout: float = 10.0,
    ) -> None:
        if not allow_non_loopback and not is_loopback(host):
            raise ValueError(f"refusing to serve on non-loopback host {host!r} (pass allow_non_loopback=True)")
        others = tuple(other_tools_prefixes)
        for prefix in (tools_prefix, *others):  # "" is the bare origin: the routes at /search and /fetch
            if prefix and (not prefix.startswith("/") or prefix.endswith("/")):
                raise ValueError("tools_prefix must be empty, or start with '/' and not end with '/'")
        self.host = host
        self._requested_port = port
        self._startup_timeout = startup_timeout
        self._state = EmulatorState(
            credentials=Credentials.of(api_keys, account_tokens),
            routes=RouteTable(tools_prefix, others),
            log=RequestLog(log_limit),
        )
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._exit_now: asyncio.Event | None = None
        self._error: BaseException | None = None

    # --- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> Self:
        if self._thread is not None:
            raise RuntimeError("emulator already started")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # An explicit IPPROTO_TCP lets asyncio turn Nagle off on accepted sockets; with proto 0 it
        # does not, and every small answer then waits ~40 ms for a delayed ACK.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self._requested_port))
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        self._port = sock.getsockname()[1]
        self._state.base_url = self.base_url
        started = threading.Event()
        # The web stack (uvicorn, starlette) loads here, on the first start, not when the package is
        # imported: adapter processes and most commands import the emulator's names and never serve.
        from ._serve import serve

        self._thread = threading.Thread(
            target=self._run, args=(serve, sock, started), name="dsweb-emulator", daemon=True
        )
        self._thread.start()
        started.wait(self._startup_timeout)
        if self._error is not None or not started.is_set():
            self.stop()
            raise RuntimeError(f"emulator failed to start: {self._error!r}")
        return self

    def _run(self, serve: Serve, sock: socket.socket, started: threading.Event) -> None:
        try:
            with asyncio.Runner() as runner:
                self._loop = runner.get_loop()
                self._exit_now = asyncio.Event()
                runner.run(serve(self._state, sock, started, self._exit_now))
        except BaseException as exc:  # reported by start(); a server thread has nobody else to tell
            self._error = exc
        finally:
            sock.close()
            started.set()  # unblock start() if startup never finished

    def stop(self, timeout: float = 10.0) -> None:
        """Release held requests, stop serving and join the server thread (idempotent)."""
        thread, loop = self._thread, self._loop
        if thread is None:
            return
        self._state.faults.release_gates()
        if loop is not None and self._exit_now is not None:
            try:
                loop.call_soon_threadsafe(self._state.stopping.set)
                loop.call_soon_threadsafe(self._exit_now.set)
            except RuntimeError:  # the loop already ended
                pass
        thread.join(timeout)
        if thread.is_alive():
            raise RuntimeError(f"emulator thread did not stop within {timeout}s")

    # --- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("emulator not started")
        return self._port

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def tools_base(self) -> str:
        """Base for Search and Fetch: append ``/search`` or ``/fetch``."""
        prefix = self._state.routes.tools_prefix
        if prefix is None:
            raise RuntimeError("this emulator serves no tools routes (tools_prefix=None)")
        return self.base_url + prefix

    @property
    def tools_bases(self) -> tuple[str, ...]:
        """Every complete Search/Fetch base served (``tools_base`` first); empty without tools routes."""
        return tuple(self.base_url + prefix for prefix in self._state.routes.tools_prefixes)

    @property
    def messages_base(self) -> str:
        """Base for Messages as the reference client takes it: append ``/messages``."""
        return self.base_url + "/anthropic/v1"

    @property
    def anthropic_base(self) -> str:
        """Base for Anthropic SDKs, which append ``/v1/messages`` themselves."""
        return self.base_url + "/anthropic"

    @property
    def openai_base(self) -> str:
        """Base for OpenAI SDKs (Responses), which append ``/responses`` themselves."""
        return self.base_url + "/v1"

    def trap_url(self, token: str = "manual") -> str:
        return f"{self.base_url}/trap/{token}"

    # --- scripting and observation -----------------------------------------------------------

    @property
    def faults(self) -> FaultQueue:
        return self._state.faults

    @property
    def log(self) -> RequestLog:
        return self._state.log

    @property
    def scripted(self) -> ScriptedStore:
        """The conformance search scenarios (see :mod:`dsweb_ref.emulator.scripted`)."""
        return self._state.scripted

    @property
    def credentials(self) -> Credentials:
        return self._state.credentials

    def accept_api_key(self, key: str) -> None:
        """Accept ``key`` too from now on: a check that configures a key of another shape. The request log
        scrubs it from requests as it does every credential presented (the scrubber remembers each one it
        meets, whole); a response body that quotes a part of it (an in-band error a check injects) is logged
        as sent, in memory only."""
        held = self._state.credentials  # swapped whole: the server loop reads one set or the other
        self._state.credentials = Credentials.of(held.api_keys | {key}, held.account_tokens)

    def accept_account_token(self, token: str) -> None:
        """Accept ``token`` as an account token from now on (a check of the account route)."""
        held = self._state.credentials
        self._state.credentials = Credentials.of(held.api_keys, held.account_tokens | {token})

    def inject(
        self, route: RouteName, fault: Fault, *, times: int | None = 1, when: BodyMatch | None = None
    ) -> FaultRule:
        """Shorthand for ``emu.faults.add(...)``."""
        return self._state.faults.add(route, fault, times=times, when=when)

    @staticmethod
    def gate(name: str = "gate") -> Gate:
        return Gate(name)

    def server_frames(self) -> list[FrameType]:
        """The server thread's stack now, innermost last (empty when it does not run): where it is when a
        request goes unanswered (an idle server waits in its selector)."""
        thread = self._thread
        frame = sys._current_frames().get(thread.ident) if thread is not None and thread.ident else None
        frames: list[FrameType] = []
        while frame is not None:
            frames.append(frame)
            frame = frame.f_back
        return frames[::-1]

    def wait_until_idle(self, timeout: float = 5.0) -> None:
        """Wait until no request is in flight; TimeoutError otherwise."""
        self._state.log.wait_idle(timeout)

    def reset(self, timeout: float = 5.0) -> None:
        """Drop faults (releasing their gates), wait for in-flight requests, then clear the log."""
        self._state.faults.clear()
        self._state.log.wait_idle(timeout)
        self._state.log.clear()

    def __repr__(self) -> str:
        where = self.base_url if self._port is not None else "not started"
        return f"Emulator({where})"

    def describe(self) -> dict[str, Any]:
        """Addresses for printing or handing to another process (no credential values)."""
        tools = self._state.routes.tools_prefix
        return {
            "base_url": self.base_url,
            "tools_base": None if tools is None else self.base_url + tools,
            "messages_base": self.messages_base,
            "anthropic_base": self.anthropic_base,
            "openai_base": self.openai_base,
            "api_keys": len(self._state.credentials.api_keys),
            "account_tokens": len(self._state.credentials.account_tokens),
        }
