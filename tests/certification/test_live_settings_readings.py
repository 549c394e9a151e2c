"""Seed 001's "each operation resolves one settings snapshot, including its endpoint and credentials" (capability
live-settings, check settings.snapshot.per_operation). An outside hunt listed two readings certified although
wrong: settings read once (the credential, the base or the provider selection, at construction or per provider
instance), which every other check's fresh configure hid, and settings read again for each HTTP request of one
operation, so that a retry could pair an old base with a new key. Each wrong reading is made in the reference and
must fail exactly the row that names it; the reference passes every row, and so does a target that rebuilds its
runtime on each save (a variant the seed allows)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import live_settings
from dsweb_ref.certification.targets import InProcessTarget, TargetConfig, ToolPair
from dsweb_ref.providers import _deepseek_http, deepseek_fetch_api, deepseek_official, deepseek_search_api
from dsweb_ref.providers._deepseek_http import SettingsBoundProvider
from dsweb_ref.runtime import build_runtime
from dsweb_ref.settings import Settings

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run

CHECK, TABLE = "settings.snapshot.per_operation", "CASES"
KEY, SWITCH, BASE, IN_FLIGHT, PACED, ACCOUNT = (case.name for case in (live_settings.KEY, live_settings.SWITCH,
                                                                   live_settings.BASE, live_settings.IN_FLIGHT,
                                                                   live_settings.PACED, live_settings.ACCOUNT))


def test_the_reference_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(live_settings, TABLE, CHECK, monkeypatch) == set()


def _read_once(function: str, monkeypatch: pytest.MonkeyPatch, owner: type = SettingsBoundProvider) -> None:
    """``owner.function`` (a snapshot -> value reader) answering, for good, what it read first."""
    original = getattr(SettingsBoundProvider, function)

    def once(self: SettingsBoundProvider, snapshot: Settings) -> Any:
        kept = self.__dict__.setdefault("_read_once", {})
        if function not in kept:
            kept[function] = original(self, snapshot)
        return kept[function]

    monkeypatch.setattr(owner, function, once)


def test_a_credential_read_once_per_provider_fails_the_key_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the credential read once (per process or provider instance): a saved key never reaches a request
    # (the in-flight row's search after its save too), nor does a saved account route's token (hunt T1-5's row)
    _read_once("_credential", monkeypatch)
    assert failing_rows(live_settings, TABLE, CHECK, monkeypatch) == {KEY, IN_FLIGHT, ACCOUNT}


def test_a_base_read_once_per_provider_fails_the_base_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the API base read once: a saved base never reaches a request (the in-flight row's search after too)
    _read_once("_base", monkeypatch)
    assert failing_rows(live_settings, TABLE, CHECK, monkeypatch) == {BASE, IN_FLIGHT}


@pytest.mark.parametrize(("owner", "rows"), [
    # the Fetch API's credential read once fails the account row's Fetch step too (hunt T1-5's row: the saved route's
    # token never reaches the Fetch API either)
    (deepseek_fetch_api.DeepSeekFetchApi, (KEY, ACCOUNT)),
    (deepseek_official.DeepSeekMessagesSearch, (KEY,)),
], ids=["DeepSeekFetchApi", "DeepSeekMessagesSearch"])
def test_a_credential_read_once_by_one_provider_fails_exactly_the_key_row(
    owner: type, rows: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: the key read afresh by the Search API only: the Fetch API (both APIs read one credential) or Messages
    # search still carries the configured key after a save (the review of this check found both certified)
    _read_once("_credential", monkeypatch, owner)
    fails_exactly(live_settings, TABLE, CHECK, rows, monkeypatch)


def test_a_fetch_base_read_once_fails_exactly_the_base_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the base read afresh for search only: the Fetch API request still goes to the configured base
    _read_once("_base", monkeypatch, deepseek_fetch_api.DeepSeekFetchApi)
    fails_exactly(live_settings, TABLE, CHECK, BASE, monkeypatch)


def test_a_switch_off_leaving_fetch_on_the_api_fails_exactly_the_switch_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: saved off, only the search selection restored: web_fetch stays on the Fetch API ("off restores
    # Messages search with local HTTP fetch")
    save = targets._LiveReference.save

    def fetch_stays(self: Any, params: dict[str, Any]) -> ToolPair:
        fetch_before = self.settings.web.fetch_provider
        tools = save(self, params)
        if params.get("provider") == "messages":
            self.settings = self.settings.updated({"web.fetch_provider": fetch_before})
        return tools

    monkeypatch.setattr(targets._LiveReference, "save", fetch_stays)
    fails_exactly(live_settings, TABLE, CHECK, SWITCH, monkeypatch)


def test_a_save_lost_while_a_search_is_under_way_fails_exactly_the_in_flight_row(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a save made while the target is busy answered but dropped (the review found it certified): the
    # search after the held one still carries the configured key to the configured base
    start_call = InProcessTarget.start_call
    busy: set[object] = set()

    def losing(self: InProcessTarget, method: Any, params: dict[str, Any], probe: Any = None) -> Any:
        if method == "settings_save" and busy:
            return start_call(self, method, {}, probe)  # answered {}, nothing saved
        call = start_call(self, method, params, probe)
        if method == "web_search":
            busy.add(call)
            call._task.add_done_callback(lambda _: busy.discard(call))
        return call

    monkeypatch.setattr(InProcessTarget, "start_call", losing)
    fails_exactly(live_settings, TABLE, CHECK, IN_FLIGHT, monkeypatch)


def test_a_save_answered_only_once_the_search_under_way_ends_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """Allowed: the seed does not say when a save is answered; one that waits for the operations under way is
    released after the check's wait and judged like the others (the review found it failed before)."""
    start_call = InProcessTarget.start_call
    busy: set[asyncio.Task[Any]] = set()

    async def after(call: Any) -> Any:
        while busy:
            await asyncio.wait(set(busy))
        return await call._task

    def waiting(self: InProcessTarget, method: Any, params: dict[str, Any], probe: Any = None) -> Any:
        if method == "settings_save" and busy:
            return targets._TaskCall(after(start_call(self, method, params, probe)), probe)
        call = start_call(self, method, params, probe)
        if method == "web_search":
            busy.add(call._task)
            call._task.add_done_callback(busy.discard)
        return call

    monkeypatch.setattr(InProcessTarget, "start_call", waiting)
    assert failing_rows(live_settings, TABLE, CHECK, monkeypatch) == set()


