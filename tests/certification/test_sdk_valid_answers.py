"""Issue 24 item 3: every scripted answer (checks/_script.py) and every emulator answer on the model
routes validates against the official SDK types with strict validation, so an implementation that
parses with the `anthropic` or `openai` SDK is never failed for the suite's own fault.

"Strict" is checked two ways: the SDKs' own path (``_strict_response_validation=True`` runs
``_models.validate_type``), and pydantic's ``model_validate(..., strict=True)``, which is stricter
still (no coercion). Nothing is listed by hand: the scripted answers are harvested from a real suite
run, the emulator answers from every route responder (``app.ANSWERS``) times every answer mode
(each field of ``MessagesMode``), plain and streamed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import itertools
import json
from collections.abc import Iterator
from typing import Any, get_args, get_origin

import anthropic
import anthropic._models
import openai
import openai._models
import pytest
from pydantic import BaseModel, TypeAdapter

from dsweb_ref.certification import suite
from dsweb_ref.certification.checks import _script
from dsweb_ref.certification.targets import CAPABILITIES, InProcessTarget, _build_reference
from dsweb_ref.emulator import Emulator
from dsweb_ref.emulator.app import ANSWERS
from dsweb_ref.emulator.log import RequestLog
from dsweb_ref.emulator.messages import MessagesMode

SDK_TYPES: dict[str, tuple[type[BaseModel], Any]] = {
    # route -> (the plain answer's type, the type of one streamed event)
    "messages": (anthropic.types.Message, anthropic.types.RawMessageStreamEvent),
    "responses": (openai.types.responses.Response, openai.types.responses.ResponseStreamEvent),
}
SDK_SKIPS = {"messages": {"ping"}, "responses": set()}  # events the SDK's own stream reader skips


@functools.cache
def adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)  # built once: the Responses event union takes seconds to build


def strictly(route: str, body: bytes) -> int:
    """Validate one answer body (JSON or server-sent events) as the SDK of ``route`` does; the number of
    values validated. Raises pydantic's ValidationError on the first that fails."""
    plain, event = SDK_TYPES[route]
    validate = anthropic._models.validate_type if route == "messages" else openai._models.validate_type
    if not body.startswith(b"event:"):
        data = json.loads(body)
        validate(type_=plain, value=data)
        plain.model_validate(data, strict=True)
        return 1
    count = 0
    for chunk in body.decode("utf-8").split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines() if ": " in line)
        if "data" not in lines or lines.get("event") in SDK_SKIPS[route]:
            continue
        data = json.loads(lines["data"])
        validate(type_=event, value=data)
        adapter(event).validate_python(data, strict=True)
        count += 1
    return count


# --- the scripted answers and the emulator's answers, harvested from a suite run ------------------

MODEL_CAPABILITIES = tuple(c for c in CAPABILITIES if c not in ("search-api", "fetch-api", "scripted-search"))


def _harvest(monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict[str, Any]], list[tuple[str, bytes]]]:
    """Run every check that reaches a model route (Messages search, the standalone search) against the
    reference, keeping every answer _script.py built and every answer the emulator itself gave."""
    scripted: list[dict[str, Any]] = []
    served: list[tuple[str, bytes]] = []
    build = _script._messages

    def spy(query: str, rows: Any) -> dict[str, Any]:
        answer = build(query, rows)
        scripted.append(json.loads(json.dumps(answer)))
        return answer

    stop, clear = Emulator.stop, RequestLog.clear

    def keep(log: RequestLog) -> None:
        served.extend((r.route or "", r.response_body) for r in log.records()
                      if r.route in SDK_TYPES and r.status == 200 and r.fault is None)

    def keep_then_stop(self: Emulator, timeout: float = 10.0) -> None:
        keep(self.log)
        stop(self, timeout)

    def keep_then_clear(self: RequestLog) -> None:  # a check clears its log between rows
        keep(self)
        clear(self)

    monkeypatch.setattr(_script, "_messages", spy)
    monkeypatch.setattr(Emulator, "stop", keep_then_stop)
    monkeypatch.setattr(RequestLog, "clear", keep_then_clear)
    target = InProcessTarget(_build_reference, name="dsweb_ref", version="sdk", capabilities=MODEL_CAPABILITIES)
    # a default run's checks (one run only on request waits out a 90 s limit, holding no answer worth parsing)
    ids = [s.check.id for s in suite.select_checks() if not s.missing(frozenset(MODEL_CAPABILITIES))]
    report = asyncio.run(suite.run_suite(target, only=ids))
    assert all(r.outcome.value == "passed" for r in report.results), [r.reason for r in report.results if r.reason]
    return scripted, served


