"""Response bodies within fixed bounds: type, charset, byte cap, decompression.

Bytes are counted after decompression and decompression itself is bounded, so
neither a huge body nor a small compressed bomb can grow memory past the cap.
"""

from __future__ import annotations

import codecs
import functools
import zlib
from collections.abc import AsyncIterable
from typing import Literal

from .._exceptions import WebError, WebErrorCode

__all__ = ["BodyClass", "classify_content_type", "decode_text", "load_codecs", "pick_charset", "read_capped"]

BodyClass = Literal["html", "text"]

_HTML = {"text/html", "application/xhtml+xml"}
_TEXT = {"application/json", "application/xml"}
# WHATWG maps these labels to windows-1252, which is what such pages really use.
_WINDOWS_1252 = {
    "ascii", "us-ascii", "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "cp819", "ibm819",
    "windows-1252", "cp1252", "x-cp1252",
}  # fmt: skip
# The WHATWG Encoding Standard's charsets (the ones browsers decode), as Python codec
# names. Anything else (utf-7, unicode_escape, zlib, rot13, ...) is refused.
_WEB_CODEC_LABELS = (
    "utf-8", "utf-16", "utf-16-le", "utf-16-be", "cp866", "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic",
    "iso8859-2", "iso8859-3", "iso8859-4", "iso8859-5", "iso8859-6", "iso8859-7", "iso8859-8", "iso8859-10",
    "iso8859-13", "iso8859-14", "iso8859-15", "iso8859-16", "cp874", "cp1250", "cp1251", "cp1252", "cp1253",
    "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "gbk", "gb18030", "big5", "big5hkscs", "euc-jp",
    "iso2022-jp", "shift_jis", "cp932", "euc-kr",
)  # fmt: skip


@functools.cache
def _web_codecs() -> frozenset[str]:
    # Looked up on first use: each lookup imports its codec module (~15 ms for all at import time).
    return frozenset(codecs.lookup(name).name for name in _WEB_CODEC_LABELS)


def load_codecs() -> None:
    """Look up the web's codecs now rather than at the first page (a process about to time things warms up)."""
    _web_codecs()


def _mime(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def classify_content_type(content_type: str | None) -> BodyClass:
    """``html`` or ``text`` for the types we read; anything else is refused."""
    mime = _mime(content_type or "")
    if mime in _HTML:
        return "html"
    if mime.startswith("text/") or mime in _TEXT or mime.endswith(("+json", "+xml")):
        return "text"
    shown = content_type[:200] if content_type else "unknown"  # server-controlled: keep the message short
    raise WebError(WebErrorCode.UNSUPPORTED_CONTENT_TYPE, f'unsupported content type "{shown}"')


def pick_charset(content_type: str | None) -> str:
    """The Python codec for the declared charset (UTF-8 when none is declared)."""
    label = ""
    for param in (content_type or "").split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            label = value.strip().strip("\"'").strip().lower()
    if not label:
        return "utf-8"
    if label in _WINDOWS_1252:
        return "cp1252"
    if label == "gb2312":
        return "gbk"
    try:
        name = codecs.lookup(label).name
    except (LookupError, ValueError, TypeError):
        name = ""
    if name not in _web_codecs():
        raise WebError(WebErrorCode.UNSUPPORTED_CONTENT_TYPE, f'unsupported charset "{label[:100]}"')
    return name


def decode_text(data: bytes, charset: str, *, complete: bool) -> str:
    """Decode with replacement characters. A byte-order mark wins over the label.
    When the bytes were cut (``complete`` false) a split final character is dropped."""
    if data.startswith(codecs.BOM_UTF8):
        charset, data = "utf-8", data[3:]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        charset = "utf-16"
    decoder = codecs.getincrementaldecoder(charset)(errors="replace")
    return decoder.decode(data, final=complete)


class _Inflater:
    """Bounded gzip/deflate decoding: never produces more than asked for at once."""

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        # 47 = zlib or gzip header auto-detected; raw deflate is tried on failure.
        self._wbits = 31 if encoding == "gzip" else 47
        self._inflater = zlib.decompressobj(self._wbits)
        self._started = False
        self.finished = False  # the stream ended and what followed it was not another member

    def feed(self, data: bytes, limit: int) -> tuple[bytes, bytes]:
        """Up to ``limit`` decoded bytes and the input still to feed."""
        try:
            out = self._inflater.decompress(data, limit)
        except zlib.error as exc:
            if self._encoding == "deflate" and not self._started:
                self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                self._started = True
                return self.feed(data, limit)
            raise WebError(
                WebErrorCode.PROVIDER_ERROR, f"could not decode the {self._encoding} response body: {exc}", cause=exc
            ) from exc
        self._started = True
        if self._inflater.eof and self._inflater.unused_data:
            # Bytes after the end of the stream: zlib would keep every one of them in unused_data,
            # unbounded. Another gzip member starts a fresh stream; anything else ends the body.
            rest = self._inflater.unused_data
            if self._encoding != "gzip" or not rest.startswith(b"\x1f\x8b"[: len(rest)]):
                self.finished = True
                return out, b""
            self._inflater = zlib.decompressobj(self._wbits)
            return out, rest
        return out, self._inflater.unconsumed_tail


def _inflater_for(content_encoding: str | None) -> _Inflater | None:
    encoding = (content_encoding or "").strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return _Inflater("gzip")
    if encoding == "deflate":
        return _Inflater("deflate")
    raise WebError(WebErrorCode.UNSUPPORTED_CONTENT_TYPE, f'unsupported content encoding "{encoding[:100]}"')


async def read_capped(
    chunks: AsyncIterable[bytes], max_bytes: int, content_encoding: str | None = None
) -> tuple[bytes, bool]:
    """Read at most ``max_bytes`` decoded bytes; ``True`` when the body was longer.
    Reading stops at the first byte past the cap, so the rest is never fetched."""
    inflater = _inflater_for(content_encoding)
    body = bytearray()
    async for chunk in chunks:
        pending = chunk
        while pending:
            room = max_bytes - len(body)
            if inflater is None:
                piece, pending = pending[: room + 1], b""
            else:
                piece, pending = inflater.feed(pending, room + 1)
            if len(piece) > room:
                body += piece[:room]
                return bytes(body), True
            body += piece
            if inflater is not None and inflater.finished:
                return bytes(body), False  # trailing bytes after the stream are not read
            if inflater is not None and not piece and not pending:
                break  # needs more input
    return bytes(body), False
