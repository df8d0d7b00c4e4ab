"""Fixtures for the embedded library's REST API, exercised over HTTP.

A test taking `api` runs twice: against the ASGI app in-process (httpx's ASGITransport, with
the app's lifespan run by its transport) and against a real uvicorn server on 127.0.0.1. Every
endpoint is hit that way at least once. `asgi_api` is the in-process one alone, for the many
bound and filter checks where the transport adds nothing; `open_api` starts an app with
custom `create_app` arguments (rate limit, skill file) over either transport.

Nothing here talks to anything but 127.0.0.1; article URLs in tests point at 127.0.0.1 too,
so even a background fetcher (which refuses loopback addresses) sends no traffic out.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from api_testkit import Api, Keys, OpenApi, in_process, over_socket

from screvi_mcp.local.api import keys
from screvi_mcp.local.api.app import create_app
from screvi_mcp.local.storage.library import Library
from testsupport.embeddings import share_one_embedding_model


@pytest.fixture(autouse=True)
def _one_embedding_model(monkeypatch: pytest.MonkeyPatch) -> None:
    share_one_embedding_model(monkeypatch)


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


@pytest.fixture
def open_api(library_path: Path, keyring: Keys) -> OpenApi:
    """`async with open_api("asgi"|"socket", **create_app_kwargs) as api:` for custom apps."""

    @asynccontextmanager
    async def opener(transport: str = "asgi", **kwargs: Any) -> AsyncIterator[Api]:
        app = create_app(library_path, **kwargs)
        serve = in_process if transport == "asgi" else over_socket
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
