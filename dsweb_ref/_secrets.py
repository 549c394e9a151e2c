"""The one rule set for credential-like text, shared by the providers (error messages), the
certification reports, the cassette recorder and scanner, and the emulator's log scrubber.

:data:`SECRET_RULES` says what looks like a credential; each user keeps its own placeholder
(``<credential>``, ``[REDACTED]``, ...) and decides whether to redact (:func:`redact_patterns`)
or only to flag (:func:`rule_hits`). :func:`replace_literals` and :func:`replace_literals_deep`
replace known secret values, longest first, so a secret that contains another is replaced whole.

Token rules need a digit (or, for secret-named fields, mixed character classes) so prose such as
"Bearer authentication" or "Basic authentication" is never taken for a credential, and
placeholders such as ``<DEEPSEEK_API_KEY>`` never match.

Known secrets (:class:`SecretForms`, :func:`scrub_text`) are found in every encoding a real endpoint
or library plausibly produces, plus those the secret-leak hunts listed, each in linear time:

* raw in any case, reversed, ROT13; %XX to three levels, HTML references, JSON ``\\u``/``\\U``/
  ``\\u{}``, ``\\x``, octal and CSS escapes, quoted-printable, decimal byte lists, hex (forward,
  reversed, ``0x``-prefixed, with any separator between bytes); base64 (any alignment, either
  alphabet, any case, wrapped across lines, of the reversed key, of its own base64), base32, base85,
  ASCII85 and uuencode;
* through three views of the text: as it is; folded (JSON ``\\uXXXX`` decoded, NFKD so fullwidth and
  other compatibility look-alikes become ASCII, common Cyrillic/Greek look-alikes mapped to Latin,
  and zero-width and other format characters (Cf), combining marks (Mn, Me) and controls removed);
  and compact (ASCII letters and digits only: spaces, dashes, colons, quotes or line breaks between
  the characters of a form are gone, so a key spelled out, dashed, or cut into ordered fragments is
  still one run). A match in a view redacts the span it came from in the original text.
* any 10 characters of a secret (:data:`PIECE`), raw or in the per-character forms, in the first two
  views; and any 10 of its letters and digits spelled out (single characters with visible separators
  between them, ``d s w e b - e m u l``), looked for only in such runs so ordinary words stay; and any 10
  written a byte or an escape at a time with separators between them (a hex dump ``64 73 77 ...``,
  ``%64 %73``, ``&#100; &#115;``, a C byte array ``0x64, 0x73``), read by decoding such runs (:func:`_dump_spans`);
* JSON ``\\uXXXX`` escapes escaped again (``\\\\u0064``): a run of backslashes before one counts as one.

The compact view only takes needles of :data:`MIN_COMPACT` characters or more, and the halves of a
secret (every other character) only from 12: shorter ones occur in ordinary text. Ordinary words are
never redacted for a secret's sake: every compact needle is the form of a whole secret (or of one of
its halves).

Not covered, on purpose (the threat model: an endpoint that deliberately obfuscates can always
exfiltrate a key it was sent, e.g. by encrypting it; the goal is every encoding a real endpoint or
library plausibly produces): a key cut into fragments shorter than 10 characters and shown apart or
out of order (``chunks of 8`` each base64-encoded separately, even and odd characters interleaved in
any other way than the two halves, a permutation); compressed forms inside text (base64 of gzip, hex
of zlib: no needle exists, the bytes depend on the context; a compressed *body* is decompressed by
the cassette scanner, :mod:`dsweb_ref.replay.cassettes`); encryption, XOR, arbitrary alphabets and
confusables beyond the common Cyrillic/Greek letters. A secret shorter than 10 characters has no
pieces and few compact needles: ``dsweb record`` refuses to record with one. Not yet covered: a part of a
secret in a C array of wider words (``0x6473, 0x7765``) or bytes written with casts or suffixes (``(uint8_t)0x64``,
``0x64u``); a whole one is found (compact view), a part is not.

Neutral on purpose: the providers import it, and they must not import ``certification`` or ``tools``.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import html.entities
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "MIN_COMPACT",
    "PIECE",
    "SECRET_RULES",
    "SecretForms",
    "SecretRule",
    "encoded_secret_found",
    "ordered_pairs",
    "piece_found",
    "redact_encoded",
    "redact_patterns",
    "redact_pieces",
    "replace_literals",
    "replace_literals_deep",
    "rule_hits",
    "scrub_text",
]

_T = TypeVar("_T", str, bytes)
_CHARS = r"[A-Za-z0-9._~+/=-]"
# Linear time on any input (issue 14): a token run is taken whole with a possessive quantifier
# and its content is checked by a validator, never by a lookahead that rescans the run from every
# start; so a failed candidate consumes its run and the scan moves past it.
_RUN = rf"{_CHARS}{{12,}}+"
_SEP = r"""["']?+(?>\s*+[:=]\s*+|\s++)\[?+\s*+["']?+"""  # `key: v`, `"key": "v"`, `key=v`, `key: ['v']`, `--key v`


def _has_digit(match: re.Match[str]) -> bool:
    """A token needs a digit, so prose is not taken for a key."""
    return any(c.isdigit() for c in match.group("secret"))


def _bearer_token(match: re.Match[str]) -> bool:
    """A bearer token: a digit, or punctuation inside it (``some.jwt.value``), so "Bearer tokens."
    is prose."""
    return _has_digit(match) or re.search(r"[._~+/=-][A-Za-z0-9]", match.group("secret")) is not None


def _mixed_classes(match: re.Match[str]) -> bool:
    """A secret field's value: at least two of lower case, upper case and digits."""
    value = match.group("secret")
    classes = (any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value))
    return sum(classes) >= 2


