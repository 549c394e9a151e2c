"""No secret in any encoding reaches a cassette or a report (issue 14 item 6).

A loopback upstream echoes the key back in every form seen in the field, and in some more:
base64 (standard and URL-safe, any alignment), %XX (upper, lower, double), swapped case,
JSON \\uXXXX and \\/ escapes, HTML entities, hex, reversed, inside a result URL, and raw inside
bodies marked ``Content-Encoding: GZIP`` or ``gzip, gzip``. ``dsweb record`` must store a body
decoded (and then scrubbed) or refuse it; ``dsweb certify --report-dir`` must redact every form.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import urllib.parse
from pathlib import Path

import pytest
from providers._loopback import Loopback, Reply, running

from dsweb_ref.certification.checks._leaks import leak
from dsweb_ref.cli import main

# Built at run time so no credential-shaped literal sits in this file; "/" exercises the \/ escape.
KEY = "sk-" + "Echo7Key/" + "Zq4" * 5
ENV = "ECHO_TEST_KEY"


def _pct(text: str, fmt: str) -> str:
    return "".join(fmt.format(b) for b in text.encode())


FORMS: dict[str, str] = {
    "base64": base64.b64encode(f"Bearer {KEY}".encode()).decode(),
    "base64-shifted": base64.b64encode(f"xy{KEY}z".encode()).decode(),
    "base64-urlsafe": base64.urlsafe_b64encode(f"k={KEY}".encode()).decode(),
    "percent-upper": _pct(KEY, "%{:02X}"),
    "percent-lower": _pct(KEY, "%{:02x}"),
    "percent-twice": urllib.parse.quote(urllib.parse.quote(KEY, safe=""), safe=""),
    "swapped-case": KEY.swapcase(),
    "json-u-escapes": "".join(f"\\u{ord(c):04x}" for c in KEY),
    "json-slash": KEY.replace("/", "\\/"),
    "html-decimal": "".join(f"&#{ord(c)};" for c in KEY),
    "html-hex": "".join(f"&#x{ord(c):X};" for c in KEY),
    "hex": KEY.encode().hex(),
    "reversed": KEY[::-1],
    "in-a-url": "https://evil.test/cb?k=" + urllib.parse.quote(KEY, safe=""),
}
# Decoded to the raw key: what a stored body may legitimately be scrubbed from.
DECODABLE = {"gzip-upper": "GZIP", "gzip-twice": "gzip, gzip"}


def _search_body(text: str) -> bytes:
    # Built by hand: json.dumps would escape the backslashes the escape forms rely on.
    item = f'{{"url":"https://a.test/r","title":"{text}","snippet":"echo {text}","summary":"{text}"}}'
    return f'{{"results":[{item}]}}'.encode()


def _serve(server: Loopback, form: str) -> None:
    if form in DECODABLE:
        body = gzip.compress(_search_body(KEY))
        if form == "gzip-twice":
            body = gzip.compress(body)
        reply = Reply(200, body, {"Content-Type": "application/json", "Content-Encoding": DECODABLE[form]})
    else:
        reply = Reply(200, _search_body(FORMS[form]), {"Content-Type": "application/json"})
    server.routes["/v1/tools/search"] = reply
    error = json.dumps({"error": {"message": f"key {FORMS.get(form, KEY)} refused"}}).encode()
    server.routes["/v1/tools/fetch"] = Reply(401, error, {"Content-Type": "application/json"})
    server.routes["/anthropic/v1/messages"] = Reply(401, error, {"Content-Type": "application/json"})


def _leaks(text: str) -> list[str]:
    """Every form of the key (and the key itself, any case) still in ``text``."""
    found = [name for name, form in FORMS.items() if form in text or html.unescape(form) in text]
    lowered = text.lower()
    if KEY.lower() in lowered or KEY[::-1].lower() in lowered:
        found.append("raw")
    # The part of the key's base64 that does not depend on what surrounds it.
    for shift in range(3):
        core = base64.b64encode(b"\0" * shift + KEY.encode()).decode()[4 : 4 * len(KEY) // 3 - 4]
        if core in text or core.translate(str.maketrans("+/", "-_")) in text:
            found.append(f"base64-core-{shift}")
    return found


@pytest.mark.parametrize("form", [*FORMS, *DECODABLE])
def test_dsweb_record_stores_no_form_of_an_echoed_key(
    form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV, KEY)
    with running() as server:
        _serve(server, form)
        main(["record", "search-api.basic", "--base", server.base, "--out", str(tmp_path), "--key-env", ENV])
    out = capsys.readouterr().out
    written = sorted(tmp_path.rglob("*.yaml"))
    for path in written:
        assert _leaks(path.read_text("utf-8")) == [], path
    if form in DECODABLE:
        # Decoded, then scrubbed: stored, with the placeholder where the key was.
        assert len(written) == 1, out
        text = written[0].read_text("utf-8")
        assert "<DEEPSEEK_API_KEY>" in text and "Content-Encoding" not in text and "!!binary" not in text
    else:
        assert written == [], out  # an encoding that cannot be scrubbed in place is refused
        assert "refused" in out and "encoded credential" in out
    assert _leaks(out) == []


# A part of the key, which replacing the key whole leaves in place (issue 24: the judge of errors.secret_echo
# counts any 10 characters of the key as showing it).
PARTS: dict[str, str] = {
    "first-12": KEY[:12],
    "middle-12-percent": _pct(KEY[4:16], "%{:02X}"),
    "last-12-reversed": KEY[-12:][::-1],
}


@pytest.mark.parametrize("part", PARTS)
def test_dsweb_record_stores_no_part_of_an_echoed_key(
    part: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV, KEY)
    with running() as server:
        server.routes["/v1/tools/search"] = Reply(200, _search_body(PARTS[part]), {"Content-Type": "application/json"})
        main(["record", "search-api.basic", "--base", server.base, "--out", str(tmp_path), "--key-env", ENV])
    out = capsys.readouterr().out
    assert sorted(tmp_path.rglob("*.yaml")) == [], out  # a part cannot be replaced in place: refused
    assert "refused" in out and "part of a credential" in out
    assert leak(out, KEY) is None


def _certify_echoing(echoed: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                     capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, str], str]:
    """``dsweb certify --report-dir`` against an endpoint whose search results and errors echo ``echoed``:
    the reports by name, and what the command printed."""
    monkeypatch.setenv(ENV, KEY)
    with running() as server:
        server.routes["/v1/tools/search"] = Reply(200, _search_body(echoed), {"Content-Type": "application/json"})
        message = json.dumps({"error": {"message": f"not here {echoed}"}}).encode()
        for route in ("/v1/tools/fetch", "/anthropic/v1/messages"):
            server.routes[route] = Reply(404, message, {"Content-Type": "application/json"})
        main(["certify", "--base", server.base, "--api-key-env", ENV, "--report-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    return {p.name: p.read_text("utf-8") for p in sorted(tmp_path.iterdir())}, out + err


# Each echo with the judge of what shows: every form of the whole key, or any 10 characters of it.
ECHOES = {"forms": (" ".join(FORMS.values()), _leaks), "parts": (" ".join(PARTS.values()), lambda t: leak(t, KEY))}


@pytest.mark.parametrize("echo", ECHOES)
def test_dsweb_certify_reports_hold_nothing_of_an_echoed_key(
    echo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    echoed, shows = ECHOES[echo]
    reports, printed = _certify_echoing(echoed, tmp_path, monkeypatch, capsys)
    assert set(reports) >= {"report.json", "junit.xml", "report.html", "report.md"}
    for name, text in reports.items():
        assert not shows(text), name
    assert not shows(printed)


def test_a_body_left_compressed_is_flagged_by_the_scanner() -> None:
    from dsweb_ref.replay.cassettes import scan_cassette_data

    response = {"status": {"code": 200}, "headers": {"Content-Encoding": ["br"]}, "body": {"string": b"\x0b\x02"}}
    data = {"interactions": [{"request": {"headers": {}}, "response": response}]}
    assert [f.kind for f in scan_cassette_data(data)] == ["undecoded content-encoding"]


def test_a_recorded_gzip_bomb_is_not_inflated_past_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from dsweb_ref.replay import cassettes

    monkeypatch.setattr(cassettes, "MAX_DECODED_BODY", 1024)
    bomb = gzip.compress(b"\0" * 1_000_000)
    response = {"headers": {"Content-Encoding": ["gzip"]}, "body": {"string": bomb}}
    kept = cassettes._clean_response(response)
    assert kept["body"]["string"] == bomb and kept["headers"]["Content-Encoding"] == ["gzip"]
