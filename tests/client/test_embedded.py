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


async def test_two_copies_of_a_library_do_not_share_one_rate_limit(tmp_path: Path) -> None:
    """A copy of a library file carries its embedded key, but each library is its own API
    with its own limit: a client of one copy must not use up the other's. (Test libraries
    are copies of one seeded template; sharing made whole modules of tool tests flaky.)"""
    import shutil

    from screvi_mcp.client.errors import RateLimitedError
    from screvi_mcp.embedded import embedded_client

    first = tmp_path / "first.sqlite3"
    first_client = await embedded_client(first, server_rate_limit_per_minute=3, max_rate_wait=0)
    await first_client.aclose()
    second = shutil.copy(first, tmp_path / "second.sqlite3")
    one = await embedded_client(first, server_rate_limit_per_minute=3, max_rate_wait=0)
    other = await embedded_client(second, server_rate_limit_per_minute=3, max_rate_wait=0)
    try:
        for _ in range(3):
            await one.list_tags()
        with pytest.raises(RateLimitedError):
            await one.list_tags()  # this library's limit is used up...
        await other.list_tags()  # ...and the copy's is not
    finally:
        await one.aclose()
        await other.aclose()


async def test_a_callers_own_key_on_two_copies_gets_each_copys_own_limit(tmp_path: Path) -> None:
    """A copy keeps its keys too, so a remote caller's key (`with_api_key`) works on both
    copies: its limit on one copy must not use up its limit on the other, while the clients
    of that key on one copy share one limit (as one key on one API always does)."""
    import shutil

    from screvi_mcp.client.errors import RateLimitedError
    from screvi_mcp.embedded import embedded_client
    from testsupport.keys import new_key

    first = tmp_path / "first.sqlite3"
    caller_key = new_key(first, "remote agent", write=False)
    second = shutil.copy(first, tmp_path / "second.sqlite3")
    one = await embedded_client(first, server_rate_limit_per_minute=3, max_rate_wait=0)
    other = await embedded_client(second, server_rate_limit_per_minute=3, max_rate_wait=0)
    callers = [one.with_api_key(caller_key), one.with_api_key(caller_key)]
    callers.append(other.with_api_key(caller_key))
    try:
        for _ in range(3):
            await callers[0].list_tags()
        with pytest.raises(RateLimitedError) as refused:
            await callers[1].list_tags()  # the same key on the same copy: the same limit...
        assert not refused.value.from_server  # (the client's limiter, not the app's)
        await callers[2].list_tags()  # ...but the other copy's is its own
    finally:
        for client in (*callers, one, other):
            await client.aclose()


async def test_rate_limit_none_means_no_client_limiter_even_for_the_own_key(
    tmp_path: Path,
) -> None:
    """A served mirror and the evaluations build their client from the library's options
    with `rate_limit=None`: no client-side limiter, whatever the options carry."""
    from screvi_mcp.contract import RATE_LIMIT_PER_MINUTE

    app = local_app.create_app(tmp_path / "lib.sqlite3", rate_limit_per_minute=1_000_000)
    async with EmbeddedLibrary(app=app) as library:
        client = ScreviClient(**{**library.client_options(), "rate_limit": None})
        async with client:
            for _ in range(RATE_LIMIT_PER_MINUTE + 1):
                await client.list_tags()