def _basic_credential(match: re.Match[str]) -> bool:
    """``Basic <base64>`` whose payload decodes to printable ``user:password`` text."""
    token = match.group("secret")
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon) and bool(user or password) and decoded.isprintable()


@dataclass(frozen=True, slots=True)
class SecretRule:
    """One kind of credential-like text. The ``secret`` group is what a redaction replaces (the
    text before it, e.g. ``Bearer `` or ``"api_key": "``, is kept); ``validator``, when set, must
    also accept a match."""

    kind: str
    pattern: re.Pattern[str]
    validator: Callable[[re.Match[str]], bool] | None = None

    def accepts(self, match: re.Match[str]) -> bool:
        return self.validator is None or self.validator(match)


SECRET_RULES: tuple[SecretRule, ...] = (
    # sk- keys, project keys (sk-proj-...) included; not the tail of a word such as "desk-".
    SecretRule("sk-key", re.compile(r"(?<![A-Za-z0-9])(?P<secret>sk-[A-Za-z0-9_-]{16,}+)")),
    SecretRule("bearer-token", re.compile(rf"(?i)\bbearer\s++(?P<secret>{_RUN})"), _bearer_token),
    SecretRule(
        "key-field",
        re.compile(
            r"(?i)(?:x-api-key|api[_-]?key|access[_-]?token|refresh[_-]?token|client[_-]?secret|password)"
            rf"{_SEP}(?P<secret>{_RUN})"
        ),
        _has_digit,
    ),
    # A field or header named *token / *secret / *password (x-auth-token, session_token, secret, ...)
    # with a long mixed value; "max_tokens" and friends end in "tokens" and are not matched. The
    # name's prefix (``x-auth-``) is kept by a redaction anyway, so only the last word is matched:
    # matching the prefix made "a-a-a-..." quadratic.
    SecretRule(
        "secret-field",
        re.compile(
            r"(?i)(?<![A-Za-z0-9])(?:token|secret|password|passwd)(?![A-Za-z0-9])"
            rf"{_SEP}(?P<secret>{_RUN})"
        ),
        _mixed_classes,
    ),
    # Starts only at the beginning of a run, so "eyJ-eyJ-..." is not rescanned from every "eyJ".
    SecretRule(
        "jwt",
        re.compile(r"(?<![A-Za-z0-9_-])(?P<secret>eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+)"),
    ),
    SecretRule(
        "basic-auth",
        re.compile(r"(?i)\bbasic\s++(?P<secret>[A-Za-z0-9+/]{6,}+={0,2}+)(?![A-Za-z0-9+/=])"),
        _basic_credential,
    ),
    SecretRule("github-token", re.compile(r"\b(?P<secret>gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,}+)")),
    SecretRule("aws-access-key-id", re.compile(r"\b(?P<secret>(?:AKIA|ASIA)[A-Z0-9]{16})\b")),
)


