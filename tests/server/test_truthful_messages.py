"""Error messages that say what really happened (issue 31, item 11): a sign-in page is not
a wrong argument, an HTML 200 is not a server error, a lock timeout wrote nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from screvi_mcp.client.client import ScreviClient
from screvi_mcp.client.errors import ScreviError
from screvi_mcp.local.api import keys
from screvi_mcp.local.api.app import create_app
from screvi_mcp.local.storage.library import Library
from screvi_mcp.server.errors import describe
from testsupport.servers import asgi_server

KEY = "sk_live_" + "p" * 40
PORTAL = "<html><body><h1>Sign in to the hotel Wi-Fi</h1></body></html>"


def portal() -> Starlette:
    async def sign_in(request: Request) -> HTMLResponse:
        return HTMLResponse(PORTAL)

    return Starlette(routes=[Route("/{path:path}", sign_in, methods=["GET", "POST"])])


async def test_a_captive_portal_is_not_called_a_wrong_argument() -> None:
    with asgi_server(portal()) as url:
        async with ScreviClient.hosted(KEY, base_url=url + "/api/v1", rate_limit=None) as client:
            with pytest.raises(ScreviError) as read:
                await client.list_highlights()
            with pytest.raises(ScreviError) as write:
                await client.create_highlight("A passage.")
    message = describe(read.value)
    assert "check the arguments" not in message
    assert "not the Screvi API" in message and "SCREVI_BASE_URL" in message
    written = describe(write.value)
    assert "server error" not in written
    assert "not the Screvi API" in written
    assert "unknown whether" in written  # a proxy may have passed the write on


async def test_a_lock_timeout_says_nothing_was_written(tmp_path: Path) -> None:
    """A write that waited out SQLite's lock was answered 500 and reported as an unknown
    outcome; SQLite wrote nothing, and the answer now says so (503 `busy`)."""
    path = tmp_path / "library.sqlite"
    library = Library.open(path)
    try:
        _, secret = keys.create_key(library, "test", write=True)
    finally:
        library.close()
    app = create_app(path, rate_limit_per_minute=100_000)
    with asgi_server(app) as url:
        async with ScreviClient.hosted(secret, base_url=url + "/api/v1", rate_limit=None) as client:
            await client.create_highlight("Before the lock.")  # the key's use is recorded
            holder = sqlite3.connect(path, isolation_level=None)
            try:
                holder.execute("BEGIN IMMEDIATE")
                holder.execute("UPDATE settings SET value = value")
                with pytest.raises(ScreviError) as busy:
                    await client.create_highlight("During the lock.")
            finally:
                holder.execute("ROLLBACK")
                holder.close()
            page = await client.list_highlights()
    assert [item.content for item in page.data] == ["Before the lock."]
    assert getattr(busy.value, "status", None) == 503
    assert not busy.value.outcome_unknown
    message = describe(busy.value)
    assert message.startswith("[busy]") and "nothing was written" in message
