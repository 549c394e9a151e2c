"""The provider-rule checks added for the DeepSeek providers' mutation survivors (search.api.metadata,
search.messages.tool_error, errors.secret_echo, search.api.base_unavailable, and the wrong-typed and
malformed rows of the mapping checks), run by the real suite against in-process reference targets:
each accepts every reading its seed sentence leaves open and rejects the wrong one it names."""

from __future__ import annotations

import base64
import re
from types import MappingProxyType
from typing import Any

import pytest

from dsweb_ref import WebError, WebErrorCode
from dsweb_ref._secrets import redact_encoded
from dsweb_ref._types import Source
from dsweb_ref.certification.adapter_protocol import CAPABILITIES
from dsweb_ref.certification.checks import outcomes as echo_checks
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.targets import InProcessTarget, TargetConfig, ToolPair, reference_settings
from dsweb_ref.providers import _deepseek_http, deepseek_official, deepseek_search_api
from dsweb_ref.replay._bases import credential_environ
from dsweb_ref.runtime import build_runtime

from .conftest import outcomes, run

NEW = ["search.api.metadata", "search.messages.tool_error", "errors.secret_echo", "search.api.base_unavailable"]


def _target(capabilities: tuple[str, ...] = CAPABILITIES, *, refuse_unusable_base: bool = False) -> InProcessTarget:
    def build(config: TargetConfig) -> ToolPair:
        if refuse_unusable_base and _deepseek_http.usable_base_url(config.tools_base) is None:
            raise WebError(WebErrorCode.CONFIG_INVALID, "tools_base is blank or unparseable")
        settings = reference_settings(config)
        runtime = build_runtime(lambda: settings, environ=credential_environ(config.api_key))
        return ToolPair(search=runtime.search_tool(), fetch=runtime.fetch_tool())

    return InProcessTarget(build, name="dsweb_ref+provider-rules", version="test", capabilities=capabilities)


def _outcomes(only: list[str], target: InProcessTarget | None = None) -> dict[str, Outcome]:
    report = run(target or _target(), only)
    errors = [(r.check.id, r.reason) for r in report.results if r.outcome is Outcome.ERROR]
    assert not errors, errors
    return outcomes(report)


def test_the_reference_passes_every_new_check() -> None:
    got = _outcomes([*NEW, "search.api.mapping", "search.messages.mapping", "fetch.api.mapping"])
    assert set(got.values()) == {Outcome.PASSED}, got


def test_quality_metadata_is_opt_in_a_target_without_it_is_not_certified_for_it_only() -> None:
    plain = tuple(c for c in CAPABILITIES if c != "quality-metadata")
    report = run(_target(plain), ["search.api.metadata", "search.api.mapping"])
    assert outcomes(report) == {"search.api.metadata": Outcome.SKIPPED, "search.api.mapping": Outcome.PASSED}
    verdicts = {v.name: v for v in report.profiles}
    assert verdicts["seed-001-quality-metadata"].missing == ("quality-metadata",)
    assert not verdicts["seed-001-quality-metadata"].certified


def _dropping_metadata(data: object) -> tuple[Source, ...]:
    return tuple(Source(s.url, s.title, s.snippet, s.published_at) for s in _MAP_RESULTS(data))


def _cutting_summaries(data: object) -> tuple[Source, ...]:
    out = []
    for s in _MAP_RESULTS(data):
        meta = dict(s.metadata)
        if isinstance(meta.get("summary"), str):
            meta["summary"] = meta["summary"][:1000]
        out.append(Source(s.url, s.title, s.snippet, s.published_at, MappingProxyType(meta)))
    return tuple(out)


def _refusing_malformed(data: object) -> tuple[Source, ...]:
    """A right reading the seeds leave open: an answer with a field of the wrong type is refused."""
    items = data.get("results") if isinstance(data, dict) else None
    for item in items if isinstance(items, list) else []:
        for name in ("title", "snippet", "date", "summary", "site_name"):
            if isinstance(item, dict) and item.get(name) is not None and not isinstance(item[name], str):
                raise _deepseek_http.unprocessable("test", f"{name} is not text")
        if isinstance(item, dict) and any(isinstance(item.get(n), bool) for n in ("rerank_score", "authority")):
            raise _deepseek_http.unprocessable("test", "an assessment is a boolean")
    return _MAP_RESULTS(data)


_MAP_RESULTS = deepseek_search_api.map_results


