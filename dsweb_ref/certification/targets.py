"""What the checks drive: an implementation behind one small async interface.

Two kinds exist: :class:`InProcessTarget` runs Python tools on the suite's own event loop (the
reference implementation by default, or a provider package's own classes through the pytest
plugin), and :class:`AdapterTarget` runs an adapter program over the JSON-lines protocol of
:mod:`dsweb_ref.certification.adapter_protocol`. Both answer ``hello``, ``configure`` and calls
that can be cancelled; every wait is bounded and breakage surfaces as :class:`TargetError`.

A call may carry a *probe*: a function run the moment its answer arrives (in the stdout reader for
an adapter, in the task's done callback in-process), whose result travels with the answer as
:attr:`CallOutcome.at_answer`. Checks use it to see the emulator's state at that exact moment
instead of inferring order from timestamps.

An adapter runs with a minimal environment (:data:`ADAPTER_ENV`, a time zone east of UTC (:data:`ADAPTER_TZ`),
plus what the caller passes): the suite hands it the emulator's test key through ``configure``, so no credential of
the person or CI job running the suite is inherited.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import os
import shlex
import signal
import sys
import tempfile
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal, Protocol

import httpx

from .._context import CallContext, OutgoingRequest
from .._exceptions import WebError, WebErrorCode
from .._version import __version__
from ..providers._client_pool import tls_context
from ..providers.http_fetch import HttpFetchProvider
from ..replay._bases import KEY_ENV, credential_environ, settings_for_bases
from ..runtime import build_runtime, http_fetch_config, main_model_tools, scripted_runtime, standalone_search_tool
from ..settings import API_SELECTION, MESSAGES_SELECTION, Settings
from ..standalone_accounts import Resolution, SearchRoute, resolve
from ..standalone_config import save_search_model
from ..tools import ToolResult, error_result
from .adapter_protocol import CAPABILITIES, HELLO_TIMEOUT, ProtocolError, decode_line, encode_line
from .calibration import patiently
from .sandbox import SandboxNetwork

if TYPE_CHECKING:  # the evidence pipeline loads at the first evidence call
    from ..tools.evidence_search import EvidenceContext, EvidenceSearchTool

__all__ = [
    "ADAPTER_ENV",
    "ADAPTER_TZ",
    "KILL",
    "AdapterCommandError",
    "AdapterStartError",
    "AdapterTarget",
    "CallOutcome",
    "Hello",
    "InProcessTarget",
    "PendingCall",
    "Target",
    "TargetConfig",
    "TargetError",
    "ToolPair",
    "adapter_environment",
    "adapters_stopped",
    "kill_adapters",
    "reference_environ",
    "reference_settings",
    "reference_target",
    "scheduling_overrides",
    "split_command",
    "terminate_adapters",
    "track_process",
    "untrack_process",
    "warm_reference",
]

Method = Literal[
    "web_search", "web_fetch", "standalone_search", "standalone_resolve", "standalone_save", "evidence_search",
    "tool_schema", "standalone_tools", "evidence_cite", "settings_save", "recorded_requests",
]
STANDALONE_MODEL = "deepseek-v4-flash"  # the model a standalone search names on the emulator
Probe = Callable[[], Any]  # run the moment a call's answer arrives; its result is CallOutcome.at_answer
# What an adapter inherits from the suite's environment; everything else (credentials included) is dropped.
ADAPTER_ENV: tuple[str, ...] = tuple(
    "PATH HOME USER LOGNAME LANG LANGUAGE LC_ALL LC_CTYPE TMPDIR TEMP TMP PYTHONPATH VIRTUAL_ENV"
    " SYSTEMROOT COMSPEC PATHEXT WINDIR".split()
)
# An adapter's local time zone: eight hours east of UTC. Not the caller's: on a machine set to UTC, an HTTP-date
# Retry-After read as local time (time.mktime, not calendar.timegm) names the right moment, so that wrong reading
# would pass (hunt W1-3). Right code never depends on the zone; ``--adapter-env TZ=...`` chooses another. By its
# zone database name where the machine has one (a library that looks the local zone up by name, such as tzlocal,
# refuses a POSIX string: review R8-5), else in the POSIX form every C library reads without one (the sign is the
# offset *to* UTC).
def _east_of_utc() -> str:
    import zoneinfo

    named = "Etc/GMT-8"
    return named if any(os.path.isfile(os.path.join(root, named)) for root in zoneinfo.TZPATH) else "CST-8"


ADAPTER_TZ = _east_of_utc()


class TargetError(Exception):
    """The target could not be driven: it crashed, timed out or broke the protocol (-> Outcome.ERROR)."""


class CallStalled(TargetError):
    """A call did not answer within its liveness bound (given once more on a busy machine)."""


class AdapterCommandError(ValueError):
    """The adapter command string is empty or cannot be split with POSIX shell rules."""


class AdapterStartError(TargetError):
    """The adapter did not start or did not answer ``hello``; the message is one line and says why
    (exit status, the line it wrote instead, its stderr tail, or the deadline it missed)."""


class _Terminable(Protocol):
    def terminate(self) -> None: ...

    def kill(self) -> None: ...


# Adapters and check workers (offload.py) whose process may still run.
_RUNNING: weakref.WeakSet[_Terminable] = weakref.WeakSet()


def track_process(owner: _Terminable) -> None:
    """Have :func:`terminate_adapters` end ``owner``'s process too, until :func:`untrack_process`."""
    _RUNNING.add(owner)


def untrack_process(owner: _Terminable) -> None:
    _RUNNING.discard(owner)


# Event loops on which terminate_adapters ran: no adapter starts on them any more. Per loop, not per process: a
# test's interrupted run must not keep the next run (its own asyncio.run) from starting adapters.
_STOPPED_LOOPS: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def terminate_adapters() -> None:
    """SIGTERM to the process group of every adapter and check worker still running (safe in a signal
    handler: no await, no lock); each one's ``close`` then reaps it without the shutdown handshake. Called on a
    running event loop, it also stops adapters starting on that loop from now on: Python 3.11's ``wait_for``
    can drop the cancel that comes with it, and a check going on would otherwise start a lane nothing ends."""
    with contextlib.suppress(RuntimeError):  # no running loop: only the processes to end
        _STOPPED_LOOPS.add(asyncio.get_running_loop())
    for target in list(_RUNNING):
        target.terminate()


def kill_adapters() -> None:
    """SIGKILL to the process group of every adapter and check worker still running: a last resort, from any
    thread (a stopped check worker whose checks did not end)."""
    for target in list(_RUNNING):
        target.kill()


# What kills a process group at once; Windows has no SIGKILL (terminate() there).
KILL = getattr(signal, "SIGKILL", signal.SIGTERM)


