"""Liveness bounds on a busy machine (issue 24 item 1): "every search of the batch reaches the emulator
within 5 s" and "a call answers within 20 s" are not timing claims (a wrong target misses them by waiting
forever), so one that runs out while the machine is busy is given its time once more before the target
is failed; on a quiet machine the first bound decides, as before.

A run of the reference beside two CPU hogs, a second certify run and two mutation workers failed
`search.batch.race` ("slow query: only 0 of 1 upstream searches were in flight at once") and
`search.batch.all_or_nothing` ("the call did not answer within 20s"). That second failure had a cause of
its own, found later and fixed in the check (tests/certification/test_stray_requests.py): a request the
target aborted before the emulator read it took the next case's fault."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from dsweb_ref.certification import calibration, checks
from dsweb_ref.certification.checks import batch
from dsweb_ref.certification.checks._base import CheckFailed
from dsweb_ref.certification.model import Outcome
from dsweb_ref.certification.sandbox import ProxyTraps
from dsweb_ref.certification.suite import _run_protocol, _Shared, emulator_account
from dsweb_ref.certification.targets import (
    AdapterTarget,
    CallStalled,
    TargetConfig,
    TargetError,
    _Arrival,
    _TaskCall,
    reference_target,
)
from dsweb_ref.emulator import Emulator, Gate, Hold
from dsweb_ref.emulator.server import DEFAULT_API_KEY
from dsweb_ref.providers._client_pool import close_in_full
from dsweb_ref.tools import ToolResult


class LateGate:
    """A gate whose parked requests arrive only after ``late`` timed-out waits."""

    def __init__(self, late: int) -> None:
        self.late = late
        self.waits = 0
        self.held = 0

    def wait_held(self, count: int, timeout: float) -> None:
        self.waits += 1
        if self.waits <= self.late:
            raise TimeoutError
        self.held = count


class Ctx:
    async def blocking(self, fn: Any, *args: Any) -> Any:
        return fn(*args)


def busy_is(monkeypatch: pytest.MonkeyPatch, module: Any, value: bool) -> list[int]:
    asked: list[int] = []

    async def probe() -> bool:
        asked.append(1)
        return value

    monkeypatch.setattr(module, "busy", probe)
    return asked


@pytest.mark.parametrize(
    ("late", "is_busy", "fails", "waits"),
    [
        (0, False, False, 1),  # catches: nothing - in time on the first bound
        (1, False, True, 1),  # catches: waiting longer on a quiet machine (a sequential batch fails in 5 s)
        (1, True, False, 2),  # catches: failing a target the busy machine held up once
        (2, True, True, 2),  # catches: waiting without end when the searches never all arrive
    ],
)
def test_searches_held_up_on_a_busy_machine_get_the_bound_once_more(
    monkeypatch: pytest.MonkeyPatch, late: int, is_busy: bool, fails: bool, waits: int
) -> None:
    busy_is(monkeypatch, calibration, is_busy)
    gate = LateGate(late)
    call = batch.wait_held(Ctx(), gate, 2, "slow query")  # type: ignore[arg-type]
    if fails:
        with pytest.raises(CheckFailed, match=rf"only 0 of 2 upstream searches .*waited {waits * batch.HELD_BOUND:g}s"):
            asyncio.run(call)
    else:
        asyncio.run(call)
    assert gate.waits == waits


class ArrivingAtTheBound:
    """A gate whose wait runs out just as ``arrived`` requests are parked (the last came a moment late)."""

    def __init__(self, arrived: int) -> None:
        self.arrived = arrived
        self.held = 0

    def wait_held(self, count: int, timeout: float) -> None:
        self.held = self.arrived
        raise TimeoutError


@pytest.mark.parametrize(("arrived", "fails"), [
    (2, False),  # catches: failing a target whose searches were all parked together, the last one a moment late
    (1, True),  # catches: passing a target that never had both searches in flight at once
])
def test_searches_parked_together_just_past_the_bound_pass(
    monkeypatch: pytest.MonkeyPatch, arrived: int, fails: bool
) -> None:
    # A fresh-clone CI run failed the reference with "only 4 of 4 upstream searches were in flight at once".
    busy_is(monkeypatch, calibration, False)
    call = batch.wait_held(Ctx(), ArrivingAtTheBound(arrived), 2, "late batch")  # type: ignore[arg-type]
    if fails:
        with pytest.raises(CheckFailed, match=r"only 1 of 2 upstream searches"):
            asyncio.run(call)
    else:
        asyncio.run(call)


def test_siblings_that_are_never_answered_fail_the_check_rather_than_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the liveness bound's TimeoutError escaping as an error (the target's doing reported as the
    # suite's), where wait_held beside it fails the check
    busy_is(monkeypatch, calibration, False)

    class Log:
        def wait_until(self, enough: Any, bound: float, what: str) -> None:
            raise TimeoutError(what)

    class Emu:
        log = Log()

    class AnswerCtx(Ctx):
        emu = Emu()

        def records(self) -> list[Any]:
            return []

    with pytest.raises(CheckFailed, match=rf"siblings answered: 0 of 2 upstream searches answered "
                                          rf"\(waited {batch.HELD_BOUND:g}s\)"):
        asyncio.run(batch.answered(AnswerCtx(), 2, "siblings answered"))  # type: ignore[arg-type]


@pytest.mark.parametrize(("is_busy", "answers"), [(True, True), (False, False)])
def test_an_in_process_call_answering_late_on_a_busy_machine_is_waited_for(
    monkeypatch: pytest.MonkeyPatch, is_busy: bool, answers: bool
) -> None:
    async def scenario() -> str:
        finish = asyncio.Event()

        async def tool() -> ToolResult:
            await finish.wait()
            return ToolResult(text="ok")

        async def probe() -> bool:
            finish.set()  # the call answers while the bound is given once more
            return is_busy

        monkeypatch.setattr(calibration, "busy", probe)
        call = _TaskCall(tool())
        try:
            return (await call.outcome(0.05)).text or ""
        except TargetError as exc:
            return str(exc)
        finally:
            finish.set()

    got = asyncio.run(scenario())
    assert (got == "ok") is answers
    if not answers:
        assert got.startswith("the call did not answer within 0.05s")


def test_a_call_that_never_answers_names_where_the_implementation_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    busy_is(monkeypatch, calibration, False)

    async def scenario() -> str:
        never = asyncio.Event()

        async def close() -> None:
            await never.wait()

        async def tool() -> ToolResult:
            await close_in_full(close)
            return ToolResult(text="never")

        call = _TaskCall(tool())
        try:
            await call.outcome(0.05)
        except TargetError as exc:
            return str(exc)
        finally:
            never.set()
        return ""

    message = asyncio.run(scenario())
    assert "tasks waiting at: " in message and "providers/_client_pool.py" in message


@pytest.mark.parametrize(("patient", "is_busy", "answers", "probed"),
                         [(True, True, True, 1), (True, False, False, 1), (False, True, False, 0)])
def test_an_adapter_answer_late_on_a_busy_machine_is_waited_for_except_at_start_and_shutdown(
    monkeypatch: pytest.MonkeyPatch, patient: bool, is_busy: bool, answers: bool, probed: int
) -> None:
    async def scenario() -> tuple[bool, int]:
        future: asyncio.Future[_Arrival] = asyncio.get_running_loop().create_future()
        asked: list[int] = []

        async def probe() -> bool:
            asked.append(1)
            future.set_result(_Arrival({"id": 7, "result": {"text": "ok"}}, 0.0))
            return is_busy

        monkeypatch.setattr(calibration, "busy", probe)
        target = AdapterTarget("python -c pass")
        try:
            await target.wait_response(7, future, 0.05, patient=patient)
        except TargetError as exc:
            assert "did not answer request 7 within" in str(exc)
            return False, len(asked)
        return True, len(asked)

    assert asyncio.run(scenario()) == (answers, probed)


def test_a_loop_held_up_during_the_probe_reads_as_busy() -> None:
    """The probe is the suite loop's lag: a loop that cannot run for 50 ms (as on a starved runner)."""

    async def scenario() -> bool:
        async def hold_up() -> None:
            await asyncio.sleep(0.05)
            time.sleep(0.05)  # noqa: ASYNC251 - the point: the loop runs nothing else meanwhile

        holding = asyncio.ensure_future(hold_up())
        found = await calibration.busy()
        await holding
        return found

    assert asyncio.run(scenario()) is True
    assert calibration.BUSY_LAG < 0.05


