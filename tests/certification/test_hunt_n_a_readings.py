"""An outside hunt (N-A) over seeds 000 and 001: wrong readings dsweb certify passed. Each is made in the reference
and must fail the row that names it; the reference passes every row.

N-A1. Seed 001's switch "writes web.searchProvider and web.fetchProvider together: on selects both APIs, and off
restores Messages search with local HTTP fetch". Turning the switch off reset the search selection only, leaving
web_fetch on the Fetch API. The switch row of settings.snapshot.per_operation saves it on and then off again, but the
reference target rebuilt its settings from the shipped defaults on every save, so its own switch code was never
asked to undo what turning the switch on wrote: a save now writes over the snapshot in use, as a user's save does.

N-A2. Seed 001: "Each operation resolves one settings snapshot, including its endpoint and credentials." A
queue-style limiter that builds the request when its pacing slot comes read the base and key then, the body (its
count) at the operation's start: a query waiting for its slot across a save went out with the saved key to the saved
base and the configured count. Only a retry was ever held across a save; a new row holds a paced query's wait.

N-A4. Seed 001 asks for cancellation-aware scheduling. A pacer that keeps the slots a cancelled call's queries
waited for sends nothing after the cancel (what search.api.pacing.cancel judges) but makes the next search wait for
slots nobody uses, a spacing or more after its own slot (or refuses it for want of one). A new check,
search.api.pacing.cancel_slots, searches right after a 4-query call at 2 QPS is cancelled and times its start against
a control run of the same pacer (a call not cancelled, then a search).

N-A6. The retry rule (issue 12's protocol: a Retry-After is never cut to the target's own cap) was judged on a
delay-seconds header only: a target honouring long delay-seconds but cutting an HTTP date beyond its cap to the cap
retried before the time the server named. A new search.api.retry.waits row sends the date form 13 s ahead."""

from __future__ import annotations

import pytest

from dsweb_ref import settings as settings_module
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import live_settings, scheduling
from dsweb_ref.providers import _deepseek_http, _scheduler, deepseek_fetch_api, deepseek_search_api
from dsweb_ref.providers._scheduler import AccountScheduler
from dsweb_ref.settings import Settings

from ._readings import failing_rows, keep_rows, patch_reading

LIVE_CHECK, LIVE_TABLE = "settings.snapshot.per_operation", "CASES"
SWITCH, PACED = live_settings.SWITCH.name, live_settings.PACED.name
SLOTS_CHECK, SLOTS_TABLE = "search.api.pacing.cancel_slots", "SLOTS_BACK_CASES"
(SLOTS_BACK,) = (c.name for c in scheduling.SLOTS_BACK_CASES)

# N-A1: the switch turned off resets the search selection only.
SWITCH_RIGHT = """            search, fetch = API_SELECTION if layer[_SWITCH] else MESSAGES_SELECTION
            merged[_SEARCH], merged[_FETCH] = search, fetch"""
SWITCH_SEARCH_ONLY = """            if layer[_SWITCH]:
                merged[_SEARCH], merged[_FETCH] = API_SELECTION
            else:
                merged[_SEARCH] = MESSAGES_SELECTION[0]"""

# N-A2: base and key resolved when the request first goes out (after the slot wait), the body at the start.
SEND_RIGHT = """    async def send(remaining_s: float) -> Reply:
        return await provider._post(base, key, conf.timeout_s, url, body, headers, remaining_s=remaining_s)"""
SEND_AT_SLOT = """    resolved: list[tuple[str, str, dict[str, str]]] = []

    async def send(remaining_s: float) -> Reply:
        if not resolved:
            now = provider._settings()
            fresh, where = provider._credential(now), provider._base(now)
            resolved.append((where, fresh, {**headers, "Authorization": f"Bearer {fresh}"}))
        where, fresh, now_headers = resolved[0]
        return await provider._post(where, fresh, conf.timeout_s, f"{where}/{route}", body, now_headers,
                                    remaining_s=remaining_s)"""


def test_the_switch_turned_off_restores_local_fetch_in_the_reference() -> None:
    off = Settings().with_new_search_api(True).with_new_search_api(False).web
    assert (off.search_provider, off.fetch_provider) == settings_module.MESSAGES_SELECTION


def test_the_switch_turned_off_for_search_only_fails_the_switch_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: N-A1, off resets web.searchProvider alone (web_fetch stays on the Fetch API after the switch is off)
    patch_reading(settings_module, "_build", SWITCH_RIGHT, SWITCH_SEARCH_ONLY, monkeypatch)
    assert Settings().with_new_search_api(True).with_new_search_api(False).web.fetch_provider != "http"
    assert failing_rows(live_settings, LIVE_TABLE, LIVE_CHECK, monkeypatch) == {SWITCH}