def warm_reference() -> None:
    """Load the reference's evidence pipeline and the web's codecs now, blocking: for a process about to time
    things. Their first use otherwise imports and warms them (~0.4 s holding the interpreter lock) in the middle
    of every timing check running beside it. A failed warm-up only means the first call loads lazily."""
    from ..netguard.body import load_codecs
    from ..tools import evidence_search  # noqa: F401  (the import is the point)
    from ..tools._evidence_units import warm_up

    with contextlib.suppress(Exception):  # review R5: it must not end a worker
        warm_up().result(timeout=60)
        load_codecs()  # the first page's codec lookups: ~0.1 s, another stall of the same kind


def adapters_stopped() -> bool:
    """Whether :func:`terminate_adapters` ran on the running event loop (no adapter may start on it)."""
    try:
        return asyncio.get_running_loop() in _STOPPED_LOOPS
    except RuntimeError:
        return False


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Done callback: mark an exception as retrieved, so an unawaited failure logs no noise."""
    if not future.cancelled():
        future.exception()


def _run_probe(probe: Probe | None) -> Any:
    if probe is None:
        return None
    try:
        return probe()
    except Exception as exc:  # a probe bug must not kill the reader; the check sees the exception
        return exc


@dataclass(frozen=True, slots=True)
class Hello:
    name: str
    version: str
    capabilities: frozenset[str]


@dataclass(frozen=True, slots=True)
class TargetConfig:
    """The ``configure`` params of the adapter protocol."""

    messages_base: str
    tools_base: str
    api_key: str
    provider: Literal["messages", "api", "scripted"] = "api"
    # Capability fetch-selection: the fetch provider configured alone, beside the switch (seed 001: 'configuration
    # can still select either fetch provider alone'); "http" the local HTTP fetch, "api" the Fetch API, None as
    # ``provider`` selects (api: the Fetch API; messages: local HTTP).
    fetch_provider: Literal["http", "api"] | None = None
    # Seed 001's account route (capability account-route): "account" sends the account token instead of the key.
    auth: Literal["api_key", "account"] = "api_key"
    account_token: str = ""  # the emulator's account token; sent only on the account route
    search_max_queries: int = 4
    search_max_results: int = 8
    send_original_question: bool = True
    # Provider settings the checks rely on (seed 001), so an implementer never has to guess them.
    count: int = 10  # Search API count: sent as min(count, search_max_results)
    model: str = "deepseek-v4-flash"  # Messages model
    max_tokens: int = 4096  # Messages max_tokens
    max_uses: int = 5  # Messages web_search server tool max_uses
    timeout_s: float = 30.0  # one deadline per upstream request, both protocols, and per web_fetch
    # web_fetch's own fetcher (the SSRF profile): the decoded body cap and the redirect-hop cap.
    fetch_max_bytes: int = 5_000_000
    fetch_max_redirects: int = 5
    scripted_base: str = ""  # provider "scripted": the emulator's conformance search route (emulator/scripted.py)
    # Test-mode name resolution and dialling for the SSRF checks (see certification/sandbox.py).
    test_network: dict[str, Any] | None = None
    openai_base: str = ""  # seed 003: POST {openai_base}/responses (the OpenAI SDK's base)
    # Seed 001's opt-in scheduling (capabilities retry, pacing, localization), all off by default:
    # off, every target fails fast (one request per query, nothing paced, no localization sent).
    retries: int = 0  # retries of 408/429/5xx a search may make
    pacing_qps: float | None = None  # requests per second per API; None = no pacing
    localization: str | None = None  # an IP literal forwarded as Search API localization; None = unset
    # Seed 001's model-facing summary (capability summary-budget): snippet by default, as shipped.
    search_model_text: Literal["snippet", "summary"] = "snippet"
    search_summary_max_chars: int = 1000  # characters of one source's summary the model sees
    search_summary_total_chars: int = 4000  # summary characters over every source of one call
    # Seed 003 leaves streaming open: true asks the standalone search to request a streamed (server-sent
    # events) answer; a target may ignore it and answer plainly.
    standalone_stream: bool = False
    # Capability shipped-defaults: the keys this configure gives (None: every key). With a set, ``configure``
    # carries only those keys and ``"defaults": true``, and the target keeps its own shipped default for every
    # other setting (the value above is then the suite's, never sent).
    given: frozenset[str] | None = None

    def gives(self, key: str) -> bool:
        """Whether ``configure`` carries ``key`` (else the target keeps its shipped default)."""
        return self.given is None or key in self.given

    def standalone_url(self, protocol: str) -> str:
        """The exact request URL of a seed-003 standalone search over ``protocol``."""
        return self.openai_base + "/responses" if protocol == "responses" else self.messages_base + "/messages"

    def saved(self, params: Mapping[str, Any]) -> TargetConfig:
        """This configuration after ``settings_save`` ``params`` (capability live-settings): each setting key given
        takes its saved value (and counts as written after a ``"defaults": true`` configure); unknown keys, and
        ``test_network`` (no setting), are ignored."""
        names = {f.name for f in fields(self)} - {"given", "test_network"}
        kept = {k: v for k, v in params.items() if k in names}
        if "provider" in kept:  # the switch saved writes both selections, over a fetch selection saved before it
            kept.setdefault("fetch_provider", None)
        given = None if self.given is None else self.given | frozenset(kept)
        return replace(self, **kept, given=given)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        given = data.pop("given")
        if given is None:
            return data
        return {**{k: v for k, v in data.items() if k in given}, "defaults": True}

    @classmethod
    def from_json(cls, params: Mapping[str, Any]) -> TargetConfig:
        """The configuration ``configure`` params describe; unknown keys are ignored. With ``"defaults": true``,
        the keys present are the ones given (:attr:`given`); every other one keeps the shipped default."""
        names = {f.name for f in fields(cls)} - {"given"}
        kept = {k: v for k, v in params.items() if k in names}
        if params.get("defaults") is True:
            return cls(**kept, given=frozenset(kept))
        return cls(**kept)


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """One tool call's answer. ``answered_at`` is ``time.monotonic()`` the moment the suite read it
    (adapter) or the task finished (in-process); ``at_answer`` is what the call's probe returned then."""

    text: str | None = None
    value: dict[str, Any] | None = None
    error_code: str | None = None
    error_message: str = ""
    cancelled: bool = False
    answered_at: float = 0.0
    at_answer: Any = None

    @property
    def ok(self) -> bool:
        return self.error_code is None and not self.cancelled

    def brief(self) -> str:
        if self.cancelled:
            return "cancelled"
        if self.error_code is not None:
            return f"error {self.error_code}: {self.error_message[:200]}"
        return "success"


class PendingCall(Protocol):
    async def cancel(self) -> None: ...

    async def outcome(self, limit: float) -> CallOutcome: ...


