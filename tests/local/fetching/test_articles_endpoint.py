"""POST /articles and GET /articles/{id} through the app, its lifespan running the worker.

Pages come from the loopback site; the app allows private networks only where a test says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fetching_site import LocalSite

from screvi_mcp.local.api import keys
from screvi_mcp.local.api.app import create_app
from screvi_mcp.local.fetching import article_rows
from screvi_mcp.local.fetching.pipeline import ArticleWorker
from screvi_mcp.local.fetching.urls import normalise_url
from screvi_mcp.local.storage.library import Library
from testsupport.inprocess import in_process_client


@asynccontextmanager
async def app_client(
    path: Path, **options: Any
) -> AsyncIterator[tuple[httpx.AsyncClient, ArticleWorker]]:
    library = Library.open(path)
    try:
        _, secret = keys.create_key(library, "tests", write=True)
    finally:
        library.close()
    app = create_app(path, **options)
    async with in_process_client(
        app, base_url="http://testserver/api/v1", headers={"X-API-Key": secret}
    ) as client:
        yield client, app.state.article_worker


async def settle(worker: ArticleWorker) -> None:
    worker.wake()
    await asyncio.wait_for(worker.wait_idle(), 30)  # a bound against hanging only


async def test_save_fetch_and_read_in_chunks(tmp_path: Path, site: LocalSite) -> None:
    async with app_client(tmp_path / "lib.sqlite", allow_private_networks=True) as (
        client,
        worker,
    ):
        saved = await client.post("/articles", json={"url": site.url("/long"), "tags": ["x"]})
        assert saved.status_code == 201, saved.text
        data = saved.json()["data"]
        assert data == {"id": data["id"], "parse_state": "queued", "duplicate": False}
        again = await client.post("/articles", json={"url": site.url("/long/?utm_source=a")})
        assert again.status_code == 200
        assert again.json()["data"]["duplicate"] is True
        assert again.json()["data"]["id"] == data["id"]

        await settle(worker)
        whole = (await client.get(f"/articles/{data['id']}", params={"format": "text"})).json()
        article = whole["data"]
        assert article["parse_state"] == "parsed"
        assert article["title"] == "The Quiet Art of Reading Slowly"
        assert article["author"] == "Ada Lovelace"
        assert article["site_name"] == "Example Review"
        assert [t["name"] for t in article["tags"]] == ["x"]
        assert article["content_format"] == "text"
        text = article["content"]
        length = article["content_length"]
        assert length == len(text) and not article["content_truncated"]

        first = (
            await client.get(
                f"/articles/{data['id']}", params={"format": "text", "max_chars": 1000}
            )
        ).json()["data"]
        assert first["content"] == text[:1000]
        assert first["content_offset"] == 0
        assert length > 2500
        assert first["content_truncated"]
        rest = (
            await client.get(
                f"/articles/{data['id']}",
                params={"format": "text", "offset": 1000, "max_chars": 1000},
            )
        ).json()["data"]
        assert rest["content"] == text[1000:2000]
        assert rest["content_offset"] == 1000
        assert rest["content_truncated"]
        last = (
            await client.get(
                f"/articles/{data['id']}",
                params={"format": "text", "offset": 2000, "max_chars": 100_000},
            )
        ).json()["data"]
        assert first["content"] + rest["content"] + last["content"] == text
        assert not last["content_truncated"]
        assert last["content_offset"] + len(last["content"]) == length

        html = (await client.get(f"/articles/{data['id']}")).json()["data"]
        assert html["content_format"] == "html"
        assert "<p>" in html["content"] and "<script" not in html["content"]


async def test_the_guard_is_on_by_default(
    tmp_path: Path, site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SCREVI_ALLOW_PRIVATE_NETWORKS", raising=False)
    async with app_client(tmp_path / "lib.sqlite") as (client, _worker):
        saved = await client.post("/articles", json={"url": site.url("/article")})
        listed = (await client.get("/articles")).json()["data"]
    # Refused in the answer to the save (spec error shape), nothing queued to fail later.
    assert saved.status_code == 422, saved.text
    assert saved.json()["code"] == "validation_failed"
    reason = saved.json()["fields"]["url"]
    assert "loopback" in reason
    assert listed == []
    assert site.requests == []
    # The refusal says how a user who means it can allow it.
    assert "SCREVI_ALLOW_PRIVATE_NETWORKS=1" in reason
    assert "--allow-private-networks" in reason


async def test_saving_a_failed_article_again_retries_it(
    tmp_path: Path, site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SCREVI_ALLOW_PRIVATE_NETWORKS", raising=False)
    path = tmp_path / "lib.sqlite"
    url = site.url("/article")
    library = Library.open(path)  # what a fetch refused under an earlier policy left
    with library.write() as conn:
        article_id = article_rows.insert_article(conn, url, normalise_url(url))
        conn.execute(
            "UPDATE articles SET parse_state = 'failed', parse_error = 'refused' "
            "WHERE source_id = ?",
            (article_id,),
        )
    library.close()
    # The user allows private addresses and saves the same URL again: same article, queued.
    async with app_client(path, allow_private_networks=True) as (client, worker):
        again = await client.post("/articles", json={"url": site.url("/article")})
        assert again.status_code == 200
        expected = {"id": article_id, "parse_state": "queued", "duplicate": True}
        assert again.json()["data"] == expected
        await settle(worker)
        article = (await client.get(f"/articles/{article_id}")).json()["data"]
        assert article["parse_state"] == "parsed", article["parse_error"]
        assert article["parse_error"] is None and article["parse_failure"] is None
        assert article["content"]
        # A parsed article saved again stays as it is.
        third = await client.post("/articles", json={"url": site.url("/article")})
        assert third.json()["data"]["parse_state"] == "parsed"
    assert len(site.requests) == 1


async def test_a_failure_is_explained(tmp_path: Path, site: LocalSite) -> None:
    async with app_client(tmp_path / "lib.sqlite", allow_private_networks=True) as (
        client,
        worker,
    ):
        saved = await client.post("/articles", json={"url": site.url("/image.png")})
        await settle(worker)
        article = (await client.get(f"/articles/{saved.json()['data']['id']}")).json()["data"]
    assert article["parse_state"] == "failed"
    assert "image/png" in article["parse_error"]
    assert article["parse_failure"]["reason"] == "unsupported_content_type"
    assert article["parse_failure"]["content_type"] == "image/png"


async def test_a_bad_url_is_a_validation_failure(tmp_path: Path) -> None:
    async with app_client(tmp_path / "lib.sqlite") as (client, _worker):
        for bad in ("ftp://example.org/x", "https://user:pw@example.org/"):
            response = await client.post("/articles", json={"url": bad})
            assert response.status_code == 422, (bad, response.text)
            assert response.json()["code"] == "validation_failed"
            assert "url" in response.json()["fields"]


async def test_work_left_by_a_crash_is_resumed_when_the_app_starts(
    tmp_path: Path, site: LocalSite
) -> None:
    path = tmp_path / "lib.sqlite"
    async with app_client(path, allow_private_networks=True) as (client, worker):
        await worker.stop()  # as if the process died before fetching
        saved = await client.post("/articles", json={"url": site.url("/doc.pdf")})
    article_id = saved.json()["data"]["id"]
    library = Library.open(path)
    try:
        with library.write() as conn:
            conn.execute(
                "UPDATE articles SET parse_state = 'fetching' WHERE source_id = ?", (article_id,)
            )
    finally:
        library.close()
    async with app_client(path, allow_private_networks=True) as (client, worker):
        await settle(worker)
        article = (await client.get(f"/articles/{article_id}")).json()["data"]
    assert article["parse_state"] == "parsed"
    assert article["pdf_url"] == site.url("/doc.pdf")
    assert article["title"] == "Field Notes on Slow Reading"
