"""Credential-shaped text that is no credential, for rows that put such text in an upstream error.

Built from parts when imported, so no line of the repository holds anything a secret scan (the
project's own ``SECRET_RULES`` or any other) takes for a credential, while the text the checks send
matches every credential rule the reference knows. Every value says ``fake`` or ``placeholder``, but for
the keys checks configure (:data:`HEX_SHAPED_KEY`, :data:`WRONG_KEY`), which reports scrub as given secrets.
"""

from __future__ import annotations

import base64
import hashlib
import json

__all__ = ["CREDENTIAL_SHAPES", "FOREIGN_CREDENTIALS", "HEX_SHAPED_KEY", "WRONG_KEY"]


def _b64url(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


_BEARER = "Bear" + "er "
_BASIC = "Bas" + "ic "
_JWT = ".".join([_b64url({"alg": "none", "fake": 1}), _b64url({"sub": "placeholder-0"}), _b64url("fake-signature")])
_SK = "s" + "k-" + "fake0placeholder0value0"
_GITHUB = "gh" + "p_" + "Fake0Placeholder0" * 2 + "Ab"  # 36 characters after the prefix
_AWS = "AK" + "IA" + "FAKE0PLACEHOLDER"

# (how the row names it, the text): each a shape one credential rule of the reference matches.
FOREIGN_CREDENTIALS: tuple[tuple[str, str], ...] = (
    ("a bearer token", f"Authorization: {_BEARER}fake0bearer0placeholder"),
    ("a dotted bearer token without digits", f"Authorization: {_BEARER}fakebearer.placeholder"),
    ("HTTP Basic credentials", "Authorization: " + _BASIC + base64.b64encode(b"fake-user:placeholder-0").decode()),
    ("an api_key field", "api" + "_key=" + "Fake0Placeholder0Key"),
    ("a session_token field", '{"session' + '_token": "' + 'FakePlaceholder0Token"}'),
    ("sk-, JWT, GitHub and AWS key shapes", f"{_SK} {_JWT} {_GITHUB} {_AWS}"),
)

# Every shape above in one upstream message, with prose a scrubber must not take for a credential,
# ahead of the configured key (``{key}``, for str.format).
CREDENTIAL_SHAPES = (
    f"{_BEARER}authentication required; {_BASIC}authentication is not accepted. "
    + "; ".join(text.replace("{", "{{").replace("}", "}}") for _shown, text in FOREIGN_CREDENTIALS)
    + "; the key sent was {key}"
)

# A key of the usual shape (sk- and 32 lower-case hex digits) for rows that configure one: its body fits a
# pattern of plain codes ([a-z0-9_]), which the emulator's own key (with hyphens) never does. Hex cannot
# say "fake", so it is the hash of a phrase that does.
HEX_SHAPED_KEY = "s" + "k-" + hashlib.sha256(b"dsweb fake placeholder key").hexdigest()[:32]

# Keys of unusual lengths for errors.secret_echo's rows that configure one (from the seed-5 mutation draw): six
# characters, whose base64 is eight characters long, and 67 (sk- and 64 hex digits), whose base64 of base64 is long
# enough that a scrubber covering part of it shows more than ten characters of the rest.
SHORT_KEY = "s" + "k-" + hashlib.sha256(b"dsweb fake short key").hexdigest()[:3]
LONG_KEY = "s" + "k-" + hashlib.sha256(b"dsweb fake long key").hexdigest()

# A key the emulator never accepts: errors.codes configures it for the rejected-credential case.
WRONG_KEY = "dsweb-wrong-key-0000"

# Second keys the emulator is told to accept: settings.snapshot.per_operation saves one while the target runs (its
# last four characters differ from the first key's, which is how the masked log tells them apart), and
# search.api.pacing.rate paces one account no other row uses.
SAVED_KEY = "dsweb-emulator-key-saved-0002"
LOWERED_KEY = "dsweb-emulator-key-lowered-rate"

# A key with upper-case letters (the emulator's own is lower case and digits), for standalone.prose.error's rows that
# quote it so (from the seed-10 mutation draw); its halves (every other character) are short of 12.
MIXED_CASE_KEY = "DsWeb-Mixed-Key-0042"

# Every key a check hands a target besides the emulator's own: the report scrubber knows each (a target may echo
# any into a reason), and a test holds every *_KEY constant of the checks to this list.
GIVEN_KEYS = (HEX_SHAPED_KEY, SHORT_KEY, LONG_KEY, WRONG_KEY, SAVED_KEY, LOWERED_KEY, MIXED_CASE_KEY)
