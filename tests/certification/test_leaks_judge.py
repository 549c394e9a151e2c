"""The secret-echo judge (certification/checks/_leaks.py), apart from the reference's scrubber: it finds
a 10-character piece of the secret in every encoding an echo may use, and nothing else."""

from __future__ import annotations

import base64
import html
import time

import pytest

from dsweb_ref.certification.checks._leaks import PIECE, leak

SECRET = "dsweb-emulator-key-0001"


def _b64(text: str, *, url_safe: bool = False) -> str:
    encoded = base64.b64encode(text.encode()).decode()
    return encoded.translate(str.maketrans("+/", "-_")) if url_safe else encoded


def _pct(text: str) -> str:
    return "".join(f"%{b:02X}" for b in text.encode())


SHOWN = [
    pytest.param(f"error: {SECRET} rejected", "", id="raw"),  # catches: pieces looked for nowhere
    pytest.param(f"error: {SECRET.upper()}", "", id="upper-case"),  # catches: a case-sensitive search
    pytest.param(f"key={_pct(SECRET)}", "percent-encoded", id="percent"),
    pytest.param(f"key={_pct(SECRET).lower()}", "percent-encoded", id="percent-lower"),
    pytest.param(f"key={_pct(SECRET).replace('%', '%25')}", "percent-encoded, then percent-encoded",
                 id="percent-twice"),
    pytest.param(f"dump {SECRET.encode().hex()}", "in hex", id="hex"),
    pytest.param(f"dump {SECRET.encode().hex().upper()}", "in hex", id="hex-upper-case"),
    pytest.param("".join(f"\\x{b:02x}" for b in SECRET.encode()), "in hex", id="hex-escapes"),
    pytest.param(f"dump {_b64(_pct(SECRET))}", "base64-encoded, then percent-encoded", id="base64-of-percent"),
    pytest.param("".join(f"&#37;{b:02X}" for b in SECRET.encode()), "as HTML entities, then percent-encoded",
                 id="entities-of-percent"),
    pytest.param(f"<p>{''.join(f'&#{ord(c)};' for c in SECRET)}</p>", "as HTML entities", id="html"),
    pytest.param("".join(f"\\u{ord(c):04x}" for c in SECRET), "as JSON escapes", id="json-escapes"),
    pytest.param(f"<p>{''.join(f'&#x{ord(c):x};' for c in SECRET)}</p>", "as HTML entities", id="html-hex"),
    pytest.param(f"<p>{''.join(f'&#{ord(c):04d}' for c in SECRET)}</p>", "as HTML entities",
                 id="html-padded-without-semicolons"),
    pytest.param("".join(f"%{ord(c):02X}" if i % 2 else f"&#{ord(c)};" for i, c in enumerate(SECRET)),
                 "percent-encoded, then as HTML entities", id="percent-and-entities-per-character"),
    *(pytest.param(f"dump {_b64('x' * n + SECRET)} end", "base64-encoded", id=f"base64-at-byte-{n}")
      for n in range(3)),  # catches: one alignment only
    pytest.param(f"dump {_b64('xx' + SECRET + '~~~~', url_safe=True)}", "base64-encoded", id="base64-url-safe"),
    pytest.param(f"dump {_b64('x' + SECRET)[:20]}", "base64-encoded", id="base64-cut"),  # a piece still shows
    pytest.param(f"error: ...{SECRET[5:5 + PIECE]}...", "", id="a piece"),
]


@pytest.mark.parametrize(("text", "how"), SHOWN)
def test_the_judge_finds_the_secret_in_each_encoding(text: str, how: str) -> None:
    found = leak(text, SECRET)
    assert found is not None and found.startswith("characters ") and found.endswith(how)
    assert SECRET[:PIECE] not in found  # the answer lands in reports: it never quotes the piece


@pytest.mark.parametrize(
    "text",
    [
        "error: <credential> rejected",
        f"error: ...{SECRET[3:3 + PIECE - 1]}...",  # nine characters are not a piece
        f"dump {_b64('something else entirely, long enough to decode')}",
        html.escape("<b>nothing here</b>"),
        "",
    ],
)
def test_the_judge_finds_nothing_in_text_without_the_secret(text: str) -> None:
    assert leak(text, SECRET) is None


READ = [
    # catches: invisible characters between the key's characters taken for a break in it
    pytest.param("key " + "\u200b".join(SECRET), "as read", id="zero-width"),
    pytest.param("key " + SECRET.translate(str.maketrans("eoa", "\u0435\u043e\u0430")), "as read",
                 id="cyrillic-look-alikes"),  # catches: look-alike letters read as other characters
    pytest.param("".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in SECRET), "as read",
                 id="full-width"),  # catches: compatibility forms not folded
    pytest.param(f"key {SECRET[::-1]}", "backwards", id="backwards"),  # catches: forward forms only
    pytest.param("key " + " ".join(SECRET), "spelled out", id="spelled-out"),  # catches: separators read as a break
    pytest.param("key " + " ".join(SECRET)[::-1], "spelled out backwards", id="spelled-out-backwards"),
]


@pytest.mark.parametrize(("text", "how"), READ)
def test_the_judge_reads_the_text_as_a_reader_does(text: str, how: str) -> None:
    found = leak(text, SECRET)
    assert found is not None and found.endswith(f"credential {how}"), found


@pytest.mark.parametrize(("text", "secret"), [
    # catches: the letters-and-digits view taken over whole prose (the key's words stand in ordinary text)
    ("WEB_PROVIDER_ERROR: the emulator key was rejected (401)", SECRET),
    ("upstream dsweb emulator returned 401", SECRET),
    ("a b c d e f g h i j k l m n o p", SECRET),  # single letters set apart, but not the key's
    # catches: a secret with fewer than ten letters and digits compacted to a piece that matches anything
    ("error: missing field", "--!!--"),
    ("tok en: ab 12", "ab-12"),
])
def test_the_judge_finds_no_spelled_out_key_in_ordinary_text(text: str, secret: str) -> None:
    assert leak(text, secret) is None


def test_the_judge_is_linear_on_a_long_base64_like_text() -> None:
    text = "A" * 200_000 + "%" * 50_000 + "&#" * 50_000
    start = time.process_time()
    assert leak(text, SECRET) is None
    small = time.process_time() - start
    start = time.process_time()
    assert leak(text * 4, SECRET) is None
    assert time.process_time() - start < 8 * max(small, 0.01)  # four times the text: about four times the work
