"""Recording probes into scrubbed cassettes, and replaying them.

Recording rules (``dsweb record``):

* probes run serially, each under a timeout, with request starts spaced by a rate limiter;
* a probe is recorded into a temporary file and moved into place if the cassette passes the
  secret scan and the target file does not exist yet (unless ``overwrite``); a refused probe
  leaves no cassette behind. An existing cassette marked ``failed`` in its provenance is not a
  recording of the probe (a 429, a 5xx or a timeout may have been passing): the next run records
  the probe again and replaces it, without ``overwrite``;
* a probe the *endpoint* failed (an exchange answered a status the probe does not expect, or no
  answer came within the timeout) is still written, with ``failed: <reason>`` in its provenance,
  and reported ``failed``: a replay (``dsweb certify --cassettes``) then judges what the endpoint
  answered, as the live run did, instead of skipping the check for a missing cassette. A probe
  the *client* failed (it crashed, sent nothing, followed a redirect, or left the account route)
  leaves no cassette;
* provenance says what the cassette was recorded against; an emulator recording says
  ``dsweb emulator (local)`` and never passes for a live one;
* the account token (``RecordTarget.account_token``, or the emulator's own) is scrubbed like the
  key, as ``<DEEPSEEK_ACCOUNT_TOKEN>``; an account-route probe runs only when there is one, is
  refused unless every request carried it, and keeps that placeholder in its credential headers
  (``Bearer <DEEPSEEK_ACCOUNT_TOKEN>``) so the cassette shows which credential went out;
* against the emulator, a probe whose client visited the redirect trap (followed a Location) fails;
* a key or account token shorter than :data:`MIN_RECORD_SECRET` characters is refused before any
  request: the secret scan cannot tell its encoded forms from ordinary text;
* an output directory that is not a directory (an existing file), or a cassette that cannot be
  written (permissions, a file where a protocol folder belongs, a full disk), stops the run with
  :class:`CassetteWriteError` naming the path: further probes would only spend requests.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from .._secrets import PIECE
from .._version import __version__
from ..emulator import Emulator
from .cassettes import (
    KEY_PLACEHOLDER,
    PLACEHOLDER_ORIGIN,
    cassette_replay,
    dump_cassette,
    finalize_cassette,
    load_cassette,
    make_vcr,
    provenance_of,
    scan_cassette_data,
)
from .probes import ACCOUNT_PLACEHOLDER, PROBES, Probe, ProbeContext, ProbeRun, RateLimiter, get_probe

__all__ = [
    "EMULATOR_LABEL",
    "MIN_RECORD_SECRET",
    "CassetteWriteError",
    "RecordResult",
    "RecordTarget",
    "Status",
    "record_probes",
    "replay_context",
    "replay_probe",
]

EMULATOR_LABEL = "dsweb emulator (local)"
MIN_RECORD_SECRET = PIECE  # a shorter key or account token is refused before any request (see _too_short)
LIVE_LABEL = "live endpoint"
REPLAY_KEY = "dsweb-replay-placeholder"  # what providers send on replay (never matched, never a secret)
REPLAY_ACCOUNT_TOKEN = "dsweb-replay-account-placeholder"  # likewise, on the account route
Status = Literal["recorded", "skipped", "failed", "refused", "exists"]


@dataclass(frozen=True, slots=True)
class RecordTarget:
    messages_base: str | None
    tools_base: str | None
    api_key: str
    emulator: Emulator | None = None  # set: the bases are this embedded emulator's
    account_token: str | None = None  # for account-route probes; default: the emulator's own, if any

    @property
    def label(self) -> str:
        return EMULATOR_LABEL if self.emulator is not None else LIVE_LABEL


@dataclass(frozen=True, slots=True)
class RecordResult:
    probe: str
    status: Status
    path: Path | None = None
    reason: str = ""


class CassetteWriteError(Exception):
    """Cassettes cannot be written to ``path``; recording stopped. ``results`` holds the results of
    the probes handled before (the failing probe's exchange happened, but nothing was written)."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.results: list[RecordResult] = []


def _unusable_dir(out_dir: Path) -> str | None:
    """Why ``out_dir`` can never hold cassettes (it, or its nearest existing ancestor, is not a
    directory), or None. Checked before any probe runs, so no request is spent for nothing."""
    for candidate in (out_dir, *out_dir.absolute().parents):
        if os.path.lexists(candidate):
            if candidate.is_dir():
                return None
            return "is not a directory" if candidate == out_dir else f"{candidate} is not a directory"
    return None


UNEXPECTED_STATUS = "unexpected status"


def _check_run(probe: Probe, run: ProbeRun) -> str | None:
    if not run.exchanges:
        return "no request reached the endpoint"
    bad = [e for e in run.exchanges if e.status not in probe.expect_status]
    if bad:
        got = ", ".join(f"{e.method} {e.url} -> HTTP {e.status}" for e in bad)
        return f"{UNEXPECTED_STATUS} (expected {sorted(probe.expect_status)}): {got}"
    if probe.auth == "account":
        bearer = ("authorization", f"Bearer {ACCOUNT_PLACEHOLDER}")
        if any(bearer not in e.credentials for e in run.exchanges):
            return "a request on the account route did not carry the account token as its Bearer credential"
    return None


def _account_token(target: RecordTarget) -> str | None:
    if target.account_token:
        return target.account_token
    emu = target.emulator
    if emu is not None and emu.credentials.account_tokens:
        return sorted(emu.credentials.account_tokens)[0]
    return None


def _too_short(key: str, account_token: str | None) -> str | None:
    """Why no cassette may be recorded with these credentials, or None: a credential shorter than
    :data:`MIN_RECORD_SECRET` characters. The scanner finds every 10 characters of a credential and
    its whole spaced-out, ROT13 or base-N forms only from that length on; below it, its encoded forms
    are as short as ordinary words, so a recording could hold one unseen. Checked before any request."""
    for name, value in (("key", key), ("account token", account_token)):
        if value is not None and len(value) < MIN_RECORD_SECRET:
            return (
                f"the {name} is {len(value)} characters long: no cassette is recorded with a credential shorter "
                f"than {MIN_RECORD_SECRET} characters, whose encoded forms cannot be told from ordinary text"
            )
    return None


def _show_credentials(data: dict[str, Any], run: ProbeRun) -> None:
    """Account route: put the placeholder form of what each credential header carried (checked to be
    the account token by :func:`_check_run`, the same for every request) where vcrpy wrote <REDACTED>."""
    sent = dict(run.exchanges[0].credentials)
    for interaction in data.get("interactions", []):
        headers = interaction["request"].get("headers") or {}
        for name in list(headers):
            if name.lower() in sent:
                headers[name] = [sent[name.lower()]]


async def _record_one(
    probe: Probe,
    target: RecordTarget,
    out_dir: Path,
    *,
    overwrite: bool,
    timeout_s: float,
    limiter: RateLimiter,
    now: Callable[[], datetime],
) -> RecordResult:
    base = probe.base(target.messages_base, target.tools_base)
    if base is None:
        return RecordResult(probe.id, "skipped", reason=f"no base for the {probe.route} route")
    if probe.needs_emulator and target.emulator is None:
        return RecordResult(probe.id, "skipped", reason="needs a scripted fault: run with --emulator")
    account_token = _account_token(target)
    if probe.auth == "account" and not account_token:
        return RecordResult(probe.id, "skipped", reason="runs on the account route: needs an account token")
    short = _too_short(target.api_key, account_token if probe.auth == "account" else None)
    if short is not None:
        return RecordResult(probe.id, "refused", reason=short)
    dest = out_dir / probe.cassette
    retried: str | None = None  # the failure of the existing cassette this run records again
    if dest.exists() and not overwrite:
        retried = _marked_failed(dest)
        if retried is None:
            return RecordResult(probe.id, "exists", dest, "cassette exists; pass --overwrite to replace it")
    emu = target.emulator
    fault_label = None
    if emu is not None:
        emu.reset()
        if probe.fault is not None:
            fault = probe.fault(emu)
            fault_label = repr(fault)
            emu.inject("*", fault)
    replacements = [(target.api_key, KEY_PLACEHOLDER)]
    if account_token:
        replacements.append((account_token, ACCOUNT_PLACEHOLDER))
    trap_hits = 0
    with tempfile.TemporaryDirectory(prefix="dsweb-record-") as tmp:
        raw_path = Path(tmp) / "raw.yaml"
        recorder = make_vcr(record_mode="all", replacements=replacements)
        ctx = ProbeContext(
            target.messages_base,
            target.tools_base,
            target.api_key,
            dict(probe.params),
            timeout_s,
            limiter,
            account_token=account_token,
            overrides=dict(probe.settings),
        )
        run: ProbeRun | None = None
        try:
            with recorder.use_cassette(str(raw_path)):
                async with asyncio.timeout(timeout_s):
                    run = await probe.run(ctx)
        except TimeoutError:
            pass  # the endpoint did not answer in time: kept below, marked failed
        except Exception as exc:  # a probe that crashed records nothing
            return RecordResult(probe.id, "failed", reason=f"{type(exc).__name__}: {exc}")
        finally:
            if emu is not None:
                trap_hits = len(emu.log.trap_hits())
                emu.reset()
        # The endpoint's own failure (a wrong status, no answer in time) is kept as a cassette marked
        # failed, so a replay judges what the endpoint answered instead of skipping a check it failed live.
        failure = f"timed out after {timeout_s}s" if run is None else None
        if run is not None:
            problem = _check_run(probe, run)
            if problem is None and trap_hits:
                problem = f"a redirect was followed: {trap_hits} request(s) reached the emulator's redirect trap"
            if problem is not None and not problem.startswith(UNEXPECTED_STATUS):
                return RecordResult(probe.id, "failed", reason=problem)  # the client's fault: nothing to replay
            failure = problem
        if raw_path.exists():
            raw = load_cassette(raw_path)
        elif failure is not None:
            raw = {"interactions": [], "version": 1}  # timed out before any answer: a replay has nothing to match
        else:
            return RecordResult(probe.id, "failed", reason="nothing was recorded")
        origin = (emu.base_url, PLACEHOLDER_ORIGIN) if emu is not None else None

        def replay_base(value: str | None) -> str | None:
            return None if value is None or origin is None else value.replace(origin[0], origin[1])

        import vcr  # loaded by make_vcr above; imported here, not at the top, for the same reason

        provenance: dict[str, Any] = {
            "probe": probe.id,
            "description": probe.description,
            "recorded_against": target.label,
            # The emulator listens on an ephemeral port; naming it would only make re-recordings differ.
            "recorded_base": base if emu is None else base.replace(emu.base_url, f"http://{emu.host}:<ephemeral-port>"),
            "replay_base": replay_base(base) if origin else base,
            "route": probe.route,
            "recorded_at": now().strftime("%Y-%m-%d"),
            "tool": f"dsweb_ref {__version__}",
            "vcrpy": vcr.__version__,
            "params": dict(probe.params),
            "expect_status": sorted(probe.expect_status),
            "scrubbed": f"credential headers, cookies and the key value (as {KEY_PLACEHOLDER})",
        }
        if probe.settings:
            provenance["settings"] = dict(probe.settings)
        if probe.auth == "account":
            provenance["scrubbed"] = (
                f"cookies, and the key and account token values (as {KEY_PLACEHOLDER} and {ACCOUNT_PLACEHOLDER}); "
                "credential headers keep only the placeholder of the credential they carried"
            )
        if failure is not None:
            provenance["failed"] = failure
        if fault_label is not None:
            provenance["fault"] = fault_label  # finalize_cassette rewrites its origin and scrubs credentials
        data = finalize_cassette(raw, provenance=provenance, replacements=replacements, origin=origin)
        if probe.auth == "account" and run is not None and run.exchanges:
            _show_credentials(data, run)
        literals = [secret for secret, _ in replacements]
        findings = scan_cassette_data(data, literals=literals, where=probe.cassette)
        if findings:
            kinds = sorted({f"{f.kind} at {f.where}" for f in findings})
            return RecordResult(probe.id, "refused", reason="credential-like value left: " + "; ".join(kinds))
        try:
            written = _write_new(dest, dump_cassette(data), overwrite=overwrite)
        except OSError as exc:
            reason = exc.strerror or f"{type(exc).__name__}: {exc}"
            where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(dest) else ""
            raise CassetteWriteError(dest, f"cannot write cassette {dest}: {reason}{where}") from exc
        if not written:
            return RecordResult(probe.id, "exists", dest, "cassette exists; pass --overwrite to replace it")
    if failure is not None:
        return RecordResult(probe.id, "failed", dest, f"{failure} (kept, marked failed in its provenance)")
    replaced = f"replaced the cassette marked failed: {retried}" if retried else ""
    return RecordResult(probe.id, "recorded", dest, replaced)


def _marked_failed(path: Path) -> str | None:
    """The ``failed`` reason in the provenance of the cassette at ``path``; None when it has none (or
    cannot be read: a file this run cannot judge is never replaced without ``overwrite``)."""
    try:
        failed = provenance_of(path).get("failed")
    except Exception:  # unreadable, not YAML, no provenance
        return None
    return str(failed) if failed else None


def _write_new(dest: Path, text: str, *, overwrite: bool) -> bool:
    """Stage ``text`` next to ``dest`` and move it into place; False (nothing written) if ``dest``
    exists, is not marked failed and ``overwrite`` is off."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, staged = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        if dest.exists() and not overwrite and _marked_failed(dest) is None:  # appeared meanwhile
            return False
        os.replace(staged, dest)
        return True
    finally:
        if os.path.exists(staged):
            os.unlink(staged)


async def record_probes(
    probes: Iterable[str | Probe],
    target: RecordTarget,
    out_dir: Path,
    *,
    overwrite: bool = False,
    timeout_s: float = 30.0,
    max_rps: float = 2.0,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    now: Callable[[], datetime] | None = None,
) -> list[RecordResult]:
    """Record each probe (ids or :class:`Probe` objects), one after another, into ``out_dir``.

    Raises :class:`CassetteWriteError` before any probe runs when ``out_dir`` is not a directory,
    and stops with it when a cassette cannot be written."""
    limiter = RateLimiter(max_rps, clock=clock, sleep=sleep)
    problem = _unusable_dir(out_dir)
    if problem is not None:
        raise CassetteWriteError(out_dir, f"cannot write cassettes to {out_dir}: {problem}")
    results: list[RecordResult] = []
    for item in probes:
        probe = get_probe(item) if isinstance(item, str) else item
        try:
            result = await _record_one(
                probe,
                target,
                out_dir,
                overwrite=overwrite,
                timeout_s=timeout_s,
                limiter=limiter,
                now=now or (lambda: datetime.now(UTC)),
            )
        except CassetteWriteError as error:
            error.results = results
            raise
        results.append(result)
    return results


# --- replay ---------------------------------------------------------------------------------


def replay_context(probe: Probe, cassette: Path, *, params: Mapping[str, Any] | None = None) -> ProbeContext:
    """A context whose bases are the cassette's replay base, with the setting values it was
    recorded with (provenance ``settings``). Run it inside :func:`cassette_replay`."""
    provenance = provenance_of(cassette)
    base = provenance.get("replay_base")
    if not isinstance(base, str):
        raise ValueError(f"{cassette} has no replay_base in its provenance")
    recorded = provenance.get("params")
    chosen = dict(params if params is not None else recorded if isinstance(recorded, dict) else probe.params)
    settings = provenance.get("settings")
    overrides = dict(settings if isinstance(settings, dict) else probe.settings)
    messages_base = base if probe.route == "messages" else None
    tools_base = base if probe.route != "messages" else None
    return ProbeContext(
        messages_base, tools_base, REPLAY_KEY, chosen, account_token=REPLAY_ACCOUNT_TOKEN, overrides=overrides
    )


async def replay_probe(probe: Probe, cassette: Path) -> ProbeRun:
    """Run ``probe`` against its cassette only (:func:`cassette_replay`: an unmatched request raises)."""
    ctx = replay_context(probe, cassette)
    with cassette_replay(cassette):
        return await probe.run(ctx)


def select_probes(ids: Sequence[str] | None) -> list[Probe]:
    """Probes by id or by protocol prefix (``search-api``); all when ``ids`` is empty."""
    if not ids:
        return list(PROBES)
    chosen: list[Probe] = []
    for ident in ids:
        matches = [p for p in PROBES if p.id == ident or p.protocol == ident]
        if not matches:
            get_probe(ident)  # raises with the list of known ids
        chosen += [p for p in matches if p not in chosen]
    return chosen
