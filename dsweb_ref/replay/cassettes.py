"""Cassettes: the vcrpy configuration, scrubbing, provenance and the secret scanner.

A cassette is a vcrpy 9 YAML file (``version`` + ``interactions``) with one extra top-level
key, ``provenance``. vcrpy's loader reads only ``interactions`` (and its own ``metadata``), so
the extra key is ignored on load; the test suite checks that it stays that way. ``metadata``
is deliberately not used: pytest-recording 0.14 fails to load cassettes that carry it.

Scrub rules (applied when a cassette is recorded, then verified by :func:`scan_cassette_data`):

* request headers ``authorization``, ``x-api-key``, ``api-key``, ``x-auth-token``, ``cookie``
  and ``proxy-authorization`` are replaced by ``<REDACTED>`` (vcrpy ``filter_headers``);
* response headers ``set-cookie``, ``cookie``, ``authorization``, ``x-api-key``, ``api-key``,
  ``x-auth-token``, ``date``, ``server``, ``x-request-id``, ``request-id`` and every ``cf-*``
  header are dropped (``before_record_response``);
* each literal credential value is replaced by its placeholder (``<DEEPSEEK_API_KEY>``, ...)
  everywhere, request and response, headers and bodies, by :func:`make_vcr`'s one hook that runs
  before an interaction is written (so not even a temporary cassette holds it), and in the
  provenance by :func:`finalize_cassette`;
* a cassette recorded against the local emulator has its ephemeral ``http://127.0.0.1:<port>``
  origin rewritten to :data:`PLACEHOLDER_ORIGIN`, so replay never depends on a port (and, being
  under ``.invalid``, can never resolve to a real host);
* ``Content-Length`` of every response is recomputed after the rewrites.

Anything the scanner still flags afterwards (see :data:`SECRET_PATTERNS`) makes the recorder
refuse to write the cassette. A streamed (SSE) body is also scanned as the text its deltas join
to, so a key split across two events is refused too.

Replay elsewhere: :func:`cassette_replay` is the one replay configuration (record mode ``none``,
:data:`MATCH_ON`), for this suite and for a provider package's own tests.
"""

from __future__ import annotations

import bz2
import codecs
import lzma
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .._secrets import (
    SECRET_RULES,
    encoded_secret_found,
    ordered_pairs,
    piece_found,
    replace_literals_deep,
    rule_hits,
)
from ._streams import looks_streamed, stream_texts

if TYPE_CHECKING:
    import vcr

__all__ = [
    "DROPPED_RESPONSE_HEADERS",
    "KEY_PLACEHOLDER",
    "MATCH_ON",
    "MAX_SNIFFED_BODY",
    "MIN_SCANNED_SECRET",
    "PLACEHOLDER_ORIGIN",
    "PROVENANCE_KEY",
    "REDACTED",
    "SCRUBBED_REQUEST_HEADERS",
    "SECRET_PATTERNS",
    "Finding",
    "body_readings",
    "cassette_replay",
    "default_cassette_dir",
    "dump_cassette",
    "finalize_cassette",
    "iter_cassettes",
    "load_cassette",
    "make_vcr",
    "provenance_of",
    "replace_everywhere",
    "scan_cassette_data",
    "scan_path",
    "scan_text",
    "scan_tree",
]

PLACEHOLDER_ORIGIN = "http://emulator.dsweb.invalid"
MAX_DECODED_BODY = 64 * 1024 * 1024  # a recorded body is decoded up to this size, never further
KEY_PLACEHOLDER = "<DEEPSEEK_API_KEY>"
REDACTED = "<REDACTED>"
PROVENANCE_KEY = "provenance"
# body is essential: concurrent requests to one route are told apart only by their bodies.
MATCH_ON: tuple[str, ...] = ("method", "scheme", "host", "port", "path", "query", "body")
SCRUBBED_REQUEST_HEADERS: tuple[str, ...] = (
    "authorization",
    "x-api-key",
    "api-key",
    "x-auth-token",
    "cookie",
    "proxy-authorization",
)
DROPPED_RESPONSE_HEADERS: frozenset[str] = frozenset(
    {
        "set-cookie",
        "cookie",
        "authorization",
        "x-api-key",
        "api-key",
        "x-auth-token",
        "date",
        "server",
        "x-request-id",
        "request-id",
    }
)
_CREDENTIAL_HEADERS = frozenset(SCRUBBED_REQUEST_HEADERS) | {"set-cookie"}
_PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*>")

