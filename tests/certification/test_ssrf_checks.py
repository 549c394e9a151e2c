"""The SSRF checks (seed 002) over the adapter protocol's test network: the reference and the
example adapter pass; each SSRF break mode of the example adapter fails exactly its check."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import zlib
from ipaddress import ip_network
from pathlib import Path
from typing import Any

import httpx
import pytest

from dsweb_ref import CallContext, FetchBody, FetchRequest, FetchResult, WebError, WebErrorCode
from dsweb_ref.certification.checks import REGISTRY, ssrf_limits
from dsweb_ref.certification.sandbox import PROXY_VARIABLES, SandboxNetwork
from dsweb_ref.certification.targets import (
    InProcessTarget,
    TargetConfig,
    ToolPair,
    reference_settings,
    reference_target,
)
from dsweb_ref.netguard import AddressPolicy, IPAddress, PinnedTransport, check_url, read_capped
from dsweb_ref.providers.http_fetch import HttpFetchConfig, HttpFetchProvider
from dsweb_ref.replay._bases import credential_environ
from dsweb_ref.runtime import build_runtime, http_fetch_config

from ._profile_breaks import assert_break_fails_exactly, certify_only
from .conftest import run
from .test_breaks_end_to_end import example_adapter_module

SSRF_CHECKS = {
    "ssrf.resolve.special_ranges",
    "ssrf.resolve.public_fetched",
    "ssrf.body.decoded",
    "ssrf.resolve.mixed_answers",
    "ssrf.resolve.rebinding",
    "ssrf.redirect.private",
    "ssrf.proxy.ignored",
    "ssrf.caps.body",
    "ssrf.caps.redirects",
    "ssrf.deadline",
    "ssrf.url.odd_text",
}
BREAKS = {
    "ssrf-no-unwrap": ("ssrf.resolve.special_ranges", "nat64-loopback"),
    "ssrf-first-answer-only": ("ssrf.resolve.mixed_answers", "dead-public-then-private"),
    "ssrf-re-resolve": ("ssrf.resolve.rebinding", "a later lookup's answer"),
    "ssrf-redirect-unchecked": ("ssrf.redirect.private", "301-literal"),
}


def test_the_reference_passes_every_ssrf_check_in_process() -> None:
    report = run(reference_target(), only=sorted(SSRF_CHECKS))
    assert {r.check.id: r.outcome.value for r in report.results} == dict.fromkeys(SSRF_CHECKS, "passed")


def test_ssrf_checks_cite_seed_002_and_carry_case_tables() -> None:
    for check_id in SSRF_CHECKS:
        spec = REGISTRY[check_id]
        assert spec.check.seed == "002" and spec.rule.startswith("Seed 002:")
        assert spec.cases and all(case.catches for case in spec.cases)
        assert spec.requires == ("web_fetch", "ssrf-test-mode")


def test_an_adapter_without_test_mode_skips_them(tmp_path: Path) -> None:
    code, _data, outcomes = certify_only("ssrf", tmp_path, "--without", "ssrf-test-mode")
    # Skipped, never passed (and a run where everything skipped certifies nothing).
    assert code == 1 and set(outcomes.values()) == {"skipped"}


# A fresh lookup on every connection rebinds a same-host redirect's hop too: ssrf.redirect.private's
# same-host-rebound row sees it as well as ssrf.resolve.rebinding.
ALSO_FAILED = {"ssrf-re-resolve": {"ssrf.redirect.private"}}


@pytest.mark.parametrize("mode", sorted(BREAKS))
def test_each_ssrf_break_fails_exactly_its_check(mode: str, tmp_path: Path) -> None:
    assert_break_fails_exactly("ssrf", mode, *BREAKS[mode], tmp_path, also=ALSO_FAILED.get(mode))


def test_the_example_adapter_passes_every_ssrf_check(tmp_path: Path) -> None:
    code, _data, outcomes = certify_only("ssrf", tmp_path)
    assert code == 0 and outcomes == dict.fromkeys(SSRF_CHECKS, "passed")


def test_an_in_process_target_runs_with_the_proxy_traps_in_its_environment_and_gets_it_back() -> None:
    seen: dict[str, str | None] = {}
    target = reference_target()
    before = {name: os.environ.get(name) for name in (*PROXY_VARIABLES, "NO_PROXY")}
    target.use_environment({"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1"})
    seen.update(HTTP_PROXY=os.environ.get("HTTP_PROXY"), NO_PROXY=os.environ.get("NO_PROXY"))
    asyncio.run(target.close())
    assert seen == {"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1"}
    assert {name: os.environ.get(name) for name in before} == before


def test_an_in_process_fetcher_that_honours_proxy_variables_is_caught_in_process() -> None:
    """The in-process path is no blind spot: the run's proxy variables reach the process environment."""
    broken: Any = example_adapter_module()

    def build(config: TargetConfig) -> ToolPair:
        settings = reference_settings(config)
        network = SandboxNetwork.from_json(config.test_network)
        http = broken.sandboxed_fetch("ssrf-env-proxy", settings, network) if network is not None else None
        runtime = build_runtime(lambda: settings, environ=credential_environ(config.api_key), http_fetch=http)
        return ToolPair(search=runtime.search_tool(), fetch=runtime.fetch_tool())

    report = run(InProcessTarget(build, name="proxied", version="0"), only=["ssrf.proxy.ignored"])
    (result,) = report.results
    assert result.outcome.value == "failed" and "the fetch went through the proxy named by" in result.reason