def test_a_selection_read_at_construction_fails_the_switch_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the web service given the selection the settings held when it was built, not a source read per call
    patch_reading(__import__("dsweb_ref.runtime", fromlist=["build_runtime"]), "build_runtime",
                  "WebService(lambda: settings().provider_selection())", "WebService(settings().provider_selection())",
                  monkeypatch, targets)
    fails_exactly(live_settings, TABLE, CHECK, SWITCH, monkeypatch)


def test_a_switch_moving_search_only_fails_the_switch_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a save of the switch that writes web.searchProvider alone: web_fetch stays on the local fetcher
    # (the page is a loopback URL, which the local fetcher refuses: nothing leaves the machine)
    save = targets._LiveReference.save

    def search_only(self: Any, params: dict[str, Any]) -> ToolPair:
        fetch_before = self.settings.web.fetch_provider
        tools = save(self, params)
        self.settings = self.settings.updated({"web.fetch_provider": fetch_before})
        return tools

    monkeypatch.setattr(targets._LiveReference, "save", search_only)
    fails_exactly(live_settings, TABLE, CHECK, SWITCH, monkeypatch)


# The exchange of call_tools_api, sent with a snapshot read again at each attempt (the wrong reading) instead of
# the key and base the operation resolved at its start.
PER_OPERATION = "return await provider._post(base, key, conf.timeout_s, url, body, headers, remaining_s=remaining_s)"
PER_REQUEST = """now = provider._settings()
        key_now, base_now = provider._credential(now), provider._base(now)
        return await provider._post(base_now, key_now, conf.timeout_s, f"{base_now}/{route}", body,
                                    {**headers, "Authorization": f"Bearer {key_now}"}, remaining_s=remaining_s)"""