# Credential-like values: the shared rule table (kind, pattern), see :mod:`dsweb_ref._secrets`.
# Token rules need a digit (or, for long secret fields, mixed character classes) so prose such as
# "Bearer authentication" or "Basic authentication" is not flagged; placeholders never match.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((rule.kind, rule.pattern) for rule in SECRET_RULES)


@dataclass(frozen=True, slots=True)
class Finding:
    """One credential-like value. ``where`` locates it; the value itself is never kept."""

    where: str
    kind: str

    def __str__(self) -> str:
        return f"{self.where}: {self.kind}"


# --- scanning -------------------------------------------------------------------------------


def scan_text(text: str, *, literals: Iterable[str] = (), where: str = "text") -> list[Finding]:
    """Credential-like values in ``text``: the patterns above plus any of ``literals`` (e.g. the key
    used for recording) of at least :data:`MIN_SCANNED_SECRET` characters, raw or in an encoded form
    (every form :class:`SecretForms` reads: base64, base32, base85, %XX, hex with or without
    separators, escapes, ROT13, reversed, spaced out, with invisible or look-alike characters...),
    whole or any 10 characters of it (:func:`piece_found`). A shorter value cannot be told from
    ordinary text and is not looked for (``dsweb record`` refuses to record with one)."""
    findings = [Finding(where, kind) for kind in rule_hits(text)]
    for value in literals:
        if len(value) < MIN_SCANNED_SECRET:
            continue
        if value in text:
            findings.append(Finding(where, "literal credential"))
        elif encoded_secret_found(text, [value]):
            findings.append(Finding(where, "encoded credential"))
        elif piece_found(text, [value]):  # an echo of part of the key, which literal replacement misses
            findings.append(Finding(where, "part of a credential"))
    return findings


# --- bodies that are not UTF-8 text (hunt G, L2) -------------------------------------------
# vcrpy stores a body that is not valid UTF-8 as bytes (``!!binary``): UTF-16 or UTF-32 JSON, or a
# payload compressed without a Content-Encoding header. The scanner reads such a body every way a
# client could, and scans every reading:
#
# * as UTF-8 (invalid bytes replaced). ASCII inside a UTF-16 or UTF-32 body, a key included, is in
#   this reading with NULs between its characters, which the scan folds away;
# * as UTF-16 and UTF-32 of either byte order, when the body starts with a byte-order mark or a tenth
#   of its bytes are NUL: that is for non-ASCII text (binary data skips these readings, which would
#   only quadruple the cost);
# * decompressed, when it starts with the magic of gzip (every member), zlib, bzip2, xz or lzma, and
#   always as raw deflate, which has no magic; each result is read again the same ways, three levels
#   deep at most.
#
# Decompression is bounded: all the readings of one body together inflate to at most
# MAX_SNIFFED_BODY bytes. A body past that bound, one whose magic says compressed but which does not
# decompress cleanly, and a zstd one (no decoder in the standard library) cannot be scanned: that is
# a finding, so ``dsweb record`` refuses the body as it refuses a key. Raw deflate is a guess: when it
# fails the body was not deflate and nothing is refused, though what inflated before the failing
# 64-byte chunk is scanned. Brotli has no magic and no decoder here: a brotli body sent without its
# Content-Encoding is not read (with the header, the "undecoded content-encoding" rule refuses it).

MIN_SCANNED_SECRET = 4
MAX_SNIFFED_BODY = MAX_DECODED_BODY  # twice the 32 MiB a probe buffers of one response
_SNIFF_DEPTH = 3
_SNIFF_CHUNK = 64  # raw deflate and zlib are fed this many bytes at a time, so a corrupt stream keeps its start
_UTF_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
_WIDE_CODECS = ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")


class _Unscannable(Exception):
    """A body no reading of which can be scanned safely (the message says why)."""


def _zlib_magic(head: bytes) -> bool:
    return len(head) >= 2 and head[0] & 0x0F == 8 and head[0] >> 4 <= 7 and (head[0] << 8 | head[1]) % 31 == 0


