"""The embedded library's transport: it runs the app's lifespan and hands its state to requests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from screvi_mcp.client import ScreviClient
from screvi_mcp.local.api import app as local_app
from screvi_mcp.local.api.seam import EmbeddedLibrary


def state_app(events: list[str], keys_seen: list[str]) -> Starlette:
    """An app that keeps its library handle in lifespan *state* rather than on app.state."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        events.append("startup")
        yield {"tags": [{"id": "t1", "name": "from-lifespan-state"}]}
        events.append("shutdown")

    async def tags(request: Request) -> JSONResponse:
        keys_seen.append(request.headers.get("x-api-key", ""))
        return JSONResponse({"data": request.state.tags})

    return Starlette(routes=[Route("/api/v1/tags", tags)], lifespan=lifespan)


async def test_embedded_client_runs_the_lifespan_and_passes_its_state(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    events: list[str] = []
    keys_seen: list[str] = []
    monkeypatch.setattr(local_app, "create_app", lambda path, **_: state_app(events, keys_seen))
    library = EmbeddedLibrary(tmp_path / "lib.sqlite3")
    assert events == []
    async with library:
        assert events == ["startup"]
        async with ScreviClient(**library.client_options("sk_live_given")) as client:
            tags = await client.list_tags()
        # Closing the client closes the transport it was given, which ends the lifespan.
        assert events == ["startup", "shutdown"]
    assert events == ["startup", "shutdown"]
    assert [t.name for t in tags] == ["from-lifespan-state"]
    assert keys_seen == ["sk_live_given"]  # in-process is no reason to skip auth
