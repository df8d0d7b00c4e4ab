"""Hostile or extreme input: every answer is the spec's JSON error, never a 500 or a hang."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from api_testkit import Api, OpenApi

from screvi_mcp import contract


async def test_out_of_range_values_are_422_not_500(asgi_api: Api) -> None:
    for body, field in [
        ({"content": "x", "location": 10**20}, "location"),
        ({"content": "x", "location": 2**53}, "location"),
        ({"content": "x", "date": "0001-01-01T00:00:00+01:00"}, "date"),
        ({"content": "x", "date": "9999-12-31T23:59:59-01:00"}, "date"),
        ({"content": "x", "url": "http://example.com:99999/"}, "url"),
        ({"content": "x", "url": "http://[::1"}, "url"),
    ]:
        response = await asgi_api.post("/highlights", body)
        assert response.status_code == 422, (body, response.text)
        assert field in response.json()["fields"], body
    largest = await asgi_api.highlight("far", location=2**53 - 1)
    assert largest["location"] == 2**53 - 1
    source = await asgi_api.post(
        "/sources", {"name": "x", "type": "book", "published_date": "0001-01-01T00:00:00+01:00"}
    )
    assert source.status_code == 422 and "published_date" in source.json()["fields"]


async def test_non_json_constants_are_refused(asgi_api: Api) -> None:
    for raw in (
        b'{"content": "x", "metadata": {"a": NaN}}',
        b'{"content": "x", "metadata": {"a": Infinity}}',
        b'{"content": "x", "metadata": {"a": -Infinity}}',
    ):
        response = await asgi_api.request(
            "POST", "/highlights", content=raw, headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 422, (raw, response.text)
        assert "body" in response.json()["fields"]
    assert asgi_api.scalar("SELECT count(*) FROM highlights") == 0
    # So listings with metadata keep working.
    listed = await asgi_api.get("/highlights", params={"include_metadata": "true"})
    assert listed.status_code == 200


async def test_absurd_nesting_is_422(asgi_api: Api) -> None:
    raw = b'{"content": "x", "metadata": {"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    response = await asgi_api.request(
        "POST", "/highlights", content=raw, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text[:200]
    assert response.json()["code"] == "validation_failed"


async def test_extreme_query_values_are_not_500(asgi_api: Api) -> None:
    await asgi_api.highlight("one")
    for path, params in [
        ("/highlights", {"page": str(10**20)}),
        ("/highlights", {"page": str(2**62)}),
        ("/sources", {"page": str(10**20)}),
        ("/articles", {"page": str(10**20)}),
        ("/search", {"q": "one", "page": str(10**20)}),
    ]:
        response = await asgi_api.get(path, params=params)
        assert response.status_code == 200, (path, params, response.text)
        assert response.json()["data"] == []
        assert response.json()["pagination"]["has_more"] is False
    for path, params in [
        ("/highlights", {"updated_since": "0001-01-01T00:00:00+01:00"}),
        ("/sources", {"updated_since": "9999-12-31T23:59:59-01:00"}),
        ("/articles", {"saved_since": "0001-01-01T00:00:00+05:00"}),
    ]:
        response = await asgi_api.get(path, params=params)
        assert response.status_code == 400, (path, params, response.text)
        assert response.json()["code"] == "invalid_parameter"
    huge_count = await asgi_api.get("/highlights/random", params={"count": str(10**30)})
    assert huge_count.status_code == 200 and len(huge_count.json()["data"]) == 1
    far = await asgi_api.get("/highlights", params={"per_page": str(10**30)})
    assert far.status_code == 200 and far.json()["pagination"]["per_page"] == 100


async def test_an_unrenderable_answer_is_a_json_500(asgi_api: Api, monkeypatch: Any) -> None:
    from screvi_mcp.local.storage.store import tags

    monkeypatch.setattr(tags, "list_all", lambda conn: [{"id": "x", "weight": math.nan}])
    response = await asgi_api.get("/tags")
    assert response.status_code == 500
    assert response.json() == {
        "error": response.json()["error"],
        "code": "internal_error",
    }


async def test_legacy_key_without_subscription_still_gets_deprecation(asgi_api: Api) -> None:
    from screvi_mcp.local.api.auth import SUBSCRIPTION_SETTING

    asgi_api.library.set_setting(SUBSCRIPTION_SETTING, "0")
    response = await asgi_api.get("/highlights", key=asgi_api.keys.legacy)
    assert response.status_code == 403
    assert response.json()["code"] == "subscription_required"
    assert "Deprecation" in response.headers
    scoped = await asgi_api.get("/highlights", key=asgi_api.keys.ro)
    assert scoped.status_code == 403 and "Deprecation" not in scoped.headers


async def test_nul_and_astral_characters_round_trip(asgi_api: Api) -> None:
    text = "nul \x00 inside, emoji 😀, rtl \u202e"
    item = await asgi_api.highlight(text, note=text, tags=["😀 tag"])
    fetched = (await asgi_api.get(f"/highlights/{item['id']}")).json()["data"]
    assert fetched["content"] == text and fetched["note"] == text
    assert fetched["tags"][0]["name"] == "😀 tag"
    assert (await asgi_api.get("/search", params={"q": "emoji"})).status_code == 200


async def test_legacy_key_gets_deprecation_on_a_wrong_path_or_method(asgi_api: Api) -> None:
    article_id = asgi_api.article()
    for method, path in [("GET", "/nothing"), ("DELETE", f"/articles/{article_id}")]:
        legacy = await asgi_api.request(method, path, key=asgi_api.keys.legacy)
        assert legacy.status_code in (404, 405), (method, path)
        assert "Deprecation" in legacy.headers, (method, path)
        scoped = await asgi_api.request(method, path)
        assert scoped.status_code == legacy.status_code
        assert "Deprecation" not in scoped.headers


# Bodies over the stated size are refused before they are read -------------------------------


async def test_a_body_declared_too_large_is_413_before_it_is_read(open_api: OpenApi) -> None:
    """Content-Length above the limit: 413 at once, though not one byte of the body is sent
    (a server that read it first would wait here forever)."""
    async with open_api("socket", max_body_bytes=4096) as api:
        host, port = api.client.base_url.host, api.client.base_url.port
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(
                b"POST /api/v1/highlights/bulk HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"X-API-Key: " + api.keys.rw.encode() + b"\r\n"
                b"Content-Type: application/json\r\nContent-Length: 200000000\r\n\r\n"
            )
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        finally:
            writer.close()
        assert head.startswith(b"HTTP/1.1 413"), head
        assert api.scalar("SELECT count(*) FROM highlights") == 0


async def test_a_chunked_body_is_counted_as_it_arrives(open_api: OpenApi) -> None:
    async def chunks() -> Any:
        for _ in range(64):
            yield b'{"pad": "' + b"x" * 1000 + b'"}'

    async with open_api("socket", max_body_bytes=4096) as api:
        response = await api.request(
            "POST",
            "/highlights",
            content=chunks(),
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code == 413, response.text
        body = response.json()
        assert body["code"] == "payload_too_large" and "4096" in body["error"]
        # Within the limit, the same endpoint works.
        assert (await api.post("/highlights", {"content": "fits"})).status_code == 201


async def test_the_default_body_limit_admits_the_largest_valid_bulk(asgi_api: Api) -> None:
    """A full bulk with content and note at their maximum length each."""
    longest = contract.MAX_HIGHLIGHT_TEXT
    item = {"content": "é" * longest, "note": "ü" * longest}
    response = await asgi_api.post("/highlights/bulk", {"highlights": [item] * contract.MAX_BULK})
    assert response.status_code == 201, response.text[:200]