class PerReadTimeout(HttpFetchProvider):
    """A timeout per socket read (httpx's own), no deadline over the whole fetch."""

    async def fetch(self, request: FetchRequest, ctx: CallContext | None = None) -> FetchResult:
        url = check_url(request.url, max_length=self.config.max_url_length, policy=self.policy)
        transport = PinnedTransport(self._backend, self._ssl())
        async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=self.config.timeout_s) as client:
            try:
                response = await client.send(client.build_request("GET", url), stream=True)
                try:
                    return await self.body(url, response)
                finally:
                    await response.aclose()
            except httpx.HTTPError as exc:
                raise WebError(WebErrorCode.PROVIDER_ERROR, repr(exc)) from exc

    async def body(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
        return await self._read(url, response)


class DeadlineOverBodyOnly(PerReadTimeout):
    """Per-read timeouts until the headers are in; the one deadline only over the body."""

    async def body(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
        async with asyncio.timeout(self.config.timeout_s):
            return await self._read(url, response)


def fetch_only_target(fetcher: type[HttpFetchProvider]) -> InProcessTarget:
    def build(config: TargetConfig) -> ToolPair:
        settings = reference_settings(config)
        network = SandboxNetwork.from_json(config.test_network)
        http = None
        if network is not None:
            http = fetcher(http_fetch_config(settings), resolver=network.resolver(), dialer=network.dialer())
        runtime = build_runtime(lambda: settings, environ=credential_environ(config.api_key), http_fetch=http)
        return ToolPair(search=runtime.search_tool(), fetch=runtime.fetch_tool())

    return InProcessTarget(build, name=fetcher.__name__, version="0")


# A wrong reading of "one deadline", and which rows of ssrf.deadline pass or fail it.
PerHopDeadline: type[HttpFetchProvider] = example_adapter_module().PerHopDeadlineFetch  # ssrf-deadline-per-hop
# (The first two follow no redirect: they answer with the first 302 in time, which slow-hops accepts;
# PerHopDeadline is the reading that row is for.)
# Each connects under its deadline, so each also passes slow-connect (review R4's row, test_review_r4_readings).
CONNECTS = {"slow-connect": "passed", "silent-half-second": "passed"}  # and each keeps a half-second deadline (W1-2)
DEADLINE_READINGS = {
    PerHopDeadline: {"silent": "passed", "drip-body": "passed", "drip-headers": "passed", "slow-hops": "failed"},
    PerReadTimeout: {"silent": "passed", "drip-body": "failed", "drip-headers": "failed", "slow-hops": "passed"},
    DeadlineOverBodyOnly: {"silent": "passed", "drip-body": "passed", "drip-headers": "failed", "slow-hops": "passed"},
}


@pytest.mark.parametrize("fetcher", list(DEADLINE_READINGS), ids=lambda f: f.__name__)
def test_each_deadline_row_catches_the_reading_it_names(fetcher: type[HttpFetchProvider]) -> None:
    # One run of every row at once (the check's own way); a row fails when it was late beyond the load in
    # every attempt, which the failure's details list per attempt (late_claims).
    (result,) = run(fetch_only_target(fetcher), only=["ssrf.deadline"]).results
    attempts = result.details.get("attempts", []) if result.outcome.value == "failed" else []
    assert isinstance(attempts, list)
    late = [{claim.split(":", 1)[0] for claim in attempt["late_claims"]} for attempt in attempts]
    outcomes = {case.name: "failed" if late and all(case.name in rows for rows in late) else "passed"
                for case in ssrf_limits.DEADLINE_CASES}
    assert outcomes == CONNECTS | DEADLINE_READINGS[fetcher], (result.reason, attempts)


class DeclaredLengthOnly(HttpFetchProvider):
    """A declared Content-Length over the cap is refused; any other body is read to its end."""

    async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
        if int(response.headers.get("content-length") or 0) > self.config.max_response_bytes:
            raise WebError(WebErrorCode.FETCH_TOO_LARGE, "too large")
        text = (await response.aread()).decode("utf-8", "replace")
        return FetchResult(url=str(url), status_code=response.status_code, body=FetchBody("text", text))


class WireBytesCap(HttpFetchProvider):
    """The cap counts the bytes on the wire; what they inflate to is not bounded."""

    async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
        raw, cut = await read_capped(response.aiter_raw(), self.config.max_response_bytes)
        if response.headers.get("content-encoding"):
            raw = zlib.decompress(raw, wbits=47)  # zlib or gzip framing
        return FetchResult(url=str(url), status_code=response.status_code, body=FetchBody("text", raw.decode()),
                           truncated=cut)


BODY_READINGS = {
    # httpx's own reading inflates both codings of "gzip, gzip" whole
    DeclaredLengthOnly: {"declared": "passed", "undeclared": "failed", "gzip-bomb": "failed",
                         "deflate-bomb": "failed", "stacked-bomb": "failed"},
    # one inflating of the capped wire bytes leaves the inner gzip packed: undecodable text, a WEB_* refusal
    WireBytesCap: {"declared": "passed", "undeclared": "passed", "gzip-bomb": "failed", "deflate-bomb": "failed",
                   "stacked-bomb": "passed"},
}


@pytest.mark.parametrize("fetcher", list(BODY_READINGS), ids=lambda f: f.__name__)
def test_each_body_cap_row_catches_the_reading_it_names(
    fetcher: type[HttpFetchProvider], monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes = {}
    monkeypatch.setattr(ssrf_limits, "PIECE_CASES", ())  # rows of their own (test_netguard_readings.py)
    monkeypatch.setattr(ssrf_limits, "PAST_CASES", ())  # a page read to its end fails it too (its own break)
    monkeypatch.setattr(ssrf_limits, "HUGE_CASES", ())  # likewise (rows of their own: test_hunt_q_f_readings.py)
    for case in ssrf_limits.BODY_CASES:
        monkeypatch.setattr(ssrf_limits, "BODY_CASES", (case,))
        (result,) = run(fetch_only_target(fetcher), only=["ssrf.caps.body"]).results
        outcomes[case.name] = result.outcome.value
    monkeypatch.undo()
    assert outcomes == BODY_READINGS[fetcher]


class CutUnmarked(HttpFetchProvider):
    """Cuts a page at the cap, as the reference does, but never says it was cut."""

    async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
        return dataclasses.replace(await super()._read(url, response), truncated=False)


class CapOneShort(HttpFetchProvider):
    """The cap read as 'fewer than fetch_max_bytes': a page of exactly the cap is refused."""

    def __init__(self, config: HttpFetchConfig, **kwargs: Any) -> None:
        super().__init__(dataclasses.replace(config, max_response_bytes=config.max_response_bytes - 1), **kwargs)


@pytest.mark.parametrize(("fetcher", "reason"), [
    (CutUnmarked, "undeclared: the page was cut to the cap but truncated is not true"),
    (CapOneShort, "at-cap: a page of exactly the 256-byte cap was refused"),
])
def test_a_cut_left_unmarked_and_a_cap_one_short_fail_the_body_cap_check(
    fetcher: type[HttpFetchProvider], reason: str
) -> None:
    (result,) = run(fetch_only_target(fetcher), only=["ssrf.caps.body"]).results
    assert result.outcome.value == "failed" and result.reason.startswith(reason), result.reason


async def through_environment_proxies(fetcher: HttpFetchProvider, url: httpx.URL) -> FetchResult:
    async with httpx.AsyncClient(trust_env=True, timeout=5.0) as client:
        try:
            response = await client.send(client.build_request("GET", url), stream=True)
        except httpx.HTTPError as exc:
            raise WebError(WebErrorCode.PROVIDER_ERROR, repr(exc)) from exc
        try:
            return await fetcher._read(url, response)
        finally:
            await response.aclose()


class HttpsProxied(HttpFetchProvider):
    """Only https URLs go through a client that reads the proxy variables."""

    async def _follow(self, url: httpx.URL, ctx: CallContext) -> FetchResult:
        if url.scheme != "https":
            return await super()._follow(url, ctx)
        return await through_environment_proxies(self, url)


class _Hop(Exception):
    def __init__(self, target: httpx.URL) -> None:
        self.target = target


class HopsProxied(HttpFetchProvider):
    """The first request is pinned; a redirect hop is fetched by a client that reads the proxy variables."""

    def _next_hop(self, url: httpx.URL, response: httpx.Response, hops: int) -> httpx.URL:
        raise _Hop(super()._next_hop(url, response, hops))

    async def _follow(self, url: httpx.URL, ctx: CallContext) -> FetchResult:
        try:
            return await super()._follow(url, ctx)
        except _Hop as hop:
            return await through_environment_proxies(self, hop.target)


PROXY_READINGS = {
    HttpsProxied: {"http": "passed", "https": "failed", "redirect-hop": "passed"},
    HopsProxied: {"http": "passed", "https": "passed", "redirect-hop": "failed"},
}


@pytest.mark.parametrize("fetcher", list(PROXY_READINGS), ids=lambda f: f.__name__)
def test_each_proxy_row_catches_the_reading_it_names(
    fetcher: type[HttpFetchProvider], monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes = {}
    for case in ssrf_limits.PROXY_CASES:
        monkeypatch.setattr(ssrf_limits, "PROXY_CASES", (case,))
        (result,) = run(fetch_only_target(fetcher), only=["ssrf.proxy.ignored"]).results
        outcomes[case.name] = result.outcome.value
    monkeypatch.undo()
    assert outcomes == PROXY_READINGS[fetcher]


def _with_policy(policy: type[AddressPolicy], name: str) -> type[HttpFetchProvider]:
    class PolicyFetch(HttpFetchProvider):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, policy=policy(), **kwargs)

    PolicyFetch.__name__ = name
    return PolicyFetch


def _reading(network: str, *, refused: bool) -> type[HttpFetchProvider]:
    """A fetcher whose address policy reads one range wrongly: lets it through (a special range read too
    narrow or not known), or with ``refused`` also refuses it (a special range read too wide)."""
    net = ip_network(network)

    class Reading(AddressPolicy):
        def blocked_reason(self, address: IPAddress) -> str | None:
            if address.version == net.version and address in net:
                return "read too wide" if refused else None
            return super().blocked_reason(address)

    return _with_policy(Reading, f"{'Refusing' if refused else 'BlindTo'}{network}")


PUBLIC = "ssrf.resolve.public_fetched"
# row -> the one wrong reading of a range it catches first (the first row of its check to fail):
# special_ranges rows catch a range let through (added by red-teaming; the far end of ranges read too
# narrow: loopback as 127.0.0.1 alone, the rest as /16); public_fetched rows a range read one bit too wide.
RANGE_READINGS = {
    "local-use-nat64": ("ssrf.resolve.special_ranges", "64:ff9b:1::/48"),
    "site-local": ("ssrf.resolve.special_ranges", "fec0::/10"),
    "loopback-other": ("ssrf.resolve.special_ranges", "127.8.0.0/16"),
    "private-10-end": ("ssrf.resolve.special_ranges", "10.128.0.0/9"),
    "private-172-end": ("ssrf.resolve.special_ranges", "172.24.0.0/13"),
    "cgnat-end": ("ssrf.resolve.special_ranges", "100.96.0.0/11"),
    "benchmark-end": ("ssrf.resolve.special_ranges", "198.19.0.0/16"),
    "private-192-end": ("ssrf.resolve.special_ranges", "192.168.128.0/17"),
    "link-local-end": ("ssrf.resolve.special_ranges", "169.254.192.0/18"),
    "unspecified-other": ("ssrf.resolve.special_ranges", "0.1.0.0/16"),
    "ula-fc": ("ssrf.resolve.special_ranges", "fc00::/8"),
    "ipv6-link-local-end": ("ssrf.resolve.special_ranges", "febf::/16"),
    # Written ::ffff:169.254.169.254 in the row, dialled as ::ffff:a9fe:a9fe: the trap answers both texts.
    "mapped-metadata": ("ssrf.resolve.special_ranges", "::ffff:a9fe:a9fe/128"),
    "translated-private": ("ssrf.resolve.special_ranges", "::ffff:0:0:0/96"),
    "compatible-private": ("ssrf.resolve.special_ranges", "::a00:0/104"),
    "ipv6-unspecified": ("ssrf.resolve.special_ranges", "::/128"),
    "after-10": (PUBLIC, "10.0.0.0/7"),
    "before-127": (PUBLIC, "126.0.0.0/7"),
    "before-172-16": (PUBLIC, "172.0.0.0/11"),
    "after-192-168": (PUBLIC, "192.168.0.0/15"),
    "before-cgnat": (PUBLIC, "100.0.0.0/9"),
    "after-link-local": (PUBLIC, "169.254.0.0/15"),
    "before-benchmark": (PUBLIC, "198.16.0.0/14"),
    "after-172-16": (PUBLIC, "172.32.0.0/16"),
    "after-cgnat": (PUBLIC, "100.128.0.0/16"),
    "after-benchmark": (PUBLIC, "198.20.0.0/16"),
    "after-127": (PUBLIC, "128.0.0.0/16"),
}


@pytest.mark.parametrize("row", sorted(RANGE_READINGS))
def test_each_range_row_catches_the_reading_it_names(row: str) -> None:
    check_id, network = RANGE_READINGS[row]
    (result,) = run(fetch_only_target(_reading(network, refused=check_id == PUBLIC)), only=[check_id]).results
    assert result.outcome.value == "failed" and result.reason.startswith(f"{row} ("), result.reason
    assert check_id != PUBLIC or "a public address was refused" in result.reason


def test_the_ipv6_row_catches_every_ipv6_address_read_as_its_last_32_bits() -> None:
    low_bits: type[AddressPolicy] = example_adapter_module().LowBitsPolicy  # ssrf-v6-low-bits
    (result,) = run(fetch_only_target(_with_policy(low_bits, "LowBits")), only=[PUBLIC]).results
    assert result.outcome.value == "failed", result.reason
    assert result.reason.startswith("ipv6-low-bits-private (2606:4700::a00:7): a public address was refused")


def test_a_fetcher_that_refuses_every_ipv6_address_stays_certified_for_public_addresses() -> None:
    """Seed-open: no seed makes a fetcher use IPv6; refusing the control refuses the IPv6 rows with it."""
    (result,) = run(fetch_only_target(_reading("::/0", refused=True)), only=[PUBLIC]).results
    assert result.outcome.value == "passed", result.reason


def test_a_fetcher_that_fetches_no_public_address_fails_at_the_first_row() -> None:
    (result,) = run(fetch_only_target(_reading("0.0.0.0/0", refused=True)), only=[PUBLIC]).results
    assert result.outcome.value == "failed" and result.reason.startswith("after-10 (11.0.0.7)"), result.reason


ODD = "ssrf.url.odd_text"


def _odd_outcome() -> tuple[str, str]:
    (result,) = run(reference_target(), only=[ODD]).results
    return result.outcome.value, result.reason


def test_odd_url_texts_fetched_from_the_public_host_they_name_stay_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed-open: no seed fixes URL syntax, length or port range; only the host connected to matters."""
    import dsweb_ref.netguard.urls as urls

    monkeypatch.setattr(urls, "check_url_text", lambda raw: None)
    monkeypatch.setattr("dsweb_ref.providers.http_fetch.check_url_text", lambda raw: None)
    assert _odd_outcome() == ("passed", "")


def test_an_odd_url_refused_without_a_web_code_fails_the_odd_text_check(monkeypatch: pytest.MonkeyPatch) -> None:
    import dsweb_ref.netguard.urls as urls

    def codeless(raw: str) -> None:
        if "\u2028" in raw:
            raise WebError(None, "refused")  # type: ignore[arg-type]  # wrong: the code is lost

    monkeypatch.setattr(urls, "check_url_text", codeless)
    outcome, reason = _odd_outcome()
    assert outcome == "failed" and "line-separator" in reason and "not a WEB_* code" in reason


@pytest.mark.parametrize("name", ["drip-body", "drip-headers", "slow-hops"])
def test_a_slow_server_counts_as_ended_before_its_last_byte_goes_out(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fetcher without a deadline reads the last byte and may answer before the server's thread runs
    # again; that answer must still read "only once the server ended", not pass as one in time (under
    # load the check then failed for another reason than the break it catches).
    import threading
    from types import SimpleNamespace

    finished: set[str] = set()
    path = ssrf_limits._last_path(name)
    ended_at_write: list[bool] = []

    class Out:
        def write(self, data: bytes) -> None:
            ended_at_write.append(path in finished)

        def flush(self) -> None:
            pass

    server = SimpleNamespace(stop=threading.Event(), finished=finished)
    handler: Any = SimpleNamespace(server=server, path=path, wfile=Out(), request_version="HTTP/1.0")
    if name == "slow-hops":
        sent: list[int] = []
        handler.send_response = lambda status: sent.append(path in finished)
        handler.send_header = lambda *a: None
        handler.end_headers = lambda: None
        monkeypatch.setattr(ssrf_limits, "HOP_WAIT", 0.0)
        ssrf_limits._slow_hop(handler)
        assert sent == [True]
        return
    pieces = [b"x1", b"x2", b"last"]
    monkeypatch.setattr(ssrf_limits, "DRIP", 0.0)
    ssrf_limits._drip(handler, pieces)
    assert ended_at_write == [False, False, True]


def _odd_row(name: str, monkeypatch: pytest.MonkeyPatch, target: InProcessTarget | None = None) -> tuple[str, str]:
    from dsweb_ref.certification.checks import ssrf

    row = next(c for c in ssrf.ODD_URLS if c.name == name)
    monkeypatch.setattr(ssrf, "ODD_URLS", (row,))
    (result,) = run(target or reference_target(), only=[ODD]).results
    return result.outcome.value, result.reason


HOST_ROWS = ("localhost", "hex-host", "single-label", "numeric-last-label", "invalid-label", "percent-in-host",
             "no-host")


@pytest.mark.parametrize("row", HOST_ROWS)
def test_each_host_row_catches_a_host_refusal_without_a_web_code(row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from dsweb_ref.netguard import hosts

    def codeless(host: str) -> Any:
        try:
            return hosts.parse_host(host)
        except WebError as error:
            raise WebError(None, error.message) from None  # type: ignore[arg-type]  # wrong: the code is lost

    assert _odd_row(row, monkeypatch) == ("passed", "")  # each row alone, and the reference passes it
    monkeypatch.setattr("dsweb_ref.netguard.urls.parse_host", codeless)
    outcome, reason = _odd_row(row, monkeypatch)
    assert outcome == "failed" and reason.startswith(f"{row} (") and "not a WEB_* code" in reason, reason


@pytest.mark.parametrize("row", ["localhost", "hex-host"])
def test_a_host_taken_for_a_name_and_dialled_unchecked_fails_its_odd_row(
    row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test network resolves localhost and 0x7f.1 to 127.0.0.1, as getaddrinfo does."""
    for module in ("urls", "resolve"):
        monkeypatch.setattr(f"dsweb_ref.netguard.{module}.parse_host", lambda host: host.lower())
    outcome, reason = _odd_row(row, monkeypatch, fetch_only_target(_reading("127.0.0.0/8", refused=False)))
    assert outcome == "failed" and "a connection reached a non-public address" in reason, reason


def test_a_guard_that_refuses_every_ip_literal_is_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    # No seed says a URL may name its host by address: refusing every literal is a policy, not a misreading.
    from dsweb_ref.netguard import hosts

    def no_literals(host: str) -> Any:
        parsed = hosts.parse_host(host)
        if not isinstance(parsed, str):
            raise WebError(WebErrorCode.BLOCKED_URL, "IP literals are not allowed")
        return parsed

    for module in ("urls", "resolve"):
        monkeypatch.setattr(f"dsweb_ref.netguard.{module}.parse_host", no_literals)
    (result,) = run(reference_target(), only=[PUBLIC]).results
    assert result.outcome.value == "passed", result.reason


def test_an_octet_of_255_read_as_out_of_range_fails_the_literal_255_row(monkeypatch: pytest.MonkeyPatch) -> None:
    from dsweb_ref.netguard import hosts

    right = hosts.parse_ipv4_literal
    monkeypatch.setattr(hosts, "parse_ipv4_literal", lambda h: None if "255" in h.split(".")[:-1] else right(h))
    (result,) = run(reference_target(), only=[PUBLIC]).results
    assert result.outcome.value == "failed" and result.reason.startswith("literal-255 (93.184.255.14)"), result.reason


def _codeless(name: str, lost: Any) -> type[HttpFetchProvider]:
    """The reference fetcher whose errors for which ``lost(error)`` holds lose their code (a failure that
    reaches the model as no WEB_* error)."""

    class Codeless(HttpFetchProvider):
        async def fetch(self, request: FetchRequest, ctx: CallContext | None = None) -> FetchResult:
            try:
                return await super().fetch(request, ctx)
            except WebError as error:
                if lost(error):
                    raise WebError(None, error.message) from error  # type: ignore[arg-type]  # wrong: no code
                raise

    Codeless.__name__ = name
    return Codeless


class PathlessUrl(HttpFetchProvider):
    """A success names its page's origin, not the URL fetched (its path lost)."""

    async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchResult:
        result = await super()._read(url, response)
        return dataclasses.replace(result, url=str(url.copy_with(raw_path=b"/")))


# Rows the http fetcher's mutation run showed missing (issue 24): the wrong fetcher, its check, and the
# start of the reason it fails with (its first row to fail).
FAILURE_READINGS = {
    "refused-connection": (_codeless("CodelessConnect", lambda e: e.code == WebErrorCode.PROVIDER_ERROR),
                           "ssrf.resolve.mixed_answers", "dead-public-only: error code 'None'"),
    "invalid-location": (_codeless("CodelessInvalidUrl", lambda e: e.code == WebErrorCode.INVALID_URL),
                         "ssrf.redirect.private", "invalid-location: error code 'None'"),
    "no-location": (_codeless("CodelessNoLocation", lambda e: "without a Location" in e.message),
                    "ssrf.redirect.private", "no-location: error code 'None'"),
    "over-the-hop-cap": (_codeless("CodelessHopCap", lambda e: "exceeded the maximum" in e.message),
                         "ssrf.caps.redirects", "chain: error code 'None'"),
    "url-without-path": (PathlessUrl, "ssrf.resolve.public_fetched", "after-10 (11.0.0.7): the result names"),
}


@pytest.mark.parametrize("reading", sorted(FAILURE_READINGS))
def test_each_failure_row_catches_the_reading_it_names(reading: str) -> None:
    fetcher, check_id, reason = FAILURE_READINGS[reading]
    (result,) = run(fetch_only_target(fetcher), only=[check_id]).results
    assert result.outcome.value == "failed" and result.reason.startswith(reason), result.reason


def test_a_target_refusing_a_redirect_cap_of_0_is_not_failed_by_the_zero_hops_row() -> None:
    # catches: the zero-hops row failing the whole check of a target that refuses fetch_max_redirects 0 at
    # configure (the protocol allows 0, but no seed makes a target accept it)
    inner = fetch_only_target(HttpFetchProvider)

    def build(config: TargetConfig) -> ToolPair:
        if config.fetch_max_redirects == 0:
            raise WebError(WebErrorCode.CONFIG_INVALID, "fetch_max_redirects must be at least 1")
        return inner._build(config)

    (result,) = run(InProcessTarget(build, name="no-zero", version="0"), only=["ssrf.caps.redirects"]).results
    assert result.outcome.value == "passed", result.reason
    assert "zero-hops" in str(result.details.get("ssrf.caps.redirects")), result.details


def test_a_fetcher_hanging_up_mid_body_prints_no_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    """A fetcher keeping its cap closes the page server's connection mid-body; socketserver printed that
    BrokenPipeError's traceback to the terminal of every certify run (ssrf.caps.body), as if the suite broke."""
    import socket
    import struct
    import time

    from dsweb_ref.certification.checks import ssrf

    with ssrf._network() as net:
        net.pages.special["/big"] = lambda handler: handler._send(b"a" * 8_000_000)
        host, port = net.pages.server_address[:2]
        with socket.create_connection((str(host), int(port))) as sock:
            sock.sendall(b"GET /big HTTP/1.0\r\nHost: x\r\n\r\n")
            assert sock.recv(1024)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        for _ in range(500):  # the handler ends once its write fails (a liveness bound, not a timing claim)
            if "/big" in net.pages.finished:
                break
            time.sleep(0.01)
        assert "/big" in net.pages.finished
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err, err