def _inflate_chunked(body: bytes, wbits: int, budget: list[int]) -> tuple[bytes, bool]:
    """``body`` inflated with ``wbits`` (gzip members one after another), and whether it ended
    cleanly. Raises :class:`_Unscannable` past the budget."""
    out = bytearray()
    rest = body
    while rest:
        inflater = zlib.decompressobj(wbits)
        at = 0
        try:
            while at < len(rest) and not inflater.eof:
                piece = rest[at : at + _SNIFF_CHUNK]
                at += _SNIFF_CHUNK
                while piece and not inflater.eof:
                    out += inflater.decompress(piece, budget[0] - len(out) + 1)
                    if len(out) > budget[0]:
                        raise _Unscannable(f"inflates past {MAX_SNIFFED_BODY} bytes")
                    piece = inflater.unconsumed_tail
        except zlib.error:
            return bytes(out), False
        if not inflater.eof:
            return bytes(out), False
        rest = inflater.unused_data + rest[at:]
        if wbits != 31 or rest[:2] != b"\x1f\x8b":  # another gzip member follows, or the stream is over
            break
    return bytes(out), True


def _decompress_stream(body: bytes, decompressor: Any, budget: list[int]) -> tuple[bytes, bool]:
    """``body`` through a bz2 or lzma decompressor, bounded like :func:`_inflate_chunked`."""
    out = bytearray()
    data = body
    try:
        while True:
            out += decompressor.decompress(data, budget[0] - len(out) + 1)
            data = b""
            if len(out) > budget[0]:
                raise _Unscannable(f"inflates past {MAX_SNIFFED_BODY} bytes")
            if decompressor.eof or decompressor.needs_input:
                return bytes(out), bool(decompressor.eof)
    except (OSError, EOFError, ValueError, lzma.LZMAError):
        return bytes(out), False


def _inflations(body: bytes, budget: list[int], *, guess_only: bool) -> Iterator[tuple[str, bytes]]:
    """(format, inflated bytes) for every compressed format ``body`` may be. With ``guess_only``
    (a body that was valid UTF-8 text), a failure is no finding."""
    head = body[:6]
    known: list[tuple[str, Callable[[], tuple[bytes, bool]]]] = []
    if head[:2] == b"\x1f\x8b":
        known.append(("gzip", lambda: _inflate_chunked(body, 31, budget)))
    if _zlib_magic(head):
        known.append(("zlib", lambda: _inflate_chunked(body, 15, budget)))
    if head[:3] == b"BZh":
        known.append(("bzip2", lambda: _decompress_stream(body, bz2.BZ2Decompressor(), budget)))
    if head == b"\xfd7zXZ\x00" or head[:3] == b"\x5d\x00\x00":
        known.append(("xz", lambda: _decompress_stream(body, lzma.LZMADecompressor(), budget)))
    if head[:4] == b"\x28\xb5\x2f\xfd" and not guess_only:
        raise _Unscannable("zstd-compressed, which cannot be decoded here")
    for name, inflate in known:
        out, clean = inflate()
        budget[0] -= len(out)
        if not clean and not guess_only:
            raise _Unscannable(f"starts like {name} but does not decompress")
        yield name, out
    if guess_only:
        return
    out, _ = _inflate_chunked(body, -zlib.MAX_WBITS, budget)  # raw deflate has no magic: always a guess
    budget[0] -= len(out)
    if out:
        yield "deflate", out


def body_readings(
    body: bytes | str, *, _budget: list[int] | None = None, _depth: int = _SNIFF_DEPTH
) -> Iterator[tuple[str, str]]:
    """(how, text) for every way a client could read ``body`` (see above): bytes as UTF-8 (and as
    UTF-16 and UTF-32 when they look wide), and whatever they decompress to. Raises
    :class:`_Unscannable` for a body that cannot be read safely. Text (a body vcrpy could store as
    UTF-8) yields only its decompressed readings, as a guess."""
    budget = [MAX_SNIFFED_BODY] if _budget is None else _budget
    guess_only = isinstance(body, str)
    data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    if not guess_only:
        yield "utf-8", data.decode("utf-8", "replace")
        if data.startswith(_UTF_BOMS) or data.count(0) * 10 >= len(data):
            for codec in _WIDE_CODECS:
                yield codec, data.decode(codec, "replace")  # a BOM reads as U+FEFF, which the scan folds away
    if _depth <= 0:
        return
    for name, out in _inflations(data, budget, guess_only=guess_only):
        for how, text in body_readings(out, _budget=budget, _depth=_depth - 1):
            yield f"{name}>{how}", text


