"""Deployment settings: one frozen snapshot, loaded from a TOML file and the environment.

Every key lives in ``SETTINGS_KEYS`` (dotted name, environment variable, default,
meaning); the loader, the validation and ``describe_settings_keys()`` all read
that table, so the documentation cannot drift from the code.

Precedence, lowest to highest: built-in defaults, the TOML file, the environment.
An environment variable that is set but empty counts as unset, and unknown
``DSWEB_*`` variables are ignored (the prefix is shared with other tools), while
an unknown key in the file is an error.

The switch ``web.use_new_search_api`` writes both provider selections (seed 001):
on selects ``deepseek-search-api`` + ``deepseek-fetch-api``, off selects
``deepseek-official`` + ``http`` (the shipped default). Within one layer an
explicit ``web.search_provider`` / ``web.fetch_provider`` beats the switch; a
higher layer beats a lower one whichever of the three keys it sets. So a stored
Messages selection keeps Messages when only the default changes, and setting
the switch in the environment overrides selections stored in the file.

Credentials are never settings values: the snapshot names the environment
variable and the route (``credentials.auth``), and each provider reads the value
per operation.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from ._exceptions import WebError, WebErrorCode
from ._service import ProviderSelection
from ._validate import ip_literal

__all__ = [
    "API_SELECTION",
    "CONFIG_ENV",
    "MAX_MESSAGES_MAX_TOKENS",
    "MAX_MESSAGES_MAX_USES",
    "MAX_QPS",
    "MAX_RETRIES",
    "MAX_RETRY_WAIT_S",
    "MAX_SUMMARY_CHARS",
    "MAX_TIMEOUT_S",
    "MESSAGES_SELECTION",
    "SETTINGS_KEYS",
    "AuthRoute",
    "CredentialSettings",
    "DeepSeekApiSettings",
    "DeepSeekMessagesSettings",
    "HttpFetchSettings",
    "NetguardSettings",
    "SettingKey",
    "Settings",
    "SettingsSource",
    "ToolSettings",
    "WebSettings",
    "describe_settings_keys",
    "load_settings",
    "parse_settings",
]

AuthRoute = Literal["api_key", "account"]
Kind = Literal["str", "int", "float", "bool"]

CONFIG_ENV = "DSWEB_CONFIG"
# (search provider, fetch provider) written by the switch.
API_SELECTION = ("deepseek-search-api", "deepseek-fetch-api")
MESSAGES_SELECTION = ("deepseek-official", "http")

_SWITCH, _SEARCH, _FETCH = "web.use_new_search_api", "web.search_provider", "web.fetch_provider"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# One day: far above any real request, and the one bound every timeout in the package shares.
MAX_TIMEOUT_S = 86_400.0
# Documented upper bounds: far above any real use, low enough that a typo cannot ask for absurd work.
MAX_MESSAGES_MAX_TOKENS = 1_000_000
MAX_MESSAGES_MAX_USES = 100
MAX_QPS = 10_000.0
MAX_RETRIES = 10
MAX_RETRY_WAIT_S = 3_600.0
MAX_SUMMARY_CHARS = 1_000_000
_MAX_MODEL_CHARS = 256
_MAX_HEADER_TOKEN_CHARS = 64
# An RFC 9110 token: printable ASCII without spaces or separators, so it can go into a header as is.
_HEADER_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


@dataclass(frozen=True, slots=True)
class WebSettings:
    # None means "no provider configured": the seam picks the single available one.
    search_provider: str | None = MESSAGES_SELECTION[0]
    fetch_provider: str | None = MESSAGES_SELECTION[1]
    use_new_search_api: bool = False


@dataclass(frozen=True, slots=True)
class DeepSeekMessagesSettings:
    base_url: str = "https://api.deepseek.com/anthropic/v1"
    model: str = "deepseek-v4-flash"
    max_tokens: int = 4096
    max_uses: int = 5
    api_version: str = "2023-06-01"
    timeout_s: float = 120.0


@dataclass(frozen=True, slots=True)
class DeepSeekApiSettings:
    base_url: str = "https://api.deepseek.com/v1/tools"
    count: int = 10
    send_original_question: bool = True
    timeout_s: float = 60.0
    pacing: bool = False
    search_qps: float = 5.0
    fetch_qps: float = 5.0
    retries: int = 0
    retry_max_wait_s: float = 10.0
    localization: str = ""


@dataclass(frozen=True, slots=True)
class CredentialSettings:
    auth: AuthRoute = "api_key"
    api_key_env: str = "DEEPSEEK_API_KEY"
    account_token_env: str = "DEEPSEEK_ACCOUNT_TOKEN"

    @property
    def env_name(self) -> str:
        """The environment variable that holds the credential for the selected route."""
        return self.account_token_env if self.auth == "account" else self.api_key_env


@dataclass(frozen=True, slots=True)
class ToolSettings:
    search_max_queries: int = 4
    search_max_results: int = 8
    search_max_output_chars: int = 20_000
    fetch_max_output_chars: int = 200_000
    search_model_text: str = "snippet"
    search_summary_max_chars: int = 1000
    search_summary_total_chars: int = 4000


@dataclass(frozen=True, slots=True)
class HttpFetchSettings:
    max_url_length: int = 2048
    max_response_bytes: int = 5_000_000
    max_body_chars: int = 100_000
    timeout_s: float = 30.0
    max_redirects: int = 5


@dataclass(frozen=True, slots=True)
class NetguardSettings:
    # Comma-separated operator NAT64/DNS64 prefixes (RFC 6052), besides the well-known 64:ff9b::/96.
    nat64_prefixes: str = ""


@dataclass(frozen=True, slots=True)
class Settings:
    """One immutable snapshot. Providers take ``Callable[[], Settings]`` and call it once per operation."""

    web: WebSettings = field(default_factory=WebSettings)
    deepseek_messages: DeepSeekMessagesSettings = field(default_factory=DeepSeekMessagesSettings)
    deepseek_api: DeepSeekApiSettings = field(default_factory=DeepSeekApiSettings)
    credentials: CredentialSettings = field(default_factory=CredentialSettings)
    tools: ToolSettings = field(default_factory=ToolSettings)
    http_fetch: HttpFetchSettings = field(default_factory=HttpFetchSettings)
    netguard: NetguardSettings = field(default_factory=NetguardSettings)

    def provider_selection(self) -> ProviderSelection:
        """What ``WebService`` needs: ``WebService(lambda: source().provider_selection())``."""
        return ProviderSelection(search=self.web.search_provider, fetch=self.web.fetch_provider)

    def updated(self, values: Mapping[str, object]) -> Settings:
        """A copy with ``values`` (dotted keys, typed values) applied as a new top layer, validated."""
        layer = {key: _check(key, value, None) for key, value in values.items()}
        return _build([_flatten(self), layer])

    def with_new_search_api(self, on: bool) -> Settings:
        """The settings-page switch: writes the switch and both selections together."""
        return self.updated({_SWITCH: on})


@dataclass(frozen=True, slots=True)
class SettingKey:
    key: str
    env: str
    default: object
    meaning: str
    kind: Kind
    check: Callable[[Any], str | None] = field(repr=False)


@dataclass(frozen=True, slots=True)
class _Range:
    """An integer setting's bounds (``high`` None: none above). A value, not a closure: the table is
    built once at import, and the check must run its own code each time a value is validated."""

    low: int
    high: int | None = None

    def __call__(self, v: int) -> str | None:
        if self.high is None:
            return None if v >= self.low else f"must be at least {self.low}"
        return None if self.low <= v <= self.high else f"must be from {self.low} to {self.high}"


def _timeout(v: float) -> str | None:
    return None if 0 < v <= MAX_TIMEOUT_S else f"must be more than 0 and at most {MAX_TIMEOUT_S:g} seconds"


def _model_name(v: str) -> str | None:
    if not v.strip():
        return "must not be blank"
    if not v.isprintable() or v != v.strip():
        return "must be printable text without control characters or surrounding spaces"
    if len(v) > _MAX_MODEL_CHARS:
        return f"must be at most {_MAX_MODEL_CHARS} characters"
    return None


def _header_token(v: str) -> str | None:
    if not _HEADER_TOKEN.fullmatch(v) or len(v) > _MAX_HEADER_TOKEN_CHARS:
        return (
            f"must be an HTTP header token: 1-{_MAX_HEADER_TOKEN_CHARS} printable ASCII characters, "
            "no spaces, line breaks or separators"
        )
    return None


def _qps(v: float) -> str | None:
    return None if 0 < v <= MAX_QPS else f"must be more than 0 and at most {MAX_QPS:g} requests per second"


def _wait(v: float) -> str | None:
    return None if 0 < v <= MAX_RETRY_WAIT_S else f"must be more than 0 and at most {MAX_RETRY_WAIT_S:g} seconds"


def _localization(v: str) -> str | None:
    if v == "" or ip_literal(v) is not None:
        return None
    return "must be blank or an IPv4 or IPv6 address literal (no host names, ranges, zones, places or languages)"


def _model_text(v: str) -> str | None:
    return None if v in ("snippet", "summary") else 'must be "snippet" or "summary"'


def _env_name(v: str) -> str | None:
    return None if _ENV_NAME.fullmatch(v) else "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)"


def _auth(v: str) -> str | None:
    return None if v in ("api_key", "account") else 'must be "api_key" or "account"'


# RFC 6052 section 2.2: the prefix lengths an operator may choose for IPv4-embedded IPv6.
_NAT64_LENGTHS = (32, 40, 48, 56, 64, 96)


def _nat64_prefixes(v: str) -> str | None:
    for part in (p.strip() for p in v.split(",")):
        if not part:
            continue
        try:
            net = ipaddress.IPv6Network(part)
        except ValueError:
            return f"must be comma-separated IPv6 prefixes such as 2001:db8:64::/96 ({part[:60]!r} is not one)"
        if net.prefixlen not in _NAT64_LENGTHS:
            return f"NAT64 prefix {net} must have length 32, 40, 48, 56, 64 or 96 (RFC 6052)"
    return None


def _key(key: str, env: str, default: object, kind: Kind, meaning: str,
         check: Callable[[Any], str | None] | None = None) -> SettingKey:
    return SettingKey(key, env, default, meaning, kind, check or (lambda _v: None))


# Instances, not the classes: slotted dataclasses keep no defaults as class attributes.
_MSG, _API, _CRED = DeepSeekMessagesSettings(), DeepSeekApiSettings(), CredentialSettings()
_TOOLS, _HTTP = ToolSettings(), HttpFetchSettings()

SETTINGS_KEYS: tuple[SettingKey, ...] = (
    _key(_SWITCH, "DSWEB_USE_NEW_SEARCH_API", False, "bool",
         "Use the new Web Search API. Writes both selections: on = deepseek-search-api + deepseek-fetch-api, "
         "off = deepseek-official + http."),
    _key(_SEARCH, "DSWEB_SEARCH_PROVIDER", MESSAGES_SELECTION[0], "str",
         "Search provider id; overrides the switch in the same or a lower layer. Blank = pick the single "
         "available provider."),
    _key(_FETCH, "DSWEB_FETCH_PROVIDER", MESSAGES_SELECTION[1], "str",
         "Fetch provider id; overrides the switch in the same or a lower layer. Blank = pick the single "
         "available provider."),
    _key("deepseek_messages.base_url", "DSWEB_MESSAGES_BASE_URL", _MSG.base_url, "str",
         "Messages API base; /messages is appended. Never derived from the tools base."),
    _key("deepseek_messages.model", "DSWEB_MESSAGES_MODEL", _MSG.model, "str",
         f"Model for the auxiliary Messages search request (printable, not blank, at most {_MAX_MODEL_CHARS} "
         "characters).", _model_name),
    _key("deepseek_messages.max_tokens", "DSWEB_MESSAGES_MAX_TOKENS", _MSG.max_tokens, "int",
         f"max_tokens of the Messages search request (1-{MAX_MESSAGES_MAX_TOKENS}).",
         _Range(1, MAX_MESSAGES_MAX_TOKENS)),
    _key("deepseek_messages.max_uses", "DSWEB_MESSAGES_MAX_USES", _MSG.max_uses, "int",
         f"max_uses of the web_search server tool (1-{MAX_MESSAGES_MAX_USES}).", _Range(1, MAX_MESSAGES_MAX_USES)),
    _key("deepseek_messages.api_version", "DSWEB_MESSAGES_API_VERSION", _MSG.api_version,
         "str", f"Sent as the anthropic-version header: an HTTP token (printable ASCII, no spaces, at most "
         f"{_MAX_HEADER_TOKEN_CHARS} characters).", _header_token),
    _key("deepseek_messages.timeout_s", "DSWEB_MESSAGES_TIMEOUT_S", _MSG.timeout_s, "float",
         "Deadline of one Messages search request in seconds: connecting, sending and reading the whole "
         "answer (connect alone is capped at 10).", _timeout),
    _key("deepseek_api.base_url", "DSWEB_TOOLS_BASE_URL", _API.base_url, "str",
         "Search/Fetch API base; /search or /fetch is appended. Blank or unparseable = both API providers "
         "unavailable."),
    _key("deepseek_api.count", "DSWEB_SEARCH_COUNT", _API.count, "int",
         "Search API count (1-50); lowered to the request's max_results when that is smaller.", _Range(1, 50)),
    _key("deepseek_api.send_original_question", "DSWEB_SEND_ORIGINAL_QUESTION",
         _API.send_original_question, "bool",
         "Send ori_question (the latest user prompt, up to 128 characters) with each search."),
    _key("deepseek_api.timeout_s", "DSWEB_TOOLS_TIMEOUT_S", _API.timeout_s, "float",
         "Deadline of one Search/Fetch API request in seconds: connecting, sending and reading the whole "
         "answer (connect alone is capped at 10). With pacing or retries on, the one deadline of the whole "
         "operation: slot waits, every attempt and every retry wait.", _timeout),
    _key("deepseek_api.pacing", "DSWEB_TOOLS_PACING", _API.pacing, "bool",
         "Pace Search/Fetch API requests per account (tools base + credential) in this process: starts "
         "1/QPS (+5 %) apart, per API. Off = seed 001's fail-fast behaviour. Cannot enforce the account-wide "
         "quota across processes."),
    _key("deepseek_api.search_qps", "DSWEB_SEARCH_QPS", _API.search_qps, "float",
         f"Search API requests per second when pacing is on (more than 0, at most {MAX_QPS:g}).", _qps),
    _key("deepseek_api.fetch_qps", "DSWEB_FETCH_QPS", _API.fetch_qps, "float",
         f"Fetch API requests per second when pacing is on (more than 0, at most {MAX_QPS:g}).", _qps),
    _key("deepseek_api.retries", "DSWEB_TOOLS_RETRIES", _API.retries, "int",
         f"Retries after HTTP 408, 429 or 5xx (0-{MAX_RETRIES}; 0 = seed 001's fail-fast). 402 and other "
         "4xx are never retried. Waits Retry-After (seconds or HTTP date), else backs off with jitter.",
         _Range(0, MAX_RETRIES)),
    _key("deepseek_api.retry_max_wait_s", "DSWEB_TOOLS_RETRY_MAX_WAIT_S", _API.retry_max_wait_s, "float",
         "Longest single retry wait in seconds; a longer Retry-After ends the retries instead of being "
         "shortened.", _wait),
    _key("deepseek_api.localization", "DSWEB_SEARCH_LOCALIZATION", _API.localization, "str",
         "IP address literal (IPv4 or IPv6) sent as the Search API's localization; blank = omitted. "
         "No host names, places or languages.", _localization),
    _key("credentials.auth", "DSWEB_AUTH", _CRED.auth, "str",
         'Credential route: "api_key" reads credentials.api_key_env, "account" reads credentials.account_token_env.',
         _auth),
    _key("credentials.api_key_env", "DSWEB_API_KEY_ENV", _CRED.api_key_env, "str",
         "Environment variable holding the DeepSeek API key (read per operation).", _env_name),
    _key("credentials.account_token_env", "DSWEB_ACCOUNT_TOKEN_ENV", _CRED.account_token_env, "str",
         "Environment variable holding the DeepSeek account token (read per operation).", _env_name),
    _key("tools.search_max_queries", "DSWEB_SEARCH_MAX_QUERIES", _TOOLS.search_max_queries, "int",
         "Most queries one web_search call may carry.", _Range(1)),
    _key("tools.search_max_results", "DSWEB_SEARCH_MAX_RESULTS", _TOOLS.search_max_results, "int",
         "Most sources one web_search call returns.", _Range(1)),
    _key("tools.search_max_output_chars", "DSWEB_SEARCH_MAX_OUTPUT_CHARS", _TOOLS.search_max_output_chars,
         "int", "Most characters of model-visible text one web_search call returns, errors included; a longer "
         "text is cut with a visible note. Per source, the title is cut at 200, the snippet at 500, the URL at "
         "2048 and the date at 64 characters.", _Range(1)),
    _key("tools.search_model_text", "DSWEB_SEARCH_MODEL_TEXT", _TOOLS.search_model_text, "str",
         'What the model sees per web_search source: "snippet" (seed 001 as shipped) or "summary" (the Search '
         "API's long summary, whitespace folded, cut to the two budgets below with a trailing \"…\"; a source "
         "without one keeps its snippet). The structured value keeps both either way.", _model_text),
    _key("tools.search_summary_max_chars", "DSWEB_SEARCH_SUMMARY_MAX_CHARS", _TOOLS.search_summary_max_chars,
         "int", f"Summary mode: most characters (Unicode code points, the marker included) of one source's summary "
         f"the model sees (1-{MAX_SUMMARY_CHARS}).", _Range(1, MAX_SUMMARY_CHARS)),
    _key("tools.search_summary_total_chars", "DSWEB_SEARCH_SUMMARY_TOTAL_CHARS",
         _TOOLS.search_summary_total_chars, "int",
         f"Summary mode: most summary characters one web_search call shows over all its sources and queries, "
         f"spent in source order; a source left without room shows none (1-{MAX_SUMMARY_CHARS}).",
         _Range(1, MAX_SUMMARY_CHARS)),
    _key("tools.fetch_max_output_chars", "DSWEB_FETCH_MAX_OUTPUT_CHARS", _TOOLS.fetch_max_output_chars,
         "int", "Most characters one web_fetch result returns, errors included.", _Range(1)),
    _key("http_fetch.max_url_length", "DSWEB_HTTP_MAX_URL_LENGTH", _HTTP.max_url_length, "int",
         "Longest URL the http fetch provider accepts.", _Range(1)),
    _key("http_fetch.max_response_bytes", "DSWEB_HTTP_MAX_RESPONSE_BYTES", _HTTP.max_response_bytes,
         "int", "Largest response body the http fetch provider reads.", _Range(1)),
    _key("http_fetch.max_body_chars", "DSWEB_HTTP_MAX_BODY_CHARS", _HTTP.max_body_chars, "int",
         "Most characters of body the http fetch provider keeps.", _Range(1)),
    _key("http_fetch.timeout_s", "DSWEB_HTTP_TIMEOUT_S", _HTTP.timeout_s, "float",
         "Deadline of one http fetch, in seconds.", _timeout),
    _key("http_fetch.max_redirects", "DSWEB_HTTP_MAX_REDIRECTS", _HTTP.max_redirects, "int",
         "Redirects the http fetch provider follows (0 = none).", _Range(0, 20)),
    _key("netguard.nat64_prefixes", "DSWEB_NAT64_PREFIXES", "", "str",
         "Operator NAT64/DNS64 prefixes (comma-separated, RFC 6052 lengths /32-/96) besides 64:ff9b::/96; "
         "an address under one is judged as the IPv4 address it embeds.", _nat64_prefixes),
)

_BY_KEY = {k.key: k for k in SETTINGS_KEYS}


def describe_settings_keys() -> list[dict[str, str]]:
    """Rows for the README table: key, env, default, meaning (all strings)."""
    rows = []
    for k in SETTINGS_KEYS:
        if isinstance(k.default, bool):
            default = str(k.default).lower()
        elif isinstance(k.default, float):
            default = f"{k.default:g}"
        else:
            default = str(k.default)
        rows.append({"key": k.key, "env": k.env, "default": default, "meaning": k.meaning})
    return rows


# -- validation -----------------------------------------------------------------------------------

def _invalid(key: str, env: str | None, reason: str) -> WebError:
    where = f" (from {env})" if env else ""
    return WebError(WebErrorCode.CONFIG_INVALID, f"invalid setting {key}{where}: {reason}")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _from_env(spec: SettingKey, text: str) -> object:
    raw = text.strip()
    if spec.kind == "str":
        return raw
    if spec.kind == "bool":
        lowered = raw.lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise _invalid(spec.key, spec.env, f"must be true or false, got {_show(text)}")
    if spec.kind == "int":
        if not re.fullmatch(r"[+-]?\d{1,18}", raw):
            raise _invalid(spec.key, spec.env, f"must be an integer, got {_show(text)}")
        return int(raw)
    try:
        return float(raw)
    except ValueError:
        raise _invalid(spec.key, spec.env, f"must be a number, got {_show(text)}") from None


def _check(key: str, value: object, env: str | None) -> object:
    spec = _BY_KEY.get(key)
    if spec is None:
        raise _invalid(key, env, "unknown key")
    if spec.kind == "float" and isinstance(value, int) and not isinstance(value, bool):
        value = float(value) if abs(value) <= 2**53 else math.inf
    expected: type = {"str": str, "int": int, "float": float, "bool": bool}[spec.kind]
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        noun = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false"}[spec.kind]
        raise _invalid(key, env, f"must be {noun}, got {type(value).__name__} {_show(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise _invalid(key, env, f"must be a finite number, got {_show(value)}")
    reason = spec.check(value)
    if reason:
        raise _invalid(key, env, f"{reason}, got {_show(value)}")
    return value


# -- layering -------------------------------------------------------------------------------------

def _flatten(settings: Settings) -> dict[str, object]:
    out: dict[str, object] = {}
    for section in fields(settings):
        part = getattr(settings, section.name)
        for item in fields(part):
            value = getattr(part, item.name)
            out[f"{section.name}.{item.name}"] = "" if value is None else value
    return out


def _build(layers: Iterable[Mapping[str, object]]) -> Settings:
    merged: dict[str, object] = {k.key: k.default for k in SETTINGS_KEYS}
    for layer in layers:
        if _SWITCH in layer:
            search, fetch = API_SELECTION if layer[_SWITCH] else MESSAGES_SELECTION
            merged[_SEARCH], merged[_FETCH] = search, fetch
        merged.update(layer)
    sections: dict[str, dict[str, object]] = {}
    for key, value in merged.items():
        section, name = key.split(".", 1)
        if key in (_SEARCH, _FETCH):
            value = str(value).strip() or None
        sections.setdefault(section, {})[name] = value
    base = Settings()
    return replace(base, **{s: replace(getattr(base, s), **v) for s, v in sections.items()})


def _file_layer(data: Mapping[str, Any]) -> dict[str, object]:
    layer: dict[str, object] = {}
    for section, table in data.items():
        if not isinstance(table, Mapping):
            raise _invalid(str(section), None, "unknown key (settings live in tables such as [web])")
        for name, value in table.items():
            key = f"{section}.{name}"
            layer[key] = _check(key, value, None)
    return layer


def _env_layer(environ: Mapping[str, str]) -> dict[str, object]:
    layer: dict[str, object] = {}
    for spec in SETTINGS_KEYS:
        text = environ.get(spec.env)
        if text is None or text == "":
            continue
        layer[spec.key] = _check(spec.key, _from_env(spec, text), spec.env)
    return layer


def parse_settings(data: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from a parsed TOML document (``data``) and ``environ`` (the environment beats the file)."""
    if data is not None and not isinstance(data, Mapping):
        raise WebError(WebErrorCode.CONFIG_INVALID, "the settings document must be a table")
    return _build([_file_layer(data or {}), _env_layer(environ if environ is not None else {})])


