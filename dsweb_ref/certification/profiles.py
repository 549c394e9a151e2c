"""Profiles: what a run certifies, by name, so a core capability cannot be skipped into a pass.

A profile is a seed decision as a whole: the capabilities an implementation must declare for it
and the checks that must pass for it. A check lists its profiles (``CheckSpec.profiles``); a check
that runs over every declared search protocol counts, for a protocol's own profile, by its run on
that protocol. A target is certified for a profile only when it declares every required
capability and every check of the profile ran and passed (a skipped, failed, errored or known
failure check, or one left out with ``--only``, withholds it). A check that needs two opt-in capabilities
(search.api.pacing.retries: pacing and retry) counts for each one's profile only for a target declaring both
(:func:`~.checks.profile_members`): a target may opt into one alone. The verdict names every profile.
The checks of a profile marked ``on_request`` run only when the run names the profile or the check's
whole id (a default run leaves them out).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from .model import CheckResult, Outcome, ProfileVerdict

__all__ = ["PROFILES", "Profile", "UnknownProfileError", "find_profile", "on_request", "opt_in_profile",
           "profile_verdicts"]


def opt_in_profile(capability: str) -> str:
    """The profile of one opt-in capability from seed 001's remaining list (``retry`` -> ``seed-001-retry``)."""
    return f"seed-001-{capability}"


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    seed: str
    description: str
    requires: tuple[str, ...]  # every one must be declared
    requires_any: tuple[str, ...] = ()  # at least one must be declared (when not empty)
    protocol: Literal["api", "messages"] | None = None  # which run of an any-protocol check counts
    opt_in: bool = False  # a capability beyond what the seed ships (not certifying it is no shortfall)
    # Its checks run only when asked for by name (``--profile NAME``, or a check's whole id in ``--only``): each
    # waits out a long limit, which every default run would otherwise pay for.
    on_request: bool = False

    def missing(self, capabilities: Iterable[str]) -> list[str]:
        declared = set(capabilities)
        missing = [c for c in self.requires if c not in declared]
        if self.requires_any and not declared & set(self.requires_any):
            missing.append(" or ".join(self.requires_any))
        return missing


# The profiles a run can certify, in report order; a new seed adds its own with the checks that define it.
PROFILES: tuple[Profile, ...] = (
    Profile(
        "seed-000-web-search",
        "000",
        "the model-facing web_search tool: queries array, validation, batching, merge, cancellation",
        # scripted-search: the differential checks (answer labels, per-query truncated, failure codes)
        # are seed 000's strongest; any consumer wires them in a few lines, so they are not optional.
        # tool-schema: the schema and descriptions the model is shown are the seed's decision itself.
        requires=("web_search", "tool-schema", "cancel", "scripted-search"),
        requires_any=("search-api", "messages-search"),
    ),
    Profile(
        "seed-001-search-api",
        "001",
        "search through the DeepSeek Search API: the request on the wire and every outcome",
        requires=("web_search", "search-api"),
        protocol="api",
    ),
    Profile(
        "seed-001-messages",
        "001",
        "search through Anthropic-compatible Messages with the web_search server tool",
        requires=("web_search", "messages-search"),
        protocol="messages",
    ),
    Profile(
        "seed-001-fetch-api",
        "001",
        "fetch through the DeepSeek Fetch API: mapping onto the shared fetch result, failures, redirects, "
        "cancellation",
        requires=("web_fetch", "fetch-api", "cancel"),
        protocol="api",
    ),
    *(
        Profile(
            opt_in_profile(capability),
            "001",
            f"the opt-in {capability} capability from seed 001's remaining list ({what})",
            requires=("web_search", "search-api", capability),
            protocol="api",
            opt_in=True,
        )
        for capability, what in (
            ("retry", "waiting before retrying 408, 429 and 5xx"),
            ("pacing", "cancellation-aware pacing under the account's rate"),
            ("localization", "a bounded IP localization input"),
            ("summary-budget", "model-facing summaries under per-source and total budgets"),
            ("quality-metadata", "summary, site_name, rerank_score and authority kept as served"),
        )
    ),
    Profile(
        opt_in_profile("fetch-pacing"),
        "001",
        "the opt-in fetch-pacing capability from seed 001's remaining list (Fetch API requests paced at the "
        "configured rate too: 'Search and Fetch each have an account-wide 5 QPS limit')",
        # a Fetch API capability: the Search API's capabilities are not required (pacing is its own profile)
        requires=("web_fetch", "fetch-api", "fetch-pacing"),
        protocol="api",
        opt_in=True,
    ),
    Profile(
        "seed-001-account-route",
        "001",
        "the DeepSeek account route: its account token sent instead of the API key, to every DeepSeek route",
        requires=("web_search", "search-api", "account-route"),
        protocol="api",
        # a target whose host has no DeepSeek account sessions has no such route: not certifying it is no shortfall
        opt_in=True,
    ),
    Profile(
        "shipped-defaults",
        "001",
        "the defaults a deployment ships with: four queries, count 8 (the service's 10 under a larger limit), "
        "ori_question on, Messages search",
        requires=("web_search", "search-api", "messages-search", "shipped-defaults"),
        protocol="api",
        # configure's "defaults": true is a protocol addition; a target without it is judged on the keys it is given
        opt_in=True,
    ),
    Profile(
        "seed-001-live-settings",
        "001",
        "settings saved while the tools run: the next operation resolves the saved key, base and switch, one under "
        "way keeps its snapshot",
        requires=("web_search", "search-api", "live-settings"),
        protocol="api",
        # settings_save is a protocol addition; a target driven only through configure is judged on what it is given
        opt_in=True,
    ),
    Profile(
        "seed-001-request-record",
        "001",
        "the Messages path records the body it sends, thinking disabled included, before dispatch",
        requires=("web_search", "messages-search", "request-record"),
        protocol="messages",
        # recorded_requests is a protocol addition; a target that shows no record is judged on the wire alone
        opt_in=True,
    ),
    Profile(
        "seed-001-fetch-selection",
        "001",
        "either fetch provider selected alone, whichever way the switch is set (the switch's selection otherwise)",
        requires=("web_fetch", "fetch-api", "ssrf-test-mode", "fetch-selection"),
        protocol="api",
        # configure's fetch_provider is a protocol addition; a target configured through the switch alone is judged
        # on what the switch selects
        opt_in=True,
    ),
    Profile(
        "seed-002-evidence",
        "002",
        "the code-only evidence pipeline: no model call, cited lines, local and retry refusals, relevance",
        requires=("web_search", "search-api", "fetch-api", "evidence-search"),
    ),
    Profile(
        "seed-002-evidence-html",
        "002",
        "the evidence pipeline over HTML pages it fetches itself: query-matching text, no markup, no furniture",
        # Messages search leaves fetching to the pipeline's own fetcher, which reads HTML; the test network
        # (ssrf-test-mode) is how the suite serves it pages without leaving loopback.
        requires=("web_search", "messages-search", "ssrf-test-mode", "evidence-search"),
        protocol="messages",
    ),
    Profile(
        "seed-002-citations",
        "002",
        "the source links code attaches to an answer: each source once, after the answer, nothing refused linked",
        requires=("evidence-cite",),
    ),
    Profile(
        "ssrf",
        "002",
        "fetching untrusted URLs: no special-purpose address reached, on any answer, redirect or re-lookup",
        requires=("web_fetch", "ssrf-test-mode"),
    ),
    Profile(
        "seed-003-standalone",
        "003",
        "the standalone model-backed web_search: its request, result bounds, sources and model selection",
        requires=("standalone-search", "standalone-resolve"),
    ),
    Profile(
        "seed-003-deadline",
        "003",
        "the standalone search's 90-second limit per search, waited out (about 95 s; run only when named)",
        requires=("standalone-search",),
        # not run by default, so a run that does not name it shows no shortfall for it
        opt_in=True,
        on_request=True,
    ),
    Profile(
        "seed-003-settings-save",
        "003",
        "saving the assigned search model: only that field changes, a project file's value is shown in effect",
        requires=("standalone-save",),
    ),
    Profile(
        "seed-003-usage",
        "003",
        "the standalone search's usage: tokens and HTTP requests under web-search, owned by its connection and model",
        requires=("standalone-search", "standalone-usage"),
    ),
    Profile(
        "seed-003-tool-list",
        "003",
        "the main model's tools: web_search an ordinary function tool, unchanged across valid search models",
        requires=("standalone-tools",),
    ),
    Profile(
        "seed-003-notice",
        "003",
        "an unusable assigned search model: no search registered, the user told once per runtime assembled",
        requires=("standalone-tools", "standalone-notice"),
    ),
)


