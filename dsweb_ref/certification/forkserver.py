"""Check workers forked from a copy of the run's process instead of started as new interpreters.

A new ``python -m dsweb_ref.certification.worker`` spends most of a second of CPU importing what the run
has imported already; a certification run starts two or three, and on a two-core machine that CPU is
taken from the checks. :func:`forking` forks the run's process once, before its event loop and threads
exist, into a small server; :meth:`ForkServer.spawn` asks it for a worker, which it forks off with the
pipes the run made for it, the modules already imported. The worker then runs the ordinary
:func:`~.worker.main`: the same code, in a session of its own, like a started one.

Only on Linux, and only while the run's process has one thread (forking a process with threads can copy
a held lock); elsewhere :func:`active` is None and :mod:`.offload` starts workers as before. The server
ends when the run closes its socket (or dies: the socket then ends too); each worker ends by its stdin,
as a started one does. The server reports each worker's exit status to the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import selectors
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from typing import NoReturn

__all__ = ["ForkServer", "ForkedProcess", "active", "forking"]

_ACTIVE: ForkServer | None = None


def active() -> ForkServer | None:
    """The fork server of the run in progress in this process, or None."""
    return _ACTIVE


@contextlib.contextmanager
def forking() -> Iterator[ForkServer | None]:
    """A fork server for the block, when this process can fork safely (Linux, one thread); else None."""
    global _ACTIVE
    server = ForkServer.start() if _ACTIVE is None else None
    _ACTIVE = server or _ACTIVE
    try:
        yield server
    finally:
        if server is not None:
            _ACTIVE = None
            server.close()


class ForkedProcess:
    """A worker the server forked: the parts of an asyncio subprocess :class:`.offload.Worker` uses."""

    def __init__(self, pid: int, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader,
                 stderr: asyncio.StreamReader, exited: asyncio.Future[int]) -> None:
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr
        self._exited = exited

    @property
    def returncode(self) -> int | None:
        return self._exited.result() if self._exited.done() else None

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)


class ForkServer:
    """The run's side of the server: see the module docstring."""

    def __init__(self, pid: int, control: socket.socket) -> None:
        self.pid = pid
        self._control = control
        self._lock = asyncio.Lock()
        self._pids: asyncio.Queue[int] | None = None
        self._exits: dict[int, asyncio.Future[int]] = {}
        self._early: dict[int, int] = {}
        self._buffer = b""
        self._ended = False

    @classmethod
    def start(cls) -> ForkServer | None:
        if sys.platform != "linux" or threading.active_count() != 1 or not hasattr(socket, "send_fds"):
            return None
        from . import worker  # noqa: F401  (imported here once, so no forked worker imports it again)

        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()  # else the copy would write what this process buffered, again
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the server's own process; its effects are tested)
            ours.close()
            _serve(theirs)
        theirs.close()
        return cls(pid, ours)

    async def spawn(self, limit: int) -> ForkedProcess | None:
        """A new worker with its stdin, stdout and stderr piped to this process (``limit``: the longest
        line its readers take); None when the server is gone (the caller then starts one the ordinary way)."""
        loop = asyncio.get_running_loop()
        async with self._lock:
            if self._ended:
                return None
            if self._pids is None:
                self._pids = asyncio.Queue()
                loop.add_reader(self._control.fileno(), self._on_message)
            pipes = [os.pipe() for _ in range(3)]
            theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
            try:
                socket.send_fds(self._control, [b"fork"], theirs)
                pid = await self._pids.get()
            except OSError:
                pid = -1
            finally:
                for fd in theirs:
                    os.close(fd)
            if pid < 0:
                for fd in (pipes[0][1], pipes[1][0], pipes[2][0]):
                    os.close(fd)
                return None
            exited = self._exits.setdefault(pid, loop.create_future())
            if pid in self._early:
                exited.set_result(self._early.pop(pid))
            stdin = await _writer(loop, pipes[0][1])
            stdout, stderr = await _reader(loop, pipes[1][0], limit), await _reader(loop, pipes[2][0], limit)
            return ForkedProcess(pid, stdin, stdout, stderr, exited)

    def _on_message(self) -> None:
        try:
            data = self._control.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._end()
            return
        self._buffer += data
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            kind, *numbers = line.decode().split()
            if kind == "pid" and self._pids is not None:
                self._pids.put_nowait(int(numbers[0]))
            elif kind == "exit":
                pid, code = int(numbers[0]), int(numbers[1])
                future = self._exits.get(pid)
                if future is None:
                    self._early[pid] = code
                elif not future.done():
                    future.set_result(code)

    def _end(self) -> None:
        """The server is gone: no more workers from it, and the status of those it ran is unknown."""
        self._ended = True
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(self._control.fileno())
        if self._pids is not None:
            self._pids.put_nowait(-1)
        for future in self._exits.values():
            if not future.done():
                future.set_result(-1)

    def close(self) -> None:
        """End the server (its workers end by their stdin) and reap it."""
        if self._pids is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._control.fileno())
        self._control.close()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


async def _reader(loop: asyncio.AbstractEventLoop, fd: int, limit: int) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(fd, "rb", 0))
    return reader


async def _writer(loop: asyncio.AbstractEventLoop, fd: int) -> asyncio.StreamWriter:
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(fd, "wb", 0))
    return asyncio.StreamWriter(transport, protocol, None, loop)


def _serve(control: socket.socket) -> NoReturn:  # pragma: no cover (runs in the server's process)
    """The server: fork a worker per request, report its pid and later its exit status; end with the
    socket. Ctrl-C reaches the run's whole process group: the run decides, so the server ignores it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    gc.freeze()  # fewer pages each worker copies when the collector walks the imported objects
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    try:
        while True:
            for key, _ in selector.select():
                if key.fileobj is control:
                    try:
                        _, fds, _, _ = socket.recv_fds(control, 16, 3)
                    except OSError:
                        fds = []
                    if not fds:
                        os._exit(0)
                    pid = os.fork()
                    if pid == 0:
                        selector.close()
                        for fd in (wake_r, wake_w):
                            os.close(fd)
                        control.close()
                        _become_worker(fds)
                    for fd in fds:
                        os.close(fd)
                    control.sendall(f"pid {pid}\n".encode())
                else:
                    with contextlib.suppress(BlockingIOError):
                        os.read(wake_r, 4096)
            while True:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                control.sendall(f"exit {pid} {os.waitstatus_to_exitcode(status)}\n".encode())
    except BaseException:
        os._exit(1)


def _become_worker(fds: list[int]) -> NoReturn:  # pragma: no cover (runs in the worker's process)
    """In the forked worker: a session of its own, the pipes as its standard streams, the default signal
    handling of a new interpreter, then the worker's ordinary main."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
        from .worker import main

        code = main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
    os._exit(code)
