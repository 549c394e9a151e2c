"""Which account and model the standalone ``web_search`` (seed 003) uses: one pure function.

``resolve(document, environ)`` reads a configuration document (the parsed TOML/JSON below) and the
environment (only to see which key variables are set) and returns a ``Resolution``. Nothing else
is read, so the same document always gives the same answer; the runtime calls it once when it is
assembled and keeps the result (a later config change applies to the next runtime).

Document::

    offline = false                      # true: no web_search tool at all
    tools_enabled = ["web_search"]       # optional explicit allow-list; without "web_search": no tool
    current = "main"                     # the conversation's account (optional)
    web_search_model = "auto"            # missing, "" or "auto" = automatic; else "connection/model"
    connection_access = ["main"]         # optional: the only connections this runtime may use

    [agent]                              # the seed's spelling of the same setting (give it once)
    web_search_model = "auto"

    [[accounts]]                         # in order; the order decides the automatic fallback
    name = "main"
    protocol = "chat"                    # "chat" | "messages" | "responses"
    base_url = "https://api.deepseek.com"  # the official SDK's base URL for that protocol
    request_url = "..."                  # optional exact request URL (an override)
    model = "deepseek-v4-flash"
    api_key_env = "DEEPSEEK_API_KEY"     # configured = this variable is set and not blank
    web_search = true                    # optional; see the rules
    enabled = true                       # optional; false = the connection is switched off
    models = ["deepseek-v4-flash"]       # optional; when given, an assigned model must be listed
    source = "local"                     # "local" | "broker" | "extension": who offers the model

Rules (seed 003):

1. ``offline = true`` or an allow-list without ``web_search``: nothing is registered.
2. Official DeepSeek accounts (exact official Messages, Responses or Chat Completions URLs, the
   latter two with or without ``/v1``; an override must equal the derived official route) search
   by default; ``web_search = false`` turns that off. They search through the official
   Anthropic-compatible base with the same account key and model. Custom URLs are never converted.
3. Third-party Messages/Responses accounts search only with ``web_search = true``, through their
   own endpoint and key (a relay key never goes to the official host). Chat Completions accounts
   that are not official have no native search.
4. Automatic: the current account if it is configured and search-enabled; else, if the current
   account is search-capable and says ``web_search = false``, nothing (no fallback); else the
   first configured, search-enabled account in order.
5. Assigned (``connection/model``, split at the first ``/``; the model may contain ``/``): only
   that connection, with its own search switch. Gone, disabled, search off, model not listed or
   without credentials: the reference is kept, the reason reported, nothing registered, and no
   other account is used; ``notice`` then carries the one message the runtime shows.
6. A model offered only by a remote broker or an extension (``source`` not ``local``) never
   supplies a search credential: such an account is skipped (reason ``not_local``) and an
   enabled local search account is still needed.
7. A connection missing from ``connection_access`` is skipped (reason ``access_denied``);
   automatic selection goes on to the next candidate, an assignment to it is ``invalid``.
   Every skipped candidate is listed in ``skipped`` with its reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from ._exceptions import WebError, WebErrorCode

__all__ = [
    "OFFICIAL_MESSAGES_BASE",
    "Resolution",
    "SearchRoute",
    "is_official",
    "resolve",
    "search_model_of",
]

Protocol = Literal["chat", "messages", "responses"]
Status = Literal["selected", "none", "invalid"]
SOURCES = ("local", "broker", "extension")

OFFICIAL_HOST = "api.deepseek.com"
OFFICIAL_MESSAGES_BASE = "https://api.deepseek.com/anthropic"
# protocol -> (accepted SDK bases, the route each base derives)
_OFFICIAL: dict[str, tuple[tuple[str, ...], str]] = {
    "chat": (("", "/v1"), "/chat/completions"),
    "responses": (("", "/v1"), "/responses"),
    "messages": (("/anthropic",), "/v1/messages"),
}
_PROTOCOLS = ("chat", "messages", "responses")
_SUFFIX = {"messages": "/v1/messages", "responses": "/responses"}


@dataclass(frozen=True, slots=True)
class SearchRoute:
    """Where one standalone search request goes: the exact URL, the wire protocol, the model and
    the environment variable whose key it carries (never the key itself)."""

    account: str
    protocol: Literal["messages", "responses"]
    url: str
    model: str
    api_key_env: str

    def to_json(self) -> dict[str, str]:
        return {
            "account": self.account,
            "protocol": self.protocol,
            "url": self.url,
            "model": self.model,
            "api_key_env": self.api_key_env,
        }


@dataclass(frozen=True, slots=True)
class Resolution:
    """``selected`` carries a route; ``none`` means no tool by design; ``invalid`` means an
    assigned ``web_search_model`` cannot be used: the reference is kept, ``reason`` says why and
    ``notice`` is the one message a runtime built from it shows. ``skipped`` lists the candidates
    left out as ``(connection, reason)`` (``not_local``, ``access_denied``)."""

    status: Status
    route: SearchRoute | None = None
    reason: str | None = None
    reference: str | None = None
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def registers_tool(self) -> bool:
        return self.route is not None

    @property
    def notice(self) -> str | None:
        if self.status != "invalid":
            return None
        return (
            f"web_search is unavailable: the search model {self.reference!r} cannot be used ({self.reason}). "
            "Chat continues without it; choose automatic or a valid search model to restore it."
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "route": self.route.to_json() if self.route else None,
            "reason": self.reason,
            "reference": self.reference,
            "skipped": [{"connection": name, "reason": why} for name, why in self.skipped],
            "notice": self.notice,
        }


@dataclass(frozen=True, slots=True)
class _Account:
    name: str
    protocol: str
    base_url: str
    request_url: str | None
    model: str
    api_key_env: str
    web_search: bool | None
    enabled: bool
    models: tuple[str, ...] | None
    source: str = "local"


def _bad(where: str, why: str) -> WebError:
    return WebError(WebErrorCode.CONFIG_INVALID, f"standalone search config: {where} {why}")


def _text(table: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = table.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise _bad(f"{where}.{key}", "must be a non-empty string")
    return value


def _flag(table: Mapping[str, Any], key: str, where: str) -> bool | None:
    value = table.get(key)
    if value is not None and not isinstance(value, bool):
        raise _bad(f"{where}.{key}", "must be true or false")
    return value


def _account(index: int, raw: object) -> _Account:
    where = f"accounts[{index}]"
    if not isinstance(raw, Mapping):
        raise _bad(where, "must be a table")
    protocol = _text(raw, "protocol", where)
    if protocol not in _PROTOCOLS:
        raise _bad(f"{where}.protocol", 'must be "chat", "messages" or "responses"')
    source = _text(raw, "source", where, required=False) or "local"
    if source not in SOURCES:
        raise _bad(f"{where}.source", 'must be "local", "broker" or "extension"')
    models = raw.get("models")
    if models is not None and (not isinstance(models, list) or not all(isinstance(m, str) for m in models)):
        raise _bad(f"{where}.models", "must be a list of strings")
    return _Account(
        name=str(_text(raw, "name", where)),
        protocol=protocol,
        base_url=str(_text(raw, "base_url", where)),
        request_url=_text(raw, "request_url", where, required=False),
        model=str(_text(raw, "model", where)),
        api_key_env=str(_text(raw, "api_key_env", where)),
        web_search=_flag(raw, "web_search", where),
        enabled=_flag(raw, "enabled", where) is not False,
        models=tuple(models) if models is not None else None,
        source=source,
    )


def _normal(url: str) -> str | None:
    """``scheme://host/path`` with scheme and host lower-cased and trailing ``/`` trimmed; None for
    anything with userinfo, a port, a query or a fragment (such a URL is never the official one)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.username is not None or parts.password is not None or port is not None:
        return None
    if parts.query or parts.fragment or "?" in url or "#" in url or not parts.hostname:
        return None
    return f"{parts.scheme.lower()}://{parts.hostname.lower()}{parts.path.rstrip('/')}"