def test_every_scripted_and_served_answer_of_a_suite_run_parses_strictly(monkeypatch: pytest.MonkeyPatch) -> None:
    scripted, served = _harvest(monkeypatch)
    assert len(scripted) >= 20 and {r for r, _ in served} == set(SDK_TYPES), (len(scripted), len(served))
    for answer in scripted:
        strictly("messages", json.dumps(answer).encode())
    for route, body in served:
        strictly(route, body)


def test_the_sdk_check_rejects_the_gap_the_issue_found() -> None:
    """The validation above is not vacuous: a Messages usage without web_fetch_requests (the scripts'
    old gap) and an unknown content block type both fail it."""
    answer = _script._messages("q", [_script.row("https://a.example.test/", "A", "excerpt")])
    del answer["usage"]["server_tool_use"]["web_fetch_requests"]
    with pytest.raises(ValueError, match="web_fetch_requests"):
        strictly("messages", json.dumps(answer).encode())
    answer = _script._messages("q", [])
    answer["content"].append({"type": "prose"})
    with pytest.raises(ValueError):
        strictly("messages", json.dumps(answer).encode())


# --- every emulator answer: each route's responder, each answer mode, plain and streamed ------------


def _sample(kind: Any) -> Any:
    """A non-default value for a MessagesMode field of type ``kind`` (``str | None``, ``bool``, ...)."""
    kinds = get_args(kind) if get_origin(kind) is not None else (kind,)
    for wanted, value in ((bool, True), (int, 2000), (str, "max_uses_exceeded")):
        if wanted in kinds or wanted.__name__ in str(kind):
            return value
    raise AssertionError(f"no sample for MessagesMode field type {kind!r}")


def modes() -> Iterator[MessagesMode | None]:
    yield None
    for field in dataclasses.fields(MessagesMode):
        yield MessagesMode(**{field.name: _sample(field.type)})
    yield MessagesMode(prose_only="")  # the emulator's own prose for an empty text


QUERIES = ("Perform a web search for the query: search api", "zzqx nothing matches this", "東京 タワー 営業時間")
TOOL = {"messages": {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
        "responses": {"type": "web_search"}}
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "messages": [{}, {"thinking": {"type": "disabled"}}, {"thinking": {"type": "enabled", "budget_tokens": 1024}}],
    "responses": [{}, {"include": ["web_search_call.action.sources"]},
                  {"include": ["web_search_call.action.sources", "reasoning.encrypted_content"]}],
}


def requests(route: str) -> Iterator[dict[str, Any]]:
    for query, extra, tools, stream in itertools.product(QUERIES, VARIANTS[route], ([TOOL[route]], []), (False, True)):
        if route == "messages":
            body = {"model": "deepseek-v4-flash", "max_tokens": 8192, "messages": [{"role": "user", "content": query}]}
        else:
            body = {"model": "deepseek-v4-flash", "input": query}
        yield {**body, **({"tools": tools} if tools else {}), **extra, **({"stream": True} if stream else {})}


@pytest.mark.parametrize("route", sorted(set(ANSWERS) & set(SDK_TYPES)))
def test_every_emulator_answer_parses_strictly(route: str) -> None:
    checked = 0
    for body, mode in itertools.product(requests(route), modes()):
        response = ANSWERS[route](json.dumps(body).encode(), mode)
        assert response.status_code == 200, (body, mode, bytes(response.body)[:300])
        checked += strictly(route, bytes(response.body))
    assert checked > 100
