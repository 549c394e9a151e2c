"""The one rule set for credential-like text, shared by the providers (error messages), the
certification reports, the cassette recorder and scanner, and the emulator's log scrubber.

:data:`SECRET_RULES` says what looks like a credential; each user keeps its own placeholder
(``<credential>``, ``[REDACTED]``, ...) and decides whether to redact (:func:`redact_patterns`)
or only to flag (:func:`rule_hits`). :func:`replace_literals` and :func:`replace_literals_deep`
replace known secret values, longest first, so a secret that contains another is replaced whole.

Token rules need a digit (or, for secret-named fields, mixed character classes) so prose such as
"Bearer authentication" or "Basic authentication" is never taken for a credential, and
placeholders such as ``<DEEPSEEK_API_KEY>`` never match.

Neutral on purpose: the providers import it, and they must not import ``certification`` or ``tools``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import html.entities
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
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
# An upstream may echo a credential back encoded (issue 14 item 6): base64, %XX, swapped case,
# JSON \uXXXX or \/ escapes, HTML entities, hex, reversed. Literal replacement misses all of
# them, so each known secret also gets one pattern that finds it in any of those forms.


def _char_forms(char: str) -> str:
    code = ord(char)
    forms = [re.escape(char)]  # any case: the pattern ignores case
    forms.append("".join(f"%(?:25)?{b:02x}" for b in char.encode("utf-8")))
    forms += [f"&#0*{code};?", f"&#x0*{code:x};?", f"\\\\u{code:04x}"]
    if code < 0x100:
        forms.append(f"\\\\x{code:02x}")
    name = html.entities.codepoint2name.get(code)
    if name:
        forms.append(f"&{name};")
    if char in "/\"'\\":
        forms.append(re.escape("\\" + char))
    return "(?:" + "|".join(forms) + ")"


def _base64_cores(secret: str) -> list[str]:
    """The part of base64 text that depends only on ``secret``, whatever came before it (three
    alignments), in the standard and URL-safe alphabets."""
    data = secret.encode("utf-8")
    cores: list[str] = []
    for shift in range(3):
        text = base64.b64encode(b"\0" * shift + data).decode("ascii")
        core = text[-(-4 * shift // 3) : (4 * (shift + len(data))) // 3]
        if len(core) >= 8:
            cores += [core, core.translate(str.maketrans("+/", "-_"))]
    return cores


@dataclass(frozen=True, slots=True)
class SecretForms:
    """Finds or redacts one known secret in the encoded forms an echo may use (see above). Any
    mix per character of raw (any case), %XX, HTML entity and JSON/\\x escape; the same reversed;
    hex; base64 at any alignment. Linear time: one alternation per character, no nested repeats."""

    loose: re.Pattern[str]  # case-insensitive forms
    exact: re.Pattern[str]  # base64 (case matters)

    @classmethod
    def of(cls, secret: str) -> SecretForms:
        return _forms(secret)

    def found(self, text: str) -> bool:
        return self.loose.search(text) is not None or self.exact.search(text) is not None

    def redact(self, text: str, placeholder: str) -> str:
        return self.exact.sub(placeholder, self.loose.sub(placeholder, text))


@functools.lru_cache(maxsize=64)
def _forms(secret: str) -> SecretForms:
    per_char = "".join(_char_forms(c) for c in secret)
    backwards = "".join(_char_forms(c) for c in reversed(secret))
    hexed = re.escape(secret.encode("utf-8").hex())
    loose = re.compile(f"{per_char}|{backwards}|{hexed}", re.IGNORECASE)
    exact = re.compile("|".join(re.escape(c) for c in sorted(set(_base64_cores(secret)), key=len, reverse=True)))
    return SecretForms(loose, exact)


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


@functools.lru_cache(maxsize=64)
def _piece_forms(secret: str) -> SecretForms:
    """Every ``PIECE``-character piece of ``secret`` in the forms :class:`SecretForms` reads."""
    starts = range(len(secret) - PIECE + 1)
    runs = [secret[i : i + PIECE] for i in starts] + [secret[::-1][i : i + PIECE] for i in starts]
    data = secret.encode("utf-8")
    hexed = [re.escape(data[i : i + PIECE].hex()) for i in range(len(data) - PIECE + 1)]
    loose = re.compile("|".join(dict.fromkeys(["".join(map(_char_forms, run)) for run in runs] + hexed)), re.I)
    cores = sorted({core for run in runs[: len(starts)] for core in _base64_cores(run)}, key=len, reverse=True)
    return SecretForms(loose, re.compile("|".join(map(re.escape, cores))))


def piece_found(text: str, secrets: Iterable[str]) -> bool:
    """Whether any ``PIECE``-character piece of ``secrets`` is in ``text``, raw or encoded."""
    return any(_piece_forms(s).found(text) for s in secrets if len(s) >= PIECE)


def redact_pieces(text: str, secrets: Iterable[str], placeholder: str) -> str:
    """``text`` with every ``PIECE``-character piece of ``secrets`` replaced by ``placeholder``, raw or
    encoded as :class:`SecretForms` reads. A longer part loses a piece per match, so what is left of it
    between placeholders is shorter than a piece. Linear, at about a microsecond per character and
    secret: a few times the cost of :func:`redact_encoded`."""
    for secret in sorted({s for s in secrets if len(s) >= PIECE}, key=lambda s: (-len(s), s)):  # a fixed order
        text = _piece_forms(secret).redact(text, placeholder)
    return text


def scrub_text(text: str, secrets: Iterable[str], placeholder: str) -> str:
    """The one scrubber for text a person or a model will read (error messages, reports, the
    terminal): every known secret replaced, raw or in any encoded form :class:`SecretForms` finds,
    longest first; then every piece of one that is left (:func:`redact_pieces`); then anything
    credential-shaped (:data:`SECRET_RULES`)."""
    values = [s for s in secrets if s]
    text = replace_literals(text, ((s, placeholder) for s in values))  # cheap, and exact for any length
    text = redact_pieces(redact_encoded(text, values, placeholder), values, placeholder)
    return redact_patterns(text, placeholder)