def rule_hits(text: str) -> list[str]:
    """The kinds of :data:`SECRET_RULES` that find a credential-like value in ``text``, in table order."""
    return [rule.kind for rule in SECRET_RULES if any(rule.accepts(m) for m in rule.pattern.finditer(text))]


def redact_patterns(text: str, placeholder: str) -> str:
    """``text`` with the secret part of every :data:`SECRET_RULES` match replaced by ``placeholder``."""
    for rule in SECRET_RULES:

        def sub(match: re.Match[str], rule: SecretRule = rule) -> str:
            if not rule.accepts(match):
                return match.group(0)
            start, end = match.span("secret")
            whole = match.group(0)
            offset = match.start()
            return whole[: start - offset] + placeholder + whole[end - offset :]

        text = rule.pattern.sub(sub, text)
    return text


def ordered_pairs(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """(old, new) pairs without empty ``old`` values, longest ``old`` first, duplicates dropped."""
    return sorted(dict.fromkeys((o, n) for o, n in pairs if o), key=lambda pair: len(pair[0]), reverse=True)


def replace_literals(value: _T, pairs: Iterable[tuple[str, str]]) -> _T:
    """``value`` (text or UTF-8 bytes) with each (old, new) of ``pairs`` replaced, longest old first."""
    return _apply(value, ordered_pairs(pairs))


def _apply(value: _T, ordered: Sequence[tuple[str, str]]) -> _T:
    for old, new in ordered:
        if isinstance(value, bytes):
            value = value.replace(old.encode(), new.encode())
        else:
            value = value.replace(old, new)
    return value


def replace_literals_deep(value: Any, pairs: Iterable[tuple[str, str]]) -> Any:
    """:func:`replace_literals` in every string and bytes of a JSON-like value, mapping keys
    included (dicts and lists are copied; anything else is returned unchanged)."""
    ordered = ordered_pairs(pairs)
    return _deep(value, ordered) if ordered else value


def _deep(value: Any, pairs: Sequence[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        return _apply(value, pairs)
    if isinstance(value, bytes):
        return _apply(value, pairs)
    if isinstance(value, dict):
        return {_deep(k, pairs): _deep(v, pairs) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep(v, pairs) for v in value]
    return value


# --- encoded forms of a known secret ---------------------------------------------------------
# An upstream may echo a credential back encoded (issue 14 item 6, hunt G): base64, %XX, swapped
# case, JSON \uXXXX or \/ escapes, HTML entities, hex, reversed, and the forms listed in the module
# docstring. Literal replacement misses all of them, so each known secret gets patterns and needles
# that find it in three views of a text (see :func:`_fold` and :func:`_compact`).

MIN_COMPACT = 10  # a compact needle shorter than this is not searched: ordinary text would hold it
_MIN_HALF = 12  # nor is one half of a secret taken every other character, shorter than this
_ASCII_INVISIBLE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_COMPACT_DROP = re.compile(r"[^A-Za-z0-9\\]+|\\[nrt]?")  # all but ASCII letters and digits; "\n" escapes too
_COMPACT_KEEP = re.compile(r"\\[nrt]|[A-Za-z0-9]+")  # the same view, run by run (for mapping back)


def _invisible(char: str) -> bool:
    """A character that does not show: a format character (Cf: zero-width space, soft hyphen, BOM,
    word joiner...), a combining mark (Mn, Me), or a control other than whitespace (Cc: the NULs of
    UTF-16 text read as UTF-8)."""
    category = unicodedata.category(char)
    return category in ("Cf", "Mn", "Me") or (category == "Cc" and not char.isspace())


# Letters of other scripts drawn like Latin ones (Unicode's confusables, the common ones): NFKD
# keeps them, so they are mapped here, in the folded view only.
_LOOKALIKES = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u043a\u0456\u0458\u0455\u04bb\u0501\u0410\u0412\u0415\u041a\u041c"
    "\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u0408\u0405\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c"
    "\u039d\u039f\u03a1\u03a4\u03a5\u03a7\u03bf\u03bd",
    "aeopcyxkijshdABEKMHOPCTXIJSABEZHIKMNOPTYXov",
)


# A run of backslashes before the escape counts as one: a JSON dump quoted inside JSON reads \\u0064. Matched
# only from a run's first backslash (the lookbehind), so a long run is scanned once, not once per backslash.
_JSON_U = re.compile(r"(?<!\\)\\+u([0-9A-Fa-f]{4})")
_FOLD_TOKEN = re.compile(r"(?<!\\)\\+u[0-9A-Fa-f]{4}|[\s\S]")


def _fold(text: str) -> str:
    """``text`` as it reads: JSON ``\\uXXXX`` escapes decoded (a raw JSON body hides a zero-width
    space as ``\\u200b``), compatibility-decomposed (NFKD: fullwidth and other look-alike forms
    become ASCII, accents come apart), common Cyrillic and Greek look-alikes mapped to Latin, and
    every invisible character (:func:`_invisible`) dropped. Linear; ASCII text without escapes or
    controls is returned as is."""
    if "\\u" in text:
        text = _JSON_U.sub(lambda m: chr(int(m[1], 16)), text)
    if text.isascii():
        return _ASCII_INVISIBLE.sub("", text)
    text = unicodedata.normalize("NFKD", text).translate(_LOOKALIKES)
    drop = {ord(c): None for c in set(text) if not c.isascii() and _invisible(c)}
    return _ASCII_INVISIBLE.sub("", text.translate(drop) if drop else text)


def _fold_map(text: str) -> tuple[str, list[int], list[int]]:
    """:func:`_fold` token by token, with the span in ``text`` (start, end) each folded character
    comes from (only run once a form was found, to redact it)."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for token in _FOLD_TOKEN.finditer(text):
        char = token[0] if len(token[0]) == 1 else chr(int(token[0][-4:], 16))
        for part in char if char.isascii() else unicodedata.normalize("NFKD", char).translate(_LOOKALIKES):
            if not _invisible(part):
                chars.append(part)
                starts.append(token.start())
                ends.append(token.end())
    return "".join(chars), starts, ends


def _compact(folded: str) -> str:
    """The compact view of a folded text: its ASCII letters and digits only, lower case, with JSON
    line-break escapes (``\\n``) dropped. Whatever separates the characters of a form (spaces,
    dashes, colons, commas, quotes, line breaks, ``0x``-free punctuation) is gone from it."""
    return _COMPACT_DROP.sub("", folded).lower()


def _rot13(text: str) -> str:
    return codecs.encode(text, "rot13")


def _groups(data: bytes, encode: Callable[[bytes], bytes], size: int, width: int) -> list[str]:
    """The part of a base-N encoding (``size`` bytes to ``width`` characters) that depends on
    ``data`` alone, for each of the ``size`` alignments it can sit at after other bytes."""
    cores = []
    for shift in range(size):
        text = encode(b"\0" * shift + data).decode("ascii")
        first = -(-shift // size)  # the first group made of ``data`` bytes only
        last = (shift + len(data)) // size
        cores.append(text[first * width : last * width])
    return cores


def _needles(secret: str) -> tuple[str, ...]:
    """Every whole-secret form the compact view (:func:`_compact`) can hold, compacted the same way:
    the secret with any separators between its characters (spaced, dashed, split in ordered
    fragments), reversed, ROT13, and each half taken every other character; and from its bytes:
    hex (so %XX to any depth, quoted-printable ``=XX``, CSS escapes and any separator between the
    bytes), ``0x``/``\\x``/``&#x`` prefixed hex, octal and decimal bytes, ``\\u``, ``\\U`` and
    ``\\u{}`` escapes, base64 (any alignment, either alphabet, any case), base64 of base64, base32,
    base85 and ASCII85, uuencode, each of the byte forms of the reversed secret too; and hex and base64
    of the secret's UTF-16LE and UTF-16BE bytes."""
    data = _utf8(secret)
    points = [ord(c) for c in secret]
    raw = [secret, secret[::-1], _rot13(secret), _rot13(secret[::-1])]
    halves = [h for h in (secret[0::2], secret[1::2]) if len(_compact(_fold(h))) >= _MIN_HALF]
    forms: list[str] = []
    for chunk in (data, data[::-1]):
        forms += [
            chunk.hex(),
            "".join(f"0x{b:02x}" for b in chunk),
            "".join(f"x{b:02x}" for b in chunk),
            "".join(f"25{b:02x}" for b in chunk),
            "".join(f"2525{b:02x}" for b in chunk),
            "".join(f"{b:03o}" for b in chunk),
            "".join(str(b) for b in chunk),
        ]
        b64 = _base64_cores_of(chunk)
        forms += b64
        forms += [outer for inner in b64 for outer in _groups(inner.encode("ascii"), base64.b64encode, 3, 4)]
        forms += _groups(chunk, base64.b32encode, 5, 8)
        forms += _groups(chunk, base64.b85encode, 4, 5)
        forms += _groups(chunk, base64.a85encode, 4, 5)
        forms += [core.translate(_UU) for core in _groups(chunk, base64.b64encode, 3, 4)]
    # The secret as UTF-16 (either byte order), hex or base64 of those bytes: an endpoint that echoes the
    # key the way a Windows or Java stack holds text. Only these two forms, so the needle count stays small.
    for wide in (secret.encode("utf-16-le", "surrogatepass"), secret.encode("utf-16-be", "surrogatepass")):
        forms.append(wide.hex())
        forms += _base64_cores_of(wide)
    for ordered in (points, points[::-1]):
        forms += [
            "".join(f"u{p:04x}" for p in ordered),
            "".join(f"u{p:08x}" for p in ordered),
            "".join(f"u{p:x}" for p in ordered),
            "".join(f"x{p:x}" for p in ordered),
            "".join(str(p) for p in ordered),
        ]
    compacted = [_compact(_fold(f)) for f in raw] + [_compact(_fold(h)) for h in halves] + [_compact(f) for f in forms]
    return tuple(dict.fromkeys(n for n in compacted if len(n) >= MIN_COMPACT))


# base64 to uuencode: the same 6-bit groups, characters chr(32 + value) ("`" for zero).
_UU = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    "`" + "".join(chr(32 + v) for v in range(1, 64)),
)


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8 bytes, where a secret may hold a lone surrogate: an environment value that was
    not UTF-8 (Python keeps each such byte as U+DC80-U+DCFF) gives back its bytes; any other surrogate
    is encoded as it stands, so no secret makes the scrub raise."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _char_forms(char: str) -> str:
    code = ord(char)
    forms = [re.escape(char)]  # any case: the pattern ignores case
    forms.append("".join(f"%(?:25){{0,2}}{b:02x}" for b in _utf8(char)))  # %XX up to three levels
    forms += [f"&#0*{code};?", f"&#x0*{code:x};?", f"\\\\u{code:04x}"]
    if code < 0x100:
        forms.append(f"\\\\x{code:02x}")
    name = html.entities.codepoint2name.get(code)
    if name:
        forms.append(f"&{name};")
    if char in "/\"'\\":
        forms.append(re.escape("\\" + char))
    return "(?:" + "|".join(forms) + ")"


def _base64_cores_of(data: bytes) -> list[str]:
    """The part of base64 text that depends only on ``data``, whatever came before it (three
    alignments), in the standard and URL-safe alphabets."""
    cores: list[str] = []
    for shift in range(3):
        text = base64.b64encode(b"\0" * shift + data).decode("ascii")
        core = text[-(-4 * shift // 3) : (4 * (shift + len(data))) // 3]
        if len(core) >= 8:
            cores += [core, core.translate(str.maketrans("+/", "-_"))]
    return cores


def _base64_cores(secret: str) -> list[str]:
    return _base64_cores_of(_utf8(secret))


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _replace_spans(text: str, spans: list[tuple[int, int]], placeholder: str) -> str:
    for start, end in reversed(_merge(spans)):
        text = text[:start] + placeholder + text[end:]
    return text


@dataclass(frozen=True, slots=True)
class SecretForms:
    """Finds or redacts one known secret in the encoded forms an echo may use (see the module
    docstring), in three views of a text: as it is; folded (:func:`_fold`: look-alikes to ASCII,
    invisible characters gone); and compact (:func:`_compact`: letters and digits only). The
    patterns (any mix per character of raw in any case, %XX up to three levels, HTML entity and
    JSON/\\x escape; the same reversed; hex; base64 at any alignment) run on the first two; the
    ``needles`` (:func:`_needles`) on the third. A match in a view is redacted in the text itself:
    each view character remembers the text character it comes from. Linear time: one alternation
    per character, no nested repeats, and plain substring search for the needles."""

    loose: re.Pattern[str]  # case-insensitive forms
    exact: re.Pattern[str]  # base64 (case matters)
    needles: tuple[str, ...] = ()  # compact, lower-case forms of the whole secret
    spelled: tuple[str, ...] = ()  # compact, lower-case pieces looked for in spelled-out runs only (_SPELLED)

    @classmethod
    def of(cls, secret: str) -> SecretForms:
        return _forms(secret)

    def _in(self, text: str) -> bool:
        return self.loose.search(text) is not None or self.exact.search(text) is not None

    def found(self, text: str) -> bool:
        if self._in(text):
            return True
        folded = _fold(text)
        if folded != text and self._in(folded):
            return True
        if self.needles:
            compact = _compact(folded)
            if any(needle in compact for needle in self.needles):
                return True
        return bool(self.spelled) and bool(self._spelled_runs(folded))

    def _spelled_runs(self, view: str) -> list[tuple[int, int]]:
        """The spans of ``view``'s spelled-out runs that hold a piece (:attr:`spelled`)."""
        spans = []
        for match in _SPELLED.finditer(view):
            letters = _compact(match[0])
            if any(piece in letters for piece in self.spelled):
                spans.append(match.span())
        return spans

    def redact(self, text: str, placeholder: str) -> str:
        text = self.exact.sub(placeholder, self.loose.sub(placeholder, text))
        folded = _fold(text)
        if folded != text and self._in(folded):
            view, starts, ends = _fold_map(text)
            spans = [m.span() for p in (self.loose, self.exact) for m in p.finditer(view) if m.end() > m.start()]
            text = _replace_spans(text, [(starts[a], ends[b - 1]) for a, b in spans], placeholder)
            folded = _fold(text)
        if self.needles:
            compact = _compact(folded)
            if any(needle in compact for needle in self.needles):
                text = self._redact_compact(text, placeholder)
        if self.spelled and self._spelled_runs(folded):  # mapped back only once a run holds a piece
            view, starts, ends = _fold_map(text)
            spans = self._spelled_runs(view)
            text = _replace_spans(text, [(starts[a], ends[b - 1]) for a, b in spans], placeholder)
        return text

    def _redact_compact(self, text: str, placeholder: str) -> str:
        view, starts, ends = _fold_map(text)
        kept: list[str] = []
        where: list[int] = []  # the folded index of each compact character
        for match in _COMPACT_KEEP.finditer(view):
            if match[0][0] != "\\":
                kept.append(match[0])
                where += range(match.start(), match.end())
        compact = "".join(kept).lower()
        spans: list[tuple[int, int]] = []
        for needle in self.needles:
            at = compact.find(needle)
            while at >= 0:
                spans.append((starts[where[at]], ends[where[at + len(needle) - 1]]))
                at = compact.find(needle, at + len(needle))
        return _replace_spans(text, spans, placeholder)


_NEVER = re.compile(r"(?!)")


def _any_of(cores: Iterable[str]) -> re.Pattern[str]:
    """One pattern for the base64 cores, longest first; none (a secret under six bytes has no core of
    eight characters) never matches, where an empty alternation would match everywhere."""
    ordered = sorted(set(cores), key=len, reverse=True)
    return re.compile("|".join(map(re.escape, ordered))) if ordered else _NEVER


@functools.lru_cache(maxsize=64)
def _forms(secret: str) -> SecretForms:
    per_char = "".join(_char_forms(c) for c in secret)
    backwards = "".join(_char_forms(c) for c in reversed(secret))
    hexed = re.escape(_utf8(secret).hex())
    loose = re.compile(f"{per_char}|{backwards}|{hexed}", re.IGNORECASE)
    return SecretForms(loose, _any_of(_base64_cores(secret)), _needles(secret))


def encoded_secret_found(text: str, secrets: Iterable[str]) -> bool:
    """Whether any of ``secrets`` is in ``text``, raw or in an encoded form (:class:`SecretForms`)."""
    return any(SecretForms.of(s).found(text) for s in secrets if s)


def redact_encoded(text: str, secrets: Iterable[str], placeholder: str) -> str:
    """``text`` with every one of ``secrets`` replaced by ``placeholder``, raw or encoded, longest first."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = SecretForms.of(secret).redact(text, placeholder)
    return text


# --- pieces of a known secret ----------------------------------------------------------------
# An upstream may also echo part of a credential: a prefix it logged, a key cut by its own limit, a
# Retry-After that quotes what it read. A part long enough to narrow the key down is a leak too.
PIECE = 10  # characters of a secret that count as showing it (the certification's judge counts the same)
# A run of at least PIECE single letters or digits with visible ASCII separators between them ("d s w e b",
# "d-s-w-e-b"): a part of a key spelled out. The classes are disjoint, so the match is linear; ordinary words (two
# letters in a row) never form one. Whole runs only (no letter or digit just outside), so a word beside the run
# keeps its letters. Backslashes and invisible characters are no separators here: the folded view reads those.
_SEP = r"[\s!-/:-@\[\]-`{-~]"
_SPELLED = re.compile(rf"(?<![0-9A-Za-z])(?:[0-9A-Za-z]{_SEP}{{1,3}}){{{PIECE - 1},}}[0-9A-Za-z](?![0-9A-Za-z])")


@functools.lru_cache(maxsize=64)
def _piece_forms(secret: str) -> SecretForms:
    """Every ``PIECE``-character piece of ``secret`` in the forms :class:`SecretForms` reads."""
    starts = range(len(secret) - PIECE + 1)
    runs = [secret[i : i + PIECE] for i in starts] + [secret[::-1][i : i + PIECE] for i in starts]
    data = _utf8(secret)
    hexed = [re.escape(data[i : i + PIECE].hex()) for i in range(len(data) - PIECE + 1)]
    loose = re.compile("|".join(dict.fromkeys(["".join(map(_char_forms, run)) for run in runs] + hexed)), re.I)
    # A part spelled out ("d s w e b - e m u l a t"): each PIECE letters and digits of the secret, forwards and
    # backwards, looked for in runs of single characters only. The compact view of the whole text would also find
    # a piece in ordinary words ("the dsweb emulator"), which must stay.
    compact = _compact(_fold(secret))
    spelled = [c[i : i + PIECE] for c in (compact, compact[::-1]) for i in range(len(c) - PIECE + 1)]
    exact = _any_of([core for run in runs[: len(starts)] for core in _base64_cores(run)])
    return SecretForms(loose, exact, spelled=tuple(dict.fromkeys(spelled)))


# A part written a byte or an escape at a time with separators between them: a hex dump ("64 73 77 ...", "6473
# 7765 ..."), "\x64 \x73", "%64 %73", "&#100; &#115;", "\u0064 \u0073". Each separator
# breaks the per-character patterns above, and the compact view takes whole secrets only (a piece's letters would
# match ordinary words there), so such a run is read on its own: found by one pattern, decoded, and searched for
# the pieces. The separators are ASCII whitespace and punctuation that start no form (not "%", "&" or a backslash)
# and each unbounded repeat is possessive, so a run is read once: linear. A C array ("0x64, 0x73") is a run too:
# "0x" before each byte, one alternative ahead of bare hex (whose pairs cannot start with "0x").
_DUMP_FORM = (
    r"(?:\\|0)x(?P<byte>[0-9a-f]{2})|%(?:25){0,2}(?:u(?P<pu>[0-9a-f]{4})|(?P<pc>[0-9a-f]{2}))"
    r"|&#(?:x0*+(?P<ex>[0-9a-f]{1,6})|0*+(?P<ed>[0-9]{1,7}));?+|\\u(?P<ju>[0-9a-f]{4})|(?P<bare>(?:[0-9a-f]{2})++)"
)
_DUMP_SEP = r"[\s!-$'-/:-@\[\]-`{-~]++"
_DUMP_PLAIN = re.sub(r"\(\?P<\w+>", "(?:", _DUMP_FORM)  # the run's pattern repeats the form: no named groups
# A run starts at a word's start only, so a long hex word is read once, not once from each of its characters.
_DUMP_RUN = re.compile(rf"(?<![0-9a-z])(?:{_DUMP_PLAIN})(?:{_DUMP_SEP}(?:{_DUMP_PLAIN}))++", re.I)
_DUMP_ONE = re.compile(_DUMP_FORM, re.I)


def _dump_chars(run: str, start: int) -> tuple[str, list[tuple[int, int]]]:
    """The characters a dump run decodes to (lower case, one for one), and the span in the text each comes from."""
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    for form in _DUMP_ONE.finditer(run):
        bare, code = form["bare"], form["byte"] or form["pc"] or form["pu"] or form["ex"] or form["ju"]
        if bare is not None:
            decoded = bytes.fromhex(bare).decode("latin-1")
        else:
            decoded = chr(min(int(code, 16) if code else int(form["ed"]), 0x10FFFF))
        chars += [c.lower() if len(c.lower()) == 1 else c for c in decoded]  # "İ".lower() is two characters
        spans += [(start + form.start(), start + form.end())] * len(decoded)
    return "".join(chars), spans


def _dump_spans(text: str, secret: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that write a ``PIECE``-character piece of ``secret``, forwards or backwards, a byte
    or an escape at a time with separators between them (see ``_DUMP_RUN``)."""
    wholes = {secret.lower(), _utf8(secret).decode("latin-1").lower()}  # code points, and UTF-8 bytes
    pieces = {w[i : i + PIECE] for whole in wholes for w in (whole, whole[::-1]) for i in range(len(w) - PIECE + 1)}
    found: list[tuple[int, int]] = []
    for run in _DUMP_RUN.finditer(text):
        decoded, spans = _dump_chars(run[0], run.start())
        for piece in pieces:
            at = decoded.find(piece)
            while at >= 0:
                found.append((spans[at][0], spans[at + PIECE - 1][1]))
                at = decoded.find(piece, at + 1)
    return found


def piece_found(text: str, secrets: Iterable[str]) -> bool:
    """Whether any ``PIECE``-character piece of ``secrets`` is in ``text``, raw or encoded."""
    return any(_piece_forms(s).found(text) or bool(_dump_spans(text, s)) for s in secrets if len(s) >= PIECE)


def redact_pieces(text: str, secrets: Iterable[str], placeholder: str) -> str:
    """``text`` with every ``PIECE``-character piece of ``secrets`` replaced by ``placeholder``, raw or
    encoded as :class:`SecretForms` reads or written a byte or escape at a time (:func:`_dump_spans`). A longer
    part loses a piece per match, so what is left of it between placeholders is shorter than a piece. Linear,
    at about a microsecond per character and secret: a few times the cost of :func:`redact_encoded`."""
    for secret in sorted({s for s in secrets if len(s) >= PIECE}, key=lambda s: (-len(s), s)):  # a fixed order
        text = _piece_forms(secret).redact(text, placeholder)
        text = _replace_spans(text, _dump_spans(text, secret), placeholder)
    return text


def scrub_text(text: str, secrets: Iterable[str], placeholder: str) -> str:
    """The one scrubber for text a person or a model will read (error messages, reports, the
    terminal): every known secret replaced, raw or in any encoded form :class:`SecretForms` finds
    (in the text, its folded view and its compact view; see the module docstring), longest first;
    then every piece of one that is left (:func:`redact_pieces`); then anything credential-shaped
    (:data:`SECRET_RULES`)."""
    values = [s for s in secrets if s]
    text = replace_literals(text, ((s, placeholder) for s in values))  # cheap, and exact for any length
    text = redact_pieces(redact_encoded(text, values, placeholder), values, placeholder)
    return redact_patterns(text, placeholder)