def is_official(protocol: str, base_url: str, request_url: str | None = None) -> bool:
    """True for an exact official DeepSeek base (and an override equal to its derived route)."""
    bases, route = _OFFICIAL.get(protocol, ((), ""))
    base = _normal(base_url)
    official = {f"https://{OFFICIAL_HOST}{b}" for b in bases}
    if base not in official:
        return False
    if request_url is None:
        return True
    return _normal(request_url) in {b + route for b in official}


def _official(account: _Account) -> bool:
    return is_official(account.protocol, account.base_url, account.request_url)


def _capable(account: _Account) -> bool:
    return account.source == "local" and (_official(account) or account.protocol in ("messages", "responses"))


def _search_on(account: _Account) -> bool:
    if _official(account):
        return account.web_search is not False
    return account.protocol in ("messages", "responses") and account.web_search is True


def _configured(account: _Account, environ: Mapping[str, str]) -> bool:
    # A broker's or extension's model brings no local key, whatever variable it names.
    local = account.source == "local"
    return local and account.enabled and bool((environ.get(account.api_key_env) or "").strip())


def _excluded(account: _Account, access: tuple[str, ...] | None) -> str | None:
    """Why ``account`` may not be a search candidate at all, or None."""
    if account.source != "local":
        return "not_local"
    if access is not None and account.name not in access:
        return "access_denied"
    return None


