"""``dsweb record`` against the emulator: success, no overwrite, a cassette marked failed for a probe the
endpoint failed and none for a leaking one, scrubbing of an echoed key, and rate-limit spacing on an injected clock."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from dsweb_ref.certification.endpoint import certify_endpoint
from dsweb_ref.certification.model import Outcome
from dsweb_ref.cli import record as record_cli
from dsweb_ref.emulator import Delay, Emulator, Status
from dsweb_ref.emulator.fixtures import EmulatorFactory
from dsweb_ref.replay.cassettes import KEY_PLACEHOLDER, load_cassette, provenance_of, scan_tree
from dsweb_ref.replay.probes import ACCOUNT_PLACEHOLDER, PROBES, Probe, ProbeContext, RateLimiter, get_probe
from dsweb_ref.replay.record import (
    EMULATOR_LABEL,
    CassetteWriteError,
    RecordResult,
    RecordTarget,
    record_probes,
    replay_probe,
)

from .conftest import CASSETTES

FIXED_NOW = datetime(2026, 10, 16, 12, 0, tzinfo=UTC)


def _target(emu: Emulator, key: str) -> RecordTarget:
    return RecordTarget(emu.messages_base, emu.tools_base, key, emulator=emu)


def _record(emu: Emulator, key: str, out: Path, probes: list[Any], **kwargs: Any) -> list[RecordResult]:
    return asyncio.run(record_probes(probes, _target(emu, key), out, now=lambda: FIXED_NOW, max_rps=100, **kwargs))


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_records_scrubbed_cassettes_with_provenance(emulator: Emulator, emulator_api_key: str, tmp_path: Path) -> None:
    results = _record(
        emulator, emulator_api_key, tmp_path, ["search-api.basic", "fetch-api.success", "messages.search"]
    )
    assert [r.status for r in results] == ["recorded"] * 3, results
    assert _files(tmp_path) == sorted(
        tmp_path / p for p in ("search-api/basic.yaml", "fetch-api/success.yaml", "messages/search.yaml")
    )
    data = load_cassette(tmp_path / "messages" / "search.yaml")
    provenance = data["provenance"]
    assert provenance["recorded_against"] == EMULATOR_LABEL
    assert provenance["recorded_at"] == "2026-10-16" and provenance["probe"] == "messages.search"
    assert not scan_tree([tmp_path], literals=[emulator_api_key])
    assert emulator_api_key not in (tmp_path / "messages" / "search.yaml").read_text("utf-8")
    # and what was written replays offline
    run = asyncio.run(replay_probe(get_probe("messages.search"), tmp_path / "messages" / "search.yaml"))
    assert run.exchanges[0].status == 200


def test_refuses_to_overwrite_without_the_flag(emulator: Emulator, emulator_api_key: str, tmp_path: Path) -> None:
    assert _record(emulator, emulator_api_key, tmp_path, ["fetch-api.success"])[0].status == "recorded"
    path = tmp_path / "fetch-api" / "success.yaml"
    path.write_text(path.read_text("utf-8").replace("2026-10-16", "2000-01-01"), "utf-8")
    before = path.read_text("utf-8")
    result = _record(emulator, emulator_api_key, tmp_path, ["fetch-api.success"])[0]
    assert result.status == "exists" and path.read_text("utf-8") == before
    assert _record(emulator, emulator_api_key, tmp_path, ["fetch-api.success"], overwrite=True)[0].status == "recorded"
    assert "2026-10-16" in path.read_text("utf-8")
    assert _files(tmp_path) == [path]  # no staging files left


def test_a_probe_the_endpoint_failed_keeps_a_cassette_marked_failed(
    emulator: Emulator, emulator_api_key: str, tmp_path: Path
) -> None:
    """A wrong status or no answer in time is the endpoint's failure: the cassette is kept, marked failed,
    so a replay judges what the endpoint answered (hunt Q-G2) instead of skipping the check."""
    base = get_probe("search-api.basic")
    expects_ok_gets_400 = Probe(
        "search-api.wrong", "expects 200, gets 400", "search", frozenset({200}), base.runner, {"query": "q" * 129}
    )
    slow = Probe(
        "search-api.slow",
        "answers after the probe timeout",
        "search",
        frozenset({200}),
        base.runner,
        base.params,
        fault=lambda emu: Delay(5.0),
    )
    results = _record(emulator, emulator_api_key, tmp_path, [expects_ok_gets_400, slow], timeout_s=0.5)
    assert [r.status for r in results] == ["failed", "failed"]
    assert "unexpected status" in results[0].reason and "HTTP 400" in results[0].reason
    assert "timed out" in results[1].reason
    wrong, slow_path = tmp_path / "search-api" / "wrong.yaml", tmp_path / "search-api" / "slow.yaml"
    assert _files(tmp_path) == [slow_path, wrong] and [r.path for r in results] == [wrong, slow_path]
    assert provenance_of(wrong)["failed"].startswith("unexpected status") and "HTTP 400" in wrong.read_text()
    assert provenance_of(slow_path)["failed"] == "timed out after 0.5s"
    assert load_cassette(slow_path)["interactions"] == []  # no answer came: a replay has nothing to match


def test_a_cassette_marked_failed_is_recorded_again_without_the_flag(
    emulator: Emulator, emulator_api_key: str, tmp_path: Path
) -> None:
    """A 5xx (or a 429, or a timeout) while recording leaves a cassette marked failed; that is not a recording
    of the probe, so a plain re-run records it again and replaces it, and only a good cassette is "exists"."""
    basic = get_probe("search-api.basic")
    passing_outage = replace(basic, fault=lambda emu: Status(503, "overloaded"))
    first = _record(emulator, emulator_api_key, tmp_path, [passing_outage])[0]
    path = tmp_path / "search-api" / "basic.yaml"
    assert first.status == "failed" and "failed" in provenance_of(path)
    again = _record(emulator, emulator_api_key, tmp_path, [basic])[0]
    assert again.status == "recorded" and again.reason.startswith("replaced the cassette marked failed: unexpected")
    assert "failed" not in provenance_of(path) and _files(tmp_path) == [path]
    assert _record(emulator, emulator_api_key, tmp_path, [basic])[0].status == "exists"


def test_a_cassette_marked_failed_replays_by_the_live_verdict(
    emulator: Emulator, emulator_api_key: str, tmp_path: Path
) -> None:
    """The mark alone decides nothing: a 500 where fetch-api.not-found expected a 404 is marked failed, yet the
    unavailable-page check accepts any non-auth retrieval failure, live and replayed alike."""
    outage = replace(get_probe("fetch-api.not-found"), fault=lambda emu: Status(500, "internal"))
    assert _record(emulator, emulator_api_key, tmp_path, [outage])[0].status == "failed"
    _, results = certify_endpoint(messages_base=None, tools_base=None, cassette_dir=tmp_path)
    page = next(r for r in results if r.check.id == "endpoint.fetch.unavailable_page")
    assert page.outcome == Outcome.PASSED and page.details["recorded_failure"].startswith("unexpected status")


def test_an_unreadable_cassette_is_never_replaced_without_the_flag(
    emulator: Emulator, emulator_api_key: str, tmp_path: Path
) -> None:
    path = tmp_path / "search-api" / "basic.yaml"
    path.parent.mkdir()
    path.write_text("not: [a cassette", "utf-8")
    assert _record(emulator, emulator_api_key, tmp_path, ["search-api.basic"])[0].status == "exists"
    assert path.read_text("utf-8") == "not: [a cassette"


def test_an_echoed_key_is_scrubbed(emulator: Emulator, emulator_api_key: str, tmp_path: Path) -> None:
    body = f'{{"error":{{"message":"key {emulator_api_key} is not allowed"}}}}'.encode()
    base = get_probe("search-api.basic")
    echo = Probe(
        "search-api.echo",
        "echoes the key",
        "search",
        frozenset({400}),
        base.runner,
        base.params,
        fault=lambda emu: Status(400, body=body),
    )
    assert _record(emulator, emulator_api_key, tmp_path, [echo])[0].status == "recorded"
    text = (tmp_path / "search-api" / "echo.yaml").read_text("utf-8")
    assert emulator_api_key not in text and f"key {KEY_PLACEHOLDER} is not allowed" in text
    interaction = load_cassette(tmp_path / "search-api" / "echo.yaml")["interactions"][0]
    assert interaction["response"]["headers"]["content-length"] == [str(len(interaction["response"]["body"]["string"]))]


def test_an_echoed_account_token_is_scrubbed_as_its_own_placeholder(
    emulator: Emulator, emulator_api_key: str, emulator_account_token: str, tmp_path: Path
) -> None:
    body = f'{{"error":{{"message":"token {emulator_account_token} is not allowed"}}}}'.encode()
    echo = replace(
        get_probe("search-api.account-token"),
        id="search-api.account-echo",
        expect_status=frozenset({400}),
        fault=lambda emu: Status(400, body=body),
    )
    target = RecordTarget(
        emulator.messages_base, emulator.tools_base, emulator_api_key, emulator, account_token=emulator_account_token
    )
    results = asyncio.run(record_probes([echo], target, tmp_path, now=lambda: FIXED_NOW, max_rps=100))
    assert results[0].status == "recorded", results
    path = tmp_path / "search-api" / "account-echo.yaml"
    text = path.read_text("utf-8")
    assert emulator_account_token not in text and f"token {ACCOUNT_PLACEHOLDER} is not allowed" in text
    assert KEY_PLACEHOLDER not in load_cassette(path)["interactions"][0]["response"]["body"]["string"]
    headers = load_cassette(path)["interactions"][0]["request"]["headers"]
    assert headers["authorization"] == [f"Bearer {ACCOUNT_PLACEHOLDER}"]
    assert not scan_tree([tmp_path], literals=[emulator_api_key, emulator_account_token])


def test_account_probes_need_an_account_token(emulator_factory: EmulatorFactory, tmp_path: Path) -> None:
    emu = emulator_factory(api_keys=("dsweb-key-only-0001",))  # accepts no account token
    target = RecordTarget(emu.messages_base, emu.tools_base, "dsweb-key-only-0001", emulator=emu)
    results = asyncio.run(record_probes(["search-api.account-token"], target, tmp_path, max_rps=100))
    assert results[0].status == "skipped" and "account token" in results[0].reason
    assert _files(tmp_path) == []


def test_an_account_probe_that_sends_the_key_is_not_recorded(
    emulator: Emulator, emulator_api_key: str, tmp_path: Path
) -> None:
    base = get_probe("search-api.account-token")

    async def key_instead(ctx: ProbeContext) -> Any:
        ctx.overrides = {}  # back on the API-key route: the emulator accepts it, the recorder must not
        return await base.runner(ctx)

    wrong = replace(base, id="search-api.key-instead", runner=key_instead)
    result = _record(emulator, emulator_api_key, tmp_path, [wrong])[0]
    assert result.status == "failed" and "did not carry the account token" in result.reason
    assert _files(tmp_path) == []


def test_a_followed_redirect_is_not_recorded(emulator: Emulator, emulator_api_key: str, tmp_path: Path) -> None:
    redirect = get_probe("fetch-api.redirect")

    async def follows(ctx: ProbeContext) -> Any:
        outcomes = await redirect.runner(ctx)
        async with httpx.AsyncClient(transport=ctx.transport) as client:  # what a provider must never do
            await client.get(ctx.exchanges[0].url.rsplit("/v1/", 1)[0] + "/trap/fetch-redirect")
        return outcomes

    follower = replace(redirect, id="fetch-api.follower", runner=follows, expect_status=frozenset(range(100, 600)))
    result = _record(emulator, emulator_api_key, tmp_path, [follower])[0]
    assert result.status == "failed" and "redirect was followed" in result.reason
    assert _files(tmp_path) == []


def test_a_credential_like_value_is_refused(emulator: Emulator, emulator_api_key: str, tmp_path: Path) -> None:
    leaked = "sk-" + "Zx9" * 8  # built here so no credential-shaped literal sits in the source
    base = get_probe("search-api.basic")
    leak = Probe(
        "search-api.leak",
        "leaks another credential",
        "search",
        frozenset({400}),
        base.runner,
        base.params,
        fault=lambda emu: Status(400, message=f"upstream key {leaked} rejected"),
    )
    result = _record(emulator, emulator_api_key, tmp_path, [leak])[0]
    assert result.status == "refused" and "sk-key" in result.reason and leaked not in result.reason
    assert _files(tmp_path) == []


def test_fault_probes_need_the_emulator(emulator: Emulator, emulator_api_key: str, tmp_path: Path) -> None:
    live_like = RecordTarget(emulator.messages_base, emulator.tools_base, emulator_api_key)
    results = asyncio.run(record_probes(["search-api.rate-limited"], live_like, tmp_path, max_rps=100))
    assert results[0].status == "skipped" and _files(tmp_path) == []


def test_requests_are_spaced_by_the_rate_limit(emulator: Emulator, emulator_api_key: str, tmp_path: Path) -> None:
    now = [100.0]
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    probes = ["search-api.basic", "search-api.empty", "fetch-api.success"]
    results = asyncio.run(
        record_probes(
            probes, _target(emulator, emulator_api_key), tmp_path, max_rps=2, clock=lambda: now[0], sleep=fake_sleep
        )
    )
    assert [r.status for r in results] == ["recorded"] * 3
    assert sleeps == [0.5, 0.5] and now[0] == 101.0


def test_rate_limiter_spacing_with_concurrent_callers() -> None:
    now = [0.0]

    async def fake_sleep(seconds: float) -> None:
        now[0] += seconds

    async def main() -> list[float]:
        limiter = RateLimiter(4, clock=lambda: now[0], sleep=fake_sleep)
        await asyncio.gather(*(limiter.acquire() for _ in range(5)))
        return limiter.starts

    starts = asyncio.run(main())
    assert starts == [0.0, 0.25, 0.5, 0.75, 1.0]
    with pytest.raises(ValueError):
        RateLimiter(0)


def test_cli_records_then_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--emulator", "--out", str(tmp_path), "--max-rps", "100", "--i-know-the-account-limit", "search-api.empty"]
    assert record_cli.main(args) == 0
    assert "recorded" in capsys.readouterr().out
    assert record_cli.main(args) == 1
    assert "exists" in capsys.readouterr().out
    assert [p.name for p in _files(tmp_path)] == ["empty.yaml"]


def test_cli_needs_a_key_and_a_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DSWEB_TEST_UNSET_KEY", raising=False)
    assert record_cli.main(["--out", str(tmp_path)]) == 2
    assert record_cli.main(["--base", "http://127.0.0.1:9", "--key-env", "DSWEB_TEST_UNSET_KEY"]) == 2
    assert "DSWEB_TEST_UNSET_KEY" in capsys.readouterr().err
    assert record_cli.main(["--list"]) == 0
    assert "search-api.basic" in capsys.readouterr().out
    assert record_cli.main(["no.such-probe"]) == 2


def test_out_path_that_is_a_file_is_refused_before_any_request(
    emulator: Emulator, emulator_api_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "not-a-dir"
    out.write_text("keep me", "utf-8")
    with pytest.raises(CassetteWriteError, match="is not a directory") as caught:
        _record(emulator, emulator_api_key, out, ["search-api.empty"])
    assert caught.value.path == out and str(out) in str(caught.value)
    assert len(emulator.log) == 0  # refused before any probe ran
    assert record_cli.main(["--emulator", "--out", str(out), "search-api.empty"]) == 2
    err = capsys.readouterr().err
    assert f"--out {out} exists and is not a directory" in err and "Traceback" not in err
    # below a file: the library refuses up front as well, and the CLI turns it into exit 2
    assert record_cli.main(["--emulator", "--out", str(out / "sub"), "search-api.empty"]) == 2
    err = capsys.readouterr().err
    assert f"{out} is not a directory" in err and "Traceback" not in err
    assert out.read_text("utf-8") == "keep me"


def test_a_cassette_write_error_names_the_path_and_stops(
    emulator: Emulator, emulator_api_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "search-api").write_text("a file where the protocol folder belongs", "utf-8")
    ran: list[str] = []
    empty = get_probe("search-api.empty")

    async def counted(ctx: Any) -> Any:
        ran.append("empty")
        return await empty.runner(ctx)

    after = Probe("messages.after", "must not run", "messages", frozenset({200}), counted, empty.params)
    with pytest.raises(CassetteWriteError) as caught:
        _record(emulator, emulator_api_key, tmp_path, ["fetch-api.success", "search-api.basic", after])
    dest = tmp_path / "search-api" / "basic.yaml"
    assert caught.value.path == dest and f"cannot write cassette {dest}" in str(caught.value)
    assert [(r.probe, r.status) for r in caught.value.results] == [("fetch-api.success", "recorded")]
    assert ran == []  # recording stopped at the write error
    code = record_cli.main(["--emulator", "--out", str(tmp_path), "--overwrite", "search-api.basic"])
    captured = capsys.readouterr()
    assert code == 2 and f"cannot write cassette {dest}" in captured.err and "Traceback" not in captured.err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "6", "5.5", "100"])
def test_cli_max_rps_is_bounded(value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert record_cli.main(["--emulator", "--out", str(tmp_path), "--max-rps", value, "search-api.empty"]) == 2
    err = capsys.readouterr().err
    if float(value) > 5 and float(value) != float("inf"):
        assert "account limit of 5" in err and "--i-know-the-account-limit" in err
    else:
        assert "must be positive" in err
    assert not any(tmp_path.iterdir())


def test_cli_max_rps_override(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert record_cli.main(["--emulator", "--out", str(tmp_path / "a"), "--max-rps", "5", "search-api.empty"]) == 0
    flag = "--i-know-the-account-limit"
    assert (
        record_cli.main(["--emulator", "--out", str(tmp_path / "b"), "--max-rps", "50", flag, "search-api.empty"]) == 0
    )
    # the flag never lifts the lower bound
    assert record_cli.main(["--emulator", "--out", str(tmp_path / "c"), "--max-rps", "0", flag]) == 2
    assert "recorded" in capsys.readouterr().out


def test_committed_cassettes_match_a_fresh_recording(emulator: Emulator, emulator_api_key: str, tmp_path: Path) -> None:
    """The committed cassettes are exactly what `dsweb record --emulator` produces today (apart from
    the date): a drifted provider, emulator or scrubber shows up here. Re-record with
    `dsweb record --emulator --overwrite` after an intended change."""
    from .conftest import CASSETTES

    results = _record(emulator, emulator_api_key, tmp_path, [p.id for p in PROBES])
    assert {r.status for r in results} == {"recorded"}, [r for r in results if r.status != "recorded"]
    for probe in PROBES:
        fresh = (tmp_path / probe.cassette).read_text("utf-8")
        committed = (CASSETTES / probe.cassette).read_text("utf-8")
        date = load_cassette(CASSETTES / probe.cassette)["provenance"]["recorded_at"]
        assert fresh.replace("recorded_at: '2026-10-16'", f"recorded_at: '{date}'") == committed, probe.id


def test_the_raw_cassette_is_already_clean_when_written(
    emulator: Emulator,
    emulator_api_key: str,
    emulator_account_token: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """make_vcr's one pre-write hook replaces every credential (key and account token, requests and
    responses) before even the temporary raw cassette is written; no later pass is needed for it."""
    from dsweb_ref.replay import record as record_module

    raw_texts: list[str] = []
    original = record_module.load_cassette

    def spy(path: Path) -> dict[str, Any]:
        raw_texts.append(path.read_text("utf-8"))
        return original(path)

    monkeypatch.setattr(record_module, "load_cassette", spy)
    body = f'{{"error":{{"message":"token {emulator_account_token} and key {emulator_api_key}"}}}}'.encode()
    echo = replace(
        get_probe("search-api.account-token"),
        id="search-api.raw-echo",
        expect_status=frozenset({400}),
        fault=lambda emu: Status(400, body=body),
    )
    target = RecordTarget(
        emulator.messages_base, emulator.tools_base, emulator_api_key, emulator, account_token=emulator_account_token
    )
    results = asyncio.run(record_probes([echo], target, tmp_path, now=lambda: FIXED_NOW, max_rps=100))
    assert results[0].status == "recorded", results
    (raw,) = raw_texts
    assert emulator_api_key not in raw and emulator_account_token not in raw
    assert f"token {ACCOUNT_PLACEHOLDER} and key {KEY_PLACEHOLDER}" in raw


def test_replays_use_the_one_replay_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    """replay_probe and the endpoint checks replay through cassettes.cassette_replay, nothing else."""
    from dsweb_ref.certification import endpoint
    from dsweb_ref.replay import cassettes
    from dsweb_ref.replay import record as record_module

    opened: list[Path] = []

    def spy(cassette: Any, **kwargs: Any) -> Any:
        opened.append(Path(cassette))
        return cassettes.cassette_replay(cassette, **kwargs)

    monkeypatch.setattr(record_module, "cassette_replay", spy)
    monkeypatch.setattr(endpoint, "cassette_replay", spy)
    probe = get_probe("search-api.basic")
    asyncio.run(replay_probe(probe, CASSETTES / probe.cassette))
    assert opened == [CASSETTES / probe.cassette]
    opened.clear()
    _, results = endpoint.certify_endpoint(messages_base=None, tools_base=None, cassette_dir=CASSETTES)
    assert any(r.outcome.value == "passed" for r in results)
    assert opened and all(path.is_relative_to(CASSETTES) for path in opened)
