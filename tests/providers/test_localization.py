"""Bounded localization: an IP address literal from the settings or the call context, sent as the
Search API's ``localization``; anything else is an error and is never forwarded."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dsweb_ref._context import CallContext
from dsweb_ref._exceptions import WebError, WebErrorCode
from dsweb_ref._types import SearchRequest
from dsweb_ref._validate import ip_literal
from dsweb_ref.emulator import Emulator
from dsweb_ref.providers.deepseek_search_api import DeepSeekSearchApi
from dsweb_ref.settings import Settings, parse_settings

from ._helpers import ENV, Mock, Recorder

BASE = "https://tools.test/v1/tools"

NOT_IP_LITERALS = [
    "zh-CN",  # a language
    "en_US",
    "Beijing",  # a place
    "example.com",  # a host name
    "localhost",
    "1.2.3.4/24",  # a range
    "1.2.3",  # a short IPv4 form some parsers accept
    "01.2.3.4",  # leading zeros (octal in some parsers)
    "0x7f.0.0.1",
    "1.2.3.4.5",
    " 1.2.3.4",
    "1.2.3.4 ",
    "fe80::1%eth0",  # a zone names an interface
    "[::1]",
    "::g",
    "1.2.3.4\n",
    "\u0661.\u0662.\u0663.\u0664",  # non-ASCII digits
    "a" * 100,
]


def _body(settings: Settings, ctx: CallContext | None = None) -> dict[str, Any]:
    mock = Mock.json(200, {"results": []})
    provider = DeepSeekSearchApi(lambda: settings, transport=mock.transport, environ=ENV)
    asyncio.run(provider.search(SearchRequest("q"), ctx or CallContext()))
    body: dict[str, Any] = json.loads(mock.only.content)
    return body


def _settings(**values: object) -> Settings:
    return Settings().updated({"deepseek_api.base_url": BASE, **values})


def test_localization_is_omitted_when_unset() -> None:
    assert Settings().deepseek_api.localization == ""
    assert "localization" not in _body(_settings())


@pytest.mark.parametrize(
    ("setting", "sent"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8::1", "2001:db8::1"),
        ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),  # sent in canonical form
        ("::ffff:203.0.113.7", "::ffff:cb00:7107"),
    ],
)
def test_localization_setting_is_forwarded_as_an_ip_literal(setting: str, sent: str) -> None:
    assert _body(_settings(**{"deepseek_api.localization": setting}))["localization"] == sent


def test_call_context_overrides_the_setting_for_one_call() -> None:
    settings = _settings(**{"deepseek_api.localization": "203.0.113.7"})
    assert _body(settings, CallContext(localization="198.51.100.1"))["localization"] == "198.51.100.1"
    assert _body(settings)["localization"] == "203.0.113.7", "the override held for that call only"
    assert _body(_settings(), CallContext(localization="2001:db8::2"))["localization"] == "2001:db8::2"


@pytest.mark.parametrize("value", NOT_IP_LITERALS)
def test_a_bad_setting_is_config_invalid(value: str) -> None:
    with pytest.raises(WebError) as info:
        Settings().updated({"deepseek_api.localization": value})
    assert info.value.code == WebErrorCode.CONFIG_INVALID and "deepseek_api.localization" in info.value.message


def test_a_bad_setting_from_the_environment_is_config_invalid() -> None:
    with pytest.raises(WebError) as info:
        parse_settings(environ={"DSWEB_SEARCH_LOCALIZATION": "zh-CN"})
    assert info.value.code == WebErrorCode.CONFIG_INVALID and "DSWEB_SEARCH_LOCALIZATION" in info.value.message


@pytest.mark.parametrize("value", [*NOT_IP_LITERALS, "", 7, b"1.2.3.4"])
def test_a_bad_context_value_is_invalid_arguments_and_nothing_is_sent(value: object) -> None:
    mock = Mock.json(200, {"results": []})
    recorder = Recorder()
    provider = DeepSeekSearchApi(lambda: _settings(), transport=mock.transport, environ=ENV)
    ctx = CallContext(localization=value, record_request=recorder.context().record_request)  # type: ignore[arg-type]
    with pytest.raises(WebError) as info:
        asyncio.run(provider.search(SearchRequest("q"), ctx))
    assert info.value.code == WebErrorCode.INVALID_ARGUMENTS
    assert mock.requests == [] and recorder.records == [], "never recorded, never forwarded"


def test_ip_literal_accepts_only_address_literals() -> None:
    assert ip_literal("127.0.0.1") == "127.0.0.1"
    assert ip_literal("::1") == "::1"
    assert [v for v in NOT_IP_LITERALS if ip_literal(v) is not None] == []


def test_the_emulator_accepts_what_is_forwarded(emulator: Emulator, emulator_api_key: str) -> None:
    settings = Settings().updated(
        {"deepseek_api.base_url": emulator.tools_base, "deepseek_api.localization": "2001:db8::7"}
    )
    provider = DeepSeekSearchApi(lambda: settings, environ={"DEEPSEEK_API_KEY": emulator_api_key})
    result = asyncio.run(provider.search(SearchRequest("search api"), CallContext(localization="203.0.113.9")))
    assert result.sources
    (record,) = emulator.log.for_route("search")
    assert record.status == 200 and record.json["localization"] == "203.0.113.9"
