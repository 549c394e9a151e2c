"""What makes ``dsweb certify`` safe as a CI step: the preflight that runs before any check, and a run that
an interrupt (SIGINT, SIGTERM) stops within a second while keeping what finished.

Preflight problems are one line each and exit 2: a base that is not an http(s) URL or does not answer one
HTTP request within a few seconds, a live run without its key, an adapter that does not start or does not
answer ``hello`` in time. An interrupt cancels the run, sends SIGTERM to every adapter's process group and
raises :class:`Interrupted`; the caller writes the reports with the checks that finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

__all__ = [
    "PREFLIGHT_TIMEOUT",
    "Interrupted",
    "check_base",
    "preflight_adapter",
    "reach_base",
    "run_guarded",
    "stop_if_interrupted",
]

PREFLIGHT_TIMEOUT = 5.0  # seconds the one request to each base may take before the run is refused
T = TypeVar("T")


class Interrupted(Exception):
    """SIGINT or SIGTERM stopped the run; ``args[0]`` is the signal's name."""


def check_base(option: str, url: str) -> str | None:
    """Why ``url`` (given as ``option``) is not a usable endpoint base, or None. A base carrying
    credentials (``user:password@``) or a query is refused before anything prints it, and the refusal
    never repeats those parts: the opening lines and every report name the bases."""
    shown = _without_credentials(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"{option} {shown!r} is not a URL ({_without_credentials(str(exc))})"
    if parts.username is not None or parts.password is not None:
        return (
            f"{option} {shown!r} carries credentials (user:password@); the key goes in an environment "
            "variable instead"
        )
    if parts.query or parts.fragment or "?" in url or "#" in url:
        return f"{option} {shown!r} has a query or fragment: a base is a scheme, host and path"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{option} {shown!r} is not an http(s) URL with a host (e.g. https://api.deepseek.com)"
    if port == 0:
        return f"{option} {shown!r} names port 0"
    return None


# Everything from "://" up to the last "@" before the path, and any query: either may hold a secret.
# Two passes of single character classes, so linear on any input.
_USERINFO = re.compile(r"(://)[^/?#]*@")
_QUERY = re.compile(r"[?#].*", re.DOTALL)


def _without_credentials(url: str) -> str:
    return _QUERY.sub("?…", _USERINFO.sub(r"\1…@", url))


def reach_base(option: str, url: str, timeout: float) -> str | None:
    """One GET to ``url`` (no key sent): None when any HTTP answer comes within ``timeout``, else why not."""
    import httpx

    try:
        with httpx.Client(trust_env=False, timeout=timeout, follow_redirects=False) as client:
            client.get(url)
    except httpx.TimeoutException:
        return f"{option} {url} gave no HTTP answer within {timeout:g}s"
    except httpx.ConnectError as exc:
        return f"{option} {url} cannot be reached: {_first_cause(exc)}"
    except httpx.HTTPError as exc:
        return f"{option} {url} did not answer HTTP: {_first_cause(exc)}"
    return None


def _first_cause(exc: BaseException) -> str:
    """The innermost cause's message (``[Errno 111] Connection refused``), one line."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


async def preflight_adapter(command: str, env: Mapping[str, str], start_timeout: float) -> str | None:
    """Start the adapter, wait for its ``hello`` within ``start_timeout`` and shut it down: None when it answered,
    else one line saying why not (what it wrote, its exit status, its stderr tail, or the deadline)."""
    from ..certification.targets import AdapterTarget, TargetError

    target = AdapterTarget(command, env=env, hello_timeout=start_timeout)
    try:
        await target.hello()
    except TargetError as exc:
        target.terminate()  # a hung adapter is not worth the graceful wait
        return f"adapter {command!r} did not start: {exc}"
    finally:
        await target.close()
    return None


def run_guarded(make: Callable[[], Coroutine[Any, Any, T]], on_interrupt: Callable[[], None]) -> T:
    """Run ``make()`` on a new event loop; on SIGINT or SIGTERM call ``on_interrupt`` (it must not block),
    cancel the run once (its cleanup, such as closing the adapter, then runs uncancelled) and raise
    :class:`Interrupted`. A second signal cancels again, for a run that swallowed the first; a run can also
    call :func:`stop_if_interrupted` (the progress callback does) to stop at its next finished check."""
    got.clear()

    async def main() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def on_signal(sig: signal.Signals) -> None:
            if not got:
                got.append(sig.name)
                on_interrupt()
            task.cancel()

        installed = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, on_signal, sig)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):  # no signals here (Windows, a thread)
                pass
        try:
            return await make()
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return asyncio.run(main())
    except (asyncio.CancelledError, Interrupted):  # the lanes run under gather, which never groups errors
        if got:
            raise Interrupted(got[0]) from None
        raise
    finally:
        _restore(previous)


def _restore(handlers: Mapping[signal.Signals, Any]) -> None:
    """Put back the handlers the loop replaced (it would leave SIGTERM at the default, which kills)."""
    for sig, handler in handlers.items():
        if handler is not None:
            with contextlib.suppress(ValueError, TypeError, OSError):  # not the main thread
                signal.signal(sig, handler)


def stop_if_interrupted() -> None:
    """Raise :class:`Interrupted` when a signal arrived during the current :func:`run_guarded` run."""
    if got:
        raise Interrupted(got[0])


got: list[str] = []  # the signal that interrupted the current run (one run at a time per process)
