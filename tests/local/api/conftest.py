"""Fixtures for the embedded library's REST API, exercised over HTTP.

`api` runs every test twice: against the ASGI app in-process (httpx's ASGITransport, with the
app's lifespan run by hand) and against a real uvicorn server on 127.0.0.1. `asgi_api` is the
in-process one alone, for the many bound checks where the transport adds nothing.

Nothing here talks to anything but 127.0.0.1; article URLs in tests point at 127.0.0.1 too,
so even a background fetcher (which refuses loopback addresses) sends no traffic out.
"""

from __future__ import annotations

import asyncio
import functools
import shutil
import socket
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette

from screvi_mcp.local import clock, keys
from screvi_mcp.local.app import create_app
from screvi_mcp.local.library import Library
from screvi_mcp.local.store import articles as article_store

PREFIX = "/api/v1"
# A key argument meaning "the default read-write key".
RW = object()


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
            article_id = article_store.insert_queued(conn, url, article_store.basic_url_key(url))
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


@pytest.fixture(scope="session", autouse=True)
def _one_embedding_model() -> Iterator[None]:
    """Load the semantic-search model once per session rather than once per app start.

    Every test starts a fresh app over a fresh library, and the app attaches the semantic
    index at start-up; the model itself holds no library state, so sharing it only saves
    time. If the search package is absent or reshaped, tests run unchanged, just slower.
    """
    try:
        from screvi_mcp.local.search import embedder
    except ImportError:
        yield
        return
    original = getattr(embedder, "load_embedder", None)
    if original is None:
        yield
        return
    cached = functools.cache(original)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embedder, "load_embedder", cached)
        yield


@pytest.fixture(scope="session")
def _template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Keys]:
    """One migrated library with its keys, copied for each test (migrating costs time)."""
    folder = tmp_path_factory.mktemp("template")
    library = Library.open(folder / "library.sqlite3")
    try:
        rw, rw_secret = keys.create_key(library, "read-write", write=True)
        ro, ro_secret = keys.create_key(library, "read-only")
        _, legacy_secret = keys.create_key(library, "legacy", legacy=True)
        revoked, revoked_secret = keys.create_key(library, "revoked", write=True)
        assert keys.revoke_key(library, revoked.id)
    finally:
        library.close()
    keyring = Keys(rw_secret, ro_secret, legacy_secret, revoked_secret, rw.id, ro.id)
    return folder, keyring


@pytest.fixture
def library_path(tmp_path: Path, _template: tuple[Path, Keys]) -> Path:
    folder, _ = _template
    for each in folder.iterdir():  # the file, and a WAL beside it if one was left
        shutil.copyfile(each, tmp_path / each.name)
    return tmp_path / "library.sqlite3"


@pytest.fixture
def keyring(library_path: Path, _template: tuple[Path, Keys]) -> Keys:
    return _template[1]


def _free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it; without it each response waits out delayed ACKs.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@asynccontextmanager
async def _in_process(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://testserver"
        ) as client,
    ):
        yield client


@asynccontextmanager
async def _over_socket(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    sock = _free_socket()
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(1000):  # a bound on waiting, not an assertion about speed
            if server.started or not thread.is_alive():
                break
            await asyncio.sleep(0.01)
        assert server.started, "uvicorn did not start"
        # trust_env=False: no proxy from the environment may see this traffic.
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", trust_env=False, timeout=30
        ) as client:
            yield client
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join, 30)
        sock.close()


OpenApi = Callable[..., AbstractAsyncContextManager[Api]]


@pytest.fixture
def open_api(library_path: Path, keyring: Keys) -> OpenApi:
    """`async with open_api("asgi"|"socket", **create_app_kwargs) as api:` for custom apps."""

    @asynccontextmanager
    async def opener(transport: str = "asgi", **kwargs: Any) -> AsyncIterator[Api]:
        app = create_app(library_path, **kwargs)
        serve = _in_process if transport == "asgi" else _over_socket
        async with serve(app) as client:
            yield Api(client, app, keyring, transport)

    return opener


@pytest.fixture(params=["asgi", "socket"])
async def api(request: pytest.FixtureRequest, open_api: OpenApi) -> AsyncIterator[Api]:
    async with open_api(request.param) as opened:
        yield opened


@pytest.fixture
async def asgi_api(open_api: OpenApi) -> AsyncIterator[Api]:
    async with open_api("asgi") as opened:
        yield opened


def ts(text: str) -> str:
    """A timestamp in the library's stored format."""
    return clock.normalise_timestamp(text)
