"""A stale mirror whose Screvi cannot be reached still answers, and says so: every tool
answer carries a short note with the mirror's age and that Screvi could not be reached."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from mirror_testkit import seed, serve_stand_in, sync
from test_serving import _call, mirror_server

from screvi_mcp.mirror.clock_transport import ClockTransport
from screvi_mcp.mirror.serving import FreshnessPolicy
from screvi_mcp.server.backend import BackendConfig


async def test_a_stale_mirror_with_screvi_down_says_how_old_it_is_and_why(
    stand_in_path: Path, mirror_path: Path
) -> None:
    with serve_stand_in(stand_in_path) as stand_in:
        async with stand_in.client() as client:
            await seed(client)
        await sync(stand_in, mirror_path)
        key, base_url = stand_in.key, stand_in.base_url
    # The stand-in is stopped: its port refuses connections from here on.
    config = BackendConfig(
        api_key=key,
        base_url=base_url,
        mirror_path=mirror_path,
        # The wait is a bound, not a timing check: a refused connection fails fast.
        mirror_policy=FreshnessPolicy(max_age=0.0, wait=30.0, sync_time_limit=20.0),
    )
    async with mirror_server(config) as mcp:
        for tool, arguments in [
            ("search_highlights", {"query": "compound interest"}),
            ("list_tags", {}),
        ]:
            text = await _call(mcp, tool, arguments)
            note = text[text.index("Note:") :] if "Note:" in text else ""
            assert "last synced" in note and "ago" in note, text
            assert "could not be reached" in note, text
            assert key not in text


async def test_the_sync_transport_knows_while_screvi_cannot_be_reached(
    stand_in_path: Path,
) -> None:
    """What a note says while a refresh is still retrying: the transport remembers that the
    latest request got no answer at all, until one does."""
    with serve_stand_in(stand_in_path) as stand_in:
        url = stand_in.base_url + "/tags"
        transport = ClockTransport()
        request = httpx.Request("GET", url, headers={"X-API-Key": stand_in.key})
        await (await transport.handle_async_request(request)).aclose()
        assert transport.unreachable is None
    try:
        with pytest.raises(httpx.ConnectError):
            await transport.handle_async_request(httpx.Request("GET", url))
        assert transport.unreachable
        with serve_stand_in(stand_in_path) as again:
            answered = httpx.Request("GET", again.base_url + "/tags")
            await (await transport.handle_async_request(answered)).aclose()
        assert transport.unreachable is None
    finally:
        await transport.aclose()