class Target(Protocol):
    def describe(self) -> str: ...

    async def hello(self) -> Hello: ...

    async def configure(self, config: TargetConfig) -> None: ...

    def start_call(self, method: Method, params: dict[str, Any], probe: Probe | None = None) -> PendingCall: ...

    def use_environment(self, variables: Mapping[str, str]) -> None:
        """Environment variables the target must run with from its start (the suite's proxy traps)."""
        ...

    async def close(self) -> None: ...


# --- in-process ---------------------------------------------------------------------------------


class _Tool(Protocol):
    async def execute(self, arguments: object, ctx: CallContext | None = None) -> ToolResult: ...


Resolver = Callable[[dict[str, Any], list[str]], dict[str, Any]]
Saver = Callable[[str | None, str | None, str], dict[str, Any]]  # user file text, project file text, value
Citer = Callable[[str, list[dict[str, Any]]], str]  # answer, evidence values -> the answer with its source links


class _EvidenceTool(Protocol):
    async def execute(
        self, arguments: object, ctx: CallContext | None = None, context: EvidenceContext | None = None
    ) -> ToolResult: ...


class _BuiltOnFirstCall:
    """An evidence tool built at its first call, as an adapter builds it. Building one starts the load
    of its segmenters and ranker (about a second of CPU, in a background thread), which a run of
    checks that never call it should not pay."""

    def __init__(self, build: Callable[[], EvidenceSearchTool]) -> None:
        self._build = build
        self._tool: EvidenceSearchTool | None = None

    async def execute(
        self, arguments: object, ctx: CallContext | None = None, context: EvidenceContext | None = None
    ) -> ToolResult:
        if self._tool is None:
            self._tool = self._build()
        return await self._tool.execute(arguments, ctx, context)


@dataclass(frozen=True, slots=True)
class ToolPair:
    search: _Tool
    fetch: _Tool | None = None
    evidence: _EvidenceTool | None = None  # the seed 002 evidence web_search
    # Seed 003: the standalone web_search tool for a protocol ("messages" | "responses"), and the
    # account resolution (configuration document, names of the set key variables -> resolution JSON).
    standalone: Callable[[str], _Tool] | None = None
    resolver: Resolver | None = None
    # Seed 003: saving the assigned search model (user file text or None, project text or None, value).
    saver: Saver | None = None
    # Seed 003: the main model's tools array for a configuration (same arguments and answer shape as resolver).
    tools: Resolver | None = None
    # Seed 002: the answer with the source links code attaches to it.
    citer: Citer | None = None
    # Seed 001 (capability live-settings): a user's save while the tools run (``settings_save`` params); returns the
    # tools to use from now on (the same ones, or new ones over the same providers). A WebError refuses the save.
    live: Callable[[dict[str, Any]], ToolPair] | None = None


def _answered(compute: Callable[[], dict[str, Any]]) -> ToolResult:
    """A call answered by a function of its params: its value as JSON text, or its WebError."""
    try:
        value = compute()
    except WebError as error:
        return error_result(error)
    return ToolResult(text=json.dumps(value, ensure_ascii=False), value=value)


async def _saved(saver: Saver, params: dict[str, Any]) -> ToolResult:
    user, project, value = params.get("user"), params.get("project"), params.get("value")
    if not all(isinstance(v, str | None) for v in (user, project)) or not isinstance(value, str):
        return error_result(WebError(WebErrorCode.INVALID_ARGUMENTS, "standalone_save: user, project, value"))
    return _answered(lambda: saver(user, project, value))


async def _described(tool: Any, params: dict[str, Any]) -> ToolResult:
    """``tool_schema`` of an in-process web_search tool (a WebSearchTool, or any tool with its
    ``description`` and ``input_schema``): what the model is shown of it."""
    if params.get("tool") != "web_search":
        return error_result(WebError(WebErrorCode.INVALID_ARGUMENTS, "tool_schema: only web_search is described"))
    return _answered(lambda: {"name": getattr(tool, "name", "web_search"), "description": tool.description,
                              "input_schema": tool.input_schema, "guidance": getattr(tool, "system_prompt", None)})


async def _resolved(resolver: Resolver, params: dict[str, Any]) -> ToolResult:
    return _answered(lambda: resolver(params.get("document"), list(params.get("environ_set") or [])))  # type: ignore[arg-type]


async def _cited(citer: Citer, params: dict[str, Any]) -> ToolResult:
    answer, values = params.get("answer"), params.get("values")
    if not isinstance(answer, str) or not isinstance(values, list) or not all(isinstance(v, dict) for v in values):
        return error_result(WebError(WebErrorCode.INVALID_ARGUMENTS, "evidence_cite: answer, values"))
    try:
        text = citer(answer, values)
    except WebError as error:
        return error_result(error)
    return ToolResult(text=text, value={})


# The methods a ToolPair serves through one optional helper each: its field and how a call's params reach it.
_HELPER_CALLS: dict[str, tuple[str, Callable[[Any, dict[str, Any]], Coroutine[Any, Any, ToolResult]]]] = {
    "standalone_save": ("saver", _saved),
    "standalone_resolve": ("resolver", _resolved),
    "standalone_tools": ("tools", _resolved),
    "evidence_cite": ("citer", _cited),
}


_STUCK_TASKS = 12  # tasks named where an in-process call hangs (report text, bounded)


def _implementation(path: str) -> bool:
    """A file of the implementation under test, not of the suite or its emulator."""
    return "dsweb_ref" in path and not any(part in path for part in ("/certification/", "/emulator/"))


def _await_chain(task: asyncio.Task[Any]) -> list[Any]:
    """The frames of a suspended task, outermost first, down its chain of awaited coroutines
    (``Task.get_stack`` gives only the outermost)."""
    frames: list[Any] = []
    coro: Any = task.get_coro()
    while coro is not None and len(frames) < 100:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "ag_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            break
        frames.append(frame)
        coro = getattr(coro, "cr_await", None) or getattr(coro, "ag_await", None) or getattr(coro, "gi_yieldfrom", None)
    return frames


def _file_of(frame: Any) -> str:
    """A frame's file named within its package (the standard library's by its name alone)."""
    path = PurePath(frame.f_code.co_filename).as_posix()
    for marker in ("dsweb_ref/", "site-packages/"):
        if marker in path:
            return path.rsplit(marker, 1)[-1]
    return PurePath(path).name


def frame_place(frame: Any) -> str:
    """``file:line function`` of a frame (its file as :func:`_file_of` names it)."""
    return f"{_file_of(frame)}:{frame.f_lineno} {frame.f_code.co_name}"


def _package(frame: Any) -> str:
    file = _file_of(frame)
    return file.split("/", 1)[0] if "/" in file else "(stdlib)"


