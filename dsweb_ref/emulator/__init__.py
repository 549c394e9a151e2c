"""A local emulator of DeepSeek's web APIs: Search and Fetch (``/v1/tools``) and the
Anthropic-compatible Messages endpoint with the ``web_search`` server tool.

It is a real HTTP server on loopback that records what clients send (bodies, concurrency,
redirect visits, disconnects) and misbehaves on request (faults)::

    with Emulator(api_keys=("dsweb-test-key-0001",)) as emu:
        gate = emu.gate("batch")
        emu.inject("search", Hold(gate), times=4)             # park the next four searches
        emu.inject("fetch", RateLimited(retry_after=2), when={"url": "https://docs.example.test/"})
        ...                                                    # start the client under test
        gate.wait_held(4, timeout=5)                           # all four are in flight at once
        gate.release()
        emu.wait_until_idle(timeout=5)
        assert emu.log.max_in_flight == 4 and not emu.log.trap_hits()
"""

from .auth import mask
from .corpus import DOCUMENTS, Document
from .faults import (
    AsAnswer,
    CutBody,
    Delay,
    Fault,
    FaultQueue,
    FaultRule,
    Flush,
    Hold,
    HugeSummary,
    Malformed,
    NoSources,
    Pad,
    ProseOnly,
    RateLimited,
    Redirect,
    SlowBody,
    Status,
    ToolError,
)
from .gate import Burst, Gate
from .log import RequestLog, RequestRecord
from .server import DEFAULT_ACCOUNT_TOKEN, DEFAULT_API_KEY, Emulator, is_loopback

__all__ = [
    "DEFAULT_ACCOUNT_TOKEN",
    "DEFAULT_API_KEY",
    "DOCUMENTS",
    "AsAnswer",
    "Burst",
    "CutBody",
    "Delay",
    "Document",
    "Emulator",
    "Fault",
    "FaultQueue",
    "FaultRule",
    "Flush",
    "Gate",
    "Hold",
    "HugeSummary",
    "Malformed",
    "NoSources",
    "Pad",
    "ProseOnly",
    "RateLimited",
    "Redirect",
    "RequestLog",
    "RequestRecord",
    "SlowBody",
    "Status",
    "ToolError",
    "is_loopback",
    "mask",
]
