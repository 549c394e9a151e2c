"""Whether a credential shows in what a model or a report sees: the judge of the secret-echo checks.

Written apart from the reference's scrubber (``dsweb_ref._secrets``) on purpose: a judge that called the
scrubber's own finder would be wrong exactly where the scrubber is, and a mutant of it would pass. So
this one decodes the text the ways an upstream echo encodes (percent, ``%uXXXX``, HTML entities, JSON ``\\uXXXX``
escapes, hex plain or with ``\\x`` or ``0x`` before each byte, base64 at every alignment in either
alphabet, and ``\\U`` escapes, each once or twice over; base85 in RFC 1924's alphabet at every alignment and
uuencode, once) and looks for any
``PIECE``-character piece of the secret, in any case, in each reading. The text as shown and each
reading of one decoding are also read as a person would: without invisible characters, with
compatibility forms (full-width letters) and common Cyrillic look-alikes taken for Latin letters,
backwards, and, where single letters or digits stand apart in a run, as those letters and digits only
(a key spelled out with spaces or dashes between its characters), and, for the whole secret only, with
everything but letters and digits dropped, either way round (a key split in fragments). Linear in the text: plain
character-class runs only, and two rounds of decoding read a few dozen times the text at most.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
from collections.abc import Iterator
from urllib.parse import unquote

__all__ = ["PIECE", "json_unescaped", "leak"]

PIECE = 10  # characters of a secret that count as showing it
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}")
# RFC 1924's alphabet: what git's binary patches and Python's b85encode write.
_BASE85_RUN = re.compile(r"[0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]{12,}")
_HEX_RUN = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
_C_BYTES = re.compile(r"(?:0[xX][0-9a-fA-F]{2}[\s,;]{0,8}){8,}")  # separators never start a byte: linear
_C_BYTE = re.compile(r"0[xX]([0-9a-fA-F]{2})")
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_PERCENT_U = re.compile(r"%u([0-9a-fA-F]{4})")  # escape() writes a character past U+00FF so; some logs write all
_URL_SAFE = str.maketrans("-_", "+/")


def _base64_readings(text: str) -> Iterator[str]:
    """Every run of base64 characters decoded from each of its four starting offsets."""
    for run in _BASE64_RUN.findall(text):
        run = run.translate(_URL_SAFE)
        for start in range(4):
            body = run[start:]
            body = body[: len(body) - len(body) % 4]
            try:
                yield base64.b64decode(body, validate=True).decode("latin-1")
            except (binascii.Error, ValueError):
                continue


def _base85_readings(text: str) -> Iterator[str]:
    """Every run of base85 characters decoded from each of its five starting offsets (a last group cut short
    decodes as b85decode pads it)."""
    for run in _BASE85_RUN.findall(text):
        for start in range(5):
            try:
                yield base64.b85decode(run[start:]).decode("latin-1")
            except ValueError:  # a group over 2**32
                continue


def _hex_readings(text: str) -> Iterator[str]:
    """Every run of hex digit pairs (``\\x`` and spaces between bytes dropped first), decoded from
    each of its two starting offsets; then every run of ``0x``-prefixed bytes (a C byte array: ``{0x64,
    0x73, ...}``). The second pass is its own: dropping ``0x`` from a plain run would eat a digit."""
    runs = _HEX_RUN.findall(text.replace("\\x", "").replace(" ", ""))
    runs += ["".join(_C_BYTE.findall(run)) for run in _C_BYTES.findall(text)]
    for run in runs:
        for start in range(2):
            body = run[start:]
            yield bytes.fromhex(body[: len(body) - len(body) % 2]).decode("latin-1")


# From the seed-9 mutation draw: two more ways to write bytes the scrubber reads (its needles) and the judge did not.
_WIDE_ESCAPE = re.compile(r"\\U([0-9a-fA-F]{8})")  # C and Python write a character so: eight hex digits
# uuencode (binascii.b2a_uu, with backticks for zero): 6-bit groups as chr(32 + value), no space and no lower case.
_UU_RUN = re.compile(r"[!-`]{12,}")
_UU_TO_BASE64 = str.maketrans(
    "`" + "".join(chr(32 + v) for v in range(1, 64)),
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
)


def _code_point(match: re.Match[str]) -> str:
    value = int(match[1], 16)
    return chr(value) if value <= 0x10FFFF else match[0]


def _wide_unescaped(text: str) -> str:
    """``text`` with each ``\\UXXXXXXXX`` escape of a code point replaced by its character (one past U+10FFFF kept)."""
    return _WIDE_ESCAPE.sub(_code_point, text)


def _uu_readings(text: str) -> Iterator[str]:
    """Every run of uuencode characters, read as base64 of the same 6-bit groups from each of its four offsets (a
    line's length character comes first)."""
    for run in _UU_RUN.findall(text):
        yield from _base64_readings(run.translate(_UU_TO_BASE64))


def json_unescaped(text: str) -> str:
    """``text`` with each JSON ``\\uXXXX`` escape replaced by its character."""
    return _JSON_ESCAPE.sub(lambda m: chr(int(m[1], 16)), text)


def _decodings(text: str) -> Iterator[tuple[str, str]]:
    """One step of decoding ``text``: each way an echo may have encoded it."""
    yield "percent-encoded", unquote(text)
    yield "as HTML entities", html.unescape(text)
    yield "as JSON escapes", json_unescaped(text)
    yield "as %u escapes", _PERCENT_U.sub(lambda m: chr(int(m[1], 16)), text)
    yield "as \\U escapes", _wide_unescaped(text)
    for decoded in _hex_readings(text):
        yield "in hex", decoded
    for decoded in _base64_readings(text):
        yield "base64-encoded", decoded


def _readings(text: str) -> Iterator[tuple[str, str]]:
    """``text`` as shown, decoded once, and decoded twice (an encoding of an encoding: %25XX, base64 of a
    percent form, ...); base85 once, of the text as shown. Each step is linear in what it reads and yields
    a few times as much."""
    yield "", text
    for how, once in _decodings(text):
        yield how, once
        for then, twice in _decodings(once):
            yield f"{how}, then {then}", twice
    # Nearly any text is a base85 run: decoding each of its five readings again would cost more than all the rest.
    for once in _base85_readings(text):
        yield "base85-encoded", once
    for once in _uu_readings(text):  # once, of the text as shown, like base85
        yield "uuencoded", once


# Cyrillic letters drawn like Latin ones (a few common ones; the reference keeps a table of its own).
_LOOK_ALIKE = str.maketrans("\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u043a\u0456\u0455", "aeopcyxkis")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
# A run of single letters or digits with separators between them ("d s w e b", "d-s-w-e-b"): a key spelled out.
# The classes are disjoint, so the match is linear; ordinary words (two letters in a row) never form one.
_SPELLED = re.compile(rf"(?:[0-9a-z][^0-9a-z]{{1,3}}){{{PIECE - 1},}}[0-9a-z]")


def _as_read(text: str) -> str:
    """``text`` as a reader sees it: invisible characters (format, combining, controls) gone, compatibility
    forms and look-alikes as the Latin letters they show."""
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text).translate(_LOOK_ALIKE)
    return "".join(c for c in text if unicodedata.category(c) not in ("Cf", "Mn", "Me", "Cc") or c.isspace())