def _scan_value(value: str | bytes, literals: tuple[str, ...], where: str) -> list[Finding]:
    findings = scan_text(value, literals=literals, where=where) if isinstance(value, str) else []
    try:
        for how, text in body_readings(value):
            findings += scan_text(text, literals=literals, where=f"{where}<{how}>")
    except _Unscannable as exc:
        findings.append(Finding(where, f"unscannable body ({exc})"))
    return findings


def _walk(value: object, where: str) -> Iterator[tuple[str, str | bytes]]:
    if isinstance(value, str | bytes):
        yield where, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _walk(k, f"{where}.<key>")
            yield from _walk(v, f"{where}.{k}")
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _walk(v, f"{where}[{i}]")


def scan_cassette_data(data: object, *, literals: Iterable[str] = (), where: str = "cassette") -> list[Finding]:
    """Scan a loaded cassette: every string (headers and bodies included), and credential
    headers that hold anything but a placeholder."""
    literals = tuple(literals)
    findings: list[Finding] = []
    for path, value in _walk(data, where):
        findings += _scan_value(value, literals, path)
    interactions = data.get("interactions") if isinstance(data, Mapping) else None
    for i, interaction in enumerate(interactions if isinstance(interactions, list) else []):
        findings += _scan_stream(interaction, literals, f"{where}.interactions[{i}].response.body")
        for side in ("request", "response"):
            part = interaction.get(side) if isinstance(interaction, Mapping) else None
            headers = part.get("headers") if isinstance(part, Mapping) else None
            if not isinstance(headers, Mapping):
                continue
            if side == "response" and _codings(headers)[1]:
                # Compressed bytes cannot be scanned: a body is stored decoded or not at all.
                findings.append(Finding(f"{where}.interactions[{i}].response.body", "undecoded content-encoding"))
            for name, values in headers.items():
                if str(name).lower() not in _CREDENTIAL_HEADERS:
                    continue
                for value in values if isinstance(values, list) else [values]:
                    if not _is_placeholder_value(str(value)):
                        findings.append(
                            Finding(f"{where}.interactions[{i}].{side}.headers.{name}", "credential header")
                        )
    return findings


def _scan_stream(interaction: object, literals: tuple[str, ...], where: str) -> list[Finding]:
    """A streamed body's text as a client joins it from its deltas: a key split across two events is
    in no single string the walk above sees."""
    response = interaction.get("response") if isinstance(interaction, Mapping) else None
    body = response.get("body") if isinstance(response, Mapping) else None
    text = body.get("string") if isinstance(body, Mapping) else None
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str) or not looks_streamed(text):
        return []
    return [f for joined in stream_texts(text) for f in scan_text(joined, literals=literals, where=f"{where}.<stream>")]


def _is_placeholder_value(value: str) -> bool:
    rest = _PLACEHOLDER.sub("", value).strip()
    return rest in ("", "Bearer")


def scan_path(path: Path, *, literals: Iterable[str] = ()) -> list[Finding]:
    """Scan one file: YAML cassettes structurally and textually, anything else as text."""
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError:
        text = path.read_bytes().decode("utf-8", "replace")
    findings = scan_text(text, literals=literals, where=str(path))
    if path.suffix in (".yaml", ".yml"):
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            return findings
        findings += scan_cassette_data(data, literals=literals, where=str(path))
    # The same value can be reported both textually and structurally; keep one per kind and place.
    return list(dict.fromkeys(findings))


def scan_tree(roots: Iterable[Path], *, literals: Iterable[str] = ()) -> list[Finding]:
    """Scan every regular file under ``roots`` (directories or files; missing ones are skipped)."""
    literals = tuple(literals)
    findings: list[Finding] = []
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for file in files:
            findings += scan_path(file, literals=literals)
    return findings


# --- vcrpy configuration --------------------------------------------------------------------


