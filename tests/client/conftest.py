"""Fixtures of the client tests: clients over a scriptable transport, and the embedded
library's app in-process and over a real socket on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from client_testkit import (
    BASE_URL,
    SCOPED_KEY,
    ClientFactory,
    FaultServer,
    Keys,
    MockClientFactory,
    Sleeps,
)

from screvi_mcp.client import UNSET, RetryPolicy, ScreviClient, Unset
from testsupport.servers import asgi_server


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def mock_client(sleeps: Sleeps) -> Iterator[MockClientFactory]:
    """Build clients over a FaultServer; no rate limiter unless asked, retry sleeps recorded."""

    def build(
        server: FaultServer, api_key: str | None = SCOPED_KEY, **options: Any
    ) -> ScreviClient:
        options.setdefault("rate_limit", None)
        options.setdefault("retry", RetryPolicy(max_retries=3, max_total_wait=30.0))
        options.setdefault("sleep", sleeps)
        return ScreviClient(api_key, base_url=BASE_URL, transport=server.transport, **options)

    yield build


# The embedded library's app, in-process and over a socket -----------------------------------


@pytest.fixture
def library_path(tmp_path: Path) -> Path:
    return tmp_path / "library.sqlite3"


@pytest.fixture
def keys(library_path: Path) -> Keys:
    from screvi_mcp.local.api.keys import create_key
    from screvi_mcp.local.storage.library import Library

    library = Library.open(library_path)
    try:
        return Keys(
            write=create_key(library, "tests: write", write=True)[1],
            read=create_key(library, "tests: read")[1],
            legacy=create_key(library, "tests: legacy", legacy=True)[1],
        )
    finally:
        library.close()


BACKENDS = ["in-process", "socket"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def connect(backend: str, library_path: Path, keys: Keys) -> Iterator[ClientFactory]:
    """Open clients of the real app on this test's backend.

    In-process: a client over the library's `EmbeddedLibrary` transport, which runs the
    app's lifespan. Socket: one uvicorn
    server per test (started on first use) and `ScreviClient.hosted` pointed at it. Either way
    requests pass the app's own auth with the key given: by default the library's embedded
    key in-process and the test's write key over the socket; `None` sends no key at all.
    """
    from screvi_mcp.local.api.app import create_app
    from screvi_mcp.local.api.seam import EmbeddedLibrary

    servers: dict[str, str] = {}
    stack = ExitStack()

    @asynccontextmanager
    async def open_client(
        api_key: str | Unset | None = UNSET,
        *,
        server_rate_limit: int | None = None,
        **options: Any,
    ) -> AsyncIterator[ScreviClient]:
        options.setdefault("retry", RetryPolicy(max_retries=0))
        if backend == "in-process":
            # The library's own transport; with `api_key=None` a client sending no key at all.
            library = EmbeddedLibrary(library_path, rate_limit_per_minute=server_rate_limit)
            await library.start()
            given = None if isinstance(api_key, Unset) else api_key
            settings = library.client_options(given)
            if api_key is None:
                settings["api_key"] = None
            client = ScreviClient(**{**settings, **options})
        else:
            if "url" not in servers:
                app = create_app(library_path, rate_limit_per_minute=server_rate_limit)
                servers["url"] = stack.enter_context(asgi_server(app))
            key = keys.write if isinstance(api_key, Unset) else api_key
            client = ScreviClient.hosted(key, base_url=servers["url"] + "/api/v1", **options)
        async with client:
            yield client

    with stack:
        yield open_client