def _stuck_tasks() -> str:
    """Where the loop's pending tasks wait (each task's innermost frame in the implementation's code, then
    below it the innermost frame of each library it awaits): what the report can say about an in-process
    call that never answered (the call's own task awaits its siblings' tasks, so every task is looked at)."""
    places: list[str] = []
    for task in asyncio.all_tasks():
        chain = _await_chain(task)
        ours = [i for i, f in enumerate(chain) if _implementation(f.f_code.co_filename)]
        if ours:
            # Below it, the library code it awaits (a pool, a read, a lock): each package's innermost frame.
            inner = [[*group][-1] for _, group in itertools.groupby(chain[ours[-1] + 1:], key=_package)]
            places.append(" > ".join(frame_place(f) for f in (chain[ours[-1]], *inner[-3:])))
    shown = sorted(set(places))[:_STUCK_TASKS]
    return "tasks waiting at: " + ("; ".join(shown) if shown else "none of the project's code")


class _TaskCall:
    def __init__(self, coro: Coroutine[Any, Any, ToolResult], probe: Probe | None = None) -> None:
        self._answered_at = 0.0
        self._at_answer: Any = None
        self._probe = probe
        self._task = asyncio.ensure_future(coro)
        self._task.add_done_callback(self._stamp)

    def _stamp(self, _: object) -> None:
        self._answered_at = time.monotonic()
        self._at_answer = _run_probe(self._probe)

    async def cancel(self) -> None:
        self._task.cancel()

    async def outcome(self, limit: float) -> CallOutcome:
        async def answered(bound: float) -> None:
            done, _ = await asyncio.wait({self._task}, timeout=bound)
            if not done:
                raise TimeoutError

        try:
            await patiently(answered, limit)
        except TimeoutError as late:
            raise CallStalled(f"the call did not answer within {late.args[0]:g}s; {_stuck_tasks()}") from None
        if self._task.cancelled():
            return CallOutcome(
                cancelled=True, error_code="WEB_ABORTED", answered_at=self._answered_at, at_answer=self._at_answer
            )
        exc = self._task.exception()
        if exc is not None:
            raise TargetError(f"the tool raised instead of returning an error result: {exc!r}")
        r = self._task.result()
        return CallOutcome(
            text=r.text,
            value=r.value,
            error_code=r.error_code,
            error_message=r.text if r.error_code else "",
            answered_at=self._answered_at,
            at_answer=self._at_answer,
        )


class InProcessTarget:
    """Python tools on the suite's loop; ``build`` makes fresh tools for each configuration."""

    def __init__(
        self,
        build: Callable[[TargetConfig], ToolPair],
        *,
        name: str,
        version: str,
        capabilities: tuple[str, ...] = CAPABILITIES,
        description: str | None = None,
        recipe: Mapping[str, Any] | None = None,
    ) -> None:
        self._build = build
        self._recipe = dict(recipe) if recipe is not None else None
        self._hello = Hello(name, version, frozenset(capabilities))
        self._description = description or f"{name} {version} (in-process)"
        self._tools: ToolPair | None = None
        self._contexts: dict[str, EvidenceContext] = {}
        # What the tools recorded before dispatch (CallContext.record) since the last configure: recorded_requests
        self._records: list[OutgoingRequest] = []
        self._saved_environ: dict[str, str | None] = {}

    def describe(self) -> str:
        return self._description

    def recipe(self) -> dict[str, Any] | None:
        """How another process makes this target (see :func:`~.worker.target_from_recipe`): the one given
        when it was built, or None: tools built from Python objects cannot be sent to another process."""
        return dict(self._recipe) if self._recipe is not None else None

    def use_environment(self, variables: Mapping[str, str]) -> None:
        """In-process, the tools share this process's environment: set there until :meth:`close`."""
        for name, value in variables.items():
            self._saved_environ.setdefault(name, os.environ.get(name))
            os.environ[name] = value

    async def hello(self) -> Hello:
        return self._hello

    async def configure(self, config: TargetConfig) -> None:
        self._tools = self._build(config)
        self._contexts = {}
        self._records = []  # a call of the previous configuration still running records into its own list

    def start_call(self, method: Method, params: dict[str, Any], probe: Probe | None = None) -> PendingCall:
        if self._tools is None:
            raise TargetError("call before configure")
        ctx = CallContext(latest_prompt=params.get("latest_prompt"), record_request=self._records.append)
        if method == "recorded_requests":
            return _TaskCall(_recorded(list(self._records)), probe)
        if method == "evidence_search":
            evidence = self._tools.evidence
            if evidence is None:
                raise TargetError("this target has no evidence_search tool")
            context = _evidence_context(self._contexts, params.get("context"))
            return _TaskCall(evidence.execute(params.get("arguments"), ctx, context), probe)
        if method in _HELPER_CALLS:
            field, answer = _HELPER_CALLS[method]
            helper = getattr(self._tools, field)
            if helper is None:
                raise TargetError(f"this target has no {method}")
            return _TaskCall(answer(helper, params), probe)
        if method == "settings_save":
            if self._tools.live is None:
                raise TargetError("this target has no settings_save")
            return _TaskCall(self._saved(self._tools.live, params), probe)
        if method == "tool_schema":
            if not hasattr(self._tools.search, "input_schema"):
                raise TargetError("this target's web_search tool has no input_schema")
            return _TaskCall(_described(self._tools.search, params), probe)
        tool: _Tool | None
        if method == "standalone_search":
            build = self._tools.standalone
            tool = build(str(params.get("protocol", "messages"))) if build is not None else None
        else:
            tool = self._tools.search if method == "web_search" else self._tools.fetch
        if tool is None:
            raise TargetError(f"this target has no {method} tool")
        return _TaskCall(tool.execute(params.get("arguments"), ctx), probe)

    async def _saved(self, live: Callable[[dict[str, Any]], ToolPair], params: dict[str, Any]) -> ToolResult:
        """``settings_save``: the running tools told of the save (never rebuilt from ``_build``); ``{}``."""
        try:
            self._tools = live(params)
        except WebError as error:
            return error_result(error)
        return ToolResult(text="", value={})

    async def close(self) -> None:
        self._tools = None
        release = getattr(self._build, "aclose", None)  # what the builder keeps across configurations
        try:
            if release is not None:
                await release()
        finally:  # a second interrupt landing in that await must not leave the run's variables set
            for name, value in self._saved_environ.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            self._saved_environ = {}


async def _recorded(records: list[OutgoingRequest]) -> ToolResult:
    """``recorded_requests`` (capability request-record): the recorded requests, bodies as text; an
    OutgoingRequest holds no header or credential, so neither does the answer."""
    requests = [{"provider": r.provider, "method": r.method, "url": r.url, "body": r.body.decode("utf-8", "replace")}
                for r in records]
    return ToolResult(text="", value={"requests": requests})