@pytest.mark.parametrize(("mapping", "fragment"), [
    (_dropping_metadata, "zero score and unknown authority"),
    (_cutting_summaries, "a whole long summary"),
], ids=["metadata-dropped", "summary-cut"])
def test_the_metadata_check_rejects_metadata_not_kept_as_served(
    mapping: Any, fragment: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deepseek_search_api, "map_results", mapping)
    report = run(_target(), ["search.api.metadata"])
    result = report.results[0]
    assert result.outcome is Outcome.FAILED and fragment in result.reason, result.reason


def test_refusing_an_answer_with_wrong_typed_fields_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deepseek_search_api, "map_results", _refusing_malformed)
    got = _outcomes(["search.api.metadata", "search.api.mapping"])
    assert set(got.values()) == {Outcome.PASSED}, got


def test_a_tool_error_read_as_no_results_fails_the_tool_error_check(monkeypatch: pytest.MonkeyPatch) -> None:
    def lenient(data: object, *, secrets: Any = ()) -> tuple[Source, ...]:
        try:
            return deepseek_official_map(data, secrets=secrets)
        except WebError:
            return ()  # wrong: a search that did not run is not a search that found nothing

    deepseek_official_map = deepseek_official.map_sources
    monkeypatch.setattr(deepseek_official, "map_sources", lenient)
    assert _outcomes(["search.messages.tool_error"]) == {"search.messages.tool_error": Outcome.FAILED}


def test_an_unscrubbed_upstream_message_fails_the_secret_echo_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_deepseek_http, "scrub_secrets", lambda text, secrets=(): text)
    monkeypatch.setattr(_deepseek_http, "scrub_prefix", lambda text, shown, secrets=(): text[:shown])
    monkeypatch.setattr(deepseek_official, "scrub_prefix", lambda text, shown, secrets=(): text[:shown])
    assert _outcomes(["errors.secret_echo"]) == {"errors.secret_echo": Outcome.FAILED}


def _whole_key_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """errors.secret_echo without its rows that echo a part of the key: the readings below are of a scrubber
    of whole keys, which those rows reject before any other (test_key_part_readings.py tests them)."""
    rows = tuple(c for c in echo_checks.SECRET_ECHOES if "part" not in c.params)
    monkeypatch.setattr(echo_checks, "SECRET_ECHOES", rows)


def test_cutting_the_detail_before_scrubbing_leaks_a_piece_of_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    _whole_key_rows(monkeypatch)

    def cut_then_scrub(text: str, shown: int, secrets: Any = ()) -> str:
        # wrong: the key straddling the cut survives a scrubber of whole keys
        return redact_encoded(" ".join(text.split())[:shown], secrets, "<credential>")

    monkeypatch.setattr(_deepseek_http, "scrub_prefix", cut_then_scrub)
    report = run(_target(), ["errors.secret_echo"])
    assert report.results[0].outcome is Outcome.FAILED
    assert "key past the first 490 characters: the failure shows characters" in report.results[0].reason


def test_refusing_an_unusable_base_at_configure_is_accepted() -> None:
    assert _outcomes(["search.api.base_unavailable"], _target(refuse_unusable_base=True)) == {
        "search.api.base_unavailable": Outcome.PASSED
    }


def test_a_blank_base_that_still_sends_fails_the_base_check(monkeypatch: pytest.MonkeyPatch) -> None:
    usable = _deepseek_http.usable_base_url
    monkeypatch.setattr(_deepseek_http, "usable_base_url", lambda base: usable(base) if base.strip() else "")
    report = run(_target(), ["search.api.base_unavailable"])
    assert report.results[0].outcome is Outcome.FAILED
    assert "the provider is unavailable" in report.results[0].reason, report.results[0].reason


