"""Point the reference implementation at given bases with a given key: the one settings builder
behind ``dsweb search/fetch --emulator``, the in-process certification target, the probes and the
example adapter.

The key (and, on the account route, the account token) reaches the providers through
:data:`KEY_ENV` (:data:`ACCOUNT_ENV`) in a private mapping (:func:`credential_environ`), never
through the real environment: a user's own ``DEEPSEEK_API_KEY`` is never read, nor sent to the
emulator or to an endpoint under test.

Deliberately light (settings only): ``dsweb`` imports it lazily, and it must not pull in the
emulator, vcrpy or the suite.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..settings import Settings

__all__ = ["ACCOUNT_ENV", "KEY_ENV", "credential_environ", "settings_for_bases"]

KEY_ENV = "DSWEB_REFERENCE_KEY"  # the variable the providers read the key from, in a private mapping
ACCOUNT_ENV = "DSWEB_REFERENCE_ACCOUNT_TOKEN"  # likewise, for the account token (credentials.auth = "account")


def settings_for_bases(
    messages_base: str | None,
    tools_base: str | None,
    *,
    settings: Settings | None = None,
    timeout_s: float | None = None,
    new_api: bool | None = None,
    overrides: Mapping[str, object] | None = None,
) -> Settings:
    """``settings`` (default: ``Settings()``) pointed at the given bases (None: left as is), with the
    credential read from :data:`KEY_ENV` / :data:`ACCOUNT_ENV` on the API-key route.

    ``timeout_s`` sets both DeepSeek timeouts (None: keep them); ``new_api`` turns the new Web Search
    API on or off (None: keep it); ``overrides`` are setting values applied last."""
    values: dict[str, object] = {
        "credentials.auth": "api_key",
        "credentials.api_key_env": KEY_ENV,
        "credentials.account_token_env": ACCOUNT_ENV,
    }
    if timeout_s is not None:
        values["deepseek_messages.timeout_s"] = float(timeout_s)
        values["deepseek_api.timeout_s"] = float(timeout_s)
    if messages_base is not None:
        values["deepseek_messages.base_url"] = messages_base
    if tools_base is not None:
        values["deepseek_api.base_url"] = tools_base
    values.update(overrides or {})
    result = (settings if settings is not None else Settings()).updated(values)
    return result if new_api is None else result.with_new_search_api(new_api)


def credential_environ(api_key: str, account_token: str | None = None) -> dict[str, str]:
    """The private environment the providers read the credentials from (pass as ``environ=``)."""
    environ = {KEY_ENV: api_key}
    if account_token:
        environ[ACCOUNT_ENV] = account_token
    return environ