def _evidence_context(contexts: dict[str, EvidenceContext], params: object) -> EvidenceContext:
    """The conversation's evidence context (adapter protocol ``evidence_search``: ``context.id``,
    ``context.local_names``, ``context.question``); one per id for as long as the configuration lasts."""
    data = params if isinstance(params, dict) else {}
    key = str(data.get("id", ""))
    names = frozenset(str(n) for n in data.get("local_names", ()) if isinstance(n, str))
    if key not in contexts:
        from ..tools.evidence_search import EvidenceContext

        contexts[key] = EvidenceContext(local_names=names)
    question = data.get("question")
    if isinstance(question, str):  # the user's question this call serves (the latest one counts)
        contexts[key].question = question[:2000]
    return contexts[key]


def reference_settings(config: TargetConfig, current: Settings | None = None) -> Settings:
    """The reference's settings for a ``configure``: one line per configure key; a key ``configure`` does not
    give (``"defaults": true``) keeps the shipped default, or with ``current`` its value there. ``current``, for a
    save: the snapshot the save writes over, as a user's save writes over the settings in use (the switch turned
    off must reset what turning it on wrote, not find the shipped defaults already there)."""
    overrides: dict[str, object] = {
        "credentials.auth": config.auth,
        "tools.search_max_queries": config.search_max_queries,
        "tools.search_max_results": config.search_max_results,
        "deepseek_api.send_original_question": config.send_original_question,
        "deepseek_api.count": config.count,
        "deepseek_messages.model": config.model,
        "deepseek_messages.max_tokens": config.max_tokens,
        "deepseek_messages.max_uses": config.max_uses,
        "http_fetch.timeout_s": config.timeout_s,
        "http_fetch.max_response_bytes": config.fetch_max_bytes,
        "http_fetch.max_redirects": config.fetch_max_redirects,
        "tools.search_model_text": config.search_model_text,
        "tools.search_summary_max_chars": config.search_summary_max_chars,
        "tools.search_summary_total_chars": config.search_summary_total_chars,
        **scheduling_overrides(config),
    }
    if config.given is not None:
        overrides = {key: value for key, value in overrides.items() if _CONFIGURE_KEY[key] in config.given}
    settings = settings_for_bases(
        config.messages_base if config.gives("messages_base") else None,
        config.tools_base if config.gives("tools_base") else None,
        timeout_s=config.timeout_s if config.gives("timeout_s") else None,
        settings=current,
        new_api=config.provider == "api" if config.gives("provider") else None,
        overrides=overrides,
    )
    if config.gives("fetch_provider"):  # written after the switch, as a user would
        if config.fetch_provider is not None:
            settings = settings.updated({"web.fetch_provider": FETCH_SELECTION[config.fetch_provider]})
        elif not config.gives("provider"):  # null, and the switch not written above: the switch writes its own
            settings = settings.with_new_search_api(settings.web.use_new_search_api)  # (through the settings layer)
    return settings


# configure's fetch_provider (capability fetch-selection) -> the reference's web.fetch_provider
FETCH_SELECTION = {"http": MESSAGES_SELECTION[1], "api": API_SELECTION[1]}


# The configure key behind each setting reference_settings writes (shipped-defaults: given or not).
_CONFIGURE_KEY: dict[str, str] = {
    "credentials.auth": "auth",
    "tools.search_max_queries": "search_max_queries",
    "tools.search_max_results": "search_max_results",
    "deepseek_api.send_original_question": "send_original_question",
    "deepseek_api.count": "count",
    "deepseek_messages.model": "model",
    "deepseek_messages.max_tokens": "max_tokens",
    "deepseek_messages.max_uses": "max_uses",
    "http_fetch.timeout_s": "timeout_s",
    "http_fetch.max_response_bytes": "fetch_max_bytes",
    "http_fetch.max_redirects": "fetch_max_redirects",
    "tools.search_model_text": "search_model_text",
    "tools.search_summary_max_chars": "search_summary_max_chars",
    "tools.search_summary_total_chars": "search_summary_total_chars",
    "deepseek_api.retries": "retries",
    "deepseek_api.pacing": "pacing_qps",
    "deepseek_api.search_qps": "pacing_qps",
    "deepseek_api.fetch_qps": "pacing_qps",
    "deepseek_api.localization": "localization",
}


def reference_environ(config: TargetConfig) -> dict[str, str]:
    """The private credential mapping for a ``configure``: the key and, when given, the account token."""
    return credential_environ(config.api_key, config.account_token or None)


def scheduling_overrides(config: TargetConfig) -> dict[str, object]:
    """The reference's settings for the opt-in keys ``retries``, ``pacing_qps`` and ``localization``."""
    # null writes "off" and "unset" too: a save is written over the settings in use, where they may be on.
    out: dict[str, object] = {"deepseek_api.retries": config.retries, "deepseek_api.pacing": False,
                              "deepseek_api.localization": config.localization or ""}
    if config.pacing_qps is not None:
        qps = float(config.pacing_qps)
        out.update({"deepseek_api.pacing": True, "deepseek_api.search_qps": qps, "deepseek_api.fetch_qps": qps})
    return out


def reference_standalone(config: TargetConfig, protocol: str) -> _Tool:
    """The reference seed-003 tool on the emulator: the route a resolution would select, built the
    way the runtime builds it, with the emulator key in a private mapping; ``standalone_stream`` asks
    for a streamed answer."""
    kind: Literal["messages", "responses"] = "responses" if protocol == "responses" else "messages"
    route = SearchRoute("certify", kind, config.standalone_url(kind), STANDALONE_MODEL, KEY_ENV)
    tool = standalone_search_tool(
        Resolution("selected", route=route), environ=credential_environ(config.api_key), stream=config.standalone_stream
    )
    assert tool is not None
    return tool


def reference_standalone_tools(config: TargetConfig) -> Callable[[str], _Tool]:
    """The reference's seed-003 tools for one ``configure``: one tool per protocol, built on its first search and
    kept for every later one, as a runtime assembles its web_search once and searches through it (seed 003:
    concurrent searches use separate provider instances, and no search reads another's history; a tool that
    carried state from one search to the next fails the rows that search twice). Each call is a new set: a new
    ``configure`` never meets an earlier configuration's tool."""
    kept: dict[str, _Tool] = {}

    def standalone(protocol: str) -> _Tool:
        kind = "responses" if protocol == "responses" else "messages"
        if kind not in kept:
            kept[kind] = reference_standalone(config, kind)
        return kept[kind]

    return standalone


def reference_resolve(document: dict[str, Any], environ_set: list[str]) -> dict[str, Any]:
    """``standalone_resolve`` of the reference: only whether each named variable is set matters."""
    return resolve(document, {name: "set" for name in environ_set}).to_json()


def reference_tools(document: dict[str, Any], environ_set: list[str], others: Sequence[Any] = ()) -> dict[str, Any]:
    """``standalone_tools`` of the reference: the main model's tools for a runtime assembled from ``document``
    (the standalone ``web_search`` when the selection registers it, then ``others``) and the notices that
    assembly told the user (``standalone-notice``); nothing is sent."""
    environ = {name: "set" for name in environ_set}
    notices: list[str] = []
    tools = main_model_tools(resolve(document, environ), others, environ=environ, on_notice=notices.append)
    return {"tools": tools, "notices": notices}