def _forms_scrubber(forms: set[str]) -> Any:
    """A scrubber that knows only ``forms`` of the key: as written (``raw``), in any case (``any-case``),
    base64 at the given byte offsets (``b64-0``, ``b64-1``, ``b64-2``), %XX in upper case (``pct-upper``),
    in any case (``pct-any``), %25XX (``pct-twice``), hyphens alone as %2D (``pct-mixed``), decimal HTML
    character references (``entities``), hex in lower case (``hex``) and in any case (``hex-any-case``),
    ``\\xHH`` escapes (``x-escapes``), JSON ``\\uXXXX`` escapes (``json-escapes``), hex character references
    (``entities-hex``), zero-padded references without semicolons (``entities-loose``) and characters
    alternately as references and %XX (``pct-entities``). Each missing form is one wrong reading of "in
    any encoding"."""

    def scrub(text: str, secrets: Any, placeholder: str) -> str:
        for secret in (s for s in secrets if s):
            data = secret.encode()
            literal = []
            if "raw" in forms:
                literal.append(secret)
            for shift in range(3):
                if f"b64-{shift}" in forms:
                    encoded = base64.b64encode(b"\0" * shift + data).decode()
                    literal.append(encoded[-(-4 * shift // 3) : 4 * (shift + len(data)) // 3])
            upper = "".join(f"%{b:02X}" for b in data)
            if "pct-upper" in forms:
                literal.append(upper)
            if "entities" in forms:
                literal.append("".join(f"&#{ord(c)};" for c in secret))
            if "hex" in forms:
                literal.append(data.hex())
            if "entities-hex" in forms:
                literal.append("".join(f"&#x{ord(c):x};" for c in secret))
            if "entities-loose" in forms:
                literal.append("".join(f"&#{ord(c):04d}" for c in secret))
            if "x-escapes" in forms:
                literal.append("".join(f"\\x{b:02x}" for b in data))
            if "json-escapes" in forms:
                literal.append("".join(f"\\u{ord(c):04x}" for c in secret))
            if "pct-entities" in forms:  # as the row writes it: a reference first, then %XX, in turn
                literal.append("".join(f"%{ord(c):02X}" if i % 2 else f"&#{ord(c)};" for i, c in enumerate(secret)))
            if "zero-width" in forms:
                literal.append("\u200b".join(secret))
            if "spaced" in forms:
                literal.append(" ".join(secret))
            if "reversed" in forms:
                literal.append(secret[::-1])
            if "spaced-reversed" in forms:
                literal.append(" ".join(secret[::-1]))
            if "look-alike" in forms:
                literal.append(secret.translate(echo_checks.LOOK_ALIKE))
            if "full-width" in forms:
                literal.append("".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in secret))
            if "json-zero-width" in forms:  # escapes the upstream wrote as text (a quoted JSON dump)
                literal.append("\\u200b".join(secret))
            if "utf-16" in forms:
                literal.append("\x00".join(secret))
            if "hex-reversed" in forms:
                literal.append(data[::-1].hex())
            twice = (("base64-twice", b"key "), ("base64-twice-1", b"auth "), ("base64-twice-2", b"token="))
            for form, prefix in twice:
                if form in forms:  # as the rows write it: the prefix and the key, twice over
                    literal.append(base64.b64encode(base64.b64encode(prefix + data)).decode())
            if "c-bytes" in forms:
                literal.append(", ".join(f"0x{b:02x}" for b in data))
            if "json-full-width" in forms:  # escapes the upstream wrote as text, of full-width letters
                literal.append("".join(f"\\u{ord(c) + 0xFEE0:04x}" for c in secret))
            if "spaced-json-break" in forms:  # spelled out, one space a line-break escape written as text
                half = len(secret) // 2
                literal.append(" ".join(secret[:half]) + "\\n" + " ".join(secret[half:]))
            if "percent-u" in forms:
                literal.append("".join(f"%u{ord(c):04X}" for c in secret))
            if "json-escapes-twice" in forms:  # JSON escapes escaped again (a JSON dump quoted inside JSON)
                literal.append("".join(f"\\\\u{ord(c):04x}" for c in secret))
            if "base85-line" in forms:  # as the row writes it: its prefix, the key and a line break, in base85
                literal.append(base64.b85encode(b"Bearer " + data + b"\r\n").decode())
            if "fragments-reversed" in forms:  # as the row writes it: backwards, in fragments of three
                literal.append(" ".join(secret[::-1][i : i + 3] for i in range(0, len(secret), 3)))
            for form in literal:
                text = text.replace(form, placeholder)
            anycase = {"any-case": secret, "pct-any": upper, "pct-twice": upper.replace("%", "%25"),
                       "pct-mixed": secret.replace("-", "%2D"), "hex-any-case": data.hex()}
            for name, form in anycase.items():
                if name in forms:
                    text = re.sub(re.escape(form), placeholder, text, flags=re.IGNORECASE)
        return text

    return scrub


ALL_FORMS = {"raw", "any-case", "b64-0", "b64-1", "b64-2", "pct-upper", "pct-any", "pct-twice", "pct-mixed",
             "entities", "hex", "hex-any-case", "x-escapes", "json-escapes", "entities-hex", "entities-loose",
             "pct-entities", "zero-width", "spaced", "reversed", "spaced-reversed", "look-alike", "full-width",
             "json-zero-width",
             "utf-16", "hex-reversed", "base64-twice", "base64-twice-1", "base64-twice-2", "c-bytes",
             "json-full-width", "spaced-json-break", "json-escapes-twice", "percent-u", "base85-line",
             "fragments-reversed"}
# the encoded echo row that alone catches each wrong reading of "in any encoding" (the first to fail)
ENCODED_READINGS = {
    "a base64 dump of the request, the key at byte 0 of a group": ALL_FORMS - {"b64-0", "b64-1", "b64-2"},
    "a base64 dump of the request, the key at byte 1 of a group": ALL_FORMS - {"b64-1", "b64-2"},
    "a base64 dump of the request, the key at byte 2 of a group": ALL_FORMS - {"b64-2"},
    "a URL echoing the key percent-encoded (%XX)": ALL_FORMS - {"pct-upper", "pct-any"},
    "a URL echoing the key percent-encoded in lower case (%xx)": ALL_FORMS - {"pct-any"},
    "a URL echoing the key percent-encoded twice (%25XX)": ALL_FORMS - {"pct-twice"},
    "a URL echoing the key with only its hyphens percent-encoded (%2D)": ALL_FORMS - {"pct-mixed"},
    "the key upper-cased in a message": ALL_FORMS - {"any-case"},
    "an HTML error page quoting the key as character references": ALL_FORMS - {"entities"},
    "a hex dump of the request": ALL_FORMS - {"hex", "hex-any-case"},
    "a hex dump in upper case": ALL_FORMS - {"hex-any-case"},
    "a byte dump of the request as backslash-x escapes": ALL_FORMS - {"x-escapes"},
    "a message quoting the key as JSON unicode escapes": ALL_FORMS - {"json-escapes"},
    "an HTML error page quoting the key as hex character references": ALL_FORMS - {"entities-hex"},
    "an HTML error page quoting the key as zero-padded references without semicolons": ALL_FORMS - {"entities-loose"},
    "the key with its characters alternately percent-encoded and character references": ALL_FORMS - {"pct-entities"},
    "the key with a zero-width space between its characters": ALL_FORMS - {"zero-width"},
    "the key spelled out with spaces between its characters": ALL_FORMS - {"spaced"},
    "the key written backwards": ALL_FORMS - {"reversed"},
    "the key spelled out backwards": ALL_FORMS - {"spaced-reversed"},
    "the key with Cyrillic look-alike letters": ALL_FORMS - {"look-alike"},
    "the key in full-width letters": ALL_FORMS - {"full-width"},
    "the key in a quoted JSON dump, with escaped zero-width spaces (\\u200b) between its characters":
        ALL_FORMS - {"json-zero-width"},
    "the key as UTF-16 text read as bytes (a NUL after each character)": ALL_FORMS - {"utf-16"},
    "the key reversed, then in hexadecimal": ALL_FORMS - {"hex-reversed"},
    "the key base64-encoded twice": ALL_FORMS - {"base64-twice"},
    "the key base64-encoded twice, its inner encoding at byte 1 of an outer group": ALL_FORMS - {"base64-twice-1"},
    "the key base64-encoded twice, its inner encoding at byte 2 of an outer group": ALL_FORMS - {"base64-twice-2"},
    "a C byte array of the key (0x before each byte)": ALL_FORMS - {"c-bytes"},
    "the key in full-width letters in a quoted JSON dump (each letter a \\uXXXX escape)":
        ALL_FORMS - {"json-full-width"},
    "the key spelled out in a quoted JSON dump, a line-break escape (\\n) in place of one of its spaces":
        ALL_FORMS - {"spaced-json-break"},
    "the key as %uXXXX escapes": ALL_FORMS - {"percent-u"},
    "a message quoting the key as JSON unicode escapes escaped again": ALL_FORMS - {"json-escapes-twice"},
    "a base85 dump of the key's header line, the key at byte 3 of a group": ALL_FORMS - {"base85-line"},
    "the key backwards in fragments of three characters, spaces between": ALL_FORMS - {"fragments-reversed"},
}


@pytest.mark.parametrize("row", sorted(ENCODED_READINGS))
def test_each_encoded_echo_row_catches_the_scrubber_that_misses_its_form(
    row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _whole_key_rows(monkeypatch)
    monkeypatch.setattr(_deepseek_http, "scrub_text", _forms_scrubber(ENCODED_READINGS[row]))
    (result,) = run(_target(), ["errors.secret_echo"]).results
    assert result.outcome is Outcome.FAILED, result.reason
    assert result.reason.startswith(f"[Search API] {row}: the failure shows "), result.reason
    assert "dsweb-emul" not in result.reason  # the judge names where the piece starts, never the piece


def test_a_scrubber_that_knows_every_form_the_rows_echo_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    _whole_key_rows(monkeypatch)
    monkeypatch.setattr(_deepseek_http, "scrub_text", _forms_scrubber(ALL_FORMS))
    (result,) = run(_target(), ["errors.secret_echo"]).results
    assert result.outcome is Outcome.PASSED, result.reason
