"""Issue 24, from an outside hunt: a pipeline whose own page fetches dial a fresh, unchecked lookup (while
web_fetch stays pinned) was certified, because no evidence check sent the pipeline a result whose host
resolves privately. Seed 002: every URL fetched passes host/IP validation, and the connection is bound to
the public address that passed. The reading is made in the reference and must fail exactly the row."""

from __future__ import annotations

import contextvars
from collections.abc import Iterable
from typing import Any

import httpcore
import pytest

from dsweb_ref.certification.checks import evidence_html
from dsweb_ref.netguard.transport import PinnedNetworkBackend
from dsweb_ref.tools.evidence_search import EvidenceSearchTool

from ._readings import failing_rows

CHECK = "evidence.html_page"
ROW = "private-host"
_IN_PIPELINE: contextvars.ContextVar[bool] = contextvars.ContextVar("in_pipeline", default=False)


def test_the_reference_passes_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evidence_html, "REFUSED", ())  # the PRIVATE rows alone (REFUSED: test_hunt_g_readings.py)
    assert failing_rows(evidence_html, "PRIVATE", CHECK, monkeypatch) == set()


def test_a_pipeline_fetch_dialling_an_unchecked_lookup_fails_exactly_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # catches: the pipeline's own fetches resolve the host again and dial its first answer unchecked
    execute, connect = EvidenceSearchTool.execute, PinnedNetworkBackend.connect_tcp

    async def marked(self: EvidenceSearchTool, *args: Any, **kwargs: Any) -> Any:
        _IN_PIPELINE.set(True)
        return await execute(self, *args, **kwargs)

    async def unchecked(self: PinnedNetworkBackend, host: str, port: int, timeout: float | None = None,  # noqa: ASYNC109
                        local_address: str | None = None,
                        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.AsyncNetworkStream:
        if not _IN_PIPELINE.get():
            return await connect(self, host, port, timeout, local_address, socket_options)
        answers = await self.resolver(host)  # wrong: the answer dialled is never judged
        return await self._inner.connect_tcp(str(answers[0]), port, timeout=timeout)

    monkeypatch.setattr(EvidenceSearchTool, "execute", marked)
    monkeypatch.setattr(PinnedNetworkBackend, "connect_tcp", unchecked)
    # The PRIVATE rows alone: REFUSED's private-host row fails this reading too (the dialled address refuses the
    # connection, an ordinary load failure, so its snippet is cited), which its own reading test does not need.
    monkeypatch.setattr(evidence_html, "REFUSED", ())
    assert failing_rows(evidence_html, "PRIVATE", CHECK, monkeypatch) == {ROW}
