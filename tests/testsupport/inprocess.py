"""The embedded library's app in-process, for tests that talk HTTP to it without a socket."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import httpx
from starlette.applications import Starlette

from screvi_mcp.local.api.seam import EmbeddedLibrary


@asynccontextmanager
async def in_process_client(
    app: Starlette,
    *,
    base_url: str = "http://testserver",
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    """A plain httpx client of `app` over the library's own transport, its lifespan running.

    App exceptions are raised in the test rather than turned into a 500, as a test wants.
    """
    library = EmbeddedLibrary(app=app, raise_app_exceptions=True)
    async with (
        library,
        httpx.AsyncClient(
            transport=library, base_url=base_url, headers=dict(headers or {})
        ) as client,
    ):
        yield client
