"""Bytes after the end of a compressed body (issue 14 follow-up): zlib keeps everything fed to a
finished stream in ``unused_data``, so a tiny gzip body followed by endless bytes grew memory until
the deadline. Another gzip member is decoded as the body's continuation; anything else ends the
body and is not read."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import AsyncIterator

from dsweb_ref.netguard.body import read_capped

MIB = b"x" * (1024 * 1024)


def _read(chunks: AsyncIterator[bytes], coding: str, cap: int = 1000) -> tuple[bytes, bool]:
    return asyncio.run(read_capped(chunks, cap, coding))


def test_endless_bytes_after_a_gzip_stream_are_not_read() -> None:
    served: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        yield gzip.compress(b"hello")
        while len(served) < 10_000:  # 10 GB if read to the end
            served.append(1)
            yield MIB

    assert _read(chunks(), "gzip") == (b"hello", False)
    assert len(served) <= 1


def test_bytes_after_a_deflate_stream_end_the_body() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield zlib.compress(b"hello") + b"trailing garbage"
        yield MIB

    assert _read(chunks(), "deflate") == (b"hello", False)


def test_a_second_gzip_member_is_the_body_continued() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield gzip.compress(b"ab") + gzip.compress(b"cd")[:5]
        yield gzip.compress(b"cd")[5:]

    assert _read(chunks(), "gzip") == (b"abcd", False)


def test_a_second_member_still_counts_against_the_cap() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield gzip.compress(b"a" * 600) + gzip.compress(b"b" * 600)

    assert _read(chunks(), "gzip") == (b"a" * 600 + b"b" * 400, True)