@pytest.mark.parametrize(("is_busy", "waits"), [(False, [1.0]), (True, [1.0, 1.0])])
def test_patiently_gives_a_bound_once_more_only_when_busy(
    monkeypatch: pytest.MonkeyPatch, is_busy: bool, waits: list[float]
) -> None:
    """Every liveness wait shares it: wait_held, the quiescence wait (IDLE_BOUND), the answered-count
    waits, and the in-process and adapter call answers."""
    busy_is(monkeypatch, calibration, is_busy)
    given: list[float] = []

    def never(bound: float) -> None:
        given.append(bound)
        raise TimeoutError

    async def wait(bound: float) -> None:
        never(bound)

    with pytest.raises(TimeoutError) as caught:
        asyncio.run(calibration.patiently(wait, 1.0))
    assert given == waits and caught.value.args[0] == sum(waits)


# --- what a stalled call's report says about the emulator (the server's side of the wait) -------------


def _post_search(emu: Emulator) -> threading.Thread:
    def send() -> None:
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(emu.tools_base + "/search", json={"query": "stall"}, timeout=30,
                       headers={"authorization": f"Bearer {DEFAULT_API_KEY}"})

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    return sender


def test_the_emulator_account_names_a_request_it_holds_and_an_idle_server() -> None:
    gate = Gate("stall")
    with Emulator() as emu:
        emu.inject("search", Hold(gate, timeout=30))
        sender = _post_search(emu)
        gate.wait_held(1)
        account = emulator_account(emu)
        gate.release()
        sender.join(10)
    assert account.startswith("the emulator: 1 request(s) in progress (search ")
    assert "s unanswered), 1 connection(s) open" in account
    # Parked on its loop, the server thread itself waits in its selector: the server is not stuck.
    assert "emulator/server.py" in account and "selectors.py" in account


