"""Helpers of the embedded API tests: an HTTP client bound to one running app, and the two
ways of running it (in-process ASGI, a real uvicorn socket on 127.0.0.1).

A module of its own, not conftest: other test folders have a conftest too, and only one
module can be imported under that name.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from starlette.applications import Starlette

from screvi_mcp.contract import DEFAULT_PER_PAGE
from screvi_mcp.local.fetching import article_rows
from screvi_mcp.local.fetching.urls import normalise_url
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library
from testsupport.inprocess import in_process_client
from testsupport.servers import asgi_server

PREFIX = "/api/v1"
# A key argument meaning "the default read-write key".
RW = object()


# Every highlight answer carries exactly these (plus `metadata` and `deleted` when asked).
HIGHLIGHT_FIELDS = {
    "id",
    "content",
    "note",
    "favorite",
    "url",
    "location",
    "date",
    "created_at",
    "updated_at",
    "tags",
    "source",
}


@dataclass(frozen=True)
class Keys:
    rw: str
    ro: str
    legacy: str
    revoked: str
    rw_id: str
    ro_id: str


class Api:
    """An HTTP client bound to one running app, with the read-write key by default."""

    def __init__(
        self, client: httpx.AsyncClient, app: Starlette, keyring: Keys, transport: str
    ) -> None:
        self.client = client
        self.app = app
        self.keys = keyring
        self.transport = transport

    @property
    def library(self) -> Library:
        library: Library = self.app.state.library
        return library

    async def request(
        self,
        method: str,
        path: str,
        *,
        key: Any = RW,
        json: Any = None,
        content: bytes | None = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        sent = dict(headers or {})
        if key is RW:
            key = self.keys.rw
        if key is not None:
            sent["X-API-Key"] = key
        root_paths = ("/.well-known/", "/skill.md", "/health")
        url = path if path.startswith(root_paths) else PREFIX + path
        return await self.client.request(
            method, url, json=json, content=content, params=params, headers=sent
        )

    async def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return await self.request("GET", path, **kwargs)

    async def post(self, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        return await self.request("POST", path, json=body, **kwargs)

    async def patch(self, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        return await self.request("PATCH", path, json=body, **kwargs)

    async def delete(self, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        return await self.request("DELETE", path, json=body, **kwargs)

    # --- making data -----------------------------------------------------------------

    async def highlight(self, content: str = "a highlight", **fields: Any) -> dict[str, Any]:
        response = await self.post("/highlights", {"content": content, **fields})
        assert response.status_code == 201, response.text
        data: dict[str, Any] = response.json()["data"]
        return data

    async def source(self, name: str = "A Book", type: str = "book", **fields: Any) -> Any:
        response = await self.post("/sources", {"name": name, "type": type, **fields})
        assert response.status_code == 201, response.text
        return response.json()["data"]

    def sql(self, query: str, args: tuple[Any, ...] = ()) -> None:
        with self.library.write() as conn:
            conn.execute(query, args)

    def scalar(self, query: str, args: tuple[Any, ...] = ()) -> Any:
        return self.library.connection().execute(query, args).fetchone()[0]

    def article(
        self,
        url: str | None = None,
        *,
        title: str | None = "An Article",
        saved_at: str | None = None,
        **columns: Any,
    ) -> str:
        """A parsed article written straight into SQLite (no fetcher involved); its id."""
        url = url or f"http://127.0.0.1:9/articles/{uuid.uuid4().hex}"
        with self.library.write() as conn:
            article_id = article_rows.insert_article(conn, url, normalise_url(url))
            values = {"parse_state": "parsed", "title": title, **columns}
            if saved_at is not None:
                values["saved_at"] = saved_at
            assignments = ", ".join(f"{name} = ?" for name in values)
            conn.execute(
                f"UPDATE articles SET {assignments} WHERE source_id = ?",
                [*values.values(), article_id],
            )
            if title is not None:
                conn.execute("UPDATE sources SET name = ? WHERE id = ?", (title, article_id))
        return article_id


@asynccontextmanager
async def in_process(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_client(app) as client:
        yield client


@asynccontextmanager
async def over_socket(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    with asgi_server(app) as base_url:
        # trust_env=False: no proxy from the environment may see this traffic.
        async with httpx.AsyncClient(base_url=base_url, trust_env=False, timeout=30) as client:
            yield client


OpenApi = Callable[..., AbstractAsyncContextManager[Api]]


def only_page(total: int) -> dict[str, Any]:
    """The pagination of a list that fits on its first page at the spec's default size."""
    return {
        "page": 1,
        "per_page": DEFAULT_PER_PAGE,
        "total": total,
        "total_pages": 1,
        "has_more": False,
    }


def ts(text: str) -> str:
    """A timestamp in the library's stored format."""
    return clock.normalise_timestamp(text)
