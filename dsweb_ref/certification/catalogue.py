"""The check catalogue as a reader sees it: ``dsweb certify --explain ID`` and ``--list --markdown``.

One :class:`Entry` per check, implementation and endpoint alike: id, one-line description, the rule (the
seed decision it enforces, restated; the check's docstring when no rule was written), the seed number,
the capabilities a target must declare, the profiles it belongs to (when checks carry them) and its case
table (each row's name, what wrong reading it catches, and its inputs). README's spec section is
:func:`markdown` verbatim; a test keeps the two equal.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .cases import Case

__all__ = ["AmbiguousCheck", "Entry", "UnknownCheck", "entries", "explain", "markdown", "matches", "near"]

Kind = Literal["implementation", "endpoint"]
PARAMS_WIDTH = 100  # a case's inputs are shown up to this many characters (some are long on purpose)
_KIND_TITLES: dict[Kind, str] = {
    "implementation": "Implementation checks (default target, `--adapter`)",
    "endpoint": "Endpoint checks (`--base`, `--messages-base`/`--tools-base`, `--cassettes`)",
}
_PROTOCOLS = {
    "any": "once per search protocol the target declares (Search API, Messages)",
    "api": "over the Search/Fetch API protocol",
    "messages": "over the Messages protocol",
    "scripted": "over the emulator's conformance search route (provider scripted)",
}


class UnknownCheck(LookupError):
    pass


@dataclass(frozen=True, slots=True)
class Entry:
    kind: Kind
    id: str
    description: str
    rule: str
    seed: str
    requires: tuple[str, ...]
    profiles: tuple[str, ...]
    cases: tuple[Case, ...]
    runs: str  # which protocol(s) the check runs over, or which probe an endpoint check replays


def _profiles(*holders: object) -> tuple[str, ...]:
    """Profiles a check belongs to, where checks carry them (``profiles`` on the spec or the check)."""
    for holder in holders:
        value = getattr(holder, "profiles", None)
        if isinstance(value, str):
            return (value,)
        if isinstance(value, Iterable):
            return tuple(str(getattr(p, "name", p)) for p in value)
    return ()


def _implementation() -> list[Entry]:
    from .checks import all_checks

    return [
        Entry(
            "implementation",
            spec.check.id,
            spec.check.description,
            " ".join(str(getattr(spec, "rule", "") or "").split()) or spec.check.description,
            spec.check.seed,
            tuple(spec.requires),
            _profiles(spec, spec.check),
            tuple(getattr(spec, "cases", ()) or ()),
            _PROTOCOLS.get(str(spec.provider), str(spec.provider)),
        )
        for spec in all_checks()
    ]


def _probe_rule(description: str, probe_id: str, probe_description: str) -> str:
    """An endpoint check's rule when none is written: its description and what its probe sends."""
    if probe_description.strip().rstrip(".").lower() == description.strip().rstrip(".").lower():
        return f"{description} (probe {probe_id})"
    return f"{description} (probe {probe_id}: {probe_description})"


def _endpoint() -> list[Entry]:
    from ..replay.probes import get_probe
    from .endpoint import ENDPOINT_SPECS

    out = []
    for spec in ENDPOINT_SPECS:
        probe = get_probe(spec.probe)
        rule = " ".join(str(getattr(spec, "rule", "") or "").split())
        out.append(
            Entry(
                "endpoint",
                spec.check.id,
                spec.check.description,
                rule or _probe_rule(spec.check.description, probe.id, probe.description),
                spec.check.seed,
                (spec.check.capability,),
                _profiles(spec, spec.check),
                tuple(getattr(spec, "cases", ()) or ()),
                f"probe {probe.id} on the {spec.route} route",
            )
        )
    return out


def entries() -> list[Entry]:
    """Every check: implementation checks in run order, then endpoint checks in run order."""
    return [*_implementation(), *_endpoint()]


class AmbiguousCheck(LookupError):
    """``--explain`` was given a prefix or a name several checks share; ``matches`` are their ids."""

    def __init__(self, query: str, matches: list[str], *, near: bool = False) -> None:
        what = f"no check {query!r}, but near names" if near else f"{len(matches)} checks match {query!r}"
        super().__init__(what)
        self.matches = matches
        self.near = near  # the matches are spellings near the query, not ids it names