def test_settings_read_per_request_fail_the_in_flight_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: each HTTP request of one operation resolving the settings anew: the retry after a save pairs the
    # saved key and base with a search the configured ones started
    patch_reading(_deepseek_http, "call_tools_api", PER_OPERATION, PER_REQUEST, monkeypatch,
                  deepseek_search_api, deepseek_fetch_api)
    # The paced row's second query goes out after the save too: its one request mixes the two snapshots.
    assert failing_rows(live_settings, TABLE, CHECK, monkeypatch) == {IN_FLIGHT, PACED}


def test_a_target_that_rebuilds_its_runtime_on_each_save_is_certified() -> None:
    """Allowed: a save that builds new providers and clients from the saved settings (an operation under way keeps
    the old ones, and with them its snapshot)."""

    def build(config: TargetConfig) -> ToolPair:
        settings = targets.reference_settings(config)
        runtime = build_runtime(lambda: settings, environ=targets.reference_environ(config))

        def rebuilt(params: dict[str, Any]) -> ToolPair:
            return build(config.saved(params))

        return ToolPair(search=runtime.search_tool(), fetch=runtime.fetch_tool(), live=rebuilt)

    target = InProcessTarget(build, name="dsweb_ref+rebuilt-on-save", version="test")
    (result,) = run(target, only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason


def test_a_target_that_closes_its_old_clients_on_save_is_certified() -> None:
    """Allowed: a save that closes the clients it replaces, so a search under way may fail (the seed does not say a
    save spares it); what such a search sent is still judged."""
    closing: set[asyncio.Task[None]] = set()

    def build(config: TargetConfig) -> ToolPair:
        settings = targets.reference_settings(config)
        runtime = build_runtime(lambda: settings, environ=targets.reference_environ(config))

        def rebuilt(params: dict[str, Any]) -> ToolPair:
            task = asyncio.get_running_loop().create_task(runtime.aclose())
            closing.add(task)
            task.add_done_callback(closing.discard)
            return build(config.saved(params))

        return ToolPair(search=runtime.search_tool(), fetch=runtime.fetch_tool(), live=rebuilt)

    target = InProcessTarget(build, name="dsweb_ref+closed-on-save", version="test")
    (result,) = run(target, only=[CHECK]).results
    assert result.outcome.value == "passed", result.reason


def test_without_the_capability_the_check_is_skipped() -> None:
    capabilities = tuple(c for c in targets.CAPABILITIES if c != "live-settings")
    target = InProcessTarget(targets._Reference(), name="dsweb_ref", version="test", capabilities=capabilities)
    (result,) = run(target, only=[CHECK]).results
    assert result.outcome.value == "skipped" and "live-settings" in result.reason


def test_a_response_with_both_result_and_error_is_a_protocol_error() -> None:
    # catches: an answer carrying an error beside result {} taken for a successful save (the diff review's find); the
    # same for any call: one of result, error or cancelled
    for method in ("settings_save", "web_search"):
        for extra in ({"error": {"code": "WEB_CONFIG_INVALID", "message": "no"}}, {"cancelled": True}):
            message = {"id": 1, "result": {} if method == "settings_save" else {"text": "x"}, **extra}
            with pytest.raises(targets.TargetError):
                targets._outcome_of(targets._Arrival(message, 0.0), method)
    assert targets._outcome_of(targets._Arrival({"id": 1, "result": {}}, 0.0), "settings_save").value == {}


def test_a_save_answered_with_values_is_reported_by_their_keys_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: a non-{} answer reported as "success" (no hint what came), or quoted with its values (a key among them)
    start_call = InProcessTarget.start_call

    def echoing(self: InProcessTarget, method: Any, params: dict[str, Any], probe: Any = None) -> Any:
        if method == "settings_save":
            async def answer() -> Any:
                return targets.ToolResult(text="", value={"api_key": params.get("api_key", "")})
            return targets._TaskCall(answer(), probe)
        return start_call(self, method, params, probe)

    monkeypatch.setattr(InProcessTarget, "start_call", echoing)
    (result,) = run(targets.reference_target(), only=[CHECK]).results
    assert result.outcome.value == "failed" and "answered a result of ['api_key']" in result.reason, result.reason
    assert live_settings.SAVED_KEY[-8:] not in result.reason
