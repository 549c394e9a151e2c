"""Hunt G, L2 and L5: cassette bodies that are not UTF-8, and keys too short to scan for.

L2: ``dsweb record`` wrote the raw key into a cassette when the body was not UTF-8 (UTF-16/32 JSON,
or gzip/zlib/... sent without a Content-Encoding): vcrpy stores such a body as ``!!binary`` and the
scan read it as UTF-8 only. L5: with a key under 8 characters the cassette gate looked at no encoded
form, and such a key was recorded with. Every row failed before the fix; the binary rows are the
false-alarm controls. All traffic stays on loopback.
"""

from __future__ import annotations

import base64
import bz2
import gzip
import json
import lzma
import os
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from providers._loopback import Reply, running

from dsweb_ref.cli import main
from dsweb_ref.emulator import DEFAULT_API_KEY
from dsweb_ref.replay import cassettes
from dsweb_ref.replay.cassettes import scan_cassette_data, scan_text
from dsweb_ref.replay.record import MIN_RECORD_SECRET

from .test_hunt_g_encodings import ENV, KEY, _fullwidth

# --- L5: short keys --------------------------------------------------------------------------------

SHORT = "Ab3dE9f"


@pytest.mark.parametrize(
    "encoded",
    [
        base64.b64encode(SHORT.encode()).decode(),  # catches: a 7-character key's base64 recorded
        SHORT.swapcase(),  # catches: its swapped case recorded
        "".join(f"%{b:02X}" for b in SHORT.encode()),  # catches: its %XX recorded
        SHORT.encode().hex(),  # catches: its hex recorded
    ],
)
def test_cassette_gate_looks_at_encoded_forms_of_a_short_key(encoded: str) -> None:
    assert scan_text(f"invalid key {encoded}", literals=[SHORT]) != []


def test_dsweb_record_refuses_a_key_too_short_to_scan_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """catches: a 7-character key recorded with its base64 in the cassette; refused before any request."""
    assert len(SHORT) < MIN_RECORD_SECRET
    monkeypatch.setenv(ENV, SHORT)
    with running() as server:
        server.routes["/v1/tools/search"] = Reply(200, _search_body(base64.b64encode(SHORT.encode()).decode()))
        code = main(["record", "search-api.basic", "--base", server.base, "--out", str(tmp_path), "--key-env", ENV])
        assert server.paths() == []
    out = capsys.readouterr().out
    assert code == 1 and sorted(tmp_path.rglob("*.yaml")) == [], out
    assert "refused" in out and f"shorter than {MIN_RECORD_SECRET} characters" in out and SHORT not in out


# --- L2: bodies that are not UTF-8 -----------------------------------------------------------------


def _search_body(text: str) -> bytes:
    return json.dumps({"results": [{"url": "https://a.test/r", "title": "t", "snippet": text}]}).encode()


def _error(key: str) -> str:
    return json.dumps({"error": {"message": f"invalid api key [{key}]"}})


# name: (body bytes, content type); each one holds the raw key, readable by a client.
BODIES: dict[str, tuple[Callable[[str], bytes], str]] = {
    "utf-16-bom": (lambda k: _error(k).encode("utf-16"), "application/json; charset=utf-16"),
    "utf-16-be-no-bom": (lambda k: _error(k).encode("utf-16-be"), "application/json; charset=utf-16be"),
    "utf-32-bom": (lambda k: _error(k).encode("utf-32"), "application/json; charset=utf-32"),
    "utf-16-non-ascii": (lambda k: ("é" + _error(k)).encode("utf-16-le"), "application/json; charset=utf-16le"),
    "utf-16-cjk-no-bom": (lambda k: ("港口" * 400 + _error(k)).encode("utf-16-le"), "text/plain; charset=utf-16le"),
    "utf-16-fullwidth-key": (lambda k: _error(_fullwidth(k)).encode("utf-16"), "application/json; charset=utf-16"),
    "gzip-no-header": (lambda k: gzip.compress(_error(k).encode()), "application/gzip"),
    "gzip-two-members": (lambda k: gzip.compress(b"{}") + gzip.compress(_error(k).encode()), "application/gzip"),
    "zlib-no-header": (lambda k: zlib.compress(_error(k).encode()), "application/octet-stream"),
    "raw-deflate": (
        lambda k: (lambda c: c.compress(_error(k).encode()) + c.flush())(zlib.compressobj(wbits=-15)),
        "application/octet-stream",
    ),
    "bzip2": (lambda k: bz2.compress(_error(k).encode()), "application/x-bzip2"),
    "xz": (lambda k: lzma.compress((_error(k) + " " * 4096).encode()), "application/x-xz"),  # compressed, not stored
    "gzip-of-utf-16": (lambda k: gzip.compress(_error(k).encode("utf-16")), "application/gzip"),
    "gzip-of-gzip": (lambda k: gzip.compress(gzip.compress(_error(k).encode())), "application/gzip"),
}


