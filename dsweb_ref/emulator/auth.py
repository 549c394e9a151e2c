"""Who is calling: credential checks and masking, so no secret value is ever echoed or logged."""

from __future__ import annotations

import bisect
import hmac
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from .._secrets import ordered_pairs
from .errors import ApiError

__all__ = ["AuthResult", "Credentials", "Scrubber", "authenticate", "mask", "mask_header"]

CredentialKind = Literal["api_key", "account_token", "invalid", "missing"]
_SENSITIVE_HEADER = re.compile(r"auth|key|token|secret|cookie|session|password", re.IGNORECASE)
_MIN_SCRUB = 4  # shorter values would also match innocent text


def mask(secret: str) -> str:
    """``****`` plus the last four characters, as DeepSeek's 401 message shows them; short values
    show nothing, so a mask never reveals most of a secret."""
    return "****" + secret[-4:] if len(secret) >= 12 else "****"


def mask_header(name: str, value: str) -> str:
    """The loggable form of a header value; credential-bearing headers keep only their scheme."""
    if not _SENSITIVE_HEADER.search(name):
        return value
    scheme, sep, rest = value.strip().partition(" ")
    if sep and scheme.isalpha() and rest.strip():
        return f"{scheme} {mask(rest.strip())}"
    return mask(value.strip())


@dataclass(frozen=True, slots=True)
class Credentials:
    api_keys: frozenset[str]
    account_tokens: frozenset[str]

    @classmethod
    def of(cls, api_keys: Iterable[str], account_tokens: Iterable[str]) -> Credentials:
        keys, tokens = frozenset(api_keys), frozenset(account_tokens)
        if not keys and not tokens:
            raise ValueError("the emulator needs at least one API key or account token")
        if any(not s or s != s.strip() for s in keys | tokens):
            raise ValueError("credentials must be non-empty and carry no surrounding whitespace")
        return cls(keys, tokens)

    def kind_of(self, presented: str) -> CredentialKind:
        # compare_digest keeps the timing independent of how much of a guess is right.
        if any(hmac.compare_digest(presented.encode(), key.encode()) for key in self.api_keys):
            return "api_key"
        if any(hmac.compare_digest(presented.encode(), token.encode()) for token in self.account_tokens):
            return "account_token"
        return "invalid"

    def found_in(self, text: str) -> tuple[CredentialKind, ...]:
        """The kinds of configured credential ``text`` holds anywhere in it (api_key first): what a request
        carries besides the one credential :func:`authenticate` reads. Longest first, each found one taken out,
        so a credential inside another is not counted where only the longer one is; values shorter than the
        scrubber's bound are left out, as they would also match innocent text."""
        pairs: list[tuple[str, CredentialKind]] = [(key, "api_key") for key in self.api_keys]
        pairs += [(token, "account_token") for token in self.account_tokens]
        found: set[CredentialKind] = set()
        for secret, kind in sorted(pairs, key=lambda pair: -len(pair[0])):
            if len(secret) >= _MIN_SCRUB and secret in text:
                found.add(kind)
                text = text.replace(secret, "\0")
        return tuple(kind for kind in ("api_key", "account_token") if kind in found)


@dataclass(frozen=True, slots=True)
class AuthResult:
    kind: CredentialKind
    source: Literal["authorization", "x-api-key"] | None
    presented: str | None  # the raw value: used to scrub logs, never stored or sent

    @property
    def ok(self) -> bool:
        return self.kind in ("api_key", "account_token")

    def error(self) -> ApiError:
        return ApiError(
            401,
            f"Authentication Fails, Your api key: {mask(self.presented or '')} is invalid",
            "authentication_error",
        )


def authenticate(headers: Mapping[str, str], credentials: Credentials, *, accept_x_api_key: bool) -> AuthResult:
    """Authorization: Bearer wins over x-api-key when both are sent; the tools routes read Bearer only."""
    authorization = headers.get("authorization")
    if authorization is not None:
        scheme, _, token = authorization.strip().partition(" ")
        presented = token.strip() if scheme.casefold() == "bearer" else authorization.strip()
        kind = credentials.kind_of(presented) if scheme.casefold() == "bearer" and presented else "invalid"
        return AuthResult(kind, "authorization", presented)
    api_key = headers.get("x-api-key")
    if accept_x_api_key and api_key is not None:
        presented = api_key.strip()
        return AuthResult(credentials.kind_of(presented) if presented else "invalid", "x-api-key", presented)
    return AuthResult("missing", None, None)


class Scrubber:
    """Replaces every known secret in text or bytes by its mask: the ``secrets`` given, plus up to
    ``remember_limit`` other values passed to :meth:`remember` (the most recent ones).

    Built once per emulator; remembering a value inserts it in place (longest first, so a secret
    containing another is replaced whole) instead of rebuilding the whole table per request."""

    def __init__(self, secrets: Iterable[str], *, remember_limit: int = 0) -> None:
        self._fixed = frozenset(s for s in secrets if len(s) >= _MIN_SCRUB)
        self._limit = remember_limit
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._pairs: list[tuple[str, str]] = ordered_pairs((s, mask(s)) for s in self._fixed)
        self._byte_pairs = [(old.encode(), new.encode()) for old, new in self._pairs]

    @property
    def remembered(self) -> tuple[str, ...]:
        """The remembered values, oldest first (never more than ``remember_limit``)."""
        return tuple(self._recent)

    def remember(self, secret: str) -> None:
        if len(secret) < _MIN_SCRUB or secret in self._fixed or self._limit < 1:
            return
        if secret in self._recent:
            self._recent.move_to_end(secret)
            return
        self._recent[secret] = None
        self._insert(secret)
        if len(self._recent) > self._limit:
            oldest, _ = self._recent.popitem(last=False)
            index = next(i for i, (old, _) in enumerate(self._pairs) if old == oldest)
            del self._pairs[index], self._byte_pairs[index]

    def _insert(self, secret: str) -> None:
        pair = (secret, mask(secret))
        index = bisect.bisect_right(self._pairs, -len(secret), key=lambda p: -len(p[0]))
        self._pairs.insert(index, pair)
        self._byte_pairs.insert(index, (pair[0].encode(), pair[1].encode()))

    def text(self, value: str) -> str:
        for old, new in self._pairs:
            if old in value:
                value = value.replace(old, new)
        return value

    def bytes(self, value: bytes) -> bytes:
        for old, new in self._byte_pairs:
            if old in value:
                value = value.replace(old, new)
        return value
