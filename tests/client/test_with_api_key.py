"""`with_api_key`: another caller's key over the same running API."""

from __future__ import annotations

from pathlib import Path

import pytest

from screvi_mcp.client import InsufficientScopeError, InvalidApiKeyError
from screvi_mcp.embedded import embedded_client
from screvi_mcp.local import keys
from screvi_mcp.local.library import Library


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
