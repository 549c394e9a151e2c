"""Seed 001's "the retained Messages path explicitly sends thinking: {type: 'disabled'} and records that same body
before dispatch" (capability request-record, check search.messages.recorded). An outside hunt found two wrong
readings the whole suite certified, since no check read what an implementation records: thinking added to the
payload after the request is recorded (M13: the record lacks it, the wire has it), and the request recorded after
the reply (M14: a request in flight, or one whose dispatch fails, has no record). Each is made in the reference and
must fail exactly the rows that name it; the reference passes every row, and so do targets that record what the seed
leaves open (a re-serialised body, the Messages requests alone, extra records)."""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from dsweb_ref._context import OutgoingRequest
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import request_record
from dsweb_ref.certification.targets import InProcessTarget
from dsweb_ref.providers import deepseek_official
from dsweb_ref.providers.deepseek_official import DeepSeekMessagesSearch

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run

CHECK, TABLE = "search.messages.recorded", "CASES"
SAME_BODY, HELD, FAILED_DISPATCH = (case.name for case in request_record.CASES)

SOURCE = textwrap.dedent(inspect.getsource(DeepSeekMessagesSearch.search))
RECORD = '    ctx.record(OutgoingRequest(provider=PROVIDER_ID, method="POST", url=url, body=body, json=payload))\n'
REPLY = "    reply = await self._post(base, key, conf.timeout_s, url, body, headers)\n"
THINKING = '        "thinking": {"type": "disabled"},\n'


def _span(first: str, last: str) -> str:
    """The reference's text of DeepSeekMessagesSearch.search from ``first`` to the end of ``last``."""
    start = SOURCE.index(first)
    return SOURCE[start : SOURCE.index(last, start) + len(last)]


def test_the_reference_passes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == set()


def test_thinking_added_after_the_record_fails_exactly_the_same_body_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (M13): the payload recorded without thinking, which is added (and the body encoded again) only
    # after the record: the emulator receives thinking disabled, the record lacks it
    right = _span(THINKING, RECORD)
    wrong = right.replace(THINKING, "").replace("json=payload))", "json=dict(payload)))") + (
        '    payload["thinking"] = {"type": "disabled"}\n'
        "    body = encode_json(payload)\n"
    )
    patch_reading(DeepSeekMessagesSearch, "search", right, wrong, monkeypatch)
    fails_exactly(request_record, TABLE, CHECK, SAME_BODY, monkeypatch)


def test_the_request_recorded_after_the_reply_fails_the_held_and_failed_dispatch_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (M14): ctx.record moved below the exchange: no record while the request is in flight, none when its
    # dispatch fails (the same body once the reply came: same-body passes)
    right = _span(RECORD, REPLY)
    patch_reading(DeepSeekMessagesSearch, "search", right, right.replace(RECORD, "") + RECORD, monkeypatch)
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == {HELD, FAILED_DISPATCH}


def test_the_request_recorded_in_a_finally_fails_exactly_the_held_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the record written once the exchange ends, whatever its end (a finally): a failed dispatch leaves
    # one, but a request in flight has none yet
    right = _span(RECORD, REPLY)
    wrong = right.replace(RECORD, "").replace(REPLY, (
        "    try:\n"
        "        reply = await self._post(base, key, conf.timeout_s, url, body, headers)\n"
        "    finally:\n"
        "    " + RECORD
    ))
    patch_reading(DeepSeekMessagesSearch, "search", right, wrong, monkeypatch)
    fails_exactly(request_record, TABLE, CHECK, HELD, monkeypatch)


def _recording(monkeypatch: pytest.MonkeyPatch, bend: Callable[[OutgoingRequest], list[OutgoingRequest]]) -> None:
    """The in-process target recording, for each request its tools record, what ``bend`` makes of it."""

    class Bent(list[OutgoingRequest]):
        def append(self, request: OutgoingRequest) -> None:
            self.extend(bend(request))

    configure = InProcessTarget.configure

    async def configured(self: InProcessTarget, config: Any) -> None:
        await configure(self, config)
        self._records = Bent()

    monkeypatch.setattr(InProcessTarget, "configure", configured)


def test_a_target_recording_the_payload_re_serialised_and_more_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """Allowed: the recorded body is the payload object serialised anew (other spacing, ASCII escapes, keys
    sorted), beside an extra record of each request (an event of its own); the seed asks for the same body,
    which parsed alike is."""

    def reserialised(request: OutgoingRequest) -> list[OutgoingRequest]:
        if request.json is None:
            return [request]
        body = json.dumps(request.json, indent=2, sort_keys=True, ensure_ascii=True).encode()
        event = OutgoingRequest("event", "LOG", "about:request", b'{"event": "request"}')
        return [OutgoingRequest(request.provider, request.method, request.url, body, request.json), event]

    _recording(monkeypatch, reserialised)
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == set()


def test_a_target_recording_only_the_messages_requests_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """Allowed: the Search and Fetch API requests left out of the record (the seed speaks of the Messages path)."""
    _recording(monkeypatch, lambda r: [r] if r.provider == deepseek_official.PROVIDER_ID else [])
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == set()


def test_without_the_capability_the_check_is_skipped() -> None:
    capabilities = tuple(c for c in targets.CAPABILITIES if c != "request-record")
    target = InProcessTarget(targets._Reference(), name="dsweb_ref", version="test", capabilities=capabilities)
    (result,) = run(target, only=[CHECK]).results
    assert result.outcome.value == "skipped" and "request-record" in result.reason