def reference_cite(answer: str, values: list[dict[str, Any]]) -> str:
    """``evidence_cite`` of the reference: the agent layer's helper that appends the source links."""
    from ..tools import evidence_search  # the evidence stack loads only when a check needs it

    return evidence_search.append_citations(answer, values)


def reference_save(user: str | None, project: str | None, value: str) -> dict[str, Any]:
    """``standalone_save`` of the reference: the texts as files in a scratch folder (None: no such file),
    saved with :func:`~dsweb_ref.standalone_config.save_search_model`; the user file's text after it."""
    with tempfile.TemporaryDirectory(prefix="dsweb-save-") as folder:
        user_path, project_path = Path(folder, "config.toml"), Path(folder, "reasonix.toml")
        for path, text in ((user_path, user), (project_path, project)):
            if text is not None:
                path.write_bytes(text.encode("utf-8"))
        report = save_search_model(user_path, value, project=project_path if project is not None else None).to_json()
        saved = user_path.read_bytes().decode("utf-8")
    return {"user": saved, "effective": report["effective"],
            "overridden_by": "project" if report["overridden_by"] is not None else None}


class _Reference:
    """Makes the reference's tools for each configuration. The scripted searches (the differential checks:
    hundreds of scenarios, a configuration each) share one connection pool for the target's life: a pool
    per scenario opened a TCP connection per search on both sides, a third of those checks' CPU."""

    def __init__(self) -> None:
        self._scripted: httpx.AsyncHTTPTransport | None = None

    def __call__(self, config: TargetConfig) -> ToolPair:
        if config.provider == "scripted" and self._scripted is None:
            self._scripted = httpx.AsyncHTTPTransport(verify=tls_context())
        return _build_reference(config, self._scripted)

    async def aclose(self) -> None:
        transport, self._scripted = self._scripted, None
        if transport is not None:
            await transport.aclose()


def _build_reference(config: TargetConfig, scripted: httpx.AsyncBaseTransport | None = None) -> ToolPair:
    """The reference's tools for ``config``; ``scripted`` carries the scripted searches (None: one per search)."""
    if config.provider == "scripted":
        settings = reference_settings(config)
        return ToolPair(search=scripted_runtime(config.scripted_base, lambda: settings, scripted).search_tool())
    return _LiveReference(config).tools()


class _LiveReference:
    """The reference's runtime for one ``configure``, built once: its providers read :attr:`settings` and the
    credential mapping :attr:`environ` at each operation (seed 001: each operation resolves one settings
    snapshot), so ``settings_save`` changes only those two, as a user's save does, and never the providers."""

    def __init__(self, config: TargetConfig) -> None:
        self.config = config
        self.settings = reference_settings(config)
        self.environ = reference_environ(config)  # one mapping, updated in place by a save
        network = SandboxNetwork.from_json(config.test_network)
        self.http: HttpFetchProvider | None = None
        if network is not None:  # the shipped strict policy; only resolution and the final dial are the suite's
            self.http = HttpFetchProvider(
                http_fetch_config(self.settings), resolver=network.resolver(), dialer=network.dialer()
            )
        self.runtime = build_runtime(lambda: self.settings, environ=self.environ, http_fetch=self.http)
        self.evidence = _BuiltOnFirstCall(self.runtime.evidence_tool)

    def tools(self) -> ToolPair:
        """The tools over the runtime; the web_search and web_fetch tools read their own limits when made."""
        fetch = self.runtime.fetch_tool()
        config = self.config
        return ToolPair(
            search=self.runtime.search_tool(),
            fetch=fetch,
            evidence=self.evidence,
            standalone=reference_standalone_tools(config),
            resolver=reference_resolve,
            saver=reference_save,
            tools=lambda document, environ_set: reference_tools(document, environ_set, [fetch]),
            citer=reference_cite,
            live=self.save,
        )

    def save(self, params: dict[str, Any]) -> ToolPair:
        """``settings_save``: the saved keys reach the next operation's snapshot; an operation under way keeps
        the snapshot (and credential) it resolved at its start. A value the settings refuse refuses the save."""
        config = self.config.saved(params)
        if config.provider == "scripted":
            raise WebError(WebErrorCode.CONFIG_INVALID, "settings_save: provider is messages or api")
        settings = reference_settings(config, self.settings)  # WebError for a bad value: nothing changes
        self.config, self.settings = config, settings
        self.environ.clear()
        self.environ.update(reference_environ(config))
        if self.http is not None:  # the test network's fetcher reads its limits at each fetch's start
            self.http.config = http_fetch_config(settings)
        return self.tools()


def reference_target() -> InProcessTarget:
    return InProcessTarget(
        _Reference(),
        name="dsweb_ref",
        version=__version__,
        description=f"reference implementation (dsweb_ref {__version__}, in-process)",
        recipe={"kind": "reference"},
    )


# --- adapter subprocess -------------------------------------------------------------------------


