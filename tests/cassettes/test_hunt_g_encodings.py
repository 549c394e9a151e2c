"""Hunt G, L3: encodings of a key that the report scrubber and the cassette gate missed.

The forms of :data:`ENCODINGS` passed both the report scrubber (``scrub_text``) and the cassette gate
(``scan_text``). Every row failed before the fix (in the scrubber, the gate or both); its note says
which wrong reading it catches. The ordinary-text rows are the false-alarm controls, and the cost rows
keep the scan linear.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import time
from collections.abc import Callable

import pytest

from dsweb_ref._secrets import encoded_secret_found, piece_found, scrub_text
from dsweb_ref.emulator import DEFAULT_ACCOUNT_TOKEN, DEFAULT_API_KEY
from dsweb_ref.replay.cassettes import scan_text

# Built at run time so no credential-shaped literal sits in this file.
KEY = "sk-" + "hunt9G7kQ2xVb4" + "Lm8Zp3Rt6Yw1Nc5Ds0"
ENV = "HUNT_G_TEST_KEY"
R = "[R]"


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if 0x21 <= ord(c) <= 0x7E else c for c in text)


def _every(sep: str, n: int) -> Callable[[str], str]:
    return lambda k: sep.join(k[i : i + n] for i in range(0, len(k), n))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# name: (encode, what the row catches)
ENCODINGS: dict[str, tuple[Callable[[str], str], str]] = {
    "zwsp-every-5": (_every("\u200b", 5), "zero-width spaces (Cf) inside the key not removed before matching"),
    "zwsp-every-char": (_every("\u200b", 1), "a zero-width space after every character"),
    "word-joiner-every-3": (_every("\u2060", 3), "other format characters (U+2060) not removed"),
    "soft-hyphen-every-5": (_every("\u00ad", 5), "soft hyphens (Cf) inside the key"),
    "combining-every-5": (_every("\u0301", 5), "combining marks (Mn) inside the key, or composed with it by NFKC"),
    "fullwidth": (_fullwidth, "fullwidth look-alikes not folded to ASCII (NFKC/NFKD)"),
    "cyrillic-lookalikes": (
        lambda k: k.replace("k", "\u043a").replace("p", "\u0440").replace("c", "\u0441"),
        "Cyrillic letters drawn like Latin ones left a 9-character head of the key",
    ),
    "spaced": (" ".join, "a space between every character"),
    "dashed": ("-".join, "a dash between every character (the key's own dash included)"),
    "chunks-8": (lambda k: " | ".join(k[i : i + 8] for i in range(0, len(k), 8)), "ordered 8-character fragments"),
    "json-array-8": (lambda k: json.dumps([k[i : i + 8] for i in range(0, len(k), 8)]), "fragments in a JSON array"),
    "even-then-odd": (lambda k: k[0::2] + " / " + k[1::2], "every other character, then the rest"),
    "base64-wrapped-8": (lambda k: "\n".join(_every("\n", 8)(_b64(k.encode())).split("\n")), "base64 cut by newlines"),
    "base64-wrapped-json": (lambda k: "\\n".join(_every("\n", 8)(_b64(k.encode())).split("\n")), "cut by JSON \\n"),
    "base64-lower": (lambda k: _b64(k.encode()).lower(), "base64 lower-cased"),
    "base64-of-base64": (lambda k: _b64(_b64(k.encode()).encode()), "base64 applied twice"),
    "base64-of-reversed": (lambda k: _b64(k[::-1].encode()), "base64 of the reversed key"),
    "base32": (lambda k: base64.b32encode(k.encode()).decode(), "base32"),
    "base85": (lambda k: base64.b85encode(k.encode()).decode(), "base85"),
    "ascii85": (lambda k: base64.a85encode(k.encode()).decode(), "ASCII85"),
    "uuencode": (lambda k: binascii.b2a_uu(k.encode()[:45]).decode(), "uuencode"),
    "hex-colon": (lambda k: k.encode().hex(":"), "hex with colons between bytes"),
    "hex-space": (lambda k: k.encode().hex(" "), "hex with spaces between bytes"),
    "hex-0x": (lambda k: " ".join(f"0x{b:02x}" for b in k.encode()), "0x-prefixed bytes"),
    "hex-backslash-x-spaced": (lambda k: " ".join(f"\\x{b:02x}" for b in k.encode()), "\\x escapes with spaces"),
    "hex-reversed": (lambda k: k[::-1].encode().hex(), "hex of the reversed key"),
    "octal-escapes": (lambda k: "".join(f"\\{b:03o}" for b in k.encode()), "octal escapes \\163\\153..."),
    "decimal-list": (lambda k: json.dumps(list(k.encode())), "a JSON list of decimal bytes"),
    "quoted-printable": (lambda k: "".join(f"={b:02X}" for b in k.encode()), "quoted-printable =XX"),
    "percent-thrice": (lambda k: "".join(f"%2525{b:02X}" for b in k.encode()), "%-encoding applied three times"),
    "json-U8": (lambda k: "".join(f"\\U{ord(c):08x}" for c in k), "\\UXXXXXXXX escapes"),
    "js-u-braces": (lambda k: "".join(f"\\u{{{ord(c):x}}}" for c in k), "\\u{XX} escapes"),
    "css-escapes": (lambda k: "".join(f"\\{ord(c):x} " for c in k), "CSS escapes \\73 \\6b"),
    "rot13": (lambda k: codecs.encode(k, "rot13"), "ROT13"),
    "utf16-as-text": (lambda k: k.encode("utf-16-le").decode("latin-1"), "UTF-16 read as text: NULs between"),
    "fullwidth-spaced": (lambda k: " ".join(_fullwidth(k)), "two forms at once: fullwidth and spaced"),
}


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_report_scrubber_redacts_every_hunt_g_form(name: str) -> None:
    encoded = ENCODINGS[name][0](KEY)
    text = f"error: invalid key {encoded} (rejected)"
    out = scrub_text(text, [KEY], R)
    assert R in out, out
    assert out.startswith("error: invalid key ") and out.endswith(" (rejected)"), out  # the rest is kept
    assert not encoded_secret_found(out, [KEY]) and not piece_found(out, [KEY]), out
    # Whatever survives of the form is short: no 12-character run of it is left.
    assert not any(encoded[i : i + 12] in out for i in range(max(1, len(encoded) - 11))), out


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_cassette_gate_flags_every_hunt_g_form(name: str) -> None:
    text = json.dumps({"error": {"message": f"invalid key [{ENCODINGS[name][0](KEY)}]"}}, ensure_ascii=False)
    assert scan_text(text, literals=[KEY]) != []
    # In a JSON body vcrpy stores as written (non-ASCII as \\u escapes): the same.
    assert scan_text(json.dumps({"message": ENCODINGS[name][0](KEY)}), literals=[KEY]) != []


def test_fullwidth_and_zero_width_forms_are_redacted_in_place() -> None:
    """A match in the folded view replaces exactly the span it came from, not the words around it."""
    text = f"a {_fullwidth(KEY)} b {_every(chr(0x200B), 5)(KEY)} c {' '.join(KEY)} d"
    assert scrub_text(text, [KEY], R) == f"a {R} b {R} c {R} d"


# --- false positives: ordinary text keeps its words -----------------------------------------------

ORDINARY = [
    "The dsweb emulator answers on loopback; the key and the account token come from the environment.",
    "commit 6d293ba1f4ee570af480d3 of 2024-05-06, uuid 123e4567-e89b-12d3-a456-426614174000",
    "Ｆｕｌｌｗｉｄｔｈ text and \u200bzero\u200bwidth spaces, café, naïve, Straße, 東京, Москва",
    "s k i p p e d: route not served; 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15",
    base64.b64encode(bytes(range(256))).decode(),
    bytes(range(256)).hex(":"),
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_not_redacted(text: str) -> None:
    secrets = [KEY, DEFAULT_API_KEY, DEFAULT_ACCOUNT_TOKEN]
    assert scrub_text(text, secrets, R) == text
    assert scan_text(text, literals=secrets) == []


# --- cost: linear, and measured -------------------------------------------------------------------

SIZE = 256 * 1024
BOUND_S = 20.0  # far above the linear cost (about a second for 256 KB on a loaded runner), far below a quadratic one


@pytest.mark.parametrize(
    "unit",
    ["s k - h u n t 9 ", "\u200bs\u200bk", "73:6b:2d:", "ｓｋ－ｈｕ", "c2staHVu\n", "115, 107, 45, "],
    ids=["spaced", "zero-width", "hex-colon", "fullwidth", "base64-lines", "decimal"],
)
def test_scrub_and_scan_stay_linear_on_near_misses(unit: str) -> None:
    text = unit * (SIZE // len(unit))
    start = time.perf_counter()
    scrub_text(text, [KEY], R)
    scan_text(text, literals=[KEY])
    assert time.perf_counter() - start < BOUND_S
