"""`with_api_key`: another caller's key over the same running API."""

from __future__ import annotations

from pathlib import Path

import pytest

from screvi_mcp.client import InsufficientScopeError, InvalidApiKeyError
from screvi_mcp.embedded import embedded_client
from screvi_mcp.local.api import keys
from screvi_mcp.local.storage.library import Library


async def test_embedded_client_for_another_key_shares_the_running_app(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    library = Library.open(path)
    _, read_only_key = keys.create_key(library, "reader", write=False)
    library.close()

    async with await embedded_client(path) as owner:
        made = await owner.create_highlight("written by the owner")
        reader = owner.with_api_key(read_only_key)
        # The reader sees what the owner wrote: the same app and library, not a second one.
        assert (await reader.get_highlight(made.id)).content == "written by the owner"
        with pytest.raises(InsufficientScopeError):
            await reader.create_highlight("the reader may not write")
        await reader.aclose()
        # Closing the reader leaves the owner's app running.
        assert (await owner.get_highlight(made.id)).id == made.id
        stranger = owner.with_api_key("sk_live_not_a_key")
        with pytest.raises(InvalidApiKeyError):
            await stranger.list_tags()
        await stranger.aclose()
    assert [h.content for h in (await _all(path))] == ["written by the owner"]


async def _all(path: Path) -> list:  # type: ignore[type-arg]
    async with await embedded_client(path) as client:
        return (await client.list_highlights()).data


async def test_hosted_callers_with_their_own_keys_share_one_connection_pool(
    tmp_path: Path,
) -> None:
    """A remote agent sending its own key gets a client per tool call; those clients must
    reuse the owner's connections, or every call to hosted Screvi pays a new TCP and TLS
    handshake."""
    from screvi_mcp.client import RetryPolicy, ScreviClient
    from screvi_mcp.local.api.app import create_app
    from testsupport.servers import asgi_server, connection_counter

    path = tmp_path / "hosted.sqlite3"
    library = Library.open(path)
    _, owner_key = keys.create_key(library, "server", write=True)
    _, caller_key = keys.create_key(library, "remote agent", write=False)
    library.close()

    with asgi_server(create_app(path)) as root, connection_counter(root) as (relay, counter):
        owner = ScreviClient.hosted(
            owner_key, base_url=relay + "/api/v1", retry=RetryPolicy(max_retries=0)
        )
        async with owner:
            for _ in range(3):  # three tool calls, each with a client of its own
                caller = owner.with_api_key(caller_key)
                assert await caller.list_tags() == []
                await caller.aclose()
            await owner.list_tags()
        assert counter.accepted == 1