def matches(query: str, ids: list[str]) -> list[str]:
    """The ids ``query`` names: itself; else those it starts (``search.merge``); else those holding it as a
    name part (``ori_question``)."""
    q = query.strip()
    if q in ids:
        return [q]
    found = [i for i in ids if i.startswith(q.rstrip(".") + ".") or (q and i.startswith(q))]
    if not found:
        found = [i for i in ids if q and q in i.split(".")] or [i for i in ids if len(q) >= 3 and q in i]
    return found


def near(query: str, ids: list[str]) -> list[str]:
    """Ids spelled close to ``query``, or whose last part is, closest first (difflib)."""
    q = query.strip()
    tails = {i.rsplit(".", 1)[-1]: i for i in ids}
    close = difflib.get_close_matches(q, ids, n=5, cutoff=0.6)
    close += [tails[t] for t in difflib.get_close_matches(q, list(tails), n=5, cutoff=0.75)]
    return list(dict.fromkeys(close))


def _find(check_id: str) -> Entry:
    every = {e.id: e for e in entries()}
    found = matches(check_id, list(every))
    if len(found) == 1:
        return every[found[0]]
    if found:
        raise AmbiguousCheck(check_id, found)
    if close := near(check_id, list(every)):
        raise AmbiguousCheck(check_id, close, near=True)
    raise UnknownCheck(f"no check with id {check_id!r} and none near it (dsweb certify --list shows them)")


def _params(params: Mapping[str, Any], *, whole: bool = False) -> str:
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=repr)}" for k, v in params.items())
    return text if whole or len(text) <= PARAMS_WIDTH else text[: PARAMS_WIDTH - 1] + "…"


def doc_link(check_id: str) -> str:
    """Where the check's entry is in the documentation shipped with the package (one anchor per id)."""
    return f"{Path(__file__).resolve().parent.parent / 'docs' / 'checks.md'}#{check_id}"


def explain(check_id: str, *, full: bool = False) -> str:
    """The whole entry for ``check_id`` as terminal text; ``full`` prints each case's params uncut."""
    e = _find(check_id)
    lines = [
        f"{e.id}  ({e.kind} check)",
        f"  {e.description}",
        "",
        f"rule (seed {e.seed}):",
        f"  {e.rule}",
        "",
        f"seed:      {e.seed}",
        f"requires:  {', '.join(e.requires) or '-'}",
        f"profiles:  {', '.join(e.profiles) or '-'}",
        f"runs:      {e.runs}",
        f"docs:      {doc_link(e.id)}",
        "",
    ]
    if not e.cases:
        lines.append("cases: none (the check runs one fixed scenario)")
    else:
        lines.append(f"cases ({len(e.cases)}):")
        for case in e.cases:
            lines.append(f"  - {case.name}")
            lines.append(f"      catches: {case.misreading}")
            if case.params:
                lines.append(f"      params:  {_params(case.params, whole=full)}")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown() -> str:
    """The whole catalogue as Markdown: one summary table per kind, then each check with its rule and cases."""
    all_entries = entries()
    has_profiles = any(e.profiles for e in all_entries)
    out: list[str] = []
    for kind, title in _KIND_TITLES.items():
        chosen = [e for e in all_entries if e.kind == kind]
        out += [f"### {title}", ""]
        head = "| id | seed | requires |" + (" profiles |" if has_profiles else "") + " cases | what it checks |"
        out += [head, "|---" * head.count(" |") + "|"]
        for e in chosen:
            profiles = f" {_cell(', '.join(e.profiles)) or '-'} |" if has_profiles else ""
            out.append(
                f"| `{e.id}` | {e.seed} | {_cell(', '.join(e.requires))} |{profiles} {len(e.cases)} | "
                f"{_cell(e.description)} |"
            )
        out.append("")
        for e in chosen:
            out += [f"#### `{e.id}`", "", f"{e.description}. Seed {e.seed}; runs {e.runs}.", "", f"Rule: {e.rule}", ""]
            if e.cases:
                out += ["| case | catches | params |", "|---|---|---|"]
                out += [f"| {_cell(c.name)} | {_cell(c.misreading)} | {_cell(_params(c.params))} |" for c in e.cases]
                out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
