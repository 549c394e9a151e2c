"""Shared helpers: error-detail extraction, base URLs, credentials, the bounded POST."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref.providers import _deepseek_http
from dsweb_ref.providers._deepseek_http import error_detail, post, resolve_credential, usable_base_url
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