def load_settings(path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Read ``path`` (else ``$DSWEB_CONFIG``, else no file) and the environment (``os.environ`` by default)."""
    env = os.environ if environ is None else environ
    if path is None:
        path = env.get(CONFIG_ENV) or None
    data: dict[str, Any] = {}
    if path is not None:
        try:
            with Path(path).open("rb") as handle:
                data = tomllib.load(handle)
        except FileNotFoundError:
            raise WebError(WebErrorCode.CONFIG_INVALID, f"settings file {os.fspath(path)!r} does not exist") from None
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise WebError(
                WebErrorCode.CONFIG_INVALID, f"settings file {os.fspath(path)!r} is unreadable: {exc}", cause=exc
            ) from exc
        except RecursionError:  # tomllib recurses per level of nesting
            raise WebError(
                WebErrorCode.CONFIG_INVALID, f"settings file {os.fspath(path)!r} is nested too deeply"
            ) from None
    return parse_settings(data, env)


class SettingsSource:
    """Holds the current snapshot; calling it returns that snapshot. ``set`` swaps it for the
    next operation (an operation already running keeps the one it took)."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._path = path
        self._environ = environ
        self._current = settings if settings is not None else load_settings(path, environ)

    def __call__(self) -> Settings:
        return self._current

    def set(self, settings: Settings) -> None:
        self._current = settings

    def reload(self) -> Settings:
        """Load again from the file and environment; an invalid edit raises and keeps the last good snapshot."""
        self._current = load_settings(self._path, self._environ)
        return self._current
