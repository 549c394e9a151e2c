"""A loopback proxy in front of an unchanged emulator that misbehaves in one way: the wrong endpoints of
hunt Q-G, as the hunt made them. The mode is the first path segment, so one proxy serves every mode:
``http://127.0.0.1:PORT/<mode>/v1/tools`` and ``…/<mode>/anthropic/v1``; mode ``none`` forwards unchanged.

Run: ``python _endpoint_proxy.py PORT UPSTREAM`` (UPSTREAM e.g. ``http://127.0.0.1:41557``). Loopback only.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

GOOD = "dsweb-emulator-key-0001"  # the key a misbehaving gateway puts on requests (the emulator's)
DROPPED = ("host", "content-length")
HOP = ("content-length", "content-encoding", "transfer-encoding")


def _err(status: int, message: str) -> Response:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    return Response(body, status, media_type="application/json")


def _too_long_utf16(value: object) -> bool:
    return isinstance(value, str) and len(value.encode("utf-16-le")) // 2 > 128


def _search(mode: str, j: dict[str, Any]) -> Response | None:
    """Rewrite the Search request ``j`` in place, or answer it here (a Response)."""
    q = j.get("query")
    if mode == "bytes_query" and isinstance(q, str) and len(q.encode()) > 128:
        return _err(400, "'query' must be at most 128 characters")
    if mode == "utf16_query":
        for name in ("query", "ori_question"):
            if _too_long_utf16(j.get(name)):
                return _err(400, f"'{name}' must be at most 128 characters")
    if mode == "utf16_ori" and _too_long_utf16(j.get("ori_question")):
        return _err(400, "'ori_question' must be at most 128 characters")  # a unit seed 001 leaves open
    if mode == "count_cap20" and isinstance(j.get("count"), int) and j["count"] > 20:
        return _err(400, "'count' must be between 1 and 20")
    if mode == "ignore_count":
        j.pop("count", None)  # the service default 10, whatever was asked
    if mode == "drop_ori":
        j.pop("ori_question", None)
    if mode == "ori_bytes_trunc" and isinstance(j.get("ori_question"), str):
        j["ori_question"] = j["ori_question"].encode()[:128].decode("utf-8", "ignore")
    if mode == "trunc_query" and isinstance(q, str) and len(q) > 128:
        j["query"] = q[:128]  # an over-long query cut silently instead of rejected
    if mode == "empty_query_ok" and q == "":
        return Response(json.dumps({"results": []}), 200, media_type="application/json")
    return None


def _html(content: bytes) -> bytes:
    page = json.loads(content)
    paragraphs = "".join(f"<p>{line}</p>" for line in page["content"].split("\n") if line.strip())
    page["content"] = (
        f"<html><head><title>{page.get('title', '')}</title></head><body><article>{paragraphs}</article></body></html>"
    )
    return json.dumps(page).encode()


def _padded(content: bytes) -> bytes:
    """The Messages answer with each web_search_result's encrypted_content 40 KiB long, as a real answer's
    opaque per-result content can be: the whole answer well past 64 KiB."""
    answer = json.loads(content)
    for block in answer.get("content", []):
        if isinstance(block, dict) and block.get("type") == "web_search_tool_result":
            for result in block.get("content") if isinstance(block.get("content"), list) else []:
                if isinstance(result, dict):
                    result["encrypted_content"] = "E" * 40_000
    return json.dumps(answer).encode()


def _echo(mode: str, authorization: str, content: bytes) -> bytes:
    """The answer with a ``trace`` naming the caller: the credential as base64 of the UTF-16LE header, or as
    hex of the UTF-16LE key (a gateway echoing what it read, the way a Windows or Java stack holds text)."""
    token = authorization.split(" ", 1)[-1]
    forms = {
        "echo_b64u16": base64.b64encode(authorization.encode("utf-16-le")).decode(),
        "echo_hexu16": token.encode("utf-16-le").hex(),
        "echo_hexu16be": token.encode("utf-16-be").hex(),
    }
    answer = json.loads(content)
    answer["trace"] = {"caller": forms[mode]}
    return json.dumps(answer).encode()


def app(upstream: str) -> Starlette:
    client = httpx.AsyncClient(base_url=upstream, timeout=30, trust_env=False)

    async def handle(request: Request) -> Response:
        mode, _, rest = request.path_params["p"].partition("/")
        path = "/" + rest
        body = await request.body()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in DROPPED}
        try:
            j = json.loads(body) if body else None
        except ValueError:
            j = None
        is_search, is_fetch = path.endswith("/tools/search"), path.endswith("/tools/fetch")
        if is_search and isinstance(j, dict):
            answer = _search(mode, j)
            if answer is not None:
                return answer
            body = json.dumps(j).encode()
        if "/messages" in path and mode in ("drop_thinking", "drop_thinking_big") and isinstance(j, dict):
            j.pop("thinking", None)
            body = json.dumps(j).encode()
        if is_fetch and mode == "fetch_anykey":
            headers["authorization"] = "Bearer " + GOOD
        if mode == "missing_403" and "authorization" not in {k.lower() for k in headers}:
            return _err(403, "forbidden: no credential")  # a right refusal of a request carrying no key
        if mode == "anykey_missing" and "authorization" not in {k.lower() for k in headers}:
            headers["authorization"] = "Bearer " + GOOD
        r = await client.request(request.method, path, content=body, headers=headers, params=request.query_params)
        content = r.content
        if is_fetch and r.status_code == 200 and mode == "fetch_html":
            content = _html(content)
        if mode in ("big_answer", "drop_thinking_big") and "/messages" in path and r.status_code == 200:
            content = _padded(content)
        if mode.startswith("echo_") and is_search and r.status_code == 200:
            content = _echo(mode, request.headers.get("authorization", ""), content)
        status = r.status_code
        if mode == "validation_422" and is_search and status == 400:
            status = 422  # a right service's other documented status for a value it rejects
        kept = {k: v for k, v in r.headers.items() if k.lower() not in HOP}
        return Response(content, status, headers=kept)

    return Starlette(routes=[Route("/{p:path}", handle, methods=["GET", "POST"])])


if __name__ == "__main__":
    uvicorn.run(app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
