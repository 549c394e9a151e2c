"""Seed 001's "the retained Messages path explicitly sends thinking: {type: 'disabled'} and records that same body
before dispatch" (capability request-record, check search.messages.recorded). An outside hunt found two wrong
readings the whole suite certified, since no check read what an implementation records: thinking added to the
payload after the request is recorded (M13: the record lacks it, the wire has it), and the request recorded after
the reply (M14: a request in flight, or one whose dispatch fails, has no record). Each is made in the reference and
must fail exactly the rows that name it; the reference passes every row, and so do targets that record what the seed
leaves open (a re-serialised body, other providers' requests, extra records, a body given as a JSON object).

A review (s7 review 1) then found three more readings certified and two right targets failed: a record log kept
across configure together with M14 (an earlier row's record stood in for the held and failed-dispatch rows), M13
together with a record of the exchange once the reply came (only the query was looked for before dispatch), a record
persisted by a log writer a few milliseconds after it is handed over (read once, no grace), and a recorder placed
after the connect (a refused port fails it). Each is here."""

from __future__ import annotations

import base64
import inspect
import json
import textwrap
import threading
from collections.abc import Callable
from typing import Any

import pytest

from dsweb_ref._context import OutgoingRequest
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import request_record
from dsweb_ref.certification.checks._leaks import leak
from dsweb_ref.certification.targets import InProcessTarget, reference_target
from dsweb_ref.emulator.server import DEFAULT_API_KEY
from dsweb_ref.providers import deepseek_official, deepseek_search_api
from dsweb_ref.providers.deepseek_official import DeepSeekMessagesSearch

from ._readings import failing_rows, fails_exactly, patch_reading
from .conftest import run

CHECK, TABLE = "search.messages.recorded", "CASES"
SAME_BODY, SAME_BODY_BATCH, HELD, FAILED_DISPATCH = (case.name for case in request_record.CASES)

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


THINKING_AFTER = '    payload["thinking"] = {"type": "disabled"}\n    body = encode_json(payload)\n'


def test_thinking_added_after_the_record_fails_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches (M13): the payload recorded without thinking, which is added (and the body encoded again) only
    # after the record: the emulator receives thinking disabled, the record lacks it (after the search, while the
    # request is held, and when its dispatch fails)
    right = _span(THINKING, RECORD)
    wrong = right.replace(THINKING, "").replace("json=payload))", "json=dict(payload)))") + THINKING_AFTER
    patch_reading(DeepSeekMessagesSearch, "search", right, wrong, monkeypatch)
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == {SAME_BODY, SAME_BODY_BATCH, HELD,
                                                                     FAILED_DISPATCH}


