"""Bad input never makes the emulator answer 5xx (it only does so when a fault asks for it)."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ._support import FETCH, MESSAGES, SEARCH, messages_body

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
FIELDS = ("query", "count", "ori_question", "localization", "need_content", "url")
BODIES = st.one_of(
    JSON,
    st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=5),
    st.builds(
        lambda field, value: {**messages_body("coffee"), field: value},
        st.sampled_from(("model", "max_tokens", "messages", "tools", "thinking", "stream")),
        JSON,
    ),
)
# One emulator serves every example; the examples share nothing but its log.
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@SETTINGS
@given(body=BODIES, path=st.sampled_from((SEARCH, FETCH, MESSAGES)))
def test_arbitrary_json_is_never_a_server_error(client: httpx.Client, body: Any, path: str) -> None:
    response = client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
    assert (
        response.status_code in (200, 400, 403, 404) or response.json()["error"]["message"] == "failed to resolve host"
    )
    assert "error" in response.json() or response.status_code == 200


@SETTINGS
@given(raw=st.binary(max_size=64))
def test_arbitrary_bytes_are_never_a_server_error(client: httpx.Client, raw: bytes) -> None:
    for path in (SEARCH, FETCH, MESSAGES):
        assert client.post(path, content=raw).status_code < 500


def test_deeply_nested_json_is_a_400(client: httpx.Client) -> None:
    raw = b"[" * 100_000 + b"]" * 100_000
    assert client.post(SEARCH, content=raw).status_code == 400
