"""Fixtures of the MCP server tests (helpers live in `server_testkit`).

- A seeded library is built once per session and copied per test (SQLite's backup API), so
  every test writes freely to its own file without paying for seeding again.
- `shared_client`: one in-process client per module for tests that only read.
- `local_api` serves the embedded library's REST API on 127.0.0.1 (a uvicorn thread) with
  scoped, read-only and legacy keys, for the server's hosted mode.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import pytest
import pytest_asyncio
from mcp import Client
from server_testkit import (
    LocalApi,
    Seed,
    copy_library,
    mcp_client,
    seed_library,
)

from testsupport.servers import asgi_server


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Seed]:
    path = tmp_path_factory.mktemp("template") / "lib.sqlite3"
    seed = anyio.run(seed_library, path)
    return path, seed


@pytest.fixture(scope="session")
def seed(seeded_template: tuple[Path, Seed]) -> Seed:
    return seeded_template[1]


@pytest.fixture
def library_path(seeded_template: tuple[Path, Seed], tmp_path: Path) -> Path:
    """This test's own copy of the seeded library."""
    return copy_library(seeded_template[0], tmp_path / "lib.sqlite3")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_client(
    seeded_template: tuple[Path, Seed], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Client]:
    """One client of one server over one library, for a module's tests that only read (or
    fail without writing). Its tests must run in the module's loop:
    `pytestmark = pytest.mark.asyncio(loop_scope="module")`.

    A task of its own holds the client open, so that it is entered and left by one task.
    """
    path = copy_library(seeded_template[0], tmp_path_factory.mktemp("shared") / "lib.sqlite3")
    opened: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def hold() -> None:
        try:
            async with mcp_client(path) as client:
                opened.set_result(client)
                await stop.wait()
        except BaseException as error:
            if not opened.done():
                opened.set_exception(error)
            raise

    holder = asyncio.create_task(hold())
    try:
        yield await opened
    finally:
        stop.set()
        await holder


@pytest.fixture(scope="session")
def local_api(
    seeded_template: tuple[Path, Seed], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalApi]:
    """`screvi-mcp api` in-process: the seeded library's REST API with three kinds of key."""
    from screvi_mcp.local.api.app import create_app
    from screvi_mcp.local.api.keys import create_key
    from screvi_mcp.local.storage.library import Library

    path = copy_library(seeded_template[0], tmp_path_factory.mktemp("api") / "lib.sqlite3")
    library = Library.open(path)
    try:
        write = create_key(library, "tests: write", write=True)[1]
        read = create_key(library, "ro", write=False)[1]
        legacy = create_key(library, "tests: legacy", legacy=True)[1]
    finally:
        library.close()
    with asgi_server(create_app(path, rate_limit_per_minute=100_000)) as root:
        yield LocalApi(f"{root}/api/v1", path, write, read, legacy)
