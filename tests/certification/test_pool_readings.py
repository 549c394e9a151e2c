"""Issue 24 item 5: the row added for survivors of the mutation run over the DeepSeek providers' client pool
(dsweb_ref/providers/_client_pool.py). The wrong reading is made in the reference and must fail exactly the
row that names it."""

from __future__ import annotations

import pytest

from dsweb_ref.certification.checks import search
from dsweb_ref.providers import _client_pool

from ._readings import failing_rows, patch_reading

CHECK = "search.api.wire"
ROW = "after an answer that set a cookie"


def test_the_reference_passes_the_cookie_row(monkeypatch: pytest.MonkeyPatch) -> None:
    assert failing_rows(search, "API_WIRE", CHECK, monkeypatch) == set()


@pytest.mark.parametrize(
    "right, wrong",
    [
        # catches: a pooled client with an ordinary cookie jar, which sends the cookie back
        ("cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),", "cookies=None,"),
        # catches: a jar whose policy lets every domain set a cookie
        ("DefaultCookiePolicy(allowed_domains=[])", "DefaultCookiePolicy()"),
    ],
)
def test_a_client_that_keeps_cookies_fails_the_cookie_row(
    right: str, wrong: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_reading(_client_pool, "new_client", right, wrong, monkeypatch)
    assert failing_rows(search, "API_WIRE", CHECK, monkeypatch) == {ROW}