def _inflate(body: bytes, coding: str) -> bytes | None:
    """``body`` decoded from one content coding, or None (unknown coding, bad data, or more than
    :data:`MAX_DECODED_BODY` bytes: inflation is bounded, a bomb is not decoded)."""
    if coding not in ("gzip", "x-gzip", "deflate"):
        return None
    for wbits in (31,) if coding != "deflate" else (47, -zlib.MAX_WBITS):
        inflater = zlib.decompressobj(wbits)
        try:
            out = inflater.decompress(body, MAX_DECODED_BODY + 1)
        except zlib.error:
            continue
        if len(out) <= MAX_DECODED_BODY and not inflater.unconsumed_tail and inflater.eof:
            return out
        return None
    return None


def _codings(headers: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    for name, values in headers.items():
        if name.lower() == "content-encoding":
            joined = ",".join(values if isinstance(values, list) else [str(values)])
            return name, [c.strip().lower() for c in joined.split(",") if c.strip().lower() not in ("", "identity")]
    return None, []


def _decode_body(response: dict[str, Any]) -> dict[str, Any]:
    """The body stored decoded, whatever the coding's case or how many codings were stacked
    ("GZIP", "gzip, gzip"): literal replacement and the scanner see the text, never compressed
    bytes (issue 14). A body that cannot be decoded keeps its Content-Encoding, and the scanner
    refuses it."""
    headers = dict(response.get("headers") or {})
    name, codings = _codings(headers)
    body = (response.get("body") or {}).get("string")
    if name is None or not isinstance(body, bytes):
        return response
    for coding in reversed(codings):  # the last coding listed was applied last
        decoded = _inflate(body, coding)
        if decoded is None:
            return response
        body = decoded
    del headers[name]
    for key in list(headers):
        if key.lower() == "content-length":
            headers[key] = [str(len(body))]
    return {**response, "headers": headers, "body": {**response["body"], "string": body}}


def _clean_response(response: dict[str, Any]) -> dict[str, Any]:
    response = _decode_body(response)
    headers = response.get("headers") or {}
    response["headers"] = {
        name: value
        for name, value in headers.items()
        if name.lower() not in DROPPED_RESPONSE_HEADERS and not name.lower().startswith("cf-")
    }
    return response


def _replace_before_save(pairs: Sequence[tuple[str, str]]) -> Callable[[Any, Any], tuple[Any, Any]]:
    """A vcrpy ``before_save_interaction`` hook (it gets copies): ``pairs`` replaced in the request
    (method, URI, body, headers) and the response, just before the interaction is written."""

    def replace(request: Any, response: Any) -> tuple[Any, Any]:
        clean = type(request)._from_dict(replace_everywhere(request._to_dict(), pairs))
        return clean, replace_everywhere(response, pairs)

    return replace


def make_vcr(*, record_mode: str = "none", replacements: Sequence[tuple[str, str]] = ()) -> vcr.VCR:
    """The one vcrpy configuration for recording and replay: YAML, body matching, credential
    headers filtered, volatile response headers dropped, compressed bodies stored decoded.

    ``replacements`` are (secret, placeholder) pairs, replaced (longest secret first) in every
    request and response, headers, URIs and bodies alike, by the one hook that runs before an
    interaction is written: no secret reaches even a temporary cassette file."""
    import vcr  # here: vcrpy patches a dozen HTTP clients on import (~0.1 s); listing checks needs none of it

    pairs = ordered_pairs(replacements)
    return vcr.VCR(
        serializer="yaml",
        record_mode=record_mode,
        match_on=MATCH_ON,
        filter_headers=[(name, REDACTED) for name in SCRUBBED_REQUEST_HEADERS],
        before_save_interaction=_replace_before_save(pairs) if pairs else None,
        before_record_response=_clean_response,
        # Our own decoder (_decode_body): vcrpy's misses "GZIP" and "gzip, gzip", and is unbounded.
        decode_compressed_response=False,
        record_on_exception=True,
    )


def default_cassette_dir() -> Path:
    """The cassettes this package ships: ``dsweb_ref/_cassettes`` in an installed wheel, else the
    source checkout's ``cassettes/``."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "_cassettes"
    return installed if installed.is_dir() else package.parent / "cassettes"


def cassette_replay(
    cassette: str | Path, *, root: Path | None = None, allow_playback_repeats: bool = False
) -> AbstractContextManager[Any]:
    """Replay one cassette: ``with cassette_replay("search-api/basic.yaml"): ...``.

    The vcrpy context uses the suite's own replay settings: record mode ``none`` (a request the
    cassette does not hold raises ``vcr.errors.CannotOverwriteExistingCassetteException``
    instead of reaching the network) and :data:`MATCH_ON`, body included. A relative path is
    taken under ``root`` (default: :func:`default_cassette_dir`). Point the code under test at
    the cassette's ``provenance.replay_base`` (see :func:`provenance_of`); the context yields
    vcrpy's ``Cassette`` (``play_count``, ``all_played``). FileNotFoundError if it does not exist.
    """
    path = Path(cassette)
    if not path.is_absolute():
        path = (root if root is not None else default_cassette_dir()) / path
    if not path.is_file():
        raise FileNotFoundError(f"no cassette {path}")
    context: AbstractContextManager[Any] = make_vcr(record_mode="none").use_cassette(
        str(path), allow_playback_repeats=allow_playback_repeats
    )
    return context


# --- files ----------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not value.endswith((" ", "\t")) and "\r" not in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_presenter)


def dump_cassette(data: Mapping[str, Any]) -> str:
    """YAML text: provenance first, then vcrpy's keys; UTF-8 kept readable."""
    ordered = {PROVENANCE_KEY: data[PROVENANCE_KEY]} if PROVENANCE_KEY in data else {}
    ordered.update({k: v for k, v in data.items() if k != PROVENANCE_KEY})
    return yaml.dump(ordered, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=120)


