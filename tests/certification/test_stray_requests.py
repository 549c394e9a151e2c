"""A request a target aborted before the emulator read it is still read, later: during the next case, if
the machine is slow. `search.batch.all_or_nothing` lets a case's failure out only once every sibling request
is parked (or answered), so none is still on its way when the next case starts; `evidence.diversity` does not
count a later case's fetch of an earlier case's page as that case's.

Found by the fresh-clone CI and a loaded test run: a correct target, the example adapter once and the Node
adapter once, failed the check with "adapter did not answer request N within 20s". In the rows whose siblings
are parked, the failure used to go out at once. A sibling the target then aborted could be read by the emulator
only after the next case had scripted its faults; being a query of that case too, it took the failing query's
fault, the real failing query was parked instead, and the call hung until the check gave up."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest

from dsweb_ref.certification.checks import batch, evidence_diversity
from dsweb_ref.certification.checks.evidence import _evidence
from dsweb_ref.certification.targets import reference_target
from dsweb_ref.emulator import DEFAULT_API_KEY, Emulator, Status
from dsweb_ref.emulator.gate import Gate
from dsweb_ref.tools import _evidence_rank

from .conftest import run


def test_the_emulator_still_serves_a_request_whose_client_left_before_it_was_read() -> None:
    # The premise of both fixes below: the request is logged and takes a scripted fault, although its client
    # has gone (uvicorn runs the app for the bytes it finds in the socket buffer).
    with Emulator() as emu:
        url = httpx.URL(f"{emu.tools_base}/search")
        emu.inject("search", Status(503), when=lambda body: body.get("query") == "coffee")
        body = json.dumps({"query": "coffee"}).encode()
        head = (f"POST {url.raw_path.decode()} HTTP/1.1\r\nHost: {url.host}:{url.port}\r\n"
                f"Authorization: Bearer {DEFAULT_API_KEY}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        with socket.create_connection((url.host, url.port)) as sock:
            sock.sendall(head + body)  # and gone before the server reads a byte of it
        emu.log.wait_for(1, 5.0, route="search", done=True)
        assert [(r.status, r.json) for r in emu.log.records()] == [(503, {"query": "coffee"})]
        assert emu.faults.pending() == []


def test_every_sibling_is_parked_before_a_failure_goes_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: letting the failure out right after the call starts (the siblings not yet read by the emulator)
    # The check makes a "siblings" gate and then a "failing" one per case; the failing gate's first release
    # lets the failure out, and the case's siblings gate says how many siblings were parked at that moment.
    parked_at_release: list[int] = []
    siblings: list[Gate] = []
    made, release = Gate.__init__, Gate.release

    def tracked(self: Gate, name: str = "gate") -> None:
        made(self, name)
        if name == "siblings":
            siblings.append(self)

    def noted(self: Gate) -> None:
        if self.name == "failing" and not self.is_open:
            parked_at_release.append(siblings[-1].held)
        release(self)

    monkeypatch.setattr(Gate, "__init__", tracked)
    monkeypatch.setattr(Gate, "release", noted)
    (result,) = run(reference_target(), only=["search.batch.all_or_nothing"]).results
    assert result.outcome.value == "passed", result.reason
    # Rows whose siblings succeed first have no parked siblings: they were answered before the failure.
    rows = batch.ALL_OR_NOTHING
    expected = [0 if c["siblings"] == "succeed first" else c["queries"] - len(c["failing"]) for c in rows]
    protocols = len(parked_at_release) // len(batch.ALL_OR_NOTHING)
    assert protocols >= 1 and parked_at_release == expected * protocols, parked_at_release


def test_an_earlier_case_s_late_fetches_do_not_count_as_the_next_case_s_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: counting every fetch in the log as the call's (a batch that failed in the case before left
    # fetches the emulator read during this case: they padded the page count, and a reading lumping every
    # *.github.io site into one passed the row meant for it)
    rows = {c.name: c for c in evidence_diversity.DIVERSITY}
    earlier = rows["failed-search"]
    strays = [r["url"] for rows_ in earlier["results"].values() for r in rows_][:10]
    monkeypatch.setattr(evidence_diversity, "DIVERSITY", (earlier, rows["github-io"]))
    monkeypatch.setattr(_evidence_rank, "registrable_domain", lambda h: ".".join(h.split(".")[-2:]))

    async def late_fetches_first(ctx: Any, query: Any, context: Any = None, prompt: Any = None) -> Any:
        if (context or {}).get("id") == "github-io":  # read now, sent by the target during the case before
            async with httpx.AsyncClient(headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"}) as client:
                for url in strays:
                    await client.post(f"{ctx.emu.tools_base}/fetch", json={"url": url})
        return await _evidence(ctx, query, context, prompt)

    monkeypatch.setattr(evidence_diversity, "_evidence", late_fetches_first)
    (result,) = run(reference_target(), only=["evidence.diversity"]).results
    assert result.outcome.value == "failed" and result.reason.startswith("github-io:"), result.reason
