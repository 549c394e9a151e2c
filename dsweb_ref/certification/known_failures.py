"""The known-failures baseline: check ids an implementation is known to fail, with reasons.

File format (YAML)::

    known_failures:
      - id: search.batch.concurrent
        reason: runs queries one after another (tracked in issue 12)

A plain mapping ``{check id: reason}`` is accepted too. Applying the baseline: a listed check that
*failed* becomes ``known-failure`` and does not fail CI; a listed check that passed becomes
``fixed-known-failure`` and does fail CI, so the list cannot go stale silently. A listed check
that *errored* stays an error: an error means the check could not run at all (the target
crashed, hung or spoke nonsense), which says nothing about the known defect and must not pass CI
behind it. Ids that name no check are reported by :meth:`KnownFailures.unknown`; ``dsweb certify``
fails the run for them (a typo would otherwise silently list nothing).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .model import CheckResult, Outcome

__all__ = ["KnownFailures", "KnownFailuresError", "load_known_failures"]


class KnownFailuresError(ValueError):
    """The file cannot be read as a known-failures list."""


@dataclass(frozen=True, slots=True)
class KnownFailures:
    reasons: Mapping[str, str]  # check id -> why it is known to fail
    source: str = ""

    def unknown(self, check_ids: Iterable[str]) -> list[str]:
        known = set(check_ids)
        return sorted(i for i in self.reasons if i not in known)

    def apply(self, results: Iterable[CheckResult]) -> list[CheckResult]:
        out = []
        for result in results:
            why = self.reasons.get(result.check.id)
            if why is None:
                out.append(result)
            elif result.outcome is Outcome.FAILED:
                reason = f"known failure ({why}): {result.reason}"
                out.append(dataclasses.replace(result, outcome=Outcome.KNOWN_FAILURE, reason=reason))
            elif result.outcome is Outcome.ERROR:
                reason = f"{result.reason} (listed as a known failure ({why}), but an error is not masked)"
                out.append(dataclasses.replace(result, reason=reason))
            elif result.outcome is Outcome.PASSED:
                reason = f"listed as a known failure ({why}) but passed: remove it from the known-failures file"
                out.append(dataclasses.replace(result, outcome=Outcome.FIXED_KNOWN_FAILURE, reason=reason))
            else:
                out.append(result)
        return out


def _reason(value: Any, check_id: object) -> str:
    """A reason as text. Only a scalar is one: a list or mapping is refused rather than printed, since YAML
    aliases let a few hundred bytes stand for a structure whose text is gigabytes ("billion laughs")."""
    if value is None:
        return ""
    if isinstance(value, str | int | float | bool):
        return str(value)
    raise KnownFailuresError(f"the reason for {str(check_id)[:80]!r} is a {type(value).__name__}, not text")


def _entries(data: Any) -> dict[str, str]:
    if isinstance(data, dict) and "known_failures" in data:
        data = data["known_failures"]
    if data is None:
        return {}
    if isinstance(data, dict):
        return {str(k): _reason(v, k) for k, v in data.items()}
    if isinstance(data, list):
        out: dict[str, str] = {}
        for i, item in enumerate(data):
            if isinstance(item, str):
                out[item] = ""
            elif isinstance(item, dict) and isinstance(item.get("id"), str):
                out[item["id"]] = _reason(item.get("reason") or None, item["id"])
            else:
                raise KnownFailuresError(f"entry {i} is neither a check id nor {{id, reason}}")
        return out
    raise KnownFailuresError("expected a list of {id, reason} entries under 'known_failures'")


def load_known_failures(path: str | Path) -> KnownFailures:
    import yaml  # here: only a run given a known-failures file reads YAML

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise KnownFailuresError(f"cannot read known-failures file {path}: not UTF-8 ({exc.reason})") from None
    except (OSError, ValueError, RecursionError, yaml.YAMLError) as exc:
        raise KnownFailuresError(f"cannot read known-failures file {path}: {exc}") from None
    try:
        return KnownFailures(_entries(data), source=str(path))
    except KnownFailuresError as exc:
        raise KnownFailuresError(f"known-failures file {path}: {exc}") from None