def adapter_environment(
    extra: Mapping[str, str] | None = None, *, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment an adapter starts with: :data:`ADAPTER_ENV` names from ``base`` (default:
    ``os.environ``), ``TZ`` set to :data:`ADAPTER_TZ`, then ``extra``. Credentials such as ``DEEPSEEK_API_KEY`` are
    not inherited."""
    source = os.environ if base is None else base
    env = {name: source[name] for name in ADAPTER_ENV if name in source}
    env["TZ"] = ADAPTER_TZ
    env.update(extra or {})
    return env


def split_command(command: str) -> list[str]:
    """``command`` split with POSIX shell rules; :class:`AdapterCommandError` when empty or unparsable."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise AdapterCommandError(f"cannot parse the adapter command: {exc}") from None
    if not argv:
        raise AdapterCommandError("empty adapter command")
    return argv


@dataclass(frozen=True, slots=True)
class _Arrival:
    """A response line, when the reader got it, and what the call's probe saw at that moment."""

    message: dict[str, Any]
    at: float
    observed: Any = None


@dataclass(slots=True)
class _Waiter:
    future: asyncio.Future[_Arrival]
    probe: Probe | None = None


class _AdapterCall:
    def __init__(
        self, target: AdapterTarget, request_id: int, future: asyncio.Future[_Arrival], method: str = ""
    ) -> None:
        self._target = target
        self._id = request_id
        self._future = future
        self._method = method

    async def cancel(self) -> None:
        await self._target.request("cancel", {"id": self._id}, limit=self._target.call_timeout)
        self._target._cancels[self._id] = time.monotonic()

    async def outcome(self, limit: float) -> CallOutcome:
        return _outcome_of(await self._target.wait_response(self._id, self._future, limit), self._method)


# Methods whose answer is an object of their own (settings_save's {}, recorded_requests' {"requests": [...]}),
# carried whole as the outcome's value, not a tool result's {"text", "value"}.
_PLAIN_ANSWERS = ("settings_save", "recorded_requests")


_ANSWER_KEYS = ("result", "error", "cancelled")


def _nulls_absent(message: dict[str, Any]) -> dict[str, Any]:
    """A response whose answer keys include a null beside a non-null one, with the nulls left out: encoders that
    write every field (Go's encoding/json without omitempty) send '"error": null' beside a result, which a hunt's
    adapter found refused ("adapter refused hello: None")."""
    if any(message.get(key) is not None for key in _ANSWER_KEYS):
        return {k: v for k, v in message.items() if not (k in _ANSWER_KEYS and v is None)}
    return message


def _outcome_of(arrival: _Arrival, method: str = "") -> CallOutcome:
    message, at, observed = arrival.message, arrival.at, arrival.observed
    if "result" in message and ("error" in message or "cancelled" in message):
        raise TargetError("a response carries result beside error or cancelled: one of them, never both")
    if method in _PLAIN_ANSWERS and isinstance(message.get("result"), dict):  # its answer is no tool result
        return CallOutcome(text="", value=message["result"], answered_at=at, at_answer=observed)
    if message.get("cancelled") is True:
        return CallOutcome(cancelled=True, error_code="WEB_ABORTED", answered_at=at, at_answer=observed)
    error = message.get("error")
    if error is not None:
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            raise TargetError(f"error response without a string code: {str(message)[:200]}")
        text = str(error.get("message", ""))
        return CallOutcome(
            text=text, error_code=error["code"], error_message=text, answered_at=at, at_answer=observed
        )
    result = message.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("text"), str):
        raise TargetError(f"result is not an object with a text string: {str(message)[:200]}")
    value = result.get("value")
    if not isinstance(value, dict):
        raise TargetError(f"result value is not an object: {str(message)[:200]}")
    return CallOutcome(text=result["text"], value=value, answered_at=at, at_answer=observed)