class UnknownProfileError(ValueError):
    pass


def find_profile(name: str) -> Profile:
    for profile in PROFILES:
        if profile.name == name:
            return profile
    known = ", ".join(p.name for p in PROFILES)
    raise UnknownProfileError(f"unknown profile {name!r} (known: {known})")


def on_request(names: Iterable[str]) -> bool:
    """Whether a check of the profiles ``names`` runs only when asked for by name: each of them is a known profile
    on request."""
    known = {profile.name: profile for profile in PROFILES}
    wanted = [known.get(name) for name in names]
    return bool(wanted) and all(profile is not None and profile.on_request for profile in wanted)


def _passed_for(result: CheckResult, profile: Profile) -> bool:
    """Passed, for this profile: a check run over several protocols counts by its run on the
    profile's own protocol (a Messages failure does not withhold the Search API profile)."""
    protocols = result.details.get("protocols")
    ran = result.outcome in (Outcome.PASSED, Outcome.FAILED, Outcome.ERROR)
    if ran and profile.protocol is not None and isinstance(protocols, dict) and profile.protocol in protocols:
        return bool(protocols[profile.protocol] == Outcome.PASSED.value)
    return result.outcome is Outcome.PASSED


def profile_verdicts(
    members: dict[str, tuple[str, ...]],
    results: Sequence[CheckResult],
    capabilities: Iterable[str],
    profiles: Sequence[Profile] = PROFILES,
) -> tuple[ProfileVerdict, ...]:
    """One verdict per profile. ``members`` maps each check id to the profiles it belongs to."""
    declared = tuple(capabilities)
    by_id = {r.check.id: r for r in results}
    verdicts: list[ProfileVerdict] = []
    for profile in profiles:
        ids = [i for i, names in members.items() if profile.name in names]
        missing = tuple(profile.missing(declared))
        not_run = tuple(i for i in ids if i not in by_id)
        not_passed = tuple(i for i in ids if i in by_id and not _passed_for(by_id[i], profile))
        certified = bool(ids) and not missing and not not_run and not not_passed
        verdicts.append(ProfileVerdict(profile.name, certified, missing, not_passed, not_run))
    return tuple(verdicts)
