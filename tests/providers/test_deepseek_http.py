"""Shared helpers: error-detail extraction, base URLs, credentials, the bounded POST."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref._secrets import encoded_secret_found
from dsweb_ref.certification.checks import outcomes
from dsweb_ref.certification.checks._leaks import leak
from dsweb_ref.providers import _deepseek_http
from dsweb_ref.providers._deepseek_http import error_detail, post, resolve_credential, scrub_prefix, usable_base_url
from dsweb_ref.settings import CredentialSettings


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"error":{"message":"Authentication Fails","type":"authentication_error"}}', "Authentication Fails"),
        (b'{"error":"plain string"}', "plain string"),
        (b'{"message":"top only"}', "top only"),
        (b'{"error":{"message":""},"message":"top"}', None),
        (b'{"error":{"message":null},"message":"top"}', "top"),
        (b'{"error":"","message":"top"}', None),
        (b'{"error":["x"],"message":"top"}', "top"),
        (b"null", None),
        (b"[]", None),
        (b"not json", None),
        (b'{"message":"  spread \\n over\\tlines "}', "spread over lines"),
    ],
)
def test_error_detail(body: bytes, expected: str | None) -> None:
    assert error_detail(body) == expected


def test_error_detail_is_capped() -> None:
    detail = error_detail(b'{"message":"' + b"x" * 5000 + b'"}')
    assert detail is not None and len(detail) == 500 and detail.endswith("...")


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("https://api.deepseek.com/v1/tools", "https://api.deepseek.com/v1/tools"),
        ("http://api-dev.deepseek.com:8031/api/v1/tools/", "http://api-dev.deepseek.com:8031/api/v1/tools"),
        ("  https://a.test/x  ", "https://a.test/x"),
        ("", None),
        ("https://user:pw@a.test/x", None),
        ("https://a.test/x?y=1", None),
        ("https://a.test/x#frag", None),
        ("https://a test/x", None),
        ("file:///etc/passwd", None),
    ],
)
def test_usable_base_url(base: str, expected: str | None) -> None:
    assert usable_base_url(base) == expected


def test_credential_route_selects_the_variable() -> None:
    env = {"DEEPSEEK_API_KEY": "test-key-123", "DEEPSEEK_ACCOUNT_TOKEN": "test-token-456"}
    assert resolve_credential(CredentialSettings(), env, "X") == "test-key-123"
    assert resolve_credential(CredentialSettings(auth="account"), env, "X") == "test-token-456"
    assert resolve_credential(CredentialSettings(api_key_env="OTHER"), {"OTHER": " k-1 \n"}, "X") == "k-1"


def test_credential_missing_message_never_holds_a_value() -> None:
    with pytest.raises(WebError) as info:
        resolve_credential(CredentialSettings(), {"DEEPSEEK_API_KEY": "bad value"}, "X")
    assert info.value.code == WebErrorCode.PROVIDER_CREDENTIAL_MISSING
    assert "bad value" not in str(info.value)


def test_response_over_the_cap_is_a_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_deepseek_http, "MAX_RESPONSE_BYTES", 10)
    transport = httpx.MockTransport(lambda _r: httpx.Response(200, content=b"x" * 11))
    with pytest.raises(WebError) as info:
        asyncio.run(post("https://a.test/x", b"{}", {}, label="L", timeout_s=5, transport=transport))
    assert info.value.code == WebErrorCode.PROVIDER_ERROR
    assert "exceeds 10 bytes" in info.value.message


def test_a_callers_transport_is_not_closed() -> None:
    closed: list[bool] = []

    class Tracking(httpx.MockTransport):
        async def aclose(self) -> None:
            closed.append(True)

    transport = Tracking(lambda _r: httpx.Response(200, content=b"{}"))
    asyncio.run(post("https://a.test/x", b"{}", {}, label="L", timeout_s=5, transport=transport))
    assert closed == []


# -- strict JSON: no NaN or infinities ------------------------------------------------------------

@pytest.mark.parametrize(
    "body",
    [b'{"x": NaN}', b'{"x": Infinity}', b'{"x": -Infinity}', b"[1e400]", b"-1e999"],
    ids=["nan", "infinity", "minus-infinity", "overflow", "negative-overflow"],
)
def test_parse_json_rejects_non_finite_numbers(body: bytes) -> None:
    with pytest.raises(ValueError):
        _deepseek_http.parse_json(body)


def test_parse_json_keeps_ordinary_numbers() -> None:
    assert _deepseek_http.parse_json(b'{"a": 1.5, "b": -2, "c": 1e300, "d": 10000000000000000000000}') == {
        "a": 1.5, "b": -2, "c": 1e300, "d": 10**22,
    }


# -- credentials never reach a message ------------------------------------------------------------

SECRET = "test-key-123456"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Your api key {SECRET} is invalid", "Your api key <credential> is invalid"),
        ("key sk-" "0123456789abcdefABCD rejected", "key <credential> rejected"),
        ("Authorization: Bearer abc.DEF-123_x was refused", "Authorization: Bearer <credential> was refused"),
        ("bearer\ttok3n-abcdefgh;en", "bearer\t<credential>;en"),
        ("sk-short stays", "sk-short stays"),
        # the shared rules' guards: prose after "Bearer" is not a token
        ("use Bearer authentication with a token", "use Bearer authentication with a token"),
        ("nothing secret here", "nothing secret here"),
    ],
)
def test_scrub_secrets(text: str, expected: str) -> None:
    assert _deepseek_http.scrub_secrets(text, [SECRET]) == expected


def test_scrub_secrets_redacts_dashed_project_keys() -> None:
    """Regression: a key with dashes (``sk-proj-...``) used to pass the old ``sk-[A-Za-z0-9]{16,}`` rule."""
    key = "sk-" "proj-" "AbCdEfGhIjKlMnOpQrStUv12"
    text = _deepseek_http.scrub_secrets(f"Incorrect API key provided: {key}. See the docs.")
    assert key not in text and "proj-" not in text
    assert text == "Incorrect API key provided: <credential>. See the docs."


def test_error_detail_scrubs_the_credential_before_capping() -> None:
    body = b'{"error":{"message":"' + b"x" * 490 + b" " + SECRET.encode() + b' is invalid"}}'
    detail = error_detail(body, [SECRET])
    assert detail is not None and SECRET not in detail and "test-key" not in detail
    assert "<cred" in detail


def test_api_status_error_scrubs_the_credential() -> None:
    reply = _deepseek_http.Reply(401, httpx.Headers(), f'{{"error":"Your api key {SECRET} is invalid"}}'.encode())
    error = _deepseek_http.api_status_error("L", reply, "DEEPSEEK_API_KEY", {}, secrets=[SECRET])
    assert SECRET not in error.message
    assert "Your api key <credential> is invalid" in error.message


def test_transport_error_text_is_scrubbed() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"proxy said: bad key {SECRET}", request=request)

    with pytest.raises(WebError) as info:
        asyncio.run(post("https://a.test/x", b"{}", {}, label="L", timeout_s=5,
                         transport=httpx.MockTransport(refuse), secrets=[SECRET]))
    assert info.value.code == WebErrorCode.PROVIDER_ERROR
    assert SECRET not in info.value.message and "bad key <credential>" in info.value.message


# -- header values that cannot be sent ------------------------------------------------------------

@pytest.mark.parametrize(
    "value", ["2023-06-01\r\nX-Injected: 1", "2023\n06", "2023–06–01", "v\x00"], ids=["crlf", "lf", "non-ascii", "nul"]
)
def test_unsendable_header_value_is_config_invalid(value: str) -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, content=b"{}")

    transport = httpx.MockTransport(answer)
    with pytest.raises(WebError) as info:
        asyncio.run(post("https://a.test/x", b"{}", {"anthropic-version": value}, label="L", timeout_s=5,
                         transport=transport))
    assert info.value.code == WebErrorCode.CONFIG_INVALID
    assert "anthropic-version" in info.value.message and value not in info.value.message
    assert sent == []


def test_request_building_value_error_is_config_invalid(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: object) -> httpx.Request:
        raise UnicodeEncodeError("ascii", "é", 0, 1, "ordinal not in range(128)")

    monkeypatch.setattr(httpx.AsyncClient, "build_request", broken)
    transport = httpx.MockTransport(lambda _r: httpx.Response(200, content=b"{}"))
    with pytest.raises(WebError) as info:
        asyncio.run(post("https://a.test/x", b"{}", {}, label="L", timeout_s=5, transport=transport))
    assert info.value.code == WebErrorCode.CONFIG_INVALID


@pytest.mark.parametrize("spaces", [4_573, 4_574, 4_580, 4_586, 4_590])
def test_a_key_the_scrubbing_window_splits_after_long_whitespace_never_shows(spaces: int) -> None:
    """The window cut the key, and collapsing the spaces before it brought its piece to the front: 4,580
    spaces and then the key showed 16 of its characters."""
    key = "dsweb-emulator-key-0001"
    body = json.dumps({"error": {"message": " " * spaces + key + " rejected"}}).encode()
    detail = error_detail(body, (key,)) or ""
    assert not any(key[i : i + 6] in detail for i in range(len(key) - 5)), detail


def test_a_long_word_the_window_splits_still_shows_its_start() -> None:
    text = scrub_prefix("a" * 6000, 500, ("dsweb-emulator-key-0001",))
    assert text.startswith("a" * 500) and text.endswith("...")


# -- a part of the key never shows either ------------------------------------------------------------

# Key shapes (a few, so the scrubber's patterns are built once each): the emulator's, a hex key, a long
# mixed-case one with the URL-safe characters.
_KEYS = ("dsweb-emulator-key-0001", "sk-" + "3f9a0c7e1b2d4856" * 2, "AbC_dEf-" * 8)
_FORMS = ("raw", "base64", "percent", "percent-lower", "percent-twice", "percent-mixed", "upper", "entities", "hex",
          "hex-upper", "x-escapes", "json-escapes", "entities-hex", "entities-loose", "percent-entities", "reversed")


def _echo(how: str, part: str) -> str:
    if how == "raw":
        return part
    if how == "reversed":
        return part[::-1]
    return outcomes.encoded_text(how, part)  # the echo rows' encodings, as the parsed message reads


@settings(max_examples=300, deadline=None)
@given(
    key=st.sampled_from(_KEYS),
    start=st.integers(0, 63),
    length=st.integers(10, 64),
    how=st.sampled_from(_FORMS),
    before=st.sampled_from(["", "key=", "x", "Bearer ", "%", "&#", "ab"]),
)
def test_no_piece_of_the_key_shows_whatever_part_is_echoed_and_however(
    key: str, start: int, length: int, how: str, before: str
) -> None:
    """What the judge of errors.secret_echo counts as showing the key (any 10 characters of it, in any
    reading it decodes) never survives scrub_secrets, for any part an upstream echoes."""
    part = key[start : start + length]
    assume(len(part) >= 10)
    scrubbed = _deepseek_http.scrub_secrets(f"rejected {before}{_echo(how, part)} at the gateway", [key])
    assert leak(scrubbed, key) is None, (how, scrubbed)


def test_a_part_shorter_than_a_piece_and_plain_words_are_kept() -> None:
    key = "dsweb-emulator-key-0001"
    text = f"the emulator refused {key[:9]}***{key[-4:]}"  # a masked key: nine characters and four
    assert _deepseek_http.scrub_secrets(text, [key]) == text


@pytest.mark.parametrize("key", ["abcd", "Zq9x5"])
def test_a_key_too_short_for_a_base64_core_is_redacted_and_leaves_the_rest_whole(key: str) -> None:
    # catches: the empty base64 pattern of a key under six bytes, which matched at every position and put a
    # placeholder between every two characters of every error message
    scrubbed = _deepseek_http.scrub_secrets(f"Connection refused (the gateway saw {key})", [key])
    assert scrubbed == "Connection refused (the gateway saw <credential>)"
    assert not encoded_secret_found("Connection refused", [key])  # the empty pattern also found it in any text


def test_a_long_part_loses_a_piece_per_match_so_no_piece_is_left() -> None:
    key = "dsweb-emulator-key-0123456789"
    scrubbed = _deepseek_http.scrub_secrets(f"key {key[:25]} rejected", [key])
    assert scrubbed == "key <credential><credential>12345 rejected"  # 10, 10, and five left