@pytest.mark.parametrize("name", list(BODIES))
def test_dsweb_record_refuses_a_non_utf8_body_that_holds_the_key(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """catches: the body stored as !!binary and read as UTF-8 only, so the raw key was recorded."""
    make, content_type = BODIES[name]
    monkeypatch.setenv(ENV, KEY)
    with running() as server:
        server.routes["/v1/tools/search"] = Reply(200, make(KEY), {"Content-Type": content_type})
        main(["record", "search-api.basic", "--base", server.base, "--out", str(tmp_path), "--key-env", ENV])
    out = capsys.readouterr().out
    assert sorted(tmp_path.rglob("*.yaml")) == [], out
    assert "refused" in out and "credential" in out and KEY not in out, out


def _cassette_with(body: bytes) -> dict[str, object]:
    return {
        "interactions": [
            {
                "request": {"method": "POST", "uri": "http://127.0.0.1/x", "body": "", "headers": {}},
                "response": {"status": {"code": 200}, "headers": {}, "body": {"string": body}},
            }
        ]
    }


@pytest.mark.parametrize("name", list(BODIES))
def test_cassette_scan_reads_a_non_utf8_body_every_way(name: str) -> None:
    findings = scan_cassette_data(_cassette_with(BODIES[name][0](KEY)), literals=[KEY])
    assert any("credential" in f.kind for f in findings), findings


def test_a_decompression_bomb_is_refused_not_inflated(monkeypatch: pytest.MonkeyPatch) -> None:
    """catches: an unbounded inflate of an undeclared gzip body (memory), or a bomb let through unread."""
    monkeypatch.setattr(cassettes, "MAX_SNIFFED_BODY", 1 << 20)
    bomb = gzip.compress(b"\0" * (4 << 20))
    findings = scan_cassette_data(_cassette_with(bomb), literals=[KEY])
    assert [f.kind for f in findings] == ["unscannable body (inflates past 1048576 bytes)"]


@pytest.mark.parametrize(
    "body",
    [
        gzip.compress(_error("x").encode())[:20],  # gzip magic, truncated: a client cannot read it, nor can the scan
        b"\x28\xb5\x2f\xfd" + os.urandom(40),  # zstd: no decoder here
    ],
    ids=["corrupt-gzip", "zstd"],
)
def test_a_compressed_body_that_cannot_be_read_is_refused(body: bytes) -> None:
    findings = scan_cassette_data(_cassette_with(body), literals=[KEY])
    assert [f.kind.split(" (")[0] for f in findings] == ["unscannable body"], findings


def test_ordinary_binary_bodies_are_not_refused() -> None:
    """No false alarm: random bytes, a PNG header, a gzip of harmless text."""
    for body in (bytes(range(256)) * 64, b"\x89PNG\r\n\x1a\n" + bytes(200), gzip.compress(b"hello" * 1000)):
        assert scan_cassette_data(_cassette_with(body), literals=[KEY, DEFAULT_API_KEY]) == []