def _route(account: _Account, model: str) -> SearchRoute:
    if _official(account):
        url = OFFICIAL_MESSAGES_BASE + "/v1/messages"
        return SearchRoute(account.name, "messages", url, model, account.api_key_env)
    protocol: Literal["messages", "responses"] = "messages" if account.protocol == "messages" else "responses"
    url = account.request_url or account.base_url.rstrip("/") + _SUFFIX[protocol]
    return SearchRoute(account.name, protocol, url, model, account.api_key_env)


def _assigned(
    reference: str, accounts: list[_Account], environ: Mapping[str, str], access: tuple[str, ...] | None
) -> Resolution:
    name, slash, model = reference.partition("/")
    if not slash or not name or not model:
        return Resolution("invalid", reason="bad_ref", reference=reference)
    account = next((a for a in accounts if a.name == name), None)
    if account is None:
        return Resolution("invalid", reason="not_found", reference=reference)
    if (why := _excluded(account, access)) is not None:
        return Resolution("invalid", reason=why, reference=reference, skipped=((name, why),))
    if not account.enabled:
        return Resolution("invalid", reason="disabled", reference=reference)
    if not _search_on(account):
        return Resolution("invalid", reason="search_off", reference=reference)
    if account.models is not None and model not in account.models:
        return Resolution("invalid", reason="model_removed", reference=reference)
    if not _configured(account, environ):
        return Resolution("invalid", reason="no_credentials", reference=reference)
    return Resolution("selected", route=_route(account, model), reference=reference)


def resolve(document: Mapping[str, Any], environ: Mapping[str, str]) -> Resolution:
    """The search route for ``document`` (see the module docstring), or why there is none."""
    if not isinstance(document, Mapping):
        raise _bad("document", "must be a table")
    raw_accounts = document.get("accounts", [])
    if not isinstance(raw_accounts, list):
        raise _bad("accounts", "must be a list of tables")
    accounts = [_account(i, raw) for i, raw in enumerate(raw_accounts)]
    names = [a.name for a in accounts]
    if len(set(names)) != len(names):
        raise _bad("accounts", "must have distinct names")
    offline = _flag(document, "offline", "document")
    allowed = document.get("tools_enabled")
    if allowed is not None and (not isinstance(allowed, list) or not all(isinstance(t, str) for t in allowed)):
        raise _bad("tools_enabled", "must be a list of tool names")
    current = _text(document, "current", "document", required=False)
    reference = search_model_of(document)
    access = _access(document)
    if offline:
        return Resolution("none", reason="offline")
    if allowed is not None and "web_search" not in allowed:
        return Resolution("none", reason="not_allowed")
    if reference is not None and reference.strip() not in ("", "auto"):
        return _assigned(reference, accounts, environ, access)
    reasons = [(a, _excluded(a, access)) for a in accounts]  # judged once per account
    skipped = tuple((a.name, why) for a, why in reasons if why is not None)
    usable = [a for a, why in reasons if why is None]
    own = next((a for a in usable if a.name == current), None)
    if own is not None and _configured(own, environ) and _search_on(own):
        return Resolution("selected", route=_route(own, own.model), skipped=skipped)
    if own is not None and _capable(own) and own.web_search is False:
        return Resolution("none", reason="explicit_off", skipped=skipped)
    for account in usable:
        if _configured(account, environ) and _search_on(account):
            return Resolution("selected", route=_route(account, account.model), skipped=skipped)
    return Resolution("none", reason="no_search_account", skipped=skipped)


def _access(document: Mapping[str, Any]) -> tuple[str, ...] | None:
    access = document.get("connection_access")
    if access is None:
        return None
    if not isinstance(access, list) or not all(isinstance(name, str) for name in access):
        raise _bad("connection_access", "must be a list of connection names")
    return tuple(access)


def search_model_of(document: Mapping[str, Any]) -> str | None:
    """``web_search_model`` as the document gives it: top level, or in ``[agent]`` (the seed's
    spelling); giving it in both places is an error, so no reader has to guess which one wins."""
    agent = document.get("agent")
    if agent is not None and not isinstance(agent, Mapping):
        raise _bad("agent", "must be a table")
    top = _text(document, "web_search_model", "document", required=False)
    nested = _text(agent, "web_search_model", "agent", required=False) if agent is not None else None
    if top is not None and nested is not None:
        raise _bad("web_search_model", "is given both at the top level and in [agent]; keep one")
    return nested if nested is not None else top