def test_thinking_added_after_the_record_with_the_exchange_recorded_later_fails_held_and_failed_dispatch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (review F2): M13 plus a second record of the exchange once the reply came (a session log's request and
    # exchange entries): after the search a record holds the body sent, but while the request is held the only record
    # lacks thinking, and a failed dispatch leaves only that one
    right = _span(THINKING, REPLY)
    wrong = (right.replace(THINKING, "").replace("json=payload))", "json=dict(payload)))")
             .replace(REPLY, THINKING_AFTER + REPLY + RECORD))
    patch_reading(DeepSeekMessagesSearch, "search", right, wrong, monkeypatch)
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == {HELD, FAILED_DISPATCH}


def test_the_request_recorded_after_the_reply_fails_the_held_and_failed_dispatch_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (M14): ctx.record moved below the exchange: no record while the request is in flight, none when its
    # dispatch fails (the same body once the reply came: same-body passes)
    _record_after_reply(monkeypatch)
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == {HELD, FAILED_DISPATCH}


def _record_after_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    right = _span(RECORD, REPLY)
    patch_reading(DeepSeekMessagesSearch, "search", right, right.replace(RECORD, "") + RECORD, monkeypatch)


def _keep_records_across_configure(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session log as long-lived as the process: configure never empties it (each row, each run, adds to it)."""
    log: list[OutgoingRequest] = []
    configure = InProcessTarget.configure

    async def configured(self: InProcessTarget, config: Any) -> None:
        await configure(self, config)
        self._records = log

    monkeypatch.setattr(InProcessTarget, "configure", configured)


def test_the_request_recorded_after_the_reply_in_a_log_kept_across_configure_fails_held_and_failed_dispatch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # catches (review F1): M14 with a record log that outlives configure: the record an earlier row (or run) left of
    # the same query stood in for the one the held and failed-dispatch rows look for; their own query now tells them
    # apart. Same-body passes (the reference's log is emptied at configure; here only after the rows ran)
    _record_after_reply(monkeypatch)
    _keep_records_across_configure(monkeypatch)
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == {HELD, FAILED_DISPATCH}
    (result,) = run(reference_target(), only=[CHECK]).results  # the whole table in one run: earlier rows' records
    assert result.outcome.value == "failed" and result.reason.startswith(f"{HELD}: "), result.reason


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


def test_a_target_recording_other_providers_requests_beside_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """Allowed: records of other providers' requests for the same query (a pipeline that also asks the Search API),
    here written before each Messages record, so a record holding the query is not always the Messages one. The
    check makes no Search or Fetch API request, so their records left out is what the reference already shows; the
    records put in here are what makes this test say something the reference test does not."""

    def beside(request: OutgoingRequest) -> list[OutgoingRequest]:
        if request.provider != deepseek_official.PROVIDER_ID or not isinstance(request.json, dict):
            return [request]
        text = json.dumps(request.json, ensure_ascii=False)
        start = text.find(request_record.QUERY)  # the row's query, its nonce included (or the batch's other one)
        query = text[start if start >= 0 else text.index(request_record.BATCH_QUERY):].split('"')[0]
        api = {"query": query, "max_results": 5}
        other = OutgoingRequest(deepseek_search_api.PROVIDER_ID, "POST", "http://127.0.0.1:1/search",
                                json.dumps(api).encode(), api)
        return [other, request]

    _recording(monkeypatch, beside)
    recorded: list[str] = []
    original = targets._recorded

    async def seen(records: list[OutgoingRequest]) -> targets.ToolResult:
        recorded.extend(r.provider for r in records)
        return await original(records)

    monkeypatch.setattr(targets, "_recorded", seen)
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == set()
    assert deepseek_search_api.PROVIDER_ID in recorded  # the check did read them, and took none for the Messages one


@pytest.mark.parametrize("delay", [0.02, 0.25])
def test_a_record_persisted_by_a_log_writer_a_moment_later_is_certified(
    delay: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Allowed (review F3): the recorder hands the request to a log writer before dispatch, and the writer thread
    persists it ``delay`` seconds later (a queue, a batched flush); recorded_requests reads what is persisted."""
    configure = InProcessTarget.configure

    async def configured(self: InProcessTarget, config: Any) -> None:
        await configure(self, config)
        log: list[OutgoingRequest] = []

        class Queued(list[OutgoingRequest]):
            def append(self, request: OutgoingRequest) -> None:
                timer = threading.Timer(delay, log.append, (request,))
                timer.daemon = True
                timer.start()

            def __iter__(self) -> Any:
                return iter(list(log))

        self._records = Queued()

    monkeypatch.setattr(InProcessTarget, "configure", configured)
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == set()


def test_a_request_recorded_once_its_connection_is_open_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """Allowed (review F7): the record written after the connection to the Messages host opens and before the
    request is sent ("before dispatch" read as before the request goes out). The failed-dispatch row's listener
    accepts the connection (and closes it unanswered), so this recorder records; a refused connect would not."""
    right = _span(RECORD, REPLY)
    connect = ("    _url = __import__('httpx').URL(url)\n"
               "    _reader, _writer = await __import__('asyncio').open_connection(_url.host, _url.port)\n"
               "    _writer.close()\n")
    patch_reading(DeepSeekMessagesSearch, "search", right, right.replace(RECORD, connect + RECORD), monkeypatch)
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == set()


def _answer(monkeypatch: pytest.MonkeyPatch, make: Callable[[Any], Any]) -> None:
    """recorded_requests answers ``make`` of the answer the reference gives."""
    original = targets._recorded

    async def bent(records: list[OutgoingRequest]) -> targets.ToolResult:
        return targets.ToolResult(text="", value=make((await original(records)).value))

    monkeypatch.setattr(targets, "_recorded", bent)


def test_a_body_recorded_as_a_json_object_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """Allowed (review F6): each body given as the JSON object it is, not as JSON text; the seed asks for the same
    body, which that is."""
    _answer(monkeypatch, lambda value: {"requests": [{**r, "body": json.loads(r["body"])} for r in value["requests"]]})
    assert failing_rows(request_record, TABLE, CHECK, monkeypatch) == set()


def test_a_body_recorded_as_a_byte_list_fails_saying_its_form(monkeypatch: pytest.MonkeyPatch) -> None:
    # review F6: a body as a list of byte values is neither JSON text nor a JSON object (the protocol asks for
    # text); the reason says so, not only that no record holds the query
    _answer(monkeypatch, lambda value: {"requests": [{**r, "body": list(r["body"].encode())}
                                                     for r in value["requests"]]})
    monkeypatch.setattr(request_record, "POLL_BOUND", 0.0)
    (result,) = run(reference_target(), only=[CHECK]).results
    assert result.outcome.value == "failed", result.reason
    assert "1 record(s) have a body that is neither text nor a JSON object" in result.reason, result.reason


@pytest.mark.parametrize("name", ["raw", "base64", "huge"])
def test_a_recorded_key_name_never_reaches_the_reason_raw_or_whole(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # review F4: a record whose body has a key named by the configured key (or its base64), or a name of 5,000,000
    # characters: the reason names the difference without the key and cut short
    key = {"raw": DEFAULT_API_KEY, "base64": base64.b64encode(DEFAULT_API_KEY.encode()).decode(),
           "huge": "k" * 5_000_000}[name]
    body = json.dumps({"messages": [{"role": "user", "content": request_record.QUERY}], key: 1})
    _answer(monkeypatch, lambda value: {"requests": [{"body": body}]})
    monkeypatch.setattr(request_record, "POLL_BOUND", 0.0)  # a failing read, at once
    (result,) = run(reference_target(), only=[CHECK]).results
    assert result.outcome.value == "failed" and result.reason.startswith(f"{SAME_BODY}: "), result.reason
    assert "the record of it differs: " in result.reason, result.reason
    assert leak(result.reason, DEFAULT_API_KEY) is None and key not in result.reason, result.reason
    assert len(result.reason) < 2000, len(result.reason)


def test_without_the_capability_the_check_is_skipped() -> None:
    capabilities = tuple(c for c in targets.CAPABILITIES if c != "request-record")
    target = InProcessTarget(targets._Reference(), name="dsweb_ref", version="test", capabilities=capabilities)
    (result,) = run(target, only=[CHECK]).results
    assert result.outcome.value == "skipped" and "request-record" in result.reason