class AdapterTarget:
    """An adapter program started from ``command`` (split with :func:`shlex.split`).

    ``env`` adds variables to the minimal environment (:func:`adapter_environment`); pass
    ``inherit_env=False`` to start from ``env`` alone."""

    def __init__(
        self,
        command: str,
        *,
        env: Mapping[str, str] | None = None,
        inherit_env: bool = True,
        hello_timeout: float = HELLO_TIMEOUT,
        call_timeout: float = 30.0,
    ) -> None:
        self.command = command
        self.argv = split_command(command)
        self._env = adapter_environment(env) if inherit_env else dict(env or {})
        self._own_env = dict(self._env)  # before the run adds its proxy traps (a recipe's other run has its own)
        self.hello_timeout = hello_timeout
        self.call_timeout = call_timeout
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: dict[int, _Waiter] = {}
        self._cancels: dict[int, float] = {}  # call id -> when the adapter acknowledged its cancel
        self._next_id = 0
        self._broken: str | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._readers: list[asyncio.Task[None]] = []
        self._hello: Hello | None = None
        self._terminated = False
        self._group_ended = False  # close() has ended the process group: its id is no longer ours to signal

    def describe(self) -> str:
        name = f"{self._hello.name} {self._hello.version}" if self._hello else "adapter"
        return f"{name} via adapter `{self.command}`"

    def recipe(self) -> dict[str, Any]:
        """How another process starts this adapter again (see :func:`~.worker.target_from_recipe`): its
        command, its environment without the run's proxy traps, and its deadlines."""
        return {"kind": "adapter", "command": self.command, "env": dict(self._own_env),
                "hello_timeout": self.hello_timeout, "call_timeout": self.call_timeout}

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    async def _start(self) -> asyncio.subprocess.Process:
        if self._proc is not None:
            return self._proc
        if self._broken is not None:
            raise TargetError(self._broken)
        if adapters_stopped():
            raise AdapterStartError("the run is stopping (interrupted, or its caller went away): no adapter starts now")
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._env,
                limit=64 * 1024 * 1024,  # one response is one line; fetch bodies can be large
                # Its own process group: an interrupt ends the adapter and whatever it started, and a
                # terminal's Ctrl-C reaches the suite alone, which then shuts the adapter down.
                start_new_session=sys.platform != "win32",
            )
        except OSError as exc:
            self._broken = f"cannot start adapter {self.argv[0]!r}: {exc.strerror or exc}"
            raise AdapterStartError(self._broken) from exc
        track_process(self)
        self._readers = [asyncio.ensure_future(self._read_stdout()), asyncio.ensure_future(self._read_stderr())]
        return self._proc

    def _fail_all(self, reason: str) -> None:
        if self._broken is None:
            self._broken = reason
        for waiter in self._pending.values():
            if not waiter.future.done():
                waiter.future.set_exception(TargetError(self._broken))
        self._pending.clear()

    async def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            while True:
                line = await self._proc.stdout.readline()
                at = time.monotonic()  # the arrival: stamped here, not when a check gets round to it
                if not line:
                    break
                if not line.strip():
                    continue
                message = _nulls_absent(decode_line(line))
                waiter = self._pending.pop(message["id"], None)
                if waiter is None:
                    raise ProtocolError(f"adapter answered unknown id {message['id']}")
                observed = _run_probe(waiter.probe)
                if not waiter.future.done():
                    waiter.future.set_result(_Arrival(message, at, observed))
        except (ProtocolError, ValueError) as exc:  # ValueError: a line over the stream limit
            self._fail_all(f"adapter broke the protocol: {exc}")
            return
        code = await self._proc.wait()
        tail = self.stderr_tail()
        self._fail_all(f"adapter exited with status {code}" + (f"; stderr tail:\n{tail}" if tail else ""))

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        while True:
            line = await self._proc.stderr.readline()
            if not line:
                return
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    async def _send(
        self, method: str, params: dict[str, Any], probe: Probe | None = None
    ) -> tuple[int, asyncio.Future[_Arrival]]:
        proc = await self._start()
        if self._broken is not None:
            raise TargetError(self._broken)
        assert proc.stdin is not None
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[_Arrival] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieve)
        self._pending[request_id] = _Waiter(future, probe)
        try:
            proc.stdin.write(encode_line({"id": request_id, "method": method, "params": params}))
            await asyncio.wait_for(proc.stdin.drain(), self.call_timeout)
        except (OSError, TimeoutError) as exc:
            self._pending.pop(request_id, None)
            future.cancel()
            raise TargetError(await self._why_gone(f"cannot write to the adapter: {exc!r}")) from exc
        return request_id, future

    async def _why_gone(self, fallback: str) -> str:
        """Why the adapter stopped listening: the stdout reader's account (the line it wrote instead of a
        response, or its exit status and stderr tail) once it has one, within a second; else ``fallback``."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self._readers, return_exceptions=True), 1.0)
        return self._broken or fallback

    async def wait_response(
        self, request_id: int, future: asyncio.Future[_Arrival], limit: float, *, patient: bool = True
    ) -> _Arrival:
        """The answer to ``request_id`` within ``limit``: a liveness bound, given once more on a busy machine
        when ``patient`` (not for a start deadline or a shutdown)."""
        def answer(bound: float) -> Awaitable[_Arrival]:
            return asyncio.wait_for(asyncio.shield(future), bound)

        try:
            return await (patiently(answer, limit) if patient else answer(limit))
        except TimeoutError as exc:
            allowed = exc.args[0] if exc.args else limit
            raise CallStalled(f"adapter did not answer request {request_id} within {allowed:g}s"
                              + self._cancel_said(request_id) + self._last_said()) from None

    async def request(
        self, method: str, params: dict[str, Any], *, limit: float, patient: bool = True
    ) -> dict[str, Any]:
        request_id, future = await self._send(method, params)
        message = (await self.wait_response(request_id, future, limit, patient=patient)).message
        if "error" in message:
            raise TargetError(f"adapter refused {method}: {str(message['error'])[:300]}")
        return message

    async def hello(self) -> Hello:
        """The adapter's first answer, within :attr:`hello_timeout` (its start deadline);
        :class:`AdapterStartError` with a one-line reason when it does not come."""
        try:
            message = await self.request("hello", {}, limit=self.hello_timeout, patient=False)
        except AdapterStartError:
            raise
        except TargetError as exc:
            raise AdapterStartError(await self._start_failure(str(exc))) from None
        result = message.get("result")
        if not isinstance(result, dict) or not isinstance(result.get("capabilities"), list):
            raise TargetError(f"hello result lacks a capabilities list: {str(message)[:300]}")
        caps = frozenset(str(c) for c in result["capabilities"])
        self._hello = Hello(str(result.get("name", "?")), str(result.get("version", "?")), caps)
        return self._hello

    async def configure(self, config: TargetConfig) -> None:
        await self.request("configure", config.to_json(), limit=self.call_timeout)

    def start_call(self, method: Method, params: dict[str, Any], probe: Probe | None = None) -> PendingCall:
        return _DeferredAdapterCall(self, method, params, probe)

    async def _start_failure(self, reason: str) -> str:
        """One line on why ``hello`` got no answer: the deadline missed (and how to allow more), or what
        the adapter wrote instead, its exit status and the last lines of its stderr."""
        if "did not answer" in reason:
            return (
                f"adapter did not answer hello within {self.hello_timeout:g}s (its start deadline: answer "
                "hello before heavy imports, or allow more with --adapter-start-timeout SECONDS)"
            )
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 1.0)
            reason = await self._why_gone(reason)
        line = reason.split("; stderr tail:")[0].splitlines()[0]
        if proc is not None and proc.returncode is not None and "exited with status" not in line:
            line += f"; it exited with status {proc.returncode}"
        return line + self._last_said()

    def _cancel_said(self, request_id: int) -> str:
        """What the adapter did with the call's cancel: acknowledged, but the call itself never answered (an
        adapter whose task for the call had not begun when the cancel came may drop the call's answer)."""
        acked = self._cancels.get(request_id)
        if acked is None:
            return ""
        return (f" (it acknowledged the call's cancel {time.monotonic() - acked:.1f}s ago: a cancelled call still "
                "answers, cancelled, also when the cancel came before the call began)")

    def _last_said(self, lines: int = 3) -> str:
        """``; stderr tail: a | b | c``, the adapter's last non-blank stderr lines (what it last said: why it
        failed, maybe), or nothing when it said nothing."""
        tail = [text.strip() for text in self._stderr if text.strip()][-lines:]
        return "; stderr tail: " + " | ".join(tail) if tail else ""

    def terminate(self) -> None:
        """SIGTERM to the adapter's process group, now (callable in a signal handler); ``close`` reaps it.
        Sent even when the adapter itself has exited: what it started may still run in its group (the
        group's id stays reserved while any member lives, and a closed target is no longer tracked)."""
        proc = self._proc
        if proc is None:
            return
        self._terminated = True
        self._signal_group(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL to the adapter's process group, now (from any thread): :func:`kill_adapters`."""
        self._signal_group(KILL)

    def _signal_group(self, sig: signal.Signals) -> None:
        proc = self._proc
        if proc is None or self._group_ended:
            return
        with contextlib.suppress(OSError):  # already gone, or not ours to signal
            if sys.platform == "win32":
                proc.kill() if sig is not signal.SIGTERM else proc.terminate()
            else:
                os.killpg(proc.pid, sig)  # the adapter's own group: what it started goes too

    def use_environment(self, variables: Mapping[str, str]) -> None:
        if self._proc is not None:
            raise TargetError("the adapter already runs; its environment is fixed")
        self._env.update(variables)

    async def close(self) -> None:
        proc = self._proc
        if proc is None:
            return
        # An adapter that never said hello gets no shutdown handshake (it would only time out again),
        # nor does one being terminated (an interrupt must end the run within a second).
        if self._broken is None and self._hello is not None and proc.returncode is None and not self._terminated:
            with contextlib.suppress(TargetError):
                await self.request("shutdown", {}, limit=3.0, patient=False)
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 0.5 if self._terminated else 5.0)
        except TimeoutError:
            self._signal_group(KILL)
            await proc.wait()
        finally:
            # What the adapter started and left behind ends with it, also when an interrupt cancels the wait.
            self._signal_group(KILL)
            self._group_ended = True
        untrack_process(self)
        # Let the readers see the pipes' end (so their transports close on this loop), then stop them.
        await asyncio.wait(self._readers, timeout=0.5)
        for reader in self._readers:
            reader.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)
        self._fail_all("adapter closed")


class _DeferredAdapterCall:
    """Sends the request on first use, so ``start_call`` can stay synchronous like the in-process one."""

    def __init__(self, target: AdapterTarget, method: str, params: dict[str, Any], probe: Probe | None) -> None:
        self._target = target
        self._method = method
        self._sent: asyncio.Task[tuple[int, asyncio.Future[_Arrival]]] = asyncio.ensure_future(
            target._send(method, params, probe)
        )
        self._sent.add_done_callback(_retrieve)

    async def _call(self) -> _AdapterCall:
        try:
            request_id, future = await asyncio.wait_for(asyncio.shield(self._sent), self._target.call_timeout)
        except TimeoutError:
            raise TargetError("could not send the call to the adapter in time") from None
        return _AdapterCall(self._target, request_id, future, self._method)

    async def cancel(self) -> None:
        await (await self._call()).cancel()

    async def outcome(self, limit: float) -> CallOutcome:
        return await (await self._call()).outcome(limit)