def test_the_emulator_account_names_where_a_blocked_server_thread_is() -> None:
    with Emulator() as emu:
        with emu.log._cond:  # the server's next log write blocks: its thread stuck in the emulator's code
            sender = _post_search(emu)
            deadline = time.monotonic() + 10
            while "emulator/log.py" not in (account := emulator_account(emu)) and time.monotonic() < deadline:
                time.sleep(0.01)  # polling for the stack only: no ordering event exists inside a held lock
            # From another thread (as a report is made) the held log costs a bounded wait, not a hang.
            with ThreadPoolExecutor(1) as other:
                elsewhere = other.submit(emulator_account, emu).result(timeout=10)
        sender.join(10)
    assert "its thread at emulator/log.py" in account and "threading.py" in account
    assert elsewhere.startswith("the emulator: its request log stayed locked, its thread at emulator/log.py")


def _run_stubbed(run: Any, limit: float = 10.0) -> tuple[Any, str]:
    """One protocol run of a check whose body is ``run``, against the reference and a fresh emulator."""

    async def scenario() -> tuple[Any, str]:
        spec = dataclasses.replace(next(s for s in checks.all_checks() if s.check.id == "search.text.snippets"),
                                   run=run)
        shared = _Shared(ProxyTraps(), ThreadPoolExecutor(max_workers=2))
        target = reference_target()
        try:
            outcome, reason, _ = await _run_protocol(spec, target, await target.hello(), "api", limit, shared)
        finally:
            await target.close()
            shared.proxies.close()
            shared.executor.shutdown()
        return outcome, reason

    return asyncio.run(scenario())


def test_a_check_past_its_limit_reports_the_emulator_account() -> None:
    async def never(ctx: Any) -> None:
        await asyncio.Event().wait()

    outcome, reason = _run_stubbed(never, limit=0.05)
    assert outcome is Outcome.ERROR
    assert reason.startswith("check did not finish within 0.05s; the emulator: 0 request(s) in progress, ")


def test_a_stalled_call_in_a_check_reports_the_emulator_account() -> None:
    async def stalled(ctx: Any) -> None:
        raise CallStalled("the call did not answer within 20s; tasks waiting at: somewhere")

    outcome, reason = _run_stubbed(stalled)
    assert outcome is Outcome.ERROR
    assert reason.startswith("target error: the call did not answer within 20s; tasks waiting at: somewhere; "
                             "the emulator: 0 request(s) in progress, 0 connection(s) open, its thread at ")


def test_a_stalled_reference_call_names_the_library_wait_below_the_implementation() -> None:
    """An answer the emulator holds: the report reads "waiting for the server's answer" (httpcore's read),
    not "waiting for a pooled connection", and the emulator's account shows it holds the request."""
    gate = Gate("held")

    async def scenario() -> tuple[str, str]:
        with Emulator() as emu:
            emu.inject("search", Hold(gate, timeout=30))
            target = reference_target()
            await target.configure(TargetConfig(messages_base=emu.messages_base, tools_base=emu.tools_base,
                                                api_key=DEFAULT_API_KEY, provider="api", openai_base=emu.openai_base))
            call = target.start_call("web_search", {"arguments": {"queries": ["held"]}})
            await asyncio.get_running_loop().run_in_executor(None, gate.wait_held, 1)
            try:
                await call.outcome(0.05)
                message = ""
            except CallStalled as exc:
                message = str(exc)
            account = emulator_account(emu)
            gate.release()
            await call.outcome(10)
            await target.close()
        return message, account

    message, account = asyncio.run(scenario())
    assert re.search(r"providers/_client_pool\.py:\d+ handle_async_request > httpcore/_backends/anyio\.py:\d+ read > ",
                     message), message
    assert "(search " in account and "unanswered" in account
