"""Resolve a host once and check every answer.

A resolver is any ``async (host) -> list of IP strings``; tests inject one to
simulate DNS. Failure of any kind fails closed: no answer means no connection.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from ipaddress import ip_address
from typing import TypeAlias

from .._exceptions import WebError, WebErrorCode
from .addresses import AddressPolicy, IPAddress
from .hosts import parse_host

__all__ = ["Resolver", "system_resolver", "vet_host"]

Resolver: TypeAlias = Callable[[str], Awaitable[list[str]]]


async def system_resolver(host: str) -> list[str]:
    """The operating system's resolver (``getaddrinfo``), answers in its order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    answers: list[str] = []
    for family, _type, _proto, _canon, sockaddr in infos:
        if family in (socket.AF_INET, socket.AF_INET6) and isinstance(sockaddr[0], str):
            answers.append(sockaddr[0])
    return answers


async def vet_host(host: str, *, policy: AddressPolicy, resolver: Resolver) -> list[IPAddress]:
    """The addresses ``host`` may be dialled at, all checked; raises ``WebError`` otherwise.

    A literal is checked as is. A name is resolved exactly once and every answer
    must pass: one non-public answer refuses the host, since a later connection
    attempt (or a retry) could land on it."""
    parsed = parse_host(host)
    if not isinstance(parsed, str):
        _check(host, parsed, policy, literal=True)
        return [parsed]
    try:
        answers = await resolver(parsed)
    except (asyncio.CancelledError, WebError):
        raise
    except Exception as exc:
        raise WebError(
            WebErrorCode.PROVIDER_ERROR, f'could not resolve host "{host}": {type(exc).__name__}: {exc}', cause=exc
        ) from exc
    if not isinstance(answers, (list, tuple)):
        raise WebError(
            WebErrorCode.PROVIDER_ERROR, f'could not resolve host "{host}": resolver returned {type(answers).__name__}'
        )
    if not answers:
        raise WebError(WebErrorCode.PROVIDER_ERROR, f'could not resolve host "{host}": no addresses')
    vetted: list[IPAddress] = []
    for answer in answers:
        address = _parse_answer(host, answer)
        _check(host, address, policy, literal=False)
        if address not in vetted:
            vetted.append(address)
    return vetted


def _parse_answer(host: str, answer: object) -> IPAddress:
    if isinstance(answer, str):
        text = answer.split("%", 1)[0]  # a scope id only ever comes with link-local, refused below
        try:
            return ip_address(text)
        except ValueError:
            pass
    raise WebError(WebErrorCode.BLOCKED_URL, f'host "{host}" resolved to an unusable address {answer!r}')


def _check(host: str, address: IPAddress, policy: AddressPolicy, *, literal: bool) -> None:
    reason = policy.blocked_reason(address)
    if reason is not None:
        what = str(address) if literal else f'host "{host}" resolves to {address}, which'
        raise WebError(
            WebErrorCode.BLOCKED_URL,
            f"{what} is not a public address ({reason}); only public internet hosts can be fetched",
        )