def test_endpoint_and_key_resolved_at_the_slot_fail_the_paced_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: N-A2, a query that waited for its pacing slot across a save mixes two snapshots (saved key and base,
    # configured count)
    patch_reading(_deepseek_http, "call_tools_api", SEND_RIGHT, SEND_AT_SLOT, monkeypatch,
                  deepseek_search_api, deepseek_fetch_api)
    assert failing_rows(live_settings, LIVE_TABLE, LIVE_CHECK, monkeypatch) == {PACED}


# N-A4: a slot waited for by a query that is cancelled is never handed back.
GIVE_BACK = """    except BaseException:  # cancelled while waiting: the slot was never used
        pacer.give_back(slot)
        raise"""
KEPT = """    except BaseException:  # cancelled while waiting: the slot is kept
        raise"""
EARLIEST_KEPT = """    except BaseException:  # cancelled while waiting: the earliest slot still to come is kept
        if slot != min((h for h in pacer._held if h > self._clock.now()), default=None):
            pacer.give_back(slot)
        raise"""


def test_the_reference_passes_the_slots_back_check(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(scheduling, SLOTS_TABLE, SLOTS_CHECK, monkeypatch) == set()


def test_slots_kept_by_cancelled_queries_fail_the_slots_back_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: N-A4, a cancelled call's waiting queries keep their slots: the next search waits for all three
    patch_reading(AccountScheduler, "_slot", GIVE_BACK, KEPT, monkeypatch)
    assert failing_rows(scheduling, SLOTS_TABLE, SLOTS_CHECK, monkeypatch) == {SLOTS_BACK}
    # nothing is sent after the cancel: the cancel check's rows pass it, as every other check did
    assert failing_rows(scheduling, "PACING_CANCEL_CASES", "search.api.pacing.cancel", monkeypatch) == set()


def test_the_earliest_cancelled_slot_kept_fails_the_slots_back_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: only the earliest of the cancelled slots kept (one spacing late, the least a kept slot costs)
    patch_reading(AccountScheduler, "_slot", GIVE_BACK, EARLIEST_KEPT, monkeypatch)
    assert failing_rows(scheduling, SLOTS_TABLE, SLOTS_CHECK, monkeypatch) == {SLOTS_BACK}


def test_a_pacer_spacing_twice_the_interval_passes_the_slots_back_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Allowed: a pacer more careful than the rate (its searches two intervals apart); the run's control meets it
    too (review of N-A4: a bound on the spacing itself failed it)."""
    monkeypatch.setattr(_scheduler, "spacing", lambda qps: 2.0 / qps)
    assert failing_rows(scheduling, SLOTS_TABLE, SLOTS_CHECK, monkeypatch) == set()


# N-A6: a Retry-After date past the cap waited as the cap; delay-seconds still honoured.
ASKED = """        asked = retry_after_seconds(reply.headers, clock.wall())
"""
DATE_CUT = """        asked = retry_after_seconds(reply.headers, clock.wall())
        if asked is not None and not _DELAY_SECONDS.fullmatch((reply.headers.get("retry-after") or "").strip()):
            asked = min(asked, policy.max_wait_s)
"""
WAITS_CHECK, WAITS_TABLE = "search.api.retry.waits", "RETRY_CASES"
DATE_BEYOND = next(c.name for c in scheduling.RETRY_CASES if c.params.get("fault") == "date-beyond")
SECONDS_BEYOND = next(c.name for c in scheduling.RETRY_CASES if c.params.get("beyond") == 12)
BESIDE = tuple(c.name for c in scheduling.RETRY_CASES if c.params.get("fault") in ("seconds", "date"))


@pytest.mark.slow  # the wrong reading's 10 s waits, in each of the check's re-runs
def test_a_date_beyond_the_cap_cut_to_the_cap_fails_the_date_beyond_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: N-A6, a Retry-After date beyond the cap cut to the cap: retried before the named time
    patch_reading(AccountScheduler, "run", ASKED, DATE_CUT, monkeypatch)
    monkeypatch.setattr(scheduling, "RETRY_SEQUENCES", ())
    # The two rows beyond the cap (the seconds one keeps passing: the reading cuts dates only) and two of the
    # Retry-After block's rows beside them, in one run each.
    keep_rows(scheduling, WAITS_TABLE, (DATE_BEYOND, SECONDS_BEYOND, *BESIDE), monkeypatch)
    assert failing_rows(scheduling, WAITS_TABLE, WAITS_CHECK, monkeypatch) == {DATE_BEYOND}


def test_a_save_over_the_snapshot_in_use_clears_pacing_and_localization_saved_as_null() -> None:
    # The N-A1 fix writes a save over the settings in use: a null pacing rate or localization (the protocol's "none")
    # must switch off what the configure switched on, as a build from the shipped defaults did (review of N-A1).
    on = targets.TargetConfig("http://127.0.0.1:9/anthropic", "http://127.0.0.1:9/v1/tools", "dsweb-emulator-key",
                              pacing_qps=1.0, localization="203.0.113.7")
    current = targets.reference_settings(on)
    assert current.deepseek_api.pacing and current.deepseek_api.localization == "203.0.113.7"
    saved = targets.reference_settings(on.saved({"pacing_qps": None, "localization": None}), current)
    assert (saved.deepseek_api.pacing, saved.deepseek_api.localization) == (False, "")
    given = targets.TargetConfig.from_json({"defaults": True, "pacing_qps": 1.0, "messages_base": on.messages_base,
                                            "tools_base": on.tools_base, "api_key": on.api_key})
    kept = targets.reference_settings(given.saved({"api_key": "dsweb-emulator-key-saved-0002"}),
                                      targets.reference_settings(given))
    assert kept.deepseek_api.pacing  # a key the save does not give keeps its value
