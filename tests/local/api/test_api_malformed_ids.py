"""Malformed ids in a path are the spec's 404 `not_found` ("also for malformed ids"), with a
message saying what an id looks like, whichever way they are malformed: an encoded slash
(`%2F`, which servers decode before routing) must not reach another endpoint, or none."""

from __future__ import annotations

import pytest
from api_testkit import Api

BAD_PATHS = [
    ("GET", "/highlights/..%2Ftags"),
    ("GET", "/highlights/a%2Fb"),
    ("GET", "/highlights/not-a-uuid"),
    ("PATCH", "/highlights/a%2Fb"),
    ("DELETE", "/highlights/a%2fb"),
    ("POST", "/highlights/a%2Fb/tags"),
    ("GET", "/sources/..%2F..%2Ftags"),
    ("GET", "/articles/x%2F"),
    ("PATCH", "/tags/a%2Fb"),
    ("DELETE", "/tags/nope"),
]


@pytest.mark.parametrize(("method", "path"), BAD_PATHS)
async def test_a_malformed_id_is_not_found_and_says_what_an_id_is(
    api: Api, method: str, path: str
) -> None:
    body = {"tags": ["x"]} if method in ("POST", "PATCH") else None
    response = await api.request(method, path, json=body)
    assert response.status_code == 404, response.text
    answer = response.json()
    assert answer["code"] == "not_found"
    assert "UUID" in answer["error"], answer["error"]


async def test_an_encoded_slash_still_needs_a_key(asgi_api: Api) -> None:
    """The id is malformed, but the request is still one to an endpoint: auth comes first."""
    response = await asgi_api.get("/highlights/a%2Fb", key=None)
    assert response.status_code == 401
    assert response.json()["code"] == "missing_api_key"


async def test_an_encoded_slash_outside_an_id_is_no_endpoint(asgi_api: Api) -> None:
    response = await asgi_api.get("/highlights%2Frandom")
    assert response.status_code == 404
    assert "No such endpoint" in response.json()["error"]