def load_cassette(path: Path) -> dict[str, Any]:
    """A cassette file as data (safe YAML loader); ValueError if it is not a cassette."""
    data = yaml.safe_load(path.read_text("utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise ValueError(f"{path} is not a vcrpy cassette")
    return data


def provenance_of(path: Path) -> dict[str, Any]:
    """The cassette's provenance mapping; ValueError if it has none."""
    provenance = load_cassette(path).get(PROVENANCE_KEY)
    if not isinstance(provenance, dict):
        raise ValueError(f"{path} has no provenance")
    return provenance


def iter_cassettes(root: Path) -> list[Path]:
    """Every cassette under ``root`` (``<protocol>/<name>.yaml``), sorted."""
    return sorted(p for p in root.glob("*/*.yaml") if p.is_file())


def replace_everywhere(value: Any, replacements: Iterable[tuple[str, str]]) -> Any:
    """``value`` with each (old, new) replaced in every string and bytes, keys included,
    longest ``old`` first (so a secret that contains another is replaced whole)."""
    return replace_literals_deep(value, replacements)


def finalize_cassette(
    raw: Mapping[str, Any],
    *,
    provenance: Mapping[str, Any],
    replacements: Sequence[tuple[str, str]] = (),
    origin: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """The cassette as written: ``replacements`` ((secret, placeholder) pairs) applied and ``origin``
    (recorded, placeholder) rewritten everywhere, provenance included (a fault's label may hold
    either), response lengths fixed, provenance added."""
    pairs: list[tuple[str, str]] = list(replacements)
    if origin is not None:
        recorded, placeholder = origin
        pairs.append((recorded, placeholder))
        pairs.append((recorded.split("://", 1)[-1], placeholder.split("://", 1)[-1]))
    data: dict[str, Any] = replace_everywhere(dict(raw), pairs)
    for interaction in data.get("interactions", []):
        request_headers = interaction["request"].get("headers") or {}
        for name in list(request_headers):
            if name.lower() in SCRUBBED_REQUEST_HEADERS:
                request_headers[name] = [REDACTED]
        response = interaction["response"]
        headers = response.get("headers") or {}
        for name in list(headers):
            if name.lower() in DROPPED_RESPONSE_HEADERS or name.lower().startswith("cf-"):
                del headers[name]
            elif name.lower() == "content-length":
                body = response.get("body", {}).get("string", "")
                size = len(body.encode("utf-8") if isinstance(body, str) else body)
                headers[name] = [str(size)]
    data[PROVENANCE_KEY] = replace_everywhere(dict(provenance), pairs)
    return data