def _pieces(secret: str) -> dict[str, int]:
    return {secret[i : i + PIECE]: i for i in range(max(1, len(secret) - PIECE + 1))}


def leak(text: str, secret: str) -> str | None:
    """How ``text`` shows ``secret`` (where in it the piece starts, and the encoding), or ``None``. The
    piece itself is never quoted: the answer lands in reports."""
    pieces = _pieces(secret.casefold())
    for how, reading in _readings(text):
        folded = reading.casefold()
        at = next((i for piece, i in pieces.items() if piece in folded), None)
        if at is not None:
            return f"characters {at + 1}-{at + PIECE} of the credential{' ' + how if how else ''}"
    compacted = _NOT_ALNUM.sub("", secret.casefold())
    compact = _pieces(compacted) if len(compacted) >= PIECE else {}  # a short one would match everywhere
    for how, reading in [("", text), *_decodings(text)]:
        seen = _as_read(reading).casefold()
        spelled = " ".join(_NOT_ALNUM.sub("", run) for run in _SPELLED.findall(seen))
        # The whole secret with anything between its letters and digits (split in fragments: "dsw eb- emu"), read
        # with every other character dropped; whole only, since a piece of it run together is in ordinary words.
        squeezed = _NOT_ALNUM.sub("", seen)
        whole = {compacted: 0} if compact else {}
        views = (("as read", seen, pieces), ("backwards", seen[::-1], pieces),
                 ("spelled out", spelled, compact), ("spelled out backwards", spelled[::-1], compact),
                 ("run together", squeezed, whole), ("run together backwards", squeezed[::-1], whole))
        for view, shown, table in views:
            at = next((i for piece, i in table.items() if piece in shown), None)
            if at is not None:
                return f"a {PIECE}-character piece of the credential {view}{', ' + how if how else ''}"
    return None
